import type { LlmCall, LlmProvider, LlmRequest } from "@lash/sansio";
import { abortWait, callOf, LlmError, llmErrorInfo, streamOfCall } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Random from "effect/Random";
import { formatMs } from "./errors.ts";
import { RATE_LIMIT_WAIT } from "./ratelimit.ts";
import { type OutputValidator, withOutputCheck } from "./structured.ts";

/** How `withRetry` retries. All times in milliseconds. */
export interface RetryPolicy {
  /** Attempts in all, the first included (429 waits with Retry-After within the throttle budget are not counted). Default 4. */
  readonly maxAttempts: number;
  /** First backoff delay; doubles per counted attempt. Default 2000. */
  readonly baseDelayMs: number;
  /** Backoff cap. Default 10000. */
  readonly maxDelayMs: number;
  /** Random extra delay as a fraction of the backoff (0 = none). Default 0.2. */
  readonly jitter: number;
  /** A single Retry-After wait is capped at this. Default 600000 (the deadline decides first). */
  readonly retryAfterCapMs: number;
  /** Total time spent waiting on Retry-After (each wait charged ≥ 1 s) before 429s count as attempts. Default 90000. */
  readonly throttleBudgetMs: number;
  /**
   * Total time for one model call, every attempt and wait included. A call still running
   * at the deadline fails with a `timeout`; a wait that would end past it (backoff or
   * Retry-After) fails at once, saying how long the server asked to wait. Default 600000; 0 = none.
   */
  readonly deadlineMs: number;
}

export const defaultDeadlineMs = 10 * 60_000;

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 2000,
  maxDelayMs: 10_000,
  jitter: 0.2,
  retryAfterCapMs: defaultDeadlineMs,
  throttleBudgetMs: 90_000,
  deadlineMs: defaultDeadlineMs,
};

interface State {
  /** Ordinal of the current try: every request made, throttled ones included. */
  readonly tries: number;
  /** Counted attempts so far, the current one included. */
  readonly attempts: number;
  readonly throttleSpentMs: number;
}

type Decision =
  | { readonly retry: false; readonly error: LlmError }
  | {
      readonly retry: true;
      readonly delayMs: number;
      readonly next: State;
      /** False for a Retry-After wait that does not count against `maxAttempts`. */
      readonly counted: boolean;
    };

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** `HH:MM` (UTC) of an epoch time, for "try again at …". */
function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")} UTC`;
}

/** Why an attempt failed, in a few words: `429 rate limited`, `connection reset`, `truncated stream`. */
export function retryReason(error: LlmError): string {
  const words: Record<string, string> = {
    rateLimited: "rate limited",
    overloaded: "overloaded",
    server: "server error",
    network: "connection error",
    timeout: "timed out",
    streamIncomplete: "truncated stream",
  };
  let what = words[error.kind] ?? error.kind;
  if (error.kind === "network" && /ECONNREFUSED|connection refused/i.test(error.message))
    what = "connection refused";
  else if (error.kind === "network" && /reset|terminated|other side closed|socket/i.test(error.message))
    what = "connection reset";
  else if (error.kind === "streamIncomplete" && /malformed/i.test(error.message)) what = "malformed stream";
  else if (error.kind === "timeout" && /stalled|no data/i.test(error.message))
    what = "no data (idle timeout)";
  return error.status !== undefined ? `${error.status} ${what}` : what;
}

function withMessage(error: LlmError, message: string, retryable = error.retryable): LlmError {
  return new LlmError({ ...llmErrorInfo(error), message, retryable });
}

function decide(
  error: LlmError,
  s: State,
  p: RetryPolicy,
  random: number,
  now: number,
  deadlineAt: number,
): Decision {
  const gaveUp = `gave up after ${plural(s.tries, "attempt")}`;
  if (!error.retryable)
    return { retry: false, error: s.tries > 1 ? withMessage(error, `${error.message} (${gaveUp})`) : error };
  const remaining = deadlineAt - now;
  const after = error.retryAfterMs;
  if (after !== undefined && after > remaining) {
    const what = error.kind === "rateLimited" ? "rate limited" : retryReason(error);
    return {
      retry: false,
      error: withMessage(
        error,
        `${error.message} — ${what}: the server asks to retry after ${formatMs(after)}, beyond the ${formatMs(p.deadlineMs)} deadline of this model call; try again at ${clockTime(now + after)} or raise the deadline (lash --request-deadline, config requestDeadlineMs) (${gaveUp})`,
        false,
      ),
    };
  }
  let delayMs: number;
  let next: State;
  let counted = true;
  if (
    error.kind === "rateLimited" &&
    after !== undefined &&
    s.throttleSpentMs + Math.max(1000, Math.min(after, p.retryAfterCapMs)) <= p.throttleBudgetMs
  ) {
    delayMs = Math.min(after, p.retryAfterCapMs);
    counted = false;
    next = {
      tries: s.tries + 1,
      attempts: s.attempts,
      throttleSpentMs: s.throttleSpentMs + Math.max(1000, delayMs),
    };
  } else {
    if (s.attempts >= p.maxAttempts)
      return { retry: false, error: withMessage(error, `${error.message} (${gaveUp})`) };
    const backoff = Math.min(p.baseDelayMs * 2 ** (s.attempts - 1), p.maxDelayMs);
    let delay = backoff + backoff * p.jitter * random;
    // A server-provided wait (503 with Retry-After, 429 beyond the budget) is honoured when longer.
    if (after !== undefined) delay = Math.max(delay, Math.min(after, p.retryAfterCapMs));
    delayMs = Math.round(delay);
    next = { tries: s.tries + 1, attempts: s.attempts + 1, throttleSpentMs: s.throttleSpentMs };
  }
  if (delayMs >= remaining)
    return {
      retry: false,
      error: withMessage(
        error,
        `${error.message} (${gaveUp}: the next try, in ${formatMs(delayMs)}, would pass the ${formatMs(p.deadlineMs)} deadline of this model call)`,
      ),
    };
  return { retry: true, delayMs, next, counted };
}

