// Two runtimes (two connections, two writers) on one session: the session
// lease lets one write at a time. The second is refused at once with a typed
// `busy` error naming the holder, or waits for it; nothing runs twice and no
// turn is lost. Also: the lease of a dead or silent holder is taken over.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "@effect/vitest";
import type { LlmEvent, LlmProvider } from "@lash/sansio";
import { Deferred, Effect, Either, Layer, Stream, TestClock } from "effect";
import {
  IdGenerator,
  LashRuntime,
  type LeaseOptions,
  LlmProviders,
  ModelCatalog,
  SessionStore,
  SqliteStore,
} from "../src/index.ts";

function gatedProvider(
  gate: Deferred.Deferred<void>,
  started: Deferred.Deferred<void>,
  text: string,
): LlmProvider & { calls: number } {
  const events: LlmEvent[] = [
    { type: "textDelta", text },
    { type: "usage", usage: { input: 10, output: 2 } },
    { type: "finish", reason: "stop" },
  ];
  const provider = {
    name: "gated",
    calls: 0,
    stream: () =>
      Stream.fromEffect(
        Effect.sync(() => {
          provider.calls++;
        }).pipe(Effect.zipRight(Deferred.succeed(started, undefined)), Effect.zipRight(Deferred.await(gate))),
      ).pipe(Stream.flatMap(() => Stream.fromIterable(events))),
  };
  return provider;
}

const runtimeOn = (filename: string, provider: LlmProvider, lease?: LeaseOptions) =>
  LashRuntime.layer(lease ? { lease } : {}).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SqliteStore.layer({ filename }),
        LlmProviders.single(provider),
        IdGenerator.Live,
        ModelCatalog.Empty,
      ),
    ),
  );

const dbFile = () => join(mkdtempSync(join(tmpdir(), "lash-lease-")), "lash.db");

describe("one writer per session (the lease)", () => {
  it.live(
    "a second runtime is refused at once, naming the holder; the first commits; the lease is released",
    () =>
      Effect.gen(function* () {
        const db = dbFile();
        const gateA = yield* Deferred.make<void>();
        const startedA = yield* Deferred.make<void>();
        const providerB = gatedProvider(yield* Deferred.make<void>(), yield* Deferred.make<void>(), "from B");
        const a = yield* Layer.build(runtimeOn(db, gatedProvider(gateA, startedA, "from A")));
        const b = yield* Layer.build(runtimeOn(db, providerB));
        const rtA = a.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
        const rtB = b.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
        const store = a.unsafeMap.get(SessionStore.key) as typeof SessionStore.Service;
        const session = yield* rtA.createSession({ model: "test/model" });

        const turnA = yield* Effect.fork(rtA.turn(session.id, { text: "A asks" }));
        yield* Deferred.await(startedA);
        const lease = yield* store.getLease(session.id);
        expect(lease).toMatchObject({ pid: process.pid });

        // B: refused before anything runs, with the holder in the error
        const refused = yield* Effect.either(rtB.turn(session.id, { text: "B asks" }));
        expect(Either.isLeft(refused)).toBe(true);
        if (Either.isLeft(refused) && refused.left._tag === "TurnError") {
          expect(refused.left.reason).toBe("busy");
          expect(refused.left.holder?.holder).toBe(lease?.holder);
          expect(refused.left.message).toContain(`pid ${process.pid} on ${lease?.host}`);
          expect(refused.left.message).toContain(session.id);
        } else expect.unreachable("expected a busy TurnError");
        expect(providerB.calls).toBe(0);
        // B's refusal did not disturb A's pending turn
        expect((yield* store.pendingTurn(session.id))?.input).toBeDefined();

        yield* Deferred.succeed(gateA, undefined);
        const resultA = yield* Effect.flatten(turnA.await);
        expect(resultA.text).toBe("from A");
        expect(yield* store.getLease(session.id)).toBeUndefined();
        expect((yield* rtB.readView(session.id)).map((m) => m.role)).toEqual(["user", "assistant"]);
      }).pipe(Effect.scoped),
  );

  it.live("with wait, the second runtime runs after the first: both turns land once, in order", () =>
    Effect.gen(function* () {
      const db = dbFile();
      const gateA = yield* Deferred.make<void>();
      const startedA = yield* Deferred.make<void>();
      const gateB = yield* Deferred.make<void>();
      const startedB = yield* Deferred.make<void>();
      yield* Deferred.succeed(gateB, undefined);
      const providerB = gatedProvider(gateB, startedB, "from B");
      const a = yield* Layer.build(runtimeOn(db, gatedProvider(gateA, startedA, "from A")));
      const b = yield* Layer.build(runtimeOn(db, providerB, { pollMs: 20 }));
      const rtA = a.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
      const rtB = b.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
      const session = yield* rtA.createSession({ model: "test/model" });

      const turnA = yield* Effect.fork(rtA.turn(session.id, { text: "A asks" }));
      yield* Deferred.await(startedA);
      const waiting = yield* Deferred.make<number>();
      const turnB = yield* Effect.fork(
        rtB.turn(
          session.id,
          { text: "B asks" },
          { wait: true, onLeaseWait: (h) => Effect.runSync(Deferred.succeed(waiting, h.pid)) },
        ),
      );
      expect(yield* Deferred.await(waiting)).toBe(process.pid);
      expect(providerB.calls).toBe(0);
      yield* Deferred.succeed(gateA, undefined);
      expect((yield* Effect.flatten(turnA.await)).headRevision).toBe(1);
      const resultB = yield* Effect.flatten(turnB.await);
      expect(resultB.headRevision).toBe(2);
      expect(providerB.calls).toBe(1);
      const texts = (yield* rtA.readView(session.id)).map((m) =>
        m.parts.map((p) => (p.type === "text" ? p.text : "")).join(""),
      );
      expect(texts).toEqual(["A asks", "from A", "B asks", "from B"]);
    }).pipe(Effect.scoped),
  );

  it.live("a holder on this host whose process is gone is replaced at once", () =>
    Effect.gen(function* () {
      const db = dbFile();
      const gate = yield* Deferred.make<void>();
      yield* Deferred.succeed(gate, undefined);
      const a = yield* Layer.build(runtimeOn(db, gatedProvider(gate, yield* Deferred.make<void>(), "ok")));
      const rt = a.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
      const store = a.unsafeMap.get(SessionStore.key) as typeof SessionStore.Service;
      const session = yield* rt.createSession({ model: "test/model" });
      // a real pid that no longer exists: a child process that has exited
      const { spawnSync } = yield* Effect.promise(() => import("node:child_process"));
      const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
      const lease = yield* store.getLease(session.id);
      expect(lease).toBeUndefined();
      const { hostname } = yield* Effect.promise(() => import("node:os"));
      const now = Date.now();
      yield* store.acquireLease({
        sessionId: session.id,
        holder: "crashed-writer",
        pid: dead,
        host: hostname(),
        now,
        ttlMs: 3_600_000,
      });
      const r = yield* rt.turn(session.id, { text: "hi" });
      expect(r.text).toBe("ok");
    }).pipe(Effect.scoped),
  );
});

