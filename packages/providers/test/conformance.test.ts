// Acceptance 1: the same canonical scenarios through each of the adapters (Codex, Bedrock
// and Vertex included, through their own URL paths and framing), over
// the mock wire server, produce the same normalized events and outcome.
import type { LlmEvent } from "@lash/sansio";
import { Effect, Fiber, Stream } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderKind } from "../src/index.ts";
import { createProvider } from "../src/index.ts";
import type { MockLlmServer, MockReply } from "../src/testing/index.ts";
import { mockProviderOptions, startMockServer } from "../src/testing/index.ts";
import type { NormEvent } from "./helpers.ts";
import { normalize, request, run } from "./helpers.ts";

const models: Record<ProviderKind, string> = {
  anthropic: "anthropic/claude-haiku-4-5",
  openai: "openai/gpt-5-mini",
  "openai-compatible": "openai-compatible/llama3.1",
  google: "google/gemini-2.5-flash",
  codex: "codex/gpt-5-codex",
  bedrock: "bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0",
  "vertex-anthropic": "vertex-anthropic/claude-haiku-4-5@20251001",
};

const keyEnv: Record<ProviderKind, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
  google: "GEMINI_API_KEY",
  codex: "lash login codex",
  bedrock: "AWS_BEARER_TOKEN_BEDROCK",
  "vertex-anthropic": "gcloud auth application-default login",
};

/** The path each provider's requests take (Codex: the ChatGPT backend; the clouds: their own routes). */
const paths: Record<ProviderKind, RegExp> = {
  anthropic: /^\/v1\/messages$/,
  openai: /^\/v1\/responses$/,
  "openai-compatible": /^\/v1\/chat\/completions$/,
  google: /:streamGenerateContent$/,
  codex: /^\/backend-api\/codex\/responses$/,
  bedrock: /^\/model\/us\.anthropic\.claude-haiku-4-5-20251001-v1:0\/invoke-with-response-stream$/,
  "vertex-anthropic":
    /^\/v1\/projects\/mock-project\/locations\/us-east5\/publishers\/anthropic\/models\/claude-haiku-4-5@20251001:streamRawPredict$/,
};

interface Scenario {
  readonly name: string;
  readonly replies: MockReply[];
  readonly events?: NormEvent[];
  readonly error?: { kind: string; retryable: boolean; messageIncludes?: (kind: ProviderKind) => string };
  readonly requests: number;
}

const call = (id: string, path: string) => [
  { type: "toolCallStart", id, name: "read_file" } as const,
  { type: "args", id, text: JSON.stringify({ path }) } as const,
  { type: "toolCallEnd", id } as const,
];

