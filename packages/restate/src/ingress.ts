// Submitting turns through Restate's ingress.
import { idempotencyKey, SESSION_OBJECT, type TurnReply, type TurnRequest } from "./worker.ts";

/** A turn the ingress ended with a failure (a `TerminalError` of the handler, e.g. a journal mismatch). */
export class TurnInvocationError extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(`the turn's invocation failed (${status}): ${body}`);
    this.status = status;
    this.body = body;
  }
}

/**
 * Runs turn `request.turnId` of `sessionId` as the invocation `LashSession/{sessionId}/turn`
 * with the idempotency key `{sessionId}:{turnId}`: submitting it again (a client retry) attaches
 * to the same invocation instead of running the turn twice. Resolves with the handler's reply.
 */
export async function submitTurn(
  ingressUrl: string,
  sessionId: string,
  request: TurnRequest,
): Promise<TurnReply> {
  const res = await fetch(`${ingressUrl}/${SESSION_OBJECT}/${encodeURIComponent(sessionId)}/turn`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "idempotency-key": idempotencyKey(sessionId, request.turnId),
    },
    body: JSON.stringify(request),
  });
  const body = await res.text();
  if (!res.ok) throw new TurnInvocationError(res.status, body);
  return JSON.parse(body) as TurnReply;
}
