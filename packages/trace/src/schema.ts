import { Either, Schema } from "effect";

/**
 * The trace record schema. One JSON object per line (JSONL). Every record
 * carries the schema version, a record id, a timestamp, its kind, the session,
 * the turn, and the span it belongs to with that span's parent, so a reader can
 * build the whole tree (session → turn → llm call / tool call → subagent
 * session → …) with one id→span map.
 *
 * Policy: adding kinds or optional fields is additive (no bump); renaming or
 * removing a field bumps `TRACE_SCHEMA_VERSION`. Readers keep records of kinds
 * they do not know (the viewer shows them raw).
 */
export const TRACE_SCHEMA_VERSION = 1 as const;

/** Span ids are deterministic strings: `turn:{session}:{turn}`, `llm:{session}:{turn}:{iteration}`, `tool:{session}:{lashCallId}` (or `tool:{session}:{turn}:{callId}` for a call without one), `code:{session}:{turn}:{n}`, `session:{session}`. */
const common = {
  v: Schema.Literal(TRACE_SCHEMA_VERSION),
  /** Unique per record within a trace (`{recorderId}-{n}`). */
  id: Schema.String,
  /** epoch ms */
  ts: Schema.Number,
  sessionId: Schema.String,
  turnId: Schema.optional(Schema.String),
  spanId: Schema.String,
  parentSpanId: Schema.optional(Schema.String),
};

const Usage = Schema.Struct({
  input: Schema.optional(Schema.Number),
  output: Schema.optional(Schema.Number),
  reasoning: Schema.optional(Schema.Number),
  cacheRead: Schema.optional(Schema.Number),
  cacheWrite: Schema.optional(Schema.Number),
});

const rec = <K extends string, F extends Schema.Struct.Fields>(kind: K, fields: F) =>
  Schema.Struct({ ...common, kind: Schema.Literal(kind), ...fields });

export const TurnStartedRecord = rec("turn_started", {
  model: Schema.optional(Schema.String),
  resumed: Schema.Boolean,
  inputMessages: Schema.Number,
  /** First characters of the user's input text. */
  inputPreview: Schema.optional(Schema.String),
  /** The input messages (extended level only). */
  input: Schema.optional(Schema.Unknown),
});

export const TurnFinishedRecord = rec("turn_finished", {
  /** `completed` (finished), `stopped` (any stop reason) or `frameSwitch`. */
  status: Schema.Literal("completed", "stopped", "frameSwitch"),
  /** `assistantMessage` | `finalValue` | `toolValue` | a stop reason | `frameSwitch`. */
  reason: Schema.String,
  message: Schema.optional(Schema.String),
  usage: Usage,
  costUsd: Schema.optional(Schema.Number),
  durationMs: Schema.optional(Schema.Number),
  llmCalls: Schema.Number,
  toolCalls: Schema.Number,
});

export const ToolSpecSummary = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  inputSchema: Schema.optional(Schema.Unknown),
});

/** The request body as sent to the model (extended level only). */
export const LlmRequestBody = Schema.Struct({
  model: Schema.optional(Schema.String),
  system: Schema.optional(Schema.String),
  messages: Schema.Array(Schema.Unknown),
  tools: Schema.optional(Schema.Array(ToolSpecSummary)),
  toolChoice: Schema.optional(Schema.Unknown),
  maxOutput: Schema.optional(Schema.Number),
  reasoning: Schema.optional(Schema.Unknown),
});

export const LlmRequestRecord = rec("llm_request", {
  iteration: Schema.Number,
  model: Schema.optional(Schema.String),
  messageCount: Schema.Number,
  tools: Schema.Array(Schema.String),
  body: Schema.optional(LlmRequestBody),
});

/** The request body captured by `recorder.plugin()` (extended level): on the same span as its `llm_request`. */
export const LlmRequestBodyRecord = rec("llm_request_body", {
  iteration: Schema.Number,
  body: LlmRequestBody,
});

