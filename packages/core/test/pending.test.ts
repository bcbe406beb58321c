// Cut-off turns: a turn that never reached a model is not left pending; a new
// turn is not silently stacked on a pending one; `abandonPending` closes a
// cut-off turn visibly in the graph; a journal mismatch is a typed error that
// names the session, and abandoning makes the session usable again.
import { describe, expect, it } from "@effect/vitest";
import type { LlmProvider } from "@lash/sansio";
import { Effect, Either, Layer } from "effect";
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  SessionStore,
  UnknownModel,
} from "../src/index.ts";
import { MemoryStore } from "../src/store/memory.ts";
import { say, scriptedProvider, testModel } from "./support.ts";

/** A runtime whose model resolves only while `available.ok` is true (a provider not configured yet). */
const layerWith = (provider: LlmProvider, available: { ok: boolean }) =>
  LashRuntime.layer().pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        MemoryStore,
        Layer.succeed(LlmProviders, {
          forModel: (model: string) =>
            available.ok
              ? Effect.succeed(provider)
              : Effect.fail(new UnknownModel({ model, message: `no provider for ${model}` })),
        }),
        IdGenerator.seeded(),
        ModelCatalog.fromEntries([testModel]),
      ),
    ),
  );

const textsOf = (req: { messages: readonly { parts: readonly { type: string; text?: string }[] }[] }) =>
  req.messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text ?? ""] : [])));

const userMessage = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

describe("no silent pending prompts", () => {
  it.effect("a turn that fails before any model request (no provider) is not left pending", () => {
    const provider = scriptedProvider([say("it is noon")]);
    const available = { ok: false };
    return Effect.gen(function* () {
      const rt = yield* LashRuntime;
      const store = yield* SessionStore;
      const s = yield* rt.createSession({ model: "test/model" });
      const failed = yield* Effect.either(rt.turn(s.id, { text: "please delete the build dir" }));
      expect(Either.isLeft(failed) && failed.left._tag === "TurnError" && failed.left.reason).toBe(
        "unknownModel",
      );
      expect(yield* store.pendingTurn(s.id)).toBeUndefined();
      // the provider is configured now: the next turn runs only its own prompt
      available.ok = true;
      const r = yield* rt.turn(s.id, { text: "what time is it" });
      expect(r.resumed).toBe(false);
      expect(provider.requests).toHaveLength(1);
      expect(textsOf(provider.requests[0]!)).toEqual(["what time is it"]);
    }).pipe(Effect.provide(layerWith(provider, available)));
  });

  it.effect(
    "a new turn with resumePending: false on a session with a cut-off turn is refused; nothing runs",
    () => {
      const provider = scriptedProvider([say("done")]);
      return Effect.gen(function* () {
        const rt = yield* LashRuntime;
        const store = yield* SessionStore;
        const s = yield* rt.createSession({ model: "test/model" });
        yield* store.beginTurn({
          sessionId: s.id,
          turnId: "turn_cut",
          input: { messages: [userMessage("turn_cut.in0", "please delete the build dir")] },
          expectedRevision: 0,
          startedAt: 0,
        });
        const r = yield* Effect.either(rt.turn(s.id, { text: "what time is it" }, { resumePending: false }));
        expect(Either.isLeft(r)).toBe(true);
        if (Either.isLeft(r) && r.left._tag === "TurnError") {
          expect(r.left.reason).toBe("pendingTurn");
          expect(r.left.pendingTurnId).toBe("turn_cut");
          expect(r.left.message).toContain("please delete the build dir");
        }
        expect(provider.requests).toHaveLength(0);
        expect((yield* store.pendingTurn(s.id))?.turnId).toBe("turn_cut");
      }).pipe(Effect.provide(layerWith(provider, { ok: true })));
    },
  );
});