describe("lease expiry and heartbeat (TestClock)", () => {
  it.scoped("a silent holder on another host expires after the TTL; a live holder's heartbeat keeps it", () =>
    Effect.gen(function* () {
      const db = dbFile();
      const gate = yield* Deferred.make<void>();
      const started = yield* Deferred.make<void>();
      const lease: LeaseOptions = { ttlMs: 10_000, heartbeatMs: 1_000, pollMs: 500 };
      const a = yield* Layer.build(runtimeOn(db, gatedProvider(gate, started, "A"), lease));
      const rtA = a.unsafeMap.get(LashRuntime.key) as typeof LashRuntime.Service;
      const store = a.unsafeMap.get(SessionStore.key) as typeof SessionStore.Service;
      const s1 = yield* rtA.createSession({ model: "test/model" });
      const s2 = yield* rtA.createSession({ model: "test/model" });

      // s1: held by a process on another host that stopped heartbeating at t=0
      yield* store.acquireLease({
        sessionId: s1.id,
        holder: "elsewhere",
        pid: 1,
        host: "other-host",
        now: 0,
        ttlMs: 10_000,
      });
      const refused = yield* Effect.either(rtA.acquireLease(s1.id));
      expect(Either.isLeft(refused) && refused.left._tag === "TurnError" && refused.left.reason).toBe("busy");
      yield* TestClock.adjust(10_000);
      yield* rtA.acquireLease(s1.id);
      expect((yield* store.getLease(s1.id))?.pid).toBe(process.pid);
      yield* rtA.releaseLease(s1.id);
      expect(yield* store.getLease(s1.id)).toBeUndefined();

      // s2: A's turn holds it across many TTLs because the heartbeat renews it
      const turn = yield* Effect.fork(rtA.turn(s2.id, { text: "long" }));
      yield* Deferred.await(started);
      for (let i = 0; i < 30; i++) yield* TestClock.adjust(1_000);
      const now = yield* TestClock.currentTimeMillis;
      const held = yield* store.getLease(s2.id);
      expect(held?.pid).toBe(process.pid);
      expect(held!.expiresAt).toBeGreaterThan(now);
      // another writer is still refused after 30 s = 3 TTLs
      const other = yield* store.acquireLease({
        sessionId: s2.id,
        holder: "B",
        pid: 2,
        host: "h",
        now,
        ttlMs: 1,
      });
      expect(other.acquired).toBe(false);
      yield* Deferred.succeed(gate, undefined);
      yield* Effect.flatten(turn.await);
      expect(yield* store.getLease(s2.id)).toBeUndefined();
    }),
  );
});
