// Scale-out (issue 23, acceptance 5): turns per second and CPU per turn of the embedded default
// (the in-process runtime on SQLite) against turns on Restate with the Postgres store (1 and 2
// lash worker processes behind one deployment URL), at 1, 10 and 50 concurrent sessions; CPU per
// process (summed) is the primary figure, wall time beside it; where the time goes (CPU per turn of
// the driver, the workers, restate-server and Postgres). The measuring runs in measure.ts inside a
// private network namespace (`unshare -n`, as the restate tests do); where that, the
// restate-server binary or Postgres 15 is missing, this prints one line and reports nothing.
// No goal is set by the issue: the figures are reported.
//   pnpm exec node bench/perf/cluster/run.ts [--json out.json]   (env LEVELS=1,10,50 REPS=3)
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { restateServerBinary } from "@lash/restate";
import { postgresUnavailable } from "@lash/store-postgres/testing";
import { markdownTable, report } from "../util.ts";

function why(): string | undefined {
  if (process.platform !== "linux") return "not Linux";
  if (!restateServerBinary()) return "the restate-server binary is not installed";
  if (postgresUnavailable) return postgresUnavailable;
  const probe = spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { encoding: "utf8" });
  if (probe.status !== 0)
    return `no private network namespace (unshare -n: ${probe.stderr.trim() || probe.error})`;
  return undefined;
}

interface Result {
  engine: string;
  workers: number;
  sessions: number;
  turns: number;
  reps: number;
  wallMsPerTurn: number;
  turnsPerSecond: number;
  cpuMsPerTurn: number;
  cpuMsPerTurnBy: { driver: number; workers: number; restate: number; postgres: number };
}

const skip = why();
if (skip) {
  process.stdout.write(`bench/perf/cluster skipped: ${skip}\n`);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), "lash-bench-cluster-out-"));
const file = join(dir, "results.json");
const measure = join(import.meta.dirname, "measure.ts");
const r = spawnSync(
  "unshare",
  ["-n", "sh", "-c", `ip link set lo up && exec "${process.execPath}" "${measure}" "${file}"`],
  { stdio: ["ignore", "inherit", "inherit"] },
);
if (r.status !== 0) {
  rmSync(dir, { recursive: true, force: true });
  process.stderr.write(`bench/perf/cluster: the measurement failed (exit ${r.status ?? r.signal})\n`);
  process.exit(1);
}
const { results } = JSON.parse(readFileSync(file, "utf8")) as { results: Result[] };
rmSync(dir, { recursive: true, force: true });

const f1 = (x: number) => x.toFixed(1);
const localAt = (s: number) => results.find((x) => x.engine === "local/SQLite" && x.sessions === s);
const EFFECTS = 3; // per turn: two model calls and one tool attempt
const rows = results.map((x) => {
  const base = localAt(x.sessions);
  const ratio = base ? x.cpuMsPerTurn / base.cpuMsPerTurn : Number.NaN;
  const perEffect = base && x.engine !== "local/SQLite" ? (x.cpuMsPerTurn - base.cpuMsPerTurn) / EFFECTS : 0;
  return [
    x.engine,
    x.engine === "local/SQLite" ? "in-process" : String(x.workers),
    x.sessions,
    x.turns,
    f1(x.cpuMsPerTurn),
    `${ratio.toFixed(2)}×`,
    x.engine === "local/SQLite" ? "—" : f1(perEffect),
    f1(x.wallMsPerTurn),
    f1(x.turnsPerSecond),
    x.engine === "local/SQLite"
      ? "all in one process"
      : `driver ${f1(x.cpuMsPerTurnBy.driver)} · workers ${f1(x.cpuMsPerTurnBy.workers)} · restate ${f1(x.cpuMsPerTurnBy.restate)} · postgres ${f1(x.cpuMsPerTurnBy.postgres)}`,
  ];
});
const worst = results
  .filter((x) => x.engine !== "local/SQLite")
  .map((x) => x.cpuMsPerTurn / (localAt(x.sessions)?.cpuMsPerTurn ?? Number.NaN));
report({
  name: "cluster",
  title: "Scale-out: local/SQLite vs Restate/Postgres (1 and 2 workers)",
  table: markdownTable(
    [
      "engine",
      "workers",
      "concurrent sessions",
      "turns",
      "CPU ms / turn (all processes)",
      "CPU vs local",
      "CPU ms / effect over local",
      "wall ms / turn",
      "turns / s",
      "CPU ms / turn by process",
    ],
    rows,
  ),
  goals:
    "Goals: none set by the issue (acceptance 5 asks for the figures); reported. " +
    `Restate/Postgres costs ${Math.min(...worst).toFixed(1)}–${Math.max(...worst).toFixed(1)}× the CPU per turn of the embedded default in this run.`,
  results,
  notes: [
    "Workload: a scripted tool loop per turn against the mock wire server (model call → one tool call → model call), 3 effects per turn; " +
      "S sessions at once, each running its turns one after the other (20 turns at 1 session, 2 per session at 10 and 50). " +
      "Medians of 3 runs per row; every reply checked (outcome finished, the scripted text) and no tool ran twice (side-effect counter). " +
      "CPU is user + system from /proc: the driver (this process: mock server, HTTP client, the round-robin proxy in front of the workers, and for local the runtime itself), the worker processes, " +
      "restate-server, Postgres (postmaster, live backends and reaped children). Postgres runs with fsync off (a test server); restate-server as the tests start it. " +
      "The local runtime's provider keeps lash's default retry (at 50 sessions a keep-alive socket to the mock in the same process is sometimes reset); the workers' has none.",
    "Where the time goes on Restate: each effect is a `ctx.run` whose result restate-server journals (a round trip worker → restate-server → worker per step, plus the `started` step of each tool attempt and the `pin` step), " +
      "the turn's context and commit are Postgres queries over the network, and the invocation itself crosses ingress → restate-server → proxy → worker. " +
      "The split by process above shows how much each part costs; `CPU ms / effect over local` divides the extra CPU per turn by the 3 effects.",
    "Runs inside `unshare -n` (restate-server's start-up version check must not leave the machine); skipped with one line where that, the restate-server binary or Postgres 15 is missing.",
  ],
});
