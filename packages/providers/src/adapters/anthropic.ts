import Anthropic from "@anthropic-ai/sdk";
import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import type {
  CacheControlEphemeral,
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
  Tool,
  ToolChoice,
  ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type { LlmError, LlmProvider, LlmRequest, StopReason, Usage } from "@lash/sansio";
import type { ErrorContext } from "../errors.ts";
import { incompleteStream } from "../errors.ts";
import { wireModelName } from "../model-id.ts";
import { outputFormat } from "../structured.ts";
import type { AdapterConfig, Emit, Translator } from "./shared.ts";
import {
  attachmentPlaceholder,
  defaultTimeoutMs,
  hasCounts,
  isImage,
  parseArgs,
  partAsText,
  runSdkStream,
  safeToolId,
  usageOf,
} from "./shared.ts";

const PROVIDER = "anthropic";
const ephemeral: CacheControlEphemeral = { type: "ephemeral" };

type Block = ContentBlockParam;
type Role = "user" | "assistant";

const effortBudget = { minimal: 1024, low: 2048, medium: 8192, high: 24_576 } as const;

function attachmentBlock(a: {
  mediaType: string;
  data?: string | undefined;
  ref?: string | undefined;
  name?: string | undefined;
}): Block {
  if (isImage(a.mediaType)) {
    if (a.data !== undefined)
      return {
        type: "image",
        source: {
          type: "base64",
          media_type: a.mediaType as "image/png",
          data: a.data,
        },
      };
    if (a.ref && /^https?:/.test(a.ref)) return { type: "image", source: { type: "url", url: a.ref } };
  }
  if (a.mediaType === "application/pdf" && a.data !== undefined)
    return { type: "document", source: { type: "base64", media_type: "application/pdf", data: a.data } };
  return { type: "text", text: attachmentPlaceholder(a) };
}

/** Normalized messages → Anthropic messages (consecutive same-role messages merged). */
export function anthropicMessages(request: LlmRequest): MessageParam[] {
  const out: { role: Role; content: Block[] }[] = [];
  for (const m of request.messages) {
    const role: Role = m.role === "assistant" ? "assistant" : "user";
    const blocks: Block[] = [];
    for (const p of m.parts) {
      switch (p.type) {
        case "reasoning": {
          const r = p.replay;
          if (role !== "assistant" || r?.provider !== PROVIDER) break; // foreign reasoning is dropped
          if (r.redacted && r.encrypted !== undefined)
            blocks.push({ type: "redacted_thinking", data: r.encrypted });
          else if (r.signature !== undefined)
            blocks.push({ type: "thinking", thinking: p.text, signature: r.signature });
          break;
        }
        case "toolCall":
          blocks.push({
            type: "tool_use",
            id: safeToolId(p.id),
            name: p.name,
            input: parseArgs(p.argumentsText),
          });
          break;
        case "toolResult": {
          const content: NonNullable<ToolResultBlockParam["content"]> = [];
          for (const c of p.content) {
            if (c.type === "text") {
              if (c.text !== "") content.push({ type: "text", text: c.text });
            } else {
              const b = attachmentBlock(c);
              if (b.type === "text" || b.type === "image" || b.type === "document") content.push(b);
            }
          }
          blocks.push({
            type: "tool_result",
            tool_use_id: safeToolId(p.callId),
            content,
            ...(p.isError ? { is_error: true } : {}),
          });
          break;
        }
        case "attachment":
          blocks.push(attachmentBlock(p));
          break;
        default: {
          let text = partAsText(p);
          if (text === undefined || text === "") break;
          if (m.role === "system") text = `System note: ${text}`;
          blocks.push({ type: "text", text });
        }
      }
    }
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role) {
      // tool results must lead a user message
      if (
        role === "user" &&
        blocks[0]?.type === "tool_result" &&
        last.content.some((b) => b.type !== "tool_result")
      )
        last.content.unshift(...blocks);
      else last.content.push(...blocks);
    } else out.push({ role, content: blocks });
  }
  return out;
}

