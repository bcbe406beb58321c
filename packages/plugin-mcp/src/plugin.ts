import type { Plugin } from "@lash/core";
import type { McpManagerShape } from "./manager.ts";

export interface McpPluginOptions {
  /** Plugin name (the key of its status in `runtime.pluginStatus()`). Default `"mcp"`. */
  readonly name?: string;
}

/**
 * The lash plugin for a manager: its tools are `dynamicTools` (read again before every model call,
 * so servers that become ready, restart or re-list show up on the next call), and `status()` gives
 * hosts `{ servers: McpServerStatus[] }`.
 */
export function mcpPlugin(
  manager: McpManagerShape | { readonly manager: McpManagerShape },
  options: McpPluginOptions = {},
): Plugin {
  const m = "manager" in manager ? manager.manager : manager;
  return {
    name: options.name ?? "mcp",
    dynamicTools: () => m.tools(),
    status: () => ({ servers: m.status() }),
  };
}
