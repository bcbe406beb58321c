import { Data, Effect, Either, ParseResult, Schema } from "effect";

/**
 * The MCP server config format Claude Desktop, Cursor and Claude Code share:
 *
 * ```json
 * { "mcpServers": {
 *     "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
 *                 "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "…" } },
 *     "docs":   { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer …" } } } }
 * ```
 *
 * `type` (`stdio` | `http` | `sse`) is inferred from `command` / `url` when absent. The spellings
 * other clients write are accepted too: `"streamable-http"` / `"streamableHttp"` mean `"http"`
 * (streamable HTTP), and `serverUrl` (Windsurf) is the same as `url`. lash adds
 * `timeoutMs` (per-call timeout), `startupTimeoutMs`, `trusted` (believe the tools' annotations for their
 * effects; default false: every tool counts as a write) and `enabled` (default true; Cline's `disabled: true` is honoured
 * too). Keys this format does not know (`autoApprove`, `alwaysAllow`, …) are ignored, so a file
 * copied from another client works unchanged.
 */

const leaf = <A, I>(schema: Schema.Schema<A, I>, message: string): Schema.Schema<A, I> =>
  schema.annotations({ message: () => ({ message, override: true }) });

const StringArray = leaf(Schema.Array(Schema.String), "expected an array of strings");
const StringRecord = leaf(
  Schema.Record({ key: Schema.String, value: Schema.String }),
  "expected an object whose values are strings",
);
const NonEmptyString = leaf(Schema.String.pipe(Schema.minLength(1)), "expected a non-empty string");
/** The transport spellings accepted in `type`, and what each means. */
export const TRANSPORT_SPELLINGS = {
  stdio: "stdio",
  http: "http",
  "streamable-http": "http",
  streamableHttp: "http",
  sse: "sse",
} as const;
const Transport = leaf(
  Schema.Literal("stdio", "http", "streamable-http", "streamableHttp", "sse"),
  'expected "stdio", "http" (streamable HTTP; "streamable-http" and "streamableHttp" mean the same) or "sse" (legacy HTTP+SSE)',
);
const PositiveMs = leaf(
  Schema.Number.pipe(Schema.int(), Schema.positive()),
  "expected a positive whole number of milliseconds",
);
const Bool = leaf(Schema.Boolean, "expected true or false");

const opt = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { exact: true });

/** One server entry as written in the file. */
export const McpServerEntry = Schema.Struct({
  type: opt(Transport),
  command: opt(NonEmptyString),
  args: opt(StringArray),
  env: opt(StringRecord),
  cwd: opt(NonEmptyString),
  url: opt(NonEmptyString),
  /** Windsurf's name for `url`. */
  serverUrl: opt(NonEmptyString),
  headers: opt(StringRecord),
  timeoutMs: opt(PositiveMs),
  startupTimeoutMs: opt(PositiveMs),
  enabled: opt(Bool),
  disabled: opt(Bool),
  /** lash: believe the server's tool annotations (`readOnlyHint`, `openWorldHint`) for the tools' effects. */
  trusted: opt(Bool),
}).annotations({
  message: () => 'expected a server object: { "command", "args", "env", "cwd" } or { "url", "headers" }',
});
export type McpServerEntry = typeof McpServerEntry.Type;

/** The whole file (`mcpServers` map). */
export const McpConfigFile = Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: McpServerEntry }).annotations({
    message: () => "expected an object mapping server names to server configs",
  }),
}).annotations({ message: () => 'expected an object with an "mcpServers" key' });
export type McpConfigFile = typeof McpConfigFile.Type;

interface ServerCommon {
  readonly name: string;
  /** Per-call timeout (lash). */
  readonly timeoutMs?: number;
  /** Budget for start + `initialize` + first `tools/list` (lash; default: the manager's). */
  readonly startupTimeoutMs?: number;
  /** `false` keeps the server configured but never starts it (status `disabled`). */
  readonly enabled: boolean;
  /**
   * `true`: the tools' effects come from their annotations (`readOnlyHint`, `openWorldHint`);
   * otherwise (the default) every tool of the server counts as `write` whatever it claims.
   */
  readonly trusted?: boolean;
}

