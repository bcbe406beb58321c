// Each adapter carries the provider's response id and its own finish reason on `finish`
// (for traces: gen_ai.response.id / gen_ai.response.finish_reasons), over the mock wire server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderKind } from "../src/index.ts";
import { createProvider } from "../src/index.ts";
import type { MockLlmServer } from "../src/testing/index.ts";
import { mockProviderOptions, startMockServer } from "../src/testing/index.ts";
import { request, run } from "./helpers.ts";

const cases: Record<ProviderKind, { model: string; id: RegExp; toolReason?: string; stopReason?: string }> = {
  anthropic: {
    model: "anthropic/claude-haiku-4-5",
    id: /^msg_mock_/,
    toolReason: "tool_use",
    stopReason: "end_turn",
  },
  // the Responses API has no finish reason: traces map lash's reason to OpenAI's words
  openai: { model: "openai/gpt-5-mini", id: /^resp_mock_/ },
  "openai-compatible": {
    model: "openai-compatible/llama3.1",
    id: /^chatcmpl-mock-/,
    toolReason: "tool_calls",
    stopReason: "stop",
  },
  google: { model: "google/gemini-2.5-flash", id: /^gresp_mock_/, toolReason: "STOP", stopReason: "STOP" },
  codex: { model: "codex/gpt-5-codex", id: /^resp_mock_/ },
  bedrock: {
    model: "bedrock/anthropic.claude-haiku-4-5-20251001-v1:0",
    id: /^msg_mock_/,
    toolReason: "tool_use",
    stopReason: "end_turn",
  },
  "vertex-anthropic": {
    model: "vertex-anthropic/claude-haiku-4-5@20251001",
    id: /^msg_mock_/,
    toolReason: "tool_use",
    stopReason: "end_turn",
  },
};

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

describe.each(Object.keys(cases) as ProviderKind[])("response id and provider reason: %s", (kind) => {
  it("on the finish event of a tool call and of a text answer", async () => {
    const c = cases[kind];
    const provider = createProvider(c.model, { ...mockProviderOptions(server, kind), env: {}, retry: false });
    server.enqueue(
      { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.txt" } }] },
      { text: "Done." },
    );
    const finishes = [];
    for (let i = 0; i < 2; i++) {
      const out = await run(provider, request(c.model));
      expect(out.error).toBeUndefined();
      finishes.push(out.events.find((e) => e.type === "finish"));
    }
    const [tool, text] = finishes as { reason: string; responseId?: string; providerReason?: string }[];
    expect(tool!.reason).toBe("toolUse");
    expect(text!.reason).toBe("stop");
    expect(tool!.responseId).toMatch(c.id);
    expect(text!.responseId).toMatch(c.id);
    expect(tool!.responseId).not.toBe(text!.responseId);
    expect(tool!.providerReason).toBe(c.toolReason);
    expect(text!.providerReason).toBe(c.stopReason);
  });
});
