// `$LASH_HOME/config.json` and `<cwd>/.lash/config.json`, validated with a Schema.
// API keys never live here: they come from the environment.
import { existsSync, readFileSync } from "node:fs";
import { type NamedLayer, PolicyLayer, unknownKeyMessage } from "@lash/policy";
import { Either, ParseResult, Schema } from "effect";
import { CliError, ExitCode } from "./errors.ts";

/** Leaf schemas say what they expected (override: true); containers only when no inner issue is more precise. */
const described = <A, I>(
  schema: Schema.Schema<A, I>,
  expected: string,
  override = true,
): Schema.Schema<A, I> =>
  schema.annotations({
    message: (issue) => ({
      message: `expected ${expected}, got ${show((issue as { actual?: unknown }).actual)}`,
      override,
    }),
  });

function show(v: unknown): string {
  if (v === undefined) return "nothing";
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

const Str = described(Schema.String, "a string");
const StrMap = described(Schema.Record({ key: Schema.String, value: Str }), "an object of strings", false);
const StrList = described(Schema.Array(Str), "an array of strings", false);
const PosInt = described(Schema.Int.pipe(Schema.positive()), "a positive integer");
const Bool = described(Schema.Boolean, "true or false");

const opt = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true });

/**
 * One MCP server in the format Claude Desktop, Cursor and Claude Code share:
 * `{ command, args, env, cwd }` (stdio) or `{ url, headers }` (HTTP / SSE),
 * plus an optional `type` and lash's own `timeoutMs`, `startupTimeoutMs` and `enabled`.
 * Other clients' spellings work too: `type` `"streamable-http"` / `"streamableHttp"` (= `"http"`),
 * `serverUrl` (= `url`); @lash/plugin-mcp maps them.
 */
export const McpServerConfig = Schema.Struct({
  type: opt(
    described(
      Schema.Literal("stdio", "http", "streamable-http", "streamableHttp", "sse"),
      '"stdio", "http" (streamable HTTP; "streamable-http" and "streamableHttp" mean the same) or "sse" (legacy HTTP+SSE)',
    ),
  ),
  command: opt(Str),
  args: opt(StrList),
  env: opt(StrMap),
  cwd: opt(Str),
  url: opt(Str),
  /** Windsurf's name for `url`. */
  serverUrl: opt(Str),
  headers: opt(StrMap),
  timeoutMs: opt(PosInt),
  /** Budget for starting the server (spawn/connect, initialize, first tools/list). */
  startupTimeoutMs: opt(PosInt),
  enabled: opt(Bool),
  /** Believe the server's tool annotations (readOnlyHint, openWorldHint) for the tools' effects; default false (every tool is a write). */
  trusted: opt(Bool),
  // accepted so a block copied from Cline / Claude Desktop / Cursor works unchanged
  disabled: opt(Bool),
  autoApprove: opt(Schema.Unknown),
  alwaysAllow: opt(Schema.Unknown),
  description: opt(Schema.Unknown),
}).pipe(
  Schema.filter(
    (s) =>
      (s.command === undefined) !== (s.url === undefined && s.serverUrl === undefined) ||
      'needs either "command" (a stdio server) or "url" (an HTTP or SSE server; "serverUrl" is accepted as its other name), not both',
  ),
);
export type McpServerConfig = typeof McpServerConfig.Type;

const ProviderSettings = Schema.Struct({
  /** Base URL of this provider's API (e.g. a proxy, or a local OpenAI-compatible server). */
  baseUrl: opt(Str),
});

/** Client-side rate limits of one provider key (per minute); without them the limits are learned from the server's headers. */
const RateLimitSettings = Schema.Struct({
  /** Requests per minute. */
  rpm: opt(PosInt),
  /** Tokens per minute (input estimated before the call, corrected by the reported usage). */
  tpm: opt(PosInt),
});

const RateLimitsConfig = Schema.Struct({
  anthropic: opt(RateLimitSettings),
  openai: opt(RateLimitSettings),
  "openai-compatible": opt(RateLimitSettings),
  google: opt(RateLimitSettings),
  codex: opt(RateLimitSettings),
  bedrock: opt(RateLimitSettings),
  "vertex-anthropic": opt(RateLimitSettings),
});

const ProvidersConfig = Schema.Struct({
  anthropic: opt(ProviderSettings),
  openai: opt(ProviderSettings),
  "openai-compatible": opt(ProviderSettings),
  google: opt(ProviderSettings),
  codex: opt(ProviderSettings),
  bedrock: opt(ProviderSettings),
  "vertex-anthropic": opt(ProviderSettings),
});

