import type { LlmEvent, ModelInfo, Part, Usage } from "@lash/sansio";
import {
  afterOn,
  isLiveClock,
  type LlmCall,
  type LlmCallOptions,
  LlmError,
  streamOfCall,
} from "@lash/sansio";
import type * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import type * as Runtime from "effect/Runtime";
import type * as Stream from "effect/Stream";
import type { ErrorContext } from "../errors.ts";
import { classifyError, formatMs } from "../errors.ts";
import { currentObserver } from "../ratelimit.ts";

/** Everything an adapter needs besides the request. */
export interface AdapterConfig {
  readonly apiKey?: string | undefined;
  readonly baseUrl?: string | undefined;
  /** Vendor model name used when the request names none. */
  readonly model: string;
  readonly info: ModelInfo;
  /** Request timeout in ms for the whole HTTP call (default 10 minutes). */
  readonly timeoutMs?: number | undefined;
  /** Fail with a retryable `timeout` when the stream makes no progress for this long (default 120 s; 0 = off). */
  readonly idleTimeoutMs?: number | undefined;
  /** Extra headers sent with every request. */
  readonly headers?: Record<string, string> | undefined;
  readonly keyEnv?: string | undefined;
  readonly baseUrlEnv?: string | undefined;
}

export const defaultTimeoutMs = 10 * 60_000;
export const defaultIdleTimeoutMs = 120_000;

export type Emit = (event: LlmEvent) => void;

/** Response headers: a `Headers`, or Node's parsed headers (lower-case names; lash's own transport). */
export type ResponseHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

/** Reports one HTTP response's status and headers (the rate limiter learns from them). */
export type ObserveResponse = (status: number | undefined, headers: ResponseHeaders) => void;

/**
 * Turns one vendor stream into normalized events. `push` maps a vendor event
 * (calling `emit` zero or more times) and returns true once the vendor's terminal
 * event was seen; `end` runs when the vendor stream is exhausted and either emits
 * the closing `usage` + `finish` or returns the error for a stream without a finish.
 */
export interface Translator<T> {
  push(event: T, emit: Emit): boolean;
  end(emit: Emit): LlmError | undefined;
  /** The caller aborted mid-stream: emit the `usage` counted so far (no `finish`). */
  aborted?(emit: Emit): void;
}

/**
 * One SDK call as an `LlmCall` (and its stream view): the SDK's async iterable is read
 * by a plain loop and each vendor event is translated and handed to `onEvent` at once —
 * no per-event effect work, no fiber per request.
 *
 * Interruption, an aborted `signal` (the caller's cancel) and the watchdog all abort the
 * HTTP request through one `AbortController`. An external abort ends the call successfully
 * (the caller keeps what arrived); interruption ends it as interrupted.
 *
 * Idle timeout: each vendor event (pings included) is stamped with the Effect `Clock`'s
 * time; when nothing came for `idleTimeoutMs` the request is aborted and the call fails with
 * a retryable `timeout`. `deadlineAt` ends it with a non-retryable `timeout`. With the live
 * clock the watchdog is a timer; under another clock (`TestClock` in tests) it is a fiber
 * sleeping on that clock, so the timeout is exact and follows the test's time.
 */
export function runSdkStream<T>(
  ctx: ErrorContext,
  open: (signal: AbortSignal, observe: ObserveResponse) => Promise<AsyncIterable<T>>,
  translator: () => Translator<T>,
  idleTimeoutMs: number = defaultIdleTimeoutMs,
): Stream.Stream<LlmEvent, LlmError> {
  const call: LlmCall = (onEvent, options) =>
    Effect.flatMap(currentObserver, (observe) =>
      Effect.clockWith((clock) =>
        isLiveClock(clock)
          ? sdkCall(ctx, open, translator, idleTimeoutMs, onEvent, options, clock, undefined, observe)
          : Effect.flatMap(Effect.runtime<never>(), (rt) =>
              sdkCall(ctx, open, translator, idleTimeoutMs, onEvent, options, clock, rt, observe),
            ),
      ),
    );
  return streamOfCall(call);
}

