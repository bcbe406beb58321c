import { describe, expect, it } from "vitest";
import type { CompletedToolCall, TurnEffect } from "../src/index.ts";
import { call, config, ok, outcomeOf, run, scripted, TurnMachine, text } from "./helpers.ts";

type RunTools = Extract<TurnEffect, { kind: "runTools" }>;

/** Results that answer each call with its position in the batch, carrying lash's id like the host does. */
const byPosition =
  (withLashId: boolean) =>
  (effect: RunTools): CompletedToolCall[] =>
    effect.calls.map((c, i) => ({
      callId: c.callId,
      ...(withLashId && c.lashCallId !== undefined ? { lashCallId: c.lashCallId } : {}),
      name: c.name,
      content: [{ type: "text", text: `result ${effect.iteration}.${i}` }],
      isError: false,
    }));

describe("lash's own tool-call ids", () => {
  it("a provider that reuses one id in every batch and twice in a batch: each call gets its own id and its own result", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted(
        [
          ok([call("call_1", "echo", "{}"), call("call_1", "echo", "{}")], "toolUse"),
          ok([call("call_1", "echo", "{}")], "toolUse"),
          ok([text("done")]),
        ],
        // results come back in reverse order: pairing must not depend on it
        { tools: (e) => byPosition(true)(e).reverse() },
      ),
    );
    const batches = effects.filter((e): e is RunTools => e.kind === "runTools");
    const ids = batches.flatMap((b) => b.calls.map((c) => c.lashCallId));
    expect(ids).toEqual(["t1.m0.c0", "t1.m0.c1", "t1.m2.c0"]);
    const done = outcomeOf(effects);
    const calls = done.messages.flatMap((m) => m.parts.filter((p) => p.type === "toolCall"));
    expect(calls.map((p) => [p.id, p.lashCallId])).toEqual([
      ["call_1", "t1.m0.c0"],
      ["call_1", "t1.m0.c1"],
      ["call_1", "t1.m2.c0"],
    ]);
    const results = done.messages.flatMap((m) => m.parts.filter((p) => p.type === "toolResult"));
    expect(results.map((p) => [p.callId, p.lashCallId, p.content[0]])).toEqual([
      ["call_1", "t1.m0.c0", { type: "text", text: "result 0.0" }],
      ["call_1", "t1.m0.c1", { type: "text", text: "result 0.1" }],
      ["call_1", "t1.m2.c0", { type: "text", text: "result 1.0" }],
    ]);
  });

  it("requests carry the provider's ids only (lash's ids stay in the graph)", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([ok([call("call_1", "echo", "{}")], "toolUse"), ok([text("done")])], {
        tools: byPosition(true),
      }),
    );
    const second = effects.filter((e) => e.kind === "callLlm")[1] as Extract<TurnEffect, { kind: "callLlm" }>;
    const json = JSON.stringify(second.request.messages);
    expect(json).toContain('"call_1"');
    expect(json).not.toContain("lashCallId");
  });

  it("results recorded without lash's id (an older journal) still pair, in order, by the provider's id", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([ok([call("x", "echo", "{}"), call("x", "echo", "{}")], "toolUse"), ok([text("done")])], {
        tools: byPosition(false),
      }),
    );
    const results = outcomeOf(effects).messages.flatMap((m) =>
      m.parts.filter((p) => p.type === "toolResult"),
    );
    expect(results.map((p) => [p.lashCallId, p.content[0]])).toEqual([
      ["t1.m0.c0", { type: "text", text: "result 0.0" }],
      ["t1.m0.c1", { type: "text", text: "result 0.1" }],
    ]);
  });
});
