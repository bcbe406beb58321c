import type { LlmRequest, ModelInfo } from "@lash/sansio";
import { anthropicClient, anthropicParams } from "../adapters/anthropic.ts";
import { googleClient, googleParams } from "../adapters/google.ts";
import { chatParams } from "../adapters/openai-chat.ts";
import { openaiClient, responsesParams } from "../adapters/openai-responses.ts";
import type { AdapterConfig } from "../adapters/shared.ts";
import type { MockLlmServer } from "./mock-server.ts";
import type { WireFormat } from "./reply.ts";

/**
 * Opens the vendor SDK's own stream for the same request an adapter would send,
 * without normalizing anything: the baseline of the adapter-overhead benchmark.
 */
export function rawSdkStream(
  format: WireFormat,
  server: Pick<MockLlmServer, "baseUrl">,
  request: LlmRequest,
  info: ModelInfo,
): () => Promise<AsyncIterable<unknown>> {
  const config: AdapterConfig = {
    apiKey: "test",
    baseUrl: server.baseUrl(format),
    model: "mock-model",
    info,
  };
  switch (format) {
    case "anthropic": {
      const client = anthropicClient(config);
      const params = anthropicParams(request, config);
      return () => client.messages.create(params);
    }
    case "openai-responses": {
      const client = openaiClient(config);
      const params = responsesParams(request, config);
      return () => client.responses.create(params);
    }
    case "openai-chat": {
      const client = openaiClient(config);
      const params = chatParams(request, config);
      return () => client.chat.completions.create(params);
    }
    case "google": {
      const client = googleClient(config);
      const params = googleParams(request, config);
      return () => client.models.generateContentStream(params);
    }
  }
}
