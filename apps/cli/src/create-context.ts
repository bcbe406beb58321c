// Builds the CliContext: store, providers, catalog and plugins behind one ManagedRuntime.
import { mkdirSync } from "node:fs";
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  outputBudgetPlugin,
  type Plugin,
  type SessionStore,
  SqliteStore,
} from "@lash/core";
import { createProvider, ModelCatalog as ProviderCatalog, type ProviderHandle } from "@lash/providers";
import type { ModelInfo } from "@lash/sansio";
import { TOOL_NAMES, toolsPlugin } from "@lash/tools";
import { Effect, Layer, ManagedRuntime } from "effect";
import type { LashConfig } from "./config.ts";
import type { CliContext, CliPaths, CliSettings } from "./context.ts";
import { CliError, ExitCode, errorMessage } from "./errors.ts";
import { exportSession } from "./features.ts";
import { gitBranch } from "./git.ts";
import { mcpStatus } from "./mcp.ts";
import { baseUrlFor, noProviderMessage, type Vendor, vendorOf } from "./providers.ts";

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
}

/** The CliContext plus what the CLI shell itself uses (the store, for pending turns). */
export interface LocalContext extends CliContext {
  readonly rt: ManagedRuntime.ManagedRuntime<LashRuntime | SessionStore, unknown>;
  readonly persisted: boolean;
}

/** Built-in tool names, for `--tools` validation and `/info`. */
export const builtinTools: readonly string[] = TOOL_NAMES;

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

export async function createCliContext(options: ContextOptions): Promise<LocalContext> {
  const env = options.env ?? process.env;
  const { paths, config } = options;
  const catalog = ProviderCatalog.default();
  const flagVendor = vendorOf(options.settings.model);
  const providerCache = new Map<string, ProviderHandle>();

  /** Throws CliError (exit 2) with the one no-provider message. */
  const providerFor = (model: string): ProviderHandle => {
    const cached = providerCache.get(model);
    if (cached) return cached;
    const vendor = vendorOf(model);
    let handle: ProviderHandle;
    try {
      const baseUrl = baseUrlFor(vendor, { vendor: flagVendor, url: options.baseUrl }, config);
      handle = createProvider(model, { env, catalog, ...(baseUrl ? { baseUrl } : {}) });
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

  const plugins: Plugin[] = [];
  const builtinAllowed = settings.tools?.filter((t) => builtinTools.includes(t));
  plugins.push(
    toolsPlugin({ root: settings.cwd, ...(settings.tools ? { tools: builtinAllowed ?? [] } : {}) }),
    outputBudgetPlugin(),
  );

  let store: Layer.Layer<SessionStore, unknown>;
  if (options.persist === false) store = MemoryStore;
  else {
    mkdirSync(paths.home, { recursive: true });
    store = SqliteStore.layer({ filename: paths.db });
  }

  const layer = LashRuntime.layer({
    plugins,
    ...(settings.maxTurns !== undefined ? { maxTurns: settings.maxTurns } : {}),
  }).pipe(
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
    throw new CliError(`lash: cannot open ${paths.db}: ${errorMessage(e)}`, ExitCode.failed);
  }

  const ctx: LocalContext = {
    rt: runtime,
    persisted: options.persist !== false,
    runtime,
    paths,
    settings,
    modelInfo: (model: string): ModelInfo | undefined => catalog.lookup(model),
    knownModels: () => catalog.list().map((m) => m.id),
    setModel(model: string) {
      try {
        providerFor(model);
      } catch (e) {
        throw new Error(errorMessage(e));
      }
      ctx.settings = { ...ctx.settings, model };
    },
    newSession: () =>
      runtime.runPromise(
        Effect.flatMap(LashRuntime, (rt) =>
          rt.createSession({
            model: ctx.settings.model,
            mode: ctx.settings.mode,
            cwd: ctx.settings.cwd,
            ...(ctx.settings.systemPrompt !== undefined ? { systemPrompt: ctx.settings.systemPrompt } : {}),
            ...(ctx.settings.tools ? { tools: ctx.settings.tools } : {}),
          }),
        ),
      ),
    gitBranch: () => gitBranch(ctx.settings.cwd),
    pluginStatus: () => ({
      ...runtime.runSync(Effect.map(LashRuntime, (rt) => rt.pluginStatus())),
      mcp: mcpStatus(config),
    }),
    exportSession: (sessionId, format, outPath) => exportSession(ctx, sessionId, format, outPath),
    close: () => runtime.dispose(),
  };
  return ctx;
}

export type { Vendor };
