import * as Schema from "effect/Schema";
import { LlmErrorInfo, type LlmRequest, LlmResponse, StopReason, ToolSpec } from "./llm.ts";
import { Message, ToolResultContent } from "./message.ts";
import { Usage } from "./usage.ts";

/** A tool call the model asked for, as the kernel hands it to the host. */
export const PendingToolCall = Schema.Struct({
  /** The provider's id (providers may reuse it across turns, some even within a batch). */
  callId: Schema.String,
  /** lash's id, unique in the session (see `ToolCallPart.lashCallId`). */
  lashCallId: Schema.optional(Schema.String),
  name: Schema.String,
  /** Parsed arguments (`{}` when the text was empty). */
  args: Schema.Unknown,
  /** Set when the argument text was not valid JSON; the host must not run the call. */
  argsError: Schema.optional(Schema.String),
});
export type PendingToolCall = typeof PendingToolCall.Type;

/** What a tool's control channel can ask of the turn. */
export const ToolControl = Schema.Union(
  Schema.Struct({ type: Schema.Literal("finish"), value: Schema.Unknown }),
  Schema.Struct({
    type: Schema.Literal("frameSwitch"),
    frameId: Schema.String,
    task: Schema.String,
    seed: Schema.optional(Schema.Unknown),
  }),
);
export type ToolControl = typeof ToolControl.Type;

export const CompletedToolCall = Schema.Struct({
  callId: Schema.String,
  /** The call's `lashCallId`, copied from the `PendingToolCall`. */
  lashCallId: Schema.optional(Schema.String),
  name: Schema.String,
  /** What the model sees. */
  content: Schema.Array(ToolResultContent),
  isError: Schema.Boolean,
  /** The full output when `content` is a cut view of it. */
  full: Schema.optional(Schema.Array(ToolResultContent)),
  value: Schema.optional(Schema.Unknown),
  details: Schema.optional(Schema.Unknown),
  durationMs: Schema.optional(Schema.Number),
  control: Schema.optional(ToolControl),
});
export type CompletedToolCall = typeof CompletedToolCall.Type;

/** Result of executing a code cell (RLM). */
export const ExecResult = Schema.Struct({
  ok: Schema.Boolean,
  /** Printed observations, in order. */
  output: Schema.Array(Schema.String),
  error: Schema.optional(Schema.String),
  /** Set when the cell called `finish(value)`. */
  finalValue: Schema.optional(Schema.Unknown),
  finished: Schema.optional(Schema.Boolean),
  control: Schema.optional(ToolControl),
  details: Schema.optional(Schema.Unknown),
});
export type ExecResult = typeof ExecResult.Type;

export const StopKind = Schema.Literal(
  "cancelled",
  "incomplete",
  "invalidInput",
  "maxTurns",
  "providerError",
  "toolError",
  "pluginAbort",
  "runtimeError",
);
export type StopKind = typeof StopKind.Type;

export const TurnOutcome = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("finished"),
    finish: Schema.Union(
      Schema.Struct({ kind: Schema.Literal("assistantMessage"), text: Schema.String }),
      Schema.Struct({ kind: Schema.Literal("finalValue"), value: Schema.Unknown }),
      Schema.Struct({ kind: Schema.Literal("toolValue"), toolName: Schema.String, value: Schema.Unknown }),
    ),
  }),
  Schema.Struct({
    type: Schema.Literal("frameSwitch"),
    frameId: Schema.String,
    task: Schema.String,
    seed: Schema.optional(Schema.Unknown),
  }),
  Schema.Struct({
    type: Schema.Literal("stopped"),
    reason: StopKind,
    message: Schema.optional(Schema.String),
    /** Text the model produced before the stop (partial or final-notice answer). */
    text: Schema.optional(Schema.String),
  }),
);
export type TurnOutcome = typeof TurnOutcome.Type;

export const CheckpointKind = Schema.Literal("afterWork", "beforeCompletion");
export type CheckpointKind = typeof CheckpointKind.Type;

