// Scale through the runtime (createLash over SqliteStore, not the bare store):
//   - open/resume time against session size (100 … 100,000 nodes): a fresh
//     runtime opens the database, reads the session and its transcript (in this
//     process, and in a fresh process: open-worker.ts); then the first turn of
//     the resumed session (history loaded, model called, committed). Goal
//     (issue 16): the 100,000-node open ≤ 100 ms; CPU is the primary figure;
//   - fork time against session size;
//   - commit latency (p50/p99) under 1, 10 and 100 concurrent sessions running
//     real turns (a tool round + an answer, journal on) against the mock wire
//     server;
//   - memory per idle open session: 1,000 sessions that each ran a turn, held
//     by one runtime (measured in a fresh process with --expose-gc).
//
// pnpm exec node bench/perf/scale/run.ts [--json out.json] [--quick]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createLash,
  defineTool,
  type LashOptions,
  MemoryStore,
  type NewNode,
  SessionStore,
  SqliteStore,
  textOutput,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { startMockServer } from "@lash/providers/testing";
import type { LlmEvent, LlmProvider } from "@lash/sansio";
import { Effect, Layer, Stream } from "effect";
import { openSqliteStore } from "../../../packages/core/src/store/promise.ts";
import { argValue, markdownTable, median, percentile, report } from "../util.ts";

const quick = process.argv.includes("--quick");
const SIZES = quick ? [100, 1_000] : [100, 1_000, 10_000, 100_000];
const OPEN_RUNS = quick ? 2 : 5;
const FORK_RUNS = quick ? 3 : 9;
const CONCURRENCY = [1, 10, 100];
const COMMITS_PER_LEVEL = quick ? 30 : 300;
const IDLE_SESSIONS = quick ? 100 : 1_000;
// nodes per commit while building a history: a turn of 20 tool rounds (the user message, then
// 20 × the assistant's call and its result); the path read keeps one run per commit
const CHUNK = 41;
const MODEL = "openai-compatible/mock-model";
const GOAL_NODES = 100_000;
const GOAL_MS = 100;
/** --core <entry>: the fresh-process open through another build's @lash/core (a before/after comparison). */
const coreEntry = argValue("--core");
const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const ms = (t0: number) => performance.now() - t0;
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** A model without HTTP that answers every request with one short text (nothing recorded). */
const textModel: LlmProvider = {
  name: "bench-text",
  stream: () =>
    Stream.fromIterable<LlmEvent>([
      { type: "textDelta", text: "ok" },
      { type: "usage", usage: { input: 10, output: 2 } },
      { type: "finish", reason: "stop" },
    ]),
};

// ---------------------------------------------------------------------------
// RSS per idle open session (child process, --expose-gc)

async function idleSessionsWorker(store: "memory" | "sqlite", count: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with --expose-gc");
  const dir = mkdtempSync(join(tmpdir(), "lash-bench-idle-"));
  const lash = createLash({
    store: store === "memory" ? MemoryStore : SqliteStore.layer({ filename: join(dir, "idle.db") }),
    provider: textModel,
    journal: store === "sqlite",
  });
  const open = async () => {
    const s = await lash.createSession({ model: MODEL, systemPrompt: "idle" });
    await s.turn("hello").result;
    return s;
  };
  const held: unknown[] = [];
  for (let i = 0; i < 20; i++) held.push(await open()); // warm-up: code paths, caches
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    const m = process.memoryUsage();
    return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
  };
  const before = await settle();
  for (let i = 0; i < count; i++) held.push(await open());
  const after = await settle();
  process.stdout.write(
    JSON.stringify({
      store,
      count,
      rssPerSessionBytes: (after.rss - before.rss) / count,
      heapPerSessionBytes: (after.heap - before.heap) / count,
      externalPerSessionBytes: (after.external - before.external) / count,
      held: held.length,
    }),
  );
  await lash.close();
  rmSync(dir, { recursive: true, force: true });
}

interface IdleResult {
  readonly store: string;
  readonly count: number;
  readonly rssPerSessionBytes: number;
  readonly heapPerSessionBytes: number;
  readonly externalPerSessionBytes: number;
}

