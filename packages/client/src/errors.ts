// The errors a client call ends in: the API's own tagged errors (`BadRequest`, `NotFound`, …,
// each `{ _tag, code, message }` as the daemon sent it), or a `ClientError` when no answer of
// the API's came back (the daemon unreachable, an event stream that gave up reconnecting, a
// response that is not the API's).
import {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  PayloadTooLarge,
  TooManyRequests,
  Unauthorized,
  Unavailable,
} from "@lash/server/api";
import { Schema } from "effect";

export {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  PayloadTooLarge,
  TooManyRequests,
  Unauthorized,
  Unavailable,
};

export class ClientError extends Schema.TaggedError<ClientError>()("ClientError", {
  /** `unreachable`, `stream_gave_up`, `unexpected_response` or `bad_event`. */
  code: Schema.String,
  message: Schema.String,
}) {}

/** Every error the daemon answers with. */
export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | PayloadTooLarge
  | TooManyRequests
  | Unavailable;

/** What a promise of the client rejects with. */
export type LashError = ApiError | ClientError;

const byTag = {
  BadRequest,
  Unauthorized,
  Forbidden,
  NotFound,
  Conflict,
  PayloadTooLarge,
  TooManyRequests,
  Unavailable,
} as const;

export const isApiError = (u: unknown): u is ApiError => {
  const tag = typeof u === "object" && u !== null ? (u as { _tag?: unknown })._tag : undefined;
  return typeof tag === "string" && tag in byTag;
};

/** The API error a JSON error body names, or undefined when the body is not one. */
export function apiErrorFromBody(body: unknown): ApiError | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { _tag, code, message } = body as Record<string, unknown>;
  if (typeof _tag !== "string" || typeof message !== "string" || !(_tag in byTag)) return undefined;
  const make = byTag[_tag as keyof typeof byTag];
  return new make({ code: typeof code === "string" ? code : "unknown", message });
}

/** The error of a non-2xx response: the API's when the body is one, else a `ClientError`. */
export async function errorFromResponse(response: Response, what: string): Promise<LashError> {
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return (
    apiErrorFromBody(body) ??
    new ClientError({
      code: "unexpected_response",
      message: `${what}: HTTP ${response.status} ${text.slice(0, 200)}. Check that the URL points at lash serve (its API is under /v1).`,
    })
  );
}

export const unreachable = (baseUrl: string, cause: unknown): ClientError =>
  new ClientError({
    code: "unreachable",
    message: `cannot reach lash serve at ${baseUrl}: ${describe(cause)}. Start it with \`lash serve\` or check --server.`,
  });

export function describe(cause: unknown): string {
  // an Error and its causes, innermost last (`fetch failed` says little, `ECONNREFUSED` says it)
  const parts: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current !== undefined; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message !== "" && !parts.includes(message)) parts.push(message);
    current = current instanceof Error ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.join(": ");
}