/** One secret of `redaction.keys`: the message never shows the value. */
const SecretValue = Schema.String.pipe(Schema.minLength(8)).annotations({
  message: () => ({
    message:
      "expected a secret of at least 8 characters (shorter values are never redacted: they would replace ordinary words)",
    override: true,
  }),
});

const RedactionConfig = Schema.Struct({
  /** Secret values replaced by `[REDACTED:redaction.keys]` in everything a tool returns. */
  keys: opt(described(Schema.Array(SecretValue), "an array of strings", false)),
  /** Environment variables that hold secrets: kept from tools and MCP servers, their values redacted. */
  env: opt(StrList),
});

const ShellConfig = Schema.Struct({
  /** Variables the shell tool receives although they look like credentials (user config only). */
  passEnv: opt(StrList),
  /**
   * Bytes of a command's output the shell tool keeps (the last ones; default 30000).
   * What the model sees is then cut by the output budget, which keeps the whole as an artifact.
   */
  maxOutputBytes: opt(PosInt),
});

const FilesConfig = Schema.Struct({
  /** Let the file tools open files with more than one name (hard links); default false. */
  allowHardLinks: opt(Bool),
});

/** OpenTelemetry export (OTLP/HTTP); the standard `OTEL_*` variables win over these keys. */
const OtlpConfig = Schema.Struct({
  /** Collector base URL (`http://localhost:4318`; `/v1/traces` is appended) or the full `…/v1/traces` URL. */
  endpoint: opt(Str),
  /** Sent with every export (e.g. an API key of a hosted collector; redacted, never printed). */
  headers: opt(StrMap),
  /** `service.name` of the exported resource (default `lash`). */
  serviceName: opt(Str),
});

/** Skills (SKILL.md directories) besides the default roots. */
const SkillsConfig = Schema.Struct({
  /** More skill roots (directories of skill directories), relative to the workspace; searched after .lash/.agents/.claude skills, before $LASH_HOME/skills. */
  roots: opt(StrList),
});

const TraceConfig = Schema.Struct({
  /** Trace every turn to this JSONL file (as `--trace`; the flag wins). */
  file: opt(Str),
  /** Applies whenever tracing is on, from `--trace` or `file`. */
  level: opt(described(Schema.Literal("standard", "extended"), '"standard" or "extended"')),
  otlp: opt(OtlpConfig),
});

/** A principal of `lash serve` (a name its tokens map to): what its sessions may do. */
const ServePrincipal = Schema.Struct({
  /** A policy layer added to every session this principal creates (it can only narrow). */
  policy: opt(PolicyLayer),
});

const Fraction = described(
  Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1)),
  "a number above 0 and at most 1",
);

/** Context compaction (`compaction`): when a session's history is summarised, and by which model. */
const CompactionConfig = Schema.Struct({
  /** Compact when the next request reaches this share of the context window (default 0.8). */
  threshold: opt(Fraction),
  /** Compact automatically at the threshold (default true). */
  auto: opt(Bool),
  /** The summariser model (`provider/model`; default the session's model). */
  model: opt(Str),
  /** "summary" (default): a summary node in the session; "handoff": a successor session opened by the summary (standard mode). */
  strategy: opt(described(Schema.Literal("summary", "handoff"), '"summary" or "handoff"')),
});

/** `lash serve --engine restate`: where Restate is (flags win). */
const ServeRestateConfig = Schema.Struct({
  /** Restate's ingress URL (`--restate-ingress`). */
  ingress: opt(Str),
  /** Restate's admin API URL (`--restate-admin`): the deployment is registered there. */
  admin: opt(Str),
  /** The port of the daemon's worker endpoint (`--restate-worker-port`, default 9080). */
  workerPort: opt(described(Schema.Int.pipe(Schema.between(0, 65535)), "a port (0 … 65535)")),
  /** The URL Restate reaches the workers at, e.g. a load balancer (`--restate-deployment`). */
  deployment: opt(Str),
});

const ServeConfig = Schema.Struct({
  /** Where runs execute (`--engine`): "local" (default) or "restate". */
  engine: opt(described(Schema.Literal("local", "restate"), '"local" or "restate"')),
  restate: opt(ServeRestateConfig),
  /** Per principal (`lash serve token create --principal <name>`): `{ "alice": { "policy": { … } } }`. */
  principals: opt(
    described(
      Schema.Record({ key: Schema.String, value: ServePrincipal }),
      'an object of principals ({ "alice": { "policy": { "deny": ["shell"] } } })',
      false,
    ),
  ),
});

