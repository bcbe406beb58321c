// Arguments to an MCP tool are checked against the schema the server lists, with a real
// JSON Schema validator: server-everything's gzip-file-as-resource declares `data` as
// `format: "uri"` and `outputType` as an enum. The bad call never reaches the server;
// the model reads which argument is wrong and why, and its corrected call goes through.
// (Before @cfworker/json-schema, `format` was ignored and "README.md" reached the server.)
import { IdGenerator, LashRuntime, LlmProviders, MemoryStore, ModelCatalog } from "@lash/core";
import { createProvider } from "@lash/providers";
import { type MockReply, mockProviderOptions, startMockServer } from "@lash/providers/testing";
import { Context, Effect, Layer } from "effect";
import { describe, expect, it } from "vitest";
import { McpManager, mcpPlugin, parseMcpConfig } from "../src/index.ts";
import { everythingServer } from "./helpers.ts";

interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
}

const text = (c: unknown): string =>
  typeof c === "string" ? c : Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? "").join("") : "";

describe("MCP tool arguments are validated against the server's schema", () => {
  it("a non-URI `data` and an unknown `outputType` become one readable line each; the fixed call runs", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const replies: MockReply[] = [
            {
              toolCalls: [
                {
                  id: "call_bad",
                  name: "mcp__everything__gzip-file-as-resource",
                  arguments: { name: "a.gz", data: "README.md", outputType: "link" },
                },
              ],
            },
            {
              toolCalls: [
                {
                  id: "call_good",
                  name: "mcp__everything__gzip-file-as-resource",
                  arguments: {
                    name: "a.gz",
                    data: "data:text/plain;base64,aGVsbG8=",
                    outputType: "resource",
                  },
                },
              ],
            },
            { text: "done" },
          ];
          const llm = yield* Effect.acquireRelease(
            Effect.promise(() => startMockServer({ replies })),
            (s) => Effect.promise(() => s.close()),
          );
          const provider = createProvider("openai-compatible/mock", mockProviderOptions(llm, "openai-chat"));
          const manager = yield* McpManager.make(
            parseMcpConfig({ mcpServers: { everything: everythingServer() } }),
          );
          const layer = LashRuntime.layer({ plugins: [mcpPlugin(manager)] }).pipe(
            Layer.provide(
              Layer.mergeAll(
                MemoryStore,
                LlmProviders.single(provider),
                IdGenerator.seeded(),
                ModelCatalog.fromEntries([provider.info]),
              ),
            ),
          );
          const rt = Context.get(yield* Layer.build(layer), LashRuntime);
          const s = yield* rt.createSession({ model: "openai-compatible/mock" });
          const r = yield* rt.turn(s.id, { text: "compress it" });
          expect(r.text).toBe("done");

          const result = (i: number, id: string) => {
            const messages = (llm.requests[i]!.body as { messages: ChatMessage[] }).messages;
            return text(messages.find((m) => m.role === "tool" && m.tool_call_id === id)?.content);
          };
          const bad = result(1, "call_bad");
          expect(bad).toContain('/data: must be a valid uri (got "README.md")');
          expect(bad).toContain('/outputType: must be one of "resourceLink", "resource", got "link"');
          const good = result(2, "call_good");
          expect(good).not.toContain("must be");
          expect(good).toContain("application/gzip");
        }),
      ),
    ));
});
