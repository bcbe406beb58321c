#!/usr/bin/env node
// The `lash` entry point. Heavy modules (core, providers, ink) load only for the commands that need them.
import { enableCompileCache } from "node:module";
import { setFlagsFromString } from "node:v8";
import { type Command, parseCommand, type RunFlags } from "./args.ts";
import { CliError, damageHint, ExitCode, errorMessage, taggedFailure } from "./errors.ts";
import { helpText, VERSION } from "./help.ts";
import type { MainIO } from "./io.ts";

export type { MainIO } from "./io.ts";

// V8 code cache on disk (os.tmpdir()/node-compile-cache): later runs skip most of the compile time of the
// few hundred modules a turn loads (Effect, the SDKs, our TypeScript). NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache?.();

// Node can deadlock in process.exit() (nodejs/node#54918, still open for Node 24): the exit joins V8's
// worker threads while a concurrent Sparkplug (baseline) compile job on one of them waits for a
// main-thread GC that never comes. Seen as a `lash export` that never ends after writing its output
// (about 1 run in 20 on a 5 MB session; gdb: MainThread in NodePlatform::Shutdown → uv_thread_join,
// V8Worker in ConcurrentBaselineCompiler → CollectionBarrier::AwaitCollectionBackground). Baseline
// compiles on the main thread instead never leave such a job behind; Sparkplug is V8's cheapest tier.
setFlagsFromString("--no-concurrent-sparkplug");

const processIO: MainIO = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
};

export async function main(argv: readonly string[], io: MainIO = processIO): Promise<number> {
  try {
    const command = parseCommand(argv);
    return await dispatch(command, io);
  } catch (e) {
    if (e instanceof CliError) {
      io.stderr.write(e.message.startsWith("lash") ? `${e.message}\n` : `lash: ${e.message}\n`);
      return e.exitCode;
    }
    // a typed failure (store locked or damaged, session not found …) is a message, not an internal error
    const typed = taggedFailure(e);
    if (typed) {
      io.stderr.write(`lash: ${typed.message}${damageHint(typed)}\n`);
      if (io.env.LASH_DEBUG && e instanceof Error && e.stack) io.stderr.write(`${e.stack}\n`);
      return ExitCode.failed;
    }
    io.stderr.write(`lash: internal error: ${errorMessage(e)}\n`);
    if (io.env.LASH_DEBUG && e instanceof Error && e.stack) io.stderr.write(`${e.stack}\n`);
    return ExitCode.failed;
  }
}

async function dispatch(command: Command, io: MainIO): Promise<number> {
  switch (command.kind) {
    case "help":
      io.stdout.write(helpText(command.topic));
      return ExitCode.ok;
    case "version":
      io.stdout.write(`lash ${VERSION} (node ${process.versions.node})\n`);
      return ExitCode.ok;
    case "lashlang": {
      const { runLashlangCli } = await import("@lash/lashlang");
      return runLashlangCli([...command.argv], io);
    }
    case "export":
    case "import": {
      const { runExportCommand } = await import("./features.ts");
      return runExportCommand(command.kind, command.argv, io);
    }
    case "trace": {
      const { runTraceCommand } = await import("./features.ts");
      return runTraceCommand(command.argv, io);
    }
    case "policy": {
      const { runPolicyCommand } = await import("./policy.ts");
      return runPolicyCommand(command.argv, io);
    }
    case "build":
    case "init":
    case "agents": {
      const agents = await import("./agents.ts");
      const run = { build: agents.runBuild, init: agents.runInit, agents: agents.runAgents }[command.kind];
      return run(command.argv, io);
    }
    case "run-agent": {
      const { runAgentCommand } = await import("./run-agent.ts");
      return runAgentCommand(command.argv, io);
    }
    case "skills": {
      const { runSkills } = await import("./skills.ts");
      return runSkills(command.argv, io);
    }
    case "remote": {
      const { runRemote } = await import("./remote.ts");
      return runRemote(command.argv, io);
    }
    case "serve": {
      const { runServe } = await import("./serve.ts");
      return runServe(command.argv, io);
    }
    case "loop": {
      const { runLoop } = await import("./loop.ts");
      return runLoop(command.argv, io);
    }
    case "login":
    case "logout": {
      const { runLogin, runLogout } = await import("./login.ts");
      return command.kind === "login" ? runLogin(command.argv, io) : runLogout(command.argv, io);
    }
    case "sessions": {
      const { runSessions } = await import("./commands.ts");
      return runSessions(command.action, command.args, io);
    }
    case "config": {
      const { runConfig } = await import("./commands.ts");
      return runConfig(command, io);
    }
    case "doctor": {
      const { runDoctor } = await import("./doctor.ts");
      return runDoctor(command, io);
    }
    case "demo": {
      const { runDemo } = await import("./demo.ts");
      return runDemo(command.flags, io);
    }
    case "run":
      return run(command.flags, io);
  }
}

