import type { LlmError, LlmProvider, LlmRequest, StopReason, Usage } from "@lash/sansio";
import OpenAI from "openai";
import type {
  ResponseCreateParamsStreaming,
  ResponseInputContent,
  ResponseInputItem,
  ResponseStreamEvent,
  ResponseUsage,
  Tool,
} from "openai/resources/responses/responses";
import type { ErrorContext } from "../errors.ts";
import { classifyError, incompleteStream } from "../errors.ts";
import { wireModelName } from "../model-id.ts";
import { outputFormat } from "../structured.ts";
import { type HttpTransport, headersOf, httpTransport, type TransportErrors, userAgent } from "./http.ts";
import type { AdapterConfig, Emit, Translator } from "./shared.ts";
import {
  attachmentPlaceholder,
  attachmentUrl,
  defaultTimeoutMs,
  isImage,
  partAsText,
  runSdkStream,
  usageOf,
} from "./shared.ts";
import { BatchTranslator, httpItems, type SseEvent, SseParser, type SseState } from "./sse.ts";

const PROVIDER = "openai";

type InputContent = ResponseInputContent;

function attachmentContent(a: {
  mediaType: string;
  data?: string | undefined;
  ref?: string | undefined;
  name?: string | undefined;
}): InputContent {
  const url = attachmentUrl(a);
  if (isImage(a.mediaType) && url !== undefined)
    return { type: "input_image", image_url: url, detail: "auto" };
  if (a.data !== undefined && a.mediaType === "application/pdf")
    return {
      type: "input_file",
      file_data: `data:${a.mediaType};base64,${a.data}`,
      filename: a.name ?? "file.pdf",
    };
  return { type: "input_text", text: attachmentPlaceholder(a) };
}

/** Normalized messages → Responses `input` items. */
export function responsesInput(request: LlmRequest): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const m of request.messages) {
    if (m.role === "assistant") {
      let text = "";
      const flush = (): void => {
        if (text !== "") items.push({ role: "assistant", content: text, type: "message" });
        text = "";
      };
      for (const p of m.parts) {
        if (p.type === "reasoning") {
          const r = p.replay;
          if (r?.provider !== PROVIDER || r.itemId === undefined) continue; // foreign reasoning is dropped
          flush();
          items.push({
            type: "reasoning",
            id: r.itemId,
            summary: p.text !== "" ? [{ type: "summary_text", text: p.text }] : [],
            ...(r.encrypted !== undefined ? { encrypted_content: r.encrypted } : {}),
          });
        } else if (p.type === "toolCall") {
          flush();
          items.push({ type: "function_call", call_id: p.id, name: p.name, arguments: p.argumentsText });
        } else {
          const t = partAsText(p);
          if (t !== undefined) text += t;
        }
      }
      flush();
      continue;
    }
    if (m.role === "tool" || m.parts.some((p) => p.type === "toolResult")) {
      const rest: InputContent[] = [];
      for (const p of m.parts) {
        if (p.type === "toolResult") {
          const onlyText = p.content.every((c) => c.type === "text");
          let output: string | InputContent[];
          if (onlyText) {
            output = "";
            for (const c of p.content) if (c.type === "text") output += (output ? "\n" : "") + c.text;
          } else
            output = p.content.map(
              (c): InputContent =>
                c.type === "text" ? { type: "input_text", text: c.text } : attachmentContent(c),
            );
          items.push({
            type: "function_call_output",
            call_id: p.callId,
            output: output as string,
          });
        } else if (p.type === "attachment") rest.push(attachmentContent(p));
        else {
          const t = partAsText(p);
          if (t) rest.push({ type: "input_text", text: t });
        }
      }
      if (rest.length > 0) items.push({ role: "user", content: rest, type: "message" });
      continue;
    }
    const content: InputContent[] = [];
    for (const p of m.parts) {
      if (p.type === "attachment") content.push(attachmentContent(p));
      else {
        const t = partAsText(p);
        if (t) content.push({ type: "input_text", text: t });
      }
    }
    if (content.length === 0) continue;
    items.push({ role: m.role === "system" ? "developer" : "user", content, type: "message" });
  }
  return items;
}

