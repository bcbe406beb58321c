// MCP servers from config. `@lash/plugin-mcp` supervises them once it exports a plugin;
// until then the CLI validates the config and reports the servers as not started.
import type { LashConfig } from "./config.ts";

export interface McpServerStatus {
  readonly name: string;
  readonly transport: "stdio" | "http" | "sse";
  readonly enabled: boolean;
  readonly state: string;
}

export const MCP_PENDING =
  "configured; not started: this build of lash validates mcpServers but the MCP plugin (@lash/plugin-mcp) is not wired yet";

export function mcpServers(config: LashConfig): McpServerStatus[] {
  return Object.entries(config.mcpServers ?? {}).map(([name, s]) => {
    const enabled = s.enabled !== false && s.disabled !== true;
    return {
      name,
      transport: s.type ?? (s.command !== undefined ? "stdio" : "http"),
      enabled,
      state: enabled ? MCP_PENDING : "disabled",
    };
  });
}

export function mcpStatus(config: LashConfig): { readonly servers: readonly McpServerStatus[] } {
  return { servers: mcpServers(config) };
}
