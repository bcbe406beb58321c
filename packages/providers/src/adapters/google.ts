import type {
  Content,
  FunctionCallingConfigMode,
  GenerateContentParameters,
  GenerateContentResponse,
  Part as GPart,
} from "@google/genai";
import { GoogleGenAI } from "@google/genai";
import type { LlmError, LlmProvider, LlmRequest, StopReason, Usage } from "@lash/sansio";
import type { ErrorContext } from "../errors.ts";
import { incompleteStream } from "../errors.ts";
import { wireModelName } from "../model-id.ts";
import { outputFormat, outputInstruction } from "../structured.ts";
import type { AdapterConfig, Emit, Translator } from "./shared.ts";
import {
  attachmentPlaceholder,
  defaultTimeoutMs,
  hasCounts,
  parseArgs,
  partAsText,
  runSdkStream,
  syntheticCallId,
  usageOf,
} from "./shared.ts";

const PROVIDER = "google";
/** Gemini 3 requires a thought signature on replayed function calls; this placeholder skips the check for foreign calls. */
export const skipSignature = "skip_thought_signature_validator";

function attachmentPart(a: {
  mediaType: string;
  data?: string | undefined;
  ref?: string | undefined;
  name?: string | undefined;
}): GPart {
  if (a.data !== undefined) return { inlineData: { mimeType: a.mediaType, data: a.data } };
  if (a.ref !== undefined && /^(https?|gs):/.test(a.ref))
    return { fileData: { fileUri: a.ref, mimeType: a.mediaType } };
  return { text: attachmentPlaceholder(a) };
}

/** Normalized messages → Gemini contents (consecutive same-role contents merged). */
export function googleContents(request: LlmRequest): Content[] {
  const out: Content[] = [];
  for (const m of request.messages) {
    const role = m.role === "assistant" ? "model" : "user";
    const parts: GPart[] = [];
    if (role === "model") {
      const hasOwnSignature = m.parts.some((p) => p.type === "toolCall" && p.replay?.provider === PROVIDER);
      let firstCall = true;
      for (const p of m.parts) {
        if (p.type === "reasoning") {
          const sig = p.replay?.provider === PROVIDER ? p.replay.signature : undefined;
          if (sig === undefined) continue; // foreign or unsigned reasoning is dropped
          if (p.text !== "") parts.push({ text: p.text, thought: true, thoughtSignature: sig });
          else {
            // A signature that came on the (empty) closing part goes back on the part before it.
            const prev = parts[parts.length - 1];
            if (prev && prev.thoughtSignature === undefined) prev.thoughtSignature = sig;
            else parts.push({ text: "", thoughtSignature: sig });
          }
        } else if (p.type === "toolCall") {
          const sig = p.replay?.provider === PROVIDER ? p.replay.signature : undefined;
          const part: GPart = { functionCall: { id: p.id, name: p.name, args: parseArgs(p.argumentsText) } };
          if (sig !== undefined) part.thoughtSignature = sig;
          else if (firstCall && !hasOwnSignature) part.thoughtSignature = skipSignature;
          firstCall = false;
          parts.push(part);
        } else {
          const t = partAsText(p);
          if (t) parts.push({ text: t });
        }
      }
    } else {
      const after: GPart[] = [];
      for (const p of m.parts) {
        if (p.type === "toolResult") {
          let text = "";
          for (const c of p.content) {
            if (c.type === "text") text += (text ? "\n" : "") + c.text;
            else after.push(attachmentPart(c));
          }
          parts.push({
            functionResponse: {
              id: p.callId,
              name: p.name,
              response: p.isError ? { error: text } : { output: text },
            },
          });
        } else if (p.type === "attachment") parts.push(attachmentPart(p));
        else {
          let t = partAsText(p);
          if (!t) continue;
          if (m.role === "system") t = `System note: ${t}`;
          parts.push({ text: t });
        }
      }
      parts.push(...after);
    }
    if (parts.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role) last.parts!.push(...parts);
    else out.push({ role, parts });
  }
  return out;
}

/** Gemini 3 and later take a response schema together with function declarations. */
export function geminiOutputWithTools(model: string): boolean {
  const m = /^gemini-(\d+)/.exec(model);
  return m !== null && Number(m[1]) >= 3;
}

