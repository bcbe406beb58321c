import type { LlmErrorInfo, LlmErrorKind } from "@lash/sansio";
import { LlmError } from "@lash/sansio";

/** What an adapter knows when it turns a vendor failure into an `LlmError`. */
export interface ErrorContext {
  /** Adapter name: `anthropic`, `openai`, `openai-compatible`, `google`. */
  readonly provider: string;
  /** The vendor model name. */
  readonly model: string;
  /** Environment variable holding the key (named in auth errors). */
  readonly keyEnv?: string | undefined;
  /** Environment variable holding the base URL (named in not-found errors). */
  readonly baseUrlEnv?: string | undefined;
  readonly baseUrl?: string | undefined;
  /** What an authentication failure tells the user to do, instead of naming `keyEnv` (sign-in providers, clouds). */
  readonly authHint?: string | undefined;
  /** Headers of the failed HTTP response, when the SDK does not keep them (Gemini). */
  readonly headers?: HeadersLike | undefined;
}

type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

const contextOverflowRe =
  /prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|context window|exceeds the maximum number of tokens|input token count.*exceeds|too many (input )?tokens|reduce the length of the messages|input is too long|string_above_max_length|model_context_window_exceeded/i;
const hardQuotaRe =
  /insufficient_quota|usage_limit_reached|credit balance is too low|exceeded your current quota|billing/i;
const contentFilterRe = /content[_ ]filter|content_policy|safety system|responsible ?ai policy/i;

