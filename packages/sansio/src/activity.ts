import type { LlmErrorInfo, LlmRequest } from "./llm.ts";
import type { Message, ToolResultContent } from "./message.ts";
import type { TurnOutcome } from "./turn.ts";
import type { Usage } from "./usage.ts";

/**
 * The live event stream of a turn, for UIs, `--print --output-format stream-json`,
 * traces and reconnecting readers. Every event carries the session, the turn and
 * a per-session sequence number (`seq`) that `observe` cursors use.
 */
export type TurnActivityBody =
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
      /** The request body, when a host chooses to include it (traces at the `extended` level). */
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
      /** The try about to be made (every request counts, the first is 1). */
      readonly attempt: number;
      /** How long the host waits before it. */
      readonly delayMs: number;
      readonly error: LlmErrorInfo;
      /** Why, in a few words: `429 rate limited`, `connection refused`, `truncated stream`, … */
      readonly reason?: string;
      /** The most tries this call can make; absent for a rate-limit wait that does not count. */
      readonly maxAttempts?: number;
    }
  | { readonly type: "attemptReset"; readonly attempt: number }
  | {
      readonly type: "llmResponse";
      readonly iteration: number;
      readonly stopReason: string;
      /** The provider's id of the response, when it sent one. */
      readonly responseId?: string;
      /** The stop reason in the provider's own words (`tool_calls`, `end_turn`, …), when it sent one. */
      readonly providerReason?: string;
      readonly usage: Usage;
      readonly costUsd?: number;
      readonly durationMs: number;
      /** True when the response came from the journal (no model call was made). */
      readonly replayed: boolean;
    }
  | {
      readonly type: "toolStarted";
      readonly callId: string;
      /** lash's id for the call, unique in the session (absent for calls inside RLM cells). */
      readonly lashCallId?: string;
      readonly name: string;
      readonly args: unknown;
      readonly family?: string;
    }
  | {
      readonly type: "toolProgress";
      readonly callId: string;
      readonly lashCallId?: string;
      readonly update: unknown;
    }
  | {
      readonly type: "toolCompleted";
      readonly callId: string;
      readonly lashCallId?: string;
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

export type TurnActivity = TurnActivityBody & {
  readonly sessionId: string;
  readonly turnId: string;
  readonly seq: number;
  /** epoch ms */
  readonly at: number;
};
