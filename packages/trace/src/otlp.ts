import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization";
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer";
import * as FetchHttpClient from "@effect/platform/FetchHttpClient";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from "@opentelemetry/semantic-conventions/incubating";
import { Context, Duration, Effect, Exit, Layer, Option, Scope, type Tracer } from "effect";
import { finishReasonFor, providerOf } from "./otlp-attrs.ts";
import type { RecordOf, TraceRecord } from "./schema.ts";
import type { TraceSink } from "./sink.ts";

/** The OTLP/HTTP encodings the sink speaks. */
export type OtlpProtocol = "http/json" | "http/protobuf";

export interface OtlpSinkOptions {
  /** Collector base URL (`http://localhost:4318`) or the full traces endpoint (`…/v1/traces`). */
  readonly url: string;
  /** Use `url` as is (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): `/v1/traces` is never appended. */
  readonly exactUrl?: boolean;
  /** `http/json` (default) or `http/protobuf`. */
  readonly protocol?: OtlpProtocol;
  /**
   * The base URL a model's requests go to (`provider/model` → URL): gives `server.address` /
   * `server.port` and names the server behind an OpenAI-compatible endpoint.
   */
  readonly endpointOf?: (model: string) => string | undefined;
  /**
   * Called once (for the sink's lifetime) when an export fails — a refused connection, an
   * unknown host, an HTTP error — with one line naming the collector. Spans of a failed
   * export are dropped; the turn is never held or failed.
   */
  readonly onExportError?: (message: string) => void;
  /** Sent with every export (e.g. an API key for a hosted collector; never written to the trace). */
  readonly headers?: { readonly [name: string]: string };
  /** `service.name` of the resource (default `lash`). */
  readonly serviceName?: string;
  readonly serviceVersion?: string;
  readonly resourceAttributes?: { readonly [name: string]: unknown };
  /** Periodic export interval (default 5 s); every `flush` between turns exports too. */
  readonly exportIntervalMs?: number;
  /** Longest wait for the final export on flush/close (default 3 s). */
  readonly shutdownTimeoutMs?: number;
}

/** `provider/model` → `{provider, model}` (the provider as lash names it). */
function splitModel(id: string | undefined): { provider?: string; model?: string } {
  if (!id) return {};
  const i = id.indexOf("/");
  if (i < 0) return { model: id };
  return { provider: id.slice(0, i), model: id.slice(i + 1) };
}

const nanos = (ms: number) => BigInt(Math.round(ms)) * 1_000_000n;

class TraceSpanError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

interface Exporter {
  readonly scope: Scope.CloseableScope;
  readonly tracer: Tracer.Tracer;
}

/** A subagent's one `invoke_agent` span: its child session's turns are merged into it. */
interface Agent {
  turnsOpen: number;
  /** `subagent_finished` arrived while a child turn was still open: end when it closes. */
  finishTs?: number;
  error?: { name: string; message: string };
  input: number;
  output: number;
}

type OtlpAttribute = { key: string; value: unknown };
type OtlpData = {
  resourceSpans?: {
    scopeSpans?: {
      spans?: { attributes?: OtlpAttribute[]; events?: { name: string; attributes?: OtlpAttribute[] }[] }[];
    }[];
  }[];
};

/**
 * Effect's OTLP spans label every failure "⚠︎ Interrupted" and add a stack trace of the span's
 * end: drop both, so a failed span carries its error's type (`error.type`) and message only.
 */
function cleanSpans(data: unknown): unknown {
  for (const rs of (data as OtlpData).resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? []) {
        if (span.attributes)
          span.attributes = span.attributes.filter(
            (a) => a.key !== "span.label" && a.key !== "status.interrupted",
          );
        for (const ev of span.events ?? [])
          if (ev.name === "exception" && ev.attributes)
            ev.attributes = ev.attributes.filter((a) => a.key !== "exception.stacktrace");
      }
  return data;
}

function describeFetchError(e: unknown, url: string): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  if (code === "ECONNREFUSED")
    return `connection refused by the OpenTelemetry collector at ${url}; spans are not exported`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `cannot resolve the host of the OpenTelemetry collector at ${url}; spans are not exported`;
  const detail =
    typeof cause?.message === "string" ? cause.message : e instanceof Error ? e.message : String(e);
  return `cannot reach the OpenTelemetry collector at ${url} (${code ?? detail}); spans are not exported`;
}