function cacheable(b: Block): boolean {
  return b.type !== "thinking" && b.type !== "redacted_thinking";
}

/** Where the Messages API is served: Anthropic's own API, Amazon Bedrock or Google Vertex AI. */
export type AnthropicPlatform = "anthropic" | "bedrock" | "vertex";

/**
 * Bedrock model ids (`anthropic.…`, `us.anthropic.…-v1:0`) that take `output_config.format`:
 * the models Anthropic's docs list as generally available with structured outputs on Bedrock.
 * Bedrock refuses the field for others ("output_config.format: Extra inputs are not permitted",
 * seen for Opus 4.7), so unknown and newer ids get the forced tool until they are listed here.
 */
const BEDROCK_NATIVE_OUTPUT = /claude-(?:sonnet-4-5|haiku-4-5|opus-4-5|opus-4-6|sonnet-4-6)(?![0-9])/;

/**
 * Claude models that take `output_config.format` (structured outputs). On Anthropic's API:
 * every model from Sonnet 4.5 / Opus 4.1 on; older ones (Claude 3.x, Opus 4, Sonnet 4) get a
 * forced tool instead. On Bedrock: only the listed models (BEDROCK_NATIVE_OUTPUT). On Vertex:
 * none — Vertex serves structured outputs for a few models only, and only where an organization
 * policy (`constraints/vertexai.allowedPartnerModelFeatures`) allows it, off by default; a
 * request with the field is refused otherwise, so the forced tool, which works everywhere, is used.
 */
export function anthropicNativeOutput(model: string, platform: AnthropicPlatform = "anthropic"): boolean {
  if (platform === "vertex") return false;
  if (platform === "bedrock") return BEDROCK_NATIVE_OUTPUT.test(model);
  return !/^claude-(?:instant|2|3)|^claude-(?:opus|sonnet)-4(?:-0)?(?:-\d{8})?$/.test(model);
}

/** The forced tool that carries the answer on models without structured outputs (undefined on the others). */
export function anthropicOutputTool(
  request: LlmRequest,
  model: string,
  platform: AnthropicPlatform = "anthropic",
): string | undefined {
  const format = outputFormat(request, PROVIDER);
  if (!format || anthropicNativeOutput(model, platform)) return undefined;
  let name = format.name;
  while (request.tools.some((t) => t.name === name)) name = `${name}_result`;
  return name;
}

/** The schema in the subset structured outputs take (the SDK's own transform: unsupported constraints move into descriptions; our validation still checks them). */
function anthropicSchema(schema: { readonly [key: string]: unknown }): { [key: string]: unknown } {
  try {
    return transformJSONSchema({ ...schema }) as { [key: string]: unknown };
  } catch {
    return { ...schema };
  }
}

