// @lash/server — `lash serve`, the daemon (issue 19). The API schema is `./api.ts`
// (also `@lash/server/api`, which the client imports alone).
export * from "./api.ts";
export { openStateDb, SCHEMA_VERSION, StateDbError } from "./db.ts";
export { EventLogImpl, eventKey } from "./events.ts";
export type { McpHandler } from "./mcp.ts";
export { isTerminal, RunManagerImpl } from "./runs.ts";
export {
  DEFAULT_BACKOFF_MS,
  type FiringError,
  firingKey,
  firingText,
  type LoopDef,
  type LoopRunner,
  loopsOf,
  MAX_MISSED,
  makeScheduler,
  type NextFiring,
  nextFiringOf,
  parseDuration,
  type SchedulerImpl,
} from "./scheduler.ts";
export { type RunningServer, serveSettings, startServer } from "./server.ts";
export * from "./services.ts";
export { SseReader, sseCursor, sseFrame, sseResponse } from "./sse.ts";
export { hashesEqual, PRINCIPAL_NAME, TOKEN_PREFIX, type TokenInfo, TokenStore } from "./tokens.ts";
