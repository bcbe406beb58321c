// `pnpm bench`: runs every benchmark under bench/perf (each `<name>/run.ts`, in
// its own process) and writes bench/results/<date>.json and <date>.md.
// `pnpm bench kernel lashlang` runs only the named ones. bench/results/latest.md
// (and latest.json) are copies of the newest run, for the README's Performance section;
// with `--merge`, the named ones replace (or join) their reports in latest.{json,md} and the
// rest stay, each merged title saying when it was measured. `--from <stored run>.json` merges a
// stored run (two branches that each merged one meet in one latest).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import type { BenchReport } from "./perf/util.ts";

const root = import.meta.dirname;
const perf = join(root, "perf");
const only = process.argv.slice(2).filter((a, i, all) => !a.startsWith("-") && all[i - 1] !== "--from");
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

// `--from <date>.<names>.json`: no benchmark runs; that stored run's reports are merged into
// latest.{json,md} as if just measured (two branches that each merged a run meet in one latest)
const fromIndex = process.argv.indexOf("--from");
const from = fromIndex >= 0 ? process.argv[fromIndex + 1] : undefined;
if (from !== undefined) {
  const stored = JSON.parse(readFileSync(from, "utf8")) as {
    reports: BenchReport[];
    seconds: Record<string, number>;
  };
  reports.push(...stored.reports);
  Object.assign(seconds, stored.seconds);
}
for (const name of from !== undefined ? [] : names) {
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
interface Results {
  date: string;
  machine: string;
  totalSeconds: number;
  seconds: Record<string, number>;
  reports: BenchReport[];
  failures: string[];
}

function markdown(r: Results): string {
  return [
    `# Benchmarks — ${r.date}`,
    "",
    `Machine: ${r.machine}. Total time: ${r.totalSeconds.toFixed(0)} s (${Object.entries(r.seconds)
      .map(([n, s]) => `${n} ${s.toFixed(0)} s`)
      .join(", ")}).`,
    ...r.reports.flatMap((b) => [
      "",
      `## ${b.title}`,
      "",
      b.table,
      ...(b.goals ? ["", b.goals] : []),
      ...(b.notes ?? []).flatMap((n) => ["", n]),
    ]),
    ...(r.failures.length ? ["", `Failed: ${r.failures.join(", ")}`] : []),
    "",
  ].join("\n");
}

const merge = process.argv.includes("--merge") || from !== undefined;
const run: Results = { date, machine, totalSeconds, seconds, reports, failures };
// a merged run is recorded apart, beside the full run of the day
const stem = merge ? `${date}.${names.join("+")}` : date;
if (from === undefined) {
  writeFileSync(join(results, `${stem}.json`), JSON.stringify(run, null, 2));
  writeFileSync(join(results, `${stem}.md`), markdown(run));
}
let latest = run;
const latestJson = join(results, "latest.json");
if (merge && existsSync(latestJson)) {
  const before = JSON.parse(readFileSync(latestJson, "utf8")) as Results;
  const merged = new Map(before.reports.map((r) => [r.name, r]));
  for (const r of reports)
    merged.set(r.name, before.date === date ? r : { ...r, title: `${r.title} (measured ${date})` });
  latest = {
    ...before,
    totalSeconds: Object.values({ ...before.seconds, ...seconds }).reduce((a, b) => a + b, 0),
    seconds: { ...before.seconds, ...seconds },
    reports: [...merged.values()],
    failures: [...before.failures.filter((f) => !names.some((n) => f.startsWith(`${n} `))), ...failures],
  };
}
writeFileSync(latestJson, JSON.stringify(latest, null, 2));
writeFileSync(join(results, "latest.md"), markdown(latest));
process.stdout.write(
  from !== undefined
    ? `\nMerged ${from} into bench/results/latest.{json,md}\n`
    : `\nWrote bench/results/${stem}.json, ${stem}.md and latest.{json,md} (${totalSeconds.toFixed(0)} s)\n`,
);
if (failures.length) {
  process.stderr.write(`benchmarks failed: ${failures.join(", ")}\n`);
  process.exit(1);
}
