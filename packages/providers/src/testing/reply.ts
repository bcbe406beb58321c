/** The four wire formats the mock server speaks. */
export type WireFormat = "anthropic" | "openai-responses" | "openai-chat" | "google";

export const wireFormats: readonly WireFormat[] = ["anthropic", "openai-responses", "openai-chat", "google"];

export interface MockToolCall {
  /** Call id (generated when absent). */
  readonly id?: string;
  readonly name: string;
  /** JSON text, or a value to stringify. */
  readonly arguments?: string | Record<string, unknown>;
  /** Split the argument text over this many deltas (default 1). Gemini always sends whole arguments. */
  readonly chunks?: number;
  /** Replay signature (Gemini thought signature on the function-call part). */
  readonly signature?: string;
}

export interface MockReasoning {
  readonly text: string;
  /** Split over this many deltas (default 1). */
  readonly chunks?: number;
  /** Anthropic thinking signature / Gemini thought signature. */
  readonly signature?: string;
  /** OpenAI encrypted reasoning content / Anthropic redacted-thinking data. */
  readonly encrypted?: string;
  /** Anthropic redacted thinking: `text` is ignored, `encrypted` is the data. */
  readonly redacted?: boolean;
}

export interface MockUsage {
  /** All prompt tokens, cache reads and writes included. */
  readonly input?: number;
  /** All generated tokens, reasoning included. */
  readonly output?: number;
  readonly reasoning?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** Error shorthands rendered in each vendor's own shape. */
export type MockErrorCode =
  | "badRequest"
  | "auth"
  | "permission"
  | "notFound"
  | "rateLimit"
  | "quota"
  | "overloaded"
  | "server"
  | "contextOverflow";

export interface MockError {
  /** HTTP status (default from `code`, else 500). */
  readonly status?: number;
  readonly code?: MockErrorCode;
  readonly message?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** `Retry-After` header in seconds. */
  readonly retryAfter?: number;
  /** Replaces the vendor-shaped body entirely. */
  readonly body?: unknown;
}

export type MockFinish = "stop" | "toolUse" | "outputLimit" | "contentFilter";

/**
 * One scripted reply. The same abstract reply is rendered in whichever wire format
 * the request came in on, so one script drives every adapter.
 */
export interface MockReply {
  readonly text?: string;
  /** Split `text` over this many deltas (default 1). Splits never cut a code point. */
  readonly textChunks?: number;
  /** The text as exactly these deltas (instead of `text` / `textChunks`). */
  readonly textPieces?: readonly string[];
  readonly reasoning?: string | MockReasoning;
  readonly toolCalls?: readonly MockToolCall[];
  readonly usage?: MockUsage;
  /** Default: `toolUse` when there are tool calls, else `stop`. */
  readonly finish?: MockFinish;
  /** Answer with an HTTP error instead of a stream. */
  readonly error?: MockError;
  /** Never answer; the request stays open until the client aborts or the server closes. */
  readonly hang?: boolean;
  /**
   * Stall forever right after the first event whose wire text contains this string (the rest is
   * never sent unless the client stays; `server.streams` shows whether it closed first).
   */
  readonly stallAfter?: string;
  /** Send this many SSE events, then stall forever. */
  readonly hangAfterChunks?: number;
  /** Send this many SSE events, then reset the TCP connection. */
  readonly resetAfterChunks?: number;
  /** Leave out the terminal events and close the stream cleanly. */
  readonly truncate?: boolean;
  /** Insert a garbage SSE event after this many events. */
  readonly malformedAfterChunks?: number;
  /** Split every event that holds a multibyte character inside that character, over two TCP writes. */
  readonly splitMultibyte?: boolean;
  /** Write the body in pieces cut at these byte offsets (ascending). */
  readonly writeSplits?: readonly number[];
  /** Pause between events. */
  readonly chunkDelayMs?: number;
  /**
   * Rewrites each event's wire text as it is written (e.g. to stamp the time it leaves the
   * server). Applies to paced replies (`chunkDelayMs` and the other per-event options).
   */
  readonly atWrite?: (event: string) => string;
  /** Raw event payloads (JSON text, one per SSE event) to send verbatim instead of rendering. */
  readonly raw?: readonly string[];
  /** Raw SSE text to send verbatim. */
  readonly rawSse?: string;
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Splits a string into `n` pieces of about equal code-point length. */
export function splitText(text: string, n: number | undefined): string[] {
  const count = Math.max(1, Math.floor(n ?? 1));
  if (count === 1 || text.length <= 1) return [text];
  const cps = Array.from(text);
  const k = Math.min(count, cps.length);
  const out: string[] = [];
  for (let i = 0; i < k; i++) {
    const a = Math.floor((i * cps.length) / k);
    const b = Math.floor(((i + 1) * cps.length) / k);
    out.push(cps.slice(a, b).join(""));
  }
  return out;
}

export function reasoningOf(r: MockReply["reasoning"]): MockReasoning | undefined {
  if (r === undefined) return undefined;
  return typeof r === "string" ? { text: r } : r;
}

export function argsText(a: MockToolCall["arguments"]): string {
  if (a === undefined) return "{}";
  return typeof a === "string" ? a : JSON.stringify(a);
}

export function finishOf(reply: MockReply): MockFinish {
  return reply.finish ?? (reply.toolCalls && reply.toolCalls.length > 0 ? "toolUse" : "stop");
}

export const defaultStatus: Record<MockErrorCode, number> = {
  badRequest: 400,
  auth: 401,
  permission: 403,
  notFound: 404,
  rateLimit: 429,
  quota: 429,
  overloaded: 529,
  server: 500,
  contextOverflow: 400,
};

export function errorCodeOf(e: MockError): MockErrorCode {
  if (e.code) return e.code;
  const s = e.status ?? 500;
  if (s === 400) return "badRequest";
  if (s === 401) return "auth";
  if (s === 403) return "permission";
  if (s === 404) return "notFound";
  if (s === 429) return "rateLimit";
  if (s === 529 || s === 503) return "overloaded";
  return "server";
}
