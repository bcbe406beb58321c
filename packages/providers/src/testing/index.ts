import type { LlmProvider, LlmRequest, ModelInfo } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Stream from "effect/Stream";
import { anthropicProvider } from "../adapters/anthropic.ts";
import { googleProvider } from "../adapters/google.ts";
import { openaiChatProvider } from "../adapters/openai-chat.ts";
import { openaiResponsesProvider } from "../adapters/openai-responses.ts";
import { unknownModelInfo } from "../catalog.ts";
import type { ProviderKind } from "../model-id.ts";
import type { RetryPolicy } from "../retry.ts";
import { withRetry } from "../retry.ts";
import type { MockLlmServer } from "./mock-server.ts";
import type { WireFormat } from "./reply.ts";

export { bedrockChunk, eventStreamMessage } from "./aws-eventstream.ts";
export type { MockAuthServer, MockAuthServerOptions } from "./mock-auth.ts";
export { startMockAuthServer } from "./mock-auth.ts";
export type {
  MockLlmServer,
  MockRateLimit,
  MockServerOptions,
  RecordedRequest,
  Responder,
  StreamRecord,
} from "./mock-server.ts";
export { formatOfPath, startMockServer } from "./mock-server.ts";
export { rawSdkStream } from "./raw.ts";
export type { SseEvent } from "./render.ts";
export { renderError, renderStream, sseText } from "./render.ts";
export type {
  MockError,
  MockErrorCode,
  MockFinish,
  MockReasoning,
  MockReply,
  MockToolCall,
  MockUsage,
  WireFormat,
} from "./reply.ts";
export { splitText, wireFormats } from "./reply.ts";
export type { Script, ScriptedProviderOptions, ScriptStep } from "./scripted.ts";
export { replyEvents, ScriptedProvider } from "./scripted.ts";

/** The wire format each provider kind speaks. */
export const formatOfProvider: Record<ProviderKind, WireFormat> = {
  anthropic: "anthropic",
  openai: "openai-responses",
  "openai-compatible": "openai-chat",
  google: "google",
  codex: "openai-responses",
  bedrock: "anthropic",
  "vertex-anthropic": "anthropic",
};

/** The provider kind that speaks a wire format. */
export const providerOfFormat: Record<WireFormat, ProviderKind> = {
  anthropic: "anthropic",
  "openai-responses": "openai",
  "openai-chat": "openai-compatible",
  google: "google",
};

/**
 * `createProvider` options pointing at a mock server, for a provider kind or wire format:
 * `createProvider("anthropic/claude-sonnet-4-5", mockProviderOptions(server, "anthropic"))`.
 */
export function mockProviderOptions(
  server: Pick<MockLlmServer, "baseUrl">,
  kind: ProviderKind | WireFormat,
): { apiKey: string; baseUrl: string; region?: string; project?: string } {
  const url = server.baseUrl("anthropic");
  // Codex: the ChatGPT backend's path; Bedrock and Vertex: their SDKs rewrite the path, the
  // mock serves `/model/{id}/invoke-with-response-stream` and `…/models/{model}:streamRawPredict`
  if (kind === "codex") return { apiKey: "test", baseUrl: `${url}/backend-api/codex` };
  if (kind === "bedrock") return { apiKey: "test", baseUrl: url, region: "us-east-1" };
  if (kind === "vertex-anthropic")
    return { apiKey: "test", baseUrl: `${url}/v1`, region: "us-east5", project: "mock-project" };
  const format = (kind in formatOfProvider ? formatOfProvider[kind as ProviderKind] : kind) as WireFormat;
  return { apiKey: "test", baseUrl: server.baseUrl(format) };
}

/**
 * An adapter for one wire format pointed at a mock server, without the catalog
 * (model info defaults) and, unless `retry` is given, without the retry layer.
 */
export function mockProvider(
  server: Pick<MockLlmServer, "baseUrl">,
  format: WireFormat,
  options: {
    model?: string;
    info?: Partial<ModelInfo>;
    retry?: Partial<RetryPolicy>;
    idleTimeoutMs?: number;
  } = {},
): LlmProvider {
  const model = options.model ?? "mock-model";
  const kind = providerOfFormat[format];
  const info: ModelInfo = { ...unknownModelInfo(`${kind}/${model}`), ...options.info };
  const config = {
    apiKey: "test",
    baseUrl: server.baseUrl(format),
    model,
    info,
    idleTimeoutMs: options.idleTimeoutMs,
    keyEnv:
      kind === "google" ? "GEMINI_API_KEY" : kind === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY",
  };
  const p =
    format === "anthropic"
      ? anthropicProvider(config)
      : format === "openai-responses"
        ? openaiResponsesProvider(config)
        : format === "openai-chat"
          ? openaiChatProvider(config)
          : googleProvider(config);
  return options.retry ? withRetry(p, options.retry) : p;
}

/** Runs a provider stream to its end and returns how many events it produced (benchmarks). */
export function drainEvents(provider: LlmProvider, request: LlmRequest): Promise<number> {
  let n = 0;
  return Effect.runPromise(
    Stream.runForEachChunk(provider.stream(request), (chunk) =>
      Effect.sync(() => {
        n += chunk.length;
      }),
    ),
  ).then(() => n);
}
