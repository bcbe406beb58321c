import type { LlmRequest, Message, ToolResultContent } from "@lash/sansio";
import { Effect } from "effect";
import type { TraceInput } from "./input.ts";
import { makeRedactor, type RedactionOptions, type Redactor } from "./redact.ts";
import { type RecordOf, TRACE_SCHEMA_VERSION, type TraceKind, type TraceRecord } from "./schema.ts";
import { IsolatedSink, type IsolationOptions, type SinkStats, type TraceSink } from "./sink.ts";

export type TraceLevel = "standard" | "extended";

export interface TraceRecorderOptions extends IsolationOptions {
  /** Each sink gets its own bounded queue: one slow or failing sink never holds the others. */
  readonly sinks: readonly TraceSink[];
  /** `standard` (default) omits bodies; `extended` keeps request bodies, streamed text, tool contents, usage and progress records. */
  readonly level?: TraceLevel;
  /** Redaction settings (always on; `process.env` is scanned unless `env` is given). */
  readonly redact?: RedactionOptions;
  /** Characters kept in previews (default 200). */
  readonly previewChars?: number;
  /** Prefix of record ids (default: a random 8-hex id). */
  readonly recorderId?: string;
  /** Clock for records whose event has no `at` (default `Date.now`). */
  readonly now?: () => number;
  /** Flush the sinks after every top-level turn (default true). */
  readonly flushOnTurnEnd?: boolean;
}

export interface TraceStats {
  readonly records: number;
  readonly sinks: readonly SinkStats[];
}

/** Structurally a `@lash/core` Plugin: captures request bodies (after `transformContext`) for the `extended` level. */
export interface TracePlugin {
  readonly name: string;
  readonly hooks: {
    readonly beforeLlmCall: (
      ctx: { readonly session: { readonly id: string }; readonly turnId: string },
      request: LlmRequest,
    ) => Effect.Effect<void>;
  };
}

export interface TraceRecorder {
  /** Record one activity event (pass core's `TurnActivity` as is). Synchronous; never throws. */
  readonly record: (event: TraceInput) => void;
  /** Attach the body of the current model request of a turn (extended level; ignored at standard). */
  readonly recordRequest: (sessionId: string, turnId: string, request: LlmRequest) => void;
  /** A plugin that calls `recordRequest` for every model call. */
  readonly plugin: () => TracePlugin;
  /**
   * Nest a session's records under a parent's tool call. Subagent `childStarted`
   * plugin events do this automatically; hosts that learn the link another way call it.
   */
  readonly linkChild: (childSessionId: string, parent: { sessionId: string; callId: string }) => void;
  /** Write everything recorded so far and flush every sink (bounded; never rejects). */
  readonly flush: () => Promise<void>;
  /** Flush and close every sink (bounded; never rejects). Later records are dropped. */
  readonly close: () => Promise<void>;
  readonly stats: () => TraceStats;
}

interface TurnState {
  readonly startedAt: number;
  iteration: number;
  llmCalls: number;
  toolCalls: number;
  retries: number;
  text: string;
  reasoning: string;
  cells: number;
  openCells: number[];
  model?: string;
  /** Tool span ids of this turn, by lash's call id and by the provider's id (the latest call using it). */
  toolSpans: Map<string, string>;
}

const spanOf = {
  session: (sid: string) => `session:${sid}`,
  turn: (sid: string, tid: string) => `turn:${sid}:${tid}`,
  llm: (sid: string, tid: string, iteration: number) => `llm:${sid}:${tid}:${iteration}`,
  tool: (sid: string, callId: string) => `tool:${sid}:${callId}`,
  code: (sid: string, tid: string, n: number) => `code:${sid}:${tid}:${n}`,
};
export const traceSpanIds = spanOf;

function randomId(): string {
  return Math.floor(Math.random() * 0xffffffff)
    .toString(16)
    .padStart(8, "0");
}

