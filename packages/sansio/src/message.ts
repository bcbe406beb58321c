import * as Schema from "effect/Schema";

/**
 * The message model. Every durable or serialized shape is a Schema; runtime
 * code uses the plain `Type`s and decodes only at trust boundaries.
 */

/** Provider replay data: opaque metadata a vendor needs back on the next request. */
export const ProviderReplay = Schema.Struct({
  /** Which adapter produced it (`anthropic`, `openai`, `google`, …); other vendors ignore it. */
  provider: Schema.String,
  /** Anthropic thinking signature, Gemini thought signature. */
  signature: Schema.optional(Schema.String),
  /** OpenAI encrypted reasoning content, Anthropic redacted thinking data. */
  encrypted: Schema.optional(Schema.String),
  /** Vendor item id (OpenAI reasoning/function-call item id). */
  itemId: Schema.optional(Schema.String),
  /** True when the reasoning text itself was withheld (redacted thinking). */
  redacted: Schema.optional(Schema.Boolean),
});
export type ProviderReplay = typeof ProviderReplay.Type;

export const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String });
export type TextPart = typeof TextPart.Type;

export const ReasoningPart = Schema.Struct({
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  replay: Schema.optional(ProviderReplay),
});
export type ReasoningPart = typeof ReasoningPart.Type;

export const ToolCallPart = Schema.Struct({
  type: Schema.Literal("toolCall"),
  /** The provider's id for the call, sent back to the provider unchanged (providers may reuse it across turns). */
  id: Schema.String,
  /**
   * lash's own id for the call, unique in the session (`{assistant message id}.c{index}`), set by the
   * protocol driver. Results, traces and exports pair by it; absent on calls recorded before it existed.
   */
  lashCallId: Schema.optional(Schema.String),
  name: Schema.String,
  /** The raw argument text exactly as the model produced it. */
  argumentsText: Schema.String,
  replay: Schema.optional(ProviderReplay),
});
export type ToolCallPart = typeof ToolCallPart.Type;

/** A binary attachment (image, file) carried inline as base64, or by reference to stored bytes. */
export const AttachmentPart = Schema.Struct({
  type: Schema.Literal("attachment"),
  mediaType: Schema.String,
  /** base64 bytes */
  data: Schema.optional(Schema.String),
  /** a stored attachment reference or URL */
  ref: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
});
export type AttachmentPart = typeof AttachmentPart.Type;

/** What the model sees of a tool result: text and attachments. */
export const ToolResultContent = Schema.Union(TextPart, AttachmentPart);
export type ToolResultContent = typeof ToolResultContent.Type;

export const ToolResultPart = Schema.Struct({
  type: Schema.Literal("toolResult"),
  /** The provider's id of the call this answers (what the provider is sent). */
  callId: Schema.String,
  /** The `lashCallId` of the call this answers (absent on results recorded before it existed). */
  lashCallId: Schema.optional(Schema.String),
  name: Schema.String,
  /** What the model sees (after the output-budget projection). */
  content: Schema.Array(ToolResultContent),
  isError: Schema.Boolean,
  /** The tool's full output when the model saw a cut view of it; kept in the graph, never sent. */
  full: Schema.optional(Schema.Array(ToolResultContent)),
  /** Structured value (Lashlang bindings) and UI details; kept in the graph, never sent. */
  value: Schema.optional(Schema.Unknown),
  details: Schema.optional(Schema.Unknown),
});
export type ToolResultPart = typeof ToolResultPart.Type;

/** A code cell the model wrote (RLM). */
export const CodePart = Schema.Struct({
  type: Schema.Literal("code"),
  language: Schema.String,
  source: Schema.String,
});
export type CodePart = typeof CodePart.Type;

/** Output a code cell printed (RLM). */
export const OutputPart = Schema.Struct({ type: Schema.Literal("output"), text: Schema.String });
export type OutputPart = typeof OutputPart.Type;

export const ErrorPart = Schema.Struct({
  type: Schema.Literal("error"),
  message: Schema.String,
  code: Schema.optional(Schema.String),
});
export type ErrorPart = typeof ErrorPart.Type;

export const Part = Schema.Union(
  TextPart,
  ReasoningPart,
  ToolCallPart,
  ToolResultPart,
  AttachmentPart,
  CodePart,
  OutputPart,
  ErrorPart,
);
export type Part = typeof Part.Type;

export const Role = Schema.Literal("system", "user", "assistant", "tool");
export type Role = typeof Role.Type;

export const Message = Schema.Struct({
  id: Schema.String,
  role: Role,
  parts: Schema.Array(Part),
});
export type Message = typeof Message.Type;

/** Concatenated text parts of a message. */
export function messageText(message: Pick<Message, "parts">): string {
  let out = "";
  for (const part of message.parts) if (part.type === "text") out += part.text;
  return out;
}
