import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import type * as Scope from "effect/Scope";
import {
  describeHolder,
  type LashRuntimeShape,
  type RuntimeOptions,
  TurnError,
  type TurnOptions,
} from "./runtime-api.ts";
import type { SessionNotFound, SessionStoreShape } from "./store.ts";

/** A pid of this host that no longer exists. EPERM: it exists (another user's). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A store failure as the turn's typed error (a missing session stays `SessionNotFound`). */
export const storeFailure =
  (sessionId: string) =>
  (e: {
    readonly _tag: string;
    readonly message: string;
  }): Effect.Effect<never, TurnError | SessionNotFound> =>
    e._tag === "SessionNotFound"
      ? Effect.fail(e as SessionNotFound)
      : Effect.fail(new TurnError({ sessionId, reason: "store", message: e.message }));

export interface Leases {
  readonly acquire: LashRuntimeShape["acquireLease"];
  readonly release: LashRuntimeShape["releaseLease"];
  /** Run `effect` holding the session's lease (taken first, released after, also on interruption). */
  readonly hold: <A, E, R>(
    sessionId: string,
    o: Pick<TurnOptions, "wait" | "onLeaseWait">,
    effect: Effect.Effect<A, E, R>,
  ) => Effect.Effect<A, E | TurnError | SessionNotFound, R>;
}

/**
 * The session lease of one runtime: one writer per session across processes. A
 * compare-and-set in the store, renewed by a heartbeat fiber while held (counted:
 * nested holders share it), given back when the last holder ends or the runtime closes.
 */
export const makeLeases = (
  store: SessionStoreShape,
  options: RuntimeOptions,
  lockOf: (sessionId: string) => Effect.Effect<Effect.Semaphore>,
): Effect.Effect<Leases, never, Scope.Scope> =>
  Effect.gen(function* () {
    const runtimeScope = yield* Effect.scope;
    const leaseTtl = options.lease?.ttlMs ?? 30_000;
    const heartbeatMs = options.lease?.heartbeatMs ?? Math.max(1, Math.floor(leaseTtl / 3));
    const pollMs = options.lease?.pollMs ?? 250;
    const me = { pid: options.lease?.pid ?? process.pid, host: options.lease?.host ?? hostname() };
    const isAlive = options.lease?.isAlive ?? pidAlive;
    /** Unique per runtime: two runtimes of one process are two writers. */
    const holderId = `${me.host}:${me.pid}:${randomUUID()}`;
    const held = new Map<string, { count: number; readonly heartbeat: Fiber.RuntimeFiber<void> }>();

    /** One compare-and-set; a holder on this host whose pid is gone is replaced at once. */
    const tryLease = (sessionId: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis;
        const request = { sessionId, holder: holderId, pid: me.pid, host: me.host, now, ttlMs: leaseTtl };
        const first = yield* store.acquireLease(request);
        if (first.acquired || first.lease.host !== me.host || isAlive(first.lease.pid)) return first;
        return yield* store.acquireLease({ ...request, replacing: first.lease.holder });
      }).pipe(Effect.catchAll(storeFailure(sessionId)));

    const heartbeat = (sessionId: string): Effect.Effect<void> =>
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(heartbeatMs),
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.ignore(store.renewLease(sessionId, holderId, now, leaseTtl)),
          ),
        ),
      );

    const acquire: Leases["acquire"] = (sessionId, o = {}) =>
      Effect.gen(function* () {
        const lock = yield* lockOf(sessionId);
        let announced = false;
        for (;;) {
          // the compare-and-set and the bookkeeping happen together or not at all
          const got = yield* lock.withPermits(1)(
            Effect.uninterruptible(
              Effect.gen(function* () {
                const mine = held.get(sessionId);
                if (mine) {
                  mine.count++;
                  return undefined;
                }
                const r = yield* tryLease(sessionId);
                if (!r.acquired) return r.lease;
                // forked from an uninterruptible region: the heartbeat itself must stay interruptible
                const fiber = yield* Effect.forkIn(Effect.interruptible(heartbeat(sessionId)), runtimeScope);
                held.set(sessionId, { count: 1, heartbeat: fiber });
                return undefined;
              }),
            ),
          );
          if (got === undefined) return;
          const now = yield* Clock.currentTimeMillis;
          if (!o.wait) {
            return yield* Effect.fail(
              new TurnError({
                sessionId,
                reason: "busy",
                holder: got,
                message:
                  `session ${sessionId} is in use by another lash process (${describeHolder(got, now)}). ` +
                  "Wait for it to finish (wait option / --wait), or watch it instead of writing to it. " +
                  `If that process is gone, its lease expires ${Math.max(0, Math.ceil((got.expiresAt - now) / 1000))} s after its last heartbeat.`,
              }),
            );
          }
          if (!announced) {
            announced = true;
            o.onLeaseWait?.(got);
          }
          yield* Effect.sleep(pollMs);
        }
      });

    const release: Leases["release"] = (sessionId) =>
      Effect.flatMap(lockOf(sessionId), (lock) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const mine = held.get(sessionId);
            if (!mine) return;
            mine.count--;
            if (mine.count > 0) return;
            held.delete(sessionId);
            yield* Fiber.interrupt(mine.heartbeat);
            yield* Effect.ignore(store.releaseLease(sessionId, holderId));
          }),
        ),
      );

    const hold: Leases["hold"] = (sessionId, o, effect) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(
          restore(acquire(sessionId, o)),
          restore(effect).pipe(Effect.ensuring(release(sessionId))),
        ),
      );

    // leases still held when the runtime closes (a host that exits mid-turn) are given back
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        [...held.entries()],
        ([sessionId, h]) =>
          Effect.zipRight(
            Fiber.interrupt(h.heartbeat),
            Effect.ignore(store.releaseLease(sessionId, holderId)),
          ),
        { discard: true },
      ).pipe(Effect.zipRight(Effect.sync(() => held.clear()))),
    );
    return { acquire, release, hold };
  });
