/**
 * @lash/sansio — the sans-IO agent kernel: the message model, LLM request/event types,
 * usage and cost, the `TurnMachine` with its protocol drivers (standard tool calling and
 * RLM), turn activity events and canonical hashing. Named exports only (see
 * `api/sansio.api.md`); the RLM prompt and cell helpers the host uses live in the
 * unstable `@lash/sansio/internal` entry point.
 */
export {
  accumulate,
  ResponseAccumulator,
} from "./accumulate.ts";
export { ACTIVITY_VERSION, TurnActivity, TurnActivityBody } from "./activity.ts";
export {
  abortWait,
  afterOn,
  callOf,
  isLiveClock,
  type LlmCall,
  type LlmCallOptions,
  streamOfCall,
  withCall,
} from "./call.ts";
export {
  type ContextProjector,
  type DriverAction,
  type DriverContext,
  defaultProjector,
  defaultTurnLimitNotice,
  type OnEmpty,
  type ProjectionView,
  type ProtocolDriver,
  type TurnConfig,
} from "./driver.ts";
export {
  canonicalJson,
  hashValue,
  sha256BytesHex,
  sha256Hex,
} from "./hash.ts";
export {
  CacheOptions,
  LlmError,
  LlmErrorInfo,
  LlmErrorKind,
  LlmEvent,
  type LlmProvider,
  LlmRequest,
  LlmResponse,
  llmErrorInfo,
  ReasoningOptions,
  StopReason,
  ToolChoice,
  ToolSpec,
} from "./llm.ts";
export {
  responseText,
  type TurnCheckpoint,
  TurnMachine,
} from "./machine.ts";
export { type MessageMemo, memoOf } from "./memo.ts";
export {
  AttachmentPart,
  CodePart,
  ErrorPart,
  Message,
  messageText,
  OutputPart,
  Part,
  ProviderReplay,
  ReasoningPart,
  Role,
  TextPart,
  ToolCallPart,
  ToolResultContent,
  ToolResultPart,
} from "./message.ts";
export {
  type JsonSchemaObject,
  type ResolvedOutputSchema,
  resolveOutputSchema,
  StructuredOutput,
  shorthandType,
} from "./output.ts";
export {
  maskedText,
  type RlmAttachmentRef,
  type RlmBinding,
  type RlmDriverOptions,
  type RlmEnvironment,
  type RlmExecDetails,
  type RlmFinalAnswerFormat,
  type RlmHistoryItem,
  type RlmOperation,
  type RlmProjectorOptions,
  type RlmTermination,
  rlmDriver,
  rlmProjector,
  StreamMask,
} from "./rlm/index.ts";
export { standardDriver } from "./standard.ts";
export {
  CheckpointKind,
  CompletedToolCall,
  ExecResult,
  LlmResult,
  PendingToolCall,
  type ReplyEffect,
  StopKind,
  ToolControl,
  type TurnEffect,
  TurnEvent,
  TurnOutcome,
  TurnResponse,
} from "./turn.ts";
export {
  addUsage,
  costOf,
  ModelInfo,
  Pricing,
  Usage,
} from "./usage.ts";
