// Runnable without keys: `pnpm exec node packages/providers/examples/quickstart.ts`.
// Starts the mock wire server, points the real Anthropic SDK at it, and streams a turn
// that calls a tool, then prices the call from the catalog.

import { createProvider, ModelCatalog } from "@lash/providers";
import { mockProviderOptions, startMockServer } from "@lash/providers/testing";
import { accumulate, type LlmEvent } from "@lash/sansio";
import { Effect, Stream } from "effect";

const server = await startMockServer({
  replies: [
    { error: { code: "rateLimit", retryAfter: 0 } }, // retried by the retry layer
    {
      reasoning: { text: "The user wants the file.", signature: "sig" },
      text: "Let me read it.",
      textChunks: 3,
      toolCalls: [{ name: "read_file", arguments: { path: "README.md" }, chunks: 2 }],
      usage: { input: 1200, output: 80, cacheRead: 1000, reasoning: 20 },
    },
  ],
});

const provider = createProvider("anthropic/claude-haiku-4-5", mockProviderOptions(server, "anthropic"));
const events: LlmEvent[] = [];
await Effect.runPromise(
  Stream.runForEach(
    provider.stream({
      model: "anthropic/claude-haiku-4-5",
      system: "You are a helpful assistant.",
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "What is in README.md?" }] }],
      tools: [
        {
          name: "read_file",
          description: "Read a file",
          inputSchema: { type: "object", properties: { path: { type: "string" } } },
        },
      ],
      cache: { system: true, tools: true, lastMessages: 1 },
    }),
    (e) => Effect.sync(() => events.push(e)),
  ),
);

const response = accumulate(events);
console.log(events.map((e) => e.type).join(" "));
console.log(response.stopReason, JSON.stringify(response.parts));
console.log(
  "usage",
  response.usage,
  "cost $",
  ModelCatalog.default().costOf(provider.info.id, response.usage),
);
console.log("requests seen by the mock:", server.requests.length);
await server.close();