export const LlmResponseRecord = rec("llm_response", {
  iteration: Schema.Number,
  model: Schema.optional(Schema.String),
  stopReason: Schema.String,
  /** The provider's id of the response, when it sent one. */
  responseId: Schema.optional(Schema.String),
  /** The stop reason in the provider's own words (`tool_calls`, `end_turn`, `STOP`, …), when it sent one. */
  providerReason: Schema.optional(Schema.String),
  usage: Usage,
  costUsd: Schema.optional(Schema.Number),
  durationMs: Schema.Number,
  /** 1 + the number of retries of this call. */
  attempts: Schema.Number,
  /** The response came from the journal (no model call was made). */
  replayed: Schema.Boolean,
  /** Streamed text, reasoning and tool-call argument text (extended level only). */
  text: Schema.optional(Schema.String),
  reasoning: Schema.optional(Schema.String),
});

export const ToolStartedRecord = rec("tool_started", {
  callId: Schema.String,
  /** lash's id for the call, unique in the session (absent for RLM cell operations and older traces). */
  lashCallId: Schema.optional(Schema.String),
  name: Schema.String,
  args: Schema.Unknown,
  family: Schema.optional(Schema.String),
});

export const ToolCompletedRecord = rec("tool_completed", {
  callId: Schema.String,
  /** lash's id for the call, unique in the session (absent for RLM cell operations and older traces). */
  lashCallId: Schema.optional(Schema.String),
  name: Schema.String,
  isError: Schema.Boolean,
  /** Set on errors: `invalidRequest`, `unavailable`, `timeout`, `cancelled`, `interrupted`, `execution` … */
  errorClass: Schema.optional(Schema.String),
  durationMs: Schema.Number,
  replayed: Schema.Boolean,
  result: Schema.Struct({
    chars: Schema.Number,
    attachments: Schema.Number,
    /** First characters of the text the model saw. */
    preview: Schema.String,
  }),
  /** The whole content and details (extended level only). */
  content: Schema.optional(Schema.Unknown),
  details: Schema.optional(Schema.Unknown),
});

export const ToolProgressRecord = rec("tool_progress", {
  callId: Schema.String,
  /** lash's id for the call, unique in the session (absent for RLM cell operations and older traces). */
  lashCallId: Schema.optional(Schema.String),
  update: Schema.Unknown,
});

export const CodeCellStartedRecord = rec("code_cell_started", {
  index: Schema.Number,
  language: Schema.String,
  source: Schema.String,
});

export const CodeCellCompletedRecord = rec("code_cell_completed", {
  index: Schema.Number,
  ok: Schema.Boolean,
  output: Schema.Array(Schema.String),
  error: Schema.optional(Schema.String),
});

export const RetryRecord = rec("retry", {
  attempt: Schema.Number,
  delayMs: Schema.Number,
  error: Schema.Struct({
    kind: Schema.String,
    message: Schema.String,
    status: Schema.optional(Schema.Number),
    retryable: Schema.optional(Schema.Boolean),
  }),
});

export const AttemptResetRecord = rec("attempt_reset", { attempt: Schema.Number });

export const FrameSwitchRecord = rec("frame_switch", {
  frameId: Schema.String,
  task: Schema.String,
});

export const SubagentStartedRecord = rec("subagent_started", {
  childSessionId: Schema.String,
  callId: Schema.String,
  /** lash's id for the call, unique in the session (absent for RLM cell operations and older traces). */
  lashCallId: Schema.optional(Schema.String),
  data: Schema.optional(Schema.Unknown),
});

export const SubagentFinishedRecord = rec("subagent_finished", {
  childSessionId: Schema.String,
  callId: Schema.String,
  /** lash's id for the call, unique in the session (absent for RLM cell operations and older traces). */
  lashCallId: Schema.optional(Schema.String),
  data: Schema.optional(Schema.Unknown),
});

export const ErrorRecord = rec("error", {
  errorKind: Schema.String,
  message: Schema.String,
});

export const UsageRecord = rec("usage", {
  usage: Usage,
  cumulative: Usage,
  costUsd: Schema.optional(Schema.Number),
});