/** Builds the Responses API request. */
export function responsesParams(request: LlmRequest, config: AdapterConfig): ResponseCreateParamsStreaming {
  const reasoningModel = config.info.reasoning || request.reasoning !== undefined;
  const params: ResponseCreateParamsStreaming = {
    model: wireModelName(request.model, config.model),
    input: responsesInput(request),
    stream: true,
    store: false,
  };
  if (request.system) params.instructions = request.system;
  if (request.maxOutput !== undefined) params.max_output_tokens = request.maxOutput;
  if (request.tools.length > 0) {
    params.tools = request.tools.map(
      (t): Tool => ({
        type: "function",
        name: t.name,
        description: t.description,
        parameters: t.inputSchema as Record<string, unknown>,
        strict: false,
      }),
    );
    params.parallel_tool_calls = true;
    const tc = request.toolChoice;
    if (tc !== undefined)
      params.tool_choice = typeof tc === "string" ? tc : { type: "function", name: tc.name };
  }
  const format = outputFormat(request, PROVIDER);
  if (format)
    params.text = {
      format: { type: "json_schema", name: format.name, schema: { ...format.schema }, strict: format.strict },
    };
  if (reasoningModel) {
    params.include = ["reasoning.encrypted_content"];
    params.reasoning = {
      summary: "auto",
      ...(request.reasoning?.effort ? { effort: request.reasoning.effort } : {}),
    };
  } else if (request.temperature !== undefined) params.temperature = request.temperature;
  return params;
}

export function responsesUsage(u: ResponseUsage | null | undefined): Usage | undefined {
  if (!u) return undefined;
  const d = u.input_tokens_details as { cached_tokens?: number; cache_write_tokens?: number } | undefined;
  return usageOf(
    u.input_tokens,
    u.output_tokens,
    u.output_tokens_details?.reasoning_tokens,
    d?.cached_tokens,
    d?.cache_write_tokens,
  );
}

interface Call {
  readonly callId: string;
  len: number;
}

class ResponsesTranslator implements Translator<ResponseStreamEvent> {
  /** The provider's id of the response (for traces). */
  private responseId: string | undefined;
  private readonly calls = new Map<string, Call>();
  private textItem: string | undefined;
  private textLen = 0;
  private reasoningItem: string | undefined;
  private reasoningText = false;
  private summaryIndex = 0;
  private sawCall = false;
  private refusal = false;
  private usage: Usage | undefined;
  private reason: StopReason | undefined;
  private message: string | undefined;
  private failure: LlmError | undefined;
  private readonly ctx: ErrorContext;

  constructor(ctx: ErrorContext) {
    this.ctx = ctx;
  }

  push(ev: ResponseStreamEvent, emit: Emit): boolean {
    switch (ev.type) {
      case "response.output_text.delta":
        if (ev.item_id !== this.textItem) {
          // Separate message items (e.g. commentary, then final answer) by a blank line.
          if (this.textItem !== undefined) emit({ type: "textDelta", text: "\n\n" });
          this.textItem = ev.item_id;
          this.textLen = 0;
        }
        this.textLen += ev.delta.length;
        if (ev.delta !== "") emit({ type: "textDelta", text: ev.delta });
        return false;
      case "response.function_call_arguments.delta": {
        const call = this.calls.get(ev.item_id);
        if (call && ev.delta !== "") {
          call.len += ev.delta.length;
          emit({ type: "toolCallArgsDelta", id: call.callId, delta: ev.delta });
        }
        return false;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        if (ev.delta === "") return false;
        const idx = ev.type === "response.reasoning_summary_text.delta" ? ev.summary_index : 0;
        if (this.reasoningText && idx !== this.summaryIndex) emit({ type: "reasoningDelta", text: "\n\n" });
        this.summaryIndex = idx;
        this.reasoningText = true;
        emit({ type: "reasoningDelta", text: ev.delta });
        return false;
      }
      case "response.output_text.done":
        // The done event is authoritative: emit what the deltas missed.
        if (ev.item_id === this.textItem && ev.text.length > this.textLen) {
          emit({ type: "textDelta", text: ev.text.slice(this.textLen) });
          this.textLen = ev.text.length;
        } else if (ev.item_id !== this.textItem && ev.text !== "") {
          if (this.textItem !== undefined) emit({ type: "textDelta", text: "\n\n" });
          this.textItem = ev.item_id;
          this.textLen = ev.text.length;
          emit({ type: "textDelta", text: ev.text });
        }
        return false;
      case "response.refusal.delta":
        this.refusal = true;
        if (ev.delta !== "") emit({ type: "textDelta", text: ev.delta });
        return false;
      case "response.function_call_arguments.done": {
        const call = this.calls.get(ev.item_id);
        if (call && ev.arguments.length > call.len) {
          emit({ type: "toolCallArgsDelta", id: call.callId, delta: ev.arguments.slice(call.len) });
          call.len = ev.arguments.length;
        }
        return false;
      }
      case "response.output_item.added": {
        const item = ev.item;
        if (item.type === "function_call") {
          const id = item.id ?? item.call_id;
          const call: Call = { callId: item.call_id, len: 0 };
          this.calls.set(id, call);
          this.sawCall = true;
          emit({ type: "toolCallStart", id: item.call_id, name: item.name });
          if (item.arguments) {
            call.len = item.arguments.length;
            emit({ type: "toolCallArgsDelta", id: item.call_id, delta: item.arguments });
          }
        } else if (item.type === "reasoning") {
          this.reasoningItem = item.id;
          this.reasoningText = false;
          this.summaryIndex = 0;
        }
        return false;
      }
      case "response.output_item.done": {
        const item = ev.item;
        if (item.type === "reasoning") {
          if (!this.reasoningText && item.id === this.reasoningItem) {
            // Summary text that arrived only on the done item.
            const text = item.summary.map((s) => s.text).join("\n\n");
            if (text !== "") emit({ type: "reasoningDelta", text });
          }
          this.reasoningItem = undefined;
          this.reasoningText = false;
          emit({
            type: "reasoningEnd",
            replay: item.encrypted_content
              ? { provider: PROVIDER, itemId: item.id, encrypted: item.encrypted_content }
              : { provider: PROVIDER, itemId: item.id },
          });
        } else if (item.type === "function_call") {
          const key = item.id ?? item.call_id;
          let call = this.calls.get(key);
          if (!call) {
            // A call seen only in its done event.
            call = { callId: item.call_id, len: 0 };
            this.sawCall = true;
            emit({ type: "toolCallStart", id: item.call_id, name: item.name });
          }
          if (item.arguments.length > call.len) {
            emit({ type: "toolCallArgsDelta", id: call.callId, delta: item.arguments.slice(call.len) });
            call.len = item.arguments.length;
          }
          emit({ type: "toolCallEnd", id: call.callId });
          this.calls.delete(key);
        }
        return false;
      }
      case "response.completed":
        this.responseId = ev.response.id || undefined;
        this.usage = responsesUsage(ev.response.usage);
        this.reason = this.refusal ? "contentFilter" : this.sawCall ? "toolUse" : "stop";
        return true;
      case "response.incomplete": {
        this.responseId = ev.response.id || undefined;
        this.usage = responsesUsage(ev.response.usage);
        const why = ev.response.incomplete_details?.reason;
        this.reason =
          why === "max_output_tokens" ? "outputLimit" : why === "content_filter" ? "contentFilter" : "error";
        if (this.reason === "error") this.message = `response incomplete: ${why ?? "unknown reason"}`;
        return true;
      }
      case "response.failed": {
        const err = ev.response.error;
        this.failure = classifyError(
          Object.assign(new Error(err?.message ?? "response failed"), { error: err ?? undefined }),
          this.ctx,
        );
        return true;
      }
      default:
        return false;
    }
  }