function sdkCall<T>(
  ctx: ErrorContext,
  open: (signal: AbortSignal, observe: ObserveResponse) => Promise<AsyncIterable<T>>,
  translator: () => Translator<T>,
  idleTimeoutMs: number,
  onEvent: Emit,
  options: LlmCallOptions,
  clock: Clock.Clock,
  rt: Runtime.Runtime<never> | undefined,
  observe: ObserveResponse,
): Effect.Effect<void, LlmError> {
  return Effect.async<void, LlmError>((resume) => {
    const controller = new AbortController();
    const signal = controller.signal;
    const external = options.signal;
    const deadlineAt = options.deadlineAt;
    const t = translator();
    let last = clock.unsafeCurrentTimeMillis();
    let why: "stalled" | "deadline" | undefined;
    let settled = false;
    let cancelTimer: (() => void) | undefined;
    const onAbort = () => controller.abort();
    const cleanup = () => {
      settled = true;
      cancelTimer?.();
      external?.removeEventListener("abort", onAbort);
    };
    const finish = (result: Effect.Effect<void, LlmError>) => {
      if (settled) return;
      cleanup();
      resume(result);
    };
    /** What the watchdog decides at `now`: fire, or how long to wait before looking again. */
    const check = (now: number): number | undefined => {
      if (deadlineAt !== undefined && now >= deadlineAt) why = "deadline";
      else if (idleTimeoutMs > 0 && now - last >= idleTimeoutMs) why = "stalled";
      else {
        const idleIn = idleTimeoutMs > 0 ? last + idleTimeoutMs - now : Number.POSITIVE_INFINITY;
        const deadlineIn = deadlineAt !== undefined ? deadlineAt - now : Number.POSITIVE_INFINITY;
        return Math.min(idleIn, deadlineIn);
      }
      controller.abort();
      return undefined;
    };
    if (idleTimeoutMs > 0 || deadlineAt !== undefined) {
      const arm = (ms: number) => {
        cancelTimer = afterOn(clock, rt, ms, () => {
          cancelTimer = undefined;
          if (settled) return;
          const next = check(clock.unsafeCurrentTimeMillis());
          if (next !== undefined) arm(next);
        });
      };
      const first = check(last);
      if (first !== undefined) arm(first);
    }
    if (external) {
      if (external.aborted) controller.abort();
      else external.addEventListener("abort", onAbort, { once: true });
    }
    const failure = (e: unknown): LlmError | undefined => {
      if (why === "deadline")
        return new LlmError({
          kind: "timeout",
          message: `${ctx.provider} (${ctx.model}): no complete answer before the deadline of this model call`,
          provider: ctx.provider,
          retryable: false,
        });
      if (why === "stalled")
        return new LlmError({
          kind: "timeout",
          message: `${ctx.provider} (${ctx.model}): no data for ${formatMs(idleTimeoutMs)} — the stream stalled (the idle timeout; raise it with --request-timeout or requestTimeoutMs in config)`,
          provider: ctx.provider,
          retryable: true,
        });
      if (signal.aborted) return undefined; // the caller cancelled: keep what arrived
      // An HTTP error's headers (429 rate-limit headers, retry-after) go to the rate limiter.
      const status = (e as { status?: unknown } | null)?.status;
      const headers = (e as { headers?: unknown } | null)?.headers;
      if (typeof status === "number" && headers && typeof headers === "object")
        observe(status, headers as ResponseHeaders);
      return classifyError(e, ctx, signal);
    };
    (async () => {
      try {
        const iterable = await open(signal, observe);
        last = clock.unsafeCurrentTimeMillis();
        for await (const event of iterable) {
          if (settled) return;
          last = clock.unsafeCurrentTimeMillis();
          if (t.push(event, onEvent)) break;
        }
        if (why !== undefined) throw new Error(why);
        if (signal.aborted) {
          if (external?.aborted) t.aborted?.(onEvent);
          return finish(Effect.void);
        }
        const err = t.end(onEvent);
        finish(err ? Effect.fail(err) : Effect.void);
      } catch (e) {
        const err = failure(e);
        if (!err && why === undefined && external?.aborted && !settled) t.aborted?.(onEvent);
        finish(err ? Effect.fail(err) : Effect.void);
      }
    })();
    // interrupted: abort the request; the loop above ends without resuming
    return Effect.sync(() => {
      if (settled) return;
      cleanup();
      controller.abort();
    });
  });
}