function preview(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n)}…`;
}

function textOf(content: readonly ToolResultContent[]): { text: string; attachments: number } {
  let text = "";
  let attachments = 0;
  for (const c of content) {
    if (c.type === "text") text += c.text;
    else attachments++;
  }
  return { text, attachments };
}

/** The failure class of an error tool result: from its details when the tool gave one, else from the text. */
export function errorClassOf(text: string, details: unknown): string {
  if (typeof details === "object" && details !== null) {
    const d = details as { errorClass?: unknown; class?: unknown };
    if (typeof d.errorClass === "string") return d.errorClass;
    if (typeof d.class === "string") return d.class;
  }
  const t = text.toLowerCase();
  if (t.startsWith("invalid arguments")) return "invalidRequest";
  if (t.startsWith("unknown tool") || t.includes("is not available")) return "unavailable";
  if (t.includes("timed out") || t.includes("timeout")) return "timeout";
  if (t.startsWith("cancelled")) return "cancelled";
  if (t.includes("interrupted")) return "interrupted";
  if (t.includes("permission") || t.includes("denied")) return "permissionDenied";
  if (t.includes("crashed")) return "internal";
  return "execution";
}

function messageText(messages: readonly Message[]): string {
  return messages
    .flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])))
    .join(" ")
    .trim();
}

function bodyOf(request: LlmRequest): RecordOf<"llm_request_body">["body"] {
  return {
    model: request.model,
    ...(request.system !== undefined ? { system: request.system } : {}),
    messages: request.messages,
    tools: request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    })),
    ...(request.toolChoice !== undefined ? { toolChoice: request.toolChoice } : {}),
    ...(request.maxOutput !== undefined ? { maxOutput: request.maxOutput } : {}),
    ...(request.reasoning !== undefined ? { reasoning: request.reasoning } : {}),
  };
}

type Payload<K extends TraceKind> = Omit<
  RecordOf<K>,
  "v" | "id" | "ts" | "kind" | "sessionId" | "turnId" | "spanId" | "parentSpanId"
>;

/**
 * The trace recorder: turns activity events into versioned trace records
 * (with span and parent-span ids), redacts them, and hands them to every sink
 * through a bounded queue. Sinks never fail or hold a turn.
 */
export function createTraceRecorder(options: TraceRecorderOptions): TraceRecorder {
  const level = options.level ?? "standard";
  const extended = level === "extended";
  const n = options.previewChars ?? 200;
  const now = options.now ?? Date.now;
  const rid = options.recorderId ?? randomId();
  const redact: Redactor = makeRedactor(options.redact);
  const sinks = options.sinks.map((s) => new IsolatedSink(s, options));
  const flushOnTurnEnd = options.flushOnTurnEnd ?? true;
  const turns = new Map<string, TurnState>();
  const sessionParent = new Map<string, string>();
  let count = 0;
  let closed = false;

  const turnKey = (sid: string, tid: string) => `${sid}\u0000${tid}`;

  const emit = <K extends TraceKind>(
    kind: K,
    at: { sessionId: string; turnId?: string | undefined; ts: number },
    span: { spanId: string; parentSpanId?: string | undefined },
    payload: Payload<K>,
  ) => {
    if (closed) return;
    const record = {
      v: TRACE_SCHEMA_VERSION,
      id: `${rid}-${++count}`,
      ts: at.ts,
      kind,
      sessionId: at.sessionId,
      ...(at.turnId ? { turnId: at.turnId } : {}),
      spanId: span.spanId,
      ...(span.parentSpanId !== undefined ? { parentSpanId: span.parentSpanId } : {}),
      ...payload,
    } as unknown as TraceRecord;
    let safe: TraceRecord;
    try {
      safe = redact(record);
    } catch {
      return;
    }
    const batch = [safe];
    for (const s of sinks) s.push(batch);
  };

  const turnSpan = (sid: string, tid: string) => ({
    spanId: spanOf.turn(sid, tid),
    parentSpanId: sessionParent.has(sid) ? spanOf.session(sid) : undefined,
  });

  const stateOf = (sid: string, tid: string, ts: number): TurnState => {
    const key = turnKey(sid, tid);
    let s = turns.get(key);
    if (!s) {
      s = {
        startedAt: ts,
        iteration: 0,
        llmCalls: 0,
        toolCalls: 0,
        retries: 0,
        text: "",
        reasoning: "",
        cells: 0,
        openCells: [],
        toolSpans: new Map(),
      };
      turns.set(key, s);
    }
    return s;
  };

  /**
   * A tool call's span: by lash's call id (unique in the session), else by turn and the provider's id —
   * providers reuse their ids across turns, and a reused id must never merge two calls into one span.
   */
  const openToolSpan = (sid: string, tid: string, s: TurnState, callId: string, lashCallId?: string) => {
    let span = spanOf.tool(sid, lashCallId ?? `${tid}:${callId}`);
    const used = new Set(s.toolSpans.values());
    for (let k = 2; used.has(span); k++) span = spanOf.tool(sid, `${lashCallId ?? `${tid}:${callId}`}#${k}`);
    if (lashCallId !== undefined) s.toolSpans.set(`lash:${lashCallId}`, span);
    s.toolSpans.set(`provider:${callId}`, span);
    return span;
  };
  const toolSpan = (sid: string, tid: string, s: TurnState, callId: string, lashCallId?: string) =>
    (lashCallId !== undefined ? s.toolSpans.get(`lash:${lashCallId}`) : undefined) ??
    s.toolSpans.get(`provider:${callId}`) ??
    spanOf.tool(sid, lashCallId ?? `${tid}:${callId}`);
  const lashIdOf = (e: { lashCallId?: string }) =>
    e.lashCallId !== undefined ? { lashCallId: e.lashCallId } : {};

  const toolParent = (sid: string, tid: string, s: TurnState) => {
    const open = s.openCells.at(-1);
    return open !== undefined ? spanOf.code(sid, tid, open) : spanOf.turn(sid, tid);
  };

  const flushAll = () => Promise.all(sinks.map((s) => s.flush())).then(() => undefined);

  const record = (event: TraceInput): void => {
    try {
      recordUnsafe(event);
    } catch {
      // a malformed event must never reach the turn
    }
  };

  const recordUnsafe = (event: TraceInput): void => {
    if (closed) return;
    const sid = event.sessionId;
    const tid = event.turnId;
    const ts = event.at ?? now();
    const at = { sessionId: sid, turnId: tid || undefined, ts };
    const s = stateOf(sid, tid, ts);
    const turn = turnSpan(sid, tid);
    const llm = () => ({ spanId: spanOf.llm(sid, tid, s.iteration), parentSpanId: turn.spanId });
    switch (event.type) {
      case "turnStarted": {
        s.model = event.model;
        const text = messageText(event.input);
        emit("turn_started", at, turn, {
          model: event.model,
          resumed: event.resumed,
          inputMessages: event.input.length,
          ...(text ? { inputPreview: preview(text, n) } : {}),
          ...(extended ? { input: event.input } : {}),
        });
        return;
      }
      case "llmRequest": {
        s.iteration = event.iteration;
        s.llmCalls++;
        s.retries = 0;
        s.text = "";
        s.reasoning = "";
        const body = event.request;
        emit("llm_request", at, llm(), {
          iteration: event.iteration,
          ...(s.model ? { model: s.model } : {}),
          messageCount: event.messageCount,
          tools: event.tools,
          ...(extended && body ? { body: bodyOf(body) } : {}),
        });
        return;
      }
      case "textDelta":
        if (extended) s.text += event.text;
        return;
      case "reasoningDelta":
        if (extended) s.reasoning += event.text;
        return;
      case "toolCallDelta":
        return;
      case "retry":
        s.retries++;
        emit("retry", at, llm(), {
          attempt: event.attempt,
          delayMs: event.delayMs,
          error: {
            kind: event.error.kind,
            message: event.error.message,
            ...(event.error.status !== undefined ? { status: event.error.status } : {}),
            retryable: event.error.retryable,
          },
        });
        return;
      case "attemptReset":
        s.text = "";
        s.reasoning = "";
        emit("attempt_reset", at, llm(), { attempt: event.attempt });
        return;
      case "llmResponse":
        s.iteration = event.iteration;
        emit("llm_response", at, llm(), {
          iteration: event.iteration,
          ...(s.model ? { model: s.model } : {}),
          stopReason: event.stopReason,
          ...(event.responseId !== undefined ? { responseId: event.responseId } : {}),
          ...(event.providerReason !== undefined ? { providerReason: event.providerReason } : {}),
          usage: event.usage,
          ...(event.costUsd !== undefined ? { costUsd: event.costUsd } : {}),
          durationMs: event.durationMs,
          attempts: 1 + s.retries,
          replayed: event.replayed,
          ...(extended && s.text ? { text: s.text } : {}),
          ...(extended && s.reasoning ? { reasoning: s.reasoning } : {}),
        });
        return;
      case "toolStarted":
        s.toolCalls++;
        emit(
          "tool_started",
          at,
          {
            spanId: openToolSpan(sid, tid, s, event.callId, event.lashCallId),
            parentSpanId: toolParent(sid, tid, s),
          },
          {
            callId: event.callId,
            ...lashIdOf(event),
            name: event.name,
            args: event.args,
            ...(event.family !== undefined ? { family: event.family } : {}),
          },
        );
        return;
      case "toolProgress":
        if (extended)
          emit(
            "tool_progress",
            at,
            {
              spanId: toolSpan(sid, tid, s, event.callId, event.lashCallId),
              parentSpanId: toolParent(sid, tid, s),
            },
            { callId: event.callId, ...lashIdOf(event), update: event.update },
          );
        return;
      case "toolCompleted": {
        const { text, attachments } = textOf(event.content);
        emit(
          "tool_completed",
          at,
          {
            spanId: toolSpan(sid, tid, s, event.callId, event.lashCallId),
            parentSpanId: toolParent(sid, tid, s),
          },
          {
            callId: event.callId,
            ...lashIdOf(event),
            name: event.name,
            isError: event.isError,
            ...(event.isError ? { errorClass: errorClassOf(text, event.details) } : {}),
            durationMs: event.durationMs,
            replayed: event.replayed,
            result: { chars: text.length, attachments, preview: preview(text, n) },
            ...(extended ? { content: event.content } : {}),
            ...(extended && event.details !== undefined ? { details: event.details } : {}),
          },
        );
        return;
      }
      case "messages":
        for (const m of event.messages) {
          const codes = m.parts.filter((p) => p.type === "code");
          for (const c of codes) {
            const index = ++s.cells;
            s.openCells.push(index);
            emit(
              "code_cell_started",
              at,
              { spanId: spanOf.code(sid, tid, index), parentSpanId: turn.spanId },
              { index, language: c.language, source: c.source },
            );
          }
          if (codes.length > 0) continue;
          const outputs = m.parts.flatMap((p) => (p.type === "output" ? [p.text] : []));
          const errors = m.parts.flatMap((p) => (p.type === "error" ? [p.message] : []));
          const index = s.openCells[0];
          // the cell's observation: a tool-role message (RLM) or any message with printed output or errors
          if (index !== undefined && (m.role === "tool" || outputs.length > 0 || errors.length > 0)) {
            s.openCells.shift();
            emit(
              "code_cell_completed",
              at,
              { spanId: spanOf.code(sid, tid, index), parentSpanId: turn.spanId },
              {
                index,
                ok: errors.length === 0,
                output: outputs,
                ...(errors.length ? { error: errors.join("\n") } : {}),
              },
            );
          }
        }
        return;
      case "usage":
        if (extended)
          emit("usage", at, turn, {
            usage: event.usage,
            cumulative: event.cumulative,
            ...(event.costUsd !== undefined ? { costUsd: event.costUsd } : {}),
          });
        return;
      case "error":
        emit("error", at, turn, { errorKind: event.kind, message: event.message });
        return;
      case "approvalRequested":
        emit("approval", at, turn, {
          requestId: event.requestId,
          phase: "requested",
          items: event.items.map((i) => ({
            callId: i.callId,
            ...(i.lashCallId !== undefined ? { lashCallId: i.lashCallId } : {}),
            tool: i.tool,
            reason: i.reason,
            layer: i.layer,
            previewHash: i.previewHash,
            ...(i.risk !== undefined ? { risk: i.risk } : {}),
            ...(extended && i.preview !== undefined ? { preview: i.preview } : {}),
          })),
        });
        return;
      case "approvalResolved":
        emit("approval", at, turn, {
          requestId: event.requestId,
          phase: "resolved",
          by: event.by,
          decisions: event.decisions.map((d) => ({
            callId: d.callId,
            ...(d.tool !== undefined ? { tool: d.tool } : {}),
            decision: d.decision,
            ...(d.scope !== undefined ? { scope: d.scope } : {}),
            ...(d.reason !== undefined ? { reason: d.reason } : {}),
            ...(d.layer !== undefined ? { layer: d.layer } : {}),
            ...(d.args !== undefined ? { edited: true } : {}),
          })),
          replayed: event.replayed,
        });
        return;
      case "plugin": {
        const data = event.data as
          | { childSessionId?: unknown; callId?: unknown; lashCallId?: unknown }
          | null
          | undefined;
        if (
          event.plugin === "subagents" &&
          (event.name === "childStarted" || event.name === "childFinished") &&
          typeof data?.childSessionId === "string" &&
          typeof data.callId === "string"
        ) {
          const child = data.childSessionId;
          const lashCallId = typeof data.lashCallId === "string" ? data.lashCallId : undefined;
          const parentSpan = toolSpan(sid, tid, s, data.callId, lashCallId);
          sessionParent.set(child, parentSpan);
          emit(
            event.name === "childStarted" ? "subagent_started" : "subagent_finished",
            at,
            { spanId: spanOf.session(child), parentSpanId: parentSpan },
            {
              childSessionId: child,
              callId: data.callId,
              ...(lashCallId !== undefined ? { lashCallId } : {}),
              data: event.data,
            },
          );
          return;
        }
        emit("plugin_event", at, turn, { plugin: event.plugin, name: event.name, data: event.data });
        return;
      }
      case "turnFinished": {
        const o = event.outcome;
        if (o.type === "frameSwitch")
          emit("frame_switch", at, turn, { frameId: o.frameId, task: preview(o.task, extended ? 1e9 : n) });
        emit("turn_finished", at, turn, {
          status: o.type === "finished" ? "completed" : o.type === "stopped" ? "stopped" : "frameSwitch",
          reason: o.type === "finished" ? o.finish.kind : o.type === "stopped" ? o.reason : "frameSwitch",
          ...(o.type === "stopped" && o.message !== undefined ? { message: o.message } : {}),
          usage: event.usage,
          ...(event.costUsd !== undefined ? { costUsd: event.costUsd } : {}),
          durationMs: ts - s.startedAt,
          llmCalls: s.llmCalls,
          toolCalls: s.toolCalls,
        });
        turns.delete(turnKey(sid, tid));
        if (flushOnTurnEnd && !sessionParent.has(sid)) void flushAll();
        return;
      }
      default: {
        // an activity type this version does not know: kept as a plugin event, never dropped
        const {
          sessionId: _s,
          turnId: _t,
          seq: _q,
          at: _a,
          type,
          ...rest
        } = event as unknown as {
          type: string;
          [k: string]: unknown;
        };
        emit("plugin_event", at, turn, { plugin: "activity", name: type, data: rest });
      }
    }
  };

  const recordRequest = (sessionId: string, turnId: string, request: LlmRequest) => {
    if (!extended || closed) return;
    const s = stateOf(sessionId, turnId, now());
    emit(
      "llm_request_body",
      { sessionId, turnId, ts: now() },
      {
        spanId: spanOf.llm(sessionId, turnId, s.iteration),
        parentSpanId: turnSpan(sessionId, turnId).spanId,
      },
      { iteration: s.iteration, body: bodyOf(request) },
    );
  };

  return {
    record,
    recordRequest,
    plugin: () => ({
      name: "trace",
      hooks: {
        beforeLlmCall: (ctx, request) =>
          Effect.sync(() => {
            // the activity `llmRequest` event precedes the call: the body follows as its own record
            recordRequest(ctx.session.id, ctx.turnId, request);
          }),
      },
    }),
    linkChild: (child, parent) => {
      // the span of that call (by lash's id or the provider's, the latest turn that used it)
      let span: string | undefined;
      const prefix = `${parent.sessionId}\u0000`;
      for (const [key, st] of turns) {
        if (!key.startsWith(prefix)) continue;
        span =
          st.toolSpans.get(`lash:${parent.callId}`) ?? st.toolSpans.get(`provider:${parent.callId}`) ?? span;
      }
      sessionParent.set(child, span ?? spanOf.tool(parent.sessionId, parent.callId));
    },
    flush: flushAll,
    close: async () => {
      if (closed) return;
      await flushAll();
      closed = true;
      await Promise.all(sinks.map((s) => s.close()));
    },
    stats: () => ({ records: count, sinks: sinks.map((s) => s.stats()) }),
  };
}