export const PluginEventRecord = rec("plugin_event", {
  plugin: Schema.String,
  name: Schema.String,
  data: Schema.optional(Schema.Unknown),
});

/**
 * An approval: `requested` (the calls asked about, with why, which policy layer asked and the
 * preview hash) or `resolved` (who decided what; `by: "policy"` for a policy's denial without
 * asking; `replayed` when the answer came from the journal after a crash).
 */
export const ApprovalTraceRecord = rec("approval", {
  requestId: Schema.String,
  phase: Schema.Literal("requested", "resolved"),
  items: Schema.optional(
    Schema.Array(
      Schema.Struct({
        callId: Schema.String,
        lashCallId: Schema.optional(Schema.String),
        tool: Schema.String,
        reason: Schema.String,
        layer: Schema.String,
        previewHash: Schema.String,
        risk: Schema.optional(Schema.Unknown),
        /** The preview (extended level only). */
        preview: Schema.optional(Schema.Unknown),
      }),
    ),
  ),
  by: Schema.optional(Schema.String),
  decisions: Schema.optional(
    Schema.Array(
      Schema.Struct({
        callId: Schema.String,
        tool: Schema.optional(Schema.String),
        decision: Schema.Literal("approve", "deny"),
        scope: Schema.optional(Schema.Literal("once", "session")),
        reason: Schema.optional(Schema.String),
        layer: Schema.optional(Schema.String),
        edited: Schema.optional(Schema.Boolean),
      }),
    ),
  ),
  replayed: Schema.optional(Schema.Boolean),
});

export const TraceRecord = Schema.Union(
  TurnStartedRecord,
  TurnFinishedRecord,
  LlmRequestRecord,
  LlmRequestBodyRecord,
  LlmResponseRecord,
  ToolStartedRecord,
  ToolCompletedRecord,
  ToolProgressRecord,
  CodeCellStartedRecord,
  CodeCellCompletedRecord,
  RetryRecord,
  AttemptResetRecord,
  FrameSwitchRecord,
  SubagentStartedRecord,
  SubagentFinishedRecord,
  ErrorRecord,
  UsageRecord,
  PluginEventRecord,
  ApprovalTraceRecord,
);
export type TraceRecord = typeof TraceRecord.Type;
export type TraceKind = TraceRecord["kind"];
export type RecordOf<K extends TraceKind> = Extract<TraceRecord, { kind: K }>;

/** Every kind this version writes. */
export const TRACE_KINDS: readonly TraceKind[] = TraceRecord.members.map(
  (m) => m.fields.kind.literals[0] as TraceKind,
);

const decodeRecord = Schema.decodeUnknownEither(TraceRecord);

/** One line of a trace file, parsed: a known record, an unknown (future) record, or a line that is not JSON. */
export type ParsedLine =
  | { readonly type: "record"; readonly line: number; readonly record: TraceRecord; readonly raw: unknown }
  | { readonly type: "unknown"; readonly line: number; readonly raw: unknown; readonly reason: string }
  | { readonly type: "invalid"; readonly line: number; readonly text: string; readonly reason: string };

/** Parse a JSONL trace. Lines of kinds this version does not know are kept as `unknown`, never dropped. */
export function parseTrace(text: string): ParsedLine[] {
  const out: ParsedLine[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.trim();
    if (t === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(t);
    } catch (e) {
      out.push({ type: "invalid", line: i + 1, text: t, reason: e instanceof Error ? e.message : String(e) });
      continue;
    }
    const r = decodeRecord(raw);
    if (Either.isRight(r)) out.push({ type: "record", line: i + 1, record: r.right, raw });
    else {
      const kind = typeof raw === "object" && raw !== null && "kind" in raw ? String(raw.kind) : "(no kind)";
      out.push({
        type: "unknown",
        line: i + 1,
        raw,
        reason: (TRACE_KINDS as readonly string[]).includes(kind)
          ? `does not match the ${kind} schema of version ${TRACE_SCHEMA_VERSION}`
          : `unknown kind ${kind}`,
      });
    }
  }
  return out;
}
