import { describe, expect, it } from "vitest";
import { canonicalJson, type TurnEffect, type TurnResponse } from "../src/index.ts";
import {
  call,
  config,
  echoResults,
  ok,
  outcomeOf,
  replyKinds,
  run,
  scripted,
  TurnMachine,
  text,
  userMessage,
} from "./helpers.ts";

describe("standard turn effect sequence", () => {
  it("one tool round: sync, LLM, tools, checkpoint, sync, LLM, checkpoint, done with ids 1…7", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([ok([call("c1", "echo", '{"text":"hi"}')], "toolUse"), ok([text("done")])]),
    );
    expect(replyKinds(effects)).toEqual([
      "1:syncEnvironment",
      "2:callLlm",
      "3:runTools",
      "4:checkpoint",
      "5:syncEnvironment",
      "6:callLlm",
      "7:checkpoint",
    ]);
    const reply = effects.filter((e) => "effectId" in e) as Extract<TurnEffect, { effectId: number }>[];
    expect(reply.map((e) => e.iteration)).toEqual([0, 0, 0, 1, 1, 1, 1]);
    expect((reply[3] as Extract<TurnEffect, { kind: "checkpoint" }>).checkpoint).toBe("afterWork");
    expect((reply[6] as Extract<TurnEffect, { kind: "checkpoint" }>).checkpoint).toBe("beforeCompletion");
    const done = outcomeOf(effects);
    expect(done.outcome).toEqual({ type: "finished", finish: { kind: "assistantMessage", text: "done" } });
    expect(done.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    const toolMsg = done.messages[2]!;
    expect(toolMsg.parts[0]).toMatchObject({
      type: "toolResult",
      callId: "c1",
      name: "echo",
      isError: false,
    });
    // the second request carries the tool round
    const secondCall = reply[5] as Extract<TurnEffect, { kind: "callLlm" }>;
    expect(secondCall.request.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(secondCall.request.system).toBe("You are terse.");
    expect(secondCall.request.tools.map((t) => t.name)).toEqual(["echo"]);
  });

  it("text-only turn: sync, LLM, checkpoint, done", () => {
    const effects = run(new TurnMachine(config()), scripted([ok([text("hi there")])]));
    expect(replyKinds(effects)).toEqual(["1:syncEnvironment", "2:callLlm", "3:checkpoint"]);
    const done = outcomeOf(effects);
    expect(done.outcome).toEqual({
      type: "finished",
      finish: { kind: "assistantMessage", text: "hi there" },
    });
    expect(done.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const kinds = effects.map((e) => (e.kind === "emit" ? `emit:${e.event.type}` : e.kind));
    expect(kinds).toEqual([
      "progress",
      "syncEnvironment",
      "emit:llmRequest",
      "callLlm",
      "emit:usage",
      "emit:llmResponse",
      "checkpoint",
      "progress",
      "emit:outcome",
      "done",
    ]);
  });

  it("without environment sync the first effect is the LLM call", () => {
    const effects = run(new TurnMachine(config({ syncEnvironment: false })), scripted([ok([text("x")])]));
    expect(replyKinds(effects)).toEqual(["1:callLlm", "2:checkpoint"]);
  });

  it("a sync response replaces the system prompt and tools", () => {
    const m = new TurnMachine(config());
    m.poll(); // progress
    const sync = m.poll()!;
    expect(sync.kind).toBe("syncEnvironment");
    m.respond({ kind: "environmentSynced", effectId: 1, system: "new system", tools: [] });
    m.poll(); // emit llmRequest
    const llm = m.poll() as Extract<TurnEffect, { kind: "callLlm" }>;
    expect(llm.request.system).toBe("new system");
    expect(llm.request.tools).toEqual([]);
    expect(llm.request.toolChoice).toBeUndefined();
  });

  it("a sync error stops the turn with runtimeError", () => {
    const m = new TurnMachine(config());
    m.poll();
    m.poll();
    m.respond({ kind: "environmentSynced", effectId: 1, error: "catalog unavailable" });
    const effects: TurnEffect[] = [];
    for (let e = m.poll(); e; e = m.poll()) effects.push(e);
    expect(outcomeOf(effects).outcome).toEqual({
      type: "stopped",
      reason: "runtimeError",
      message: "catalog unavailable",
    });
  });

  it("empty input stops with invalidInput and asks for nothing", () => {
    const effects = run(new TurnMachine(config({ input: [] })), scripted([]));
    expect(replyKinds(effects)).toEqual([]);
    expect(outcomeOf(effects).outcome).toMatchObject({ type: "stopped", reason: "invalidInput" });
  });

  it("a queued message delivered at the completion checkpoint keeps the draft and continues", () => {
    let delivered = false;
    const effects = run(
      new TurnMachine(config()),
      scripted([ok([text("first answer")]), ok([text("second answer")])], {
        checkpoint: () => {
          if (delivered) return [];
          delivered = true;
          return [userMessage("also this", "u2")];
        },
      }),
    );
    const done = outcomeOf(effects);
    expect(done.outcome).toEqual({
      type: "finished",
      finish: { kind: "assistantMessage", text: "second answer" },
    });
    expect(done.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(replyKinds(effects)).toEqual([
      "1:syncEnvironment",
      "2:callLlm",
      "3:checkpoint",
      "4:syncEnvironment",
      "5:callLlm",
      "6:checkpoint",
    ]);
  });
});

describe("terminal mapping", () => {
  const finalOf = (...results: Parameters<typeof scripted>[0]) =>
    outcomeOf(run(new TurnMachine(config({ contextWindow: 1000 })), scripted(results)));

  it("output limit → Stopped{incomplete}, partial text kept", () => {
    const done = finalOf(ok([text("partial")], "outputLimit", { input: 10, output: 50 }));
    expect(done.outcome).toMatchObject({ type: "stopped", reason: "incomplete", text: "partial" });
    expect(done.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("zero-output output limit with the prompt at ≥ 95% of the window counts as overflow", () => {
    const m = new TurnMachine(config({ contextWindow: 1000 }));
    const effects = run(m, scripted([ok([], "outputLimit", { input: 950, output: 0 })]));
    expect(outcomeOf(effects).outcome).toMatchObject({ type: "stopped", reason: "providerError" });
    const err = effects.find((e) => e.kind === "emit" && e.event.type === "error");
    expect(err).toMatchObject({ event: { kind: "contextOverflow" } });
  });

  it("zero-output output limit below 95% stays incomplete", () => {
    expect(finalOf(ok([], "outputLimit", { input: 940, output: 0 })).outcome).toMatchObject({
      reason: "incomplete",
    });
  });

  for (const stop of ["contextOverflow", "contentFilter", "error"] as const) {
    it(`${stop} → Stopped{providerError}`, () => {
      expect(finalOf(ok([text("x")], stop)).outcome).toMatchObject({
        type: "stopped",
        reason: "providerError",
      });
    });
  }

  it("cancelled stop → Stopped{cancelled}", () => {
    expect(finalOf(ok([text("half")], "cancelled")).outcome).toMatchObject({
      type: "stopped",
      reason: "cancelled",
    });
  });

  it("provider error result → error event and Stopped{providerError}", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([{ ok: false, error: { kind: "server", message: "503 upstream", retryable: true } }]),
    );
    expect(outcomeOf(effects).outcome).toEqual({
      type: "stopped",
      reason: "providerError",
      message: "503 upstream",
    });
    expect(effects.some((e) => e.kind === "emit" && e.event.type === "error" && e.event.retryable)).toBe(
      true,
    );
  });

  it("cancelled error result → Stopped{cancelled}", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([{ ok: false, error: { kind: "cancelled", message: "user cancelled", retryable: false } }]),
    );
    expect(outcomeOf(effects).outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
  });

  it("empty response with no tool result before it → providerError", () => {
    expect(finalOf(ok([])).outcome).toMatchObject({ type: "stopped", reason: "providerError" });
  });

  it("empty response right after tool results finishes with an empty answer", () => {
    const done = finalOf(ok([call("c1", "echo", "{}")], "toolUse"), ok([]));
    expect(done.outcome).toEqual({ type: "finished", finish: { kind: "assistantMessage", text: "" } });
  });

  it("cancel() mid-turn keeps what was appended and stops with cancelled", () => {
    const m = new TurnMachine(config());
    const host = scripted([ok([call("c1", "echo", "{}")], "toolUse")]);
    let effect = m.poll();
    while (effect && effect.kind !== "runTools") {
      if (effect.kind === "syncEnvironment")
        m.respond({ kind: "environmentSynced", effectId: effect.effectId });
      if (effect.kind === "callLlm")
        m.respond({ kind: "llmComplete", effectId: effect.effectId, result: host.llm(effect) });
      effect = m.poll();
    }
    m.cancel("stopped by user");
    const rest: TurnEffect[] = [];
    for (let e = m.poll(); e; e = m.poll()) rest.push(e);
    const done = outcomeOf(rest);
    expect(done.outcome).toEqual({ type: "stopped", reason: "cancelled", message: "stopped by user" });
    expect(done.messages.map((x) => x.role)).toEqual(["user", "assistant"]);
  });
});

describe("max turns", () => {
  it("reaching the limit adds a notice, makes one tool-less call, then Stopped{maxTurns}", () => {
    const loop = ok([call("c", "echo", "{}")], "toolUse");
    const effects = run(
      new TurnMachine(config({ maxTurns: 2 })),
      scripted([loop, loop, ok([text("summary")])]),
    );
    const llmCalls = effects.filter((e) => e.kind === "callLlm") as Extract<
      TurnEffect,
      { kind: "callLlm" }
    >[];
    expect(llmCalls).toHaveLength(3);
    expect(llmCalls[0]!.request.tools).toHaveLength(1);
    expect(llmCalls[1]!.request.tools).toHaveLength(1);
    expect(llmCalls[2]!.request.tools).toHaveLength(0);
    const last = llmCalls[2]!.request.messages.at(-1)!;
    expect(last.role).toBe("user");
    expect(JSON.stringify(last.parts)).toContain("turn limit");
    const done = outcomeOf(effects);
    expect(done.outcome).toMatchObject({ type: "stopped", reason: "maxTurns", text: "summary" });
    expect(done.messages.at(-1)).toMatchObject({
      role: "assistant",
      parts: [{ type: "text", text: "summary" }],
    });
  });

  it("a turn that ends before the limit is not affected", () => {
    const effects = run(
      new TurnMachine(config({ maxTurns: 2 })),
      scripted([ok([call("c", "echo", "{}")], "toolUse"), ok([text("ok")])]),
    );
    expect(outcomeOf(effects).outcome).toMatchObject({ type: "finished" });
  });
});

describe("tool calls", () => {
  it("one RunTools effect holds every call in the model's order; results come back in that order", () => {
    const m = new TurnMachine(config());
    const effects = run(
      m,
      scripted(
        [
          ok(
            [
              text("let me look"),
              call("a", "echo", '{"n":1}'),
              call("b", "echo", '{"n":2}'),
              call("c", "echo", '{"n":3}'),
            ],
            "toolUse",
          ),
          ok([text("done")]),
        ],
        { tools: (e) => echoResults(e).reverse() },
      ),
    );
    const runTools = effects.filter((e) => e.kind === "runTools");
    expect(runTools).toHaveLength(1);
    expect((runTools[0] as Extract<TurnEffect, { kind: "runTools" }>).calls.map((c) => c.callId)).toEqual([
      "a",
      "b",
      "c",
    ]);
    const toolMsg = outcomeOf(effects).messages[2]!;
    expect(toolMsg.parts.map((p) => (p.type === "toolResult" ? p.callId : "?"))).toEqual(["a", "b", "c"]);
    expect(toolMsg.parts.map((p) => (p.type === "toolResult" ? p.content : []))).toEqual([
      [{ type: "text", text: '{"n":1}' }],
      [{ type: "text", text: '{"n":2}' }],
      [{ type: "text", text: '{"n":3}' }],
    ]);
  });

  it("malformed argument JSON becomes an error result for that call only, and the call is flagged", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([
        ok([call("a", "echo", '{"n":'), call("b", "echo", '{"n":2}'), call("c", "echo", "[1]")], "toolUse"),
        ok([text("ok")]),
      ]),
    );
    const batch = effects.find((e) => e.kind === "runTools") as Extract<TurnEffect, { kind: "runTools" }>;
    expect(batch.calls.map((c) => c.argsError !== undefined)).toEqual([true, false, true]);
    const parts = outcomeOf(effects).messages[2]!.parts;
    expect(parts.map((p) => (p.type === "toolResult" ? p.isError : undefined))).toEqual([true, false, true]);
    expect(JSON.stringify(parts[0])).toContain("not valid JSON");
    expect(JSON.stringify(parts[2])).toContain("must be a JSON object");
  });

  it("empty argument text means {}", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([ok([call("a", "echo", "")], "toolUse"), ok([text("ok")])]),
    );
    const batch = effects.find((e) => e.kind === "runTools") as Extract<TurnEffect, { kind: "runTools" }>;
    expect(batch.calls[0]).toEqual({ callId: "a", lashCallId: "t1.m0.c0", name: "echo", args: {} });
  });

  it("a call the host returned no result for becomes an interrupted error result", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([ok([call("a", "echo", "{}"), call("b", "echo", "{}")], "toolUse"), ok([text("ok")])], {
        tools: (e) => echoResults(e).slice(0, 1),
      }),
    );
    const parts = outcomeOf(effects).messages[2]!.parts;
    expect(parts[1]).toMatchObject({ type: "toolResult", callId: "b", isError: true });
    expect(JSON.stringify(parts[1])).toContain("interrupted");
  });

  it("a tool's finish control ends the turn with its value; frameSwitch ends it with a switch", () => {
    const finish = run(
      new TurnMachine(config()),
      scripted([ok([call("a", "done", "{}")], "toolUse")], {
        tools: (e) =>
          echoResults(e).map((r) => ({ ...r, control: { type: "finish" as const, value: { answer: 42 } } })),
      }),
    );
    expect(outcomeOf(finish).outcome).toEqual({
      type: "finished",
      finish: { kind: "toolValue", toolName: "done", value: { answer: 42 } },
    });
    const sw = run(
      new TurnMachine(config()),
      scripted([ok([call("a", "handoff", "{}")], "toolUse")], {
        tools: (e) =>
          echoResults(e).map((r) => ({
            ...r,
            control: { type: "frameSwitch" as const, frameId: "f2", task: "go on" },
          })),
      }),
    );
    expect(outcomeOf(sw).outcome).toEqual({ type: "frameSwitch", frameId: "f2", task: "go on" });
  });
});

