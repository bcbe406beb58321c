import type { LlmError, LlmProvider, LlmRequest, StopReason, Usage } from "@lash/sansio";
import { memoOf } from "@lash/sansio";
import type OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { ErrorContext } from "../errors.ts";
import { incompleteStream } from "../errors.ts";
import { wireModelName } from "../model-id.ts";
import { outputFormat } from "../structured.ts";
import { headersOf } from "./http.ts";
import { openaiClient, openaiEventData, openaiTransport } from "./openai-responses.ts";
import type { AdapterConfig, Emit, Translator } from "./shared.ts";
import {
  attachmentPlaceholder,
  attachmentUrl,
  isImage,
  partAsText,
  runSdkStream,
  syntheticCallId,
  usageOf,
} from "./shared.ts";
import { BatchTranslator, fetchItems, httpItems, type SseEvent, SseParser, type SseState } from "./sse.ts";

const PROVIDER = "openai-compatible";

function contentPart(a: {
  mediaType: string;
  data?: string | undefined;
  ref?: string | undefined;
  name?: string | undefined;
}): ChatCompletionContentPart {
  const url = attachmentUrl(a);
  if (isImage(a.mediaType) && url !== undefined) return { type: "image_url", image_url: { url } };
  return { type: "text", text: attachmentPlaceholder(a) };
}

function simplify(parts: ChatCompletionContentPart[]): string | ChatCompletionContentPart[] {
  if (parts.every((p) => p.type === "text")) {
    let s = "";
    for (const p of parts) if (p.type === "text") s += (s ? "\n" : "") + p.text;
    return s;
  }
  return parts;
}

/**
 * One message's Chat Completions messages, converted once per message object: a session's
 * history is the same objects from request to request, so each request converts only what is new.
 * (Shared, read-only: the SDK only serializes them.)
 */

/** Normalized messages → Chat Completions messages. */
export function chatMessages(request: LlmRequest): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (request.system) out.push({ role: "system", content: request.system });
  for (const m of request.messages) {
    const memo = memoOf(m);
    memo.chat ??= messageParams(m);
    for (const x of memo.chat as readonly ChatCompletionMessageParam[]) out.push(x);
  }
  return out;
}

function messageParams(m: LlmRequest["messages"][number]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (m.role === "assistant") {
    let text = "";
    const calls: ChatCompletionMessageToolCall[] = [];
    for (const p of m.parts) {
      if (p.type === "toolCall")
        calls.push({ id: p.id, type: "function", function: { name: p.name, arguments: p.argumentsText } });
      else if (p.type !== "reasoning") {
        const t = partAsText(p);
        if (t !== undefined) text += t;
      }
    }
    if (text === "" && calls.length === 0) return out;
    out.push({
      role: "assistant",
      content: text === "" ? null : text,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    });
    return out;
  }
  const parts: ChatCompletionContentPart[] = [];
  for (const p of m.parts) {
    if (p.type === "toolResult") {
      let text = "";
      for (const c of p.content) {
        if (c.type === "text") text += (text ? "\n" : "") + c.text;
        else {
          // Tool messages carry text only: the attachment follows in a user message.
          parts.push(contentPart(c));
          text += (text ? "\n" : "") + `[${c.mediaType} attachment follows]`;
        }
      }
      out.push({ role: "tool", tool_call_id: p.callId, content: text });
    } else if (p.type === "attachment") parts.push(contentPart(p));
    else {
      const t = partAsText(p);
      if (t) parts.push({ type: "text", text: t });
    }
  }
  if (parts.length === 0) return out;
  if (m.role === "system") out.push({ role: "system", content: simplify(parts) as string });
  else out.push({ role: "user", content: simplify(parts) });
  return out;
}

