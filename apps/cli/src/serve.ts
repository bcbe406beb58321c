// `lash serve`: the daemon (issue 19). Builds the ServeHost from the CLI's context (config,
// providers, tools, MCP servers, policy, trace) and runs @lash/server's HTTP server until
// SIGINT/SIGTERM, which drain it. `lash serve token …` manages bearer tokens.
import { isIP } from "node:net";
import { parseRunFlags } from "./args.ts";
import { CliError, ExitCode, usageError } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { serveStateFile } from "./paths.ts";
import type { RestateEngine, RestateSettings } from "./serve-restate.ts";

export interface ServeFlags {
  readonly host: string;
  readonly port: number;
  readonly state?: string;
  readonly maxRuns?: number;
  readonly maxQueued?: number;
  readonly drainTimeoutMs?: number;
  readonly sseBuffer?: number;
  readonly noAuth: boolean;
  /** `--engine` (`local` when absent, unless config `serve.engine` says otherwise). */
  readonly engine?: string;
  readonly restateIngress?: string;
  readonly restateAdmin?: string;
  readonly restateWorkerPort?: number;
  readonly restateDeployment?: string;
}

const VALUED = new Set([
  "host",
  "port",
  "state",
  "max-runs",
  "max-queued",
  "drain-timeout",
  "sse-buffer",
  "engine",
  "restate-ingress",
  "restate-admin",
  "restate-worker-port",
  "restate-deployment",
]);

/** The engines `--engine` takes. */
export const ENGINES = ["local", "restate"] as const;

const intFlag = (name: string, value: string, min: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw usageError(`lash serve: --${name} takes a whole number ≥ ${min} (got "${value}")`);
  return n;
};

/** Take `lash serve`'s own flags out of argv; the rest are run flags (--model, --base-url, --mode …). */
export function parseServeFlags(argv: readonly string[]): { flags: ServeFlags; rest: string[] } {
  const rest: string[] = [];
  const v: Record<string, string> = {};
  let noAuth = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--no-auth") {
      noAuth = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m || !VALUED.has(m[1]!)) {
      rest.push(a);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === "") throw usageError(`lash serve: --${m[1]} needs a value`);
    v[m[1]!] = value;
  }
  const flags: ServeFlags = {
    host: v.host ?? "127.0.0.1",
    port: v.port !== undefined ? intFlag("port", v.port, 0) : 7777,
    ...(v.state !== undefined ? { state: v.state } : {}),
    ...(v["max-runs"] !== undefined ? { maxRuns: intFlag("max-runs", v["max-runs"], 1) } : {}),
    ...(v["max-queued"] !== undefined ? { maxQueued: intFlag("max-queued", v["max-queued"], 0) } : {}),
    ...(v["drain-timeout"] !== undefined
      ? { drainTimeoutMs: intFlag("drain-timeout", v["drain-timeout"], 0) }
      : {}),
    ...(v["sse-buffer"] !== undefined ? { sseBuffer: intFlag("sse-buffer", v["sse-buffer"], 1) } : {}),
    noAuth,
    ...(v.engine !== undefined ? { engine: v.engine } : {}),
    ...(v["restate-ingress"] !== undefined ? { restateIngress: v["restate-ingress"] } : {}),
    ...(v["restate-admin"] !== undefined ? { restateAdmin: v["restate-admin"] } : {}),
    ...(v["restate-worker-port"] !== undefined
      ? { restateWorkerPort: intFlag("restate-worker-port", v["restate-worker-port"], 0) }
      : {}),
    ...(v["restate-deployment"] !== undefined ? { restateDeployment: v["restate-deployment"] } : {}),
  };
  if (flags.port > 65535)
    throw usageError(`lash serve: --port ${flags.port} is not a port (0 … 65535; 0 = any free port)`);
  return { flags, rest };
}

const httpUrl = (flag: string, value: string): string => {
  let u: URL | undefined;
  try {
    u = new URL(value);
  } catch {}
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:"))
    throw usageError(`lash serve: ${flag} takes an http:// URL (got "${value}"), e.g. http://127.0.0.1:8080`);
  return value.replace(/\/+$/, "");
};

/**
 * The engine runs execute on: `local` (in this process; the default) or `restate` (submitted
 * through Restate's ingress; this daemon also runs a worker). Flags win over config `serve`.
 */
