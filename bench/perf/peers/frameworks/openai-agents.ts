// OpenAI Agents SDK: Agent + run with its Chat Completions model, tracing off.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
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

export function openaiAgentsAdapter(ctx: AdapterContext): FrameworkAdapter {
  setTracingDisabled(true);
  const client = new OpenAI({ baseURL: ctx.baseUrl, apiKey: "test", maxRetries: 0 });
  const model = new OpenAIChatCompletionsModel(client, MODEL);
  const addTool = tool({
    name: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: z.object({ a: z.number().int(), b: z.number().int() }),
    execute: async ({ a, b }) => ctx.add(a, b),
  });
  const toolAgent = new Agent({ name: "bench", instructions: SYSTEM, model, tools: [addTool] });
  const textAgent = new Agent({ name: "bench-stream", instructions: SYSTEM, model });
  return {
    wires: ["sse", "json"],
    async toolSession(k, wire) {
      if (wire === "json") {
        const result = await run(toolAgent, prompt(k, wire), { maxTurns: ctx.rounds + 5 });
        return String(result.finalOutput ?? "");
      }
      const result = await run(toolAgent, prompt(k, wire), { maxTurns: ctx.rounds + 5, stream: true });
      for await (const _ of result.toStream());
      await result.completed;
      return String(result.finalOutput ?? "");
    },
    async streamSession(k) {
      const result = await run(textAgent, streamPrompt(k), { stream: true });
      let text = "";
      for await (const delta of result.toTextStream()) text += delta;
      await result.completed;
      return text;
    },
  };
}
