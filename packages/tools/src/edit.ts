import { readFile, writeFile } from "node:fs/promises";
import type { ToolDefinition, ToolOutput } from "@lash/core";
import { clip, diffStat, isBinary, numberLine, unifiedDiff } from "./text.ts";
import { asArgs, hostTool, invalid, plural, previewOf } from "./util.ts";
import { asWorkspace, type Workspace, type WorkspaceOptions } from "./workspace.ts";

export interface EditArgs {
  readonly path: string;
  readonly edits: readonly { readonly oldText: string; readonly newText: string }[];
}

/** The structured value of `edit` (`files.edit`). */
export interface EditValue {
  readonly path: string;
  readonly replacements: number;
  readonly added: number;
  readonly removed: number;
  /** Unified diff of the change. */
  readonly diff: string;
}

const NAME = "edit";

export function editTool(workspace: Workspace | WorkspaceOptions | string): ToolDefinition<EditArgs> {
  const ws = asWorkspace(workspace);
  return hostTool<EditArgs>({
    name: NAME,
    description: [
      "Change an existing text file by exact replacements. Each edit's `oldText` must appear EXACTLY ONCE in the current file — copy it verbatim from `read_file` output (same indentation and whitespace, without the line-number prefix) and include enough surrounding lines to make it unique.",
      "Edits are matched against the file as it is before this call, must not overlap, and are applied all together or not at all.",
      "If an `oldText` is missing or ambiguous nothing is written and the error shows the closest candidate lines with their line numbers.",
      "Returns a summary and the unified diff. Use `write_file` to create files and `apply_patch` for multi-file changes.",
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path, relative to the workspace root." },
        edits: {
          type: "array",
          minItems: 1,
          description: "Replacements, each matching a unique, non-overlapping region of the current file.",
          items: {
            type: "object",
            properties: {
              oldText: {
                type: "string",
                minLength: 1,
                description: "Exact text to replace (must occur exactly once).",
              },
              newText: { type: "string", description: "Replacement text (may be empty to delete)." },
            },
            required: ["oldText", "newText"],
            additionalProperties: false,
          },
        },
      },
      required: ["path", "edits"],
      additionalProperties: false,
    },
    readOnly: false,
    effects: ["write"],
    idempotent: false,
    family: "edit",
    binding: { module: "files", operation: "edit", returns: "{path, replacements, added, removed, diff}" },
    preview: previewOf(async (rawArgs) => {
      const { rel, count, diff } = await planEdit(ws, rawArgs);
      const { added, removed } = diffStat(diff);
      return {
        summary: `edit ${rel}: ${plural(count, "replacement")} (+${added} -${removed})`,
        diff,
        files: [{ path: rel, action: "modify", added, removed }],
      };
    }),
    run: async (rawArgs): Promise<ToolOutput> => {
      const { resolved, rel, next, count, diff } = await planEdit(ws, rawArgs);
      await writeFile(resolved.real, next, "utf8");
      const { added, removed } = diffStat(diff);
      const value: EditValue = { path: rel, replacements: count, added, removed, diff };
      return {
        content: [
          {
            type: "text",
            text: `Edited ${rel}: ${plural(count, "replacement")} (+${added} -${removed} lines).\n\n${diff}`,
          },
        ],
        value,
        details: { path: rel, diff },
      };
    },
  });
}

/** What an edit would do — checked, read, applied in memory and diffed, nothing written (the tool and its preview share it). */
async function planEdit(ws: Workspace, rawArgs: unknown) {
  const args = asArgs(NAME, rawArgs);
  const input = args.path;
  if (typeof input !== "string" || input.length === 0)
    throw invalid("edit: `path` is required and must be a string.");
  const edits = parseEdits(args.edits);
  const resolved = await ws.resolve(input, "write");
  const rel = resolved.relative;
  const bytes = await readFile(resolved.real).catch((error: { code?: string }) => {
    if (error.code === "ENOENT") {
      throw invalid(
        `edit: \`${rel}\` does not exist. Use \`write_file\` to create a new file, or \`glob\` to find the right path.`,
      );
    }
    if (error.code === "EISDIR") throw invalid(`edit: \`${rel}\` is a directory.`);
    throw error;
  });
  if (isBinary(bytes)) throw invalid(`edit: \`${rel}\` is a binary file; edit only changes text files.`);
  const original = bytes.toString("utf8");
  const { next, count } = applyEdits(rel, original, edits);
  if (next === original) {
    throw invalid("edit: the edits change nothing (every newText equals its oldText).");
  }
  return { resolved, rel, next, count, diff: unifiedDiff(rel, rel, original, next) };
}

interface Edit {
  readonly oldText: string;
  readonly newText: string;
}

function parseEdits(raw: unknown): Edit[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    throw invalid("edit: `edits` must be a non-empty array of {oldText, newText}.");
  }
  return raw.map((item, i) => {
    const edit = item as { oldText?: unknown; newText?: unknown } | null;
    if (
      typeof edit !== "object" ||
      edit === null ||
      typeof edit.oldText !== "string" ||
      typeof edit.newText !== "string"
    ) {
      throw invalid(`edit: edits[${i}] must be an object with string fields \`oldText\` and \`newText\`.`);
    }
    if (edit.oldText.length === 0) {
      throw invalid(
        `edit: edits[${i}].oldText is empty; give the exact existing text to replace (use write_file for new files).`,
      );
    }
    return { oldText: edit.oldText, newText: edit.newText };
  });
}

