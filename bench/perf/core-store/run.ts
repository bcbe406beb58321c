// SqliteStore: how opening a session scales with its history (100 … 100,000
// nodes), what a fork costs against the size of its origin, and the latency of
// a typical turn commit. One database file in a temp dir, WAL, real fsync
// settings (synchronous=NORMAL).
//
// pnpm exec node bench/perf/core-store/run.ts [--json out.json]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore, type PromiseStore } from "../../../packages/core/src/store/promise.ts";
import type { NewNode, SessionRecord } from "../../../packages/core/src/store.ts";
import { markdownTable, median, percentile, report } from "../util.ts";

const SIZES = [100, 1_000, 10_000, 100_000];
const CHUNK = 1_000; // nodes per commit while building a history
const READ_RUNS = 7;
const OPEN_RUNS = 5;
const FORK_RUNS = 9;
const COMMITS = 1_000;
const JOURNAL_TURNS = 300;

const dir = mkdtempSync(join(tmpdir(), "lash-bench-store-"));
const filename = join(dir, "lash.db");

function record(id: string, over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    model: "mock/model",
    mode: "standard",
    createdAt: 0,
    updatedAt: 0,
    leafId: null,
    headRevision: 0,
    turnCount: 0,
    frameId: "f0",
    state: {},
    ...over,
  };
}

function message(id: string, sessionId: string, parentId: string | null, turnId: string, i: number): NewNode {
  const role = i % 2 === 0 ? "user" : "assistant";
  return {
    id,
    sessionId,
    parentId,
    frameId: "f0",
    kind: "message",
    turnId,
    payload: {
      id,
      role,
      parts: [{ type: "text", text: `${role} message ${i}: ${"lorem ipsum ".repeat(12)}` }],
    },
    createdAt: i,
  };
}

async function build(store: PromiseStore, sessionId: string, size: number): Promise<void> {
  await store.createSession(record(sessionId));
  let leaf: string | null = null;
  let revision = 0;
  for (let start = 0, t = 0; start < size; start += CHUNK, t++) {
    const nodes: NewNode[] = [];
    for (let i = start; i < Math.min(size, start + CHUNK); i++) {
      const id = `${sessionId}-n${i}`;
      nodes.push(message(id, sessionId, leaf, `t${t}`, i));
      leaf = id;
    }
    const r = await store.commit({
      sessionId,
      turnId: `t${t}`,
      hash: `h${t}`,
      expectedRevision: revision,
      nodes,
      leafId: leaf,
      usage: [{ turnId: `t${t}`, source: "turn", model: "mock/model", usage: { input: 100, output: 20 } }],
      updatedAt: t,
    });
    revision = r.headRevision;
  }
}

const ms = (t0: number) => performance.now() - t0;
const cpuMs = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
/** Issue 16, acceptance 6: a 100,000-node session opens from SQLite in ≤ 100 ms (here: the store alone). */
const OPEN_GOAL_MS = 100;
const OPEN_GOAL_NODES = 100_000;
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

const started = performance.now();
let opened = await openSqliteStore({ filename });
const buildMs: Record<number, number> = {};
for (const size of SIZES) {
  const t0 = performance.now();
  await build(opened.store, `s${size}`, size);
  buildMs[size] = ms(t0);
}

// Warm: the store is open; read the session and its active path.
const warm: Record<number, number> = {};
const warmCpu: Record<number, number> = {};
for (const size of SIZES) {
  const runs: number[] = [];
  const cpuRuns: number[] = [];
  for (let r = 0; r < READ_RUNS; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await opened.store.getSession(`s${size}`);
    const path = await opened.store.activePath(`s${size}`);
    runs.push(ms(t0));
    cpuRuns.push(cpuMs(c0));
    if (path.length !== size) throw new Error(`path of s${size} has ${path.length} nodes`);
  }
  warm[size] = median(runs);
  warmCpu[size] = median(cpuRuns);
}

// Fork at the leaf: one session row, whatever the history.
const fork: Record<number, number> = {};
for (const size of SIZES) {
  const origin = await opened.store.getSession(`s${size}`);
  const runs: number[] = [];
  for (let r = 0; r < FORK_RUNS; r++) {
    const t0 = performance.now();
    await opened.store.fork(
      record(`fork-${size}-${r}`, { origin: { sessionId: origin.id, nodeId: origin.leafId } }),
    );
    runs.push(ms(t0));
  }
  fork[size] = median(runs);
}
await opened.close();

// Cold: open the database file, then read the session and its active path.
const cold: Record<number, number> = {};
const coldCpu: Record<number, number> = {};
for (const size of SIZES) {
  const runs: number[] = [];
  const cpuRuns: number[] = [];
  for (let r = 0; r < OPEN_RUNS; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const o = await openSqliteStore({ filename });
    await o.store.getSession(`s${size}`);
    const path = await o.store.activePath(`s${size}`);
    runs.push(ms(t0));
    cpuRuns.push(cpuMs(c0));
    if (path.length !== size) throw new Error(`path of s${size} has ${path.length} nodes (cold)`);
    await o.close();
  }
  cold[size] = median(runs);
  coldCpu[size] = median(cpuRuns);
}

