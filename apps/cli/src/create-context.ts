// Builds the CliContext: store, providers, catalog and plugins behind one ManagedRuntime.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  defaultSkillRoots,
  discoverSkills,
  projectFileSkillRoots,
  projectInstructions,
  skillsPlugin,
} from "@lash/agents";
import {
  type ApproverShape,
  envSecrets,
  IdGenerator,
  isSecretEnvName,
  LashRuntime,
  LlmProviders,
  looksLikeKey,
  MemoryStore,
  ModelCatalog,
  makeRedactor,
  outputBudgetPlugin,
  type Plugin,
  type Redactor,
  type RedactorOptions,
  type RuntimeOptions,
  type SecretValue,
  SessionStore,
  SqliteStore,
  scrubEnv,
  type TurnActivity,
  withRlm,
} from "@lash/core";
import { validateJson } from "@lash/core/internal";
import { dryRunPlugin, type NamedLayer, riskAssessor } from "@lash/policy";
import {
  authFileSecrets,
  createProvider,
  ModelCatalog as ProviderCatalog,
  type ProviderHandle,
  unknownModelInfo,
} from "@lash/providers";
import { providerEnv } from "@lash/providers/vendors";
import type { ModelInfo } from "@lash/sansio";
import { type AgentTool, subagentsPlugin } from "@lash/subagents";
import { TOOL_NAMES, toolsPlugin } from "@lash/tools";
import { Effect, Fiber, Layer, ManagedRuntime, Stream } from "effect";
import { approverFor, switchableApprover } from "./approvals.ts";
import type { ApprovalMode } from "./args.ts";
import { type LashConfig, policyLayersOf } from "./config.ts";
import type { CliContext, CliPaths, CliSettings } from "./context.ts";
import { CliError, damageHint, ExitCode, errorMessage, taggedFailure } from "./errors.ts";
import { gitBranch } from "./git.ts";
import { VERSION } from "./help.ts";
import { enabledMcpServers, type McpRuntime, startMcp } from "./mcp.ts";
import { recordSessionEndpoint, sessionEndpoint } from "./paths.ts";
import { cliGovernance } from "./policy.ts";
import {
  baseUrlFor,
  configuredVendors,
  noProviderMessage,
  VENDOR_ENV,
  type Vendor,
  vendorOf,
} from "./providers.ts";
import { shellSandbox } from "./sandbox.ts";
import { checkStoreSetting, redactStoreUrl } from "./store-select.ts";

export interface ContextOptions {
  readonly settings: CliSettings;
  readonly paths: CliPaths;
  readonly config: LashConfig;
  /** Where keys and base URLs come from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** `--base-url`: applies to the vendor of `settings.model`. */
  readonly baseUrl?: string;
  /** False (`--no-session`): an in-memory store, nothing is written. */
  readonly persist?: boolean;
  /** Fail at once when the chosen model has no provider (default true; `lash sessions` passes false). */
  readonly checkProvider?: boolean;
  /** Start MCP servers and the trace recorder (default true; commands that only read sessions pass false). */
  readonly live?: boolean;
  /** `--request-timeout` in ms (overrides config `requestTimeoutMs`). */
  readonly requestTimeoutMs?: number;
  /** `--request-deadline` in ms (overrides config `requestDeadlineMs`). */
  readonly requestDeadlineMs?: number;
  /** `--trace <file>` (overrides config `trace.file`). */
  readonly traceFile?: string;
  /** `--trace-level` (overrides config `trace.level`; needs a trace file from either). */
  readonly traceLevel?: "standard" | "extended";
  /** `lash run`: agents callable as tools (subagent agent tools). */
  readonly agentTools?: readonly AgentTool[];
  /** `lash run`: plugins of the sessions `newSession` creates (the typed output). */
  readonly sessionPlugins?: readonly Plugin[];
  /** Skill names the sessions may see and load (`lash run`: the agent spec's `skills`); absent: all. */
  readonly skillsOnly?: readonly string[];
  /** The skills catalog is already in the system prompt (`lash run`: the build appended it). */
  readonly skillsCatalogInPrompt?: boolean;
  /** Policy layers after the config's (`lash run`: the project file's and the agent's). */
  readonly policyLayers?: readonly NamedLayer[];
  /** `-p`: turn events reach the trace through `traceEvent`, not by observing sessions. */
  readonly print?: boolean;
  /**
   * A warning while running (an OpenTelemetry collector that cannot be reached, an ignored `OTEL_*`
   * setting). Default: `[lash] warning: …` on stderr — at once with `print`, else when the context closes.
   */
  readonly warn?: (message: string) => void;
  /** `--approval-mode` (default: `fail` with `print`, else `interactive`: the TUI attaches its prompt with `setApprover`). */
  readonly approvalMode?: ApprovalMode;
  /** `--dry-run` (or config `policy.writes: "stub"`): write and exec tools return their preview instead of running. */
  readonly dryRun?: boolean;
  /** `--rlm-var` / `--rlm-vars-file`: read-only values projected into every Lashlang cell. */
  readonly rlmBindings?: { readonly [name: string]: unknown };
  /** The RLM `triggers` ability (`cron.Schedule`, `triggers.register`): on in `lash serve`, which fires them. */
  readonly rlmTriggers?: boolean;
  /** `--store` (overrides config `store`): `postgres://…` or `sqlite` (the default file). */
  readonly store?: string;
}

