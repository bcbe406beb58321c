// Full lash turns: LashRuntime + the real OpenAI-compatible adapter against the mock wire server,
// with MCP servers running as child processes.
import { IdGenerator, LashRuntime, LlmProviders, MemoryStore, ModelCatalog } from "@lash/core";
import { createProvider } from "@lash/providers";
import {
  type MockLlmServer,
  type MockReply,
  mockProviderOptions,
  startMockServer,
} from "@lash/providers/testing";
import { Context, Effect, Layer, type Scope } from "effect";
import { describe, expect, it } from "vitest";
import {
  McpManager,
  type McpManagerOptions,
  type McpManagerShape,
  mcpPlugin,
  parseMcpConfig,
} from "../src/index.ts";
import { everythingServer, fixtureServer } from "./helpers.ts";

type Rt = typeof LashRuntime.Service;
interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
}
interface ChatBody {
  readonly tools?: readonly { readonly function: { readonly name: string; readonly parameters: unknown } }[];
  readonly messages: readonly ChatMessage[];
}

const body = (server: MockLlmServer, i: number): ChatBody => server.requests[i]?.body as ChatBody;
const toolNames = (server: MockLlmServer, i: number) =>
  (body(server, i).tools ?? []).map((t) => t.function.name);
const contentText = (c: unknown): string =>
  typeof c === "string"
    ? c
    : Array.isArray(c)
      ? c.map((p: { text?: string }) => p.text ?? "").join("")
      : JSON.stringify(c);
/** The tool result the model received for `callId`, as text. */
const toolResult = (server: MockLlmServer, i: number, callId: string): string => {
  const m = body(server, i).messages.find((x) => x.role === "tool" && x.tool_call_id === callId);
  if (!m) throw new Error(`request ${i} carries no tool result for ${callId}`);
  return contentText(m.content);
};

const call = (id: string, name: string, args: Record<string, unknown>): MockReply => ({
  toolCalls: [{ id, name, arguments: args }],
});

/** A runtime with the MCP plugin, an MCP manager and a mock LLM server, all closed with the scope. */
const setup = (
  mcpServers: Record<string, unknown>,
  replies: MockReply[],
  options: McpManagerOptions = {},
): Effect.Effect<{ rt: Rt; llm: MockLlmServer; manager: McpManagerShape }, never, Scope.Scope> =>
  Effect.gen(function* () {
    const llm = yield* Effect.acquireRelease(
      Effect.promise(() => startMockServer({ replies })),
      (s) => Effect.promise(() => s.close()),
    );
    const provider = createProvider("openai-compatible/mock", mockProviderOptions(llm, "openai-chat"));
    const manager = yield* McpManager.make(parseMcpConfig({ mcpServers }), options);
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
    return { rt, llm, manager };
  });

const run = <A>(body: Effect.Effect<A, unknown, Scope.Scope>) => Effect.runPromise(Effect.scoped(body));

