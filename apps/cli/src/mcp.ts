// MCP servers from config, supervised by @lash/plugin-mcp (loaded only when servers are configured).
import type { Plugin } from "@lash/core";
import type { LashConfig } from "./config.ts";
import { CliError, ExitCode, errorMessage } from "./errors.ts";

export interface McpServerSummary {
  readonly name: string;
  readonly transport: "stdio" | "http" | "sse";
  readonly enabled: boolean;
}

/** The configured servers as written (for `lash config`). */
export function mcpServers(config: LashConfig): McpServerSummary[] {
  return Object.entries(config.mcpServers ?? {}).map(([name, s]) => ({
    name,
    transport:
      s.type === "streamable-http" || s.type === "streamableHttp"
        ? "http"
        : (s.type ?? (s.command !== undefined ? "stdio" : "http")),
    enabled: s.enabled !== false && s.disabled !== true,
  }));
}

export const enabledMcpServers = (config: LashConfig): McpServerSummary[] =>
  mcpServers(config).filter((s) => s.enabled);

export interface McpRuntime {
  readonly plugin: Plugin;
  readonly status: () => readonly {
    readonly name: string;
    readonly transport: string;
    readonly state: string;
    readonly reason?: string;
    readonly toolCount: number;
    /** Listed tools left out (bad definition), with why. */
    readonly skippedTools?: readonly { readonly name: string; readonly reason: string }[];
  }[];
  /** Wait until every server is ready or failed (bounded). */
  readonly settle: (timeoutMs: number) => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Start the configured servers in the background; their tools join the catalog when ready. */
export async function startMcp(
  config: LashConfig,
  env: NodeJS.ProcessEnv,
  secretEnvNames: readonly string[] = [],
): Promise<McpRuntime> {
  const m = await import("@lash/plugin-mcp");
  let parsed: ReturnType<typeof m.parseMcpConfig>;
  try {
    parsed = m.parseMcpConfig({ mcpServers: config.mcpServers ?? {} });
  } catch (e) {
    throw new CliError(`lash: ${errorMessage(e)}`, ExitCode.usage);
  }
  // servers start with `env` scrubbed of credentials (and of `secretEnvNames`) plus their own `env`
  const handle = await m.createMcpManager(parsed, { env, secretEnvNames, stderr: "pipe" });
  return {
    plugin: m.mcpPlugin(handle),
    status: () => handle.status(),
    settle: async (timeoutMs) => {
      await handle.awaitSettled({ timeoutMs });
    },
    close: () => handle.close(),
  };
}
