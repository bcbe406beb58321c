import type { TurnActivityBody } from "@lash/sansio";

/**
 * What the recorder consumes: the live activity stream of a turn. The shape is
 * `TurnActivity` of `@lash/sansio` (with `seq`/`at` optional), so a host passes the
 * runtime's events straight in:
 * `runtime.turn(id, input, { onEvent: recorder.record })`.
 *
 * `llmRequest` may carry the `request` body; at the `extended` level it is
 * written (hosts without it can use `recorder.plugin()` to capture bodies).
 */
export type TraceInputBody = TurnActivityBody;

export type TraceInput = TraceInputBody & {
  readonly sessionId: string;
  readonly turnId: string;
  readonly seq?: number;
  /** epoch ms */
  readonly at?: number;
};