export const LashConfig = Schema.Struct({
  $schema: opt(Str),
  /** `provider/model` */
  model: opt(Str),
  mode: opt(described(Schema.Literal("standard", "rlm"), '"standard" or "rlm"')),
  maxTurns: opt(PosInt),
  /** The model's context window in tokens, overriding the catalog (local models); `--context-window` wins. */
  contextWindow: opt(PosInt),
  compaction: opt(CompactionConfig),
  systemPrompt: opt(Str),
  appendSystemPrompt: opt(Str),
  /** Allowed tool names; all when absent. */
  tools: opt(StrList),
  providers: opt(ProvidersConfig),
  mcpServers: opt(
    described(
      Schema.Record({ key: Schema.String, value: McpServerConfig }),
      'an object of servers ({ "name": { "command": … } })',
      false,
    ),
  ),
  trace: opt(TraceConfig),
  skills: opt(SkillsConfig),
  /** Add AGENTS.md / CLAUDE.md to the system prompt (default true; `--no-project-instructions` turns it off). */
  projectInstructions: opt(Bool),
  /** What is redacted from tool output besides the keys lash holds. */
  redaction: opt(RedactionConfig),
  shell: opt(ShellConfig),
  files: opt(FilesConfig),
  /** A model request with no data for this long fails its attempt (then retried); default 120000. */
  requestTimeoutMs: opt(PosInt),
  /** Total time of one model call, every attempt and wait included; default 600000. */
  requestDeadlineMs: opt(PosInt),
  /** Client-side rate limits per provider (`{ "openai": { "rpm": 500, "tpm": 200000 } }`), shared by every session of the process. */
  rateLimits: opt(RateLimitsConfig),
  /** The tool policy layer (@lash/policy format): profile, allow/deny, approval, denyPatterns, limits, redaction keys … */
  policy: opt(PolicyLayer),
  /** `lash serve`: per-principal settings (`principals.<name>.policy`). */
  serve: opt(ServeConfig),
  /** Where sessions live: `postgres://user:password@host:5432/db` (shared by several workers) or "sqlite" (the default); `--store` wins. */
  store: opt(Str),
});
export type LashConfig = typeof LashConfig.Type;

/** Where each part of the effective config came from. */
export interface LoadedConfig {
  readonly config: LashConfig;
  readonly files: readonly string[];
}

const SECRET_KEY = /key|token|secret|password|passwd|auth|credential|cookie/i;

/** Validate one parsed config object; the error names the file, the path and the expected value. */
export function validateConfig(value: unknown, file: string): LashConfig {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return throwConfig(
      `invalid config in ${file}: expected a JSON object ({ "model": … }), got ${Array.isArray(value) ? "an array" : show(value)}`,
    );
  const result = Schema.decodeUnknownEither(LashConfig, { onExcessProperty: "error", errors: "all" })(value);
  if (Either.isRight(result)) return result.right;
  const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left);
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const issue of issues) {
    const path = issue.path.map(String).join(".") || "(top level)";
    let message = issue.message;
    if (issue._tag === "Unexpected") {
      const last = String(issue.path.at(-1) ?? "");
      const allowed = message.replace(/^is unexpected, expected: /, "").replaceAll(" | ", ", ");
      // a key inside a policy layer (config's own, or a principal's) is the policy's business
      const inPolicy =
        issue.path[0] === "policy" || (issue.path[0] === "serve" && issue.path[3] === "policy");
      message =
        SECRET_KEY.test(last) && issue.path[0] === "serve" && !inPolicy
          ? `unknown key "${last}": bearer tokens are never in config — create them with \`lash serve token create --principal <name>\` (only their hash is stored, in the daemon's state file) (known keys: ${allowed})`
          : SECRET_KEY.test(last) && !inPolicy
            ? `unknown key "${last}": API keys and secrets are read from the environment, never from config (known keys: ${allowed})`
            : unknownKeyMessage(last, message);
    } else if (issue._tag === "Missing") {
      message = "is required";
    }
    const line = `  ${path}: ${message}`;
    if (!seen.has(line)) {
      seen.add(line);
      lines.push(line);
    }
  }
  return throwConfig(`invalid config in ${file}:\n${lines.join("\n")}`);
}

function throwConfig(message: string): never {
  throw new CliError(message, ExitCode.usage);
}

