export {
  decodeMcpConfig,
  expandServerEnv,
  type McpConfig,
  McpConfigError,
  McpConfigFile,
  type McpConfigIssue,
  type McpRemoteServer,
  type McpServerConfig,
  McpServerEntry,
  type McpStdioServer,
  parseMcpConfig,
} from "./config.ts";
export { listAllTools, type McpSkippedTool, type McpToolInfo } from "./connection.ts";
export { mapCallResult, mapContentBlock } from "./content.ts";
export {
  createMcpManager,
  type McpCallOptions,
  McpManager,
  type McpManagerHandle,
  type McpManagerOptions,
  type McpManagerShape,
  type McpServerState,
  type McpServerStatus,
  type McpSettleOptions,
  type McpToolsOptions,
  mcpToolEffects,
} from "./manager.ts";
export {
  assignToolNames,
  baseToolName,
  isValidToolName,
  lashlangIdent,
  MAX_TOOL_NAME,
  sanitizeNamePart,
} from "./names.ts";
export { type McpPluginOptions, mcpPlugin } from "./plugin.ts";
export { normalizeInputSchema } from "./schema.ts";