/** Stream events the kernel emits for hosts (fire-and-forget). */
export const TurnEvent = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("llmRequest"),
    iteration: Schema.Number,
    messageCount: Schema.Number,
    tools: Schema.Array(Schema.String),
  }),
  Schema.Struct({
    type: Schema.Literal("llmResponse"),
    iteration: Schema.Number,
    stopReason: StopReason,
    text: Schema.String,
    toolCalls: Schema.Number,
  }),
  Schema.Struct({
    type: Schema.Literal("usage"),
    iteration: Schema.Number,
    usage: Usage,
    cumulative: Usage,
  }),
  Schema.Struct({
    type: Schema.Literal("error"),
    message: Schema.String,
    kind: Schema.String,
    retryable: Schema.Boolean,
  }),
  Schema.Struct({ type: Schema.Literal("protocol"), name: Schema.String, data: Schema.Unknown }),
  Schema.Struct({ type: Schema.Literal("outcome"), outcome: TurnOutcome }),
);
export type TurnEvent = typeof TurnEvent.Type;

/**
 * Effects the machine asks the host to perform. Reply-producing effects carry
 * a per-turn `effectId` (1, 2, 3 …) and `iteration`; fire-and-forget effects carry none.
 *
 * The `messages` of a `callLlm` request is the machine's append-only message
 * log: it is complete and stable until the host responds (read, hash or copy it
 * before responding); later appends extend it.
 */
export type TurnEffect =
  | { readonly kind: "syncEnvironment"; readonly effectId: number; readonly iteration: number }
  | {
      readonly kind: "callLlm";
      readonly effectId: number;
      readonly iteration: number;
      readonly request: LlmRequest;
    }
  | {
      readonly kind: "runTools";
      readonly effectId: number;
      readonly iteration: number;
      readonly calls: readonly PendingToolCall[];
    }
  | {
      readonly kind: "execCode";
      readonly effectId: number;
      readonly iteration: number;
      readonly language: string;
      readonly code: string;
    }
  | {
      readonly kind: "checkpoint";
      readonly effectId: number;
      readonly iteration: number;
      readonly checkpoint: CheckpointKind;
    }
  | { readonly kind: "emit"; readonly event: TurnEvent }
  | { readonly kind: "progress"; readonly messages: readonly Message[]; readonly iteration: number }
  | { readonly kind: "log"; readonly level: "debug" | "warn"; readonly message: string }
  | {
      readonly kind: "done";
      readonly outcome: TurnOutcome;
      /** Every message this turn appended, in order. */
      readonly messages: readonly Message[];
      readonly usage: Usage;
      readonly iteration: number;
    };

export type ReplyEffect = Extract<TurnEffect, { effectId: number }>;

export const LlmResult = Schema.Union(
  Schema.Struct({ ok: Schema.Literal(true), response: LlmResponse }),
  Schema.Struct({ ok: Schema.Literal(false), error: LlmErrorInfo }),
);
export type LlmResult = typeof LlmResult.Type;

export const TurnResponse = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("environmentSynced"),
    effectId: Schema.Number,
    system: Schema.optional(Schema.String),
    tools: Schema.optional(Schema.Array(ToolSpec)),
    error: Schema.optional(Schema.String),
  }),
  Schema.Struct({
    kind: Schema.Literal("llmComplete"),
    effectId: Schema.Number,
    result: LlmResult,
    /** Text deltas were already streamed live to readers. */
    textStreamed: Schema.optional(Schema.Boolean),
  }),
  Schema.Struct({
    kind: Schema.Literal("toolResults"),
    effectId: Schema.Number,
    results: Schema.Array(CompletedToolCall),
  }),
  Schema.Struct({ kind: Schema.Literal("execResult"), effectId: Schema.Number, result: ExecResult }),
  Schema.Struct({
    kind: Schema.Literal("checkpointDelivered"),
    effectId: Schema.Number,
    /** Messages to add before the next iteration (queued user input, plugin messages). */
    messages: Schema.Array(Message),
  }),
);
export type TurnResponse = typeof TurnResponse.Type;
