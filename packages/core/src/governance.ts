// Governance seams: the two services a turn consults between the model asking for a
// tool call and the call running. `Governance` decides (allow / deny / ask);
// `Approver` answers the calls it wants asked about. The
// host owns the mechanics (the approval step is journaled, every decision is a node
// in the graph); what the rules are and who answers live in @lash/policy and the
// surfaces (TUI, `--print`, the library, the daemon). The defaults allow everything
// and ask nobody, so a runtime without governance behaves as before.
import * as Context from "effect/Context";
import * as Data from "effect/Data";
import type * as Effect from "effect/Effect";
import type { ToolDefinition, ToolEffectKind, ToolPreview } from "./tool.ts";

/** One tool call as the policy sees it (after lookup and argument validation). */
export interface GovernedCall {
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly lashCallId?: string;
  readonly name: string;
  readonly args: unknown;
  readonly tool: ToolDefinition;
  readonly effects: readonly ToolEffectKind[];
}

/** How risky a call is, and why (from the risk evaluator). */
export interface RiskSummary {
  readonly level: "low" | "medium" | "high";
  /** e.g. `read`, `write`, `exec`, `network`, `secret`, `destructive`, `privilege`. */
  readonly category: string;
  readonly reasons: readonly string[];
}

/** A policy's answer for one call; `layer` names the rule that decided (`lash policy explain`). */
export type Verdict =
  | { readonly action: "allow"; readonly layer?: string; readonly reason?: string }
  | { readonly action: "deny"; readonly layer: string; readonly reason: string }
  | {
      readonly action: "ask";
      readonly layer: string;
      readonly reason: string;
      readonly risk?: RiskSummary;
      /**
       * The policy asks about every call of this tool (`approval: "always"`): an earlier
       * "approve for the session" never skips it.
       */
      readonly always?: boolean;
    };

export interface GovernanceShape {
  /** Decide one call. Plain and synchronous: the same call gets the same verdict. */
  readonly decide: (call: GovernedCall) => Verdict;
}

export class Governance extends Context.Tag("@lash/core/Governance")<Governance, GovernanceShape>() {
  /** Everything allowed, nothing asked: lash without a policy. */
  static readonly allowAll: GovernanceShape = { decide: () => ({ action: "allow" }) };
}

/** One call in an approval request, with what it would do. */
export interface ApprovalItem {
  readonly callId: string;
  readonly lashCallId?: string;
  readonly tool: string;
  readonly args: unknown;
  readonly effects: readonly ToolEffectKind[];
  /** Why it is asked about, and which policy layer said so. */
  readonly reason: string;
  readonly layer: string;
  readonly risk?: RiskSummary;
  readonly preview?: ToolPreview;
  /** Hash of the preview (canonical JSON), recorded with the decision. */
  readonly previewHash: string;
  /**
   * The policy asks about every call of this tool (`approval: "always"`): approving it "for
   * the session" approves this call only; the next one is asked about again.
   */
  readonly always?: boolean;
}

/** The calls of one model response that need an answer, asked about together. */
export interface ApprovalRequest {
  readonly id: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly items: readonly ApprovalItem[];
}

export type ApprovalDecision =
  | {
      readonly callId: string;
      readonly decision: "approve";
      /**
       * `session`: later calls to this tool in this session are not asked about again, up
       * to the risk level of this call (a call without a risk assessment counts as `high`);
       * a call the policy always asks about (`approval: "always"`) is still asked.
       */
      readonly scope?: "once" | "session";
      /** Edited arguments (validated against the tool's schema again before the call runs). */
      readonly args?: unknown;
    }
  | { readonly callId: string; readonly decision: "deny"; readonly reason?: string };

export interface ApprovalAnswer {
  /** Who decided: `user`, `approve-all`, `reject-all`, a principal, a library callback's name. */
  readonly by: string;
  readonly decisions: readonly ApprovalDecision[];
}

/** No answer can be had (e.g. `--approval-mode fail`, or interactive without a terminal). */
export class ApprovalError extends Data.TaggedError("ApprovalError")<{
  readonly message: string;
  /** The request that could not be answered (set by the host when it stops the turn). */
  readonly request?: ApprovalRequest;
}> {}

export interface ApproverShape {
  /** Answer every item of the request. `signal` aborts when the turn is cancelled. */
  readonly ask: (
    request: ApprovalRequest,
    signal: AbortSignal,
  ) => Effect.Effect<ApprovalAnswer, ApprovalError>;
}

export class Approver extends Context.Tag("@lash/core/Approver")<Approver, ApproverShape>() {}