export function engineSettings(
  flags: ServeFlags,
  config: {
    readonly engine?: string;
    readonly restate?: {
      readonly ingress?: string;
      readonly admin?: string;
      readonly workerPort?: number;
      readonly deployment?: string;
    };
  } = {},
  store: string | undefined,
): { readonly kind: "local" } | { readonly kind: "restate"; readonly restate: RestateSettings } {
  const engine = flags.engine ?? config.engine ?? "local";
  if (!(ENGINES as readonly string[]).includes(engine))
    throw usageError(`lash serve: unknown engine "${engine}"; --engine takes ${ENGINES.join(" or ")}`);
  const given = [
    ["--restate-ingress", flags.restateIngress],
    ["--restate-admin", flags.restateAdmin],
    ["--restate-worker-port", flags.restateWorkerPort],
    ["--restate-deployment", flags.restateDeployment],
  ].filter(([, v]) => v !== undefined);
  if (engine === "local") {
    if (given.length > 0)
      throw usageError(
        `lash serve: ${given.map(([f]) => f).join(", ")} only apply with --engine restate; add --engine restate or drop them`,
      );
    return { kind: "local" };
  }
  if (store === undefined || !/^postgres(ql)?:\/\//i.test(store.trim()))
    throw usageError(
      "lash serve --engine restate needs a store every worker reaches: pass --store postgres://user:password@host:5432/db (or config store)",
    );
  const c = config.restate ?? {};
  const ingress = flags.restateIngress ?? c.ingress;
  if (ingress === undefined)
    throw usageError(
      "lash serve --engine restate needs Restate's ingress: pass --restate-ingress http://127.0.0.1:8080 (or config serve.restate.ingress)",
    );
  const admin = flags.restateAdmin ?? c.admin;
  const deployment = flags.restateDeployment ?? c.deployment;
  const workerPort = flags.restateWorkerPort ?? c.workerPort ?? 9080;
  if (workerPort > 65535)
    throw usageError(`lash serve: --restate-worker-port ${workerPort} is not a port (0 … 65535)`);
  return {
    kind: "restate",
    restate: {
      ingress: httpUrl("--restate-ingress", ingress),
      ...(admin !== undefined ? { admin: httpUrl("--restate-admin", admin) } : {}),
      ...(deployment !== undefined ? { deployment: httpUrl("--restate-deployment", deployment) } : {}),
      workerPort,
    },
  };
}

export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));

