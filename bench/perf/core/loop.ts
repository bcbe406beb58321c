// A tight in-process tool loop for profiling the host's own cost per model round trip:
// MemoryStore (journal off) or SqliteStore + journal, scripted provider (no HTTP), one trivial
// promise tool call per round. Prints CPU and wall per round trip (median of RUNS runs after a
// warm-up). Profile with: node --cpu-prof --cpu-prof-dir=/tmp/prof bench/perf/core/loop.ts
// Options: --sqlite, --journal / --no-journal, --runs N, --sessions N, --concurrency N
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLash, defineTool, MemoryStore, SqliteStore, textOutput } from "@lash/core";
import { ScriptedProvider } from "@lash/providers/testing";
import { median } from "../util.ts";
import { loopScript } from "./script.ts";

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const ROUNDS = arg("--rounds", 20);
const SESSIONS = arg("--sessions", 50);
const RUNS = arg("--runs", 5);
// sessions in flight at once (the peers workload runs 20)
const CONCURRENCY = arg("--concurrency", 1);
const sqlite = process.argv.includes("--sqlite");
// the journal: on with SqliteStore, off with MemoryStore, unless --journal / --no-journal says otherwise
const journal = process.argv.includes("--journal")
  ? true
  : process.argv.includes("--no-journal")
    ? false
    : sqlite;

const echo = defineTool<{ n: number }>({
  name: "echo",
  description: "echo",
  inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  readOnly: true,
  run: async ({ n }) => textOutput(String(n)),
});

const cpu: number[] = [];
const sys: number[] = [];
const wall: number[] = [];
for (let run = 0; run <= RUNS; run++) {
  const dir = mkdtempSync(join(tmpdir(), "lash-bench-loop-"));
  const lash = createLash({
    store: sqlite ? SqliteStore.layer({ filename: join(dir, "lash.db") }) : MemoryStore,
    provider: new ScriptedProvider((req) => loopScript(req, ROUNDS)),
    plugins: [{ name: "bench", tools: [echo] }],
    journal,
    maxTurns: ROUNDS + 5,
  });
  const sessions: Awaited<ReturnType<typeof lash.createSession>>[] = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(await lash.createSession({ model: "test/model" }));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < sessions.length) {
      const r = await sessions[next++]!.turn("go").result;
      if (r.toolCalls !== ROUNDS) throw new Error(`expected ${ROUNDS} tool calls, got ${r.toolCalls}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const t1 = performance.now();
  const c = process.cpuUsage(c0);
  await lash.close();
  rmSync(dir, { recursive: true, force: true });
  if (run === 0) continue;
  cpu.push((c.user + c.system) / (SESSIONS * (ROUNDS + 1)));
  sys.push(c.system / (SESSIONS * (ROUNDS + 1)));
  wall.push(((t1 - t0) * 1000) / (SESSIONS * (ROUNDS + 1)));
}
console.log(
  `${sqlite ? "sqlite" : "memory"}${journal ? "+journal" : ""}: CPU ${median(cpu).toFixed(0)} µs / round trip, wall ${median(wall).toFixed(0)} µs, of it system CPU ${median(sys).toFixed(0)} µs (median of ${RUNS}; runs ${cpu.map((x) => x.toFixed(0)).join(" ")})`,
);