export interface McpStdioServer extends ServerCommon {
  readonly type: "stdio";
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: { readonly [key: string]: string };
  readonly cwd?: string;
}

export interface McpRemoteServer extends ServerCommon {
  readonly type: "http" | "sse";
  readonly url: string;
  readonly headers?: { readonly [key: string]: string };
}

/** A normalized server config: transport decided, defaults applied. */
export type McpServerConfig = McpStdioServer | McpRemoteServer;

/** A normalized config: servers in file order. */
export interface McpConfig {
  readonly servers: readonly McpServerConfig[];
}

export interface McpConfigIssue {
  /** JSON path, e.g. `mcpServers.github.args`. */
  readonly path: string;
  readonly message: string;
}

export class McpConfigError extends Data.TaggedError("McpConfigError")<{
  readonly issues: readonly McpConfigIssue[];
  readonly message: string;
}> {
  static of(issues: readonly McpConfigIssue[]): McpConfigError {
    const lines = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
    return new McpConfigError({
      issues,
      message: `invalid MCP config:\n  ${lines.join("\n  ")}`,
    });
  }
}

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");

function normalizeEntry(
  name: string,
  entry: McpServerEntry,
  issues: McpConfigIssue[],
): McpServerConfig | undefined {
  const at = `mcpServers.${name}`;
  if (entry.url !== undefined && entry.serverUrl !== undefined && entry.url !== entry.serverUrl) {
    issues.push({
      path: at,
      message: 'has both "url" and "serverUrl" (the same setting) with different values; keep one',
    });
    return undefined;
  }
  const { serverUrl, type: spelled, ...rest } = entry;
  const url = entry.url ?? serverUrl;
  const e = {
    ...rest,
    ...(url === undefined ? {} : { url }),
    ...(spelled === undefined ? {} : { type: TRANSPORT_SPELLINGS[spelled] }),
  };
  const enabled = e.enabled ?? (e.disabled === undefined ? true : !e.disabled);
  const common = {
    name,
    enabled,
    ...(e.trusted === true ? { trusted: true } : {}),
    ...(e.timeoutMs === undefined ? {} : { timeoutMs: e.timeoutMs }),
    ...(e.startupTimeoutMs === undefined ? {} : { startupTimeoutMs: e.startupTimeoutMs }),
  };
  if (e.command !== undefined && e.url !== undefined) {
    issues.push({
      path: at,
      message: 'has both "command" and "url"; keep one (command = stdio, url = http/sse)',
    });
    return undefined;
  }
  const type = e.type ?? (e.command !== undefined ? "stdio" : e.url !== undefined ? "http" : undefined);
  if (type === undefined) {
    issues.push({
      path: at,
      message: 'expected "command" (a local stdio server) or "url" (a remote http/sse server)',
    });
    return undefined;
  }
  if (type === "stdio") {
    if (e.command === undefined) {
      issues.push({ path: `${at}.command`, message: 'expected a command to run (type "stdio")' });
      return undefined;
    }
    if (e.headers !== undefined)
      issues.push({ path: `${at}.headers`, message: 'headers apply to "url" servers only' });
    return {
      ...common,
      type,
      command: e.command,
      args: e.args ?? [],
      ...(e.env === undefined ? {} : { env: e.env }),
      ...(e.cwd === undefined ? {} : { cwd: e.cwd }),
    };
  }
  if (e.url === undefined) {
    issues.push({ path: `${at}.url`, message: `expected a URL (type "${type}")` });
    return undefined;
  }
  // ${VAR} placeholders are expanded when the server starts; check the rest of the URL now.
  if (!/\$\{/.test(e.url)) {
    try {
      const u = new URL(e.url);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("scheme");
    } catch {
      issues.push({
        path: `${at}.url`,
        message: `expected an http:// or https:// URL, got ${JSON.stringify(e.url)}`,
      });
      return undefined;
    }
  }
  for (const key of ["args", "env", "cwd"] as const)
    if (e[key] !== undefined)
      issues.push({ path: `${at}.${key}`, message: `"${key}" applies to "command" servers only` });
  return { ...common, type, url: e.url, ...(e.headers === undefined ? {} : { headers: e.headers }) };
}

/** Decode and normalize a config value (already parsed JSON, or JSON text). */
export const decodeMcpConfig = (input: unknown): Effect.Effect<McpConfig, McpConfigError> =>
  Effect.suspend(() => {
    let value = input;
    if (typeof input === "string") {
      try {
        value = JSON.parse(input);
      } catch (error) {
        return Effect.fail(
          McpConfigError.of([
            {
              path: "",
              message: `not valid JSON (${error instanceof Error ? error.message : String(error)})`,
            },
          ]),
        );
      }
    }
    const decoded = Schema.decodeUnknownEither(McpConfigFile)(value, { errors: "all" });
    if (Either.isLeft(decoded)) {
      const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map(
        (i): McpConfigIssue => ({
          path: pathText(i.path),
          message:
            i._tag === "Missing"
              ? i.path.length === 1
                ? 'is required: { "mcpServers": { "<name>": { "command": … } } }'
                : "is required"
              : i.message,
        }),
      );
      return Effect.fail(McpConfigError.of(issues));
    }
    const issues: McpConfigIssue[] = [];
    const servers: McpServerConfig[] = [];
    for (const [name, entry] of Object.entries(decoded.right.mcpServers)) {
      if (name.trim() === "") {
        issues.push({ path: "mcpServers", message: "server names must not be empty" });
        continue;
      }
      const server = normalizeEntry(name, entry, issues);
      if (server) servers.push(server);
    }
    return issues.length > 0 ? Effect.fail(McpConfigError.of(issues)) : Effect.succeed({ servers });
  });

/**
 * Parse a config (JSON text or a parsed value). Throws `McpConfigError` whose message lists every
 * problem as `json.path: what was expected`.
 */
export function parseMcpConfig(input: unknown): McpConfig {
  const result = Effect.runSync(Effect.either(decodeMcpConfig(input)));
  if (Either.isLeft(result)) throw result.left;
  return result.right;
}

/**
 * `${VAR}` and `${VAR:-default}` in command, args, env, cwd, url and headers (as Claude Code
 * expands them), resolved when the server starts. Fails naming the missing variable.
 */
export function expandServerEnv(
  server: McpServerConfig,
  env: { readonly [key: string]: string | undefined },
): Either.Either<McpServerConfig, string> {
  const missing: string[] = [];
  const expand = (s: string): string =>
    s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
      const v = env[name];
      if (v !== undefined && v !== "") return v;
      if (fallback !== undefined) return fallback;
      missing.push(name);
      return "";
    });
  const expandRecord = (r: { readonly [k: string]: string } | undefined) =>
    r === undefined ? undefined : Object.fromEntries(Object.entries(r).map(([k, v]) => [k, expand(v)]));
  let out: McpServerConfig;
  if (server.type === "stdio") {
    const command = expand(server.command);
    const args = server.args.map(expand);
    const env2 = expandRecord(server.env);
    out = {
      ...server,
      command,
      args,
      ...(env2 === undefined ? {} : { env: env2 }),
      ...(server.cwd === undefined ? {} : { cwd: expand(server.cwd) }),
    };
  } else {
    const headers = expandRecord(server.headers);
    out = { ...server, url: expand(server.url), ...(headers === undefined ? {} : { headers }) };
  }
  if (missing.length > 0) {
    const names = [...new Set(missing)];
    return Either.left(
      `environment variable${names.length > 1 ? "s" : ""} ${names.join(", ")} not set (the config refers to ${names
        .map((n) => `\${${n}}`)
        .join(", ")}; set ${names.length > 1 ? "them" : "it"}, or write \${NAME:-default})`,
    );
  }
  return Either.right(out);
}
