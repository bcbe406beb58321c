// Issue 16: CPU of the per-tool-call supervision (timeout + cancel) in @lash/core's dispatch.
// Two figures, medians of RUNS fresh runs after a warm-up:
//  - dispatch only: `runToolBatch` with one call of a trivial tool (a promise tool, as
//    `defineTool` makes, and a synchronous Effect tool), CPU per call;
//  - the whole round trip: MemoryStore, scripted provider, one trivial tool call per round.
// Run: node bench/perf/core/supervise.ts
import { createLash, defineTool, Journal, MemoryStore, type ToolDefinition, textOutput } from "@lash/core";
import { type DispatchContext, runToolBatch } from "@lash/core/internal";
import { ScriptedProvider } from "@lash/providers/testing";
import * as Effect from "effect/Effect";
import { median } from "../util.ts";
import { loopScript } from "./script.ts";

const RUNS = 7;
const CALLS = 20_000;
const ROUNDS = 20;
const SESSIONS = 20;

const promiseTool = defineTool<{ n: number }>({
  name: "echo",
  description: "echo",
  inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  readOnly: true,
  run: async ({ n }) => textOutput(String(n)),
});
const syncTool: ToolDefinition<{ n: number }> = {
  ...promiseTool,
  execute: ({ n }) => Effect.succeed(textOutput(String(n))),
};

async function dispatchOnly(tool: ToolDefinition<{ n: number }>): Promise<number> {
  const ctx: DispatchContext = {
    hook: { session: { id: "s" }, turnId: "t" } as unknown as DispatchContext["hook"],
    catalog: new Map([[tool.name, tool as ToolDefinition]]),
    hooks: [],
    project: (_call, out) => Effect.succeed({ content: out.content }),
    journal: new Journal(undefined),
    batchKey: "b",
    emit: () => Effect.void,
    signal: new AbortController().signal,
  };
  const cpu: number[] = [];
  for (let run = 0; run < RUNS + 1; run++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      const r = await Effect.runPromise(
        runToolBatch(ctx, [{ callId: `c${i}`, name: "echo", args: { n: i } }]),
      );
      const first = r.results[0]!.content[0];
      if (first?.type !== "text" || first.text !== String(i))
        throw new Error(`wrong result ${JSON.stringify(r)}`);
    }
    const c1 = process.cpuUsage(c0);
    if (run > 0) cpu.push((c1.user + c1.system) / CALLS);
  }
  return median(cpu);
}

async function roundTrip(): Promise<number> {
  const cpu: number[] = [];
  for (let run = 0; run < RUNS + 1; run++) {
    const lash = createLash({
      store: MemoryStore,
      provider: new ScriptedProvider((req) => loopScript(req, ROUNDS)),
      plugins: [{ name: "bench", tools: [promiseTool] }],
      maxTurns: ROUNDS + 5,
    });
    const sessions = [];
    for (let i = 0; i < SESSIONS; i++) sessions.push(await lash.createSession({ model: "test/model" }));
    const c0 = process.cpuUsage();
    for (const s of sessions) {
      const r = await s.turn("go").result;
      if (r.toolCalls !== ROUNDS) throw new Error(`expected ${ROUNDS} tool calls, got ${r.toolCalls}`);
    }
    const c1 = process.cpuUsage(c0);
    await lash.close();
    if (run > 0) cpu.push((c1.user + c1.system) / (SESSIONS * (ROUNDS + 1)));
  }
  return median(cpu);
}

const promiseUs = await dispatchOnly(promiseTool);
const syncUs = await dispatchOnly(syncTool);
const roundUs = await roundTrip();
console.log(`dispatch, one promise tool call: ${promiseUs.toFixed(1)} µs CPU / call (median of ${RUNS})`);
console.log(`dispatch, one sync Effect tool call: ${syncUs.toFixed(1)} µs CPU / call (median of ${RUNS})`);
console.log(`round trip, MemoryStore: ${roundUs.toFixed(1)} µs CPU / round trip (median of ${RUNS})`);
