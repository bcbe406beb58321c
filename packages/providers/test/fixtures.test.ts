// Acceptance 5: every recorded stream in test/fixtures/provider-streams, served through
// the mock wire server, gives the right normalized events.
import type { LlmResponse } from "@lash/sansio";
import { accumulate } from "@lash/sansio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockLlmServer } from "../src/testing/index.ts";
import { mockProvider, startMockServer } from "../src/testing/index.ts";
import type { Fixture } from "./fixtures-util.ts";
import { loadFixtures } from "./fixtures-util.ts";
import type { Outcome } from "./helpers.ts";
import { request, run } from "./helpers.ts";

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

async function play(f: Fixture): Promise<{ outcomes: Outcome[]; responses: LlmResponse[] }> {
  const outcomes: Outcome[] = [];
  for (const reply of f.replies) {
    server.enqueue(reply);
    outcomes.push(await run(mockProvider(server, f.format), request("x/mock-model")));
  }
  return { outcomes, responses: outcomes.map((o) => accumulate(o.events)) };
}

const text = (r: LlmResponse): string => r.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
const reasoning = (r: LlmResponse) => r.parts.filter((p) => p.type === "reasoning");
const calls = (r: LlmResponse) => r.parts.filter((p) => p.type === "toolCall");

type Check = (r: LlmResponse[], o: Outcome[]) => void;