/** Apply exact-once replacements to `original`; throws an invalidRequest ToolFailure with candidates. */
export function applyEdits(
  rel: string,
  original: string,
  edits: readonly Edit[],
): { next: string; count: number } {
  const bom = original.charCodeAt(0) === 0xfeff ? "\ufeff" : "";
  let text = bom === "" ? original : original.slice(1);
  // CRLF files: match LF-only edits against an LF view and restore CRLF afterwards.
  const crlf =
    text.includes("\r\n") && !/(^|[^\r])\n/.test(text) && !edits.some((e) => e.oldText.includes("\r"));
  if (crlf) text = text.replace(/\r\n/g, "\n");
  const norm = (s: string) => (crlf ? s.replace(/\r\n/g, "\n") : s);

  const located: { start: number; end: number; newText: string; index: number }[] = [];
  edits.forEach((edit, index) => {
    const oldText = norm(edit.oldText);
    const hits = occurrences(text, oldText);
    const label = edits.length === 1 ? "oldText" : `edits[${index}].oldText`;
    if (hits.length === 0) throw invalid(noMatchMessage(rel, text, oldText, label));
    if (hits.length > 1) {
      const lines = hits.slice(0, 10).map((h) => lineOf(text, h));
      const shown = lines.map((n) => numberLine(n, clip(lineText(text, n), 200))).join("\n");
      throw invalid(
        `edit: ${label} matches ${hits.length} places in ${rel} (starting at lines ${lines.join(", ")}${hits.length > 10 ? ", …" : ""}); it must match exactly once. Include more surrounding lines in oldText to make it unique. Nothing was changed.\n${shown}`,
      );
    }
    const start = hits[0] ?? 0;
    located.push({ start, end: start + oldText.length, newText: norm(edit.newText), index });
  });
  located.sort((a, b) => a.start - b.start);
  for (let i = 1; i < located.length; i++) {
    const prev = located[i - 1];
    const cur = located[i];
    if (prev !== undefined && cur !== undefined && cur.start < prev.end) {
      throw invalid(
        `edit: edits[${prev.index}] and edits[${cur.index}] overlap (around line ${lineOf(text, cur.start)}); merge them into one edit. Nothing was changed.`,
      );
    }
  }
  let out = "";
  let pos = 0;
  for (const edit of located) {
    out += text.slice(pos, edit.start) + edit.newText;
    pos = edit.end;
  }
  out += text.slice(pos);
  if (crlf) out = out.replace(/\r?\n/g, "\r\n");
  return { next: bom + out, count: located.length };
}

function occurrences(haystack: string, needle: string): number[] {
  const hits: number[] = [];
  let from = 0;
  for (;;) {
    const at = haystack.indexOf(needle, from);
    if (at < 0) return hits;
    hits.push(at);
    from = at + 1;
  }
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function lineText(text: string, line: number): string {
  return text.split("\n")[line - 1] ?? "";
}

const squash = (s: string) => s.replace(/\s+/g, " ").trim();

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient on character bigrams (0..1). */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const ga = bigrams(a);
  const gb = bigrams(b);
  let overlap = 0;
  for (const [g, n] of ga) overlap += Math.min(n, gb.get(g) ?? 0);
  return (2 * overlap) / (a.length - 1 + (b.length - 1));
}

function noMatchMessage(rel: string, text: string, oldText: string, label: string): string {
  const fileLines = text.split("\n");
  const oldLines = oldText.split("\n");
  const parts = [`edit: ${label} was not found in ${rel}. Nothing was changed.`];

  if (oldLines.some((l) => /^\s*\d+\t/.test(l)) && oldLines.every((l) => l === "" || /^\s*\d+\t/.test(l))) {
    parts.push("oldText seems to include the line-number prefixes that read_file adds; remove them.");
  }

  // Whitespace-insensitive match of the whole oldText, line by line.
  const wanted = oldLines.map(squash);
  while (wanted.length > 0 && wanted[wanted.length - 1] === "") wanted.pop();
  while (wanted.length > 0 && wanted[0] === "") wanted.shift();
  if (wanted.length > 0) {
    const squashed = fileLines.map(squash);
    for (let i = 0; i + wanted.length <= squashed.length; i++) {
      if (wanted.every((w, k) => squashed[i + k] === w)) {
        const region = fileLines
          .slice(i, i + wanted.length)
          .map((l, k) => numberLine(i + k + 1, clip(l, 200)))
          .join("\n");
        parts.push(
          `It matches lines ${i + 1}-${i + wanted.length} if whitespace is ignored; the file has different indentation or spacing there. Copy the exact text:\n${region}`,
        );
        return parts.join("\n");
      }
    }
  }

  // Closest lines to the first non-blank line of oldText.
  const first = oldLines.find((l) => l.trim() !== "") ?? oldLines[0] ?? "";
  const target = squash(first);
  const scored = fileLines
    .map((line, i) => ({ line: i + 1, text: line, score: similarity(squash(line), target) }))
    .filter((c) => c.score >= 0.4)
    .sort((a, b) => b.score - a.score || a.line - b.line)
    .slice(0, 3);
  if (scored.length === 0) {
    parts.push(
      "No line of the file resembles its first line. Read the file again with read_file and copy the text exactly.",
    );
    return parts.join("\n");
  }
  const best = scored[0];
  if (best !== undefined && best.score === 1 && oldLines.length > 1) {
    const region = fileLines
      .slice(best.line - 1, best.line - 1 + oldLines.length)
      .map((l, k) => numberLine(best.line + k, clip(l, 200)))
      .join("\n");
    parts.push(
      `Its first line matches line ${best.line}, but the following lines differ. The file has there:\n${region}`,
    );
    return parts.join("\n");
  }
  parts.push(
    `Lines most similar to its first line (${JSON.stringify(clip(first.trim(), 120))}):\n${scored
      .map((c) => numberLine(c.line, clip(c.text, 200)))
      .join("\n")}`,
  );
  parts.push("Read the file again with read_file and copy the text exactly.");
  return parts.join("\n");
}
