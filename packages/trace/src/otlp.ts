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
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from "@opentelemetry/semantic-conventions/incubating";
import { Context, Duration, Effect, Exit, Layer, Option, Scope, type Tracer } from "effect";
import type { TraceRecord } from "./schema.ts";
import type { TraceSink } from "./sink.ts";

export interface OtlpSinkOptions {
  /** Collector base URL (`http://localhost:4318`) or the full traces endpoint (`…/v1/traces`). */
  readonly url: string;
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

/** `provider/model` → `{provider, model}`; the provider name follows `gen_ai.provider.name` values. */
function splitModel(id: string | undefined): { provider?: string; model?: string } {
  if (!id) return {};
  const i = id.indexOf("/");
  if (i < 0) return { model: id };
  const provider = id.slice(0, i);
  const named = provider === "google" ? "gcp.gemini" : provider === "openai-compatible" ? "openai" : provider;
  return { provider: named, model: id.slice(i + 1) };
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

/**
 * Exports trace records as OpenTelemetry spans over OTLP/HTTP (JSON) with the
 * GenAI semantic conventions, through `@effect/opentelemetry`'s OTLP tracer:
 * a turn is an `invoke_agent` span, a model call a `chat {model}` span
 * (`gen_ai.request.model`, `gen_ai.usage.input_tokens` / `output_tokens`,
 * `gen_ai.response.finish_reasons`), a tool call an `execute_tool {name}` span
 * (`gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments`), a
 * code cell an `execute_code` span and a subagent an `invoke_agent` span under
 * the tool call that spawned it. Retries, errors and frame switches are span events.
 */
export function otlpSink(options: OtlpSinkOptions): TraceSink {
  const url = /\/v1\/traces\/?$/.test(options.url)
    ? options.url
    : `${options.url.replace(/\/$/, "")}/v1/traces`;
  const shutdown = Duration.millis(options.shutdownTimeoutMs ?? 3_000);
  const spans = new Map<string, Tracer.Span>();
  const models = new Map<string, string>();
  let exporter: Exporter | undefined;

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
    }).pipe(
      Scope.extend(scope),
      Effect.provide(Layer.merge(FetchHttpClient.layer, OtlpSerialization.layerJson)),
    );
    return { scope, tracer } satisfies Exporter;
  });

  const tracer = (): Tracer.Tracer => {
    exporter ??= Effect.runSync(build);
    return exporter.tracer;
  };

  const start = (
    r: TraceRecord,
    name: string,
    kind: Tracer.SpanKind,
    attributes: Record<string, unknown>,
    startMs = r.ts,
  ) => {
    const parent = r.parentSpanId !== undefined ? spans.get(r.parentSpanId) : undefined;
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
    for (const [k, v] of Object.entries(attributes)) if (v !== undefined) span.attribute(k, v);
    spans.set(r.spanId, span);
    return span;
  };

  const end = (
    r: TraceRecord,
    attributes: Record<string, unknown>,
    error?: { name: string; message: string },
  ) => {
    const span = spans.get(r.spanId);
    if (!span) return;
    for (const [k, v] of Object.entries(attributes)) if (v !== undefined) span.attribute(k, v);
    spans.delete(r.spanId);
    span.end(
      nanos(Math.max(r.ts, Number((span.status.startTime as bigint) / 1_000_000n))),
      error ? Exit.fail(new TraceSpanError(error.name, error.message)) : Exit.void,
    );
  };

  const event = (r: TraceRecord, name: string, attributes: Record<string, unknown>) => {
    const span =
      spans.get(r.spanId) ?? (r.parentSpanId !== undefined ? spans.get(r.parentSpanId) : undefined);
    span?.event(name, nanos(r.ts), attributes);
  };

  const modelAttrs = (model: string | undefined) => {
    const m = splitModel(model);
    return {
      [ATTR_GEN_AI_PROVIDER_NAME]: m.provider,
      [ATTR_GEN_AI_SYSTEM]: m.provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: m.model,
    };
  };

  const write = (r: TraceRecord) => {
    switch (r.kind) {
      case "turn_started":
        if (r.model) models.set(r.sessionId, r.model);
        start(r, r.parentSpanId ? "invoke_agent subagent" : "invoke_agent lash", "internal", {
          [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
          [ATTR_GEN_AI_AGENT_NAME]: r.parentSpanId ? "lash subagent" : "lash",
          [ATTR_GEN_AI_CONVERSATION_ID]: r.sessionId,
          "lash.turn.resumed": r.resumed,
          ...modelAttrs(r.model),
        });
        return;
      case "turn_finished":
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
            ...(r.status === "stopped" && r.reason !== "cancelled" ? { "error.type": r.reason } : {}),
          },
          r.status === "stopped" && r.reason !== "cancelled"
            ? { name: r.reason, message: r.message ?? `turn stopped: ${r.reason}` }
            : undefined,
        );
        return;
      case "llm_request": {
        const model = r.model ?? models.get(r.sessionId);
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
            [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [r.stopReason],
            [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: r.usage.input,
            [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: r.usage.output,
            "gen_ai.usage.reasoning_tokens": r.usage.reasoning,
            "gen_ai.usage.cache_read_input_tokens": r.usage.cacheRead,
            "gen_ai.usage.cache_creation_input_tokens": r.usage.cacheWrite,
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
        });
        return;
      case "tool_completed":
        end(
          r,
          {
            "lash.tool.is_error": r.isError,
            "lash.tool.duration_ms": r.durationMs,
            "lash.tool.result_chars": r.result.chars,
            ...(r.errorClass ? { "error.type": r.errorClass } : {}),
          },
          r.isError ? { name: r.errorClass ?? "error", message: r.result.preview } : undefined,
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
      case "subagent_started":
        start(r, "invoke_agent subagent", "internal", {
          [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
          [ATTR_GEN_AI_AGENT_NAME]: "lash subagent",
          [ATTR_GEN_AI_CONVERSATION_ID]: r.childSessionId,
          [ATTR_GEN_AI_TOOL_CALL_ID]: r.callId,
        });
        return;
      case "subagent_finished":
        end(r, {});
        return;
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
      case "error":
        event(r, "error", { "error.type": r.errorKind, "lash.error.message": r.message });
        return;
      case "plugin_event":
        event(r, `${r.plugin}.${r.name}`, {});
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
