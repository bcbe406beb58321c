import { describe, expect, it } from "@effect/vitest";
import { Deferred, Effect, Either, Fiber, Stream } from "effect";
import {
  defineTool,
  outputBudgetPlugin,
  type Plugin,
  type ToolDefinition,
  ToolFailure,
  type TurnActivity,
  textOutput,
} from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

const echo = defineTool<{ text: string }>({
  name: "echo",
  description: "Echo text.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
    additionalProperties: false,
  },
  readOnly: true,
  run: async ({ text }) => textOutput(text, { value: { text } }),
});
const toolsPlugin = (...tools: ToolDefinition[]): Plugin => ({ name: "test-tools", tools });

describe("LashRuntime turns", () => {
  it.effect("a text turn commits the user and assistant messages", () =>
    withRuntime(scriptedProvider([say("Hello!")]), (rt) =>
      Effect.gen(function* () {
        const s = yield* rt.createSession({ model: "test/model", cwd: "/tmp/x" });
        const r = yield* rt.turn(s.id, { text: "hi there" });
        expect(r.outcome).toEqual({ type: "finished", finish: { kind: "assistantMessage", text: "Hello!" } });
        expect(r.text).toBe("Hello!");
        expect(r.headRevision).toBe(1);
        const view = yield* rt.readView(s.id);
        expect(view.map((m) => m.role)).toEqual(["user", "assistant"]);
        const after = yield* rt.getSession(s.id);
        expect(after.turnCount).toBe(1);
        expect(after.title).toBe("hi there");
        // cost from the catalog: 100 in * 3 + 10 out * 15 per million
        expect(r.costUsd).toBeCloseTo((100 * 3 + 10 * 15) / 1e6, 12);
      }),
    ),
  );

  it.effect("a second turn sees the first turn's messages", () => {
    const provider = scriptedProvider([say("one"), say("two")]);
    return withRuntime(provider, (rt) =>
      Effect.gen(function* () {
        const s = yield* rt.createSession({ model: "test/model" });
        yield* rt.turn(s.id, { text: "first" });
        yield* rt.turn(s.id, { text: "second" });
        expect(provider.requests[1]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
        expect((yield* rt.getSession(s.id)).headRevision).toBe(2);
      }),
    );
  });

  it.effect("TurnActivity order for a tool turn", () => {
    const events: TurnActivity[] = [];
    return withRuntime(
      scriptedProvider([callTools({ id: "c1", name: "echo", args: { text: "ping" } }), say("pong")]),
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" }, { onEvent: (e) => events.push(e) });
          const types = events.map((e) => e.type);
          expect(types).toEqual([
            "turnStarted",
            "messages",
            "llmRequest",
            "toolCallDelta",
            "toolCallDelta",
            "llmResponse",
            "usage",
            "messages",
            "toolStarted",
            "toolCompleted",
            "messages",
            "llmRequest",
            "textDelta",
            "llmResponse",
            "usage",
            "messages",
            "turnFinished",
          ]);
          expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
          const completed = events.find((e) => e.type === "toolCompleted");
          expect(completed).toMatchObject({
            name: "echo",
            isError: false,
            content: [{ type: "text", text: "ping" }],
          });
        }),
      { plugins: [toolsPlugin(echo)] },
    );
  });
});

describe("turn limits", () => {
  it.effect("the runtime's maxTurns applies when a turn sets none", () => {
    const provider = scriptedProvider([
      callTools({ id: "c1", name: "echo", args: { text: "x" } }),
      say("summary"),
    ]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          const r = yield* rt.turn(s.id, { text: "go" });
          expect(r.outcome).toMatchObject({ type: "stopped", reason: "maxTurns", text: "summary" });
          expect(provider.requests[1]!.tools).toEqual([]);
        }),
      { plugins: [toolsPlugin(echo)], maxTurns: 1 },
    );
  });
});