describe("MCP tools in a full lash turn", () => {
  it("server-everything over stdio: the model calls echo and get-sum and reads their results", () =>
    run(
      Effect.gen(function* () {
        const { rt, llm, manager } = yield* setup({ everything: everythingServer() }, [
          {
            toolCalls: [
              { id: "call_echo", name: "mcp__everything__echo", arguments: { message: "hello lash" } },
              { id: "call_sum", name: "mcp__everything__get-sum", arguments: { a: 2, b: 3 } },
            ],
          },
          { text: "Echoed and added." },
        ]);
        const s = yield* rt.createSession({ model: "openai-compatible/mock" });
        const r = yield* rt.turn(s.id, { text: "echo and add please" });
        expect(r.text).toBe("Echoed and added.");
        expect(r.toolCalls).toBe(2);

        const first = body(llm, 0);
        const echo = first.tools?.find((t) => t.function.name === "mcp__everything__echo");
        expect(echo?.function.parameters).toMatchObject({
          type: "object",
          properties: { message: { type: "string" } },
          required: ["message"],
        });
        expect(toolNames(llm, 0)).toContain("mcp__everything__get-sum");
        expect(toolResult(llm, 1, "call_echo")).toBe("Echo: hello lash");
        expect(toolResult(llm, 1, "call_sum")).toBe("The sum of 2 and 3 is 5.");
        expect(manager.status()[0]).toMatchObject({ name: "everything", state: "ready" });
        expect(rt.pluginStatus().mcp).toEqual({ servers: manager.status() });
      }),
    ));

  it("a server that never answers initialize does not hold the turn; the status says why", () =>
    run(
      Effect.gen(function* () {
        const { rt, llm, manager } = yield* setup(
          {
            silent: { ...fixtureServer("silent-server.ts"), startupTimeoutMs: 1500 },
            t: fixtureServer("stdio-server.ts"),
          },
          [call("c1", "mcp__t__echo", { text: "still here" }), { text: "ok" }],
          { startupWaitMs: 200, backoff: { maxAttempts: 1 } },
        );
        // wait for the healthy server only: the silent one may still be starting when the turn begins
        yield* manager.awaitSettled({ servers: ["t"] });
        const s = yield* rt.createSession({ model: "openai-compatible/mock" });
        const r = yield* rt.turn(s.id, { text: "go" });
        expect(r.text).toBe("ok");
        expect(toolNames(llm, 0).some((n) => n.startsWith("mcp__silent__"))).toBe(false);
        expect(toolNames(llm, 0)).toContain("mcp__t__echo");
        expect(toolResult(llm, 1, "c1")).toBe("stdio echo: still here");

        yield* manager.awaitSettled();
        const status = (
          rt.pluginStatus().mcp as { servers: { name: string; state: string; reason?: string }[] }
        ).servers;
        expect(status.find((x) => x.name === "silent")).toMatchObject({
          state: "failed",
          reason: expect.stringMatching(/no answer to initialize/),
        });
      }),
    ));

  it("tools/list_changed: the next model request carries the new tool", () =>
    run(
      Effect.gen(function* () {
        const { rt, llm, manager } = yield* setup({ t: fixtureServer("stdio-server.ts") }, [
          call("c1", "mcp__t__add_tool", { name: "late" }),
          call("c2", "mcp__t__late", {}),
          { text: "done" },
        ]);
        yield* manager.awaitSettled();
        const s = yield* rt.createSession({ model: "openai-compatible/mock" });
        const r = yield* rt.turn(s.id, { text: "add a tool and use it" });
        expect(r.text).toBe("done");
        expect(toolNames(llm, 0)).not.toContain("mcp__t__late");
        expect(toolNames(llm, 1)).toContain("mcp__t__late");
        expect(toolResult(llm, 1, "c1")).toBe("added late");
        expect(toolResult(llm, 2, "c2")).toBe("hello from late");
      }),
    ));

  it("a server that exits mid-call: the model gets an error result, the next call runs on a restarted server", () =>
    run(
      Effect.gen(function* () {
        const { rt, llm, manager } = yield* setup({ t: fixtureServer("stdio-server.ts") }, [
          call("c1", "mcp__t__crash", {}),
          { text: "it crashed" },
          call("c2", "mcp__t__pid", {}),
          { text: "back" },
        ]);
        yield* manager.awaitSettled();
        const firstPid = manager.status()[0]?.pid;
        const s = yield* rt.createSession({ model: "openai-compatible/mock" });
        const r1 = yield* rt.turn(s.id, { text: "crash it" });
        expect(r1.text).toBe("it crashed");
        const crash = r1.messages.flatMap((m) => m.parts).find((p) => p.type === "toolResult");
        expect(crash).toMatchObject({ type: "toolResult", isError: true });
        expect(toolResult(llm, 1, "c1")).toMatch(/MCP server "t" failed during the call to "crash"/);

        const r2 = yield* rt.turn(s.id, { text: "again" });
        expect(r2.text).toBe("back");
        const pid = Number(toolResult(llm, 3, "c2"));
        expect(pid).toBeGreaterThan(0);
        expect(pid).not.toBe(firstPid);
        expect(manager.status()[0]).toMatchObject({ state: "ready", pid, restarts: 1 });
      }),
    ));

  it("isError results and images reach the model", () =>
    run(
      Effect.gen(function* () {
        const { rt, llm, manager } = yield* setup({ t: fixtureServer("stdio-server.ts") }, [
          {
            toolCalls: [
              { id: "c1", name: "mcp__t__fail", arguments: {} },
              { id: "c2", name: "mcp__t__image", arguments: {} },
            ],
          },
          { text: "seen" },
        ]);
        yield* manager.awaitSettled();
        const s = yield* rt.createSession({ model: "openai-compatible/mock" });
        const r = yield* rt.turn(s.id, { text: "go" });
        const results = r.messages.flatMap((m) => m.parts).filter((p) => p.type === "toolResult");
        expect(results).toMatchObject([
          { callId: "c1", isError: true, content: [{ type: "text", text: "the widget is broken" }] },
          {
            callId: "c2",
            isError: false,
            content: [
              { type: "text", text: "here it is" },
              { type: "attachment", mediaType: "image/png" },
              {},
              {},
            ],
          },
        ]);
        expect(toolResult(llm, 1, "c1")).toContain("the widget is broken");
        // Chat Completions tool messages are text-only: the adapter sends the image in a user message
        expect(JSON.stringify(body(llm, 1).messages)).toContain("data:image/png;base64,");
      }),
    ));
});
