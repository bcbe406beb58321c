// The vendor adapters, for hosts that wire them by hand. Importing this loads every
// vendor SDK; `createProvider` from the package root loads only the one it needs.
export type { AnthropicPlatform, AnthropicVariant } from "./anthropic.ts";
export { anthropicMessages, anthropicParams, anthropicProvider } from "./anthropic.ts";
export type { BedrockOptions } from "./bedrock.ts";
export { bedrockProvider } from "./bedrock.ts";
export { codexFetch, codexParams, codexProvider } from "./codex.ts";
export { googleContents, googleParams, googleProvider, skipSignature } from "./google.ts";
export type { HttpResponse, HttpTransport, HttpTransportOptions, TransportErrors } from "./http.ts";
export { httpTransport } from "./http.ts";
export { chatMessages, chatParams, chatUsage, openaiChatProvider } from "./openai-chat.ts";
export type { ResponsesVariant } from "./openai-responses.ts";
export {
  openaiClient,
  openaiResponsesProvider,
  openaiTransport,
  openaiTransportErrors,
  responsesInput,
  responsesParams,
  responsesUsage,
} from "./openai-responses.ts";
export type { SseEvent, SseState } from "./sse.ts";
export { httpItems, SseParser } from "./sse.ts";
export type { VertexOptions } from "./vertex.ts";
export { vertexProvider } from "./vertex.ts";
