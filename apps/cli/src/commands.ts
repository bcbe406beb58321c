// `lash sessions …`, `lash config`, `lash export …`, `lash trace …`.
import type { SessionsArgs } from "./args.ts";
import { loadConfig, policyLayersOf, redactConfig } from "./config.ts";
import { createCliContext, type LocalContext } from "./create-context.ts";
import { ExitCode } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { mcpServers } from "./mcp.ts";
import { resolvePaths } from "./paths.ts";
import { chooseModel, configuredVendors, VENDOR_ENV, type Vendor } from "./providers.ts";
import {
  sessionsAbandon,
  sessionsCompare,
  sessionsGc,
  sessionsList,
  sessionsRm,
  sessionsShow,
} from "./sessions.ts";
import { resolveCwd } from "./setup.ts";

/** A context for commands that read sessions but run no turn (no provider needed). */
export async function storeContext(
  env: NodeJS.ProcessEnv,
  cwdFlag?: string,
  storeFlag?: string,
): Promise<LocalContext> {
  const cwd = resolveCwd(cwdFlag);
  const paths = resolvePaths(env, cwd);
  const { config } = loadConfig(paths.config, paths.projectConfig);
  const model = chooseModel(undefined, env, config)?.model ?? "none/none";
  return createCliContext({
    settings: { model, mode: "standard", cwd, scripted: false },
    paths,
    config,
    env,
    checkProvider: false,
    live: false,
    ...(storeFlag !== undefined ? { store: storeFlag } : {}),
  });
}

export async function runSessions(
  action: "list" | "show" | "rm" | "abandon" | "gc" | "compare",
  args: SessionsArgs,
  io: MainIO,
): Promise<number> {
  const ctx = await storeContext(io.env, args.cwd, args.store);
  try {
    if (action === "list") return await sessionsList(ctx, args, io.stdout);
    if (action === "show") return await sessionsShow(ctx, args, io.stdout);
    if (action === "abandon") return await sessionsAbandon(ctx, args, io.stdout);
    if (action === "gc") return await sessionsGc(ctx, args, io.stdout);
    if (action === "compare") return await sessionsCompare(ctx, args, io.stdout);
    return await sessionsRm(ctx, args, io.stdout);
  } finally {
    await ctx.close();
  }
}

export async function runConfig(
  command: { readonly json: boolean; readonly cwd?: string },
  io: MainIO,
): Promise<number> {
  const cwd = resolveCwd(command.cwd);
  const paths = resolvePaths(io.env, cwd);
  const loaded = loadConfig(paths.config, paths.projectConfig);
  const choice = chooseModel(undefined, io.env, loaded.config);
  const vendors = configuredVendors(io.env, loaded.config);
  const keys: Record<string, string> = {};
  for (const vendor of Object.keys(VENDOR_ENV) as Vendor[]) {
    const spec = VENDOR_ENV[vendor];
    const found = [...spec.keys, spec.baseUrl].filter((k) => (io.env[k]?.trim() ?? "") !== "");
    keys[vendor] = found.length ? `set (${found.join(", ")})` : "not set";
  }
  const effective = {
    config: redactConfig(loaded.config),
    files: {
      user: paths.config,
      project: paths.projectConfig ?? null,
      loaded: loaded.files,
    },
    home: paths.home,
    database: paths.db,
    model: choice ? { id: choice.model, source: choice.source } : null,
    providers: keys,
    configuredVendors: vendors,
    mcpServers: mcpServers(loaded.config),
    // each file's `policy` is its own layer (combined, not merged: `lash policy explain`)
    policyLayers: policyLayersOf(loaded.config),
  };
  io.stdout.write(`${JSON.stringify(effective, null, 2)}\n`);
  return ExitCode.ok;
}
