// Mastra: @mastra/core Agent (no memory, no storage) with a model from
// @ai-sdk/openai-compatible.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
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

type MastraModel = ConstructorParameters<typeof Agent>[0]["model"];

export function mastraAdapter(ctx: AdapterContext): FrameworkAdapter {
  const provider = createOpenAICompatible({ name: "mock", baseURL: ctx.baseUrl, apiKey: "test" });
  // Mastra pins its own copy of @ai-sdk/provider: the same LanguageModelV4 at run
  // time, a different declaration to the type checker.
  const model = provider.chatModel(MODEL) as unknown as MastraModel;
  const addTool = createTool({
    id: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
    execute: async ({ a, b }) => ctx.add(a, b),
  });
  const toolAgent = new Agent({
    id: "bench",
    name: "bench",
    instructions: SYSTEM,
    model,
    tools: { [TOOL_NAME]: addTool },
  });
  const textAgent = new Agent({ id: "bench-stream", name: "bench-stream", instructions: SYSTEM, model });
  return {
    // Agent.generate asks for non-streamed responses (the request check saw it), Agent.stream for SSE.
    wires: ["sse", "json"],
    async toolSession(k, wire) {
      if (wire === "json") {
        const result = await toolAgent.generate(prompt(k, wire), { maxSteps: ctx.rounds + 1 });
        return result.text;
      }
      const result = await toolAgent.stream(prompt(k, wire), { maxSteps: ctx.rounds + 1 });
      // Only the last step has text: the concatenated deltas are the final answer.
      let text = "";
      for await (const delta of result.textStream) text += delta;
      return text;
    },
    async streamSession(k) {
      const result = await textAgent.stream(streamPrompt(k));
      let text = "";
      for await (const delta of result.textStream) text += delta;
      return text;
    },
  };
}
