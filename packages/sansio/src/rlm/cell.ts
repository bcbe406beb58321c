/**
 * Cell extraction (reference §2.5): a cell is the FIRST line whose trimmed content is exactly
 * `<lashlang>` (and which ends with a line terminator) through the next line whose trimmed
 * content is exactly `</lashlang>`. Prose is the text before the start line (trimmed at the end);
 * inline mentions, markdown fences and retired markers are plain prose. After the close line only
 * whitespace may follow: a second complete cell or any other text is an extraction error.
 */

export const OPEN_TAG = "<lashlang>";
export const CLOSE_TAG = "</lashlang>";

export type CellExtraction =
  | { readonly kind: "none"; readonly prose: string }
  | { readonly kind: "cell"; readonly prose: string; readonly code: string }
  | {
      readonly kind: "error";
      readonly error: "multipleCells" | "trailingText" | "unclosedCell";
      readonly prose: string;
    };

interface Line {
  /** Offset of the first character. */
  readonly start: number;
  /** Offset just past the content (before the terminator). */
  readonly contentEnd: number;
  /** Offset just past the terminator (== contentEnd on the last, unterminated line). */
  readonly end: number;
  readonly terminated: boolean;
}

function lines(text: string): Line[] {
  const out: Line[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) {
      out.push({ start, contentEnd: text.length, end: text.length, terminated: false });
      break;
    }
    const contentEnd = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    out.push({ start, contentEnd, end: nl + 1, terminated: true });
    start = nl + 1;
  }
  return out;
}

const content = (text: string, line: Line) => text.slice(line.start, line.contentEnd).trim();

/** Index of the first line at or after `from` that opens a cell, or -1. */
function findOpen(text: string, ls: readonly Line[], from: number): number {
  for (let i = from; i < ls.length; i++) {
    const l = ls[i]!;
    if (l.terminated && content(text, l) === OPEN_TAG) return i;
  }
  return -1;
}

function findClose(text: string, ls: readonly Line[], from: number): number {
  for (let i = from; i < ls.length; i++) if (content(text, ls[i]!) === CLOSE_TAG) return i;
  return -1;
}

export function extractCell(text: string): CellExtraction {
  const ls = lines(text);
  const open = findOpen(text, ls, 0);
  if (open < 0) return { kind: "none", prose: text.trimEnd() };
  const prose = text.slice(0, ls[open]!.start).trimEnd();
  const close = findClose(text, ls, open + 1);
  if (close < 0) return { kind: "error", error: "unclosedCell", prose };
  const codeStart = ls[open]!.end;
  // The code ends before the newline that precedes the close-tag line (CRLF aware).
  let codeEnd = ls[close]!.start;
  if (codeEnd > codeStart) {
    if (text.charCodeAt(codeEnd - 1) === 10) codeEnd--;
    if (codeEnd > codeStart && text.charCodeAt(codeEnd - 1) === 13) codeEnd--;
  }
  const code = text.slice(codeStart, codeEnd);
  const rest = text.slice(ls[close]!.end);
  if (rest.trim() !== "") {
    const next = findOpen(text, ls, close + 1);
    const multiple = next >= 0 && findClose(text, ls, next + 1) >= 0;
    return { kind: "error", error: multiple ? "multipleCells" : "trailingText", prose };
  }
  return { kind: "cell", prose, code };
}

/** Lines consisting only of `-` (markdown rules) are dropped before compiling (reference §2.5). */
export function cleanCode(code: string): string {
  return code
    .split("\n")
    .filter((line) => !/^\s*-+\s*$/.test(line))
    .join("\n");
}

/** The canonical rendering of a step in history (emission format). */
export function canonicalCell(prose: string, code: string): string {
  const p = prose.trimEnd();
  return `${p ? `${p}\n` : ""}${OPEN_TAG}\n${code}\n${CLOSE_TAG}`;
}