export function chatParams(request: LlmRequest, config: AdapterConfig): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model: wireModelName(request.model, config.model),
    messages: chatMessages(request),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.maxOutput !== undefined) params.max_tokens = request.maxOutput;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.tools.length > 0) {
    params.tools = request.tools.map(
      (t): ChatCompletionTool => ({
        type: "function",
        function: {
          name: t.name,
          description: t.description,
          parameters: t.inputSchema as Record<string, unknown>,
        },
      }),
    );
    const tc = request.toolChoice;
    if (tc !== undefined)
      params.tool_choice = typeof tc === "string" ? tc : { type: "function", function: { name: tc.name } };
  }
  if (request.reasoning?.effort) params.reasoning_effort = request.reasoning.effort;
  const format = outputFormat(request, PROVIDER);
  if (format)
    params.response_format = {
      type: "json_schema",
      json_schema: { name: format.name, schema: { ...format.schema }, strict: format.strict },
    };
  return params;
}

/** Chat usage: `prompt_tokens` includes cached tokens; some servers (xAI) leave reasoning out of `completion_tokens`. */
export function chatUsage(u: CompletionUsage): Usage {
  const x = u as CompletionUsage & { prompt_cache_hit_tokens?: number };
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  let output: number | undefined = u.completion_tokens;
  if (
    typeof output === "number" &&
    typeof reasoning === "number" &&
    reasoning > 0 &&
    typeof u.total_tokens === "number" &&
    u.total_tokens === u.prompt_tokens + output + reasoning
  )
    output += reasoning;
  return usageOf(
    u.prompt_tokens,
    output,
    reasoning,
    u.prompt_tokens_details?.cached_tokens ?? x.prompt_cache_hit_tokens,
    (u.prompt_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens,
  );
}

const finishMap: Record<string, StopReason> = {
  stop: "stop",
  end_turn: "stop",
  tool_calls: "toolUse",
  function_call: "toolUse",
  length: "outputLimit",
  max_tokens: "outputLimit",
  content_filter: "contentFilter",
};

class ChatTranslator implements Translator<ChatCompletionChunk> {
  /** The provider's id of the response (for traces). */
  private responseId: string | undefined;
  // Tool calls by their stream index.
  private readonly callIds: (string | undefined)[] = [];
  private readonly open: string[] = [];
  private readonly withArgs = new Set<string>();
  private openCalls = 0;
  private reasoningOpen = false;
  private anyCall = false;
  private emitted = false;
  private finish: string | undefined;
  private usage: Usage | undefined;
  private readonly ctx: ErrorContext;
  private readonly sawDone: () => boolean;

  constructor(ctx: ErrorContext, sawDone: () => boolean = () => false) {
    this.ctx = ctx;
    this.sawDone = sawDone;
  }

  private closeReasoning(emit: Emit): void {
    if (this.reasoningOpen) {
      this.reasoningOpen = false;
      emit({ type: "reasoningEnd" });
    }
  }

  private closeCalls(emit: Emit): void {
    if (this.openCalls === 0) return;
    for (const id of this.open) {
      if (!this.withArgs.has(id)) emit({ type: "toolCallArgsDelta", id, delta: "{}" });
      emit({ type: "toolCallEnd", id });
    }
    this.open.length = 0;
    this.openCalls = 0;
  }

  push(chunk: ChatCompletionChunk, emit: Emit): boolean {
    if (typeof chunk.id === "string" && chunk.id !== "") this.responseId = chunk.id;
    if (chunk.usage) this.usage = chatUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) return false;
    const delta = choice.delta as ChatCompletionChunk.Choice.Delta & {
      reasoning_content?: string | null;
      reasoning?: string | null;
    };
    if (delta) {
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === "string" && reasoning !== "") {
        this.reasoningOpen = true;
        this.emitted = true;
        emit({ type: "reasoningDelta", text: reasoning });
      }
      const content = delta.content;
      if (typeof content === "string" && content !== "") {
        this.closeReasoning(emit);
        this.emitted = true;
        emit({ type: "textDelta", text: content });
      }
      const tcs = delta.tool_calls;
      if (tcs) {
        this.closeReasoning(emit);
        for (const tc of tcs) {
          const index = tc.index ?? 0;
          let id = this.callIds[index];
          if (id === undefined) {
            // Calls stream one after another: a new index closes the open ones.
            this.closeCalls(emit);
            id = tc.id || syntheticCallId();
            this.callIds[index] = id;
            this.open.push(id);
            this.openCalls++;
            this.anyCall = true;
            this.emitted = true;
            emit({ type: "toolCallStart", id, name: tc.function?.name ?? "" });
          }
          const args = tc.function?.arguments;
          if (args) {
            this.withArgs.add(id);
            emit({ type: "toolCallArgsDelta", id, delta: args });
          }
        }
      }
    }
    if (choice.finish_reason) {
      this.finish = choice.finish_reason;
      this.closeReasoning(emit);
      this.closeCalls(emit);
    }
    return false;
  }

  end(emit: Emit): LlmError | undefined {
    let reason: StopReason;
    if (this.finish !== undefined) {
      reason = finishMap[this.finish] ?? "stop";
      // Some servers (Ollama, llama.cpp) say "stop" after tool calls.
      if (reason === "stop" && this.anyCall) reason = "toolUse";
    } else if ((this.emitted || this.usage) && this.sawDone()) {
      // Tolerated: servers that omit finish_reason but end with `data: [DONE]`. Infer it.
      reason = this.anyCall ? "toolUse" : "stop";
    }
    // Neither a finish_reason nor `[DONE]`: the connection closed mid-answer.
    else return incompleteStream(this.ctx, this.emitted ? "no finish_reason and no [DONE]" : "no chunks");
    this.closeReasoning(emit);
    this.closeCalls(emit);
    if (this.usage) emit({ type: "usage", usage: this.usage });
    emit({
      type: "finish",
      reason,
      ...(this.responseId !== undefined ? { responseId: this.responseId } : {}),
      ...(this.finish !== undefined ? { providerReason: this.finish } : {}),
    });
    return undefined;
  }
}

