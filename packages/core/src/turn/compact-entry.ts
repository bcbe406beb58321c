// `runtime.compact`: a compaction-only turn, entered as every turn is (lock, lease, a cut-off
// turn first) by the helpers of entry.ts.
import type * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import { projectHistory } from "../compaction/compact.ts";
import { storeFailure } from "../lease.ts";
import type { CompactionResult, LashRuntimeShape, TurnError, TurnOptions } from "../runtime-api.ts";
import type { SessionNotFound } from "../store.ts";
import { runOneTurn } from "./run.ts";
import type { RuntimeContext } from "./scope.ts";

/** What entry.ts lends: its cancel, lock and lease wrappers and the resume of a cut-off turn. */
export interface EntryHelpers {
  readonly cancellable: <A, Err>(
    body: (cancel: Deferred.Deferred<void>) => Effect.Effect<A, Err>,
  ) => Effect.Effect<A, Err>;
  readonly withLock: <A, Err, R>(
    sessionId: string,
    effect: Effect.Effect<A, Err, R>,
  ) => Effect.Effect<A, Err, R>;
  readonly withLease: RuntimeContext["leases"]["hold"];
  readonly resumeLocked: (
    sessionId: string,
    options: TurnOptions,
    cancel: Deferred.Deferred<void>,
  ) => Effect.Effect<unknown, TurnError | SessionNotFound>;
}

/** A compaction-only turn: a cut-off turn first, then (when there is history since the last summary) the compaction. */
export const compactEntry =
  (rt: RuntimeContext, h: EntryHelpers): LashRuntimeShape["compact"] =>
  (sessionId, o = {}) => {
    const { cancellable, withLock, withLease, resumeLocked } = h;
    const store = rt.store;
    return cancellable((cancel) =>
      withLock(
        sessionId,
        withLease(
          sessionId,
          o,
          Effect.gen(function* () {
            const options: TurnOptions = o.onEvent ? { onEvent: o.onEvent } : {};
            yield* resumeLocked(sessionId, options, cancel);
            const session = yield* store.getSession(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
            const path = yield* store
              .projectionPath(sessionId, session.frameId)
              .pipe(Effect.catchAll(storeFailure(sessionId)));
            if (projectHistory(path, session.frameId).span.length === 0) return undefined;
            const r = yield* runOneTurn(rt, {
              sessionId,
              input: [],
              options,
              cancel,
              compact: o.instructions ? { instructions: o.instructions } : {},
            }).pipe(
              // a compaction that could not be made leaves nothing behind: no pending turn to resume
              Effect.tapError((e) =>
                e._tag === "TurnError" && e.reason === "compaction" && e.pendingTurnId
                  ? Effect.ignore(store.abandonTurn(sessionId, e.pendingTurnId))
                  : Effect.void,
              ),
            );
            if (!r.compaction) return undefined;
            return {
              sessionId,
              turnId: r.turnId,
              nodeId: r.compaction.nodeId,
              payload: r.compaction.payload,
              headRevision: r.headRevision,
              ...(r.handoff ? { successor: r.handoff.to } : {}),
            } satisfies CompactionResult;
          }),
        ),
      ),
    );
  };
