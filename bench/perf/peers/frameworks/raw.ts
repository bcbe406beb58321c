// The floor: the official `openai` SDK's Chat Completions in a hand-written tool
// loop — no framework, no persistence. Streamed (SSE: text and tool-call deltas
// accumulated by hand) or non-streamed (one JSON body per round trip).
import OpenAI from "openai";
import type {
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import {
  type AdapterContext,
  type FrameworkAdapter,
  MODEL,
  prompt,
  SYSTEM,
  streamPrompt,
  TOOL_DESCRIPTION,
  TOOL_NAME,
  type Wire,
} from "../workload.ts";

interface Call {
  id: string;
  name: string;
  args: string;
}

export function rawAdapter(ctx: AdapterContext): FrameworkAdapter {
  const client = new OpenAI({ baseURL: ctx.baseUrl, apiKey: "test", maxRetries: 0 });
  const tools: ChatCompletionTool[] = [
    {
      type: "function",
      function: {
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        parameters: {
          type: "object",
          properties: { a: { type: "integer" }, b: { type: "integer" } },
          required: ["a", "b"],
          additionalProperties: false,
        },
      },
    },
  ];

  /** One model round trip: the assistant's text and tool calls. */
  async function step(
    messages: ChatCompletionMessageParam[],
    wire: Wire,
  ): Promise<{ text: string; calls: Call[] }> {
    if (wire === "json") {
      const res = await client.chat.completions.create({ model: MODEL, messages, tools });
      const message = res.choices[0]?.message;
      const calls = (message?.tool_calls ?? [])
        .filter((c): c is ChatCompletionMessageFunctionToolCall => c.type === "function")
        .map((c) => ({ id: c.id, name: c.function.name, args: c.function.arguments }));
      return { text: message?.content ?? "", calls };
    }
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const calls: Call[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) text += delta.content;
      for (const tc of delta.tool_calls ?? []) {
        const call = calls[tc.index] ?? { id: "", name: "", args: "" };
        calls[tc.index] = call;
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.name += tc.function.name;
        if (tc.function?.arguments) call.args += tc.function.arguments;
      }
    }
    return { text, calls };
  }

  return {
    wires: ["sse", "json"],
    async toolSession(k, wire) {
      const messages: ChatCompletionMessageParam[] = [
        { role: "system", content: SYSTEM },
        { role: "user", content: prompt(k, wire) },
      ];
      // At most rounds + 1 round trips, as every framework is allowed.
      for (let trip = 0; trip <= ctx.rounds; trip++) {
        const { text, calls } = await step(messages, wire);
        if (calls.length === 0) return text;
        messages.push({
          role: "assistant",
          content: text || null,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.args },
          })),
        });
        for (const c of calls) {
          const { a, b } = JSON.parse(c.args) as { a: number; b: number };
          const content = c.name === TOOL_NAME ? ctx.add(a, b) : `unknown tool ${c.name}`;
          messages.push({ role: "tool", tool_call_id: c.id, content });
        }
      }
      throw new Error(`no final answer after ${ctx.rounds + 1} round trips`);
    },
    async streamSession(k) {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: "system", content: SYSTEM },
          { role: "user", content: streamPrompt(k) },
        ],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      return text;
    },
  };
}
