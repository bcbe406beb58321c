// Context compaction at scale (issue 20, acceptance 6): a session of 100,000 nodes on its
// active path, and a copy of it compacted — open time and first-request latency of each, in
// fresh child processes (medians of --runs, 5 by default).
//
//   - build: the session is created by the runtime, its history appended through the store's
//     commit path (commits of 1,000 nodes) into a real SqliteStore file; the
//     file is copied, and the copy compacted through the real compaction path
//     (`session.compact()`: the summariser is the mock wire server, staged and journaled);
//     then the same tail of messages is appended to both, so the compaction node sits near
//     the end of the copy's path and replaces everything before it;
//   - open (fresh process): import @lash/core (timed apart), createLash over the file,
//     session info + readView (the transcript) — CPU ms, wall beside;
//   - first request (fresh process, its own copy of the file): from `turn` start to the
//     request built (the provider called: path loaded, projected, estimated — CPU and wall),
//     to the mock wire server (in this process) receiving it (wall, across the two processes'
//     clocks), and to the reply's first event in the child (CPU); the request's size in bytes
//     and messages.
//
// Checked before timing (a probe run per contender, not timed) and on every timed run: the
// compacted session's first request holds the summary and the tail, and none of the replaced
// messages; the uncompacted one's holds every message. A failed check prints
// `CONTEXT BENCHMARK FAILED: …` and exits 1 (no report). `--sabotage` skips the compaction
// of the copy, to see the check fail.
//
// pnpm exec node bench/perf/context/run.ts [--json out.json] [--nodes N] [--tail N] [--runs N] [--sabotage]
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NewNode } from "@lash/core";
import type { RecordedRequest } from "@lash/providers/testing";
import type { LlmEvent, LlmProvider } from "@lash/sansio";
import { Effect, Stream } from "effect";
import { argValue, markdownTable, median, report } from "../util.ts";

const MODEL = "openai-compatible/mock-model";
const CHUNK = 1_000;
const SUMMARY = "BENCH-SUMMARY: the user asked for a long series of messages; nothing is pending.";
const REPLY = "continued";
const PROMPT = "continue";