function readConfigFile(file: string): LashConfig | undefined {
  if (!existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    return throwConfig(`cannot read config ${file}: ${(e as Error).message}`);
  }
  // editors on Windows save UTF-8 with a byte-order mark; JSON.parse rejects it (invisibly)
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return throwConfig(`invalid JSON in ${file}: ${(e as Error).message}`);
  }
  return validateConfig(parsed, file);
}

/** Project config overrides the user's: objects (providers, mcpServers, trace) merge by key. */
export function mergeConfig(base: LashConfig, over: LashConfig): LashConfig {
  const out: Record<string, unknown> = { ...base, ...over };
  if (base.providers || over.providers) {
    const providers: Record<string, unknown> = { ...base.providers };
    for (const [k, v] of Object.entries(over.providers ?? {}))
      providers[k] = { ...(providers[k] as object | undefined), ...v };
    out.providers = providers;
  }
  if (base.mcpServers || over.mcpServers) out.mcpServers = { ...base.mcpServers, ...over.mcpServers };
  if (base.shell || over.shell) out.shell = { ...base.shell, ...over.shell };
  if (base.trace || over.trace) out.trace = { ...base.trace, ...over.trace };
  // a project's config adds secrets to redact, it never removes the user's
  if (base.redaction || over.redaction) {
    const union = (a?: readonly string[], b?: readonly string[]) =>
      a || b ? [...new Set([...(a ?? []), ...(b ?? [])])] : undefined;
    const keys = union(base.redaction?.keys, over.redaction?.keys);
    const env = union(base.redaction?.env, over.redaction?.env);
    out.redaction = { ...(keys ? { keys } : {}), ...(env ? { env } : {}) };
  }
  return out as LashConfig;
}

/** The `policy` layers of each config file, by the merged config they belong to (see `policyLayersOf`). */
const policyLayers = new WeakMap<LashConfig, readonly NamedLayer[]>();

/**
 * The policy layers of a config: `global` (user config) then `project` (the project's
 * `.lash/config.json`), as `loadConfig` read them — layers are combined by @lash/policy
 * (allow intersected, deny united, approval strictest), never merged key by key.
 * A config built another way gives its own `policy` as the one layer `config`.
 */
export function policyLayersOf(config: LashConfig): readonly NamedLayer[] {
  return policyLayers.get(config) ?? (config.policy ? [{ name: "config", layer: config.policy }] : []);
}

export function loadConfig(userFile: string, projectFile?: string): LoadedConfig {
  const files: string[] = [];
  const layers: NamedLayer[] = [];
  let config: LashConfig = {};
  for (const file of [userFile, projectFile]) {
    if (file === undefined) continue;
    const c = readConfigFile(file);
    if (c === undefined) continue;
    if (file === projectFile && c.shell?.passEnv !== undefined)
      throwConfig(
        `invalid config in ${file}:\n  shell.passEnv: only allowed in your user config (${userFile}): a project's config cannot hand your credentials to commands`,
      );
    files.push(file);
    if (c.policy) layers.push({ name: file === projectFile ? "project" : "global", layer: c.policy });
    config = mergeConfig(config, c);
  }
  policyLayers.set(config, layers);
  return { config, files };
}

const REDACTED = "<redacted>";

/** The config with values that look like secrets (env and headers of MCP servers, OTLP headers) replaced. */
export function redactConfig(config: LashConfig): LashConfig {
  const otlpHeaders = config.trace?.otlp?.headers;
  if (otlpHeaders && config.trace?.otlp)
    config = {
      ...config,
      trace: {
        ...config.trace,
        otlp: {
          ...config.trace.otlp,
          headers: Object.fromEntries(Object.keys(otlpHeaders).map((k) => [k, REDACTED])),
        },
      },
    };
  if (config.redaction?.keys)
    config = {
      ...config,
      redaction: { ...config.redaction, keys: config.redaction.keys.map(() => REDACTED) },
    };
  if (!config.mcpServers) return config;
  const redactMap = (m: { readonly [k: string]: string } | undefined, all: boolean) =>
    m === undefined
      ? undefined
      : Object.fromEntries(Object.entries(m).map(([k, v]) => [k, all || SECRET_KEY.test(k) ? REDACTED : v]));
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, s] of Object.entries(config.mcpServers)) {
    const env = redactMap(s.env, false);
    const headers = redactMap(s.headers, false);
    servers[name] = { ...s, ...(env ? { env } : {}), ...(headers ? { headers } : {}) };
  }
  return { ...config, mcpServers: servers };
}