export function googleParams(request: LlmRequest, config: AdapterConfig): GenerateContentParameters {
  const cfg: NonNullable<GenerateContentParameters["config"]> = {
    automaticFunctionCalling: { disable: true },
    automaticContinuation: false, // the one retry layer is ours
  };
  if (request.system) cfg.systemInstruction = request.system;
  if (request.maxOutput !== undefined) cfg.maxOutputTokens = request.maxOutput;
  if (request.temperature !== undefined) cfg.temperature = request.temperature;
  if (request.tools.length > 0) {
    cfg.tools = [
      {
        functionDeclarations: request.tools.map((t) => ({
          name: t.name,
          description: t.description,
          parametersJsonSchema: t.inputSchema,
        })),
      },
    ];
    const tc = request.toolChoice;
    if (tc !== undefined) {
      const mode = (tc === "auto" ? "AUTO" : tc === "none" ? "NONE" : "ANY") as FunctionCallingConfigMode;
      cfg.toolConfig = {
        functionCallingConfig: typeof tc === "string" ? { mode } : { mode, allowedFunctionNames: [tc.name] },
      };
    }
  }
  const model = wireModelName(request.model, config.model);
  const format = outputFormat(request, PROVIDER);
  if (format) {
    if (request.tools.length === 0 || geminiOutputWithTools(model)) {
      cfg.responseMimeType = "application/json";
      cfg.responseJsonSchema = format.schema;
    }
    // Gemini before 3 rejects function calling with a JSON response type: the prompt asks instead.
    else cfg.systemInstruction = [request.system, outputInstruction(format)].filter(Boolean).join("\n\n");
  }
  if (config.info.reasoning || request.reasoning) {
    cfg.thinkingConfig = {
      includeThoughts: true,
      ...(request.reasoning?.budgetTokens !== undefined
        ? { thinkingBudget: request.reasoning.budgetTokens }
        : {}),
    };
  }
  return {
    model,
    contents: googleContents(request),
    config: cfg,
  };
}

const finishMap: Record<string, StopReason> = {
  STOP: "stop",
  MAX_TOKENS: "outputLimit",
  SAFETY: "contentFilter",
  RECITATION: "contentFilter",
  BLOCKLIST: "contentFilter",
  PROHIBITED_CONTENT: "contentFilter",
  SPII: "contentFilter",
  IMAGE_SAFETY: "contentFilter",
  IMAGE_PROHIBITED_CONTENT: "contentFilter",
  IMAGE_RECITATION: "contentFilter",
  LANGUAGE: "contentFilter",
};

/** Sets `value` at a `$.a.b[0]` path, appending to a string already there (streamed string pieces). */
function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const keys: (string | number)[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/g;
  for (let m = re.exec(path); m; m = re.exec(path))
    keys.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : m[3]!));
  if (keys.length === 0) return;
  let cur: Record<string | number, unknown> = root;
  for (let i = 0; i < keys.length - 1; i++) {
    const k = keys[i]!;
    let next = cur[k];
    if (next === null || typeof next !== "object") {
      next = typeof keys[i + 1] === "number" ? [] : {};
      cur[k] = next;
    }
    cur = next as Record<string | number, unknown>;
  }
  const last = keys[keys.length - 1]!;
  const prev = cur[last];
  cur[last] = typeof value === "string" && typeof prev === "string" ? prev + value : value;
}

interface StreamingCall {
  readonly id: string;
  readonly args: Record<string, unknown>;
  signature: string | undefined;
}

class GoogleTranslator implements Translator<GenerateContentResponse> {
  /** The provider's id of the response (for traces). */
  private responseId: string | undefined;
  private reasoningOpen = false;
  private reasoningSig: string | undefined;
  private call: StreamingCall | undefined;
  private anyCall = false;
  private emitted = false;
  private finish: string | undefined;
  private blocked: string | undefined;
  private usage: Usage | undefined;
  private readonly ctx: ErrorContext;

  constructor(ctx: ErrorContext) {
    this.ctx = ctx;
  }

  private closeReasoning(emit: Emit): void {
    if (!this.reasoningOpen) return;
    this.reasoningOpen = false;
    const sig = this.reasoningSig;
    this.reasoningSig = undefined;
    emit(
      sig !== undefined
        ? { type: "reasoningEnd", replay: { provider: PROVIDER, signature: sig } }
        : { type: "reasoningEnd" },
    );
  }

  private closeCall(emit: Emit): void {
    const c = this.call;
    if (!c) return;
    this.call = undefined;
    emit({ type: "toolCallArgsDelta", id: c.id, delta: JSON.stringify(c.args) });
    emit(
      c.signature !== undefined
        ? { type: "toolCallEnd", id: c.id, replay: { provider: PROVIDER, signature: c.signature } }
        : { type: "toolCallEnd", id: c.id },
    );
  }

  private part(p: GPart, emit: Emit): void {
    const fc = p.functionCall;
    if (fc) {
      this.closeReasoning(emit);
      if (fc.name) {
        this.closeCall(emit);
        const id = fc.id || syntheticCallId();
        this.anyCall = true;
        this.emitted = true;
        emit({ type: "toolCallStart", id, name: fc.name });
        if (fc.willContinue && !fc.args) {
          this.call = { id, args: {}, signature: p.thoughtSignature };
          if (fc.partialArgs) for (const a of fc.partialArgs) this.partial(a);
          return;
        }
        emit({ type: "toolCallArgsDelta", id, delta: JSON.stringify(fc.args ?? {}) });
        emit(
          p.thoughtSignature !== undefined
            ? { type: "toolCallEnd", id, replay: { provider: PROVIDER, signature: p.thoughtSignature } }
            : { type: "toolCallEnd", id },
        );
        return;
      }
      const c = this.call;
      if (c) {
        if (p.thoughtSignature !== undefined) c.signature = p.thoughtSignature;
        if (fc.partialArgs) for (const a of fc.partialArgs) this.partial(a);
        if (!fc.willContinue) this.closeCall(emit);
      }
      return;
    }
    if (p.thought) {
      if (p.text) {
        this.closeCall(emit);
        this.reasoningOpen = true;
        this.emitted = true;
        emit({ type: "reasoningDelta", text: p.text });
      }
      if (p.thoughtSignature !== undefined) {
        this.reasoningOpen = true;
        this.reasoningSig = p.thoughtSignature;
      }
      return;
    }
    if (p.text !== undefined || p.thoughtSignature !== undefined) {
      this.closeReasoning(emit);
      this.closeCall(emit);
      if (p.text) {
        this.emitted = true;
        emit({ type: "textDelta", text: p.text });
      }
      if (p.thoughtSignature !== undefined)
        emit({ type: "reasoningEnd", replay: { provider: PROVIDER, signature: p.thoughtSignature } });
    }
  }

