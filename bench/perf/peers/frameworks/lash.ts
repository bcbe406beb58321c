// lash through its promise facade: createLash + the openai-compatible provider
// (Chat Completions; the streamed request sent by lash's own transport, the `openai` SDK's
// types and errors). `lash-memory`: MemoryStore,
// journal off. `lash-sqlite`: SqliteStore (one WAL file) with the effect journal.
import { join } from "node:path";
import { createLash, defineTool, MemoryStore, SqliteStore, textOutput } from "@lash/core";
import { createProvider } from "@lash/providers";
import {
  type AdapterContext,
  type FrameworkAdapter,
  MODEL,
  prompt,
  SYSTEM,
  streamPrompt,
  TOOL_DESCRIPTION,
  TOOL_NAME,
} from "../workload.ts";

export function lashAdapter(ctx: AdapterContext, persistent: boolean): FrameworkAdapter {
  const model = `openai-compatible/${MODEL}`;
  const tool = defineTool<{ a: number; b: number }>({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "integer" } },
      required: ["a", "b"],
      additionalProperties: false,
    },
    readOnly: true,
    run: async ({ a, b }) => textOutput(ctx.add(a, b)),
  });
  const lash = createLash({
    store: persistent ? SqliteStore.layer({ filename: join(ctx.tmp, "lash.db") }) : MemoryStore,
    provider: createProvider(model, { baseUrl: ctx.baseUrl, apiKey: "test" }),
    journal: persistent,
    plugins: [{ name: "bench", tools: [tool] }],
  });
  return {
    // The openai-compatible adapter always streams (`stream: true`): no non-streamed tool loop.
    wires: ["sse"],
    async toolSession(k, wire) {
      const session = await lash.createSession({ model, systemPrompt: SYSTEM });
      const result = await session.turn(prompt(k, wire)).result;
      return result.text;
    },
    async streamSession(k) {
      const session = await lash.createSession({ model, systemPrompt: SYSTEM });
      const run = session.turn(streamPrompt(k));
      let text = "";
      for await (const e of run) if (e.type === "textDelta") text += e.text;
      await run.result;
      return text;
    },
    close: () => lash.close(),
  };
}
