// @lash/client — a typed client for `lash serve`, derived from the server's HttpApi
// (`@lash/server/api`): a promise client (`createClient`), the Effect client
// (`makeApiClient`, `LashClient`), and event streams that reconnect with `Last-Event-ID`.
export type {
  AgentInfo,
  AgentMetrics,
  AgentReply,
  Approval,
  FiringState,
  Loop,
  LoopFiring,
  Principal,
  Run,
  RunState,
  ServerEvent,
  Session,
  SessionComparison,
  SessionNode,
  ViewLink,
} from "@lash/server/api";
export { LashApi } from "@lash/server/api";
export { createClient, type ExportFormat, type LashClientPromise, type TraceOptions } from "./client.ts";
export { type ApiClient, type ClientOptions, eventStream, LashClient, makeApiClient } from "./effect.ts";
export {
  type ApiError,
  BadRequest,
  ClientError,
  Conflict,
  Forbidden,
  type LashError,
  NotFound,
  PayloadTooLarge,
  TooManyRequests,
  Unauthorized,
  Unavailable,
} from "./errors.ts";
export {
  type Connection,
  type EventStream,
  type EventsOptions,
  type StreamTarget,
  streamAgentChat,
  streamEvents,
} from "./events.ts";
export { type SseMessage, SseParser, sseMessages } from "./sse.ts";
