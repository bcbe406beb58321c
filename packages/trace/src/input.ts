import type { LlmErrorInfo, LlmRequest, Message, ToolResultContent, TurnOutcome, Usage } from "@lash/sansio";

/**
 * What the recorder consumes: the live activity stream of a turn. The shape is
 * structurally the same as `TurnActivity` of `@lash/core` (this package does
 * not depend on core), so a host passes core's events straight in:
 * `runtime.turn(id, input, { onEvent: recorder.record })`.
 *
 * `llmRequest` may carry the `request` body; at the `extended` level it is
 * written (hosts without it can use `recorder.plugin()` to capture bodies).
 */
export type TraceInputBody =
  | {
      readonly type: "turnStarted";
      readonly input: readonly Message[];
      readonly resumed: boolean;
      readonly model: string;
    }
  | {
      readonly type: "llmRequest";
      readonly iteration: number;
      readonly messageCount: number;
      readonly tools: readonly string[];
      readonly request?: LlmRequest;
    }
  | { readonly type: "textDelta"; readonly text: string }
  | { readonly type: "reasoningDelta"; readonly text: string }
  | {
      readonly type: "toolCallDelta";
      readonly callId: string;
      readonly name?: string;
      readonly argsDelta?: string;
    }
  | {
      readonly type: "retry";
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: LlmErrorInfo;
    }
  | { readonly type: "attemptReset"; readonly attempt: number }
  | {
      readonly type: "llmResponse";
      readonly iteration: number;
      readonly stopReason: string;
      readonly usage: Usage;
      readonly costUsd?: number;
      readonly durationMs: number;
      readonly replayed: boolean;
    }
  | {
      readonly type: "toolStarted";
      readonly callId: string;
      readonly name: string;
      readonly args: unknown;
      readonly family?: string;
    }
  | { readonly type: "toolProgress"; readonly callId: string; readonly update: unknown }
  | {
      readonly type: "toolCompleted";
      readonly callId: string;
      readonly name: string;
      readonly isError: boolean;
      readonly content: readonly ToolResultContent[];
      readonly details?: unknown;
      readonly durationMs: number;
      readonly replayed: boolean;
    }
  | { readonly type: "messages"; readonly messages: readonly Message[] }
  | { readonly type: "usage"; readonly usage: Usage; readonly cumulative: Usage; readonly costUsd?: number }
  | { readonly type: "error"; readonly message: string; readonly kind: string }
  | { readonly type: "plugin"; readonly plugin: string; readonly name: string; readonly data: unknown }
  | {
      readonly type: "turnFinished";
      readonly outcome: TurnOutcome;
      readonly usage: Usage;
      readonly costUsd?: number;
      readonly headRevision?: number;
    };

export type TraceInput = TraceInputBody & {
  readonly sessionId: string;
  readonly turnId: string;
  readonly seq?: number;
  /** epoch ms */
  readonly at?: number;
};
