import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema, ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import { Deferred, Effect, Exit } from "effect";
import * as z from "zod";
import type { McpServerConfig } from "./config.ts";

/** A tool as the server listed it. */
export interface McpToolInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly annotations?: {
    readonly readOnlyHint?: boolean;
    readonly idempotentHint?: boolean;
    readonly destructiveHint?: boolean;
    readonly openWorldHint?: boolean;
    readonly title?: string;
  };
}

/** A live connection to one server. */
export interface Connection {
  readonly client: Client;
  readonly transport: Transport;
  readonly pid?: number;
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /** Completed with a reason when the connection is gone (process exit, transport close, fatal error). */
  readonly closed: Deferred.Deferred<string>;
  /** The last lines the server wrote to stderr (stdio). */
  readonly stderrTail: () => string;
}

export class ConnectError extends Error {}

const STDERR_KEEP = 4096;

/** Last `n` non-empty lines of a text. */
export const lastLines = (text: string, n = 3): string =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .slice(-n)
    .join(" | ");

export interface ConnectOptions {
  readonly clientInfo: { readonly name: string; readonly version: string };
  /** Called (outside Effect) when the server says its tool list changed. */
  readonly onToolsChanged: () => void;
  /** Timeout of each request made while connecting (initialize, tools/list). */
  readonly requestTimeoutMs: number;
  /** Largest JSON-RPC message read from a stdio server (the SDK's default is 10 MiB). */
  readonly maxMessageBytes?: number;
  readonly stderr: "pipe" | "inherit" | "ignore";
  /**
   * Base environment of a stdio server (the host's, scrubbed of credentials); the server's
   * configured `env` is added on top. Without it the SDK's minimal default
   * (HOME, LOGNAME, PATH, SHELL, TERM, USER) is used.
   */
  readonly env?: { readonly [key: string]: string };
}

function makeTransport(config: McpServerConfig, options: ConnectOptions): Transport {
  const stderr = options.stderr;
  if (config.type === "stdio") {
    // explicit: the configured `env` always reaches the server, even names that look secret
    const env =
      options.env === undefined && config.env === undefined ? undefined : { ...options.env, ...config.env };
    return new StdioClientTransport({
      ...(options.maxMessageBytes !== undefined ? { maxBufferSize: options.maxMessageBytes } : {}),
      command: config.command,
      args: [...config.args],
      ...(env === undefined ? {} : { env }),
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      stderr,
    });
  }
  const requestInit = config.headers === undefined ? undefined : { headers: { ...config.headers } };
  const url = new URL(config.url);
  return config.type === "sse"
    ? new SSEClientTransport(url, requestInit ? { requestInit } : undefined)
    : new StreamableHTTPClientTransport(url, requestInit ? { requestInit } : undefined);
}

/** A listed tool lash cannot use (its definition breaks the MCP schema), and why. */
export interface McpSkippedTool {
  readonly name: string;
  readonly reason: string;
}

/** A `tools/list` page read leniently: each tool is checked on its own, so one bad tool cannot sink the listing. */
const LenientToolsPage = z.looseObject({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

/** Why a listed tool does not conform, in words (not a Zod dump). */
function toolProblem(tool: unknown, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      if (issue.code === "invalid_value" && issue.path.at(-1) === "type" && issue.values.length === 1) {
        let actual: unknown = tool;
        for (const k of issue.path) actual = (actual as Record<PropertyKey, unknown> | undefined)?.[k];
        const parent = issue.path.slice(0, -1).map(String).join(".") || "the tool";
        return `${parent} must have type ${JSON.stringify(issue.values[0])}${
          actual === undefined ? " (it has none)" : ` (it has ${JSON.stringify(actual)})`
        }`;
      }
      return `${path || "the tool"}: ${issue.message.replace(/^Invalid input: /, "")}`;
    })
    .join("; ");
}

/**
 * Every page of `tools/list` (follows `nextCursor`). Each tool is validated on its own: one that
 * breaks the MCP schema (e.g. an `inputSchema` without `type: "object"`) is left out and passed to
 * `onSkipped` with a readable reason; the others stay usable.
 */