async function run(flags: RunFlags, io: MainIO): Promise<number> {
  const { NoProvider, resolveSetup } = await import("./setup.ts");
  const interactive = !flags.print && io.stdin.isTTY === true && io.stdout.isTTY === true;
  if (flags.approvalMode === "interactive" && !interactive)
    throw new CliError(
      "lash: --approval-mode interactive prompts in the terminal, and this run has none; use approve-all, reject-all or fail",
      ExitCode.usage,
    );
  let setup: Awaited<ReturnType<typeof resolveSetup>>;
  try {
    setup = await resolveSetup(flags, io.env);
  } catch (e) {
    if (e instanceof NoProvider && !flags.print && flags.prompt === undefined && isPlainRun(flags)) {
      io.stderr.write(
        `${e.message}\n\nNo API key is set, so here is \`lash demo\` — a scripted session against a built-in mock model.\n\n`,
      );
      const { runDemo } = await import("./demo.ts");
      return runDemo({ keep: false, json: false }, io);
    }
    throw e;
  }
  for (const w of setup.warnings) io.stderr.write(`[lash] ${w}\n`);
  let rlmBindings: { [name: string]: unknown } | undefined;
  if (flags.rlmVars !== undefined || flags.rlmVarsFile !== undefined) {
    if (setup.settings.mode !== "rlm")
      throw new CliError(
        "lash: --rlm-var and --rlm-vars-file bind values in Lashlang cells, which only the RLM mode runs; add --mode rlm",
        ExitCode.usage,
      );
    const { resolveRlmVars } = await import("./rlm-vars.ts");
    rlmBindings = resolveRlmVars(flags.rlmVars, flags.rlmVarsFile, process.cwd());
  }
  const { createCliContext } = await import("./create-context.ts");
  const ctx = await createCliContext({
    settings: setup.settings,
    paths: setup.paths,
    config: setup.loaded.config,
    env: setup.env,
    ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.trace !== undefined ? { traceFile: flags.trace } : {}),
    ...(flags.requestTimeoutMs !== undefined ? { requestTimeoutMs: flags.requestTimeoutMs } : {}),
    ...(flags.requestDeadlineMs !== undefined ? { requestDeadlineMs: flags.requestDeadlineMs } : {}),
    ...(flags.traceLevel !== undefined ? { traceLevel: flags.traceLevel } : {}),
    persist: !flags.noSession,
    print: !interactive,
    ...(flags.approvalMode !== undefined ? { approvalMode: flags.approvalMode } : {}),
    ...(flags.dryRun ? { dryRun: true } : {}),
    ...(rlmBindings !== undefined ? { rlmBindings } : {}),
    ...(flags.store !== undefined ? { store: flags.store } : {}),
    // a resumed session's provider is checked once the session is known (its stored base URL may be needed)
    ...((flags.continue ||
      flags.resume !== undefined ||
      flags.session !== undefined ||
      flags.fork !== undefined) &&
    flags.baseUrl === undefined
      ? { checkProvider: false }
      : {}),
  });
  try {
    if (!interactive) {
      if (!flags.print && io.stdout.isTTY !== true && io.stdin.isTTY === true && flags.prompt === undefined)
        throw new CliError(
          "lash: the interactive mode needs a terminal; use -p for one-shot runs",
          ExitCode.usage,
        );
      const { runPrint } = await import("./print.ts");
      return await runPrint(ctx, flags, io);
    }
    const { runInteractive } = await import("./interactive.ts");
    return await runInteractive(ctx, flags, io);
  } finally {
    await ctx.close().catch(() => undefined);
  }
}

/** `lash` with no session flags: the case where offering the demo makes sense. */
function isPlainRun(flags: RunFlags): boolean {
  return (
    flags.model === undefined &&
    flags.session === undefined &&
    flags.resume === undefined &&
    flags.fork === undefined &&
    !flags.continue
  );
}

/** Flush stdout/stderr, then exit (open sockets or timers must not keep a finished CLI alive). */
export async function exit(code: number): Promise<never> {
  const flush = (s: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      if (s.writableLength === 0) resolve();
      else s.write("", () => resolve());
    });
  await Promise.race([
    Promise.all([flush(process.stdout), flush(process.stderr)]),
    new Promise((r) => setTimeout(r, 2000).unref()),
  ]);
  process.exit(code);
}

const isEntry = (() => {
  // bin/lash.js and bin/lash-dev.js say so, whatever name a link to them has
  if ((globalThis as Record<symbol, unknown>)[Symbol.for("lash.bin")] === true) return true;
  const entry = process.argv[1];
  if (!entry) return false;
  const here = new URL(import.meta.url).pathname;
  return entry === here || /[\\/](lash(-dev)?(\.js)?|main\.ts|lash\.ts)$/.test(entry);
})();

if (isEntry) {
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(ExitCode.ok);
  });
  main(process.argv.slice(2)).then(exit, (e: unknown) => {
    process.stderr.write(`lash: ${errorMessage(e)}\n`);
    return exit(ExitCode.failed);
  });
}