/**
 * The one retry layer. 429 with Retry-After waits without consuming an attempt
 * (within a total wait budget); 5xx, overload, connection errors (refused, reset),
 * idle timeouts, malformed streams and streams that end without a finish are retried
 * with exponential backoff and jitter; everything else fails at once. The whole call,
 * every attempt and wait included, is bounded by `deadlineMs`; a wait that would end
 * past it fails at once. Before each retry it emits `retry` (attempt k of n, why, how
 * long) and then `attemptReset` (readers drop what the failed attempt streamed).
 * "gave up after N attempts" counts every request made. Waits go through Effect's
 * `Clock` (`TestClock` in tests), jitter through `Random`.
 *
 * A request with an `output` schema is checked on top (`withOutputCheck`): a finished reply
 * that does not match is retried once with the validation problems for the model, then fails
 * with `outputMismatch`. `validateOutput` is the validator (default: `defaultOutputValidator`).
 */
export function withRetry(
  provider: LlmProvider,
  policy: Partial<RetryPolicy> = {},
  options: { readonly validateOutput?: OutputValidator } = {},
): LlmProvider {
  const p: RetryPolicy = { ...defaultRetryPolicy, ...policy };
  const deadline = p.deadlineMs > 0 ? p.deadlineMs : Number.POSITIVE_INFINITY;
  const incomplete = () =>
    new LlmError({
      kind: "streamIncomplete",
      message: `${provider.name}: the stream ended without a finish (truncated stream)`,
      provider: provider.name,
      retryable: true,
    });
  const deadlineError = (tries: number) =>
    new LlmError({
      kind: "timeout",
      message: `${provider.name}: no complete answer within the ${formatMs(p.deadlineMs)} deadline of this model call (${plural(tries, "attempt")}) — raise it with lash --request-deadline or config requestDeadlineMs`,
      provider: provider.name,
      retryable: false,
    });
  const call =
    (request: LlmRequest): LlmCall =>
    (onEvent, options) =>
      Effect.gen(function* () {
        const start = yield* Clock.currentTimeMillis;
        const deadlineAt = Math.min(start + deadline, options.deadlineAt ?? Number.POSITIVE_INFINITY);
        const signal = options.signal;
        const inner = {
          ...(signal ? { signal } : {}),
          ...(Number.isFinite(deadlineAt) ? { deadlineAt } : {}),
        };
        let s: State = { tries: 1, attempts: 1, throttleSpentMs: 0 };
        for (;;) {
          let finished = false;
          const r = yield* Effect.either(
            callOf(provider.stream(request))((e) => {
              if (e.type === "finish") finished = true;
              // a rate-limiter wait inside this attempt is numbered as this try
              onEvent(
                e.type === "retry" && e.reason === RATE_LIMIT_WAIT && e.attempt !== s.tries
                  ? { ...e, attempt: s.tries }
                  : e,
              );
            }, inner),
          );
          if (signal?.aborted) return;
          if (Either.isRight(r) && finished) return;
          const error = Either.isLeft(r) ? r.left : incomplete();
          const now = yield* Clock.currentTimeMillis;
          if (now >= deadlineAt) return yield* Effect.fail(deadlineError(s.tries));
          const random = p.jitter > 0 ? yield* Random.next : 0;
          const d = decide(error, s, p, random, now, deadlineAt);
          if (!d.retry) return yield* Effect.fail(d.error);
          onEvent({
            type: "retry",
            attempt: d.next.tries,
            delayMs: d.delayMs,
            error: llmErrorInfo(error),
            reason: retryReason(error),
            ...(d.counted ? { maxAttempts: p.maxAttempts + (d.next.tries - d.next.attempts) } : {}),
          });
          onEvent({ type: "attemptReset", attempt: d.next.tries });
          const wait = Effect.sleep(Duration.millis(d.delayMs));
          yield* signal ? Effect.raceFirst(wait, abortWait(signal)) : wait;
          if (signal?.aborted) return;
          s = d.next;
        }
      });
  return withOutputCheck(
    { name: provider.name, stream: (request) => streamOfCall(call(request)) },
    options.validateOutput,
  );
}