describe("tool dispatch", () => {
  it.effect("invalid arguments and unknown tools become error results the model reads", () => {
    const provider = scriptedProvider([
      callTools(
        { id: "a", name: "echo", args: { text: 5 } },
        { id: "b", name: "nope", args: {} },
        { id: "c", name: "echo", args: { text: "ok", extra: 1 } },
      ),
      say("fine"),
    ]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          const toolMsg = provider.requests[1]!.messages.at(-1)!;
          const results = toolMsg.parts.map((p) => (p.type === "toolResult" ? p : undefined));
          expect(results.map((r) => r?.isError)).toEqual([true, true, true]);
          const text = (i: number) => JSON.stringify(results[i]!.content);
          expect(text(0)).toContain("/text: expected string, got integer");
          expect(text(1)).toContain("Unknown tool `nope`. Available tools:");
          expect(text(1)).toContain("echo");
          expect(text(2)).toContain("/extra: unknown property");
        }),
      { plugins: [toolsPlugin(echo)] },
    );
  });

  it.effect("concurrent calls return in the model's order even when they finish in reverse", () => {
    const order: string[] = [];
    const gates = new Map<string, Deferred.Deferred<void>>();
    const slow = (name: string): ToolDefinition => ({
      name,
      description: name,
      inputSchema: { type: "object" },
      execute: () =>
        Effect.gen(function* () {
          const gate = yield* Deferred.make<void>();
          gates.set(name, gate);
          // the last tool releases the others in reverse order
          if (gates.size === 3) {
            for (const n of ["t3", "t2", "t1"]) yield* Deferred.succeed(gates.get(n)!, undefined);
          }
          yield* Deferred.await(gate);
          order.push(name);
          return textOutput(`${name} done`);
        }),
    });
    const provider = scriptedProvider([
      callTools(
        { id: "1", name: "t1", args: {} },
        { id: "2", name: "t2", args: {} },
        { id: "3", name: "t3", args: {} },
      ),
      say("ok"),
    ]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          expect(gates.size).toBe(3); // all three were running at once
          const parts = provider.requests[1]!.messages.at(-1)!.parts;
          expect(parts.map((p) => (p.type === "toolResult" ? p.callId : ""))).toEqual(["1", "2", "3"]);
          expect(parts.map((p) => (p.type === "toolResult" ? JSON.stringify(p.content) : ""))).toEqual([
            '[{"type":"text","text":"t1 done"}]',
            '[{"type":"text","text":"t2 done"}]',
            '[{"type":"text","text":"t3 done"}]',
          ]);
        }),
      { plugins: [toolsPlugin(slow("t1"), slow("t2"), slow("t3"))] },
    );
  });

  it.live("a tool that exceeds its timeout becomes a timeout error result", () => {
    const hang: ToolDefinition = {
      name: "hang",
      description: "never returns",
      inputSchema: { type: "object" },
      timeoutMs: 50,
      execute: () => Effect.never,
    };
    const provider = scriptedProvider([callTools({ id: "h", name: "hang", args: {} }), say("ok")]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          const part = provider.requests[1]!.messages.at(-1)!.parts[0]!;
          expect(part).toMatchObject({ type: "toolResult", isError: true });
          expect(JSON.stringify(part)).toContain("timed out after 50 ms");
        }),
      { plugins: [toolsPlugin(hang)] },
    );
  });

  it.live("failures marked safe are retried; others are not", () => {
    let flakyCalls = 0;
    let brokenCalls = 0;
    const flaky: ToolDefinition = {
      name: "flaky",
      description: "fails twice",
      inputSchema: { type: "object" },
      retry: { maxAttempts: 3, baseDelayMs: 1 },
      execute: () =>
        Effect.suspend(() =>
          ++flakyCalls < 3
            ? Effect.fail(new ToolFailure({ class: "external", message: "upstream busy", retry: "safe" }))
            : Effect.succeed(textOutput("finally")),
        ),
    };
    const broken: ToolDefinition = {
      name: "broken",
      description: "fails",
      inputSchema: { type: "object" },
      retry: { maxAttempts: 3, baseDelayMs: 1 },
      execute: () =>
        Effect.suspend(() => {
          brokenCalls++;
          return Effect.fail(new ToolFailure({ class: "execution", message: "bad input file" }));
        }),
    };
    const provider = scriptedProvider([
      callTools({ id: "f", name: "flaky", args: {} }, { id: "b", name: "broken", args: {} }),
      say("ok"),
    ]);
    return withRuntime(
      provider,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "go" });
          expect(flakyCalls).toBe(3);
          expect(brokenCalls).toBe(1);
          const parts = provider.requests[1]!.messages.at(-1)!.parts;
          expect(parts[0]).toMatchObject({ isError: false, content: [{ type: "text", text: "finally" }] });
          expect(parts[1]).toMatchObject({
            isError: true,
            content: [{ type: "text", text: "bad input file" }],
          });
        }),
      { plugins: [toolsPlugin(flaky, broken)] },
    );
  });

  it.live(
    "cancelling a turn with a slow tool: finished calls stay, the slow one is cancelled, outcome cancelled",
    () => {
      let interrupted = false;
      const started = Deferred.unsafeMake<void>(undefined as never);
      const slow: ToolDefinition = {
        name: "slow",
        description: "slow",
        inputSchema: { type: "object" },
        execute: () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))),
          ),
      };
      const provider = scriptedProvider([
        callTools({ id: "e", name: "echo", args: { text: "quick" } }, { id: "s", name: "slow", args: {} }),
        say("never reached"),
      ]);
      return withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            const handle = yield* rt.startTurn(s.id, { text: "go" });
            yield* Deferred.await(started);
            yield* handle.cancel;
            const r = yield* handle.result;
            expect(r.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
            expect(interrupted).toBe(true);
            expect(provider.requests).toHaveLength(1);
            const view = yield* rt.readView(s.id);
            expect(view.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
            const parts = view[2]!.parts;
            expect(parts[0]).toMatchObject({ callId: "e", isError: false });
            expect(parts[1]).toMatchObject({ callId: "s", isError: true });
            expect(JSON.stringify(parts[1])).toContain("Cancelled");
          }),
        { plugins: [toolsPlugin(echo, slow)] },
      );
    },
  );

  it.live(
    "cancelling while a failed call waits to be retried: it is not retried, the turn stops at once",
    () => {
      let calls = 0;
      const failed = Deferred.unsafeMake<void>(undefined as never);
      const busy: ToolDefinition = {
        name: "busy",
        description: "fails, retry later",
        inputSchema: { type: "object" },
        // a minute before the retry: the test would time out if the wait ignored the cancel
        retry: { maxAttempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 },
        execute: () =>
          Effect.suspend(() => {
            calls++;
            return Effect.zipRight(
              Deferred.succeed(failed, undefined),
              Effect.fail(new ToolFailure({ class: "external", message: "upstream busy", retry: "safe" })),
            );
          }),
      };
      const provider = scriptedProvider([
        callTools({ id: "b", name: "busy", args: {} }),
        say("never reached"),
      ]);
      return withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            const handle = yield* rt.startTurn(s.id, { text: "go" });
            yield* Deferred.await(failed);
            yield* handle.cancel;
            const r = yield* handle.result;
            expect(r.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
            expect(calls).toBe(1);
            expect(provider.requests).toHaveLength(1);
            const view = yield* rt.readView(s.id);
            expect(JSON.stringify(view.at(-1)!.parts)).toContain("Cancelled");
          }),
        { plugins: [toolsPlugin(busy)] },
      );
    },
  );

  it.effect(
    "the output budget cuts from the end (head kept) and, for tail tools, from the start; the graph keeps the full text",
    () => {
      const lines = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n");
      const big = (name: string, truncate: "head" | "tail"): ToolDefinition => ({
        name,
        description: name,
        inputSchema: { type: "object" },
        truncate,
        execute: () => Effect.succeed(textOutput(lines)),
      });
      const provider = scriptedProvider([
        callTools({ id: "r", name: "reader", args: {} }, { id: "sh", name: "sh", args: {} }),
        callTools({ id: "more", name: "read_output", args: { callId: "r", offset: 401, limit: 2 } }),
        say("ok"),
      ]);
      return withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            yield* rt.turn(s.id, { text: "go" });
            const parts = provider.requests[1]!.messages.at(-1)!.parts;
            const seen = (i: number) =>
              parts[i]!.type === "toolResult"
                ? (parts[i] as unknown as { content: { text: string }[] }).content[0]!.text
                : "";
            expect(seen(0).startsWith("line 1\n")).toBe(true);
            expect(seen(0)).toContain("600 of 1000 lines cut from the end");
            expect(seen(0)).not.toContain("line 401");
            expect(seen(1).endsWith("line 1000")).toBe(true);
            expect(seen(1)).toContain("cut from the start");
            expect(seen(1)).not.toContain("line 600\n");
            const view = yield* rt.readView(s.id);
            const stored = view[2]!.parts[0]!;
            expect(stored.type === "toolResult" && stored.full?.[0]).toMatchObject({ text: lines });
            const more = provider.requests[2]!.messages.at(-1)!.parts[0]!;
            expect(JSON.stringify(more)).toContain("line 401");
            expect(JSON.stringify(more)).toContain("line 402");
          }),
        { plugins: [outputBudgetPlugin(), toolsPlugin(big("reader", "head"), big("sh", "tail"))] },
      );
    },
  );
});

