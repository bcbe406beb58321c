import { createTwoFilesPatch } from "diff";

/** Image formats returned as attachments, by magic bytes. */
export function imageMediaType(bytes: Uint8Array): string | undefined {
  const b = (i: number) => bytes[i] ?? -1;
  if (b(0) === 0x89 && b(1) === 0x50 && b(2) === 0x4e && b(3) === 0x47) return "image/png";
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return "image/jpeg";
  if (b(0) === 0x47 && b(1) === 0x49 && b(2) === 0x46 && b(3) === 0x38) return "image/gif";
  if (
    b(0) === 0x52 &&
    b(1) === 0x49 &&
    b(2) === 0x46 &&
    b(3) === 0x46 &&
    b(8) === 0x57 &&
    b(9) === 0x45 &&
    b(10) === 0x42 &&
    b(11) === 0x50
  ) {
    return "image/webp";
  }
  return undefined;
}

/**
 * Heuristic binary detection on the first 8 KiB: a NUL byte, invalid UTF-8,
 * or more than 10% control characters.
 */
export function isBinary(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 8192);
  if (sample.length === 0) return false;
  if (sample.includes(0)) return true;
  // Cut a possibly split multi-byte sequence at the end of the sample.
  let end = sample.length;
  if (bytes.length > sample.length) {
    let back = 0;
    while (back < 4 && end - back - 1 >= 0 && ((sample[end - back - 1] ?? 0) & 0xc0) === 0x80) back++;
    end = Math.max(0, end - back - 1);
  }
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(sample.subarray(0, end));
  } catch {
    return true;
  }
  let control = 0;
  for (const byte of sample) {
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b)
      control++;
  }
  return control / sample.length > 0.1;
}

/** Split text into lines (without terminators); a trailing newline does not start a new line. */
export function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** `cat -n` style: right-aligned 6-wide line number, a tab, the line. */
export function numberLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(6, " ")}\t${text}`;
}

/** A unified diff between two versions of one file (`a/` and `b/` prefixed names). */
export function unifiedDiff(
  oldPath: string | undefined,
  newPath: string | undefined,
  before: string,
  after: string,
): string {
  const patch = createTwoFilesPatch(
    oldPath === undefined ? "/dev/null" : `a/${oldPath}`,
    newPath === undefined ? "/dev/null" : `b/${newPath}`,
    before,
    after,
    undefined,
    undefined,
    { context: 3 },
  );
  // Drop the "Index:"/"===" preamble some versions emit.
  return patch
    .split("\n")
    .filter((line) => !line.startsWith("Index: ") && !/^=+$/.test(line))
    .join("\n");
}

/** Count added and removed lines in a unified diff. */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---")) continue;
    if (line.startsWith("+")) added++;
    else if (line.startsWith("-")) removed++;
  }
  return { added, removed };
}

/** Cut a string to at most `max` characters, marking the cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more chars]`;
}