  end(emit: Emit): LlmError | undefined {
    if (this.failure) return this.failure;
    if (this.reason === undefined) return incompleteStream(this.ctx, "no response.completed");
    if (this.usage) emit({ type: "usage", usage: this.usage });
    // the Responses API has no finish reason of its own: traces map `reason` to OpenAI's words
    emit({
      type: "finish",
      reason: this.reason,
      ...(this.message !== undefined ? { message: this.message } : {}),
      ...(this.responseId !== undefined ? { responseId: this.responseId } : {}),
    });
    return undefined;
  }
}

/** A logger that drops everything: SDK console output (e.g. "Could not parse message into JSON") never reaches stderr; the failure reaches us as a typed error. */
export const silentLogger = { error() {}, warn() {}, info() {}, debug() {} };

export function openaiClient(config: AdapterConfig, fetch?: typeof globalThis.fetch): OpenAI {
  return new OpenAI({
    apiKey: config.apiKey ?? "missing",
    baseURL: config.baseUrl ?? null,
    maxRetries: 0, // the one retry layer is ours (withRetry)
    timeout: config.timeoutMs ?? defaultTimeoutMs,
    logger: silentLogger,
    logLevel: "off",
    ...(fetch ? { fetch } : {}),
    ...(config.headers ? { defaultHeaders: config.headers } : {}),
  });
}

/** How lash's transport fails, in the `openai` SDK's own error classes (as the SDK's `create()` fails). */
export const openaiTransportErrors: TransportErrors = {
  status(status, text, headers) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    // the SDK's makeStatusError: a body that is not `{ error: … }` is wrapped as one
    const normalized =
      json && typeof json === "object" && (json as { error?: unknown }).error == null
        ? { error: json }
        : json;
    return OpenAI.APIError.generate(
      status,
      normalized as object | undefined,
      json ? undefined : text,
      headers,
    );
  },
  connection: (cause) => new OpenAI.APIConnectionError({ cause }),
  timeout: (cause) => Object.assign(new OpenAI.APIConnectionTimeoutError(), { cause }),
  aborted(signal) {
    const error = new OpenAI.APIUserAbortError();
    Object.defineProperty(error, "cause", { value: signal.reason, writable: true, configurable: true });
    return error;
  },
};

