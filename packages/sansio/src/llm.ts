import * as Data from "effect/Data";
import * as Schema from "effect/Schema";
import type * as Stream from "effect/Stream";
import { Message, Part, ProviderReplay } from "./message.ts";
import { StructuredOutput } from "./output.ts";
import { Usage } from "./usage.ts";

/** A tool as the model sees it: name, description for models, JSON-schema of its input. */
export const ToolSpec = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  inputSchema: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
});
export type ToolSpec = typeof ToolSpec.Type;

export const ToolChoice = Schema.Union(
  Schema.Literal("auto", "none", "required"),
  Schema.Struct({ name: Schema.String }),
);
export type ToolChoice = typeof ToolChoice.Type;

export const ReasoningOptions = Schema.Struct({
  effort: Schema.optional(Schema.Literal("minimal", "low", "medium", "high")),
  /** Explicit thinking budget (Anthropic, Gemini). */
  budgetTokens: Schema.optional(Schema.Number),
});
export type ReasoningOptions = typeof ReasoningOptions.Type;

/** Prompt-caching breakpoints (Anthropic); other vendors cache automatically. */
export const CacheOptions = Schema.Struct({
  system: Schema.optional(Schema.Boolean),
  tools: Schema.optional(Schema.Boolean),
  /** Mark the last N messages. */
  lastMessages: Schema.optional(Schema.Number),
});
export type CacheOptions = typeof CacheOptions.Type;

export const LlmRequest = Schema.Struct({
  /** `provider/model` */
  model: Schema.String,
  system: Schema.optional(Schema.String),
  messages: Schema.Array(Message),
  tools: Schema.Array(ToolSpec),
  toolChoice: Schema.optional(ToolChoice),
  maxOutput: Schema.optional(Schema.Number),
  reasoning: Schema.optional(ReasoningOptions),
  cache: Schema.optional(CacheOptions),
  temperature: Schema.optional(Schema.Number),
  /** Ask for a reply that is one JSON value matching this schema (validated by the provider layer). */
  output: Schema.optional(StructuredOutput),
});
export type LlmRequest = typeof LlmRequest.Type;

/** The one stop-reason vocabulary every adapter maps to. */
export const StopReason = Schema.Literal(
  "stop",
  "toolUse",
  "outputLimit",
  "contextOverflow",
  "contentFilter",
  "error",
  "cancelled",
);
export type StopReason = typeof StopReason.Type;

export const LlmErrorKind = Schema.Literal(
  "rateLimited",
  "overloaded",
  "server",
  "network",
  "timeout",
  "streamIncomplete",
  "auth",
  "permission",
  "notFound",
  "badRequest",
  "contextOverflow",
  "contentFilter",
  "cancelled",
  /** The reply did not match the requested output schema (after one corrective retry). */
  "outputMismatch",
  "unknown",
);
export type LlmErrorKind = typeof LlmErrorKind.Type;

export const LlmErrorInfo = Schema.Struct({
  kind: LlmErrorKind,
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  provider: Schema.optional(Schema.String),
  retryable: Schema.Boolean,
  retryAfterMs: Schema.optional(Schema.Number),
});
export type LlmErrorInfo = typeof LlmErrorInfo.Type;

/** Typed provider failure at the host boundary. */
export class LlmError extends Data.TaggedError("LlmError")<LlmErrorInfo> {}

/** The plain (serializable) fields of an `LlmError`, absent fields left out. */
export function llmErrorInfo(e: LlmError): LlmErrorInfo {
  return {
    kind: e.kind,
    message: e.message,
    retryable: e.retryable,
    ...(e.status !== undefined ? { status: e.status } : {}),
    ...(e.provider !== undefined ? { provider: e.provider } : {}),
    ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
  };
}

/**
 * Normalized streaming events. Deltas of one kind accumulate into one part
 * until a part of another kind starts; `reasoningEnd` closes a reasoning block
 * (carrying its replay data), `toolCallEnd` closes a call.
 * `usage` reports the attempt's totals so far (the last one wins).
 * `attemptReset` tells readers to drop everything of the failed attempt.
 */
export const LlmEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("textDelta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("reasoningDelta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("reasoningEnd"), replay: Schema.optional(ProviderReplay) }),
  Schema.Struct({ type: Schema.Literal("toolCallStart"), id: Schema.String, name: Schema.String }),
  Schema.Struct({ type: Schema.Literal("toolCallArgsDelta"), id: Schema.String, delta: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("toolCallEnd"),
    id: Schema.String,
    replay: Schema.optional(ProviderReplay),
  }),
  Schema.Struct({ type: Schema.Literal("usage"), usage: Usage }),
  Schema.Struct({
    type: Schema.Literal("finish"),
    reason: StopReason,
    message: Schema.optional(Schema.String),
    /** The provider's id of this response (`chatcmpl-…`, `msg_…`, `resp_…`), when it sent one. */
    responseId: Schema.optional(Schema.String),
    /** The stop reason in the provider's own words (`tool_calls`, `end_turn`, `STOP`, …), when it sent one. */
    providerReason: Schema.optional(Schema.String),
  }),
  Schema.Struct({
    type: Schema.Literal("retry"),
    /** The try about to be made (every request counts, the first is 1). */
    attempt: Schema.Number,
    delayMs: Schema.Number,
    error: LlmErrorInfo,
    /** Why, in a few words: `429 rate limited`, `connection refused`, `truncated stream`, … */
    reason: Schema.optional(Schema.String),
    /** The most tries this call can make; absent for a rate-limit wait that does not count. */
    maxAttempts: Schema.optional(Schema.Number),
  }),
  Schema.Struct({ type: Schema.Literal("attemptReset"), attempt: Schema.Number }),
);
export type LlmEvent = typeof LlmEvent.Type;

/** A completed model response, accumulated from events. */
export const LlmResponse = Schema.Struct({
  parts: Schema.Array(Part),
  usage: Usage,
  stopReason: StopReason,
  errorMessage: Schema.optional(Schema.String),
  /** The provider's id of this response, when it sent one. */
  responseId: Schema.optional(Schema.String),
  /** The stop reason in the provider's own words, when it sent one. */
  providerReason: Schema.optional(Schema.String),
});
export type LlmResponse = typeof LlmResponse.Type;

/** The provider contract. Adapters live in `@lash/providers`; the host provides one as a service. */
export interface LlmProvider {
  readonly name: string;
  stream(request: LlmRequest): Stream.Stream<LlmEvent, LlmError>;
}
