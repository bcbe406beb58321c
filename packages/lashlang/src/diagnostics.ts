/** Diagnostic rendering in the reference format (§1.13). */

export type Phase = "parse" | "check" | "runtime";

export interface Diagnostic {
  phase: Phase;
  message: string;
  /** 1-based line and column (columns count Unicode scalar values). */
  line: number;
  column: number;
  hint?: string;
  /** The full text: message, `--> line L, column C`, source line, caret line, optional hint. */
  rendered: string;
}

export function lineCol(source: string, offset: number): { line: number; column: number; lineStart: number } {
  const off = Math.max(0, Math.min(offset, source.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < off; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  const column = Array.from(source.slice(lineStart, off)).length + 1;
  return { line, column, lineStart };
}

export function makeDiagnostic(
  phase: Phase,
  source: string,
  message: string,
  start: number | undefined,
  end: number | undefined,
  hint?: string,
): Diagnostic {
  const s = start ?? 0;
  const { line, column, lineStart } = lineCol(source, s);
  let lineEnd = source.indexOf("\n", lineStart);
  if (lineEnd < 0) lineEnd = source.length;
  let text = source.slice(lineStart, lineEnd);
  if (text.endsWith("\r")) text = text.slice(0, -1);
  const e = Math.min(end ?? s + 1, lineStart + text.length);
  const len = Math.max(1, Array.from(source.slice(s, Math.max(s, e))).length);
  const caret = `${" ".repeat(column - 1)}^${"~".repeat(len - 1)}`;
  let rendered = `${message}\n--> line ${line}, column ${column}\n${text}\n${caret}`;
  if (hint) rendered += `\nhint: ${hint}`;
  const d: Diagnostic = { phase, message, line, column, rendered };
  if (hint) d.hint = hint;
  return d;
}