const scenarios: Scenario[] = [
  {
    name: "plain text",
    replies: [{ text: "Hello there." }],
    events: [
      { type: "text", text: "Hello there." },
      { type: "finish", reason: "stop" },
    ],
    requests: 1,
  },
  {
    name: "streamed text",
    replies: [{ text: "The quick brown fox — jumps over the lazy dog 🦊", textChunks: 7 }],
    events: [
      { type: "text", text: "The quick brown fox — jumps over the lazy dog 🦊" },
      { type: "finish", reason: "stop" },
    ],
    requests: 1,
  },
  {
    name: "one tool call",
    replies: [{ toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.txt" }, chunks: 3 }] }],
    events: [...call("call_1", "a.txt"), { type: "finish", reason: "toolUse" }],
    requests: 1,
  },
  {
    name: "parallel tool calls",
    replies: [
      {
        text: "Reading both.",
        toolCalls: [
          { id: "call_a", name: "read_file", arguments: { path: "a.txt" }, chunks: 2 },
          { id: "call_b", name: "read_file", arguments: { path: "b.txt" }, chunks: 4 },
        ],
      },
    ],
    events: [
      { type: "text", text: "Reading both." },
      ...call("call_a", "a.txt"),
      ...call("call_b", "b.txt"),
      { type: "finish", reason: "toolUse" },
    ],
    requests: 1,
  },
  {
    name: "reasoning then tool call",
    replies: [
      {
        reasoning: {
          text: "The user wants a.txt, so I read it.",
          chunks: 4,
          signature: "sig-1",
          encrypted: "enc-1",
        },
        toolCalls: [{ id: "call_r", name: "read_file", arguments: { path: "a.txt" }, signature: "fc-sig" }],
        usage: { input: 120, output: 40, reasoning: 25 },
      },
    ],
    events: [
      { type: "reasoning", text: "The user wants a.txt, so I read it." },
      { type: "reasoningEnd" },
      ...call("call_r", "a.txt"),
      { type: "usage", usage: { input: 120, output: 40, reasoning: 25 } },
      { type: "finish", reason: "toolUse" },
    ],
    requests: 1,
  },
  {
    name: "output cap",
    replies: [{ text: "This answer was cut", finish: "outputLimit", usage: { input: 10, output: 5 } }],
    events: [
      { type: "text", text: "This answer was cut" },
      { type: "usage", usage: { input: 10, output: 5 } },
      { type: "finish", reason: "outputLimit" },
    ],
    requests: 1,
  },
  {
    name: "content filter",
    replies: [{ finish: "contentFilter" }],
    events: [{ type: "finish", reason: "contentFilter" }],
    requests: 1,
  },
  {
    name: "cache-hit usage",
    replies: [{ text: "cached", usage: { input: 1000, output: 12, cacheRead: 800 } }],
    events: [
      { type: "text", text: "cached" },
      { type: "usage", usage: { input: 1000, output: 12, cacheRead: 800 } },
      { type: "finish", reason: "stop" },
    ],
    requests: 1,
  },
  {
    name: "context-overflow error",
    replies: [{ error: { code: "contextOverflow" } }],
    error: { kind: "contextOverflow", retryable: false },
    requests: 1,
  },
  {
    name: "429 then success",
    replies: [{ error: { code: "rateLimit", retryAfter: 0 } }, { text: "after the wait" }],
    events: [
      { type: "retry", kind: "rateLimited" },
      { type: "attemptReset" },
      { type: "text", text: "after the wait" },
      { type: "finish", reason: "stop" },
    ],
    requests: 2,
  },
  {
    name: "reset mid-stream then success",
    replies: [
      { text: "partial answer that is lost", textChunks: 6, resetAfterChunks: 4 },
      { text: "complete answer", textChunks: 2 },
    ],
    events: [
      { type: "retry", kind: "network" },
      { type: "attemptReset" },
      { type: "text", text: "complete answer" },
      { type: "finish", reason: "stop" },
    ],
    requests: 2,
  },
  {
    name: "401",
    replies: [{ error: { code: "auth" } }],
    error: { kind: "auth", retryable: false, messageIncludes: (k) => keyEnv[k] },
    requests: 1,
  },
];

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

describe.each(Object.keys(models) as ProviderKind[])("conformance: %s", (kind) => {
  it.each(scenarios)("$name", async (s) => {
    const provider = createProvider(models[kind], {
      ...mockProviderOptions(server, kind),
      env: {},
      retry: { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 },
    });
    const before = server.requests.length;
    server.enqueue(...s.replies);
    const out = await run(provider, request(models[kind]));
    expect(server.requests.length - before).toBe(s.requests);
    const sent = server.requests[before]!;
    // Adapters send only the model part of `provider/model`.
    expect(sent.model).toBe(models[kind].slice(models[kind].indexOf("/") + 1));
    expect(sent.path).toMatch(paths[kind]);
    expect(sent.stream).toBe(true);
    if (s.error) {
      expect(out.error?.kind).toBe(s.error.kind);
      expect(out.error?.retryable).toBe(s.error.retryable);
      expect(out.error?.provider).toBe(kind);
      if (s.error.messageIncludes) expect(out.error?.message).toContain(s.error.messageIncludes(kind));
    } else {
      expect(out.error).toBeUndefined();
      expect(normalize(out.events)).toEqual(s.events);
    }
  });
});

describe.each(Object.keys(models) as ProviderKind[])("cancellation: %s", (kind) => {
  it("interrupting the stream mid-answer closes the HTTP request", async () => {
    const provider = createProvider(models[kind], {
      ...mockProviderOptions(server, kind),
      env: {},
      retry: false,
    });
    server.enqueue({ text: "one two three four five six", textChunks: 6, hangAfterChunks: 6 });
    const events: LlmEvent[] = [];
    let sawText: () => void = () => {};
    const textSeen = new Promise<void>((resolve) => {
      sawText = resolve;
    });
    const fiber = Effect.runFork(
      Stream.runForEach(provider.stream(request(models[kind])), (e) =>
        Effect.sync(() => {
          events.push(e);
          if (e.type === "textDelta") sawText();
        }),
      ),
    );
    await textSeen;
    expect(server.inFlight).toBe(1);
    await Effect.runPromise(Fiber.interrupt(fiber));
    // the hung response ends only when the client aborts its request
    await server.waitForIdle();
    expect(server.inFlight).toBe(0);
    expect(events.some((e) => e.type === "finish")).toBe(false);
  });
});
