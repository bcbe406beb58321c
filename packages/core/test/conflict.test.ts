// Two runtimes (two connections) committing to one session: one wins, the
// other gets a typed conflict carrying its messages; nothing is lost.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "@effect/vitest";
import type { LlmEvent, LlmProvider } from "@lash/sansio";
import { Deferred, Effect, Either, Layer, Stream } from "effect";
import { IdGenerator, LashRuntime, LlmProviders, ModelCatalog, SqliteStore } from "../src/index.ts";

function gatedProvider(
  gate: Deferred.Deferred<void>,
  started: Deferred.Deferred<void>,
  text: string,
): LlmProvider {
  const events: LlmEvent[] = [
    { type: "textDelta", text },
    { type: "usage", usage: { input: 10, output: 2 } },
    { type: "finish", reason: "stop" },
  ];
  return {
    name: "gated",
    stream: () =>
      Stream.fromEffect(
        Deferred.succeed(started, undefined).pipe(Effect.zipRight(Deferred.await(gate))),
      ).pipe(Stream.flatMap(() => Stream.fromIterable(events))),
  };
}

const runtimeOn = (filename: string, provider: LlmProvider) =>
  LashRuntime.layer().pipe(
    Layer.provide(
      Layer.mergeAll(
        SqliteStore.layer({ filename }),
        LlmProviders.single(provider),
        IdGenerator.Live,
        ModelCatalog.Empty,
      ),
    ),
  );

describe("concurrent commits", () => {
  it.live(
    "two runtimes on one database file: the first commit wins, the second is a typed conflict with its messages",
    () =>
      Effect.gen(function* () {
        const db = join(mkdtempSync(join(tmpdir(), "lash-conflict-")), "lash.db");
        const gateA = yield* Deferred.make<void>();
        const gateB = yield* Deferred.make<void>();
        const startedA = yield* Deferred.make<void>();
        const startedB = yield* Deferred.make<void>();
        const a = yield* Layer.build(runtimeOn(db, gatedProvider(gateA, startedA, "from A")));
        const b = yield* Layer.build(runtimeOn(db, gatedProvider(gateB, startedB, "from B")));
        const rtA = a.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
        const rtB = b.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
        const session = yield* rtA.createSession({ model: "test/model" });

        const turnA = yield* Effect.fork(rtA.turn(session.id, { text: "A asks" }, { resumePending: false }));
        const turnB = yield* Effect.fork(rtB.turn(session.id, { text: "B asks" }, { resumePending: false }));
        yield* Deferred.await(startedA);
        yield* Deferred.await(startedB);
        yield* Deferred.succeed(gateA, undefined);
        const resultA = yield* Effect.either(turnA.await.pipe(Effect.flatten));
        yield* Deferred.succeed(gateB, undefined);
        const resultB = yield* Effect.either(turnB.await.pipe(Effect.flatten));

        expect(Either.isRight(resultA)).toBe(true);
        expect(Either.isLeft(resultB)).toBe(true);
        if (Either.isLeft(resultB)) {
          const err = resultB.left;
          expect(err._tag).toBe("TurnError");
          expect(err._tag === "TurnError" && err.reason).toBe("conflict");
          const texts = (err._tag === "TurnError" ? (err.messages ?? []) : []).map((m) =>
            m.parts.map((p) => (p.type === "text" ? p.text : "")).join(""),
          );
          expect(texts).toEqual(["B asks", "from B"]);
        }
        // the winner's turn is intact and visible to both runtimes
        const viewA = yield* rtA.readView(session.id);
        const viewB = yield* rtB.readView(session.id);
        expect(viewA.map((m) => m.role)).toEqual(["user", "assistant"]);
        expect(viewB).toEqual(viewA);
        expect((yield* rtB.getSession(session.id)).headRevision).toBe(1);
      }).pipe(Effect.scoped),
  );
});
