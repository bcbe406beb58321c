import { describe, expect, it } from "@effect/vitest";
import { Chunk, Effect, Layer, Stream } from "effect";
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  SessionStore,
} from "../src/index.ts";
import { say, scriptedProvider } from "./support.ts";

const layerWith = (
  provider: ReturnType<typeof scriptedProvider>,
  plugins: Parameters<typeof LashRuntime.layer>[0] = {},
) =>
  LashRuntime.layer(plugins).pipe(
    Layer.provideMerge(
      Layer.mergeAll(LlmProviders.single(provider), IdGenerator.seeded(), ModelCatalog.Empty),
    ),
    Layer.provideMerge(MemoryStore),
  );

describe("turn edges", () => {
  it.effect("a plugin that aborts the turn stops it before the model is called; the input is kept", () => {
    const provider = scriptedProvider([say("never")]);
    return Effect.gen(function* () {
      const rt = yield* LashRuntime;
      const s = yield* rt.createSession({ model: "m" });
      const r = yield* rt.turn(s.id, { text: "delete everything" });
      expect(r.outcome).toEqual({ type: "stopped", reason: "pluginAbort", message: "blocked by policy" });
      expect(provider.requests).toHaveLength(0);
      const view = yield* rt.readView(s.id);
      expect(view.map((m) => m.role)).toEqual(["user"]);
      expect(JSON.stringify(view[0])).toContain("delete everything");
    }).pipe(
      Effect.provide(
        layerWith(provider, {
          plugins: [
            { name: "policy", hooks: { beforeTurn: () => Effect.succeed({ abort: "blocked by policy" }) } },
          ],
        }),
      ),
    );
  });

  it.effect(
    "startTurn on a session with a cut-off turn: the stream carries both turns and ends after the new one",
    () => {
      const provider = scriptedProvider([say("finished the old one"), say("answer to the new one")]);
      return Effect.gen(function* () {
        const rt = yield* LashRuntime;
        const store = yield* SessionStore;
        const s = yield* rt.createSession({ model: "m" });
        // a turn that began and never committed (as after a crash)
        yield* store.beginTurn({
          sessionId: s.id,
          turnId: "turn_cut",
          input: {
            messages: [{ id: "turn_cut.in0", role: "user", parts: [{ type: "text", text: "old question" }] }],
          },
          expectedRevision: 0,
          startedAt: 0,
        });
        const handle = yield* rt.startTurn(s.id, { text: "new question" });
        const events = Chunk.toArray(yield* Stream.runCollect(handle.events));
        const finished = events.filter((e) => e.type === "turnFinished");
        expect(finished.map((e) => e.turnId)).toEqual(["turn_cut", (yield* handle.result).turnId]);
        expect((yield* handle.result).text).toBe("answer to the new one");
        const view = yield* rt.readView(s.id);
        expect(view.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      }).pipe(Effect.scoped, Effect.provide(layerWith(provider)));
    },
  );
});