/**
 * lash's transport to `client`'s URL for `path`, with the headers the SDK would send that matter
 * (the key as a bearer token, the organization and project the SDK read from the environment,
 * the configured headers last, as the SDK's `defaultHeaders`), its `timeout` until the headers.
 */
export function openaiTransport(client: OpenAI, config: AdapterConfig, path: string): HttpTransport {
  return httpTransport({
    url: client.buildURL(path, undefined),
    headers: [
      {
        accept: "text/event-stream",
        "content-type": "application/json",
        "user-agent": userAgent,
        "openai-organization": client.organization,
        "openai-project": client.project,
        authorization: client.apiKey ? `Bearer ${client.apiKey}` : null,
      },
      config.headers ?? {},
    ],
    timeoutMs: config.timeoutMs ?? defaultTimeoutMs,
    errors: openaiTransportErrors,
  });
}

const terminalResponseEvents = new Set(["response.completed", "response.incomplete", "response.failed"]);

/**
 * The JSON of one server-sent event of an OpenAI stream, as the SDK's stream reads it (both APIs):
 * `data: [DONE]` ends the stream (`undefined`); an `error` event or an `error` payload throws the
 * SDK's `APIError`; malformed JSON throws the SDK's `SyntaxError` message.
 */
export function openaiEventData(
  event: string | undefined,
  data: string,
  state: SseState,
  headers: () => Headers,
): unknown {
  if (data === "[DONE]") {
    state.done = true;
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new SyntaxError("Error reading response: malformed server-sent event JSON.");
  }
  const error = (parsed as { error?: unknown } | null)?.error;
  if (event === "error" || error)
    throw new OpenAI.APIError(undefined, (error ?? parsed) as object, undefined, headers());
  return parsed;
}

/**
 * One Responses API event (`openaiEventData`); the terminal events end the stream, so the rest of
 * the body is drained and the connection reused.
 */
function responsesEvent(headers: () => Headers): SseEvent<ResponseStreamEvent> {
  return (event, data, state) => {
    const p = openaiEventData(event, data, state, headers) as { type?: unknown } | undefined;
    if (typeof p?.type === "string" && terminalResponseEvents.has(p.type)) state.done = true;
    return p as ResponseStreamEvent | undefined;
  };
}

/** What a variant of the Responses API (Codex) changes: its name, transport and request fields. */
export interface ResponsesVariant {
  readonly name: string;
  /** The fetch the SDK uses (e.g. one that adds the sign-in's headers). */
  readonly fetch?: typeof globalThis.fetch;
  /** Adjusts the built request. */
  readonly params?: (
    params: ResponseCreateParamsStreaming,
    request: LlmRequest,
  ) => ResponseCreateParamsStreaming;
  /** What a 401 tells the user to do. */
  readonly authHint?: string;
}

/**
 * OpenAI Responses API (stateless: `store: false`, encrypted reasoning replayed). The streamed
 * request is sent by lash's own transport (http.ts; see openai-chat.ts for why), the SDK staying
 * the source of the wire types and errors; a variant with its own `fetch` (Codex's sign-in) goes
 * through the SDK.
 */
export function openaiResponsesProvider(config: AdapterConfig, variant?: ResponsesVariant): LlmProvider {
  const client = openaiClient(config, variant?.fetch);
  const transport = variant?.fetch ? undefined : openaiTransport(client, config, "/responses");
  const name = variant?.name ?? PROVIDER;
  return {
    name,
    stream(request) {
      const base = responsesParams(request, config);
      const params = variant?.params ? variant.params(base, request) : base;
      const ctx: ErrorContext = {
        provider: name,
        model: params.model ?? config.model,
        keyEnv: config.keyEnv,
        baseUrlEnv: config.baseUrlEnv,
        baseUrl: config.baseUrl,
        ...(variant?.authHint ? { authHint: variant.authHint } : {}),
      };
      if (transport)
        return runSdkStream(
          ctx,
          async (signal, observe) => {
            const response = await transport.post(JSON.stringify(params), signal);
            observe(response.status, response.headers);
            const parser = new SseParser(
              { done: false },
              responsesEvent(() => headersOf(response.headers)),
            );
            return httpItems(response, parser);
          },
          () => new BatchTranslator(new ResponsesTranslator(ctx)),
          config.idleTimeoutMs,
        );
      return runSdkStream(
        ctx,
        async (signal, observe) => {
          const { data, response } = await client.responses.create(params, { signal }).withResponse();
          observe(response.status, response.headers);
          return data;
        },
        () => new ResponsesTranslator(ctx),
        config.idleTimeoutMs,
      );
    },
  };
}