interface TraceHandle {
  readonly record: (e: TurnActivity) => void;
  readonly close: () => Promise<void>;
}

/** The CliContext plus what the CLI shell itself uses (the store, for pending turns). */
export interface LocalContext extends CliContext {
  readonly rt: ManagedRuntime.ManagedRuntime<LashRuntime | SessionStore, unknown>;
  readonly persisted: boolean;
  /** Record this turn event in the trace (`--trace`); a no-op without one. */
  readonly traceEvent: (e: TurnActivity) => void;
  /** Trace every event of a session the TUI drives (observed from the runtime's activity hub). */
  readonly traceSession: (sessionId: string) => void;
  /** Wait (bounded) until every configured MCP server is ready or has failed; `-p` runs want their tools. */
  readonly settleMcp: (timeoutMs: number) => Promise<void>;
  /** A resumed session: use the base URL stored with it (unless --base-url is given), check its provider. */
  readonly adoptSession: (session: { readonly id: string; readonly model: string }, forkId?: string) => void;
  /** The `--approval-mode` in effect (`interactive` when none was given outside `-p`). */
  readonly approvalMode: ApprovalMode;
  /**
   * Who answers approvals from now on (the TUI's prompt). Ignored unless the mode is
   * `interactive`: an explicit `--approval-mode approve-all|reject-all|fail` keeps its approver.
   */
  readonly setApprover: (approver: ApproverShape) => void;
  /** Every policy layer a session's calls are decided under (config's, then the session's own). */
  readonly policyLayers: (sessionId: string) => readonly NamedLayer[];
  /** The options `rt`'s LashRuntime was built with (plugins, approver, governance …): a Restate worker's runtime (`lash serve --engine restate`) takes the same. */
  readonly runtimeOptions: RuntimeOptions;
}

/**
 * What lash treats as secret: the names of every provider key variable and of config
 * `redaction.env` (kept out of tool and MCP server environments), and the values to redact
 * from tool output — those variables' values, every environment value whose name or shape
 * looks like a credential, config `redaction.keys`, and the secret-looking `env` values and
 * headers of configured MCP servers (after `${VAR}` expansion).
 */
