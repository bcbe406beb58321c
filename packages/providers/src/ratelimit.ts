import type { LlmCall, LlmEvent, LlmProvider, LlmRequest } from "@lash/sansio";
import { abortWait, callOf, LlmError, memoOf, sha256Hex, streamOfCall } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Context from "effect/Context";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import type * as Stream from "effect/Stream";
import { formatMs } from "./errors.ts";

/**
 * Client-side rate limits, per provider key, shared by every session in the process.
 *
 * 1. One `KeyLimiter` per provider + base URL + key hash (`sha256Hex`; the key itself is never
 *    kept) in a module-level registry, so every `createProvider` handle for that key — every
 *    session, every subagent — draws from the same budget.
 * 2. Two token buckets: requests and tokens. Their size and refill rate come from config
 *    (`rpm` / `tpm`, per minute) or are learned from the vendor's headers: OpenAI
 *    `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, Anthropic
 *    `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`. Each response bounds the
 *    refill rate from below by `(limit − remaining − 1) / reset` (reset = time until the bucket
 *    is full again; `remaining` is rounded down); the best bound so far is used, never slower
 *    than `limit` per minute. A `retry-after` (≤ 1 min) on a 429 pauses the key.
 * 3. Admission is a reservation: a request takes its tokens at once (a bucket may go below
 *    zero) and waits until the bucket would have had them, so requests leave in arrival order
 *    and each knows its wait up front. A header's `remaining` lowers the bucket (minus requests
 *    in flight whose headers have not come back: they may not have been counted yet), never
 *    raises it.
 * 4. A wait is visible: before sleeping the layer emits `retry{reason: "waiting for rate
 *    limit", delayMs}` (no `attemptReset`: nothing was streamed), which the retry layer numbers,
 *    core passes to the activity stream and the TUI shows as "waiting for rate limit (N s)".
 *    Waits use Effect's `Clock` (`TestClock` in tests).
 */

/** Per-minute limits from config (`rateLimits: { "openai": { rpm, tpm } }`). */
export interface RateLimits {
  /** Requests per minute. */
  readonly rpm?: number;
  /** Tokens per minute (input estimated at 4 characters per token before the call, corrected by the reported usage after it). */
  readonly tpm?: number;
}

/** The `reason` of the `retry` event a rate-limit wait emits. */
export const RATE_LIMIT_WAIT = "waiting for rate limit";

type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function")
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `6m0s`, `1.5s`, `20ms`, `1h2m`, `30` (seconds) or an RFC 3339 time → milliseconds from now. */
export function parseReset(v: string | undefined, wallNow: number = Date.now()): number | undefined {
  if (v === undefined || v.trim() === "") return undefined;
  const t = v.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  const parts = [...t.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length > 0 && parts.map((p) => p[0]).join("") === t) {
    const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
    return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2]!]!, 0);
  }
  const date = Date.parse(t);
  return Number.isFinite(date) ? Math.max(0, date - wallNow) : undefined;
}