// Commit latency: a typical turn of 4 nodes and one usage row, sequentially.
opened = await openSqliteStore({ filename });
const store = opened.store;
async function turns(sessionId: string, count: number, withJournal: boolean): Promise<number[]> {
  await store.createSession(record(sessionId));
  let leaf: string | null = null;
  let revision = 0;
  const out: number[] = [];
  for (let t = 0; t < count; t++) {
    const turnId = `t${t}`;
    const nodes: NewNode[] = [];
    for (let i = 0; i < 4; i++) {
      const id = `${sessionId}-${t}-${i}`;
      nodes.push(message(id, sessionId, leaf, turnId, t * 4 + i));
      leaf = id;
    }
    const t0 = performance.now();
    if (withJournal) {
      await store.beginTurn({
        sessionId,
        turnId,
        input: { text: "hi" },
        expectedRevision: revision,
        startedAt: t,
      });
      for (const kind of ["llm", "tool"]) {
        const key = `${sessionId}:${turnId}:0:${kind}:e0`;
        const entry = { key, sessionId, turnId, hash: "h", updatedAt: t };
        await store.journalPut({ ...entry, status: "started" });
        await store.journalPut({ ...entry, status: "completed", outcome: { text: "x".repeat(200) } });
      }
    }
    const r = await store.commit({
      sessionId,
      turnId,
      hash: `h${t}`,
      expectedRevision: revision,
      nodes,
      leafId: leaf,
      usage: [
        { turnId, source: "turn", model: "mock/model", usage: { input: 1000, output: 50, cacheRead: 800 } },
      ],
      updatedAt: t,
    });
    out.push((performance.now() - t0) * 1000);
    revision = r.headRevision;
  }
  return out;
}
const plain = await turns("commits", COMMITS, false);
const journaled = await turns("journaled", JOURNAL_TURNS, true);
await opened.close();
const dbBytes = statSync(filename).size;
rmSync(dir, { recursive: true, force: true });
const totalSeconds = ms(started) / 1000;

const table = [
  markdownTable(
    [
      "nodes",
      "open + read, cold: CPU ms",
      "wall ms",
      "goal",
      "met?",
      "read, warm: CPU ms",
      "wall ms",
      "warm CPU µs/node",
      "fork wall (ms)",
      "build wall (ms)",
    ],
    SIZES.map((n) => [
      n.toLocaleString("en-US"),
      fmt(coldCpu[n]!),
      fmt(cold[n]!),
      n === OPEN_GOAL_NODES ? `≤ ${OPEN_GOAL_MS} ms wall` : "-",
      n === OPEN_GOAL_NODES ? (cold[n]! <= OPEN_GOAL_MS ? "met" : "**missed**") : "-",
      fmt(warmCpu[n]!),
      fmt(warm[n]!),
      ((warmCpu[n]! * 1000) / n).toFixed(2),
      fmt(fork[n]!),
      fmt(buildMs[n]!),
    ]),
  ),
  "",
  markdownTable(
    ["commit", "n", "p50 (µs)", "p99 (µs)"],
    [
      [
        "4 nodes + 1 usage row",
        COMMITS,
        plain.length ? median(plain).toFixed(0) : "-",
        percentile(plain, 99).toFixed(0),
      ],
      [
        "beginTurn + 4 journal writes + commit",
        JOURNAL_TURNS,
        median(journaled).toFixed(0),
        percentile(journaled, 99).toFixed(0),
      ],
    ],
  ),
].join("\n");

report({
  name: "core-store",
  title: "SqliteStore: session open time vs history, fork cost, commit latency",
  table,
  results: {
    sizes: SIZES,
    buildMs,
    coldMs: cold,
    coldCpuMs: coldCpu,
    warmMs: warm,
    warmCpuMs: warmCpu,
    forkMs: fork,
    commitUs: plain,
    journaledUs: journaled,
    dbBytes,
  },
  goals: `Goal (issue 16): a ${OPEN_GOAL_NODES.toLocaleString("en-US")}-node session opens in ≤ ${OPEN_GOAL_MS} ms — the store's cold open + read ${cold[OPEN_GOAL_NODES] !== undefined ? `${fmt(cold[OPEN_GOAL_NODES])} ms, ${cold[OPEN_GOAL_NODES] <= OPEN_GOAL_MS ? "met" : "missed"}` : "not measured"} (the runtime's figure is in scale/core). No goal is set for build, fork (see scale) or commit latency: reported. Every read is checked to return the whole active path.`,
  notes: [
    `One database file (${(dbBytes / 2 ** 20).toFixed(1)} MiB at the end) holding all sessions; WAL, synchronous=NORMAL. ` +
      "Read = getSession + activePath (recursive CTE leaf → root, JSON payloads parsed); cold adds opening the database. " +
      `Medians of ${READ_RUNS} (warm), ${OPEN_RUNS} (cold), ${FORK_RUNS} (fork) runs; every call goes through Effect.runPromise. ` +
      `Total ${totalSeconds.toFixed(1)} s.`,
  ],
});