/** Builds the Messages API request (exported for the request-shape tests and the benchmark). */
export function anthropicParams(
  request: LlmRequest,
  config: AdapterConfig,
  platform: AnthropicPlatform = "anthropic",
): MessageCreateParamsStreaming {
  const cache = request.cache;
  let breakpoints = 4;
  const messages = anthropicMessages(request);
  let maxTokens = request.maxOutput ?? Math.min(config.info.maxOutput, 32_768);
  const params: MessageCreateParamsStreaming = {
    model: wireModelName(request.model, config.model),
    max_tokens: maxTokens,
    messages,
    stream: true,
  };
  const format = outputFormat(request, PROVIDER);
  const outputTool = format ? anthropicOutputTool(request, params.model, platform) : undefined;
  const system =
    format && outputTool !== undefined
      ? [request.system, `When you give your final answer, call the \`${outputTool}\` tool with it.`]
          .filter(Boolean)
          .join("\n\n")
      : request.system;
  if (system) {
    const sys: TextBlockParam = { type: "text", text: system };
    if (cache?.system && breakpoints > 0) {
      sys.cache_control = ephemeral;
      breakpoints--;
    }
    params.system = [sys];
  }
  if (format && outputTool === undefined)
    params.output_config = { format: { type: "json_schema", schema: anthropicSchema(format.schema) } };
  if (request.tools.length > 0 || outputTool !== undefined) {
    const tools: Tool[] = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { type: "object", ...t.inputSchema } as Tool.InputSchema,
    }));
    if (format && outputTool !== undefined)
      tools.push({
        name: outputTool,
        description:
          "Give your final answer: call this tool once, last, with the answer as its input (it must match the schema).",
        input_schema: format.schema as Tool.InputSchema,
      });
    const lastTool = tools[tools.length - 1];
    if (cache?.tools && lastTool && breakpoints > 0) {
      lastTool.cache_control = ephemeral;
      breakpoints--;
    }
    params.tools = tools;
    if (request.toolChoice !== undefined) {
      const tc = request.toolChoice;
      const choice: ToolChoice =
        tc === "auto"
          ? { type: "auto" }
          : tc === "none"
            ? { type: "none" }
            : tc === "required"
              ? { type: "any" }
              : { type: "tool", name: tc.name };
      params.tool_choice = choice;
    } else if (outputTool !== undefined && !request.reasoning)
      // Forced tool use and extended thinking do not mix: with thinking on, the prompt asks for the tool.
      params.tool_choice = request.tools.length === 0 ? { type: "tool", name: outputTool } : { type: "any" };
  }
  if (cache?.lastMessages) {
    for (let i = messages.length - 1, n = cache.lastMessages; i >= 0 && n > 0 && breakpoints > 0; i--, n--) {
      const content = messages[i]?.content;
      if (!Array.isArray(content)) continue;
      for (let j = content.length - 1; j >= 0; j--) {
        const b = content[j];
        if (b && cacheable(b)) {
          (b as { cache_control?: CacheControlEphemeral }).cache_control = ephemeral;
          breakpoints--;
          break;
        }
      }
    }
  }
  if (request.reasoning) {
    const budget = request.reasoning.budgetTokens ?? effortBudget[request.reasoning.effort ?? "medium"];
    if (budget >= maxTokens) {
      maxTokens = budget + 4096;
      params.max_tokens = maxTokens;
    }
    params.thinking = { type: "enabled", budget_tokens: Math.max(1024, budget) };
  }
  // `temperature` is not sent: this API version no longer takes sampling parameters.
  return params;
}

const enum_stop: Record<string, StopReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  tool_use: "toolUse",
  max_tokens: "outputLimit",
  refusal: "contentFilter",
  model_context_window_exceeded: "contextOverflow",
};

const TEXT = 1;
const THINKING = 2;
const REDACTED = 3;
const TOOL = 4;
const OTHER = 5;
/** The forced output tool's call: its input is the answer, streamed as text. */
const OUTPUT = 6;

class AnthropicTranslator implements Translator<RawMessageStreamEvent> {
  /** The provider's id of the response (for traces). */
  private responseId: string | undefined;
  // Per content-block index: kind, and the tool id / signature / redacted data.
  private kinds: number[] = [];
  private ids: (string | undefined)[] = [];
  private args: boolean[] = [];
  private input: number | undefined;
  private output: number | undefined;
  private reasoning: number | undefined;
  private cacheRead: number | undefined;
  private cacheWrite: number | undefined;
  private stop: string | undefined;
  private stopMessage: string | undefined;
  private sawStart = false;
  private sawOutput = false;
  private sawCall = false;
  private readonly ctx: ErrorContext;
  private readonly outputTool: string | undefined;

  constructor(ctx: ErrorContext, outputTool?: string) {
    this.ctx = ctx;
    this.outputTool = outputTool;
  }