function header(headers: HeadersLike | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  }
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `Retry-After` (seconds or HTTP date), `retry-after-ms`, or Gemini's `RetryInfo.retryDelay` ("13s"). */
export function retryAfterMs(headers: HeadersLike | undefined, bodyText?: string): number | undefined {
  const ms = header(headers, "retry-after-ms");
  if (ms !== undefined && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = header(headers, "retry-after");
  if (ra !== undefined && ra.trim() !== "") {
    const secs = Number(ra);
    if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
    const date = Date.parse(ra);
    // A date-valued Retry-After is relative to the server's clock; compare with ours once.
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  if (bodyText) {
    const m = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(bodyText);
    if (m?.[1]) return Number(m[1]) * 1000;
  }
  return undefined;
}

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === "object"; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The messages of an error's `cause` chain, joined. */
function innerMessages(e: unknown): string {
  const out: string[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === "object"; i++) {
    const m = (cur as { message?: unknown }).message;
    if (typeof m === "string") out.push(m);
    cur = (cur as { cause?: unknown }).cause;
  }
  return out.join(" · ");
}

function safeJson(v: unknown): string {
  try {
    return typeof v === "string" ? v : JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/** The vendor's own message out of an SDK error (body `error.message` when there is one). */
function vendorMessage(e: unknown): { text: string; body: string } {
  if (!(e instanceof Error)) return { text: String(e), body: safeJson(e) };
  const errBody = (e as { error?: unknown }).error;
  let body = errBody === undefined ? e.message : safeJson(errBody);
  let text = e.message;
  const inner = errBody && typeof errBody === "object" ? (errBody as { error?: unknown }).error : undefined;
  const msg =
    (inner && typeof inner === "object" && (inner as { message?: unknown }).message) ||
    (errBody && typeof errBody === "object" && (errBody as { message?: unknown }).message);
  if (typeof msg === "string") text = msg;
  // Gemini puts the JSON body into the message.
  if (text.startsWith("{")) {
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown } };
      body = text;
      if (typeof parsed.error?.message === "string") text = parsed.error.message;
    } catch {
      // not JSON
    }
  }
  return { text, body };
}

/** `120000` → `120 s`, `1500` → `1.5 s`, `250` → `250 ms`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function make(ctx: ErrorContext, info: Omit<LlmErrorInfo, "provider">): LlmError {
  return new LlmError({ ...info, provider: ctx.provider });
}

/** Is this failure a context-window overflow, whatever the vendor's words? */
export function isContextOverflowText(text: string): boolean {
  return contextOverflowRe.test(text);
}

/**
 * Maps any failure of a vendor SDK call (HTTP error, stream error event, transport
 * error, abort) onto the one `LlmError` vocabulary. Messages name the fix.
 */
export function classifyError(e: unknown, ctx: ErrorContext, signal?: AbortSignal): LlmError {
  if (e instanceof LlmError) return e;
  const name = e instanceof Error ? e.name : "";
  if (signal?.aborted || name === "APIUserAbortError" || name === "AbortError")
    return make(ctx, { kind: "cancelled", message: "request cancelled", retryable: false });

  const rawStatus = (e as { status?: unknown } | null)?.status;
  const status = typeof rawStatus === "number" && rawStatus > 0 ? rawStatus : undefined;
  const headers = ((e as { headers?: HeadersLike } | null)?.headers ?? ctx.headers) as
    | HeadersLike
    | undefined;
  const { text, body } = vendorMessage(e);
  const both = `${text} ${body}`;
  const who = `${ctx.provider} (${ctx.model})`;

  if (status === undefined) {
    // Transport failures, stream error events, malformed streams.
    const ctor = (e as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    if (
      name === "APIConnectionTimeoutError" ||
      ctor === "APIConnectionTimeoutError" ||
      /timed? ?out/i.test(text)
    )
      return make(ctx, { kind: "timeout", message: `${who}: request timed out: ${text}`, retryable: true });
    // A cloud SDK found no credentials at all (AWS chain, Google ADC): nothing to retry
    if (/could not load (the default )?credentials/i.test(innerMessages(e)))
      return make(ctx, {
        kind: "auth",
        message: `${who}: no credentials: ${innerMessages(e)} — ${ctx.authHint ?? `set ${ctx.keyEnv ?? "the API key"}`}`,
        retryable: false,
      });
    const code = errorCode(e);
    const url = ctx.baseUrl ?? `the ${ctx.provider} API`;
    if (code === "ECONNREFUSED")
      return make(ctx, {
        kind: "network",
        message: `${who}: could not connect to ${url} (connection refused): is the server running? (check the base URL${ctx.baseUrlEnv ? `: --base-url or ${ctx.baseUrlEnv}` : ""})`,
        retryable: true,
      });
    if (code === "ENOTFOUND" || code === "EAI_AGAIN")
      return make(ctx, {
        kind: "network",
        message: `${who}: could not connect to ${url} (host not found: ${code}): check the base URL${ctx.baseUrlEnv ? ` (--base-url or ${ctx.baseUrlEnv})` : ""} and the network`,
        retryable: true,
      });
    if (/bad port/i.test(innerMessages(e)))
      return make(ctx, {
        kind: "badRequest",
        message: `${who}: could not connect to ${url}: the port is one that fetch refuses to use ("bad port") — use another port`,
        retryable: false,
      });
    if (
      name === "APIConnectionError" ||
      ctor === "APIConnectionError" ||
      (code !== undefined &&
        /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|UND_ERR|ENOTFOUND|EAI_AGAIN)/.test(code)) ||
      /terminated|socket|fetch failed|network|ECONNRESET|other side closed/i.test(text)
    )
      return make(ctx, {
        kind: "network",
        message: `${who}: connection failed: ${innerMessages(e) || text}`,
        retryable: true,
      });
    if (e instanceof SyntaxError || /malformed|could not parse|Unexpected token|JSON/i.test(text))
      return make(ctx, {
        kind: "streamIncomplete",
        message: `${who}: malformed stream: ${text}`,
        retryable: true,
      });
    // Error events inside a 200 stream carry the vendor's error type.
    if (isContextOverflowText(both))
      return make(ctx, {
        kind: "contextOverflow",
        message: `${who}: context overflow: ${text}`,
        retryable: false,
      });
    if (hardQuotaRe.test(both))
      return make(ctx, {
        kind: "rateLimited",
        message: `${who}: quota exhausted (${text}) — check the account's plan and billing`,
        retryable: false,
      });
    if (/overloaded/i.test(both))
      return make(ctx, { kind: "overloaded", message: `${who}: overloaded: ${text}`, retryable: true });
    if (/rate.?limit/i.test(both))
      return make(ctx, { kind: "rateLimited", message: `${who}: rate limited: ${text}`, retryable: true });
    if (/server_error|api_error|internal/i.test(both))
      return make(ctx, { kind: "server", message: `${who}: server error: ${text}`, retryable: true });
    return make(ctx, { kind: "unknown", message: `${who}: ${text}`, retryable: false });
  }

  const withStatus = (kind: LlmErrorKind, message: string, retryable: boolean, after?: number): LlmError =>
    make(ctx, { kind, message, status, retryable, ...(after !== undefined ? { retryAfterMs: after } : {}) });

  if (status === 400 || status === 413 || status === 422) {
    if (isContextOverflowText(both))
      return withStatus(
        "contextOverflow",
        `${who}: the prompt exceeds the model's context window (${text}) — compact or trim the conversation`,
        false,
      );
    if (ctx.provider === "google" && /api key not valid|API_KEY_INVALID/i.test(both))
      return withStatus(
        "auth",
        `${who}: authentication failed (${status}): ${text} — set ${ctx.keyEnv ?? "the API key"} to a valid key`,
        false,
      );
    if (contentFilterRe.test(both))
      return withStatus("contentFilter", `${who}: blocked by the content filter: ${text}`, false);
    return withStatus(
      "badRequest",
      `${who}: the request was rejected (${status}): ${text} — fix the request (tool schemas, message order, parameters)`,
      false,
    );
  }
  if (status === 401)
    return withStatus(
      "auth",
      `${who}: authentication failed (401): ${text} — ${ctx.authHint ?? `set ${ctx.keyEnv ?? "the API key"} to a valid key (or pass apiKey)`}`,
      false,
    );
  if (status === 402 || (status === 429 && hardQuotaRe.test(both)))
    return withStatus(
      "rateLimited",
      `${who}: quota exhausted (${status}): ${text} — check the account's plan and billing`,
      false,
    );
  if (status === 403)
    return withStatus(
      "permission",
      `${who}: permission denied (403): ${text} — ${ctx.authHint ? `the credentials lack access to this model or project, or are invalid (${ctx.authHint})` : `the key${ctx.keyEnv ? ` in ${ctx.keyEnv}` : ""} lacks access to this model or project`}`,
      false,
    );
  if (status === 404)
    return withStatus(
      "notFound",
      `${who}: not found (404): ${text} — check the model name${ctx.baseUrl ? ` and the base URL ${ctx.baseUrl}` : ""}${ctx.baseUrlEnv ? ` (${ctx.baseUrlEnv})` : ""}`,
      false,
    );
  if (status === 408)
    return withStatus("timeout", `${who}: request timeout (408): ${text}`, true, retryAfterMs(headers, body));
  if (status === 429)
    return withStatus(
      "rateLimited",
      `${who}: rate limited (429): ${text}`,
      true,
      retryAfterMs(headers, body),
    );
  if (status === 529 || /overloaded/i.test(both))
    return withStatus(
      "overloaded",
      `${who}: overloaded (${status}): ${text}`,
      true,
      retryAfterMs(headers, body),
    );
  if (status === 503)
    return withStatus(
      "overloaded",
      `${who}: service unavailable (503): ${text}`,
      true,
      retryAfterMs(headers, body),
    );
  if (status >= 500)
    return withStatus(
      "server",
      `${who}: server error (${status}): ${text}`,
      true,
      retryAfterMs(headers, body),
    );
  if (status === 409 || status === 425)
    return withStatus("server", `${who}: conflict (${status}): ${text}`, true, retryAfterMs(headers, body));
  return withStatus("unknown", `${who}: HTTP ${status}: ${text}`, false);
}

/** The stream closed before the vendor's terminal event: retryable. */
export function incompleteStream(ctx: ErrorContext, detail: string): LlmError {
  return make(ctx, {
    kind: "streamIncomplete",
    message: `${ctx.provider} (${ctx.model}): the stream ended without a finish (${detail})`,
    retryable: true,
  });
}
