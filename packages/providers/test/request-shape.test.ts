// What each adapter puts on the wire: caching breakpoints, reasoning options, stateless
// Responses, streamed usage, tool choice, and message mapping details.
import type { LlmRequest, Message } from "@lash/sansio";
import { describe, expect, it } from "vitest";
import { anthropicParams, chatParams, googleParams, responsesParams } from "../src/adapters/index.ts";
import { unknownModelInfo } from "../src/index.ts";
import { request, userText } from "./helpers.ts";

const cfg = (id: string, reasoning = false) => ({
  model: id.slice(id.indexOf("/") + 1),
  info: { ...unknownModelInfo(id), reasoning },
});

const convo: Message[] = [
  userText("first question", "u1"),
  { id: "a1", role: "assistant", parts: [{ type: "text", text: "first answer" }] },
  userText("second question", "u2"),
  {
    id: "a2",
    role: "assistant",
    parts: [
      { type: "reasoning", text: "need a file", replay: { provider: "anthropic", signature: "sig" } },
      { type: "toolCall", id: "call.1", name: "read_file", argumentsText: '{"path":"a"}' },
    ],
  },
  {
    id: "t1",
    role: "tool",
    parts: [
      {
        type: "toolResult",
        callId: "call.1",
        name: "read_file",
        content: [{ type: "text", text: "A" }],
        isError: true,
      },
    ],
  },
  {
    id: "u3",
    role: "user",
    parts: [
      { type: "code", language: "js", source: "1+1" },
      { type: "output", text: "2" },
      { type: "error", message: "boom", code: "E1" },
    ],
  },
];

describe("Anthropic request", () => {
  const req: LlmRequest = {
    ...request("anthropic/claude-haiku-4-5", convo),
    system: "You are terse.",
    cache: { system: true, tools: true, lastMessages: 2 },
    maxOutput: 1000,
    reasoning: { budgetTokens: 2048 },
    toolChoice: "required",
  };
  const p = anthropicParams(req, cfg("anthropic/claude-haiku-4-5"));

  it("places cache breakpoints on the system prompt, the last tool and the latest messages", () => {
    expect(p.system).toEqual([
      { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
    ]);
    expect(p.tools?.at(-1)).toMatchObject({ name: "read_file", cache_control: { type: "ephemeral" } });
    const marked = p.messages.flatMap((m, i) =>
      (m.content as { cache_control?: unknown }[]).flatMap((b, j) => (b.cache_control ? [[i, j]] : [])),
    );
    // Last two messages (after merging the tool result into the user turn): one breakpoint each.
    expect(marked).toEqual([
      [p.messages.length - 2, 1],
      [p.messages.length - 1, 3],
    ]);
    expect(JSON.stringify(p).match(/cache_control/g)).toHaveLength(4);
  });

  it("sends no breakpoints unless asked", () => {
    const plain = anthropicParams({ ...req, cache: undefined }, cfg("anthropic/claude-haiku-4-5"));
    expect(JSON.stringify(plain)).not.toContain("cache_control");
  });

  it("maps thinking, tool choice, tool ids and results, and code/output/error parts", () => {
    const p = anthropicParams({ ...req, cache: undefined }, cfg("anthropic/claude-haiku-4-5"));
    expect(p.model).toBe("claude-haiku-4-5");
    expect(p.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(p.max_tokens).toBe(2048 + 4096); // the budget must stay below max_tokens
    expect(p.tool_choice).toEqual({ type: "any" });
    const assistant = p.messages[3]!.content as { type: string }[];
    expect(assistant).toEqual([
      { type: "thinking", thinking: "need a file", signature: "sig" },
      { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a" } },
    ]);
    const user = p.messages[4]!.content as { type: string; text?: string }[];
    expect(user[0]).toMatchObject({ type: "tool_result", tool_use_id: "call_1", is_error: true });
    expect(user.slice(1).map((b) => b.text)).toEqual(["```js\n1+1\n```", "2", "Error (E1): boom"]);
  });
});

describe("OpenAI Responses request", () => {
  it("is stateless and asks for encrypted reasoning on reasoning models", () => {
    const p = responsesParams(
      {
        ...request("openai/gpt-5-mini", convo),
        system: "sys",
        reasoning: { effort: "low" },
        temperature: 0.2,
      },
      cfg("openai/gpt-5-mini", true),
    );
    expect(p).toMatchObject({
      model: "gpt-5-mini",
      instructions: "sys",
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      reasoning: { effort: "low", summary: "auto" },
      parallel_tool_calls: true,
    });
    expect(p.temperature).toBeUndefined(); // reasoning models take no temperature
    const items = p.input as { type?: string; role?: string; call_id?: string; output?: unknown }[];
    expect(items.find((i) => i.type === "function_call")).toMatchObject({
      call_id: "call.1",
      name: "read_file",
    });
    expect(items.find((i) => i.type === "function_call_output")).toMatchObject({
      call_id: "call.1",
      output: "A",
    });
    expect(items.some((i) => i.type === "reasoning")).toBe(false); // Anthropic reasoning is foreign here
  });

  it("does not ask for encrypted reasoning on other models", () => {
    const p = responsesParams({ ...request("openai/gpt-4.1"), temperature: 0.2 }, cfg("openai/gpt-4.1"));
    expect(p.include).toBeUndefined();
    expect(p.reasoning).toBeUndefined();
    expect(p.temperature).toBe(0.2);
  });
});

describe("Chat Completions request", () => {
  it("asks for streamed usage and maps tool calls and results", () => {
    const p = chatParams(
      {
        ...request("openai-compatible/llama", convo),
        system: "sys",
        toolChoice: { name: "read_file" },
        maxOutput: 50,
      },
      cfg("openai-compatible/llama"),
    );
    expect(p.stream_options).toEqual({ include_usage: true });
    expect(p.max_tokens).toBe(50);
    expect(p.tool_choice).toEqual({ type: "function", function: { name: "read_file" } });
    expect(p.messages[0]).toEqual({ role: "system", content: "sys" });
    expect(p.messages).toContainEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call.1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
      ],
    });
    expect(p.messages).toContainEqual({ role: "tool", tool_call_id: "call.1", content: "A" });
  });
});

describe("Gemini request", () => {
  it("turns on thoughts for reasoning models and maps tool choice", () => {
    const p = googleParams(
      { ...request("google/gemini-2.5-flash", convo), reasoning: { budgetTokens: 512 }, toolChoice: "none" },
      cfg("google/gemini-2.5-flash", true),
    );
    expect(p.model).toBe("gemini-2.5-flash");
    expect(p.config?.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 512 });
    expect(p.config?.toolConfig).toEqual({ functionCallingConfig: { mode: "NONE" } });
    expect(p.config?.automaticFunctionCalling).toEqual({ disable: true });
    expect(p.config?.automaticContinuation).toBe(false);
    const contents = p.contents as { role: string; parts: Record<string, unknown>[] }[];
    const response = contents.flatMap((c) => c.parts).find((x) => x.functionResponse);
    expect(response?.functionResponse).toEqual({ id: "call.1", name: "read_file", response: { error: "A" } });
  });
});