/** One Chat Completions event (`openaiEventData`: `data: [DONE]` ends the stream; errors as the SDK's). */
function chatEvent(headers: () => Headers): SseEvent<ChatCompletionChunk> {
  return (event, data, state) =>
    openaiEventData(event, data, state, headers) as ChatCompletionChunk | undefined;
}

/**
 * Any OpenAI-compatible Chat Completions server (OpenRouter, Ollama, vLLM, llama.cpp, LM Studio, …).
 *
 * The streamed request is sent by lash's own transport (http.ts: node:http with a keep-alive
 * Agent), not by the SDK's `create()`: per request that costs the client ~90 µs CPU instead of
 * ~480 µs, most of lash's gap to a hand-written SDK loop. The SDK remains the source of the wire
 * types and of the errors (the transport fails with the SDK's own classes). A caller's own `OpenAI`
 * client (`clientOverride`) is used as given, through the SDK.
 */
export function openaiChatProvider(config: AdapterConfig, clientOverride?: OpenAI): LlmProvider {
  const client = clientOverride ?? openaiClient(config);
  const transport = clientOverride ? undefined : openaiTransport(client, config, "/chat/completions");
  return {
    name: PROVIDER,
    stream(request) {
      const params = chatParams(request, config);
      const ctx: ErrorContext = {
        provider: PROVIDER,
        model: params.model,
        keyEnv: config.keyEnv,
        baseUrlEnv: config.baseUrlEnv,
        baseUrl: config.baseUrl,
      };
      let state: SseState = { done: false };
      return runSdkStream(
        ctx,
        async (signal, observe) => {
          state = { done: false }; // per attempt
          if (transport) {
            const response = await transport.post(JSON.stringify(params), signal);
            observe(response.status, response.headers);
            return httpItems(
              response,
              new SseParser(
                state,
                chatEvent(() => headersOf(response.headers)),
              ),
            );
          }
          // the raw response (errors are thrown by the SDK before it); its body is read by fetchItems
          const response = await client.chat.completions.create(params, { signal }).asResponse();
          observe(response.status, response.headers);
          return fetchItems(
            response,
            new SseParser(
              state,
              chatEvent(() => response.headers),
            ),
          );
        },
        () => new BatchTranslator(new ChatTranslator(ctx, () => state.done)),
        config.idleTimeoutMs,
      );
    },
  };
}
