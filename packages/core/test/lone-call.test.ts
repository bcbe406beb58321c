// A lone promise-tool call without hooks or projector runs on dispatch's short path (`loneCall`:
// one Effect.async), with the journal off or on (a turn begun in this process); a no-op
// `beforeToolCall` hook sends the same call down the general path. All must give the model the
// same result and publish the same tool events, whatever the tool does.
import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect } from "effect";
import {
  defineTool,
  type Plugin,
  type ToolDefinition,
  ToolFailure,
  type TurnActivity,
  textOutput,
} from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

/** How the call runs: the short path without or with the journal, or the general path (journal on). */
type Path = "short" | "short+journal" | "general";

const plugin = (tool: ToolDefinition, path: Path = "short"): Plugin => ({
  name: "t",
  tools: [tool],
  // a hook that changes nothing: enough to send the batch down the general path
  ...(path === "general" ? { hooks: { beforeToolCall: () => Effect.succeed(undefined) } } : {}),
});

/** The tool events of a turn without what differs run to run (seq, time, durations). */
const toolEvents = (events: readonly TurnActivity[]) =>
  events.flatMap((e) => {
    if (e.type !== "toolStarted" && e.type !== "toolCompleted" && e.type !== "toolProgress") return [];
    const {
      seq: _s,
      at: _a,
      sessionId: _i,
      turnId: _t,
      ...rest
    } = e as TurnActivity & { durationMs?: number };
    if ("durationMs" in rest) delete (rest as { durationMs?: number }).durationMs;
    return [rest];
  });

/** One turn calling `tool` once; what the model was sent back and the tool events. */
const once = (tool: ToolDefinition, path: Path) =>
  Effect.gen(function* () {
    const provider = scriptedProvider([callTools({ id: "c1", name: tool.name, args: { n: 1 } }), say("ok")]);
    const events: TurnActivity[] = [];
    yield* withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" }, { onEvent: (e) => events.push(e) });
        }),
      { plugins: [plugin(tool, path)], journal: path !== "short" },
    );
    const last = provider.requests[1]!.messages.at(-1)!;
    const parts = last.parts.map((p) => (p.type === "toolResult" ? { ...p, durationMs: undefined } : p));
    return { parts, events: toolEvents(events) };
  });

const tools: Record<string, ToolDefinition> = {
  succeeds: defineTool<{ n: number }>({
    name: "succeeds",
    description: "returns text, a value and details, reports progress",
    inputSchema: { type: "object", properties: { n: { type: "number" } } },
    run: async ({ n }, ctx) => {
      ctx.progress?.({ step: n });
      return { ...textOutput(`got ${n}`), value: { n }, details: { note: "d" } };
    },
  }) as ToolDefinition,
  rejects: defineTool<{ n: number }>({
    name: "rejects",
    description: "rejects with a ToolFailure",
    inputSchema: { type: "object" },
    run: async () => {
      throw new ToolFailure({ class: "external", message: "upstream said no" });
    },
  }) as ToolDefinition,
  throws: defineTool<{ n: number }>({
    name: "throws",
    description: "throws before any promise",
    inputSchema: { type: "object" },
    run: () => {
      throw new Error("boom");
    },
  }) as ToolDefinition,
  times_out: defineTool<{ n: number }>({
    name: "times_out",
    description: "never settles",
    inputSchema: { type: "object" },
    timeoutMs: 30,
    run: () => new Promise(() => {}),
  }) as ToolDefinition,
  bad_args: defineTool<{ n: string }>({
    name: "bad_args",
    description: "wants a string",
    inputSchema: { type: "object", properties: { n: { type: "string" } }, required: ["n"] },
    run: async () => textOutput("unreachable"),
  }) as ToolDefinition,
};

describe("a lone promise-tool call: the short path (journal off or on) matches the general path", () => {
  for (const [name, tool] of Object.entries(tools)) {
    it.live(name, () =>
      Effect.gen(function* () {
        const general = yield* once(tool, "general");
        const short = yield* once(tool, "short");
        const journaled = yield* once(tool, "short+journal");
        expect(short).toEqual(general);
        expect(journaled).toEqual(general);
        expect(short.events.map((e) => e.type)).toContain("toolCompleted");
      }),
    );
  }

  it.live("a cancel while the call runs: cancelled the same way on both paths", () =>
    Effect.gen(function* () {
      const outcomes: unknown[] = [];
      for (const path of ["general", "short", "short+journal"] as const) {
        const running = yield* Deferred.make<void>();
        let signal: AbortSignal | undefined;
        const slow = defineTool<Record<string, never>>({
          name: "slow",
          description: "waits forever",
          inputSchema: { type: "object" },
          run: (_args, ctx) => {
            signal = ctx.signal;
            Effect.runSync(Deferred.succeed(running, undefined));
            return new Promise(() => {});
          },
        });
        const provider = scriptedProvider([callTools({ id: "s", name: "slow", args: {} }), say("never")]);
        const events: TurnActivity[] = [];
        yield* withRuntime(
          provider,
          (rt) =>
            Effect.gen(function* () {
              const s = yield* rt.createSession({ model: "test/model" });
              const handle = yield* rt.startTurn(s.id, { text: "go" }, { onEvent: (e) => events.push(e) });
              yield* Deferred.await(running);
              yield* handle.cancel;
              const r = yield* handle.result;
              expect(r.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
              expect(signal?.aborted).toBe(true);
              const view = yield* rt.readView(s.id);
              outcomes.push({
                result: { ...(view.at(-1)!.parts[0] as object), durationMs: undefined },
                events: toolEvents(events),
              });
            }),
          { plugins: [plugin(slow as ToolDefinition, path)], journal: path !== "short" },
        );
      }
      expect(outcomes[1]).toEqual(outcomes[0]);
      expect(outcomes[2]).toEqual(outcomes[0]);
      expect(JSON.stringify(outcomes[1])).toContain("Cancelled: the turn was stopped before slow finished.");
    }),
  );
});