const checks: Record<string, Check> = {
  "anthropic-clear-thinking.1.chunks.txt": ([r]) => {
    const [th] = reasoning(r!);
    expect(th?.text).toBe("The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185");
    expect(th?.replay?.provider).toBe("anthropic");
    expect(th?.replay?.signature).toMatch(/^EvQBCkYICxgCKkAxhD4N.*BgB$/);
    expect(text(r!)).toBe("925 ÷ 5 = 185");
    expect(r!.usage).toEqual({ input: 69, output: 53, cacheRead: 0, cacheWrite: 0 });
    expect(r!.stopReason).toBe("stop");
  },
  "anthropic-json-tool.1.chunks.txt": ([r]) => {
    const [c] = calls(r!);
    expect(c).toMatchObject({ id: "toolu_01KFbKqPYSuAKujiL6mTfzYA", name: "json" });
    expect(JSON.parse(c!.argumentsText)).toEqual({
      elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }],
    });
    expect(r!.usage).toEqual({ input: 849, output: 47, cacheRead: 0, cacheWrite: 0 });
    expect(r!.stopReason).toBe("toolUse");
  },
  "anthropic-message-delta-input-tokens.chunks.txt": ([r]) => {
    expect(text(r!)).toBe("pong");
    // message_delta's cumulative input count wins over message_start's.
    expect(r!.usage).toEqual({ input: 61, output: 2 });
    expect(r!.stopReason).toBe("stop");
  },
  "anthropic-refusal.chunks.txt": ([r]) => {
    expect(r!.parts).toEqual([]);
    expect(r!.stopReason).toBe("contentFilter");
    expect(r!.errorMessage).toContain("violative cyber content");
    expect(r!.usage).toEqual({ input: 18, output: 5, cacheRead: 0, cacheWrite: 0 });
  },
  "anthropic-text.chunks.txt": ([r]) => {
    expect(text(r!)).toBe(
      "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
    );
    expect(r!.usage).toEqual({ input: 12, output: 30, cacheRead: 0, cacheWrite: 0 });
    expect(r!.stopReason).toBe("stop");
  },
  "anthropic-tool-no-args.chunks.txt": ([r]) => {
    expect(text(r!)).toBe("I'll update the issue list for you.");
    expect(calls(r!)).toEqual([
      {
        type: "toolCall",
        id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP",
        name: "updateIssueList",
        argumentsText: "{}",
      },
    ]);
    expect(r!.stopReason).toBe("toolUse");
  },
  "duplicate-message-start.chunks.txt": ([r], [o]) => {
    expect(o!.error).toBeUndefined();
    expect(text(r!)).toBe("Hello, World!");
    expect(r!.usage).toEqual({ input: 17, output: 227 });
    expect(r!.stopReason).toBe("stop");
  },
  "google-reasoning-gemini3.chunks.txt": ([r]) => {
    expect(text(r!)).toBe('There are **3** "r"s in strawberry.\n\nSt**r**awbe**rr**y');
    const [sig] = reasoning(r!);
    expect(sig?.text).toBe("");
    expect(sig?.replay?.provider).toBe("google");
    expect(sig?.replay?.signature).toMatch(/^EpAICo0IAb4/);
    expect(r!.usage).toEqual({ input: 9, output: 325, reasoning: 302 });
    expect(r!.stopReason).toBe("stop");
  },
  "google-reasoning.chunks.txt": ([r]) => {
    expect(text(r!)).toBe(
      'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.',
    );
    expect(reasoning(r!)[0]?.replay?.signature).toMatch(/^Eo0HCooHAb4/);
    expect(r!.usage).toEqual({ input: 9, output: 285, reasoning: 256 });
  },
  "google-stream-no-args-tool-call.chunks.txt": ([r]) => {
    const [th] = reasoning(r!);
    expect(th?.text).toMatch(/^\*\*Processing User Requests\*\*/);
    const cs = calls(r!);
    expect(cs.map((c) => [c.name, JSON.parse(c.argumentsText)])).toEqual([
      ["read_theme", {}],
      ["read_screen", { id: "A" }],
      ["read_screen", { id: "B" }],
      ["read_screen", { id: "C" }],
    ]);
    expect(new Set(cs.map((c) => c.id)).size).toBe(4);
    // The thought signature rides on the first function call.
    expect(cs[0]!.replay).toMatchObject({
      provider: "google",
      signature: expect.stringMatching(/^AY89a18a8/),
    });
    expect(cs[1]!.replay).toBeUndefined();
    expect(r!.usage).toEqual({ input: 249, output: 241, reasoning: 183 });
    expect(r!.stopReason).toBe("toolUse");
  },
  "google-stream-tool-call-arguments.chunks.txt": ([r]) => {
    const cs = calls(r!);
    expect(cs.map((c) => [c.name, JSON.parse(c.argumentsText)])).toEqual([
      ["getWeather", { location: "Boston" }],
      ["getWeather", { location: "San Francisco" }],
    ]);
    expect(cs[0]!.replay?.signature).toMatch(/^CiMBjz1rX25/);
    expect(r!.usage).toEqual({ input: 26, output: 155, reasoning: 132 });
    expect(r!.stopReason).toBe("toolUse");
  },
  "google-text.chunks.txt": ([r]) => {
    expect(text(r!)).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
    expect(reasoning(r!)[0]?.replay?.signature).toMatch(/^EqsFCqgFAb4/);
    expect(r!.usage).toEqual({ input: 9, output: 208, reasoning: 185 });
  },
  "google-tool-call-gemini3.chunks.txt": ([r]) => {
    const [c] = calls(r!);
    expect(c?.name).toBe("weather");
    expect(JSON.parse(c!.argumentsText)).toEqual({ location: "San Francisco" });
    expect(c?.replay?.signature).toMatch(/^EpEgCo4gAb4/);
    expect(r!.usage).toEqual({ input: 29, output: 819, reasoning: 804 });
    expect(r!.stopReason).toBe("toolUse");
  },
  "google-tool-call.chunks.txt": ([r]) => {
    const [c] = calls(r!);
    expect(JSON.parse(c!.argumentsText)).toEqual({ location: "San Francisco" });
    expect(c?.replay?.signature).toMatch(/^EqUCCqICAb4/);
    expect(r!.usage).toEqual({ input: 29, output: 60, reasoning: 45 });
  },
  "azure-model-router.1.chunks.txt": ([r]) => {
    expect(text(r!)).toBe("Capital of Denmark.");
    expect(r!.usage).toEqual({ input: 15, output: 78, reasoning: 64, cacheRead: 0 });
    expect(r!.stopReason).toBe("stop");
  },
  "openai-text.chunks.txt": ([r]) => {
    const t = text(r!);
    expect(t.startsWith("**Holiday Name:** Harmony Day\n\n**Date:**")).toBe(true);
    expect(t.endsWith(" respect.")).toBe(true);
    expect(r!.usage).toEqual({ input: 16, output: 300, reasoning: 0, cacheRead: 0 });
    expect(r!.stopReason).toBe("stop");
  },
  "anthropic-fallback-tool-call.sse": ([r]) => {
    expect(text(r!)).toBe("Reading it.");
    expect(calls(r!)).toEqual([
      { type: "toolCall", id: "toolu_sanitized", name: "read_file", argumentsText: '{"path": "a.txt"}' },
    ]);
    // No usage chunk: usage stays absent, not zero.
    expect(r!.usage).toEqual({});
    expect(r!.stopReason).toBe("toolUse");
  },
  "xai-text.chunks.txt": ([r]) => {
    const [th] = reasoning(r!);
    expect(th?.text).toMatch(/^First, the user said: "Say a single word\."/);
    expect(th?.replay).toBeUndefined();
    expect(text(r!)).toBe("Grok");
    // xAI leaves reasoning out of completion_tokens (total = prompt + completion + reasoning).
    expect(r!.usage).toEqual({ input: 12, output: 342, reasoning: 340, cacheRead: 11 });
  },
  "xai-tool-call.chunks.txt": ([r]) => {
    expect(reasoning(r!)[0]?.text).toMatch(/^First, the user is asking about the weather/);
    expect(calls(r!)).toEqual([
      {
        type: "toolCall",
        id: "call_79382389",
        name: "weather",
        argumentsText: '{"location":"San Francisco"}',
      },
    ]);
    expect(r!.usage).toEqual({ input: 307, output: 253, reasoning: 227, cacheRead: 306 });
    expect(r!.stopReason).toBe("toolUse");
  },
  "openai-error.1.chunks.txt": (_r, [o]) => {
    expect(o!.error?.kind).toBe("rateLimited");
    expect(o!.error?.retryable).toBe(false);
    expect(o!.error?.message).toContain("exceeded your current quota");
    expect(o!.error?.message).toContain("billing");
  },
  "openai-phase.1.chunks.txt": ([r]) => {
    const t = text(r!);
    // Commentary and final answer, separated; the done events fill in what the deltas left out.
    expect(t.startsWith("Got it — I’ll quickly check reliable")).toBe(true);
    expect(t).toContain(
      "with links.\n\nHere are a few **AI headlines for today (Wednesday, February 25, 2026)**",
    );
    expect(r!.usage).toEqual({ input: 7112, output: 463, reasoning: 64, cacheRead: 3072 });
    expect(r!.stopReason).toBe("stop");
  },
  "openai-reasoning-encrypted-content.1.chunks.txt": (rs) => {
    expect(rs).toHaveLength(4);
    const [first, second, third, last] = rs;
    const [th] = reasoning(first!);
    expect(th?.text).toMatch(/^\*\*Calculating step-by-step using calculator\*\*/);
    expect(th?.replay).toMatchObject({
      provider: "openai",
      itemId: "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9",
      // The done item's encrypted content (not the added item's) is kept.
      encrypted: expect.stringMatching(/^gAAAAABpPDIVOKrsHNZ0/),
    });
    expect(calls(first!).map((c) => [c.id, c.argumentsText])).toEqual([
      ["call_AB6AaRZ1FYZB2RwS6A5vbdqn", '{"a":12,"b":7,"op":"add"}'],
    ]);
    expect(first!.usage).toEqual({ input: 134, output: 28, reasoning: 0, cacheRead: 0 });
    expect(JSON.parse(calls(second!)[0]!.argumentsText)).toEqual({ a: 19, b: 3, op: "multiply" });
    expect(JSON.parse(calls(third!)[0]!.argumentsText)).toEqual({ a: 57, b: 10, op: "multiply" });
    expect(text(last!)).toBe("The final result is **570**.");
    expect(last!.stopReason).toBe("stop");
  },
};

const fixtures = loadFixtures();

describe("recorded provider streams", () => {
  it("finds every fixture file and has a check for each", () => {
    expect(fixtures.length).toBe(22);
    for (const f of fixtures) expect(Object.keys(checks)).toContain(f.file);
  });

  it.each(fixtures.map((f) => [`${f.dir}/${f.file}`, f] as const))("%s", async (_name, f) => {
    const { outcomes, responses } = await play(f);
    if (f.file !== "openai-error.1.chunks.txt") for (const o of outcomes) expect(o.error).toBeUndefined();
    checks[f.file]!(responses, outcomes);
  });
});