function idleSessions(store: "memory" | "sqlite"): IdleResult {
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", import.meta.filename, "--idle-worker", store, String(IDLE_SESSIONS)],
    { encoding: "utf8", maxBuffer: 1 << 20 },
  );
  if (r.status !== 0) throw new Error(`idle-session worker (${store}) failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as IdleResult;
}

// ---------------------------------------------------------------------------
// History building: sessions created by the runtime, history appended through the store

async function buildHistories(filename: string): Promise<Record<number, string>> {
  const lash = createLash({ store: SqliteStore.layer({ filename }), provider: textModel });
  const ids: Record<number, string> = {};
  for (const size of SIZES) {
    const s = await lash.createSession({ model: MODEL, systemPrompt: "scale", title: `size ${size}` });
    ids[size] = s.id;
  }
  await lash.close();
  const opened = await openSqliteStore({ filename });
  const store = opened.store;
  for (const size of SIZES) {
    const sessionId = ids[size]!;
    const record = await store.getSession(sessionId);
    let leaf: string | null = null;
    let revision = record.headRevision;
    for (let start = 0, t = 0; start < size; start += CHUNK, t++) {
      const turnId = `${sessionId}-t${t}`;
      const nodes: NewNode[] = [];
      for (let i = start; i < Math.min(size, start + CHUNK); i++) {
        const id = `${sessionId}-n${i}`;
        const role = i % 2 === 0 ? "user" : "assistant";
        nodes.push({
          id,
          sessionId,
          parentId: leaf,
          frameId: record.frameId,
          kind: "message",
          turnId,
          payload: {
            id,
            role,
            parts: [{ type: "text", text: `${role} message ${i}: ${"lorem ipsum ".repeat(12)}` }],
          },
          createdAt: i,
        });
        leaf = id;
      }
      const r = await store.commit({
        sessionId,
        turnId,
        hash: `h-${turnId}`,
        expectedRevision: revision,
        nodes,
        leafId: leaf,
        usage: [{ turnId, source: "turn", model: MODEL, usage: { input: 100, output: 20 } }],
        updatedAt: t,
      });
      revision = r.headRevision;
    }
  }
  await opened.close();
  return ids;
}

// ---------------------------------------------------------------------------
// Commit latency under concurrency: real turns over the mock wire server

/** Wraps a store layer so every commit's duration (µs) lands in `samples`. */
function timedCommits(
  inner: Layer.Layer<SessionStore, unknown>,
  samples: number[],
): Layer.Layer<SessionStore, unknown> {
  return Layer.effect(
    SessionStore,
    Effect.map(SessionStore, (s) => ({
      ...s,
      commit: (c: Parameters<typeof s.commit>[0]) =>
        Effect.suspend(() => {
          const t0 = performance.now();
          return Effect.ensuring(
            s.commit(c),
            Effect.sync(() => samples.push((performance.now() - t0) * 1000)),
          );
        }),
    })),
  ).pipe(Layer.provide(inner));
}

interface LatencyLevel {
  readonly concurrency: number;
  readonly turns: number;
  readonly commitP50Us: number;
  readonly commitP99Us: number;
  readonly turnP50Ms: number;
  readonly turnP99Ms: number;
  readonly turnsPerSecond: number;
}

async function commitLatency(dir: string): Promise<LatencyLevel[]> {
  const server = await startMockServer({
    responder: (req) => {
      const messages = (req.body as { messages?: { role?: string }[] }).messages ?? [];
      const last = messages.at(-1);
      return last?.role === "tool"
        ? { text: "done", usage: { input: 30, output: 3 } }
        : {
            toolCalls: [{ name: "add", arguments: { a: messages.length, b: 1 } }],
            usage: { input: 20, output: 5 },
          };
    },
  });
  const add = defineTool<{ a: number; b: number }>({
    name: "add",
    description: "Add two integers.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "integer" } },
      required: ["a", "b"],
    },
    readOnly: true,
    run: async ({ a, b }) => textOutput(String(a + b)),
  });
  const levels: LatencyLevel[] = [];
  for (const concurrency of CONCURRENCY) {
    const samples: number[] = [];
    const options: LashOptions = {
      store: timedCommits(SqliteStore.layer({ filename: join(dir, `commits-${concurrency}.db`) }), samples),
      provider: createProvider(MODEL, { baseUrl: server.baseUrl("openai-chat"), apiKey: "test" }),
      journal: true,
      plugins: [{ name: "bench", tools: [add] }],
    };
    const lash = createLash(options);
    const perSession = Math.max(3, Math.ceil(COMMITS_PER_LEVEL / concurrency));
    const sessions = await Promise.all(
      Array.from({ length: concurrency }, () => lash.createSession({ model: MODEL, systemPrompt: "commit" })),
    );
    const turnMs: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      sessions.map(async (s) => {
        for (let t = 0; t < perSession; t++) {
          const t1 = performance.now();
          const r = await s.turn(`turn ${t}`).result;
          turnMs.push(ms(t1));
          if (r.text !== "done" || r.toolCalls !== 1) throw new Error(`unexpected turn result: ${r.text}`);
        }
      }),
    );
    const wall = ms(t0);
    await lash.close();
    levels.push({
      concurrency,
      turns: turnMs.length,
      commitP50Us: median(samples),
      commitP99Us: percentile(samples, 99),
      turnP50Ms: median(turnMs),
      turnP99Ms: percentile(turnMs, 99),
      turnsPerSecond: turnMs.length / (wall / 1000),
    });
    if (samples.length !== turnMs.length)
      throw new Error(`${samples.length} commits for ${turnMs.length} turns at concurrency ${concurrency}`);
  }
  const expected = levels.reduce((n, l) => n + l.turns * 2, 0);
  if (server.requests.length !== expected)
    throw new Error(`mock server saw ${server.requests.length} requests, expected ${expected}`);
  await server.close();
  return levels;
}

// ---------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "lash-bench-scale-"));
  const filename = join(dir, "scale.db");

  const t0 = performance.now();
  const ids = await buildHistories(filename);
  const buildSeconds = ms(t0) / 1000;

  // Cold open + resume: a fresh runtime per run.
  const openRead: Record<number, number[]> = {};
  const openReadCpu: Record<number, number[]> = {};
  const resumeTurn: Record<number, number[]> = {};
  for (const size of SIZES) {
    openRead[size] = [];
    openReadCpu[size] = [];
    resumeTurn[size] = [];
    for (let r = 0; r < OPEN_RUNS; r++) {
      const t1 = performance.now();
      const c1 = cpuNow();
      const lash = createLash({ store: SqliteStore.layer({ filename }), provider: textModel });
      const session = lash.session(ids[size]!);
      await session.info();
      const view = await session.readView();
      openRead[size].push(ms(t1));
      openReadCpu[size].push(cpuNow() - c1);
      if (view.length < size) throw new Error(`session of ${size} nodes reads back ${view.length} messages`);
      const t2 = performance.now();
      const result = await session.turn("continue").result;
      resumeTurn[size].push(ms(t2));
      if (result.text !== "ok") throw new Error(`resumed turn answered ${JSON.stringify(result.text)}`);
      await lash.close();
    }
  }

  // Fresh process: import @lash/core, open, info + readView (open-worker.ts).
  interface Fresh {
    readonly importMs: number;
    readonly importCpuMs: number;
    readonly openReadMs: number;
    readonly openReadCpuMs: number;
  }
  const fresh: Record<number, Fresh> = {};
  const worker = new URL("./open-worker.ts", import.meta.url).pathname;
  for (const size of SIZES) {
    const runs: Fresh[] = [];
    for (let r = 0; r < OPEN_RUNS; r++) {
      const out = spawnSync(
        process.execPath,
        [worker, filename, ids[size]!, String(size), ...(coreEntry ? [coreEntry] : [])],
        { encoding: "utf8", maxBuffer: 1 << 20 },
      );
      if (out.status !== 0) throw new Error(`open worker failed: ${out.stderr}`);
      runs.push(JSON.parse(out.stdout) as Fresh);
    }
    const m = (k: keyof Fresh) => median(runs.map((x) => x[k]));
    fresh[size] = {
      importMs: m("importMs"),
      importCpuMs: m("importCpuMs"),
      openReadMs: m("openReadMs"),
      openReadCpuMs: m("openReadCpuMs"),
    };
  }

  // Fork at the leaf, through the runtime.
  const fork: Record<number, number[]> = {};
  {
    const lash = createLash({ store: SqliteStore.layer({ filename }), provider: textModel });
    for (const size of SIZES) {
      fork[size] = [];
      const session = lash.session(ids[size]!);
      await session.info();
      for (let r = 0; r < FORK_RUNS; r++) {
        const t1 = performance.now();
        await session.fork({ title: `fork ${r}` });
        fork[size].push(ms(t1));
      }
    }
    await lash.close();
  }
  const dbBytes = statSync(filename).size;

  const latency = await commitLatency(dir);
  rmSync(dir, { recursive: true, force: true });
  const idle = [idleSessions("sqlite"), idleSessions("memory")];
  const totalSeconds = ms(started) / 1000;

  const goalOpen = {
    inProcess: {
      cpuMs: median(openReadCpu[GOAL_NODES] ?? [Number.NaN]),
      wallMs: median(openRead[GOAL_NODES] ?? [Number.NaN]),
    },
    freshProcess: {
      cpuMs: fresh[GOAL_NODES]?.openReadCpuMs ?? Number.NaN,
      wallMs: fresh[GOAL_NODES]?.openReadMs ?? Number.NaN,
    },
  };
  const verdict = (cpu: number) =>
    Number.isNaN(cpu) ? "not measured (--quick)" : cpu <= GOAL_MS ? "met" : "not met";
  const table = [
    markdownTable(
      [
        "session nodes",
        "open + read transcript, new runtime: CPU (wall) ms",
        "fresh process: import @lash/core",
        "fresh process: open + read transcript",
        "first turn after resume (wall ms)",
        "fork (wall ms)",
      ],
      SIZES.map((n) => [
        n.toLocaleString("en-US"),
        `${fmt(median(openReadCpu[n]!))} (${fmt(median(openRead[n]!))})`,
        `${fmt(fresh[n]!.importCpuMs)} (${fmt(fresh[n]!.importMs)})`,
        `${fmt(fresh[n]!.openReadCpuMs)} (${fmt(fresh[n]!.openReadMs)})`,
        fmt(median(resumeTurn[n]!)),
        fmt(median(fork[n]!)),
      ]),
    ),
    "",
    markdownTable(
      ["goal", "CPU (wall) ms", "verdict"],
      [
        [
          `open + read the transcript of ${GOAL_NODES.toLocaleString("en-US")} nodes, new runtime in this process ≤ ${GOAL_MS} ms`,
          `${fmt(goalOpen.inProcess.cpuMs)} (${fmt(goalOpen.inProcess.wallMs)})`,
          verdict(goalOpen.inProcess.cpuMs),
        ],
        [
          `the same in a fresh process (after the import) ≤ ${GOAL_MS} ms`,
          `${fmt(goalOpen.freshProcess.cpuMs)} (${fmt(goalOpen.freshProcess.wallMs)})`,
          verdict(goalOpen.freshProcess.cpuMs),
        ],
      ],
    ),
    "",
    markdownTable(
      [
        "concurrent sessions",
        "turns",
        "commit p50 (µs)",
        "commit p99 (µs)",
        "turn p50 (ms)",
        "turn p99 (ms)",
        "turns/s",
      ],
      latency.map((l) => [
        l.concurrency,
        l.turns,
        l.commitP50Us.toFixed(0),
        l.commitP99Us.toFixed(0),
        l.turnP50Ms.toFixed(1),
        l.turnP99Ms.toFixed(1),
        l.turnsPerSecond.toFixed(0),
      ]),
    ),
    "",
    markdownTable(
      ["idle open sessions", "store", "RSS / session (KiB)", "JS heap / session (KiB)"],
      idle.map((i) => [
        i.count.toLocaleString("en-US"),
        i.store === "sqlite" ? "SqliteStore" : "MemoryStore",
        (i.rssPerSessionBytes / 1024).toFixed(1),
        (i.heapPerSessionBytes / 1024).toFixed(1),
      ]),
    ),
  ].join("\n");

  report({
    name: "scale",
    title:
      "Scale through the runtime: open/resume and fork vs session size, commit latency under concurrency, memory per idle session",
    table,
    results: {
      sizes: SIZES,
      openReadMs: openRead,
      openReadCpuMs: openReadCpu,
      fresh,
      goalOpen,
      resumeTurnMs: resumeTurn,
      forkMs: fork,
      commitLatency: latency,
      idle,
      dbBytes,
      buildSeconds,
      totalSeconds,
    },
    notes: [
      `Open = a fresh createLash over the SqliteStore file (${(dbBytes / 2 ** 20).toFixed(0)} MiB, WAL) + session info + readView (the settled transcript), CPU ms with wall ms beside it; ` +
        "fresh process = a new node process that imports @lash/core (timed apart), then does the same (open-worker.ts); " +
        "first turn after resume = the next turn of that session (active path loaded, the whole history sent to an in-process model that answers at once, committed with the journal on). " +
        `Medians of ${OPEN_RUNS} (open, resume) and ${FORK_RUNS} (fork) runs. Histories were appended through the store in commits of ${CHUNK.toLocaleString("en-US")} nodes (${buildSeconds.toFixed(0)} s).`,
      `Commit latency: the duration of each turn's store commit (one transaction: the turn's nodes, usage row, session head), measured around SessionStore.commit inside real turns — one \`add\` tool round then an answer, over the mock Chat Completions server in the same process, journal on — ` +
        `${COMMITS_PER_LEVEL}+ turns per level, all sessions in one runtime sharing one database. Turn latency is the whole turn (2 model round trips, tool call, journal writes, commit).`,
      `Idle sessions: ${IDLE_SESSIONS.toLocaleString("en-US")} sessions created in one runtime, each after one completed turn, then held; (RSS, heap) after minus before, after forced GC, divided by the count, in a fresh process. ` +
        `With MemoryStore the figure includes the sessions' history; with SqliteStore it is what the runtime itself keeps per session. Total ${totalSeconds.toFixed(0)} s.`,
    ],
  });
}

if (process.argv[2] === "--idle-worker") {
  await idleSessionsWorker(process.argv[3] === "memory" ? "memory" : "sqlite", Number(process.argv[4]));
} else {
  await main();
}