  private partial(a: {
    jsonPath?: string;
    stringValue?: string;
    numberValue?: number;
    boolValue?: boolean;
    nullValue?: string;
  }): void {
    const c = this.call;
    if (!c || !a.jsonPath) return;
    const v =
      a.stringValue !== undefined
        ? a.stringValue
        : a.numberValue !== undefined
          ? a.numberValue
          : a.boolValue !== undefined
            ? a.boolValue
            : a.nullValue !== undefined
              ? null
              : undefined;
    if (v !== undefined) setPath(c.args, a.jsonPath, v);
  }

  push(chunk: GenerateContentResponse, emit: Emit): boolean {
    if (typeof chunk.responseId === "string" && chunk.responseId !== "") this.responseId = chunk.responseId;
    const cand = chunk.candidates?.[0];
    const parts = cand?.content?.parts;
    if (parts) for (const p of parts) this.part(p, emit);
    if (cand?.finishReason) this.finish = cand.finishReason;
    const block = chunk.promptFeedback?.blockReason;
    if (block) this.blocked = String(block);
    const u = chunk.usageMetadata;
    if (u) {
      const thoughts = u.thoughtsTokenCount;
      const cands = u.candidatesTokenCount;
      const usage = usageOf(
        u.promptTokenCount,
        cands === undefined && thoughts === undefined ? undefined : (cands ?? 0) + (thoughts ?? 0),
        thoughts,
        u.cachedContentTokenCount,
        undefined,
      );
      if (hasCounts(usage)) this.usage = usage;
    }
    return false;
  }

  end(emit: Emit): LlmError | undefined {
    this.closeReasoning(emit);
    this.closeCall(emit);
    let reason: StopReason;
    let message: string | undefined;
    if (this.blocked !== undefined) {
      reason = "contentFilter";
      message = `prompt blocked: ${this.blocked}`;
    } else if (this.finish !== undefined) {
      reason = finishMap[this.finish] ?? "error";
      if (reason === "stop" && this.anyCall) reason = "toolUse";
      if (reason === "error") message = `finish reason ${this.finish}`;
    }
    // Gemini ends every complete answer with a finishReason: without one the connection closed mid-answer.
    else return incompleteStream(this.ctx, this.emitted ? "no finishReason" : "no chunks");
    if (this.usage) emit({ type: "usage", usage: this.usage });
    emit({
      type: "finish",
      reason,
      ...(message !== undefined ? { message } : {}),
      ...(this.responseId !== undefined ? { responseId: this.responseId } : {}),
      ...(this.finish !== undefined ? { providerReason: String(this.finish) } : {}),
    });
    return undefined;
  }
}

export function googleClient(config: AdapterConfig): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: config.apiKey ?? "missing",
    httpOptions: {
      ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
      timeout: config.timeoutMs ?? defaultTimeoutMs,
      ...(config.headers ? { headers: config.headers } : {}),
      // No retryOptions: the SDK then makes exactly one attempt (the one retry layer is ours).
    },
  });
}

/** Google Gemini through `@google/genai` (`streamGenerateContent`, SSE). */
export function googleProvider(config: AdapterConfig): LlmProvider {
  const client = googleClient(config);
  return {
    name: PROVIDER,
    stream(request) {
      const params = googleParams(request, config);
      let failedHeaders: Headers | undefined;
      const ctx: ErrorContext = {
        provider: PROVIDER,
        model: params.model,
        keyEnv: config.keyEnv,
        baseUrlEnv: config.baseUrlEnv,
        baseUrl: config.baseUrl,
        get headers() {
          return failedHeaders;
        },
      };
      return runSdkStream(
        ctx,
        (signal, observe) =>
          client.models.generateContentStream({
            ...params,
            config: {
              ...params.config,
              abortSignal: signal,
              httpOptions: {
                // The SDK's ApiError drops response headers; keep them for Retry-After.
                fetch: async (input: string | URL | Request, init?: RequestInit) => {
                  const res = await fetch(input, init);
                  observe(res.status, res.headers);
                  if (!res.ok) failedHeaders = res.headers;
                  return res;
                },
              },
            },
          }),
        () => new GoogleTranslator(ctx),
        config.idleTimeoutMs,
      );
    },
  };
}