describe("graph operations", () => {
  it.effect("fork continues from a node; compare returns the divergent nodes; branch moves the leaf", () => {
    const provider = scriptedProvider([say("a1"), say("a2"), say("b2")]);
    return withRuntime(provider, (rt) =>
      Effect.gen(function* () {
        const s = yield* rt.createSession({ model: "test/model" });
        yield* rt.turn(s.id, { text: "q1" });
        const afterFirst = (yield* rt.getSession(s.id)).leafId!;
        yield* rt.turn(s.id, { text: "q2" });
        const a = yield* rt.getSession(s.id);
        const f = yield* rt.fork(s.id, { atNode: afterFirst });
        yield* rt.turn(f.id, { text: "q2 other" });
        expect(provider.requests[2]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
        const fv = yield* rt.readView(f.id);
        expect(fv.map((m) => (m.parts[0] as { text: string }).text)).toEqual(["q1", "a1", "q2 other", "b2"]);
        const b = yield* rt.getSession(f.id);
        const cmp = yield* rt.compare(a.leafId!, b.leafId!);
        expect(cmp.ancestor).toBe(afterFirst);
        expect(cmp.onlyA.map((n) => (n.payload as { parts: { text: string }[] }).parts[0]!.text)).toEqual([
          "q2",
          "a2",
        ]);
        expect(cmp.onlyB.map((n) => (n.payload as { parts: { text: string }[] }).parts[0]!.text)).toEqual([
          "q2 other",
          "b2",
        ]);
        // the origin is unchanged
        expect((yield* rt.readView(s.id)).length).toBe(4);
        // branch the origin back to after the first turn
        yield* rt.branch(s.id, afterFirst);
        expect((yield* rt.readView(s.id)).length).toBe(2);
      }),
    );
  });

  it.effect(
    "observe: a reader that reconnects with its last cursor gets every later event exactly once; a cursor older than what is kept is refused",
    () =>
      withRuntime(scriptedProvider([say("one"), say("two"), say("three")]), (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "1" });
          const first = yield* Stream.runCollect(
            rt.observe(s.id, 0).pipe(Stream.takeUntil((e) => e.type === "turnFinished")),
          );
          const firstEvents = [...first];
          const cursor = firstEvents.at(-1)!.seq;
          // reconnect later: subscribe from the cursor while two more turns run
          const reader = yield* Effect.fork(
            Stream.runCollect(
              rt.observe(s.id, cursor).pipe(
                Stream.filter((e) => e.type === "turnFinished"),
                Stream.take(2),
              ),
            ),
          );
          yield* rt.turn(s.id, { text: "2" });
          yield* rt.turn(s.id, { text: "3" });
          const finishes = [...(yield* Fiber.join(reader))];
          expect(finishes).toHaveLength(2);
          // the last turn is kept: from the end of turn 2, every event of turn 3 exactly once
          const all = [
            ...(yield* Stream.runCollect(
              rt
                .observe(s.id, finishes[0]!.seq)
                .pipe(Stream.takeUntil((e) => e.type === "turnFinished" && e.seq === finishes[1]!.seq)),
            )),
          ];
          const seqs = all.map((e) => e.seq);
          expect(all[0]!.type).toBe("turnStarted");
          expect(seqs[0]).toBe(finishes[0]!.seq + 1);
          expect(seqs).toEqual(seqs.map((_, i) => finishes[0]!.seq + 1 + i));
          // turn 2's events are no longer kept: the old cursor is refused, naming the oldest kept event
          const old = yield* Effect.either(Stream.runCollect(rt.observe(s.id, cursor)));
          expect(Either.isLeft(old) && old.left._tag).toBe("ActivityExpired");
          expect(Either.isLeft(old) && old.left.oldest).toBe(finishes[0]!.seq + 1);
        }),
      ),
  );

  it.effect("usage ledger per (source, model) with cost", () =>
    withRuntime(
      scriptedProvider([say("a", { input: 1000, output: 100 }), say("b", { input: 2000, output: 50 })]),
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "test/model" });
          yield* rt.turn(s.id, { text: "1" });
          yield* rt.turn(s.id, { text: "2" });
          const u = yield* rt.usage(s.id);
          expect(u.total).toEqual({ input: 3000, output: 150 });
          expect(u.bySource).toHaveLength(1);
          expect(u.costUsd).toBeCloseTo((3000 * 3 + 150 * 15) / 1e6, 12);
        }),
    ),
  );
});