describe("abandoning a cut-off turn", () => {
  it.effect(
    "closes it as a visible turnAbandoned node; pending row and journal cleared; the model never sees it",
    () => {
      const provider = scriptedProvider([say("first"), say("it is noon")]);
      return Effect.gen(function* () {
        const rt = yield* LashRuntime;
        const store = yield* SessionStore;
        const s = yield* rt.createSession({ model: "test/model" });
        yield* rt.turn(s.id, { text: "hello" });
        yield* store.beginTurn({
          sessionId: s.id,
          turnId: "turn_cut",
          input: { messages: [userMessage("turn_cut.in0", "please delete the build dir")] },
          expectedRevision: 1,
          startedAt: 0,
        });
        yield* store.journalPut({
          key: `${s.id}:turn_cut:1:callLlm:2`,
          sessionId: s.id,
          turnId: "turn_cut",
          hash: "h",
          status: "completed",
          outcome: { ok: true },
          updatedAt: 0,
        });
        yield* store.countResumeAttempt(s.id, "turn_cut");

        const abandoned = yield* rt.abandonPending(s.id);
        expect(abandoned).toMatchObject({
          sessionId: s.id,
          turnId: "turn_cut",
          input: "please delete the build dir",
          completedSteps: 1,
          resumeAttempts: 1,
          headRevision: 2,
        });
        expect(yield* store.pendingTurn(s.id)).toBeUndefined();
        expect(yield* store.journalForTurn(s.id, "turn_cut")).toEqual([]);
        const nodes = yield* rt.chronological(s.id);
        const last = nodes.at(-1)!;
        expect(last).toMatchObject({ kind: "protocol", turnId: "turn_cut" });
        expect(last.payload).toMatchObject({ type: "turnAbandoned", input: "please delete the build dir" });
        // nothing more to abandon
        expect(yield* rt.abandonPending(s.id)).toBeUndefined();

        const r = yield* rt.turn(s.id, { text: "what time is it" });
        expect(r.text).toBe("it is noon");
        expect(textsOf(provider.requests[1]!)).toEqual(["hello", "first", "what time is it"]);
      }).pipe(Effect.provide(layerWith(provider, { ok: true })));
    },
  );

  it.effect(
    "a journal mismatch is a typed error naming the session; abandoning makes the session usable",
    () => {
      const provider = scriptedProvider([say("fine again")]);
      return Effect.gen(function* () {
        const rt = yield* LashRuntime;
        const store = yield* SessionStore;
        const s = yield* rt.createSession({ model: "test/model" });
        yield* store.beginTurn({
          sessionId: s.id,
          turnId: "turn_cut",
          input: { messages: [userMessage("turn_cut.in0", "go")] },
          expectedRevision: 0,
          startedAt: 0,
        });
        // records that no longer match what the turn asks (the configuration changed since the crash)
        for (const kind of ["syncEnvironment", "callLlm"])
          for (const iteration of [0, 1])
            for (const effectId of [1, 2])
              yield* store.journalPut({
                key: `${s.id}:turn_cut:${iteration}:${kind}:${effectId}`,
                sessionId: s.id,
                turnId: "turn_cut",
                hash: "something else",
                status: "completed",
                outcome: {},
                updatedAt: 0,
              });
        const r = yield* Effect.either(rt.resumePending(s.id));
        expect(Either.isLeft(r)).toBe(true);
        if (Either.isLeft(r) && r.left._tag === "TurnError") {
          expect(r.left.reason).toBe("journalMismatch");
          expect(r.left.pendingTurnId).toBe("turn_cut");
          expect(r.left.message).toContain(`session ${s.id}`);
        }
        expect(provider.requests).toHaveLength(0);
        yield* rt.abandonPending(s.id);
        const ok = yield* rt.turn(s.id, { text: "hi" });
        expect(ok.text).toBe("fine again");
      }).pipe(Effect.provide(layerWith(provider, { ok: true })));
    },
  );

  it.effect("the poison-turn guard: after maxResumeAttempts counted resumes the turn is not resumed", () => {
    const provider = scriptedProvider([say("never")]);
    return Effect.gen(function* () {
      const rt = yield* LashRuntime;
      const store = yield* SessionStore;
      const s = yield* rt.createSession({ model: "test/model" });
      yield* store.beginTurn({
        sessionId: s.id,
        turnId: "turn_cut",
        input: { messages: [userMessage("turn_cut.in0", "allocate forever")] },
        expectedRevision: 0,
        startedAt: 0,
      });
      for (let i = 0; i < 3; i++) yield* store.countResumeAttempt(s.id, "turn_cut");
      for (const attempt of [rt.resumePending(s.id), rt.turn(s.id, { text: "next" })]) {
        const r = yield* Effect.either(attempt);
        expect(Either.isLeft(r) && r.left._tag === "TurnError" && r.left.reason).toBe("poisoned");
      }
      expect(provider.requests).toHaveLength(0);
      expect((yield* store.pendingTurn(s.id))?.resumeAttempts).toBe(3);
    }).pipe(Effect.provide(layerWith(provider, { ok: true })));
  });
});
