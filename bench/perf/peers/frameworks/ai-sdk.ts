// Vercel AI SDK: generateText with a step stop condition (tool loop) and
// streamText (streaming), over @ai-sdk/openai-compatible.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import {
  type AdapterContext,
  type FrameworkAdapter,
  MODEL,
  prompt,
  SYSTEM,
  streamPrompt,
  TOOL_DESCRIPTION,
} from "../workload.ts";

export function aiSdkAdapter(ctx: AdapterContext): FrameworkAdapter {
  const provider = createOpenAICompatible({ name: "mock", baseURL: ctx.baseUrl, apiKey: "test" });
  const model = provider.chatModel(MODEL);
  const tools = {
    add: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
      execute: async ({ a, b }) => ctx.add(a, b),
    }),
  };
  return {
    wires: ["sse", "json"],
    async toolSession(k, wire) {
      const options = {
        model,
        system: SYSTEM,
        prompt: prompt(k, wire),
        tools,
        stopWhen: stepCountIs(ctx.rounds + 1),
        maxRetries: 0,
      };
      if (wire === "json") return (await generateText(options)).text;
      const result = streamText(options);
      // Drain the stream (every step's deltas); the final step's text is the answer.
      for await (const _ of result.fullStream);
      return await result.text;
    },
    async streamSession(k) {
      const result = streamText({ model, system: SYSTEM, prompt: streamPrompt(k), maxRetries: 0 });
      let text = "";
      for await (const delta of result.textStream) text += delta;
      return text;
    },
  };
}
