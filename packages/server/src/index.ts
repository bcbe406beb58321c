// @lash/server — `lash serve`, the daemon (issue 19). The API schema is `./api.ts`
// (also `@lash/server/api`, which the client imports alone).
export * from "./api.ts";
export { openStateDb, SCHEMA_VERSION, StateDbError } from "./db.ts";
export { EventLogImpl, eventKey } from "./events.ts";
export type { McpHandler } from "./mcp.ts";
export { isTerminal, RunManagerImpl } from "./runs.ts";
export { type RunningServer, serveSettings, startServer } from "./server.ts";
export * from "./services.ts";
export { SseReader, sseCursor, sseFrame, sseResponse } from "./sse.ts";
export { hashesEqual, PRINCIPAL_NAME, TOKEN_PREFIX, type TokenInfo, TokenStore } from "./tokens.ts";