  private usage(u: {
    input_tokens?: number | null;
    output_tokens?: number | null;
    cache_read_input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
    output_tokens_details?: { thinking_tokens?: number } | null;
  }): void {
    if (typeof u.input_tokens === "number") this.input = u.input_tokens;
    if (typeof u.output_tokens === "number") this.output = u.output_tokens;
    if (typeof u.cache_read_input_tokens === "number") this.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === "number") this.cacheWrite = u.cache_creation_input_tokens;
    const thinking = u.output_tokens_details?.thinking_tokens;
    if (typeof thinking === "number") this.reasoning = thinking;
  }

  push(ev: RawMessageStreamEvent, emit: Emit): boolean {
    switch (ev.type) {
      case "content_block_delta": {
        const d = ev.delta;
        switch (d.type) {
          case "text_delta":
            if (d.text !== "") emit({ type: "textDelta", text: d.text });
            break;
          case "input_json_delta": {
            if (this.kinds[ev.index] === OUTPUT) {
              if (d.partial_json !== "") {
                this.args[ev.index] = true;
                emit({ type: "textDelta", text: d.partial_json });
              }
              break;
            }
            const id = this.ids[ev.index];
            if (d.partial_json !== "" && id !== undefined && this.kinds[ev.index] === TOOL) {
              this.args[ev.index] = true;
              emit({ type: "toolCallArgsDelta", id, delta: d.partial_json });
            }
            break;
          }
          case "thinking_delta":
            if (d.thinking !== "") emit({ type: "reasoningDelta", text: d.thinking });
            break;
          case "signature_delta":
            this.ids[ev.index] = d.signature;
            break;
        }
        return false;
      }
      case "content_block_start": {
        const b = ev.content_block;
        const i = ev.index;
        switch (b.type) {
          case "text":
            this.kinds[i] = TEXT;
            if (b.text) emit({ type: "textDelta", text: b.text });
            break;
          case "thinking":
            this.kinds[i] = THINKING;
            this.ids[i] = b.signature || undefined;
            if (b.thinking) emit({ type: "reasoningDelta", text: b.thinking });
            break;
          case "redacted_thinking":
            this.kinds[i] = REDACTED;
            this.ids[i] = b.data;
            break;
          case "tool_use": {
            const input = b.input as Record<string, unknown> | null | undefined;
            const hasInput = !!input && typeof input === "object" && Object.keys(input).length > 0;
            if (this.outputTool !== undefined && b.name === this.outputTool) {
              this.kinds[i] = OUTPUT;
              this.sawOutput = true;
              this.args[i] = hasInput;
              if (hasInput) emit({ type: "textDelta", text: JSON.stringify(input) });
              break;
            }
            this.sawCall = true;
            this.kinds[i] = TOOL;
            this.ids[i] = b.id;
            emit({ type: "toolCallStart", id: b.id, name: b.name });
            this.args[i] = false;
            if (hasInput) {
              this.args[i] = true;
              emit({ type: "toolCallArgsDelta", id: b.id, delta: JSON.stringify(input) });
            }
            break;
          }
          default:
            this.kinds[i] = OTHER;
        }
        return false;
      }
      case "content_block_stop": {
        const i = ev.index;
        const kind = this.kinds[i];
        if (kind === THINKING) {
          const sig = this.ids[i];
          emit({
            type: "reasoningEnd",
            replay: sig !== undefined ? { provider: PROVIDER, signature: sig } : { provider: PROVIDER },
          });
        } else if (kind === REDACTED) {
          emit({
            type: "reasoningEnd",
            replay: { provider: PROVIDER, encrypted: this.ids[i] ?? "", redacted: true },
          });
        } else if (kind === OUTPUT) {
          if (!this.args[i]) emit({ type: "textDelta", text: "{}" });
        } else if (kind === TOOL) {
          const id = this.ids[i];
          if (id !== undefined) {
            // A call without arguments still gets a valid JSON object.
            if (!this.args[i]) emit({ type: "toolCallArgsDelta", id, delta: "{}" });
            emit({ type: "toolCallEnd", id });
          }
        }
        return false;
      }
      case "message_start":
        this.sawStart = true;
        if (typeof ev.message.id === "string") this.responseId = ev.message.id;
        this.usage(ev.message.usage);
        return false;
      case "message_delta": {
        if (ev.delta.stop_reason) this.stop = ev.delta.stop_reason;
        const details = ev.delta.stop_details as { explanation?: unknown } | null | undefined;
        if (details && typeof details.explanation === "string") this.stopMessage = details.explanation;
        if (ev.usage) this.usage(ev.usage);
        return false;
      }
      case "message_stop":
        return true;
      default:
        return false;
    }
  }

  aborted(emit: Emit): void {
    const cr = this.cacheRead;
    const cw = this.cacheWrite;
    const usage: Usage = usageOf(
      this.input === undefined ? undefined : this.input + (cr ?? 0) + (cw ?? 0),
      this.output,
      this.reasoning,
      cr,
      cw,
    );
    if (hasCounts(usage)) emit({ type: "usage", usage });
  }

  end(emit: Emit): LlmError | undefined {
    if (this.stop === undefined)
      return incompleteStream(this.ctx, this.sawStart ? "no message_stop" : "no message_start");
    const cr = this.cacheRead;
    const cw = this.cacheWrite;
    const usage: Usage = usageOf(
      this.input === undefined ? undefined : this.input + (cr ?? 0) + (cw ?? 0),
      this.output,
      this.reasoning,
      cr,
      cw,
    );
    if (hasCounts(usage)) emit({ type: "usage", usage });
    let reason = enum_stop[this.stop] ?? "error";
    // The forced output tool carries the answer: a reply that only called it is a finished answer.
    if (reason === "toolUse" && this.sawOutput && !this.sawCall) reason = "stop";
    const message = this.stopMessage ?? (reason === "error" ? `stop reason ${this.stop}` : undefined);
    emit({
      type: "finish",
      reason,
      ...(message !== undefined ? { message } : {}),
      ...(this.responseId !== undefined ? { responseId: this.responseId } : {}),
      providerReason: this.stop,
    });
    return undefined;
  }
}

