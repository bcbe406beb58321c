// The vendor adapters, for hosts that wire them by hand. Importing this loads every
// vendor SDK; `createProvider` from the package root loads only the one it needs.
export { anthropicMessages, anthropicParams, anthropicProvider } from "./anthropic.ts";
export { googleContents, googleParams, googleProvider, skipSignature } from "./google.ts";
export { chatMessages, chatParams, chatUsage, openaiChatProvider } from "./openai-chat.ts";
export {
  openaiResponsesProvider,
  responsesInput,
  responsesParams,
  responsesUsage,
} from "./openai-responses.ts";
