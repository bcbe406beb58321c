// Promise tools (`defineTool`) are supervised without a forked fiber (dispatch.ts
// `supervisedPromise`): the same timeout, cancel, concurrency and failure outcomes as an
// Effect tool's, and a tool whose `execute` was wrapped still runs the wrapper.
import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect } from "effect";
import { defineTool, type Plugin, type ToolDefinition, ToolFailure, textOutput } from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

const toolsPlugin = (...tools: ToolDefinition[]): Plugin => ({ name: "test-tools", tools });
const resultParts = (provider: ReturnType<typeof scriptedProvider>) =>
  provider.requests[1]!.messages.at(-1)!.parts.map((p) => (p.type === "toolResult" ? p : undefined));

describe("promise tools (defineTool), supervised without a fiber", () => {
  it.live("a promise tool past its timeout becomes the timeout error, and its signal is aborted", () => {
    let signal: AbortSignal | undefined;
    const hang = defineTool<Record<string, never>>({
      name: "hang",
      description: "never settles",
      inputSchema: { type: "object" },
      timeoutMs: 50,
      run: (_args, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
    });
    const provider = scriptedProvider([callTools({ id: "h", name: "hang", args: {} }), say("ok")]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          const part = resultParts(provider)[0];
          expect(part).toMatchObject({ type: "toolResult", isError: true });
          expect(JSON.stringify(part)).toContain("hang timed out after 50 ms and was stopped.");
          expect(signal?.aborted).toBe(true);
        }),
      { plugins: [toolsPlugin(hang)] },
    );
  });

  it.live("rejections: a ToolFailure keeps its message, anything else is an execution failure", () => {
    const fails = defineTool<Record<string, never>>({
      name: "fails",
      description: "rejects with a ToolFailure",
      inputSchema: { type: "object" },
      run: async () => {
        throw new ToolFailure({ class: "external", message: "upstream said no" });
      },
    });
    const throws = defineTool<Record<string, never>>({
      name: "throws",
      description: "throws synchronously",
      inputSchema: { type: "object" },
      run: () => {
        throw new Error("boom before any promise");
      },
    });
    const provider = scriptedProvider([
      callTools({ id: "f", name: "fails", args: {} }, { id: "t", name: "throws", args: {} }),
      say("ok"),
    ]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          const [f, t] = resultParts(provider);
          expect(f).toMatchObject({ isError: true, content: [{ type: "text", text: "upstream said no" }] });
          expect(t).toMatchObject({
            isError: true,
            content: [{ type: "text", text: "boom before any promise" }],
          });
        }),
      { plugins: [toolsPlugin(fails, throws)] },
    );
  });

  it.live("parallel promise calls run at once: each waits for all three to have started", () => {
    let started = 0;
    let release!: () => void;
    const all = new Promise<void>((r) => {
      release = r;
    });
    const gate = defineTool<{ n: number }>({
      name: "gate",
      description: "waits for the others",
      inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      run: async ({ n }) => {
        if (++started === 3) release();
        await all;
        return textOutput(`g${n}`);
      },
    });
    const provider = scriptedProvider([
      callTools(
        { id: "1", name: "gate", args: { n: 1 } },
        { id: "2", name: "gate", args: { n: 2 } },
        { id: "3", name: "gate", args: { n: 3 } },
      ),
      say("ok"),
    ]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          expect(resultParts(provider).map((p) => JSON.stringify(p?.content))).toEqual([
            '[{"type":"text","text":"g1"}]',
            '[{"type":"text","text":"g2"}]',
            '[{"type":"text","text":"g3"}]',
          ]);
        }),
      { plugins: [toolsPlugin(gate)] },
    );
  });

  it.live("cancelling a turn stops a running promise tool: its signal aborts, the call is cancelled", () => {
    let signal: AbortSignal | undefined;
    const running = Deferred.unsafeMake<void>(undefined as never);
    const slow = defineTool<Record<string, never>>({
      name: "slow",
      description: "never settles",
      inputSchema: { type: "object" },
      run: (_args, ctx) => {
        signal = ctx.signal;
        Effect.runSync(Deferred.succeed(running, undefined));
        return new Promise(() => {});
      },
    });
    const provider = scriptedProvider([callTools({ id: "s", name: "slow", args: {} }), say("never reached")]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          const handle = yield* rt.startTurn(s.id, { text: "go" });
          yield* Deferred.await(running);
          yield* handle.cancel;
          const r = yield* handle.result;
          expect(r.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
          expect(signal?.aborted).toBe(true);
          expect(provider.requests).toHaveLength(1);
          const view = yield* rt.readView(s.id);
          expect(JSON.stringify(view.at(-1)!.parts[0])).toContain("Cancelled");
        }),
      { plugins: [toolsPlugin(slow)] },
    );
  });

  it.live("a wrapped execute runs the wrapper, not the bare promise", () => {
    const inner = defineTool<Record<string, never>>({
      name: "wrapped",
      description: "wrapped",
      inputSchema: { type: "object" },
      run: async () => textOutput("inner"),
    });
    const wrapped: ToolDefinition<Record<string, never>> = {
      ...inner,
      execute: (args, ctx) =>
        Effect.map(inner.execute(args, ctx), (out) => ({
          ...out,
          content: [{ type: "text", text: "outer" }],
        })),
    };
    const provider = scriptedProvider([callTools({ id: "w", name: "wrapped", args: {} }), say("ok")]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          expect(resultParts(provider)[0]).toMatchObject({ content: [{ type: "text", text: "outer" }] });
        }),
      { plugins: [toolsPlugin(wrapped as ToolDefinition)] },
    );
  });
});
