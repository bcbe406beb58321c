// `pnpm bench`: runs every benchmark under bench/perf (each `<name>/run.ts`, in
// its own process) and writes bench/results/<date>.json and <date>.md.
// `pnpm bench kernel lashlang` runs only the named ones. bench/results/latest.md
// (and latest.json) are copies of the newest run, for the README's Performance section.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import type { BenchReport } from "./perf/util.ts";

const root = import.meta.dirname;
const perf = join(root, "perf");
const only = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const names = readdirSync(perf)
  .filter((n) => existsSync(join(perf, n, "run.ts")))
  .filter((n) => only.length === 0 || only.includes(n))
  .sort();

const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}, ${process.platform}-${process.arch}`;
const date = new Date().toISOString().slice(0, 10);
const reports: BenchReport[] = [];
const seconds: Record<string, number> = {};
const failures: string[] = [];
const started = performance.now();

for (const name of names) {
  const out = join(tmpdir(), `lash-bench-${process.pid}-${name}.json`);
  process.stdout.write(`\n▶ ${name}\n`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["--expose-gc", join(perf, name, "run.ts"), "--json", out], {
    stdio: "inherit",
  });
  const took = (performance.now() - t0) / 1000;
  seconds[name] = took;
  if (r.status !== 0 || !existsSync(out)) {
    failures.push(`${name} (exit ${r.status ?? r.signal})`);
    continue;
  }
  reports.push(JSON.parse(readFileSync(out, "utf8")) as BenchReport);
  rmSync(out);
  process.stdout.write(`  (${took.toFixed(1)} s)\n`);
}

const totalSeconds = (performance.now() - started) / 1000;
const results = join(root, "results");
mkdirSync(results, { recursive: true });
const md = [
  `# Benchmarks — ${date}`,
  "",
  `Machine: ${machine}. Total time: ${totalSeconds.toFixed(0)} s (${Object.entries(seconds)
    .map(([n, s]) => `${n} ${s.toFixed(0)} s`)
    .join(", ")}).`,
  ...reports.flatMap((r) => [
    "",
    `## ${r.title}`,
    "",
    r.table,
    ...(r.goals ? ["", r.goals] : []),
    ...(r.notes ?? []).flatMap((n) => ["", n]),
  ]),
  ...(failures.length ? ["", `Failed: ${failures.join(", ")}`] : []),
  "",
].join("\n");
const json = JSON.stringify({ date, machine, totalSeconds, seconds, reports, failures }, null, 2);
writeFileSync(join(results, `${date}.json`), json);
writeFileSync(join(results, `${date}.md`), md);
writeFileSync(join(results, "latest.json"), json);
writeFileSync(join(results, "latest.md"), md);
process.stdout.write(
  `\nWrote bench/results/${date}.json, ${date}.md and latest.{json,md} (${totalSeconds.toFixed(0)} s)\n`,
);
if (failures.length) {
  process.stderr.write(`benchmarks failed: ${failures.join(", ")}\n`);
  process.exit(1);
}
