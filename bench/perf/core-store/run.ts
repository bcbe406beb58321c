// SqliteStore: how opening a session scales with its history (100 … 100,000
// nodes) — in process (warm and cold) and in a fresh process — what a fork costs
// to make and to read against the size of its origin, and the latency of a
// typical turn commit. One database file in a temp dir, WAL, real fsync settings
// (synchronous=NORMAL). CPU time is the primary figure (the machine may be
// shared); wall time is beside it.
//
// Goals (issue 16): open a 100,000-node session (active path) in ≤ 100 ms; a
// fork's read costs what reading its own path costs (fork read ÷ origin read of
// the same length ≤ 1.1), not the origin's history again.
//
// "Read" (open) = getSession + activePath. Since session 8 a path read fetches the node
// envelopes only; payloads stay in the database until first read (in runs of 256
// neighbours). Before, the read also fetched every payload's text (decoding it on access):
// the "every payload decoded" column holds that whole cost and more (each payload read and
// decoded), and has its own goal row.
//
// pnpm exec node bench/perf/core-store/run.ts [--json out.json] [--store <promise.ts of another build>]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { PromiseStore } from "../../../packages/core/src/store/promise.ts";
import type { NewNode, SessionRecord } from "../../../packages/core/src/store.ts";
import { installBuilt } from "../import/installed.ts";
import { argValue, markdownTable, median, percentile, report } from "../util.ts";

// --store: the same benchmark over another checkout's store (a before/after comparison)
const storeModule = argValue("--store");
const { openSqliteStore } = (await import(
  storeModule ? resolve(storeModule) : "../../../packages/core/src/store/promise.ts"
)) as typeof import("../../../packages/core/src/store/promise.ts");

const SIZES = [100, 1_000, 10_000, 100_000];
const GOAL_NODES = 100_000;
const GOAL_MS = 100;
const FORK_RATIO_GOAL = 1.1;
// nodes per commit while building a history: a turn of 20 tool rounds (the user message, then
// 20 × the assistant's call and its result) — what a session's commits hold, and what the path
// read's runs (one per commit, sqlite-nodes.ts) are made of
const TURN_NODES = 41;
const FORK_OWN = 1_000; // the nodes a fork (and its twin) goes on for
const READ_RUNS = 7;
const OPEN_RUNS = 5;
const FRESH_RUNS = 5;
const FRESH_GOAL_RUNS = 9; // at the goal's size
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

