// Reading YAML (and JSON, a subset the same parser reads) with positions: every problem
// is reported as `file:line:column: message`, the position taken from the parser's
// node ranges. For a `.agent.md` the front matter's offset in the file is added.
import { Either, ParseResult, Schema } from "effect";
import { isMap, isPair, isScalar, isSeq, type Node, parseDocument } from "yaml";

export interface Diagnostic {
  /** Project-relative path. */
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly severity: "error" | "warning";
  readonly message: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.column}: ${d.severity === "warning" ? "warning: " : ""}${d.message}`;
}

/** A parsed YAML text with a way to turn a value path into a file position. */
export interface SourceDoc {
  readonly file: string;
  readonly value: unknown;
  /** Position of the node at `path` (of its key when `key`), or of the nearest ancestor found. */
  readonly at: (path: readonly (string | number)[], key?: boolean) => { line: number; column: number };
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** 1-based line and column of an offset. */
export function positionOf(starts: readonly number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - (starts[lo] as number) + 1 };
}

/**
 * Parse `yamlText`, which starts at `offset` in `fullText` (the whole file). YAML syntax
 * errors go to `diagnostics`; the value is undefined when there were any.
 */
export function parseYamlSource(
  file: string,
  fullText: string,
  yamlText: string,
  offset: number,
  diagnostics: Diagnostic[],
): SourceDoc {
  const starts = lineStarts(fullText);
  const pos = (o: number) => positionOf(starts, offset + o);
  const doc = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  let failed = false;
  for (const e of doc.errors) {
    failed = true;
    diagnostics.push({ file, ...pos(e.pos[0]), severity: "error", message: firstLine(e.message) });
  }
  const at = (path: readonly (string | number)[], key = false) => {
    let node: unknown = doc.contents;
    let best: number = rangeStart(doc.contents) ?? 0;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg),
        );
        if (!pair) break;
        const keyStart = rangeStart(pair.key as Node);
        if (last && key && keyStart !== undefined) return pos(keyStart);
        node = pair.value;
        best = rangeStart(node as Node) ?? keyStart ?? best;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg];
        if (item === undefined) break;
        node = item;
        best = rangeStart(item as Node) ?? best;
      } else break;
    }
    return pos(best);
  };
  return { file, value: failed ? undefined : doc.toJS({ maxAliasCount: 100 }), at };
}

function rangeStart(node: Node | null | undefined): number | undefined {
  const r = (node as { range?: readonly number[] } | null | undefined)?.range;
  return r ? r[0] : undefined;
}

function firstLine(s: string): string {
  return s.split("\n")[0]?.trim() ?? s;
}

/** Split a `.agent.md` into its front matter (YAML) and body; offsets into the text. */
export function splitFrontMatter(
  text: string,
): { yaml: string; yamlOffset: number; body: string } | { error: string } {
  const open = /^---[ \t]*\r?\n/.exec(text);
  if (!open) return { error: "expected YAML front matter: the file must start with a line `---`" };
  const rest = text.slice(open[0].length);
  const close = /^---[ \t]*(\r?\n|$)/m.exec(rest);
  if (!close) return { error: "the front matter is not closed: add a line `---` after it" };
  return {
    yaml: rest.slice(0, close.index),
    yamlOffset: open[0].length,
    body: rest.slice(close.index + close[0].length).trim(),
  };
}

/** Levenshtein distance. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return row[b.length] as number;
}

/** Up to `n` candidates closest to `word` that are close enough to be a typo of it. */
export function closest(word: string, candidates: Iterable<string>, n = 3): string[] {
  const w = word.toLowerCase();
  return [...new Set(candidates)]
    .map((c) => ({ c, d: editDistance(w, c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(2, Math.floor(Math.max(c.length, w.length) / 3)))
    .sort((x, y) => x.d - y.d || (x.c < y.c ? -1 : x.c > y.c ? 1 : 0))
    .slice(0, n)
    .map(({ c }) => c);
}

export function didYouMeanText(names: readonly string[]): string {
  if (names.length === 0) return "";
  return `; did you mean ${names.map((n) => `"${n}"`).join(names.length === 2 ? " or " : ", ")}?`;
}

/**
 * Decode `doc.value` with `schema` (unknown keys are errors); every issue becomes a
 * diagnostic at its node. Returns the decoded value (ignoring unknown keys, which are
 * reported), or undefined when it does not decode.
 */
export function decodeWithPositions<A, I>(
  schema: Schema.Schema<A, I>,
  doc: SourceDoc,
  diagnostics: Diagnostic[],
  label: string,
): A | undefined {
  const result = ParseResultDecode(schema)(doc.value);
  if (Either.isRight(result)) return result.right;
  const seen = new Set<string>();
  const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left);
  const pathKey = (p: readonly PropertyKey[]) => p.map(String).join("\u0000");
  // an unknown key explains its object's mismatch (a union member that did not fit, a key it misspelt)
  const unexpected = issues.filter((i) => i._tag === "Unexpected");
  const explained = new Set(unexpected.map((i) => pathKey(i.path.slice(0, -1))));
  const suggested = new Set(
    unexpected.flatMap((i) => {
      const known = [...i.message.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
      const hint = closest(String(i.path.at(-1) ?? ""), known, 1)[0];
      return hint ? [pathKey([...i.path.slice(0, -1), hint])] : [];
    }),
  );
  for (const issue of issues) {
    if (issue._tag === "Missing" && suggested.has(pathKey(issue.path))) continue;
    if (issue._tag !== "Unexpected" && issue._tag !== "Missing" && explained.has(pathKey(issue.path)))
      continue;
    const path = issue.path as readonly (string | number)[];
    const name = path
      .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
      .join("");
    let message: string;
    let position: { line: number; column: number };
    if (issue._tag === "Unexpected") {
      const key = String(path.at(-1) ?? "");
      const known = [...issue.message.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
      message = `unknown key "${key}" in ${path.length > 1 ? name.slice(0, name.length - key.length - 1) || label : label}${didYouMeanText(closest(key, known, 1))}`;
      position = doc.at(path, true);
    } else if (issue._tag === "Missing") {
      message = `${label} needs "${String(path.at(-1))}"`;
      position = doc.at(path.slice(0, -1), path.length > 1);
    } else {
      message = `${name || label}: ${issue.message}`;
      position = doc.at(path);
    }
    const k = `${position.line}:${position.column}:${message}`;
    if (seen.has(k)) continue;
    seen.add(k);
    diagnostics.push({ file: doc.file, ...position, severity: "error", message });
  }
  // only unknown keys: go on with the rest, so references are still checked (the build fails anyway)
  const lenient = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })(doc.value);
  return Either.isRight(lenient) ? lenient.right : undefined;
}

function ParseResultDecode<A, I>(schema: Schema.Schema<A, I>) {
  return Schema.decodeUnknownEither(schema, { onExcessProperty: "error", errors: "all" });
}
