import type { LlmEvent, ModelInfo, Part, Usage } from "@lash/sansio";
import { LlmError } from "@lash/sansio";
import { Clock, Duration, Effect, Stream } from "effect";
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

/** Reports one HTTP response's status and headers (the rate limiter learns from them). */
export type ObserveResponse = (status: number | undefined, headers: Headers) => void;

/**
 * Turns one vendor stream into normalized events. `push` maps a vendor event
 * (calling `emit` zero or more times) and returns true once the vendor's terminal
 * event was seen; `end` runs when the vendor stream is exhausted and either emits
 * the closing `usage` + `finish` or returns the error for a stream without a finish.
 */
export interface Translator<T> {
  push(event: T, emit: Emit): boolean;
  end(emit: Emit): LlmError | undefined;
}

/**
 * Runs an SDK stream under an AbortController tied to the Effect stream's scope:
 * interrupting the consumer aborts the HTTP request. The SDK is iterated by a plain
 * async loop (no per-event Effect work); events reach the stream's mailbox in batches.
 *
 * Idle timeout: the loop stamps each vendor event (pings included) with the Effect
 * `Clock`'s time; a watchdog fiber sleeps until `last + idleTimeoutMs` and, if nothing
 * came in meanwhile, aborts the request and fails the stream with a retryable `timeout`.
 * The timeout is exact (it fires `idleTimeoutMs` after the last byte-carrying event or
 * the request start) and follows `TestClock` in tests.
 */
export function runSdkStream<T>(
  ctx: ErrorContext,
  open: (signal: AbortSignal, observe: ObserveResponse) => Promise<AsyncIterable<T>>,
  translator: () => Translator<T>,
  idleTimeoutMs: number = defaultIdleTimeoutMs,
): Stream.Stream<LlmEvent, LlmError> {
  return Stream.asyncPush<LlmEvent, LlmError>(
    (emit) =>
      Effect.gen(function* () {
        const clock = yield* Effect.clock;
        const observe = yield* currentObserver;
        const state = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const controller = new AbortController();
            const signal = controller.signal;
            const t = translator();
            const s = { controller, last: clock.unsafeCurrentTimeMillis(), stalled: false, done: false };
            // Events are batched per macrotask: everything parsed from one network read
            // enters the Effect stream as one chunk (one wake-up of the consumer, not one per event).
            let buffer: LlmEvent[] = [];
            let scheduled = false;
            const flush = (): void => {
              scheduled = false;
              if (buffer.length === 0 || signal.aborted) return;
              const batch = buffer;
              buffer = [];
              emit.array(batch);
            };
            const push: Emit = (e) => {
              buffer.push(e);
              if (!scheduled) {
                scheduled = true;
                setImmediate(flush);
              }
            };
            (async () => {
              try {
                const iterable = await open(signal, observe);
                s.last = clock.unsafeCurrentTimeMillis();
                for await (const event of iterable) {
                  s.last = clock.unsafeCurrentTimeMillis();
                  if (t.push(event, push)) break;
                }
                if (s.stalled) throw new Error("stalled");
                if (signal.aborted) return;
                const err = t.end(push);
                flush();
                if (err) emit.fail(err);
                else emit.end();
              } catch (e) {
                if (s.stalled) {
                  flush();
                  emit.fail(
                    new LlmError({
                      kind: "timeout",
                      message: `${ctx.provider} (${ctx.model}): no data for ${formatMs(idleTimeoutMs)} — the stream stalled (the idle timeout; raise it with --request-timeout or requestTimeoutMs in config)`,
                      provider: ctx.provider,
                      retryable: true,
                    }),
                  );
                  return;
                }
                if (signal.aborted) return;
                // An HTTP error's headers (429 rate-limit headers, retry-after) go to the rate limiter.
                const status = (e as { status?: unknown } | null)?.status;
                const headers = (e as { headers?: unknown } | null)?.headers;
                if (typeof status === "number" && headers && typeof headers === "object")
                  observe(status, headers as Headers);
                flush();
                emit.fail(classifyError(e, ctx, signal));
              } finally {
                s.done = true;
              }
            })();
            return s;
          }),
          (s) => Effect.sync(() => s.controller.abort()),
        );
        if (idleTimeoutMs > 0)
          yield* Effect.forkScoped(
            Effect.gen(function* () {
              while (!state.done) {
                const idle = (yield* Clock.currentTimeMillis) - state.last;
                if (idle >= idleTimeoutMs) {
                  state.stalled = true;
                  state.controller.abort();
                  return;
                }
                yield* Effect.sleep(Duration.millis(idleTimeoutMs - idle));
              }
            }),
          );
      }),
    { bufferSize: "unbounded" },
  );
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
