import { hashValue, type Message, messageText } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import * as Stream from "effect/Stream";
import type { TurnActivity } from "../activity.ts";
import { storeFailure } from "../lease.ts";
import {
  type AbandonedTurn,
  type LashRuntimeShape,
  TurnError,
  type TurnInput,
  type TurnOptions,
  type TurnResult,
} from "../runtime-api.ts";
import type { PendingTurn, SessionNotFound } from "../store.ts";
import { compactEntry } from "./compact-entry.ts";
import { runLogical } from "./run.ts";
import type { RuntimeContext } from "./scope.ts";

type TurnEntries = Pick<
  LashRuntimeShape,
  "turn" | "startTurn" | "resumePending" | "abandonPending" | "compact"
>;

/**
 * How a turn is entered: under the session's lock and lease, a cut-off turn first
 * (resumed — counted against the poison guard — or refused), then the new one;
 * interrupting the caller signals cancel and waits for the commit.
 */
export function turnEntries(rt: RuntimeContext): TurnEntries {
  const { store, leases, runtimeScope, maxResumeAttempts } = rt;
  const withLease = leases.hold;
  const inputMessages = (input: TurnInput): Message[] => {
    const out: Message[] = [...(input.messages ?? [])];
    if (input.text !== undefined)
      out.push({ id: "", role: "user", parts: [{ type: "text", text: input.text }] });
    return out;
  };

  const inputText = (pending: PendingTurn): string =>
    ((pending.input as { messages?: Message[] } | undefined)?.messages ?? [])
      .filter((m) => m.role === "user")
      .map(messageText)
      .join("\n")
      .trim();

  /** Resume the cut-off turn, if any (under the lock and lease). `onResume` is told before it runs. */
  const resumeLocked = (
    sessionId: string,
    options: TurnOptions,
    cancel: Deferred.Deferred<void>,
    onResume?: () => void,
  ) =>
    Effect.gen(function* () {
      const pending = yield* store.pendingTurn(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
      if (!pending) return undefined;
      // the poison-turn guard: every resume is counted before it runs, so one that crashes stays counted
      const attempts = pending.resumeAttempts ?? 0;
      if (attempts >= maxResumeAttempts) {
        return yield* Effect.fail(
          new TurnError({
            sessionId,
            reason: "poisoned",
            pendingTurnId: pending.turnId,
            resumeAttempts: attempts,
            message:
              `session ${sessionId}: the cut-off turn ${pending.turnId} was resumed ${attempts} times and ` +
              "the process ended each time before it finished, so it is not resumed again automatically. " +
              "Abandon it (it stays visible as abandoned) or fork the session from before it.",
          }),
        );
      }
      yield* store
        .countResumeAttempt(sessionId, pending.turnId)
        .pipe(Effect.catchAll(storeFailure(sessionId)));
      onResume?.();
      const stored = pending.input as { messages?: Message[] } | undefined;
      return yield* runLogical(rt, { sessionId, input: stored?.messages ?? [], options, pending, cancel });
    });

  /** A new turn: first the cut-off one (resumed, or refused when `resumePending: false`). */
  const newTurnLocked = (
    sessionId: string,
    input: TurnInput,
    options: TurnOptions,
    cancel: Deferred.Deferred<void>,
    onResume?: () => void,
  ) =>
    Effect.gen(function* () {
      if (options.resumePending !== false) yield* resumeLocked(sessionId, options, cancel, onResume);
      else {
        const pending = yield* store.pendingTurn(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
        if (pending) {
          const text = inputText(pending);
          return yield* Effect.fail(
            new TurnError({
              sessionId,
              reason: "pendingTurn",
              pendingTurnId: pending.turnId,
              resumeAttempts: pending.resumeAttempts ?? 0,
              message:
                `session ${sessionId} has a turn that was cut off before it finished (${pending.turnId}` +
                `${text ? `: "${text.length > 80 ? `${text.slice(0, 79)}…` : text}"` : ""}). ` +
                "Resume it or abandon it before starting a new turn.",
            }),
          );
        }
      }
      return yield* runLogical(rt, { sessionId, input: inputMessages(input), options, cancel });
    });

  const withLock = <A, E, R>(sessionId: string, effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(rt.local(sessionId), (l) => l.lock.withPermits(1)(effect));

  /** Run `body` with a cancel signal; interrupting the caller signals cancel and waits for the commit. */
  const cancellable = <A, E>(body: (cancel: Deferred.Deferred<void>) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const cancel = yield* Deferred.make<void>();
      const fiber = yield* Effect.forkIn(body(cancel), runtimeScope);
      return yield* Fiber.join(fiber).pipe(
        Effect.onInterrupt(() => Effect.zipRight(Deferred.succeed(cancel, undefined), Fiber.await(fiber))),
      );
    });

  const turn: LashRuntimeShape["turn"] = (sessionId, input, options = {}) =>
    cancellable((cancel) =>
      withLock(sessionId, withLease(sessionId, options, newTurnLocked(sessionId, input, options, cancel))),
    );

  const resumePending: LashRuntimeShape["resumePending"] = (sessionId, options = {}) =>
    cancellable((cancel) =>
      withLock(sessionId, withLease(sessionId, options, resumeLocked(sessionId, options, cancel))),
    );

  const abandonPending: LashRuntimeShape["abandonPending"] = (sessionId, o = {}) =>
    withLock(
      sessionId,
      withLease(
        sessionId,
        { ...(o.wait !== undefined ? { wait: o.wait } : {}) },
        Effect.gen(function* () {
          const fail = storeFailure(sessionId);
          const pending = yield* store.pendingTurn(sessionId).pipe(Effect.catchAll(fail));
          if (!pending) return undefined;
          const session = yield* store.getSession(sessionId).pipe(Effect.catchAll(fail));
          const entries = yield* store.journalForTurn(sessionId, pending.turnId).pipe(Effect.catchAll(fail));
          const completedSteps = entries.filter((e) => e.status === "completed").length;
          const now = yield* Clock.currentTimeMillis;
          const input = inputText(pending);
          const nodeId = `${pending.turnId}.abandoned`;
          const payload = {
            type: "turnAbandoned",
            turnId: pending.turnId,
            input,
            reason: o.reason ?? "abandoned by the user",
            startedAt: pending.startedAt,
            completedSteps,
            resumeAttempts: pending.resumeAttempts ?? 0,
          };
          const commit = yield* store
            .commit({
              sessionId,
              turnId: pending.turnId,
              hash: hashValue({ turnId: pending.turnId, abandoned: payload }),
              expectedRevision: session.headRevision,
              nodes: [
                {
                  id: nodeId,
                  sessionId,
                  parentId: session.leafId,
                  frameId: session.frameId,
                  kind: "protocol",
                  turnId: pending.turnId,
                  payload,
                  createdAt: now,
                },
              ],
              leafId: nodeId,
              usage: [],
              updatedAt: now,
            })
            .pipe(Effect.catchAll(fail));
          return {
            sessionId,
            turnId: pending.turnId,
            input,
            completedSteps,
            resumeAttempts: pending.resumeAttempts ?? 0,
            headRevision: commit.headRevision,
          } satisfies AbandonedTurn;
        }),
      ),
    );

  const startTurn: LashRuntimeShape["startTurn"] = (sessionId, input, options = {}) =>
    Effect.gen(function* () {
      const l = yield* rt.local(sessionId);
      const cancel = yield* Deferred.make<void>();
      const from = l.hub.lastSeq;
      // the turn's events stay kept until the caller's scope closes: its stream is whole however late it is read
      const unpin = l.hub.pin(from);
      yield* Effect.addFinalizer(() => Effect.sync(unpin));
      const resultDeferred = yield* Deferred.make<TurnResult, TurnError | SessionNotFound>();
      // a cut-off turn is finished first: then the stream ends after the second turn, not the first
      let turnsLeft = 1;
      const body = withLock(
        sessionId,
        withLease(
          sessionId,
          options,
          newTurnLocked(sessionId, input, options, cancel, () => {
            turnsLeft = 2;
          }),
        ),
      ).pipe(
        Effect.tapError((e) => l.hub.publish("", { type: "error", kind: "turnFailed", message: e.message })),
      );
      yield* Effect.forkIn(Effect.intoDeferred(body, resultDeferred), runtimeScope);
      const ends = (e: TurnActivity) => {
        if (e.type === "error" && e.kind === "turnFailed") return true;
        if (e.type === "turnFinished" && e.outcome.type !== "frameSwitch") turnsLeft--;
        return turnsLeft === 0;
      };
      return {
        // pinned: `ActivityExpired` only when the turn outgrew the hub's capacity before it was read
        events: Stream.suspend(() => l.hub.observe(from).pipe(Stream.takeUntil(ends), Stream.orDie)),
        result: Deferred.await(resultDeferred),
        cancel: Deferred.succeed(cancel, undefined).pipe(Effect.asVoid),
      };
    });

  const compact = compactEntry(rt, { cancellable, withLock, withLease, resumeLocked });

  return { turn, startTurn, resumePending, abandonPending, compact };
}
