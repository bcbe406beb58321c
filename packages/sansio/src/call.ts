import * as Clock from "effect/Clock";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as FiberId from "effect/FiberId";
import * as Runtime from "effect/Runtime";
import * as Stream from "effect/Stream";
import { LlmError, type LlmEvent } from "./llm.ts";

/** How a model call is driven without a `Stream`. */
export interface LlmCallOptions {
  /** Aborting it ends the call early and successfully: the caller keeps what arrived (cancellation). */
  readonly signal?: AbortSignal | undefined;
  /** Epoch ms (the Effect `Clock`'s time) by which the call must have finished, else it fails with a `timeout`. */
  readonly deadlineAt?: number | undefined;
}

/**
 * A model call as one effect: events are handed to `onEvent` synchronously as they
 * are parsed, with no per-event effect work. This is the per-round-trip path the host
 * uses; a provider's `Stream` is the same call seen as a stream (see `streamOfCall`).
 */
export type LlmCall = (
  onEvent: (event: LlmEvent) => void,
  options: LlmCallOptions,
) => Effect.Effect<void, LlmError>;

/** Where a stream made by `withCall` keeps its call (a property: cheaper than a WeakMap per request). */
const CALL: unique symbol = Symbol.for("@lash/sansio/LlmCall");

const liveClock: Clock.Clock = Effect.runSync(Effect.clock);

/**
 * True for Effect's default clock. Watchdogs on the hot path use plain timers under it
 * and a fiber sleeping on the clock otherwise (`TestClock`), so tests keep exact control.
 */
export const isLiveClock = (clock: Clock.Clock): boolean => clock === liveClock;

/**
 * Runs `f` after `ms` on `clock`, returning its cancel: a timer on the live clock, a fiber
 * sleeping on any other clock (forked in `rt`, which that case needs).
 */
export function afterOn(
  clock: Clock.Clock,
  rt: Runtime.Runtime<never> | undefined,
  ms: number,
  f: () => void,
): () => void {
  if (isLiveClock(clock) || rt === undefined) {
    const t = setTimeout(f, ms);
    return () => clearTimeout(t);
  }
  const fiber = Runtime.runFork(rt)(Effect.zipRight(Effect.sleep(Duration.millis(ms)), Effect.sync(f)));
  return () => fiber.unsafeInterruptAsFork(FiberId.none);
}

/** Marks `stream` as the stream view of `call`, so that `callOf(stream)` finds the direct path. */
export function withCall<S extends Stream.Stream<LlmEvent, LlmError>>(stream: S, call: LlmCall): S {
  (stream as unknown as { [CALL]: LlmCall })[CALL] = call;
  return stream;
}

/** Resolves when `signal` aborts (never when there is none). */
export const abortWait = (signal: AbortSignal | undefined): Effect.Effect<void> =>
  signal === undefined
    ? Effect.never
    : Effect.async<void>((resume) => {
        if (signal.aborted) return resume(Effect.void);
        const on = () => resume(Effect.void);
        signal.addEventListener("abort", on, { once: true });
        return Effect.sync(() => signal.removeEventListener("abort", on));
      });

/**
 * The call behind a provider's stream: the direct path when the stream was made by
 * `withCall` / `streamOfCall` (the built-in adapters, the retry layer), otherwise the
 * stream consumed event by event (third-party providers), with the same signal and deadline.
 */
export function callOf(stream: Stream.Stream<LlmEvent, LlmError>): LlmCall {
  const direct = (stream as unknown as { [CALL]?: LlmCall })[CALL];
  if (direct) return direct;
  return (onEvent, options) => {
    const consume: Effect.Effect<void, LlmError> = Stream.runForEach(stream, (e) =>
      Effect.sync(() => onEvent(e)),
    );
    const run = options.signal ? Effect.raceFirst(consume, abortWait(options.signal)) : consume;
    const deadlineAt = options.deadlineAt;
    if (deadlineAt === undefined) return run;
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.timeoutFail(run, {
        duration: Math.max(0, deadlineAt - now),
        onTimeout: () => deadlineError("model call"),
      }),
    );
  };
}

function deadlineError(what: string): LlmError {
  return new LlmError({
    kind: "timeout",
    message: `${what}: no complete answer before the deadline of this model call`,
    retryable: false,
  });
}

/**
 * The stream view of a call. Events parsed in one macrotask enter the stream as one
 * chunk (one wake-up of the consumer, not one per event); closing the stream interrupts
 * the call (which aborts its request).
 */
export function streamOfCall(call: LlmCall): Stream.Stream<LlmEvent, LlmError> {
  // built when run: the host takes the call and never runs the stream
  const stream = Stream.suspend(() => asyncStream(call));
  return withCall(stream, call);
}

function asyncStream(call: LlmCall): Stream.Stream<LlmEvent, LlmError> {
  return Stream.asyncPush<LlmEvent, LlmError>(
    (emit) =>
      Effect.suspend(() => {
        let buffer: LlmEvent[] = [];
        let scheduled = false;
        const flush = (): void => {
          scheduled = false;
          if (buffer.length === 0) return;
          const batch = buffer;
          buffer = [];
          emit.array(batch);
        };
        const push = (e: LlmEvent): void => {
          buffer.push(e);
          if (!scheduled) {
            scheduled = true;
            setImmediate(flush);
          }
        };
        return Effect.forkScoped(
          Effect.matchEffect(call(push, {}), {
            onFailure: (e) =>
              Effect.sync(() => {
                flush();
                emit.fail(e);
              }),
            onSuccess: () =>
              Effect.sync(() => {
                flush();
                emit.end();
              }),
          }),
        );
      }),
    { bufferSize: "unbounded" },
  );
}
