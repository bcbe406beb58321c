// Host overhead of @lash/core per LLM round trip (scripted provider, no HTTP),
// with MemoryStore and with SqliteStore + journal; open time against session
// size; RSS per open idle session.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createLash,
  defineTool,
  type GraphNode,
  MemoryStore,
  openSqliteStore,
  SqliteStore,
  textOutput,
} from "@lash/core";
import { ScriptedProvider } from "@lash/providers/testing";
import { markdownTable, median, report } from "../util.ts";
import { perSession } from "./rss.ts";
import { loopScript } from "./script.ts";

const ROUNDS = 20;
const SESSIONS = 20;
const RUNS = 5;

const echo = defineTool<{ n: number }>({
  name: "echo",
  description: "echo",
  inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  readOnly: true,
  run: async ({ n }) => textOutput(String(n)),
});

async function overhead(kind: "memory" | "sqlite"): Promise<{ usPerRound: number; wallMsPerRound: number }> {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let run = 0; run < RUNS + 1; run++) {
    const dir = mkdtempSync(join(tmpdir(), "lash-bench-core-"));
    const lash = createLash({
      store: kind === "memory" ? MemoryStore : SqliteStore.layer({ filename: join(dir, "lash.db") }),
      provider: new ScriptedProvider((req) => loopScript(req, ROUNDS)),
      plugins: [{ name: "bench", tools: [echo] }],
      journal: kind === "sqlite",
      maxTurns: ROUNDS + 5,
    });
    const sessions = [];
    for (let i = 0; i < SESSIONS; i++) sessions.push(await lash.createSession({ model: "test/model" }));
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (const s of sessions) {
      const r = await s.turn("go").result;
      if (r.toolCalls !== ROUNDS) throw new Error(`expected ${ROUNDS} tool calls, got ${r.toolCalls}`);
    }
    const t1 = performance.now();
    const c1 = process.cpuUsage(c0);
    await lash.close();
    rmSync(dir, { recursive: true, force: true });
    if (run === 0) continue; // warm-up
    const roundTrips = SESSIONS * (ROUNDS + 1);
    cpu.push((c1.user + c1.system) / roundTrips);
    wall.push((t1 - t0) / roundTrips);
  }
  return { usPerRound: median(cpu), wallMsPerRound: median(wall) };
}

/** Issue 16, acceptance 6: open a 100,000-node session (active path) from SQLite in ≤ 100 ms. */
const OPEN_GOAL_MS = 100;
const OPEN_GOAL_NODES = 100_000;

