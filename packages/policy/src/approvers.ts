// Who answers an approval request. Each approver is a value of core's `ApproverShape`;
// give one to the runtime (`RuntimeOptions.approver`, or the `Approver` service):
//   approveAll()        every call approved (`lash -p --approval-mode approve-all`)
//   rejectAll(reason?)  every call denied, with the reason the model reads
//   failApprover(hint)  no answer can be had: the turn stops with `TurnError` `approval`
//                       and the request stays pending (`--approval-mode fail`)
//   callbackApprover(fn) a promise callback answers (the library's `onApproval`)
// The TUI's interactive approver lives with the TUI; the daemon's durable one with the server.
import { type ApprovalAnswer, ApprovalError, type ApprovalRequest, type ApproverShape } from "@lash/core";
import { Effect } from "effect";

/** Approves every call of every request, once (`by: "approve-all"`). */
export const approveAll = (): ApproverShape => ({
  ask: (request) =>
    Effect.succeed({
      by: "approve-all",
      decisions: request.items.map((i) => ({
        callId: i.callId,
        decision: "approve" as const,
        scope: "once" as const,
      })),
    }),
});

/** Denies every call of every request (`by: "reject-all"`); `reason` is what the model reads. */
export const rejectAll = (reason = "approvals are set to reject every call (reject-all)"): ApproverShape => ({
  ask: (request) =>
    Effect.succeed({
      by: "reject-all",
      decisions: request.items.map((i) => ({ callId: i.callId, decision: "deny" as const, reason })),
    }),
});

/**
 * Never answers: fails with `ApprovalError` carrying `hint` (how to get an answer), so the
 * turn stops with a clear error instead of waiting. The request stays in the journal.
 */
export const failApprover = (hint: string): ApproverShape => ({
  ask: () => Effect.fail(new ApprovalError({ message: hint })),
});

/**
 * A promise callback answers (`by` defaults to `callback`). A rejected promise, or an answer
 * that is not one, fails with `ApprovalError` (the turn stops; the request stays pending).
 * `signal` aborts when the turn is cancelled.
 */
export const callbackApprover = (
  fn: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>,
  options: { readonly by?: string } = {},
): ApproverShape => ({
  ask: (request, signal) =>
    Effect.tryPromise({
      try: () => fn(request, signal),
      catch: (e) =>
        new ApprovalError({
          message: `the approval callback failed: ${e instanceof Error ? e.message : String(e)}`,
        }),
    }).pipe(
      Effect.flatMap((answer) =>
        answer && Array.isArray(answer.decisions)
          ? Effect.succeed({ ...answer, by: answer.by || options.by || "callback" })
          : Effect.fail(
              new ApprovalError({
                message:
                  "the approval callback returned no answer: resolve it with { by, decisions: [{ callId, decision: 'approve' | 'deny' }] }",
              }),
            ),
      ),
    ),
});
