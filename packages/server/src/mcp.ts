// OWNER: helper s3 (agents + MCP). `/v1/agents/:name/mcp`: each built agent as an MCP
// server over Streamable HTTP (the official SDK's transport). STUB until s3 lands.
import type { IncomingMessage, ServerResponse } from "node:http";

/** Handles a request whose path is `/v1/agents/<name>/mcp`; resolves when the response is written. */
export type McpHandler = (req: IncomingMessage, res: ServerResponse, agent: string) => Promise<void>;