export function secretsOf(
  config: LashConfig,
  env: { readonly [name: string]: string | undefined },
  /** The effective policy's `redaction.keys` (every layer); default: the config's layers'. */
  policyKeys: readonly string[] = policyRedactionKeys(config),
): { readonly names: readonly string[]; readonly values: readonly SecretValue[] } {
  const names = [
    ...new Set([
      ...Object.values(providerEnv).flatMap((spec) => spec.keys),
      ...(config.redaction?.env ?? []),
      ...policyKeys,
      ...OTLP_HEADER_VARS,
    ]),
  ];
  const values: SecretValue[] = [...envSecrets(env, { secretNames: names })];
  for (const value of config.redaction?.keys ?? []) values.push({ name: "redaction.keys", value });
  const expand = (s: string) =>
    s.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_, n: string, d?: string) => env[n] || d || "",
    );
  const secretHeader = /authorization|api[-_]?key|token|secret|password|cookie/i;
  // OpenTelemetry collector headers (usually a key): every value is secret
  const otlpHeaders: [string, string][] = Object.entries(config.trace?.otlp?.headers ?? {}).map(([k, v]) => [
    `trace.otlp.headers.${k}`,
    v,
  ]);
  for (const name of OTLP_HEADER_VARS)
    for (const part of (env[name] ?? "").split(",")) {
      const eq = part.indexOf("=");
      if (eq <= 0) continue;
      let value = part.slice(eq + 1).trim();
      try {
        value = decodeURIComponent(value);
      } catch {}
      otlpHeaders.push([name, value]);
    }
  for (const [name, value] of otlpHeaders) {
    if (value.length < 4) continue;
    values.push({ name, value });
    const token = /^(?:Bearer|Basic|Token|Api-Key)\s+(\S+)$/i.exec(value)?.[1];
    if (token) values.push({ name, value: token });
  }
  for (const [server, s] of Object.entries(config.mcpServers ?? {})) {
    for (const [k, v] of Object.entries(s.env ?? {}))
      if (isSecretEnvName(k) || looksLikeKey(expand(v)))
        values.push({ name: `mcpServers.${server}.env.${k}`, value: expand(v) });
    for (const [k, v] of Object.entries(s.headers ?? {})) {
      if (!secretHeader.test(k)) continue;
      const value = expand(v);
      values.push({ name: `mcpServers.${server}.headers.${k}`, value });
      const token = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(value)?.[1];
      if (token) values.push({ name: `mcpServers.${server}.headers.${k}`, value: token });
    }
  }
  return { names, values };
}

/**
 * A redactor that also knows the token values in `authFile`, re-read whenever the file
 * changes (a refresh mid-run writes new tokens): every value ever seen there stays redacted.
 */
function authFileRedactor(
  base: readonly SecretValue[],
  authFile: string,
  options: RedactorOptions = {},
): Redactor {
  const seen = new Map<string, SecretValue>();
  let stamp: string | undefined;
  let current: Redactor = makeRedactor(base, options);
  const refresh = (): Redactor => {
    const st = statSync(authFile, { throwIfNoEntry: false });
    const now = st ? `${st.ino}:${st.mtimeMs}:${st.size}` : "";
    if (now !== stamp) {
      stamp = now;
      for (const v of authFileSecrets(authFile)) if (!seen.has(v.value)) seen.set(v.value, v);
      current = makeRedactor([...base, ...seen.values()], options);
    }
    return current;
  };
  return {
    get size() {
      return refresh().size;
    },
    text: (t) => refresh().text(t),
    deep: (v) => refresh().deep(v),
  };
}

/** Policy `redaction.keys` of every config layer (global and project). */
function policyRedactionKeys(config: LashConfig): readonly string[] {
  return [...new Set(policyLayersOf(config).flatMap((l) => l.layer.redaction?.keys ?? []))];
}

/** The OpenTelemetry variables that carry collector headers (kept out of tool environments, redacted). */
const OTLP_HEADER_VARS = ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"];

/** Default base URLs, for `server.address` / `server.port` of exported spans. */
const VENDOR_URLS: { readonly [vendor: string]: string } = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  google: "https://generativelanguage.googleapis.com",
};

/** Built-in tool names (the tools plugin plus `spawn_agent`), for `--tools` validation and `/info`. */
export const builtinTools: readonly string[] = [...TOOL_NAMES, "llm_query", "spawn_agent"];

/** Checks `--tools` / config `tools`: built-in names and `mcp__…` names are accepted. */
export function validateTools(tools: readonly string[] | undefined): void {
  if (!tools) return;
  const unknown = tools.filter((t) => !builtinTools.includes(t) && !t.startsWith("mcp__"));
  if (unknown.length)
    throw new CliError(
      `unknown tool name(s): ${unknown.join(", ")}; known: ${builtinTools.join(", ")} (MCP tools: mcp__<server>__<tool>)`,
      ExitCode.usage,
    );
}

/** Subagents get the project's AGENTS.md files only (no CLAUDE.md), unless project instructions are off. */
function childInstructionsOf(settings: CliSettings): { childInstructions?: string } {
  if (settings.projectInstructions !== true) return {};
  const text = projectInstructions(settings.cwd, { claude: false });
  return text !== undefined ? { childInstructions: text } : {};
}

