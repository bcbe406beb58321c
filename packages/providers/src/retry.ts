import type { LlmEvent, LlmProvider, LlmRequest } from "@lash/sansio";
import { LlmError, llmErrorInfo } from "@lash/sansio";
import { Chunk, Duration, Effect, Random, Stream } from "effect";

/** How `withRetry` retries. All times in milliseconds. */
export interface RetryPolicy {
  /** Attempts in all, the first included (429 waits with Retry-After are not counted). Default 4. */
  readonly maxAttempts: number;
  /** First backoff delay; doubles per counted attempt. Default 2000. */
  readonly baseDelayMs: number;
  /** Backoff cap. Default 10000. */
  readonly maxDelayMs: number;
  /** Random extra delay as a fraction of the backoff (0 = none). Default 0.2. */
  readonly jitter: number;
  /** A single Retry-After wait is capped at this. Default 60000. */
  readonly retryAfterCapMs: number;
  /** Total time spent waiting on Retry-After (each wait charged ≥ 1 s) before 429s count as attempts. Default 90000. */
  readonly throttleBudgetMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 2000,
  maxDelayMs: 10_000,
  jitter: 0.2,
  retryAfterCapMs: 60_000,
  throttleBudgetMs: 90_000,
};

interface State {
  /** Ordinal of the current try (every try, throttled ones included). */
  readonly tries: number;
  /** Counted attempts so far, the current one included. */
  readonly attempts: number;
  readonly throttleSpentMs: number;
}

type Decision =
  | { readonly retry: false; readonly error: LlmError }
  | { readonly retry: true; readonly delayMs: number; readonly next: State };

function decide(error: LlmError, s: State, p: RetryPolicy, random: number): Decision {
  if (!error.retryable) return { retry: false, error };
  const after = error.retryAfterMs;
  if (error.kind === "rateLimited" && after !== undefined) {
    const wait = Math.min(after, p.retryAfterCapMs);
    const charged = Math.max(1000, wait);
    if (s.throttleSpentMs + charged <= p.throttleBudgetMs)
      return {
        retry: true,
        delayMs: wait,
        next: { tries: s.tries + 1, attempts: s.attempts, throttleSpentMs: s.throttleSpentMs + charged },
      };
  }
  if (s.attempts >= p.maxAttempts)
    return {
      retry: false,
      error: new LlmError({
        ...llmErrorInfo(error),
        message: `${error.message} (gave up after ${s.attempts} attempt${s.attempts === 1 ? "" : "s"})`,
      }),
    };
  const backoff = Math.min(p.baseDelayMs * 2 ** (s.attempts - 1), p.maxDelayMs);
  let delay = backoff + backoff * p.jitter * random;
  // A server-provided wait (503 with Retry-After, 429 beyond the budget) is honoured when longer.
  if (after !== undefined) delay = Math.max(delay, Math.min(after, p.retryAfterCapMs));
  return {
    retry: true,
    delayMs: Math.round(delay),
    next: { tries: s.tries + 1, attempts: s.attempts + 1, throttleSpentMs: s.throttleSpentMs },
  };
}

/** Fails a stream that ends without a `finish` event (retryable `streamIncomplete`). */
function requireFinish(provider: LlmProvider, request: LlmRequest): Stream.Stream<LlmEvent, LlmError> {
  return Stream.suspend(() => {
    let finished = false;
    return provider.stream(request).pipe(
      Stream.mapChunks((chunk) => {
        if (!finished) for (const e of chunk) if (e.type === "finish") finished = true;
        return chunk;
      }),
      Stream.concat(
        Stream.suspend(() =>
          finished
            ? Stream.empty
            : Stream.fail(
                new LlmError({
                  kind: "streamIncomplete",
                  message: `${provider.name}: the stream ended without a finish`,
                  provider: provider.name,
                  retryable: true,
                }),
              ),
        ),
      ),
    );
  });
}

/**
 * The one retry layer. 429 with Retry-After waits without consuming an attempt
 * (within a total wait budget); 5xx, overload, connection resets, malformed streams
 * and streams that end without a finish are retried with exponential backoff and
 * jitter; everything else fails at once. Before each retry it emits `retry` and then
 * `attemptReset` (readers drop what the failed attempt streamed). Waits go through
 * Effect's `Clock` (`TestClock` in tests), jitter through `Random`.
 */
export function withRetry(provider: LlmProvider, policy: Partial<RetryPolicy> = {}): LlmProvider {
  const p: RetryPolicy = { ...defaultRetryPolicy, ...policy };
  const run = (request: LlmRequest, s: State): Stream.Stream<LlmEvent, LlmError> =>
    requireFinish(provider, request).pipe(
      Stream.catchAll((error) =>
        Stream.unwrap(
          Effect.gen(function* () {
            const random = p.jitter > 0 ? yield* Random.next : 0;
            const d = decide(error, s, p, random);
            if (!d.retry) return Stream.fail(d.error);
            const events: LlmEvent[] = [
              { type: "retry", attempt: d.next.tries, delayMs: d.delayMs, error: llmErrorInfo(error) },
              { type: "attemptReset", attempt: d.next.tries },
            ];
            return Stream.fromChunk(Chunk.unsafeFromArray(events)).pipe(
              Stream.concat(
                Stream.unwrap(Effect.as(Effect.sleep(Duration.millis(d.delayMs)), run(request, d.next))),
              ),
            );
          }),
        ),
      ),
    );
  return {
    name: provider.name,
    stream: (request) => run(request, { tries: 1, attempts: 1, throttleSpentMs: 0 }),
  };
}