export function anthropicClient(config: AdapterConfig): Anthropic {
  return new Anthropic({
    apiKey: config.apiKey ?? "missing",
    baseURL: config.baseUrl ?? null,
    maxRetries: 0, // the one retry layer is ours (withRetry)
    timeout: config.timeoutMs ?? defaultTimeoutMs,
    // SDK console output never reaches stderr: failures reach us as typed errors.
    logger: { error() {}, warn() {}, info() {}, debug() {} },
    logLevel: "off",
    ...(config.headers ? { defaultHeaders: config.headers } : {}),
  });
}

/** The Messages API as served elsewhere (Bedrock, Vertex): another SDK client, another name. */
export interface AnthropicVariant {
  readonly name: string;
  /** A client of `@anthropic-ai/sdk`'s shape (`AnthropicBedrock`, `AnthropicVertex`). */
  readonly client: { readonly messages: Pick<Anthropic["messages"], "create"> };
  /** What a 401/403 tells the user to do. */
  readonly authHint?: string;
  /** Decides whether structured output goes in `output_config.format` or a forced tool (anthropicNativeOutput). */
  readonly platform?: AnthropicPlatform;
}

/** Anthropic Messages API through `@anthropic-ai/sdk` (raw streaming events, no accumulating helper). */
export function anthropicProvider(config: AdapterConfig, variant?: AnthropicVariant): LlmProvider {
  const client = variant?.client ?? anthropicClient(config);
  const name = variant?.name ?? PROVIDER;
  return {
    name,
    stream(request) {
      const platform = variant?.platform ?? "anthropic";
      const params = anthropicParams(request, config, platform);
      const outputTool = anthropicOutputTool(request, params.model, platform);
      const ctx: ErrorContext = {
        provider: name,
        ...(variant?.authHint ? { authHint: variant.authHint } : {}),
        model: params.model,
        keyEnv: config.keyEnv,
        baseUrlEnv: config.baseUrlEnv,
        baseUrl: config.baseUrl,
      };
      return runSdkStream(
        ctx,
        async (signal, observe) => {
          const { data, response } = await client.messages.create(params, { signal }).withResponse();
          observe(response.status, response.headers);
          return data;
        },
        () => new AnthropicTranslator(ctx, outputTool),
        config.idleTimeoutMs,
      );
    },
  };
}