export async function listAllTools(
  client: Client,
  options: {
    readonly signal?: AbortSignal;
    readonly timeoutMs: number;
    readonly onSkipped?: (skipped: McpSkippedTool) => void;
  },
): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  let position = 0;
  do {
    const page = await client.request(
      { method: "tools/list", ...(cursor === undefined ? {} : { params: { cursor } }) },
      LenientToolsPage,
      { timeout: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
    );
    for (const raw of page.tools) {
      position++;
      const checked = ToolSchema.safeParse(raw);
      if (checked.success) {
        tools.push(checked.data as McpToolInfo);
        continue;
      }
      const name = (raw as { name?: unknown } | null)?.name;
      options.onSkipped?.({
        name: typeof name === "string" ? name : `(tool #${position}, no name)`,
        reason: toolProblem(raw, checked.error.issues),
      });
    }
    cursor = page.nextCursor;
    if (cursor !== undefined) {
      if (seenCursors.has(cursor)) throw new Error(`tools/list returned the cursor ${cursor} twice`);
      seenCursors.add(cursor);
    }
  } while (cursor !== undefined);
  // what `client.listTools` would do: remember output schemas (to check structured results) and
  // task support — for the whole listing, every page
  const cache = (client as unknown as { cacheToolMetadata?: (tools: readonly unknown[]) => void })
    .cacheToolMetadata;
  try {
    cache?.call(client, tools);
  } catch {
    // an output schema the validator cannot compile: results are not checked against it
    cache?.call(
      client,
      tools.map(({ outputSchema: _, ...t }: McpToolInfo & { outputSchema?: unknown }) => t),
    );
  }
  return tools;
}

/**
 * Start a server (spawn / open the HTTP session), run `initialize` and list its tools.
 * On failure or interruption everything started is closed again.
 */
export const connect = (
  config: McpServerConfig,
  options: ConnectOptions,
): Effect.Effect<
  {
    readonly connection: Connection;
    readonly tools: McpToolInfo[];
    readonly skipped: McpSkippedTool[];
  },
  ConnectError
> =>
  Effect.gen(function* () {
    const closed = yield* Deferred.make<string>();
    let stderrText = "";
    const transport = makeTransport(config, options);
    if (transport instanceof StdioClientTransport) {
      transport.stderr?.on("data", (chunk: Buffer | string) => {
        stderrText = (stderrText + chunk.toString()).slice(-STDERR_KEEP);
      });
    }
    const stderrTail = () => lastLines(stderrText);
    const client = new Client(
      { name: options.clientInfo.name, version: options.clientInfo.version },
      { capabilities: {} },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => options.onToolsChanged());
    // the SDK closes a stdio connection whose message outgrows its read buffer: say so, not "exited"
    let overflow: string | undefined;
    let connected = false;
    const markClosed = (why: string) => {
      const tail = stderrTail();
      Deferred.unsafeDone(closed, Exit.succeed(tail ? `${why} (stderr: ${tail})` : why));
    };
    client.onerror = (error) => {
      // legacy HTTP+SSE: every response arrives on the event stream, so once it breaks (the server
      // restarted or went away) no call can be answered — the EventSource's own reconnect would reach
      // a server that never saw our initialize. The connection is over: the supervisor reconnects.
      if (connected && error instanceof SseError && transport instanceof SSEClientTransport) {
        markClosed(
          `the SSE event stream closed (${error.message.replace(/^SSE error: /, "") || "disconnected"})`,
        );
        return;
      }
      const m = /ReadBuffer exceeded maximum size of (\d+) bytes/.exec(error.message);
      if (m)
        overflow = `a message from the server exceeded the ${Math.round(Number(m[1]) / (1024 * 1024))} MB read limit, so lash closed the connection`;
    };
    client.onclose = () => {
      markClosed(
        overflow ??
          (config.type === "stdio" ? "the server process exited" : "the connection to the server was closed"),
      );
    };
    const closeQuietly = Effect.promise(() => client.close().catch(() => undefined));
    return yield* Effect.tryPromise({
      try: async (signal) => {
        await client.connect(transport, { signal, timeout: options.requestTimeoutMs });
        const skipped: McpSkippedTool[] = [];
        const tools = await listAllTools(client, {
          signal,
          timeoutMs: options.requestTimeoutMs,
          onSkipped: (t) => skipped.push(t),
        });
        connected = true;
        const version = client.getServerVersion();
        const pid = transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
        const connection: Connection = {
          client,
          transport,
          closed,
          stderrTail,
          ...(pid === undefined ? {} : { pid }),
          ...(version ? { serverInfo: { name: version.name, version: version.version } } : {}),
        };
        return { connection, tools, skipped };
      },
      catch: (error) => {
        const tail = stderrTail();
        const base = describeConnectError(config, error);
        return new ConnectError(tail && !base.includes(tail) ? `${base} (stderr: ${tail})` : base);
      },
    }).pipe(Effect.onError(() => closeQuietly));
  });

function describeConnectError(config: McpServerConfig, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ENOENT" && config.type === "stdio")
    return `cannot start "${config.command}": command not found (check "command" and PATH)`;
  if (code === -32001) return `no answer to initialize/tools/list in time (${message})`;
  if (code === -32000) return "the server closed the connection during startup";
  if (
    config.type !== "stdio" &&
    /fetch failed|ECONNREFUSED/i.test(`${message} ${String((error as { cause?: unknown })?.cause)}`)
  )
    return `cannot reach ${config.url} (${message})`;
  return message;
}
