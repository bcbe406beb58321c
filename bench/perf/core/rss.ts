// Memory kept per open session (issue 16: the per-session event log): N sessions kept in one
// runtime (MemoryStore), each after one turn — a one-line answer, or a 20-round tool loop —
// RSS and JS heap growth divided by N (after a GC when run with --expose-gc).
// Run: node --expose-gc bench/perf/core/rss.ts
import { createLash, defineTool, MemoryStore, textOutput } from "@lash/core";
import { ScriptedProvider } from "@lash/providers/testing";
import { loopScript } from "./script.ts";

const echo = defineTool<{ n: number }>({
  name: "echo",
  description: "echo",
  inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  readOnly: true,
  run: async ({ n }) => textOutput(String(n)),
});

/** RSS and heap bytes per session kept open after one turn of `rounds` tool rounds (0: a plain answer). */
export async function perSession(rounds: number, n: number): Promise<{ rss: number; heap: number }> {
  const lash = createLash({
    store: MemoryStore,
    provider: new ScriptedProvider((req) =>
      rounds > 0
        ? loopScript(req, rounds)
        : {
            events: [
              { type: "textDelta", text: "hi" },
              { type: "finish", reason: "stop" },
            ],
          },
    ),
    plugins: [{ name: "bench", tools: [echo] }],
    maxTurns: rounds + 5,
  });
  // warm everything up first so module and JIT memory is not attributed to sessions
  const warm = await lash.createSession({ model: "test/model" });
  await warm.turn("hello").result;
  global.gc?.();
  const before = process.memoryUsage();
  for (let i = 0; i < n; i++) {
    const s = await lash.createSession({ model: "test/model" });
    const r = await s.turn("go").result;
    if (r.toolCalls !== rounds) throw new Error(`expected ${rounds} tool calls, got ${r.toolCalls}`);
  }
  global.gc?.();
  const after = process.memoryUsage();
  await lash.close();
  return { rss: (after.rss - before.rss) / n, heap: (after.heapUsed - before.heapUsed) / n };
}

if (import.meta.main) {
  for (const rounds of [0, 20]) {
    const r = await perSession(rounds, rounds ? 300 : 1_000);
    console.log(
      `${rounds ? "20-round tool loop" : "one answer"}: RSS ${(r.rss / 1024).toFixed(1)} KiB, heap ${(r.heap / 1024).toFixed(1)} KiB per session`,
    );
  }
}