/**
 * Exports trace records as OpenTelemetry spans over OTLP/HTTP (JSON or protobuf) with the
 * GenAI semantic conventions, through `@effect/opentelemetry`'s OTLP tracer:
 * a turn is an `invoke_agent` span, a model call a `chat {model}` span
 * (`gen_ai.provider.name`, `server.address`/`server.port`, `gen_ai.request.model`,
 * `gen_ai.usage.input_tokens` / `output_tokens`, `gen_ai.response.finish_reasons` in the
 * vendor's words), a tool call an `execute_tool {name}` span (`gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments`), a code cell an `execute_code` span
 * and a subagent one `invoke_agent` span under the tool call that spawned it (its turns
 * merged into it). Failed spans have status ERROR with the error's message and `error.type`.
 * Retries, errors, frame switches and plugin events (RLM, …) are span events.
 */
export function otlpSink(options: OtlpSinkOptions): TraceSink {
  const url =
    options.exactUrl || /\/v1\/traces\/?$/.test(options.url)
      ? options.url
      : `${options.url.replace(/\/$/, "")}/v1/traces`;
  const shutdown = Duration.millis(options.shutdownTimeoutMs ?? 3_000);
  const spans = new Map<string, Tracer.Span>();
  const models = new Map<string, string>();
  /** A subagent's turn span id → the subagent's `invoke_agent` span id. */
  const aliases = new Map<string, string>();
  /** The model call in flight per turn span: a provider failure (an `error` record) ends it as failed. */
  const openChat = new Map<string, string>();
  const agents = new Map<string, Agent>();
  let exporter: Exporter | undefined;

  // Export failures: said once, and the batch dropped at once (no retry loop holding a flush).
  let reported = false;
  let backoffUntil = 0;
  const report = (message: string) => {
    if (reported) return;
    reported = true;
    try {
      options.onExportError?.(message);
    } catch {
      // a reporter's failure never reaches the exporter
    }
  };
  const dropped = () => new Response(null, { status: 204 });
  const fetchOnce: typeof globalThis.fetch = async (input, init) => {
    if (Date.now() < backoffUntil) return dropped();
    try {
      const res = await globalThis.fetch(input, init);
      if (!res.ok) {
        report(`the OpenTelemetry collector at ${url} answered HTTP ${res.status}; spans are not exported`);
        if (res.status !== 429 && res.status < 500) {
          await res.body?.cancel().catch(() => undefined);
          return dropped();
        }
      }
      return res;
    } catch (e) {
      if (init?.signal?.aborted) {
        // lash stopped waiting (the flush's bound): a collector that accepts but never answers
        report(`the OpenTelemetry collector at ${url} did not answer in time; spans may be lost`);
        throw e;
      }
      report(describeFetchError(e, url));
      backoffUntil = Date.now() + 30_000;
      return dropped();
    }
  };
  const base =
    options.protocol === "http/protobuf" ? OtlpSerialization.layerProtobuf : OtlpSerialization.layerJson;
  const serialization = Layer.effect(
    OtlpSerialization.OtlpSerialization,
    Effect.map(OtlpSerialization.OtlpSerialization, (s) => ({
      ...s,
      traces: (data: unknown) => s.traces(cleanSpans(data)),
    })),
  ).pipe(Layer.provide(base));
  const http = FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, fetchOnce)));

  const build = Effect.gen(function* () {
    const scope = yield* Scope.make();
    const tracer = yield* OtlpTracer.make({
      url,
      resource: {
        serviceName: options.serviceName ?? "lash",
        ...(options.serviceVersion !== undefined ? { serviceVersion: options.serviceVersion } : {}),
        ...(options.resourceAttributes ? { attributes: { ...options.resourceAttributes } } : {}),
      },
      ...(options.headers ? { headers: { ...options.headers } } : {}),
      exportInterval: Duration.millis(options.exportIntervalMs ?? 5_000),
      shutdownTimeout: shutdown,
    }).pipe(Scope.extend(scope), Effect.provide(Layer.merge(http, serialization)));
    return { scope, tracer } satisfies Exporter;
  });

  const tracer = (): Tracer.Tracer => {
    exporter ??= Effect.runSync(build);
    return exporter.tracer;
  };

  const spanOf = (id: string | undefined) =>
    id === undefined ? undefined : spans.get(aliases.get(id) ?? id);

  const start = (
    r: TraceRecord,
    name: string,
    kind: Tracer.SpanKind,
    attributes: Record<string, unknown>,
    startMs = r.ts,
  ) => {
    const parent = spanOf(r.parentSpanId);
    const span = tracer().span(
      name,
      parent ? Option.some(parent) : Option.none(),
      Context.empty(),
      [],
      nanos(startMs),
      kind,
    );
    span.attribute("lash.session.id", r.sessionId);
    if (r.turnId) span.attribute("lash.turn.id", r.turnId);
    span.attribute("lash.span.id", r.spanId);
    setAll(span, attributes);
    spans.set(r.spanId, span);
    return span;
  };

  const setAll = (span: Tracer.Span, attributes: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(attributes)) if (v !== undefined) span.attribute(k, v);
  };

  const endSpan = (id: string, ts: number, error?: { name: string; message: string }) => {
    const span = spans.get(id);
    if (!span) return;
    spans.delete(id);
    agents.delete(id);
    span.end(
      nanos(Math.max(ts, Number((span.status.startTime as bigint) / 1_000_000n))),
      error ? Exit.fail(new TraceSpanError(error.name, error.message)) : Exit.void,
    );
  };

  const end = (
    r: TraceRecord,
    attributes: Record<string, unknown>,
    error?: { name: string; message: string },
  ) => {
    const span = spans.get(r.spanId);
    if (!span) return;
    setAll(span, { ...attributes, ...(error ? { "error.type": error.name } : {}) });
    endSpan(r.spanId, r.ts, error);
  };

  const event = (r: TraceRecord, name: string, attributes: Record<string, unknown>) => {
    const span = spanOf(r.spanId) ?? spanOf(r.parentSpanId);
    span?.event(name, nanos(r.ts), attributes);
  };

  const modelAttrs = (model: string | undefined) => {
    const m = splitModel(model);
    const p = providerOf(m.provider, model ? options.endpointOf?.(model) : undefined);
    return {
      [ATTR_GEN_AI_PROVIDER_NAME]: p.name,
      [ATTR_GEN_AI_REQUEST_MODEL]: m.model,
      "server.address": p.address,
      "server.port": p.port,
    };
  };

  /** Plugin event data as span-event attributes: `lash.{plugin}.{key}` (objects as JSON). */
  const dataAttrs = (plugin: string, data: unknown): Record<string, unknown> => {
    if (data === undefined || data === null) return {};
    if (typeof data !== "object") return { [`lash.${plugin}.value`]: data };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
      if (v === undefined) continue;
      out[`lash.${plugin}.${k}`] =
        typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : JSON.stringify(v);
    }
    return out;
  };

  const turnError = (r: RecordOf<"turn_finished">) =>
    r.status === "stopped" && r.reason !== "cancelled"
      ? { name: r.reason, message: r.message ?? `the turn stopped: ${r.reason}` }
      : undefined;

  const write = (r: TraceRecord) => {
    switch (r.kind) {
      case "turn_started": {
        if (r.model) models.set(r.sessionId, r.model);
        const agentId =
          r.parentSpanId !== undefined ? (aliases.get(r.parentSpanId) ?? r.parentSpanId) : undefined;
        const agent = agentId !== undefined ? agents.get(agentId) : undefined;
        const agentSpan = agentId !== undefined ? spans.get(agentId) : undefined;
        if (agent && agentSpan && agentId !== undefined) {
          // a subagent's turn: part of its one invoke_agent span
          aliases.set(r.spanId, agentId);
          agent.turnsOpen++;
          setAll(agentSpan, {
            ...modelAttrs(r.model),
            [ATTR_GEN_AI_CONVERSATION_ID]: r.sessionId,
            "lash.turn.resumed": r.resumed || undefined,
          });
          return;
        }
        start(r, r.parentSpanId ? "invoke_agent subagent" : "invoke_agent lash", "internal", {
          [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
          [ATTR_GEN_AI_AGENT_NAME]: r.parentSpanId ? "lash subagent" : "lash",
          [ATTR_GEN_AI_CONVERSATION_ID]: r.sessionId,
          "lash.turn.resumed": r.resumed,
          ...modelAttrs(r.model),
        });
        return;
      }
      case "turn_finished": {
        const leftover = openChat.get(r.spanId);
        openChat.delete(r.spanId);
        if (leftover !== undefined && spans.has(leftover)) {
          const error = turnError(r);
          if (error) spans.get(leftover)?.attribute("error.type", error.name);
          else spans.get(leftover)?.attribute("lash.unfinished", true);
          endSpan(leftover, r.ts, error);
        }
        const agentId = aliases.get(r.spanId);
        const agent = agentId !== undefined ? agents.get(agentId) : undefined;
        if (agentId !== undefined) {
          aliases.delete(r.spanId);
          const span = spans.get(agentId);
          if (!agent || !span) return;
          agent.turnsOpen--;
          agent.input += r.usage.input ?? 0;
          agent.output += r.usage.output ?? 0;
          agent.error = turnError(r) ?? agent.error;
          setAll(span, {
            "lash.turn.status": r.status,
            "lash.turn.reason": r.reason,
            [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: agent.input,
            [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: agent.output,
          });
          if (agent.finishTs !== undefined && agent.turnsOpen <= 0) {
            if (agent.error) span.attribute("error.type", agent.error.name);
            endSpan(agentId, Math.max(agent.finishTs, r.ts), agent.error);
          }
          return;
        }
        end(
          r,
          {
            "lash.turn.status": r.status,
            "lash.turn.reason": r.reason,
            [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: r.usage.input,
            [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: r.usage.output,
            "lash.cost_usd": r.costUsd,
            "lash.llm_calls": r.llmCalls,
            "lash.tool_calls": r.toolCalls,
          },
          turnError(r),
        );
        return;
      }
      case "llm_request": {
        const model = r.model ?? models.get(r.sessionId);
        if (r.parentSpanId !== undefined) openChat.set(r.parentSpanId, r.spanId);
        start(r, `chat ${splitModel(model).model ?? "model"}`, "client", {
          [ATTR_GEN_AI_OPERATION_NAME]: "chat",
          [ATTR_GEN_AI_CONVERSATION_ID]: r.sessionId,
          ...modelAttrs(model),
          "lash.llm.iteration": r.iteration,
          "lash.llm.message_count": r.messageCount,
          "lash.llm.tools": [...r.tools],
        });
        return;
      }
      case "llm_response": {
        const model = r.model ?? models.get(r.sessionId);
        if (r.parentSpanId !== undefined && openChat.get(r.parentSpanId) === r.spanId)
          openChat.delete(r.parentSpanId);
        if (!spans.has(r.spanId))
          start(
            r,
            `chat ${splitModel(model).model ?? "model"}`,
            "client",
            { [ATTR_GEN_AI_OPERATION_NAME]: "chat", ...modelAttrs(model) },
            r.ts - r.durationMs,
          );
        end(
          r,
          {
            [ATTR_GEN_AI_RESPONSE_MODEL]: splitModel(model).model,
            [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [
              r.providerReason ?? finishReasonFor(splitModel(model).provider, r.stopReason),
            ],
            [ATTR_GEN_AI_RESPONSE_ID]: r.responseId,
            [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: r.usage.input,
            [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: r.usage.output,
            "gen_ai.usage.reasoning_tokens": r.usage.reasoning,
            "gen_ai.usage.cache_read_input_tokens": r.usage.cacheRead,
            "gen_ai.usage.cache_creation_input_tokens": r.usage.cacheWrite,
            "lash.stop_reason": r.stopReason,
            "lash.cost_usd": r.costUsd,
            "lash.llm.attempts": r.attempts,
            "lash.llm.replayed": r.replayed,
            "lash.llm.duration_ms": r.durationMs,
          },
          r.stopReason === "error"
            ? { name: "error", message: "the model call ended with an error" }
            : undefined,
        );
        return;
      }
      case "tool_started":
        start(r, `execute_tool ${r.name}`, "internal", {
          [ATTR_GEN_AI_OPERATION_NAME]: "execute_tool",
          [ATTR_GEN_AI_TOOL_NAME]: r.name,
          [ATTR_GEN_AI_TOOL_CALL_ID]: r.callId,
          [ATTR_GEN_AI_TOOL_TYPE]: "function",
          [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: JSON.stringify(r.args ?? null),
          "lash.tool.call_id": r.lashCallId,
        });
        return;
      case "tool_completed":
        end(
          r,
          {
            "lash.tool.is_error": r.isError,
            "lash.tool.duration_ms": r.durationMs,
            "lash.tool.result_chars": r.result.chars,
          },
          r.isError ? { name: r.errorClass ?? "execution", message: r.result.preview } : undefined,
        );
        return;
      case "code_cell_started":
        start(r, `execute_code ${r.language}`, "internal", {
          [ATTR_GEN_AI_OPERATION_NAME]: "execute_code",
          "lash.code.language": r.language,
          "lash.code.index": r.index,
          "lash.code.source": r.source,
        });
        return;
      case "code_cell_completed":
        end(
          r,
          { "lash.code.ok": r.ok, "lash.code.output": r.output.join("\n") },
          r.ok ? undefined : { name: "code_error", message: r.error ?? "the cell failed" },
        );
        return;
      case "subagent_started": {
        const data = (r.data ?? {}) as { capability?: unknown; task?: unknown; depth?: unknown };
        start(r, "invoke_agent subagent", "internal", {
          [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
          [ATTR_GEN_AI_AGENT_NAME]: "lash subagent",
          [ATTR_GEN_AI_CONVERSATION_ID]: r.childSessionId,
          [ATTR_GEN_AI_TOOL_CALL_ID]: r.callId,
          "lash.subagent.capability": typeof data.capability === "string" ? data.capability : undefined,
          "lash.subagent.depth": typeof data.depth === "number" ? data.depth : undefined,
        });
        agents.set(r.spanId, { turnsOpen: 0, input: 0, output: 0 });
        return;
      }
      case "subagent_finished": {
        const agent = agents.get(r.spanId);
        const span = spans.get(r.spanId);
        if (!agent || !span) return;
        const data = (r.data ?? {}) as { outcome?: unknown; error?: unknown };
        const outcome = typeof data.outcome === "string" ? data.outcome : undefined;
        if (outcome) span.attribute("lash.subagent.outcome", outcome);
        if (outcome === "failed")
          agent.error = {
            name: "subagent_failed",
            message: typeof data.error === "string" ? data.error : "the subagent failed",
          };
        if (agent.turnsOpen > 0) {
          agent.finishTs = r.ts;
          return;
        }
        if (agent.error) span.attribute("error.type", agent.error.name);
        endSpan(r.spanId, r.ts, agent.error);
        return;
      }
      case "retry":
        event(r, "retry", {
          "lash.retry.attempt": r.attempt,
          "lash.retry.delay_ms": r.delayMs,
          "error.type": r.error.kind,
          "lash.retry.message": r.error.message,
        });
        return;
      case "attempt_reset":
        event(r, "attempt_reset", { "lash.retry.attempt": r.attempt });
        return;
      case "frame_switch":
        event(r, "frame_switch", { "lash.frame.id": r.frameId, "lash.frame.task": r.task });
        return;
      case "error": {
        event(r, "error", { "error.type": r.errorKind, "lash.error.message": r.message });
        // the model call that failed: status ERROR with the provider's error kind and message
        const chat = openChat.get(r.spanId);
        if (chat !== undefined && spans.has(chat)) {
          openChat.delete(r.spanId);
          spans.get(chat)?.attribute("error.type", r.errorKind);
          endSpan(chat, r.ts, { name: r.errorKind, message: r.message });
        }
        return;
      }
      case "plugin_event":
        // `rlm` + `rlm.diagnostic` → `rlm.diagnostic`; `subagents` + `x` → `subagents.x`
        event(
          r,
          r.name.startsWith(`${r.plugin}.`) ? r.name : `${r.plugin}.${r.name}`,
          dataAttrs(r.plugin, r.data),
        );
        return;
      default:
        return;
    }
  };

  const exportNow = async (endOpen: boolean) => {
    const current = exporter;
    if (!current) return;
    if (endOpen) {
      const t = nanos(Date.now());
      for (const span of spans.values()) {
        span.attribute("lash.unfinished", true);
        span.end(t, Exit.void);
      }
      spans.clear();
      aliases.clear();
      openChat.clear();
      agents.clear();
    } else if (spans.size > 0) return; // spans still open: the periodic export sends what ended
    exporter = undefined;
    await Effect.runPromise(Scope.close(current.scope, Exit.void));
  };

  return {
    name: `otlp(${url})`,
    write(records) {
      for (const r of records) write(r);
    },
    // Between turns nothing is open: closing the exporter's scope exports its buffer (bounded by
    // `shutdownTimeoutMs`); the next record opens a fresh exporter.
    flush: () => exportNow(false),
    close: () => exportNow(true),
  };
}