describe("responses that do not match", () => {
  it("stale, duplicate and mismatched responses are ignored", () => {
    const m = new TurnMachine(config());
    m.poll();
    const sync = m.poll()!;
    expect(sync).toMatchObject({ kind: "syncEnvironment", effectId: 1 });
    const before = canonicalJson(m.checkpoint());
    const wrongKind: TurnResponse = { kind: "llmComplete", effectId: 1, result: ok([text("x")]) };
    const wrongId: TurnResponse = { kind: "environmentSynced", effectId: 7 };
    expect(m.respond(wrongKind)).toBe(false);
    expect(m.respond(wrongId)).toBe(false);
    expect(canonicalJson(m.checkpoint())).toBe(before);
    expect(m.respond({ kind: "environmentSynced", effectId: 1 })).toBe(true);
    const after = canonicalJson(m.checkpoint());
    expect(m.respond({ kind: "environmentSynced", effectId: 1 })).toBe(false);
    expect(canonicalJson(m.checkpoint())).toBe(after);
  });

  it("after restore the outstanding effect is emitted once more with the same id and payload", () => {
    const m = new TurnMachine(config());
    m.poll();
    m.poll();
    m.respond({ kind: "environmentSynced", effectId: 1 });
    m.poll(); // llmRequest emit
    const llm = m.poll()!;
    expect(llm.kind).toBe("callLlm");
    const restored = TurnMachine.restore(config(), m.checkpoint());
    const again = restored.poll();
    expect(canonicalJson(again)).toBe(canonicalJson(llm));
    expect(restored.poll()).toBeUndefined();
    expect(restored.respond({ kind: "llmComplete", effectId: 2, result: ok([text("fine")]) })).toBe(true);
    expect(restored.poll()).toMatchObject({ kind: "emit" });
  });

  it("responding after done changes nothing", () => {
    const m = new TurnMachine(config());
    const effects = run(m, scripted([ok([text("x")])]));
    expect(outcomeOf(effects).kind).toBe("done");
    expect(m.respond({ kind: "checkpointDelivered", effectId: 3, messages: [] })).toBe(false);
    expect(m.poll()).toBeUndefined();
    expect(m.finished).toBe(true);
  });
});

describe("history", () => {
  it("prior messages are sent before the turn's messages and are not part of done.messages", () => {
    const history = [
      userMessage("earlier", "h1"),
      { id: "h2", role: "assistant" as const, parts: [text("sure")] },
    ];
    const effects = run(new TurnMachine(config({ history })), scripted([ok([text("x")])]));
    const llm = effects.find((e) => e.kind === "callLlm") as Extract<TurnEffect, { kind: "callLlm" }>;
    expect(llm.request.messages.map((m) => m.id)).toEqual(["h1", "h2", "u1"]);
    expect(outcomeOf(effects).messages.map((m) => m.id)).toEqual(["u1", "t1.m0"]);
  });

  it("usage accumulates across model calls", () => {
    const effects = run(
      new TurnMachine(config()),
      scripted([
        ok([call("a", "echo", "{}")], "toolUse", { input: 100, output: 10 }),
        ok([text("ok")], "stop", { input: 120, output: 5, cacheRead: 100 }),
      ]),
    );
    expect(outcomeOf(effects).usage).toEqual({ input: 220, output: 15, cacheRead: 100 });
  });
});