const num = (v: string | undefined): number | undefined => {
  if (v === undefined || v.trim() === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};

/** One bucket. `level` may go negative (reservations); `rate` is per millisecond. */
class Bucket {
  capacity: number;
  rate: number;
  level: number;
  at: number;
  constructor(capacity: number, rate: number, level: number, at: number) {
    this.capacity = capacity;
    this.rate = rate;
    this.level = level;
    this.at = at;
  }
  /**
   * True from the moment a (nearly) full bucket is drawn on until the next answer comes back:
   * the server's bucket refills from when requests *arrive* (and not past its cap), so ours must
   * not credit the time they spent on the way.
   */
  held = false;
  refill(now: number): void {
    if (now > this.at && !this.held)
      this.level = Math.min(this.capacity, this.level + (now - this.at) * this.rate);
    this.at = Math.max(this.at, now);
  }
  /** An answer came back: the server has counted a request, refilling is under way there too. */
  release(now: number): void {
    this.refill(now);
    this.held = false;
  }
  /** While held, a request the bucket cannot cover now must wait for the first answer (its wait is not known yet). */
  mustHold(now: number, cost: number): boolean {
    this.refill(now);
    return this.held && this.level - Math.min(cost, this.capacity) < 0;
  }
  /** Takes `cost` now; the wait until the bucket would have had it. */
  reserve(now: number, cost: number, unacked = 0): number {
    this.refill(now);
    // Near full (counting what is on its way), the server's bucket may sit at its cap while our
    // requests travel, wasting refill we would count: hold until the first answer.
    if (this.level + unacked >= this.capacity - 1) this.held = true;
    // A request larger than the whole bucket waits for a full bucket, not forever.
    const take = Math.min(cost, this.capacity);
    this.level -= take;
    return this.level >= 0 ? 0 : -this.level / this.rate;
  }
  /** How long the bucket needs to cover `cost` from its level now. */
  deficit(cost: number): number {
    return Math.max(0, Math.min(cost, this.capacity) - this.level) / this.rate;
  }
  /** What a response says: the server's remaining count lowers our level, never raises it. */
  lower(now: number, remaining: number): void {
    this.refill(now);
    this.level = Math.min(this.level, remaining);
  }
}

interface Learned {
  readonly limit?: number;
  readonly remaining?: number;
  readonly resetMs?: number;
}

/** Does the response name a limit? Without one, `readRateHeaders` teaches the buckets nothing. */
function hasLimitHeader(headers: HeadersLike): boolean {
  return (
    header(headers, "x-ratelimit-limit-requests") !== undefined ||
    header(headers, "x-ratelimit-limit-tokens") !== undefined ||
    header(headers, "anthropic-ratelimit-requests-limit") !== undefined ||
    header(headers, "anthropic-ratelimit-tokens-limit") !== undefined
  );
}

/**
 * Requests and tokens from one response's headers (OpenAI or Anthropic style). An absolute reset
 * time (Anthropic) is measured from `sentAt`, the wall time the request was sent: the server
 * answered later, so the duration comes out no shorter than the server's (a rate no faster).
 */
export function readRateHeaders(
  headers: HeadersLike,
  sentAt: number = Date.now(),
): { requests: Learned; tokens: Learned } {
  const pick = (names: string[]) => {
    for (const n of names) {
      const v = header(headers, n);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const of = (kind: "requests" | "tokens"): Learned => {
    const limit = num(pick([`x-ratelimit-limit-${kind}`, `anthropic-ratelimit-${kind}-limit`]));
    const remaining = num(pick([`x-ratelimit-remaining-${kind}`, `anthropic-ratelimit-${kind}-remaining`]));
    const resetMs = parseReset(
      pick([`x-ratelimit-reset-${kind}`, `anthropic-ratelimit-${kind}-reset`]),
      sentAt,
    );
    return {
      ...(limit !== undefined ? { limit } : {}),
      ...(remaining !== undefined ? { remaining } : {}),
      ...(resetMs !== undefined ? { resetMs } : {}),
    };
  };
  return { requests: of("requests"), tokens: of("tokens") };
}

const MINUTE = 60_000;

/** The shared state of one provider key. */
export class KeyLimiter {
  private requests: Bucket | undefined;
  private tokens: Bucket | undefined;
  private configured: RateLimits = {};
  private pausedUntil = 0;
  /** Requests sent whose response headers have not come back yet. */
  private inFlight = 0;
  /** Where the request budget came from, for the wait notice. */
  private source = "";
  private lastNow = 0;

  /** A clock that went backwards (another clock, e.g. a test's) makes the time-based state meaningless: start over. */
  private tick(now: number): void {
    if (now < this.lastNow - 1000) {
      this.pausedUntil = 0;
      if (this.requests) this.requests.at = now;
      if (this.tokens) this.tokens.at = now;
    }
    this.lastNow = now;
  }

  configure(limits: RateLimits, now: number): void {
    this.configured = limits;
    if (limits.rpm !== undefined && limits.rpm > 0) {
      this.requests = new Bucket(limits.rpm, limits.rpm / MINUTE, this.requests?.level ?? limits.rpm, now);
      this.source = `${limits.rpm} requests/min from config`;
    }
    if (limits.tpm !== undefined && limits.tpm > 0)
      this.tokens = new Bucket(limits.tpm, limits.tpm / MINUTE, this.tokens?.level ?? limits.tpm, now);
  }

  /**
   * Reserves one request (and its estimated tokens): the wait in ms, or `hold` (with a
   * guess of the wait) when a bucket was just drawn from full and cannot cover it: then the
   * caller waits for the first answer (`whenReleased`) and asks again.
   */
  reserve(
    now: number,
    tokens: number,
  ): { readonly hold: boolean; readonly waitMs: number; readonly holder?: boolean } {
    this.tick(now);
    const pause = Math.max(0, this.pausedUntil - now);
    const t = tokens > 0 ? this.tokens : undefined;
    if (this.requests?.mustHold(now, 1) || t?.mustHold(now, tokens)) {
      const guess = Math.max(pause, this.requests?.deficit(1) ?? 0, t?.deficit(tokens) ?? 0);
      return { hold: true, waitMs: Math.ceil(guess) };
    }
    const wasHeld = !!(this.requests?.held || t?.held);
    let wait = pause;
    if (this.requests) wait = Math.max(wait, this.requests.reserve(now, 1, this.inFlight));
    if (t) wait = Math.max(wait, t.reserve(now, tokens));
    const holder = !wasHeld && !!(this.requests?.held || t?.held);
    return { hold: false, waitMs: Math.ceil(wait), holder };
  }

  private waiters: (() => void)[] = [];

  /** Resolves once no bucket is held (the first answer after drawing on a full bucket). */
  readonly whenReleased: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (!this.requests?.held && !this.tokens?.held) {
      resume(Effect.void);
      return;
    }
    const wake = () => resume(Effect.void);
    this.waiters.push(wake);
    return Effect.sync(() => {
      this.waiters = this.waiters.filter((w) => w !== wake);
    });
  });

  /** Ends a hold: refilling starts now (the server started when the request arrived, earlier). */
  release(now: number): void {
    this.requests?.release(now);
    this.tokens?.release(now);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** What the wait is about, in a few words. */
  describe(): string {
    return this.source || "paused by the server's retry-after";
  }

  sent(): void {
    this.inFlight++;
  }

  /** A response (or error) with headers: learn from them. */
  observe(
    now: number,
    status: number | undefined,
    headers: HeadersLike,
    retryAfterMs?: number,
    sentAt?: number,
  ): void {
    this.tick(now);
    this.inFlight = Math.max(0, this.inFlight - 1);
    const others = this.inFlight;
    this.release(now);
    if (status !== 429 && !hasLimitHeader(headers)) return; // nothing to learn (most servers, every mock)
    const { requests, tokens } = readRateHeaders(headers, sentAt);
    this.requests = this.learn(this.requests, requests, now, others, this.configured.rpm);
    if (this.requests && requests.limit !== undefined && this.configured.rpm === undefined)
      this.source = `${requests.limit} requests per ${formatMs(Math.round(requests.limit / this.requests.rate))} learned from the server`;
    this.tokens = this.learn(this.tokens, tokens, now, 0, this.configured.tpm);
    // A rate-limit pause (≤ 1 min) holds every session on this key; a longer one is a quota the retry layer reports.
    if (status === 429 && retryAfterMs !== undefined && retryAfterMs <= MINUTE)
      this.pausedUntil = Math.max(this.pausedUntil, now + retryAfterMs);
  }

  /** A request that ended without headers (a connection error): it no longer counts as in flight. */
  ended(now: number): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.release(now);
  }

  /** Charges the difference between a call's reported tokens and its estimate. */
  settleTokens(now: number, delta: number): void {
    if (!this.tokens || delta === 0) return;
    this.tokens.refill(now);
    this.tokens.level -= delta;
  }

  private learn(
    bucket: Bucket | undefined,
    h: Learned,
    now: number,
    inFlight: number,
    configured: number | undefined,
  ): Bucket | undefined {
    if (h.limit === undefined || h.limit <= 0) return bucket;
    const remaining = h.remaining !== undefined ? h.remaining - inFlight : undefined;
    if (configured === undefined) {
      // `remaining` is a whole number (the server's level rounded down), so one response only
      // bounds the refill rate from below: more than (used − 1) / reset. The best bound so far wins.
      const perMinute = h.limit / MINUTE;
      const used = h.remaining !== undefined ? h.limit - h.remaining : 0;
      const bound = used > 1 && h.resetMs !== undefined && h.resetMs > 0 ? (used - 1) / h.resetMs : 0;
      const rate = Math.max(perMinute, bound, bucket && bucket.capacity === h.limit ? bucket.rate : 0);
      if (!bucket) return new Bucket(h.limit, rate, Math.min(h.limit, remaining ?? h.limit), now);
      bucket.refill(now);
      bucket.capacity = h.limit;
      bucket.rate = rate;
    }
    if (bucket && remaining !== undefined) bucket.lower(now, remaining);
    return bucket;
  }
}

const registry = new Map<string, KeyLimiter>();

/** The process-wide limiter of a provider key (created on first use). The key is hashed, never kept. */
export function keyLimiter(
  provider: string,
  baseUrl: string | undefined,
  apiKey: string | undefined,
): KeyLimiter {
  const id = `${provider}|${baseUrl ?? ""}|${sha256Hex(apiKey ?? "").slice(0, 32)}`;
  let limiter = registry.get(id);
  if (!limiter) {
    limiter = new KeyLimiter();
    registry.set(id, limiter);
  }
  return limiter;
}

/** Forget every key's state (tests). */
export function resetRateLimits(): void {
  registry.clear();
}

/** What an adapter reports about each HTTP response of one request (status and headers). */
export class ResponseObserver extends Context.Tag("@lash/providers/ResponseObserver")<
  ResponseObserver,
  { readonly observe: (status: number | undefined, headers: HeadersLike) => void }
>() {}

/** The adapter's report hook for this request (a no-op when no limiter listens). */
export const currentObserver: Effect.Effect<(status: number | undefined, headers: HeadersLike) => void> =
  Effect.map(Effect.serviceOption(ResponseObserver), (o) =>
    Option.isSome(o) ? o.value.observe : () => undefined,
  );

const toolChars = new WeakMap<object, number>();

/** Input tokens of a request, estimated at 4 characters per token (each message measured once). */
export function estimateTokens(request: LlmRequest): number {
  let chars = (request.system ?? "").length;
  for (const m of request.messages) {
    const memo = memoOf(m);
    memo.chars ??= JSON.stringify(m.parts).length;
    chars += memo.chars;
  }
  for (const t of request.tools) {
    let n = toolChars.get(t);
    if (n === undefined) {
      n = t.name.length + t.description.length + JSON.stringify(t.inputSchema).length;
      toolChars.set(t, n);
    }
    chars += n;
  }
  return Math.ceil(chars / 4);
}

/**
 * Puts every request of `provider` through `limiter` (see the file comment). Wrap the bare
 * adapter, inside the retry layer, so that each attempt — retries included — is admitted.
 */
export function withRateLimit(provider: LlmProvider, limiter: KeyLimiter): LlmProvider {
  const notice = (waitMs: number): LlmEvent => ({
    type: "retry",
    attempt: 1,
    delayMs: waitMs,
    reason: RATE_LIMIT_WAIT,
    error: {
      kind: "rateLimited",
      message: `${provider.name}: client-side rate limit (${limiter.describe()}): waiting ${formatMs(waitMs)} before sending`,
      provider: provider.name,
      retryable: true,
    },
  });
  const call =
    (request: LlmRequest): LlmCall =>
    (onEvent, options) =>
      Effect.gen(function* () {
        const estimate = estimateTokens(request);
        const clock = yield* Effect.clock;
        let observed = false;
        let sent = false;
        let sentAt: number | undefined;
        let reported: number | undefined;
        let holder = false;
        const observe = (status: number | undefined, headers: HeadersLike): void => {
          if (observed) return;
          observed = true;
          const after = status === 429 ? retryAfter(headers) : undefined;
          limiter.observe(clock.unsafeCurrentTimeMillis(), status, headers, after, sentAt);
        };
        const signal = options.signal;
        const deadlineAt = options.deadlineAt;
        const tooLate = () =>
          new LlmError({
            kind: "timeout",
            message: `${provider.name}: the client-side rate limit (${limiter.describe()}) would hold this model call past its deadline — raise it with lash --request-deadline or config requestDeadlineMs, or raise the limit (config rateLimits)`,
            provider: provider.name,
            retryable: false,
          });
        /** A wait that ends early on the caller's cancel, and fails at the call's deadline. */
        const wait = (e: Effect.Effect<void>): Effect.Effect<void, LlmError> => {
          const cancellable = signal ? Effect.raceFirst(e, abortWait(signal)) : e;
          if (deadlineAt === undefined) return cancellable;
          const left = deadlineAt - clock.unsafeCurrentTimeMillis();
          return Effect.raceFirst(
            cancellable,
            Effect.zipRight(Effect.sleep(Duration.millis(Math.max(0, left))), Effect.fail(tooLate())),
          );
        };
        const admitted = Effect.gen(function* () {
          // 1. reserve (or wait for the first answer and ask again), 2. say how long, 3. sleep, 4. send;
          // after a hold, a further wait is announced only when it is real
          let held = false;
          for (;;) {
            const r = limiter.reserve(clock.unsafeCurrentTimeMillis(), estimate);
            holder = r.holder === true;
            if (r.hold) {
              if (!held) onEvent(notice(r.waitMs));
              held = true;
              yield* wait(limiter.whenReleased);
              if (signal?.aborted) return;
              continue;
            }
            if (r.waitMs > 0) {
              // a wait that would end past the deadline is not started
              if (deadlineAt !== undefined && clock.unsafeCurrentTimeMillis() + r.waitMs >= deadlineAt)
                return yield* Effect.fail(tooLate());
              onEvent(notice(r.waitMs));
              yield* wait(Effect.sleep(Duration.millis(r.waitMs)));
              if (signal?.aborted) return;
            }
            break;
          }
          sent = true;
          sentAt = Date.now();
          limiter.sent();
          yield* callOf(provider.stream(request))((e) => {
            if (e.type === "usage") reported = (e.usage.input ?? 0) + (e.usage.output ?? 0);
            onEvent(e);
          }, options).pipe(Effect.provideService(ResponseObserver, { observe }));
        });
        return yield* admitted.pipe(
          Effect.ensuring(
            Effect.flatMap(Clock.currentTimeMillis, (t) =>
              Effect.sync(() => {
                // a request that never got an answer with headers (or was never sent) ends its hold
                if (!observed) {
                  if (sent) limiter.ended(t);
                  else if (holder) limiter.release(t);
                }
                if (reported !== undefined) limiter.settleTokens(t, reported - estimate);
              }),
            ),
          ),
        );
      });
  const stream = (request: LlmRequest): Stream.Stream<LlmEvent, LlmError> => streamOfCall(call(request));
  return { name: provider.name, stream };
}

function retryAfter(headers: HeadersLike): number | undefined {
  const ms = num(header(headers, "retry-after-ms"));
  if (ms !== undefined) return ms;
  const s = header(headers, "retry-after");
  const secs = num(s);
  if (secs !== undefined) return secs * 1000;
  return s !== undefined ? parseReset(s) : undefined;
}