const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
/** A wall clock comparable across processes on one machine (ms since the epoch, sub-ms resolution). */
const epochNow = () => performance.timeOrigin + performance.now();
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const int = (name: string, dflt: number) => {
  const v = argValue(name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} takes a positive integer, got ${JSON.stringify(v)}`);
  return n;
};

// ---------------------------------------------------------------------------
// Workers (fresh processes)

interface OpenResult {
  readonly importCpuMs: number;
  readonly importMs: number;
  readonly openCpuMs: number;
  readonly openMs: number;
  readonly viewMessages: number;
}

interface TurnResult {
  readonly importCpuMs: number;
  readonly importMs: number;
  /** Epoch ms at `turn` start (compared with the mock's arrival time in the parent). */
  readonly turnStartEpochMs: number;
  readonly builtCpuMs: number;
  readonly builtMs: number;
  readonly firstEventCpuMs: number;
  readonly firstEventMs: number;
  readonly turnCpuMs: number;
  readonly turnMs: number;
  readonly text: string;
}

async function openWorker(filename: string, sessionId: string): Promise<void> {
  const t0 = performance.now();
  const c0 = cpuNow();
  const core = await import("@lash/core");
  const t1 = performance.now();
  const c1 = cpuNow();
  const idle: LlmProvider = {
    name: "idle",
    stream: () => {
      throw new Error("the open benchmark calls no model");
    },
  };
  const lash = core.createLash({ store: core.SqliteStore.layer({ filename }), provider: idle });
  const session = lash.session(sessionId);
  await session.info();
  const view = await session.readView();
  const t2 = performance.now();
  const c2 = cpuNow();
  await lash.close();
  const r: OpenResult = {
    importCpuMs: c1 - c0,
    importMs: t1 - t0,
    openCpuMs: c2 - c1,
    openMs: t2 - t1,
    viewMessages: view.length,
  };
  process.stdout.write(JSON.stringify(r));
}

async function turnWorker(filename: string, sessionId: string, baseUrl: string): Promise<void> {
  const t0 = performance.now();
  const c0 = cpuNow();
  const core = await import("@lash/core");
  const { createProvider } = await import("@lash/providers");
  const t1 = performance.now();
  const c1 = cpuNow();
  const inner = createProvider(MODEL, { baseUrl, apiKey: "test" });
  const marks: { built?: [number, number]; first?: [number, number] } = {};
  const provider: LlmProvider = {
    name: inner.name,
    stream: (request) => {
      marks.built ??= [performance.now(), cpuNow()];
      let seen = false;
      return inner.stream(request).pipe(
        Stream.tap((_e: LlmEvent) =>
          Effect.sync(() => {
            if (!seen) {
              seen = true;
              marks.first ??= [performance.now(), cpuNow()];
            }
          }),
        ),
      );
    },
  };
  const lash = core.createLash({
    store: core.SqliteStore.layer({ filename }),
    provider,
    journal: true,
    compaction: { auto: false },
  });
  const session = lash.session(sessionId);
  const turnStartEpochMs = epochNow();
  const t2 = performance.now();
  const c2 = cpuNow();
  const result = await session.turn(PROMPT).result;
  const t3 = performance.now();
  const c3 = cpuNow();
  await lash.close();
  if (!marks.built || !marks.first) throw new Error("the turn never called the model");
  const r: TurnResult = {
    importCpuMs: c1 - c0,
    importMs: t1 - t0,
    turnStartEpochMs,
    builtCpuMs: marks.built[1] - c2,
    builtMs: marks.built[0] - t2,
    firstEventCpuMs: marks.first[1] - c2,
    firstEventMs: marks.first[0] - t2,
    turnCpuMs: c3 - c2,
    turnMs: t3 - t2,
    text: result.text,
  };
  process.stdout.write(JSON.stringify(r));
}

// ---------------------------------------------------------------------------
// The parent: build, check, time

const textOf = (m: { content?: unknown }): string =>
  typeof m.content === "string"
    ? m.content
    : Array.isArray(m.content)
      ? m.content.map((c: { text?: unknown }) => (typeof c.text === "string" ? c.text : "")).join("")
      : "";

const historyText = (i: number, role: string) => `${role} message ${i}: ${"lorem ipsum ".repeat(12)}`;
const tailText = (i: number, role: string) => `${role} tail message ${i}`;
const REPLACED = /^(user|assistant) message \d+: /;

/** What one first request held (kept instead of its 10+ MB body). */
interface Seen {
  readonly arrivedEpochMs: number;
  readonly bytes: number;
  readonly messages: number;
  readonly replaced: number;
  readonly tail: number;
  readonly summary: boolean;
  readonly prompt: boolean;
}

function inspect(req: RecordedRequest): Seen {
  const arrivedEpochMs = epochNow();
  const messages = (
    (req.body as { messages?: { role?: string; content?: unknown }[] }).messages ?? []
  ).filter((m) => m.role !== "system");
  let replaced = 0;
  let tail = 0;
  let summary = false;
  for (const m of messages) {
    const t = textOf(m);
    if (REPLACED.test(t)) replaced++;
    else if (/^(user|assistant) tail message \d+$/.test(t)) tail++;
    if (t.includes(SUMMARY)) summary = true;
  }
  const last = messages.at(-1);
  return {
    arrivedEpochMs,
    bytes: Buffer.byteLength(req.rawBody),
    messages: messages.length,
    replaced,
    tail,
    summary,
    prompt: last !== undefined && textOf(last) === PROMPT,
  };
}

async function appendMessages(
  filename: string,
  sessionId: string,
  count: number,
  text: (i: number, role: string) => string,
  tag: string,
): Promise<void> {
  const { openSqliteStore } = await import("@lash/core");
  const opened = await openSqliteStore({ filename });
  const store = opened.store;
  const record = await store.getSession(sessionId);
  let leaf = record.leafId;
  let revision = record.headRevision;
  for (let start = 0, t = 0; start < count; start += CHUNK, t++) {
    const turnId = `${sessionId}-${tag}${t}`;
    const nodes: NewNode[] = [];
    for (let i = start; i < Math.min(count, start + CHUNK); i++) {
      const id = `${sessionId}-${tag}n${i}`;
      const role = i % 2 === 0 ? "user" : "assistant";
      nodes.push({
        id,
        sessionId,
        parentId: leaf,
        frameId: record.frameId,
        kind: "message",
        turnId,
        payload: { id, role, parts: [{ type: "text", text: text(i, role) }] },
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
  await opened.close();
}

function copyDb(from: string, to: string): void {
  copyFileSync(from, to);
  for (const ext of ["-wal", "-shm"]) if (existsSync(from + ext)) copyFileSync(from + ext, to + ext);
}

/** The parent's scratch directory, removed on failure too (process.exit skips `finally`). */
let scratch: string | undefined;

function fail(problems: readonly string[]): never {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  process.stderr.write(`CONTEXT BENCHMARK FAILED:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}