async function openTimes(): Promise<{ nodes: number; readViewMs: number; readViewCpuMs: number }[]> {
  const out: { nodes: number; readViewMs: number; readViewCpuMs: number }[] = [];
  for (const n of [100, 1_000, 10_000, 100_000]) {
    const dir = mkdtempSync(join(tmpdir(), "lash-bench-open-"));
    const filename = join(dir, "lash.db");
    const opened = await openSqliteStore({ filename });
    const store = opened.store;
    const now = Date.now();
    await store.createSession({
      id: "big",
      model: "test/model",
      mode: "standard",
      createdAt: now,
      updatedAt: now,
      leafId: null,
      headRevision: 0,
      turnCount: 0,
      frameId: "f0",
      state: {},
    });
    const nodes: Omit<GraphNode, "seq">[] = [];
    let parent: string | null = null;
    for (let i = 0; i < n; i++) {
      const id: string = `n${i}`;
      nodes.push({
        id,
        sessionId: "big",
        parentId: parent,
        frameId: "f0",
        kind: "message",
        turnId: "t0",
        payload: { id, role: i % 2 ? "assistant" : "user", parts: [{ type: "text", text: `message ${i}` }] },
        createdAt: now,
      });
      parent = id;
    }
    await store.commit({
      sessionId: "big",
      turnId: "t0",
      hash: "h",
      expectedRevision: 0,
      nodes,
      leafId: parent,
      usage: [],
      updatedAt: now,
    });
    await opened.close();
    const samples: number[] = [];
    const cpuSamples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const lash = createLash({
        store: SqliteStore.layer({ filename }),
        provider: new ScriptedProvider([]),
      });
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const view = await lash.session("big").readView();
      samples.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpuSamples.push((c.user + c.system) / 1000);
      if (view.length !== n) throw new Error(`expected ${n} messages, read ${view.length}`);
      await lash.close();
    }
    out.push({ nodes: n, readViewMs: median(samples), readViewCpuMs: median(cpuSamples) });
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

const memory = await overhead("memory");
const sqlite = await overhead("sqlite");
const opens = await openTimes();
const rss = await perSession(0, 1_000);
const loopRss = await perSession(ROUNDS, 300);

report({
  name: "core",
  title: "Core: host overhead per LLM round trip, open time, idle sessions",
  table: [
    markdownTable(
      ["store", "CPU µs / round trip (median of 5)", "wall µs / round trip", "goal"],
      [
        [
          "MemoryStore (journal off)",
          memory.usPerRound.toFixed(0),
          (memory.wallMsPerRound * 1000).toFixed(0),
          "none here (against the raw SDK loop: see peers)",
        ],
        [
          "SqliteStore + journal",
          sqlite.usPerRound.toFixed(0),
          (sqlite.wallMsPerRound * 1000).toFixed(0),
          "none here (against the raw SDK loop: see peers)",
        ],
      ],
    ),
    "",
    markdownTable(
      ["session nodes", "open: CPU ms (median of 5)", "open: wall ms", "goal", "met?"],
      opens.map((o) => [
        o.nodes.toLocaleString("en-US"),
        o.readViewCpuMs.toFixed(1),
        o.readViewMs.toFixed(1),
        o.nodes === OPEN_GOAL_NODES ? `≤ ${OPEN_GOAL_MS} ms CPU` : "-",
        o.nodes === OPEN_GOAL_NODES ? (o.readViewCpuMs <= OPEN_GOAL_MS ? "met" : "**missed**") : "-",
      ]),
    ),
    "",
    `Per open idle session (1,000 sessions kept in one runtime, one committed turn each, MemoryStore): ` +
      `RSS ${(rss.rss / 1024).toFixed(1)} KiB, JS heap ${(rss.heap / 1024).toFixed(1)} KiB` +
      (global.gc ? "" : " (run with --expose-gc for stable figures)"),
    "",
    `Per open session after a ${ROUNDS}-round tool loop (300 sessions kept, MemoryStore; the event log keeps a finished turn only for the 64 sessions that finished one most recently): ` +
      `RSS ${(loopRss.rss / 1024).toFixed(1)} KiB, JS heap ${(loopRss.heap / 1024).toFixed(1)} KiB`,
  ].join("\n"),
  results: {
    memory,
    sqlite,
    opens,
    perIdleSession: rss,
    perSessionAfterLoop: loopRss,
    rounds: ROUNDS,
    sessions: SESSIONS,
  },
  goals: `Open (issue 16): a ${OPEN_GOAL_NODES.toLocaleString("en-US")}-node session's transcript (readView: every message decoded) in ≤ ${OPEN_GOAL_MS} ms CPU — ${(() => {
    const o = opens.find((x) => x.nodes === OPEN_GOAL_NODES);
    return o
      ? `${o.readViewCpuMs.toFixed(0)} ms CPU (${o.readViewMs.toFixed(0)} wall), ${o.readViewCpuMs <= OPEN_GOAL_MS ? "met" : "missed"}; the active path alone (no payload decoded): core-store`
      : "not measured";
  })()}. Round trip: no goal here (issue 16 sets it against the raw SDK loop: see peers). Memory per session: no goal set.`,
  notes: [
    `Workload: ${SESSIONS} sessions × a ${ROUNDS}-round tool loop through the scripted provider (no HTTP); ` +
      "CPU is the process's user+system time divided by the number of model round trips. Every turn is checked (it must make all its tool calls), the untimed warm-up run's too.",
    `Open = a fresh runtime over the SQLite file reads the session's transcript (readView of the active path); every read is checked to return all its messages.`,
  ],
});