// ---------------------------------------------------------------------------
// Request-side helpers shared by the adapters.

/** Renders the parts the model sees as plain text (code cells, their output, errors). */
export function partAsText(part: Part): string | undefined {
  switch (part.type) {
    case "text":
      return part.text;
    case "code":
      return "```" + part.language + "\n" + part.source + "\n```";
    case "output":
      return part.text;
    case "error":
      return part.code ? `Error (${part.code}): ${part.message}` : `Error: ${part.message}`;
    default:
      return undefined;
  }
}

/** Text of a tool result's text content, joined. */
export function toolResultText(content: ReadonlyArray<{ type: string; text?: string }>): string {
  let out = "";
  for (const c of content) if (c.type === "text" && c.text !== undefined) out += (out ? "\n" : "") + c.text;
  return out;
}

/** `data:` URL or plain URL for an attachment, undefined when it has neither bytes nor ref. */
export function attachmentUrl(a: { mediaType: string; data?: string; ref?: string }): string | undefined {
  if (a.data !== undefined) return `data:${a.mediaType};base64,${a.data}`;
  return a.ref;
}

export function isImage(mediaType: string): boolean {
  return mediaType.startsWith("image/");
}

/** Placeholder the model sees for an attachment this vendor cannot take. */
export function attachmentPlaceholder(a: { mediaType: string; name?: string; ref?: string }): string {
  return `[attachment${a.name ? ` ${a.name}` : ""} (${a.mediaType})${a.ref ? ` at ${a.ref}` : ""} not shown]`;
}

/** Parses tool arguments for vendors that want an object; invalid JSON becomes `{}`. */
export function parseArgs(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return {};
  }
}

/** Builds a usage value with absent buckets left out. */
export function usageOf(
  input: number | null | undefined,
  output: number | null | undefined,
  reasoning: number | null | undefined,
  cacheRead: number | null | undefined,
  cacheWrite: number | null | undefined,
): Usage {
  const u: { -readonly [K in keyof Usage]: Usage[K] } = {};
  if (typeof input === "number") u.input = input;
  if (typeof output === "number") u.output = output;
  if (typeof reasoning === "number") u.reasoning = reasoning;
  if (typeof cacheRead === "number") u.cacheRead = cacheRead;
  if (typeof cacheWrite === "number") u.cacheWrite = cacheWrite;
  return u;
}

export function hasCounts(u: Usage | undefined): u is Usage {
  return (
    u !== undefined &&
    (u.input !== undefined ||
      u.output !== undefined ||
      u.reasoning !== undefined ||
      u.cacheRead !== undefined ||
      u.cacheWrite !== undefined)
  );
}

let callCounter = 0;
const runTag = Math.floor(Math.random() * 0x100000)
  .toString(36)
  .padStart(4, "0");

/** A tool-call id for vendors that send none (Gemini): unique within the process. */
export function syntheticCallId(): string {
  callCounter++;
  return `call_${runTag}${callCounter.toString(36)}`;
}

/** Anthropic accepts tool ids matching `^[a-zA-Z0-9_-]+$`; foreign ids are mapped deterministically. */
export function safeToolId(id: string): string {
  return /^[a-zA-Z0-9_-]+$/.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, "_");
}