export async function createCliContext(options: ContextOptions): Promise<LocalContext> {
  const env = options.env ?? process.env;
  const { paths, config } = options;
  const catalog = ProviderCatalog.default();
  const flagVendor = vendorOf(options.settings.model);
  const providerCache = new Map<string, ProviderHandle>();
  /** The base URL stored with a resumed session (used when no --base-url is given). */
  let storedEndpoint: { vendor: Vendor | undefined; url: string } | undefined;

  /** Throws CliError (exit 2) with the one no-provider message. */
  const providerFor = (model: string): ProviderHandle => {
    const cached = providerCache.get(model);
    if (cached) return cached;
    const vendor = vendorOf(model);
    let handle: ProviderHandle;
    try {
      const baseUrl = baseUrlFor(
        vendor,
        storedEndpoint ?? { vendor: flagVendor, url: options.baseUrl },
        config,
      );
      const idleTimeoutMs = options.requestTimeoutMs ?? config.requestTimeoutMs;
      const deadlineMs = options.requestDeadlineMs ?? config.requestDeadlineMs;
      const limits = config.rateLimits?.[vendor as keyof NonNullable<LashConfig["rateLimits"]>];
      handle = createProvider(model, {
        env,
        catalog,
        authFile: join(paths.home, "auth.json"),
        validateOutput: validateJson,
        ...(limits ? { rateLimits: limits } : {}),
        ...(baseUrl ? { baseUrl } : {}),
        ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
        ...(deadlineMs !== undefined ? { deadlineMs } : {}),
      });
    } catch (e) {
      const tag = (e as { _tag?: string })._tag;
      if (tag === "ProviderConfigError" && /no API key|no base URL/.test(errorMessage(e)))
        throw new CliError(noProviderMessage(model, errorMessage(e)), ExitCode.usage);
      throw new CliError(`lash: ${errorMessage(e)}`, ExitCode.usage);
    }
    providerCache.set(model, handle);
    return handle;
  };

  const settings: CliSettings = { ...options.settings };
  // fail before anything opens when the chosen model has no provider
  if (options.checkProvider !== false) providerFor(settings.model);

  // warnings while running: at once in -p (stderr), after the TUI has left the screen otherwise
  const deferredWarnings: string[] = [];
  const warn =
    options.warn ??
    ((message: string) => {
      if (options.print === true) process.stderr.write(`[lash] warning: ${message}\n`);
      else deferredWarnings.push(message);
    });
  // the tool policy (config `policy`, user then project layer, then a run's project file and
  // agent layers); `approval: "risk"` asks when the risk evaluator (@lash/policy assessRisk)
  // rates a call at or above the threshold
  const gov = cliGovernance(config, {
    root: settings.cwd,
    assessRisk: riskAssessor(settings.cwd),
    ...(options.policyLayers ? { layers: options.policyLayers } : {}),
    report: warn,
    ...(options.dryRun === true ? { dryRun: true } : {}),
  });
  for (const w of gov.warnings) warn(w);
  // the scrubbed environment of tools and MCP servers, and the redaction of tool output;
  // policy redaction.keys of every layer (config, project file, agent)
  const secrets = secretsOf(config, env, gov.policy.redactionKeys);
  // the Codex sign-in's tokens too (they never leave the provider, but a tool could read auth.json)
  // policy redaction.keys: those variables' values (in `secrets`) and `KEY=value` / `"key": "value"` in output
  const redactor = authFileRedactor(secrets.values, join(paths.home, "auth.json"), {
    keys: gov.policy.redactionKeys,
  });
  const sandbox = shellSandbox(gov.policy, settings.cwd, paths.home, env);
  const plugins: Plugin[] = [];
  const toolsAllowed = settings.tools?.filter((t) => (TOOL_NAMES as readonly string[]).includes(t));
  plugins.push(
    toolsPlugin({
      root: settings.cwd,
      ...(settings.tools ? { tools: toolsAllowed ?? [] } : {}),
      shell: {
        secretEnvNames: secrets.names,
        passEnv: config.shell?.passEnv ?? [],
        ...(config.shell?.maxOutputBytes !== undefined
          ? { maxOutputBytes: config.shell.maxOutputBytes }
          : {}),
        // policy sandbox: bwrap by default on Linux (a missing bwrap fails each shell call with the fix)
        ...(sandbox ? { sandbox } : {}),
      },
      ...(config.files?.allowHardLinks !== undefined ? { allowHardLinks: config.files.allowHardLinks } : {}),
      // llm_query is opt-in: named in `--tools` / config `tools`
      ...(settings.tools?.includes("llm_query") ? { llmQuery: true } : {}),
      // policy workspace.denyPatterns: the file tools refuse them and glob/grep skip them too
      ...(gov.policy.denyPatterns.length > 0 ? { deny: gov.policy.denyPatterns.map((d) => d.pattern) } : {}),
    }),
    // policy limits: what the model sees of one tool result
    outputBudgetPlugin({
      // cut outputs kept whole as artifacts, read with read_artifact (when that tool is on)
      artifacts: settings.tools === undefined || (toolsAllowed ?? []).includes("read_artifact"),
      ...(gov.policy.limits.maxOutputBytes !== undefined
        ? { maxBytes: gov.policy.limits.maxOutputBytes }
        : {}),
      ...(gov.policy.limits.maxOutputLines !== undefined
        ? { maxLines: gov.policy.limits.maxOutputLines }
        : {}),
    }),
    // a session's stored policy layers: restored when it is reopened
    gov.plugin,
    subagentsPlugin({
      onChild: gov.onChild,
      childState: gov.childState,
      ...childInstructionsOf(settings),
      ...(options.agentTools !== undefined ? { agentTools: options.agentTools } : {}),
    }),
  );
  // skills: the catalog in the system prompt, load_skill / read_skill_file (none when no skill is found)
  if (options.live !== false) {
    const extra = [...(settings.skillRoots ?? []), ...projectFileSkillRoots(settings.cwd)];
    const skills = discoverSkills(defaultSkillRoots(settings.cwd, paths.home, extra)).skills;
    if (skills.length > 0)
      plugins.push(
        skillsPlugin({
          skills,
          ...(options.skillsOnly ? { only: options.skillsOnly } : {}),
          ...(options.skillsCatalogInPrompt ? { catalog: false } : {}),
        }),
      );
  }

  const live = options.live !== false;
  let mcp: McpRuntime | undefined;
  if (live && enabledMcpServers(config).length > 0) {
    mcp = await startMcp(config, env, secrets.names);
    plugins.push(mcp.plugin);
  }
  let trace: TraceHandle | undefined;
  const traceFile = options.traceFile ?? config.trace?.file;
  // OpenTelemetry: the standard OTEL_* variables, else config trace.otlp (the environment wins)
  const otlpWanted =
    live &&
    [
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
      env.OTEL_EXPORTER_OTLP_ENDPOINT,
      config.trace?.otlp?.endpoint,
    ].some((v) => v !== undefined && v.trim() !== "");
  if (options.traceLevel !== undefined && traceFile === undefined && !otlpWanted)
    throw new CliError(
      "lash: --trace-level needs a trace to apply to: add --trace <file.jsonl> (or set trace.file in the config, or an OTLP endpoint)",
      ExitCode.usage,
    );
  if (live && (traceFile !== undefined || otlpWanted)) {
    const t = await import("@lash/trace");
    const sinks: import("@lash/trace").TraceSink[] = [];
    if (traceFile !== undefined) sinks.push(t.jsonlSink(resolve(settings.cwd, traceFile)));
    if (otlpWanted) {
      const otlp = t.otlpOptionsFromEnv(env, config.trace?.otlp ?? {});
      for (const w of otlp.warnings) warn(w);
      if (otlp.options)
        sinks.push(
          t.otlpSink({
            ...otlp.options,
            serviceVersion: VERSION,
            endpointOf: (model) => {
              const vendor = vendorOf(model);
              if (vendor === undefined) return undefined;
              return (
                baseUrlFor(vendor, storedEndpoint ?? { vendor: flagVendor, url: options.baseUrl }, config) ??
                (env[VENDOR_ENV[vendor].baseUrl]?.trim() || undefined) ??
                VENDOR_URLS[vendor]
              );
            },
            onExportError: warn,
          }),
        );
    }
    if (sinks.length > 0) {
      const recorder = t.createTraceRecorder({
        sinks,
        level: options.traceLevel ?? config.trace?.level ?? "standard",
        redact: { env, secrets: secrets.values.map((s) => s.value) },
      });
      plugins.push(recorder.plugin() as Plugin);
      trace = { record: (e) => recorder.record(e), close: () => recorder.close() };
    }
  }

  let store: Layer.Layer<SessionStore, unknown>;
  const storeChoice =
    options.store !== undefined
      ? checkStoreSetting(options.store, "--store").choice
      : config.store !== undefined
        ? checkStoreSetting(config.store, "config store").choice
        : ({ kind: "sqlite" } as const);
  /** What the store is, as messages show it (no password). */
  const storeName = storeChoice.kind === "postgres" ? redactStoreUrl(storeChoice.url) : paths.db;
  if (options.persist === false) store = MemoryStore;
  else if (storeChoice.kind === "postgres") {
    // loaded only when chosen: the CLI's start-up does not pay for `pg`
    const { PostgresStore } = await import("@lash/store-postgres");
    store = PostgresStore.layer({ url: storeChoice.url });
  } else {
    try {
      mkdirSync(paths.home, { recursive: true });
    } catch (e) {
      throw new CliError(`lash: cannot create ${paths.home} (LASH_HOME): ${errorMessage(e)}`, ExitCode.usage);
    }
    store = SqliteStore.layer({ filename: paths.db });
  }

  // dry-run (--dry-run, config policy.writes "stub"): last, so it sees the arguments other hooks settled on
  const dryRun = options.dryRun === true || gov.policy.writes === "stub";
  if (dryRun) plugins.push(dryRunPlugin());

  const approvalMode: ApprovalMode = options.approvalMode ?? (options.print ? "fail" : "interactive");
  const approvals = switchableApprover(approverFor(approvalMode, options.print === true));

  // the RLM mode is always installed, so `--mode rlm` sessions can be created and resumed
  const runtimeOptions = withRlm(
    {
      plugins,
      approver: approvals.approver,
      governance: gov.governance,
      dispatch: { redactor },
      ...(settings.maxTurns !== undefined ? { maxTurns: settings.maxTurns } : {}),
      ...(settings.compaction ? { compaction: settings.compaction } : {}),
    },
    {
      ...(options.rlmBindings ? { bindings: options.rlmBindings } : {}),
      ...(options.rlmTriggers ? { triggers: true } : {}),
    },
  );
  const layer = LashRuntime.layer(runtimeOptions).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        store,
        LlmProviders.fromFunction(providerFor),
        IdGenerator.Live,
        Layer.succeed(ModelCatalog, { info: (m: string) => catalog.lookup(m) }),
      ),
    ),
  );
  const runtime = ManagedRuntime.make(layer);
  try {
    await runtime.runPromise(Effect.void);
  } catch (e) {
    await runtime.dispose().catch(() => undefined);
    await mcp?.close();
    const typed = taggedFailure(e);
    throw new CliError(
      `lash: cannot open ${storeName}: ${errorMessage(e)}${typed && storeChoice.kind === "sqlite" ? damageHint(typed) : ""}`,
      ExitCode.failed,
    );
  }

  const printMode = options.print === true;
  const observers: Fiber.RuntimeFiber<void, unknown>[] = [];
  /** Observers of subagent sessions: each ends on its own after the child's turn. */
  const childObservers: Fiber.RuntimeFiber<void, unknown>[] = [];
  const traced = new Set<string>();
  /** A subagent started: its own turn's records go to the trace too, nested under the spawning call. */
  const followChild = (e: TurnActivity) => {
    if (e.type !== "plugin" || e.plugin !== "subagents" || e.name !== "childStarted") return;
    const child = (e.data as { childSessionId?: unknown }).childSessionId;
    if (typeof child !== "string" || !trace || traced.has(child)) return;
    traced.add(child);
    const record = trace.record;
    childObservers.push(
      runtime.runFork(
        Effect.flatMap(LashRuntime, (rt) =>
          Stream.runForEach(
            rt
              .observe(child)
              .pipe(Stream.takeUntil((x) => x.type === "turnFinished" && x.outcome.type !== "frameSwitch")),
            (x) =>
              Effect.sync(() => {
                record(x);
                followChild(x);
              }),
          ),
        ),
      ),
    );
  };

  const ctx: LocalContext = {
    rt: runtime,
    persisted: options.persist !== false,
    runtime,
    paths,
    settings,
    modelInfo: (model: string): ModelInfo | undefined => {
      const info = catalog.lookup(model);
      const window = settings.compaction?.contextWindow;
      if (window === undefined) return info;
      // --context-window / config contextWindow: also for a model the catalog does not know
      return { ...(info ?? unknownModelInfo(model)), contextWindow: window };
    },
    // only models of providers with a key (or, openai-compatible, a base URL)
    knownModels: () => {
      const ok = new Set<string | undefined>(configuredVendors(env, config));
      return catalog
        .list()
        .map((m) => m.id)
        .filter((id) => ok.has(vendorOf(id)));
    },
    shellEnv: () => scrubEnv(env, { secretNames: secrets.names, pass: config.shell?.passEnv ?? [] }).env,
    redact: (text: string) => redactor.text(text),
    setModel(model: string) {
      try {
        providerFor(model);
      } catch (e) {
        throw new Error(errorMessage(e));
      }
      ctx.settings = { ...ctx.settings, model };
    },
    async newSession() {
      if (ctx.settings.model === "none/none")
        throw new CliError(noProviderMessage(undefined), ExitCode.usage);
      providerFor(ctx.settings.model);
      const session = await runtime.runPromise(
        Effect.flatMap(LashRuntime, (rt) =>
          rt.createSession({
            model: ctx.settings.model,
            mode: ctx.settings.mode,
            cwd: ctx.settings.cwd,
            ...(ctx.settings.systemPrompt !== undefined ? { systemPrompt: ctx.settings.systemPrompt } : {}),
            ...(ctx.settings.tools ? { tools: ctx.settings.tools } : {}),
            ...(options.sessionPlugins !== undefined ? { plugins: options.sessionPlugins } : {}),
            // the layers this process adds (lash run's), kept with the session for its resumption
            state: gov.rootState(),
          }),
        ),
      );
      // the print path records events itself (synchronously); the TUI's sessions are observed
      if (!printMode) ctx.traceSession(session.id);
      if (
        options.baseUrl !== undefined &&
        options.persist !== false &&
        vendorOf(session.model) === flagVendor
      )
        recordSessionEndpoint(paths.home, session.id, options.baseUrl);
      return session;
    },
    adoptSession(session, forkId) {
      const persisted = options.persist !== false;
      let url: string | undefined;
      if (options.baseUrl !== undefined) {
        // a --base-url given now replaces the stored one
        if (vendorOf(session.model) === flagVendor) url = options.baseUrl;
        if (url !== undefined && persisted) recordSessionEndpoint(paths.home, session.id, url);
      } else {
        url = persisted ? sessionEndpoint(paths.home, session.id) : undefined;
        if (url !== undefined) {
          storedEndpoint = { vendor: vendorOf(session.model), url };
          providerCache.delete(session.model);
        }
      }
      // a fork continues on its source's server
      if (forkId !== undefined && url !== undefined && persisted)
        recordSessionEndpoint(paths.home, forkId, url);
      providerFor(session.model); // no provider for the session's model: the one message, exit 2
    },
    approvalMode,
    setApprover(approver) {
      if (approvalMode === "interactive") approvals.set(approver);
    },
    policyLayers: gov.layersOf,
    runtimeOptions,
    gitBranch: () => gitBranch(ctx.settings.cwd),
    pluginStatus: () => ({
      ...runtime.runSync(Effect.map(LashRuntime, (rt) => rt.pluginStatus())),
      ...(mcp ? {} : { mcp: { servers: [] } }),
    }),
    async exportSession(sessionId, format, outPath) {
      const { exportSession } = await import("@lash/export");
      const store = await runtime.runPromise(SessionStore);
      const text = await exportSession(store, sessionId, format);
      const out = resolve(ctx.settings.cwd, outPath ?? `lash-${sessionId}.${format}`);
      writeFileSync(out, text);
      return out;
    },
    traceEvent: (e) => {
      if (!trace) return;
      trace.record(e);
      followChild(e);
    },
    settleMcp: async (timeoutMs) => {
      await mcp?.settle(timeoutMs);
    },
    traceSession(sessionId) {
      if (!trace || traced.has(sessionId)) return;
      traced.add(sessionId);
      const record = trace.record;
      observers.push(
        runtime.runFork(
          Effect.flatMap(LashRuntime, (rt) =>
            Stream.runForEach(rt.observe(sessionId), (e) =>
              Effect.sync(() => {
                record(e);
                followChild(e);
              }),
            ),
          ),
        ),
      );
    },
    async close() {
      // subagent observers finish by themselves once their child's turn is recorded
      for (const f of childObservers)
        await runtime
          .runPromise(Fiber.join(f).pipe(Effect.timeout("2 seconds"), Effect.ignore))
          .catch(() => undefined);
      for (const f of [...observers, ...childObservers])
        await runtime.runPromise(Fiber.interrupt(f)).catch(() => undefined);
      await trace?.close();
      await runtime.dispose();
      await mcp?.close();
      for (const w of deferredWarnings.splice(0)) process.stderr.write(`[lash] warning: ${w}\n`);
    },
  };
  return ctx;
}

export type { Vendor };
