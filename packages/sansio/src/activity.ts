import * as Schema from "effect/Schema";
import { LlmErrorInfo, LlmRequest } from "./llm.ts";
import { Message, ToolResultContent } from "./message.ts";
import { TurnOutcome } from "./turn.ts";
import { Usage } from "./usage.ts";

/** The version of the activity vocabulary (`v` in `lash -p --output-format stream-json`). */
export const ACTIVITY_VERSION = 1;

/** How risky a call is (from the policy's risk evaluator). */
const ApprovalRisk = Schema.Struct({
  level: Schema.Literal("low", "medium", "high"),
  category: Schema.String,
  reasons: Schema.Array(Schema.String),
});

/** What a call would do, as an approval prompt shows it (core's `ToolPreview`). */
const ApprovalPreview = Schema.Struct({
  summary: Schema.String,
  diff: Schema.optional(Schema.String),
  files: Schema.optional(
    Schema.Array(
      Schema.Struct({
        path: Schema.String,
        action: Schema.Literal("create", "modify", "delete"),
        added: Schema.Number,
        removed: Schema.Number,
      }),
    ),
  ),
  command: Schema.optional(
    Schema.Struct({ command: Schema.String, cwd: Schema.String, sandbox: Schema.optional(Schema.String) }),
  ),
});

/** One call asked about (core's `ApprovalItem`). */
const ApprovalItemEvent = Schema.Struct({
  callId: Schema.String,
  lashCallId: Schema.optional(Schema.String),
  tool: Schema.String,
  args: Schema.Unknown,
  effects: Schema.Array(Schema.String),
  reason: Schema.String,
  /** The policy layer that asked. */
  layer: Schema.String,
  risk: Schema.optional(ApprovalRisk),
  preview: Schema.optional(ApprovalPreview),
  previewHash: Schema.String,
});

/** One answer (core's `ApprovalDecision`), with the policy layer for a policy's denial. */
const ApprovalDecisionEvent = Schema.Struct({
  callId: Schema.String,
  tool: Schema.optional(Schema.String),
  decision: Schema.Literal("approve", "deny"),
  scope: Schema.optional(Schema.Literal("once", "session")),
  /** Edited arguments the call runs with. */
  args: Schema.optional(Schema.Unknown),
  reason: Schema.optional(Schema.String),
  layer: Schema.optional(Schema.String),
});

const Event = <T extends string, F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields });

/**
 * The live event stream of a turn, for UIs, `--print --output-format stream-json`,
 * traces and reconnecting readers — one vocabulary, as an Effect `Schema` (a union by
 * `type`): the host publishes only these, and a reader can decode what it receives with
 * `TurnActivity` (e.g. a stream-json consumer). Every event carries the session, the turn
 * and a per-session sequence number (`seq`) that `observe` cursors use.
 */
export const TurnActivityBody = Schema.Union(
  Event("turnStarted", { input: Schema.Array(Message), resumed: Schema.Boolean, model: Schema.String }),
  Event("llmRequest", {
    iteration: Schema.Number,
    messageCount: Schema.Number,
    tools: Schema.Array(Schema.String),
    /** The request body, when a host chooses to include it (traces at the `extended` level). */
    request: Schema.optional(LlmRequest),
  }),
  Event("textDelta", { text: Schema.String }),
  Event("reasoningDelta", { text: Schema.String }),
  Event("toolCallDelta", {
    callId: Schema.String,
    name: Schema.optional(Schema.String),
    argsDelta: Schema.optional(Schema.String),
  }),
  Event("retry", {
    /** The try about to be made (every request counts, the first is 1). */
    attempt: Schema.Number,
    /** How long the host waits before it. */
    delayMs: Schema.Number,
    error: LlmErrorInfo,
    /** Why, in a few words: `429 rate limited`, `connection refused`, `truncated stream`, … */
    reason: Schema.optional(Schema.String),
    /** The most tries this call can make; absent for a rate-limit wait that does not count. */
    maxAttempts: Schema.optional(Schema.Number),
  }),
  Event("attemptReset", { attempt: Schema.Number }),
  Event("llmResponse", {
    iteration: Schema.Number,
    stopReason: Schema.String,
    /** The provider's id of the response, when it sent one. */
    responseId: Schema.optional(Schema.String),
    /** The stop reason in the provider's own words (`tool_calls`, `end_turn`, …), when it sent one. */
    providerReason: Schema.optional(Schema.String),
    usage: Usage,
    costUsd: Schema.optional(Schema.Number),
    durationMs: Schema.Number,
    /** True when the response came from the journal (no model call was made). */
    replayed: Schema.Boolean,
  }),
  Event("toolStarted", {
    callId: Schema.String,
    /** lash's id for the call, unique in the session (absent for calls inside RLM cells). */
    lashCallId: Schema.optional(Schema.String),
    name: Schema.String,
    args: Schema.Unknown,
    family: Schema.optional(Schema.String),
  }),
  Event("toolProgress", {
    callId: Schema.String,
    lashCallId: Schema.optional(Schema.String),
    update: Schema.Unknown,
  }),
  Event("toolCompleted", {
    callId: Schema.String,
    lashCallId: Schema.optional(Schema.String),
    name: Schema.String,
    isError: Schema.Boolean,
    content: Schema.Array(ToolResultContent),
    details: Schema.optional(Schema.Unknown),
    durationMs: Schema.Number,
    replayed: Schema.Boolean,
  }),
  /** Calls of one model response (or one cell) that wait for an approver's answer. */
  Event("approvalRequested", { requestId: Schema.String, items: Schema.Array(ApprovalItemEvent) }),
  /**
   * The answer: by whom (`user`, `approve-all`, `reject-all`, a callback's name, or `policy`
   * for calls a policy denied without asking), per call; `replayed` when it came from the journal.
   */
  Event("approvalResolved", {
    requestId: Schema.String,
    by: Schema.String,
    decisions: Schema.Array(ApprovalDecisionEvent),
    replayed: Schema.Boolean,
  }),
  Event("messages", { messages: Schema.Array(Message) }),
  Event("usage", { usage: Usage, cumulative: Usage, costUsd: Schema.optional(Schema.Number) }),
  Event("error", { message: Schema.String, kind: Schema.String }),
  Event("plugin", { plugin: Schema.String, name: Schema.String, data: Schema.Unknown }),
  Event("turnFinished", {
    outcome: TurnOutcome,
    usage: Usage,
    costUsd: Schema.optional(Schema.Number),
    headRevision: Schema.optional(Schema.Number),
  }),
);
export type TurnActivityBody = typeof TurnActivityBody.Type;

/** An event as published: the body plus where and when. */
export const TurnActivity = Schema.extend(
  TurnActivityBody,
  Schema.Struct({
    sessionId: Schema.String,
    turnId: Schema.String,
    seq: Schema.Number,
    /** epoch ms */
    at: Schema.Number,
  }),
);
export type TurnActivity = typeof TurnActivity.Type;
