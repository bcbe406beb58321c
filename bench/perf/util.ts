// Shared helpers for benchmark scripts: argument parsing, statistics, output.
import { writeFileSync } from "node:fs";

export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export interface BenchReport {
  readonly name: string;
  readonly title: string;
  readonly table: string;
  /** Each figure's goal and whether it is met (or that none is set), worded from the same numbers as the table. */
  readonly goals?: string;
  readonly results: unknown;
  readonly notes?: readonly string[];
}

/** Print the report's table; write the whole report as JSON when `--json <path>` was given. */
export function report(r: BenchReport): void {
  process.stdout.write(`\n## ${r.title}\n\n${r.table}\n`);
  if (r.goals) process.stdout.write(`\n${r.goals}\n`);
  for (const n of r.notes ?? []) process.stdout.write(`\n${n}\n`);
  const path = argValue("--json");
  if (path) writeFileSync(path, JSON.stringify(r, null, 2));
}
