// One event vocabulary: everything the runtime publishes decodes with the `TurnActivity`
// schema from @lash/sansio (a reader of stream-json or a reconnecting observer can rely on it).
import { type LlmEvent, TurnActivity } from "@lash/sansio";
import { Effect, Either, ParseResult, Schema } from "effect";
import { describe, expect, it } from "vitest";
import { type TurnActivity as Activity, defineTool, textOutput } from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

const decode = Schema.decodeUnknownEither(TurnActivity);

describe("the activity vocabulary", () => {
  it("every event of a turn with tools, a failing tool, reasoning and a plugin event decodes with TurnActivity", async () => {
    const events: Activity[] = [];
    const reasoning: LlmEvent[] = [
      { type: "reasoningDelta", text: "thinking" },
      ...callTools(
        { id: "c1", name: "ok_tool", args: { n: 1 } },
        { id: "c2", name: "bad_tool", args: {} },
        { id: "c3", name: "missing_tool", args: {} },
      ),
    ];
    const provider = scriptedProvider([reasoning, say("done")]);
    const tools = {
      name: "tools",
      tools: [
        defineTool<{ n: number }>({
          name: "ok_tool",
          description: "ok",
          inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
          run: async ({ n }, ctx) => {
            ctx.progress({ step: n });
            return textOutput(`n=${n}`, { details: { n } });
          },
        }),
        defineTool<Record<string, never>>({
          name: "bad_tool",
          description: "fails",
          inputSchema: { type: "object" },
          run: async () => {
            throw new Error("boom");
          },
        }),
      ],
    };
    await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            yield* rt.turn(s.id, { text: "go" }, { onEvent: (e) => events.push(e) });
          }),
        { plugins: [tools] },
      ),
    );
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      "turnStarted",
      "llmRequest",
      "reasoningDelta",
      "toolCallDelta",
      "llmResponse",
      "toolStarted",
      "toolProgress",
      "toolCompleted",
      "messages",
      "usage",
      "turnFinished",
    ])
      expect(types).toContain(t);
    for (const e of events) {
      const r = decode(JSON.parse(JSON.stringify(e)));
      if (Either.isLeft(r))
        throw new Error(`${e.type}: ${ParseResult.TreeFormatter.formatErrorSync(r.left)}`);
    }
  });

  it("an event outside the vocabulary does not decode", () => {
    const r = decode({ type: "toolFinished", sessionId: "s", turnId: "t", seq: 1, at: 0, callId: "c" });
    expect(Either.isLeft(r)).toBe(true);
    const missing = decode({ type: "textDelta", sessionId: "s", turnId: "t", seq: 1, at: 0 });
    expect(Either.isLeft(missing)).toBe(true);
  });
});