export async function runServe(argv: readonly string[], io: MainIO): Promise<number> {
  if (argv[0] === "token") {
    const { serveTokenCommand } = await import("./serve-token.ts");
    return serveTokenCommand(argv.slice(1), io);
  }
  if (argv.includes("--help") || argv.includes("-h")) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("serve"));
    return ExitCode.ok;
  }
  const { flags, rest } = parseServeFlags(argv);
  if (flags.noAuth && !isLoopback(flags.host))
    throw usageError(
      `lash serve: --no-auth is only allowed on a loopback address (got --host ${flags.host}); bind 127.0.0.1, or drop --no-auth and use tokens (lash serve token create --principal <name>)`,
    );
  const parsed = parseRunFlags(["-p", ...rest]);
  if ("help" in parsed || "version" in parsed) throw usageError("lash serve: see lash serve --help");
  if (parsed.prompt !== undefined)
    throw usageError(
      `lash serve takes no prompt (got "${parsed.prompt}"); send turns with POST /v1/sessions/<id>/turns`,
    );
  if (parsed.approvalMode !== undefined && parsed.approvalMode !== "interactive")
    throw usageError(
      "lash serve: approvals are answered over HTTP (POST /v1/approvals/<id>); --approval-mode does not apply",
    );
  const { resolveSetup } = await import("./setup.ts");
  const setup = await resolveSetup(parsed, io.env);
  for (const w of setup.warnings) io.stderr.write(`[lash] ${w}\n`);
  const engine = engineSettings(
    flags,
    setup.loaded.config.serve ?? {},
    parsed.store ?? setup.loaded.config.store,
  );
  // the build this workspace serves (none: GET /v1/agents is empty), its agents' sessions
  const { serveAgents } = await import("./serve-agents.ts");
  const agents = serveAgents({
    cwd: setup.settings.cwd,
    home: setup.paths.home,
    defaultModel: setup.settings.model,
    ...(setup.settings.skillRoots ? { skillRoots: setup.settings.skillRoots } : {}),
  });
  const { createCliContext } = await import("./create-context.ts");
  const ctx = await createCliContext({
    ...agents.contextOptions,
    settings: setup.settings,
    paths: setup.paths,
    config: setup.loaded.config,
    env: setup.env,
    ...(parsed.baseUrl !== undefined ? { baseUrl: parsed.baseUrl } : {}),
    ...(parsed.trace !== undefined ? { traceFile: parsed.trace } : {}),
    ...(parsed.requestTimeoutMs !== undefined ? { requestTimeoutMs: parsed.requestTimeoutMs } : {}),
    ...(parsed.requestDeadlineMs !== undefined ? { requestDeadlineMs: parsed.requestDeadlineMs } : {}),
    ...(parsed.traceLevel !== undefined ? { traceLevel: parsed.traceLevel } : {}),
    persist: true,
    print: true,
    approvalMode: "interactive",
    // the daemon fires what RLM sessions register (packages/server/src/triggers.ts)
    rlmTriggers: true,
    ...(parsed.dryRun ? { dryRun: true } : {}),
    ...(parsed.store !== undefined ? { store: parsed.store } : {}),
  });
  // --engine restate: this daemon's Restate worker, and the engine its runs are submitted to
  let cluster: RestateEngine | undefined;
  if (engine.kind === "restate") {
    const { startRestateEngine } = await import("./serve-restate.ts");
    try {
      cluster = await startRestateEngine({
        rt: ctx.rt,
        runtimeOptions: ctx.runtimeOptions,
        settings: engine.restate,
        traceEvent: ctx.traceEvent,
      });
    } catch (e) {
      await ctx.close().catch(() => undefined);
      const err = e as NodeJS.ErrnoException;
      if (err.code === "EADDRINUSE")
        throw new CliError(
          `lash serve: the Restate worker port ${engine.restate.workerPort} is already in use; pass --restate-worker-port <n> (0 = any free port)`,
          ExitCode.failed,
        );
      throw e;
    }
  }
  const server = await import("@lash/server");
  const s = setup.settings;
  const settings = server.serveSettings({
    host: flags.host,
    port: flags.port,
    stateDb: flags.state ?? serveStateFile(setup.paths.home),
    ...(flags.maxRuns !== undefined ? { maxConcurrentRuns: flags.maxRuns } : {}),
    ...(flags.maxQueued !== undefined ? { maxQueuedRuns: flags.maxQueued } : {}),
    ...(flags.drainTimeoutMs !== undefined ? { drainTimeoutMs: flags.drainTimeoutMs } : {}),
    ...(flags.sseBuffer !== undefined ? { sseBufferEvents: flags.sseBuffer } : {}),
    auth: flags.noAuth ? "none" : "tokens",
  });
  let running: Awaited<ReturnType<typeof server.startServer>>;
  try {
    running = await server.startServer(
      {
        runtime: ctx.rt,
        defaultModel: s.model,
        sessionDefaults: {
          mode: s.mode,
          cwd: s.cwd,
          ...(s.systemPrompt !== undefined ? { systemPrompt: s.systemPrompt } : {}),
          ...(s.tools ? { tools: s.tools } : {}),
        },
        setApprover: ctx.setApprover,
        // the two-step rule reads the session's layers: config's, then its agent's and principal's
        // (the server stores those in the session's state; the governance restores them per turn)
        policyLayers: ctx.policyLayers,
        ...(setup.loaded.config.serve?.principals
          ? { principals: setup.loaded.config.serve.principals }
          : {}),
        traceEvent: ctx.traceEvent,
        ...(cluster ? { cluster: cluster.engine } : {}),
        ...(agents.manifest ? { manifest: agents.manifest } : {}),
        ...(agents.agentSession ? { agentSession: agents.agentSession } : {}),
        close: async () => {
          await cluster?.close();
          await ctx.close();
        },
      },
      settings,
      // the web console at `/` (built from source on first use; embedded in the packed CLI)
      { web: (await import("@lash/console")).consoleHandler() },
    );
  } catch (e) {
    await cluster?.close().catch(() => undefined);
    await ctx.close().catch(() => undefined);
    const err = e as NodeJS.ErrnoException;
    if (err.code === "EADDRINUSE")
      throw new CliError(
        `lash serve: ${flags.host}:${flags.port} is already in use; stop the other server or pass --port <n> (0 = any free port)`,
        ExitCode.failed,
      );
    if (err instanceof server.StateDbError) throw new CliError(err.message, ExitCode.failed);
    throw e;
  }
  io.stdout.write(`lash serve: listening on ${running.url}\n`);
  if (cluster)
    io.stdout.write(
      `lash serve: engine restate: runs go through ${engine.kind === "restate" ? engine.restate.ingress : ""}; this daemon's worker is ${cluster.workerUrl}\n`,
    );
  if (settings.auth === "none")
    io.stderr.write("[lash] --no-auth: every caller is the admin principal `local`\n");
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      io.stdout.write(
        `lash serve: ${signal}: draining (new turns are refused; up to ${settings.drainTimeoutMs} ms for running ones)\n`,
      );
      running
        .drain(settings.drainTimeoutMs)
        .then(async (idle) => {
          await running.close();
          // with no run in flight the host closes cleanly (trace flushed, MCP servers stopped);
          // with runs in flight it stays open: closing it would interrupt them
          if (idle) {
            await cluster?.close();
            await ctx.close();
          }
        })
        .catch(() => undefined)
        .finally(() => resolve());
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  // runs still in flight stay resumable: exit without interrupting them (the journal keeps them)
  io.stdout.write("lash serve: stopped\n");
  return ExitCode.ok;
}
