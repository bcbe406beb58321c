// pi: @mariozechner/pi-agent-core's Agent over pi-ai's openai-completions API.
import { Agent, type AgentTool } from "@mariozechner/pi-agent-core";
import { type Model, Type } from "@mariozechner/pi-ai";
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

export function piAdapter(ctx: AdapterContext): FrameworkAdapter {
  const model: Model<"openai-completions"> = {
    id: MODEL,
    name: "Mock model",
    api: "openai-completions",
    provider: "mock",
    baseUrl: ctx.baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 4096,
    compat: { supportsStore: false, supportsDeveloperRole: false, supportsReasoningEffort: false },
  };
  const parameters = Type.Object({ a: Type.Integer(), b: Type.Integer() });
  const addTool: AgentTool<typeof parameters> = {
    name: TOOL_NAME,
    label: "Add",
    description: TOOL_DESCRIPTION,
    parameters,
    execute: async (_id, { a, b }) => ({ content: [{ type: "text", text: ctx.add(a, b) }], details: {} }),
  };
  const agent = (tools: AgentTool<typeof parameters>[]) =>
    new Agent({
      initialState: { systemPrompt: SYSTEM, model, tools },
      getApiKey: () => "test",
    });
  const finalText = (a: Agent): string => {
    const last = a.state.messages.at(-1);
    if (last?.role !== "assistant") return "";
    return last.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  };
  return {
    // pi-ai's openai-completions API always streams.
    wires: ["sse"],
    async toolSession(k, wire) {
      const a = agent([addTool]);
      await a.prompt(prompt(k, wire));
      return finalText(a);
    },
    async streamSession(k) {
      const a = agent([]);
      let text = "";
      a.subscribe((e) => {
        if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta")
          text += e.assistantMessageEvent.delta;
      });
      await a.prompt(streamPrompt(k));
      return text;
    },
  };
}