async function build(
  store: PromiseStore,
  sessionId: string,
  size: number,
  from: { leaf: string | null; revision: number } = { leaf: null, revision: 0 },
): Promise<void> {
  let leaf = from.leaf;
  let revision = from.revision;
  for (let start = 0, t = 0; start < size; start += TURN_NODES, t++) {
    const nodes: NewNode[] = [];
    for (let i = start; i < Math.min(size, start + TURN_NODES); i++) {
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

const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
/** Wall and CPU ms of one run of `f`. */
async function timed<A>(f: () => Promise<A>): Promise<{ wall: number; cpu: number; value: A }> {
  const c0 = cpuNow();
  const t0 = performance.now();
  const value = await f();
  return { wall: performance.now() - t0, cpu: cpuNow() - c0, value };
}
interface Figure {
  readonly cpu: number;
  readonly wall: number;
}
const med = (runs: readonly Figure[]): Figure => ({
  cpu: median(runs.map((r) => r.cpu)),
  wall: median(runs.map((r) => r.wall)),
});
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const pair = (f: Figure) => `${fmt(f.cpu)} (${fmt(f.wall)})`;
const verdict = (ok: boolean) => (ok ? "met" : "not met");

const started = performance.now();
let opened = await openSqliteStore({ filename });
const buildMs: Record<number, number> = {};
for (const size of SIZES) {
  const t0 = performance.now();
  await opened.store.createSession(record(`s${size}`));
  await build(opened.store, `s${size}`, size);
  buildMs[size] = performance.now() - t0;
}

// Warm: the store is open; read the session and its active path, then every payload.
const warm: Record<number, Figure> = {};
const warmDecoded: Record<number, Figure> = {};
for (const size of SIZES) {
  const runs: Figure[] = [];
  const decoded: Figure[] = [];
  for (let r = 0; r < READ_RUNS; r++) {
    const read = await timed(async () => {
      await opened.store.getSession(`s${size}`);
      return opened.store.activePath(`s${size}`);
    });
    runs.push(read);
    if (read.value.length !== size) throw new Error(`path of s${size} has ${read.value.length} nodes`);
    const touch = await timed(async () => {
      let parts = 0;
      for (const n of read.value) parts += (n.payload as { parts: unknown[] }).parts.length;
      return parts;
    });
    if (touch.value !== size) throw new Error(`payloads of s${size}: ${touch.value} parts`);
    decoded.push({ cpu: read.cpu + touch.cpu, wall: read.wall + touch.wall });
  }
  warm[size] = med(runs);
  warmDecoded[size] = med(decoded);
}

// Fork: make one at the leaf (one session row, whatever the history), then read forks:
// at the leaf with 1,000 nodes of its own, and at the middle of the origin.
const forkMake: Record<number, Figure> = {};
const forkRead: Record<number, { fork: Figure; origin: Figure; mid: Figure; own: Figure }> = {};
for (const size of SIZES) {
  const origin = await opened.store.getSession(`s${size}`);
  const runs: Figure[] = [];
  for (let r = 0; r < FORK_RUNS; r++) {
    runs.push(
      await timed(() =>
        opened.store.fork(
          record(`fork-${size}-${r}`, { origin: { sessionId: origin.id, nodeId: origin.leafId } }),
        ),
      ),
    );
  }
  forkMake[size] = med(runs);
  // a fork at the leaf that went on for 1,000 nodes, and the origin continued by 1,000 nodes: same path length
  const forkId = `forkread-${size}`;
  await opened.store.fork(record(forkId, { origin: { sessionId: origin.id, nodeId: origin.leafId } }));
  await build(opened.store, forkId, FORK_OWN, { leaf: origin.leafId, revision: 0 });
  const twinId = `twin-${size}`;
  await opened.store.createSession(record(twinId));
  await build(opened.store, twinId, size + FORK_OWN);
  const midNode = `s${size}-n${size / 2 - 1}`;
  await opened.store.fork(record(`mid-${size}`, { origin: { sessionId: origin.id, nodeId: midNode } }));
  const f: Figure[] = [];
  const o: Figure[] = [];
  const m: Figure[] = [];
  const own: Figure[] = [];
  for (let r = 0; r < READ_RUNS; r++) {
    const a = await timed(() => opened.store.activePath(forkId));
    const b = await timed(() => opened.store.activePath(twinId));
    const c = await timed(() => opened.store.activePath(`mid-${size}`));
    const d = await timed(() => opened.store.sessionNodes(forkId));
    if (
      a.value.length !== size + FORK_OWN ||
      b.value.length !== size + FORK_OWN ||
      c.value.length !== size / 2
    )
      throw new Error(`fork paths of ${size}: ${a.value.length}, ${b.value.length}, ${c.value.length}`);
    if (d.value.length !== FORK_OWN) throw new Error(`fork of ${size} owns ${d.value.length} nodes`);
    f.push(a);
    o.push(b);
    m.push(c);
    own.push(d);
  }
  forkRead[size] = { fork: med(f), origin: med(o), mid: med(m), own: med(own) };
}
await opened.close();

// Cold: open the database file, then read the session and its active path.
const cold: Record<number, Figure> = {};
for (const size of SIZES) {
  const runs: Figure[] = [];
  for (let r = 0; r < OPEN_RUNS; r++) {
    runs.push(
      await timed(async () => {
        const o = await openSqliteStore({ filename });
        await o.store.getSession(`s${size}`);
        await o.store.activePath(`s${size}`);
        await o.close();
      }),
    );
  }
  cold[size] = med(runs);
}

// Fresh process: spawn → import the store → open → read → touch every payload → exit.
interface Fresh {
  readonly importMs: number;
  readonly importCpuMs: number;
  readonly openReadMs: number;
  readonly openReadCpuMs: number;
  readonly payloadsMs: number;
  readonly payloadsCpuMs: number;
  readonly spawnToExitMs: number;
}
const fresh: Record<number, Fresh> = {};
const worker = new URL("./open-worker.ts", import.meta.url).pathname;
/** Medians of `runs` fresh processes opening the session of `size` nodes, importing `module` (default: @lash/core's sources). */
function freshRuns(size: number, runs: number, module?: string): Fresh {
  const all: Fresh[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    const out = spawnSync(
      process.execPath,
      [worker, filename, `s${size}`, String(size), ...(module ? [module] : [])],
      { encoding: "utf8", maxBuffer: 1 << 20 },
    );
    const spawnToExitMs = performance.now() - t0;
    if (out.status !== 0) throw new Error(`open worker failed: ${out.stderr}`);
    all.push({ ...(JSON.parse(out.stdout) as Omit<Fresh, "spawnToExitMs">), spawnToExitMs });
  }
  const m = (k: keyof Fresh) => median(all.map((x) => x[k]));
  return {
    importMs: m("importMs"),
    importCpuMs: m("importCpuMs"),
    openReadMs: m("openReadMs"),
    openReadCpuMs: m("openReadCpuMs"),
    payloadsMs: m("payloadsMs"),
    payloadsCpuMs: m("payloadsCpuMs"),
    spawnToExitMs: m("spawnToExitMs"),
  };
}
const runsAt = (size: number) => (size === GOAL_NODES ? FRESH_GOAL_RUNS : FRESH_RUNS);
for (const size of SIZES) fresh[size] = freshRuns(size, runsAt(size), storeModule && resolve(storeModule));
// The goal's size again with @lash/core as a user's `npm install` gets it (its built dist/,
// bench/perf/import/installed.ts): no type stripping of the modules the first open loads.
let freshBuilt: Fresh | undefined;
if (!storeModule) {
  const installed = join(dir, "installed");
  installBuilt(fileURLToPath(new URL("../../..", import.meta.url)), installed, ["@lash/core"]);
  freshBuilt = freshRuns(
    GOAL_NODES,
    FRESH_GOAL_RUNS,
    join(installed, "node_modules/@lash/core/dist/index.js"),
  );
}

// Commit latency: a typical turn of 4 nodes and one usage row, sequentially.
opened = await openSqliteStore({ filename });
const store = opened.store;
/** CPU µs (process.cpuUsage, user + system) of each timed turn of `turns`, by its label. */
const commitCpu: Record<string, number[]> = {};
async function turns(sessionId: string, count: number, withJournal: boolean): Promise<number[]> {
  await store.createSession(record(sessionId));
  let leaf: string | null = null;
  let revision = 0;
  const out: number[] = [];
  const cpu: number[] = [];
  commitCpu[sessionId] = cpu;
  for (let t = 0; t < count; t++) {
    const turnId = `t${t}`;
    const nodes: NewNode[] = [];
    for (let i = 0; i < 4; i++) {
      const id = `${sessionId}-${t}-${i}`;
      nodes.push(message(id, sessionId, leaf, turnId, t * 4 + i));
      leaf = id;
    }
    const c0 = process.cpuUsage();
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
    const c = process.cpuUsage(c0);
    cpu.push(c.user + c.system);
    revision = r.headRevision;
  }
  return out;
}
const plain = await turns("commits", COMMITS, false);
const journaled = await turns("journaled", JOURNAL_TURNS, true);
await opened.close();
const dbBytes = statSync(filename).size;
rmSync(dir, { recursive: true, force: true });
const totalSeconds = (performance.now() - started) / 1000;

const g = GOAL_NODES;
const goals = {
  warmRead: { cpuMs: warm[g]!.cpu, wallMs: warm[g]!.wall, met: warm[g]!.cpu <= GOAL_MS },
  warmDecoded: {
    cpuMs: warmDecoded[g]!.cpu,
    wallMs: warmDecoded[g]!.wall,
    met: warmDecoded[g]!.cpu <= GOAL_MS,
  },
  coldOpenRead: { cpuMs: cold[g]!.cpu, wallMs: cold[g]!.wall, met: cold[g]!.cpu <= GOAL_MS },
  freshOpenRead: {
    cpuMs: fresh[g]!.openReadCpuMs,
    wallMs: fresh[g]!.openReadMs,
    met: fresh[g]!.openReadCpuMs <= GOAL_MS,
  },
  ...(freshBuilt && {
    freshBuiltOpenRead: {
      cpuMs: freshBuilt.openReadCpuMs,
      wallMs: freshBuilt.openReadMs,
      met: freshBuilt.openReadCpuMs <= GOAL_MS,
    },
  }),
  forkRatio: Object.fromEntries(
    SIZES.map((n) => {
      const ratio = forkRead[n]!.fork.cpu / forkRead[n]!.origin.cpu;
      return [n, { ratio, met: ratio <= FORK_RATIO_GOAL }];
    }),
  ),
};

const table = [
  markdownTable(
    [
      "nodes",
      "build (ms)",
      "read, warm: CPU (wall) ms",
      "warm + every payload decoded",
      "open + read, cold",
      "fresh process: import",
      "fresh process: open + read",
      "fresh process: payloads",
      "fresh process: spawn → exit (wall)",
    ],
    SIZES.map((n) => [
      n.toLocaleString("en-US"),
      fmt(buildMs[n]!),
      pair(warm[n]!),
      pair(warmDecoded[n]!),
      pair(cold[n]!),
      pair({ cpu: fresh[n]!.importCpuMs, wall: fresh[n]!.importMs }),
      pair({ cpu: fresh[n]!.openReadCpuMs, wall: fresh[n]!.openReadMs }),
      pair({ cpu: fresh[n]!.payloadsCpuMs, wall: fresh[n]!.payloadsMs }),
      fmt(fresh[n]!.spawnToExitMs),
    ]),
  ),
  "",
  markdownTable(
    [
      "origin nodes",
      "fork: make (ms)",
      "fork at leaf + 1,000 own: read",
      "same-length session: read",
      "fork ÷ same-length (goal ≤ 1.1)",
      "fork at the middle: read",
      "fork's own nodes: read",
    ],
    SIZES.map((n) => {
      const f = forkRead[n]!;
      const ratio = goals.forkRatio[n]!;
      return [
        n.toLocaleString("en-US"),
        pair(forkMake[n]!),
        pair(f.fork),
        pair(f.origin),
        `${ratio.ratio.toFixed(2)} (${verdict(ratio.met)})`,
        pair(f.mid),
        pair(f.own),
      ];
    }),
  ),
  "",
  markdownTable(
    ["goal", "figure", "verdict"],
    [
      [
        `open 100,000 nodes in process (warm read) ≤ ${GOAL_MS} ms CPU`,
        pair(warm[g]!),
        verdict(goals.warmRead.met),
      ],
      [
        `open 100,000 nodes in process and read + decode every payload ≤ ${GOAL_MS} ms CPU (the read as defined before session 8, and more)`,
        pair(warmDecoded[g]!),
        verdict(goals.warmDecoded.met),
      ],
      [
        `open 100,000 nodes, cold (open the file + read) ≤ ${GOAL_MS} ms CPU`,
        pair(cold[g]!),
        verdict(goals.coldOpenRead.met),
      ],
      [
        `open 100,000 nodes in a fresh process (open + read, after import), @lash/core from the workspace's sources ≤ ${GOAL_MS} ms CPU`,
        pair({ cpu: fresh[g]!.openReadCpuMs, wall: fresh[g]!.openReadMs }),
        verdict(goals.freshOpenRead.met),
      ],
      ...(freshBuilt
        ? [
            [
              `the same with @lash/core as published (built dist/, as \`npm install\` lays it out) ≤ ${GOAL_MS} ms CPU`,
              pair({ cpu: freshBuilt.openReadCpuMs, wall: freshBuilt.openReadMs }),
              verdict(freshBuilt.openReadCpuMs <= GOAL_MS),
            ],
          ]
        : []),
    ],
  ),
  "",
  markdownTable(
    ["commit", "n", "CPU p50 (µs)", "wall p50 (µs)", "wall p99 (µs)"],
    [
      [
        "4 nodes + 1 usage row",
        COMMITS,
        median(commitCpu.commits!).toFixed(0),
        median(plain).toFixed(0),
        percentile(plain, 99).toFixed(0),
      ],
      [
        "beginTurn + 4 journal writes + commit",
        JOURNAL_TURNS,
        median(commitCpu.journaled!).toFixed(0),
        median(journaled).toFixed(0),
        percentile(journaled, 99).toFixed(0),
      ],
    ],
  ),
].join("\n");

report({
  name: "core-store",
  title:
    "SqliteStore: session open time vs history (in process and fresh process), fork cost, commit latency",
  table,
  results: {
    store: storeModule ?? "this checkout",
    sizes: SIZES,
    buildMs,
    warm,
    warmDecoded,
    cold,
    fresh,
    freshBuilt,
    forkMake,
    forkRead,
    goals,
    commitUs: plain,
    journaledUs: journaled,
    commitCpuUs: commitCpu.commits,
    journaledCpuUs: commitCpu.journaled,
    dbBytes,
  },
  notes: [
    `Figures are CPU ms with wall ms in parentheses (median); CPU is the primary figure because the machine may be shared. ` +
      `One database file (${(dbBytes / 2 ** 20).toFixed(1)} MiB at the end) holding all sessions; WAL, synchronous=NORMAL. ` +
      "Read = getSession + activePath: the node envelopes; each payload is read from the database (with its 255 neighbours) and decoded on first access. " +
      'Before session 8 the read also fetched every payload\'s text; "every payload decoded" (read, then touch each payload) holds that cost and more. ' +
      "Cold adds opening the database in the same process; " +
      "fresh process = a new node process that imports @lash/core, opens the file, reads, touches every payload (open-worker.ts). " +
      `Medians of ${READ_RUNS} (warm, fork read), ${OPEN_RUNS} (cold), ${FRESH_RUNS} (fresh process; ${FRESH_GOAL_RUNS} at 100,000 nodes), ${FORK_RUNS} (fork make) runs; every call goes through Effect.runPromise. ` +
      "The fresh-process rows import @lash/core from the workspace's TypeScript sources (Node strips the types of each module the open loads, about 5–7 ms of it); the goal's row is repeated with the package as published (bench/perf/import/installed.ts). " +
      `Histories are written in commits of ${TURN_NODES} nodes (a turn of 20 tool rounds; until session 11 the bench wrote commits of 1,000 nodes, which the path read's runs — one per commit — would flatter). ` +
      `Fork read: a fork of the origin's leaf that went on for ${FORK_OWN.toLocaleString("en-US")} nodes of its own, against a session of the same path length written by itself. ` +
      "Commit rows: one session's turns in sequence through the promise store (Effect.runPromise per call); CPU (process.cpuUsage, user + system) is the primary column, wall beside it; no goal is set for them. " +
      `Total ${totalSeconds.toFixed(1)} s.`,
  ],
});
