export { anthropicMessages, anthropicParams, anthropicProvider } from "./adapters/anthropic.ts";
export { googleContents, googleParams, googleProvider, skipSignature } from "./adapters/google.ts";
export { chatMessages, chatParams, chatUsage, openaiChatProvider } from "./adapters/openai-chat.ts";
export {
  openaiResponsesProvider,
  responsesInput,
  responsesParams,
  responsesUsage,
} from "./adapters/openai-responses.ts";
export type { AdapterConfig, Translator } from "./adapters/shared.ts";
export type { ResolvedModel } from "./catalog.ts";
export { catalogDate, ModelCatalog, unknownModelInfo } from "./catalog.ts";
export type { CreateProviderOptions, ProviderHandle } from "./create.ts";
export { createProvider, makeProvider, providerEnv } from "./create.ts";
export type { ErrorContext } from "./errors.ts";
export { classifyError, isContextOverflowText, retryAfterMs } from "./errors.ts";
export type { ModelId, ProviderKind } from "./model-id.ts";
export { ProviderConfigError, parseModelId, providerKinds, wireModelName } from "./model-id.ts";
export type { RetryPolicy } from "./retry.ts";
export { defaultRetryPolicy, withRetry } from "./retry.ts";