interface Contender {
  readonly name: "uncompacted" | "compacted";
  readonly filename: string;
}

async function main(): Promise<void> {
  const started = performance.now();
  const nodes = int("--nodes", 100_000);
  const tail = int("--tail", 20);
  const runs = int("--runs", 5);
  const sabotage = process.argv.includes("--sabotage");
  if (tail >= nodes) throw new Error(`--tail (${tail}) must be smaller than --nodes (${nodes})`);
  const history = nodes - tail;
  const { createLash, SqliteStore, COMPACTION_SYSTEM } = await import("@lash/core");
  const { createProvider } = await import("@lash/providers");
  const { startMockServer } = await import("@lash/providers/testing");

  const seen: Seen[] = [];
  let summariserCalls = 0;
  const server = await startMockServer({
    recordBodies: false,
    responder: (req) => {
      const body = req.body as { messages?: { role?: string; content?: unknown }[] };
      const system = body.messages?.find((m) => m.role === "system");
      if (system && textOf(system) === COMPACTION_SYSTEM) {
        summariserCalls++;
        return { text: `${SUMMARY} (stage ${summariserCalls})`, usage: { input: 1000, output: 50 } };
      }
      seen.push(inspect(req));
      return { text: REPLY, usage: { input: 10, output: 2 } };
    },
  });
  const dir = mkdtempSync(join(tmpdir(), "lash-bench-context-"));
  scratch = dir;
  try {
    // Build the uncompacted session; copy it; compact the copy; the same tail on both.
    const tb = performance.now();
    const plain = join(dir, "uncompacted.db");
    const compacted = join(dir, "compacted.db");
    let sessionId: string;
    {
      const idle: LlmProvider = {
        name: "idle",
        stream: () => {
          throw new Error("building calls no model");
        },
      };
      const lash = createLash({ store: SqliteStore.layer({ filename: plain }), provider: idle });
      sessionId = (await lash.createSession({ model: MODEL, systemPrompt: "context" })).id;
      await lash.close();
    }
    await appendMessages(plain, sessionId, history, historyText, "h");
    copyDb(plain, compacted);
    const buildSeconds = (performance.now() - tb) / 1000;
    const tc = performance.now();
    let compaction:
      | { replaced: number; stages: number; tokensBefore: number; tokensAfter: number }
      | undefined;
    if (!sabotage) {
      const lash = createLash({
        store: SqliteStore.layer({ filename: compacted }),
        provider: createProvider(MODEL, { baseUrl: server.baseUrl("openai-chat"), apiKey: "test" }),
        journal: true,
      });
      const r = await lash.session(sessionId).compact();
      await lash.close();
      if (!r) fail(["session.compact() found nothing to compact"]);
      compaction = {
        replaced: r.payload.replaced,
        stages: r.payload.stages,
        tokensBefore: r.payload.tokensBefore,
        tokensAfter: r.payload.tokensAfter,
      };
      const problems: string[] = [];
      if (r.payload.replaced !== history)
        problems.push(`the compaction replaced ${r.payload.replaced} messages, expected ${history}`);
      if (r.payload.stages !== summariserCalls)
        problems.push(`${r.payload.stages} stages but the summariser was called ${summariserCalls} times`);
      if (!r.payload.summary.startsWith(SUMMARY)) problems.push(`unexpected summary ${r.payload.summary}`);
      if (problems.length) fail(problems);
    }
    const compactSeconds = (performance.now() - tc) / 1000;
    await appendMessages(plain, sessionId, tail, tailText, "t");
    await appendMessages(compacted, sessionId, tail, tailText, "t");
    const dbBytes = { uncompacted: statSync(plain).size, compacted: statSync(compacted).size };

    const contenders: Contender[] = [
      { name: "uncompacted", filename: plain },
      { name: "compacted", filename: compacted },
    ];
    const expected = (c: Contender) =>
      c.name === "compacted"
        ? { messages: tail + 2, replaced: 0, tail, summary: true }
        : { messages: nodes + 1, replaced: history, tail, summary: false };
    const checkRequest = (c: Contender, run: string, s: Seen | undefined): string[] => {
      if (!s) return [`${c.name}, ${run}: the mock server saw no first request`];
      const e = expected(c);
      const p: string[] = [];
      if (s.messages !== e.messages)
        p.push(`${c.name}, ${run}: the first request holds ${s.messages} messages, expected ${e.messages}`);
      if (s.replaced !== e.replaced)
        p.push(
          `${c.name}, ${run}: it holds ${s.replaced} of the ${history} history messages, expected ${e.replaced}`,
        );
      if (s.tail !== e.tail)
        p.push(`${c.name}, ${run}: it holds ${s.tail} tail messages, expected ${e.tail}`);
      if (s.summary !== e.summary)
        p.push(
          `${c.name}, ${run}: the summary is ${s.summary ? "present" : "missing"}, expected ${e.summary ? "present" : "absent"}`,
        );
      if (!s.prompt) p.push(`${c.name}, ${run}: the request does not end with the prompt`);
      return p;
    };

    // Asynchronous: the mock wire server in this process must answer the child's request.
    const spawnWorker = <T>(args: readonly string[]): Promise<T> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [import.meta.filename, ...args], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => {
          stdout += d;
        });
        child.stderr.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
        });
        child.on("close", (code) => {
          if (code !== 0) fail([`worker ${args[0]} failed (exit ${code}): ${stderr.trim()}`]);
          resolve(JSON.parse(stdout) as T);
        });
      });
    const turnRun = async (c: Contender, run: string): Promise<{ r: TurnResult; s: Seen }> => {
      const copy = join(dir, `turn-${c.name}.db`);
      copyDb(c.filename, copy);
      const before = seen.length;
      const r = await spawnWorker<TurnResult>([
        "--turn-worker",
        copy,
        sessionId,
        server.baseUrl("openai-chat"),
      ]);
      for (const ext of ["", "-wal", "-shm"]) rmSync(copy + ext, { force: true });
      const problems =
        seen.length === before + 1
          ? []
          : [`${c.name}, ${run}: the turn sent ${seen.length - before} requests, expected 1`];
      const s = seen[seen.length - 1]!;
      problems.push(...checkRequest(c, run, s));
      if (r.text !== REPLY)
        problems.push(`${c.name}, ${run}: the turn answered ${JSON.stringify(r.text)}, expected ${REPLY}`);
      if (problems.length) fail(problems);
      return { r, s };
    };
    const openRun = async (c: Contender, run: string): Promise<OpenResult> => {
      const r = await spawnWorker<OpenResult>(["--open-worker", c.filename, sessionId]);
      if (r.viewMessages !== nodes)
        fail([`${c.name}, ${run}: readView returned ${r.viewMessages} messages, expected ${nodes}`]);
      return r;
    };

    // Probes: every contender checked once before anything is timed.
    for (const c of contenders) {
      await openRun(c, "probe");
      await turnRun(c, "probe");
    }
    const opens: Record<string, OpenResult[]> = { uncompacted: [], compacted: [] };
    const turns: Record<string, { r: TurnResult; s: Seen }[]> = { uncompacted: [], compacted: [] };
    for (let k = 0; k < runs; k++) {
      const order = k % 2 === 0 ? contenders : [...contenders].reverse();
      for (const c of order) {
        opens[c.name]!.push(await openRun(c, `run ${k + 1}`));
        turns[c.name]!.push(await turnRun(c, `run ${k + 1}`));
      }
    }
    await server.close();

    const figure = (name: Contender["name"]) => {
      const o = opens[name]!;
      const t = turns[name]!;
      const m = <T>(xs: readonly T[], f: (x: T) => number) => median(xs.map(f));
      return {
        openCpuMs: m(o, (x) => x.openCpuMs),
        openMs: m(o, (x) => x.openMs),
        importCpuMs: m(o, (x) => x.importCpuMs),
        builtCpuMs: m(t, (x) => x.r.builtCpuMs),
        builtMs: m(t, (x) => x.r.builtMs),
        receivedMs: m(t, (x) => x.s.arrivedEpochMs - x.r.turnStartEpochMs),
        firstEventCpuMs: m(t, (x) => x.r.firstEventCpuMs),
        firstEventMs: m(t, (x) => x.r.firstEventMs),
        turnCpuMs: m(t, (x) => x.r.turnCpuMs),
        turnMs: m(t, (x) => x.r.turnMs),
        requestBytes: t[0]!.s.bytes,
        requestMessages: t[0]!.s.messages,
        dbBytes: dbBytes[name],
      };
    };
    const figures = { uncompacted: figure("uncompacted"), compacted: figure("compacted") };
    const u = figures.uncompacted;
    const cp = figures.compacted;
    const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}×` : "n/a");
    const n = nodes.toLocaleString("en-US");
    const table = [
      markdownTable(
        [
          "session (active path)",
          "open + read transcript, fresh process: CPU (wall) ms",
          "turn start → request built: CPU (wall) ms",
          "turn start → request received by the mock (wall ms)",
          "turn start → first reply event: CPU (wall) ms",
          "whole turn: CPU (wall) ms",
          "request: KiB, messages",
        ],
        contenders.map((c) => {
          const f = figures[c.name];
          return [
            c.name === "compacted"
              ? `${n} nodes, compacted (summary + ${tail} messages after it)`
              : `${n} nodes, uncompacted`,
            `${fmt(f.openCpuMs)} (${fmt(f.openMs)})`,
            `${fmt(f.builtCpuMs)} (${fmt(f.builtMs)})`,
            fmt(f.receivedMs),
            `${fmt(f.firstEventCpuMs)} (${fmt(f.firstEventMs)})`,
            `${fmt(f.turnCpuMs)} (${fmt(f.turnMs)})`,
            `${(f.requestBytes / 1024).toFixed(1)}, ${f.requestMessages}`,
          ];
        }),
      ),
      "",
      markdownTable(
        [
          "uncompacted ÷ compacted",
          "open CPU",
          "request built CPU",
          "request received (wall)",
          "first reply event CPU",
          "request bytes",
        ],
        [
          [
            "ratio",
            ratio(u.openCpuMs, cp.openCpuMs),
            ratio(u.builtCpuMs, cp.builtCpuMs),
            ratio(u.receivedMs, cp.receivedMs),
            ratio(u.firstEventCpuMs, cp.firstEventCpuMs),
            ratio(u.requestBytes, cp.requestBytes),
          ],
        ],
      ),
    ].join("\n");
    const totalSeconds = (performance.now() - started) / 1000;
    report({
      name: "context",
      title: `Context compaction: open and first-request latency of a ${n}-node session, compacted vs uncompacted`,
      table,
      goals:
        "Goals: none set (issue 20 asks for the figures). Reported: open is the same work for both sessions " +
        `(the transcript keeps the replaced messages): ${fmt(u.openCpuMs)} vs ${fmt(cp.openCpuMs)} ms CPU; ` +
        `the first request: ${fmt(u.receivedMs)} ms (uncompacted, ${u.requestMessages} messages, ${(u.requestBytes / 1024).toFixed(0)} KiB) vs ` +
        `${fmt(cp.receivedMs)} ms (compacted, ${cp.requestMessages} messages, ${(cp.requestBytes / 1024).toFixed(1)} KiB) from turn start to its arrival.`,
      results: {
        nodes,
        tail,
        runs,
        sessionId,
        compaction,
        summariserCalls,
        figures,
        opens,
        turns: Object.fromEntries(
          Object.entries(turns).map(([k, v]) => [
            k,
            v.map(({ r, s }) => ({
              ...r,
              receivedMs: s.arrivedEpochMs - r.turnStartEpochMs,
              requestBytes: s.bytes,
              requestMessages: s.messages,
            })),
          ]),
        ),
        buildSeconds,
        compactSeconds,
        totalSeconds,
      },
      notes: [
        `Both sessions hold the same ${n} message nodes on the active path (the compacted copy one compaction node more, before the last ${tail}): ` +
          `${history.toLocaleString("en-US")} appended through the store's commit path in commits of ${CHUNK.toLocaleString("en-US")} (${buildSeconds.toFixed(0)} s), ` +
          `the file copied, the copy compacted by session.compact() — the real compaction path, the mock wire server as the summariser ` +
          `(${compaction?.stages ?? 0} journaled stages, ${compactSeconds.toFixed(0)} s) — then ${tail} messages appended to both.`,
        `Every figure is the median of ${runs} fresh processes per session (a probe run of each, checked, precedes them untimed; order alternates). ` +
          "Open = createLash over the file + session info + readView, after the @lash/core import (timed apart). " +
          "First request = a turn in a fresh runtime over its own copy of the file (journal on, automatic compaction off): " +
          "request built = the provider called (active path loaded and projected, the estimate made); received = its arrival at the mock wire server in the parent, " +
          "a wall time across the two processes' clocks (performance.timeOrigin + now); first reply event = the child's CPU until the mock's first chunk is back (the child encodes and sends the request; the mock answers at once).",
        "The turn reads only what its request needs: store.projectionPath, the active path from its newest compaction node on (SQLite: one probe of a partial index of compaction nodes per line segment, then index ranges), " +
          "so the compacted session's time to the request built does not grow with the span the summary replaces. " +
          "Open still reads the whole path: the transcript (readView), like forks, exports and compare, keeps the replaced messages.",
      ],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--open-worker") await openWorker(process.argv[3]!, process.argv[4]!);
else if (process.argv[2] === "--turn-worker")
  await turnWorker(process.argv[3]!, process.argv[4]!, process.argv[5]!);
else await main();
