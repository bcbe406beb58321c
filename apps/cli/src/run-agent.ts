// `lash run <agent> [input | --input-json file] [--manifest <hash>]`: run an agent of the newest
// build (`.lash/build/<hash>.json`) as an ordinary `-p` session, or with no agent the project's
// `entry` (an agent, or a TypeScript function `path.ts#name` that calls agents).
import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentSessionPlan, Manifest, ResolvedAgent } from "@lash/agents";
import { LashRuntime, type TurnResult } from "@lash/core";
import type { AgentTool } from "@lash/subagents";
import { Effect } from "effect";
import { APPROVAL_MODES, type ApprovalMode, parseRunFlags, type RunFlags } from "./args.ts";
import { CliError, ExitCode, errorMessage, usageError } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { runLayers } from "./policy.ts";

interface RunAgentArgs {
  readonly inputJson?: string;
  readonly manifest?: string;
  readonly rest: readonly string[];
}

/** Take `--input-json <file>` and `--manifest <hash>` out of argv; the rest are `-p` run flags. */
function splitArgs(argv: readonly string[]): RunAgentArgs {
  const rest: string[] = [];
  let inputJson: string | undefined;
  let manifest: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^--(input-json|manifest)(?:=(.*))?$/.exec(a);
    if (!m) {
      rest.push(a);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === "") throw usageError(`--${m[1]} needs a value`);
    if (m[1] === "input-json") inputJson = value;
    else manifest = value;
  }
  return {
    ...(inputJson !== undefined ? { inputJson } : {}),
    ...(manifest !== undefined ? { manifest } : {}),
    rest,
  };
}

export async function runAgentCommand(argv: readonly string[], io: MainIO): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("run"));
    return ExitCode.ok;
  }
  const args = splitArgs(argv);
  const parsed = parseRunFlags(["-p", ...args.rest]);
  if ("help" in parsed || "version" in parsed) throw usageError("lash run: see lash run --help");
  const flags = parsed;
  if (flags.tools !== undefined || flags.system !== undefined || flags.mode !== undefined)
    throw usageError(
      "lash run: --tools, --system and --mode come from the agent's spec; change the spec and run `lash build`",
    );
  const agents = await import("@lash/agents");
  const root = resolve(flags.cwd ?? process.cwd());
  const { resolvePaths } = await import("./paths.ts");
  let manifest: Manifest | undefined;
  try {
    manifest = agents.readManifest(root, {
      ...(args.manifest !== undefined ? { hash: args.manifest } : {}),
      home: resolvePaths(io.env, root).home,
    });
  } catch (e) {
    if (e instanceof agents.BuildError) throw new CliError(`lash run: ${e.message}`, ExitCode.usage);
    throw e;
  }
  if (!manifest)
    throw new CliError(
      args.manifest !== undefined
        ? `lash run: no build ${args.manifest} in ${join(root, agents.BUILD_DIR)}; run \`lash build\` (or drop --manifest for the newest)`
        : `lash run: no build in ${root}; run \`lash build\` first`,
      ExitCode.usage,
    );
  // the agent is the first word, the input the rest (one quoted argument stays as it is)
  // (with an `entry` and a first word that names no agent, all of it is the entry's input)
  const prompt = flags.prompt;
  const firstWord = prompt?.split(" ", 1)[0];
  const entryInput =
    firstWord !== undefined &&
    manifest.project.entry !== undefined &&
    !manifest.agents.some((a) => a.name === firstWord);
  const agentName = entryInput ? undefined : firstWord;
  let rawInput = entryInput
    ? prompt
    : agentName !== undefined && prompt !== undefined
      ? prompt.slice(agentName.length + 1)
      : undefined;
  if (rawInput === "") rawInput = undefined;
  if (args.inputJson !== undefined) {
    if (rawInput !== undefined)
      throw usageError("lash run: give the input as an argument or --input-json, not both");
    try {
      rawInput = readFileSync(resolve(root, args.inputJson), "utf8");
    } catch (e) {
      throw usageError(`lash run: cannot read --input-json ${args.inputJson}: ${errorMessage(e)}`);
    }
  }
  try {
    if (agentName === undefined) {
      const entry = manifest.project.entry;
      if (!entry)
        throw usageError(
          "lash run: name an agent (lash run <agent> [input]) or set `entry` in lash.yaml and run `lash build`",
        );
      if ("agent" in entry)
        return await runOneAgent(manifest, agents.findAgent(manifest, entry.agent), rawInput, flags, io);
      return await runEntryFunction(manifest, root, entry.function, rawInput, flags, io);
    }
    return await runOneAgent(manifest, agents.findAgent(manifest, agentName), rawInput, flags, io);
  } catch (e) {
    if (e instanceof agents.RunRequestError) throw new CliError(`lash run: ${e.message}`, ExitCode.usage);
    throw e;
  }
}

async function openContext(
  flags: RunFlags,
  io: MainIO,
  settings: {
    readonly plan?: AgentSessionPlan;
    readonly agentTools: readonly AgentTool[];
    readonly model?: string;
    readonly manifest: Manifest;
    /** The agent run directly: its spec's `policy` is one more layer. */
    readonly agent?: ResolvedAgent;
  },
) {
  const { resolveSetup } = await import("./setup.ts");
  const model = flags.model ?? settings.plan?.model ?? settings.model;
  const setup = await resolveSetup({ ...flags, ...(model !== undefined ? { model } : {}) }, io.env);
  for (const w of setup.warnings) io.stderr.write(`[lash] ${w}\n`);
  const plan = settings.plan;
  const { createCliContext } = await import("./create-context.ts");
  const agents = await import("@lash/agents");
  const output = plan ? agents.outputPlugin(plan) : undefined;
  return createCliContext({
    settings: {
      ...setup.settings,
      ...(plan
        ? {
            mode: plan.mode,
            systemPrompt: plan.systemPrompt,
            tools: plan.tools,
            ...(plan.maxTurns !== undefined && flags.maxTurns === undefined
              ? { maxTurns: plan.maxTurns }
              : {}),
          }
        : {}),
    },
    paths: setup.paths,
    config: setup.loaded.config,
    env: setup.env,
    ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.trace !== undefined ? { traceFile: flags.trace } : {}),
    ...(flags.traceLevel !== undefined ? { traceLevel: flags.traceLevel } : {}),
    ...(flags.requestTimeoutMs !== undefined ? { requestTimeoutMs: flags.requestTimeoutMs } : {}),
    ...(flags.requestDeadlineMs !== undefined ? { requestDeadlineMs: flags.requestDeadlineMs } : {}),
    persist: !flags.noSession,
    ...(flags.store !== undefined ? { store: flags.store } : {}),
    print: true,
    ...approvalModeOf(flags, settings.manifest),
    policyLayers: runLayers(settings.manifest, settings.agent, (m) => io.stderr.write(m)),
    ...(settings.agent?.skills ? { skillsOnly: settings.agent.skills } : {}),
    // a built agent's instructions end with its skills catalog (the build appends it)
    ...(settings.agent ? { skillsCatalogInPrompt: true } : {}),
    agentTools: settings.agentTools,
    ...(output ? { sessionPlugins: [output] } : {}),
  });
}

export { runLayers } from "./policy.ts";

/** `--approval-mode`, else the project file's `defaults.approvalMode` (checked: a bad one is a usage error). */
function approvalModeOf(flags: RunFlags, manifest: Manifest): { approvalMode?: ApprovalMode } {
  if (flags.approvalMode !== undefined) return { approvalMode: flags.approvalMode };
  const mode = manifest.project.defaults?.approvalMode;
  if (mode === undefined) return {};
  if (!(APPROVAL_MODES as readonly string[]).includes(mode))
    throw new CliError(
      `lash run: defaults.approvalMode "${mode}" in the project file is not an approval mode (one of ${APPROVAL_MODES.join(", ")}); fix it and run \`lash build\` again`,
      ExitCode.usage,
    );
  return { approvalMode: mode as ApprovalMode };
}

/** One agent as a `-p` session: every `-p` surface (output formats, sessions, trace) applies. */
async function runOneAgent(
  manifest: Manifest,
  agent: ResolvedAgent,
  rawInput: string | undefined,
  flags: RunFlags,
  io: MainIO,
): Promise<number> {
  const agents = await import("@lash/agents");
  const input = agents.checkInput(agent, rawInput);
  const plan = agents.planAgentSession(manifest, agent);
  if (agent.budget !== undefined)
    io.stderr.write(
      `[lash] agent ${agent.name}: budget ${JSON.stringify(agent.budget)} is recorded in the build but not enforced yet\n`,
    );
  const ctx = await openContext(flags, io, { plan, agentTools: plan.agentTools, manifest, agent });
  try {
    const { runPrint } = await import("./print.ts");
    return await runPrint(ctx, { ...flags, prompt: agents.inputText(input) }, io);
  } finally {
    await ctx.close().catch(() => undefined);
  }
}

/** The context an entry function receives. */
export interface EntryContext {
  readonly input: unknown;
  callAgent(name: string, input?: unknown): Promise<unknown>;
  log(...parts: readonly unknown[]): void;
}

/**
 * An entry function `path.ts#name`: imported (Node strips the types) and called with an
 * {@link EntryContext}. It has no model of its own: each `callAgent` opens a session of that
 * agent (its state records the entry run, so `lash sessions` shows them together).
 */
async function runEntryFunction(
  manifest: Manifest,
  root: string,
  ref: string,
  rawInput: string | undefined,
  flags: RunFlags,
  io: MainIO,
): Promise<number> {
  const agents = await import("@lash/agents");
  const { SESSION_LAYERS_KEY } = await import("./policy.ts");
  const hash = ref.lastIndexOf("#");
  const file = hash >= 0 ? ref.slice(0, hash) : ref;
  const name = hash >= 0 ? ref.slice(hash + 1) : "default";
  const path = isAbsolute(file) ? file : join(root, file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (e) {
    throw new CliError(`lash run: cannot load the entry ${ref}: ${errorMessage(e)}`, ExitCode.usage);
  }
  const fn = mod[name];
  if (typeof fn !== "function")
    throw new CliError(
      `lash run: ${file} has no exported function \`${name}\` (exports: ${Object.keys(mod).join(", ") || "none"})`,
      ExitCode.usage,
    );
  let input: unknown = rawInput;
  if (rawInput !== undefined)
    try {
      input = JSON.parse(rawInput);
    } catch {
      input = rawInput;
    }
  const tools = new Map<string, AgentTool>();
  for (const a of manifest.agents) for (const t of agents.agentToolsFor(manifest, a)) tools.set(t.name, t);
  const firstModel = manifest.agents.map((a) => agents.agentModel(manifest, a)).find((m) => m !== undefined);
  const ctx = await openContext(flags, io, {
    manifest,
    agentTools: [...tools.values()],
    ...(firstModel !== undefined ? { model: firstModel } : {}),
  });
  const runId = `entry-${Date.now().toString(36)}`;
  const sessions: string[] = [];
  const json = flags.outputFormat !== "text";
  try {
    const entryCtx: EntryContext = {
      input,
      log: (...parts) =>
        io.stderr.write(`${parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ")}\n`),
      callAgent: async (agentName, agentInput) => {
        const agent = agents.findAgent(manifest, agentName);
        const value = agents.checkInput(
          agent,
          agentInput === undefined
            ? undefined
            : typeof agentInput === "string"
              ? agentInput
              : JSON.stringify(agentInput),
        );
        const plan = agents.planAgentSession(manifest, agent);
        const output = agents.outputPlugin(plan);
        const model = flags.model ?? plan.model ?? ctx.settings.model;
        const result: TurnResult = await ctx.rt.runPromise(
          Effect.gen(function* () {
            const rt = yield* LashRuntime;
            const session = yield* rt.createSession({
              model,
              mode: plan.mode,
              cwd: ctx.settings.cwd,
              systemPrompt: plan.systemPrompt,
              title: `${name}: ${agent.name}`,
              tools: [...plan.tools],
              ...(output ? { plugins: [output] } : {}),
              // the agent's policy layers (after the project file's, which this process
              // applies), stored with the session: decided for its calls and on its resumption
              state: {
                [SESSION_LAYERS_KEY]: runLayers(manifest, agent),
                "agents.entry": { run: runId, function: ref, agent: agent.name },
              },
            });
            sessions.push(session.id);
            return yield* rt.turn(
              session.id,
              { text: agents.inputText(value) },
              plan.maxTurns !== undefined ? { maxTurns: plan.maxTurns } : {},
            );
          }),
        );
        if (result.outcome.type !== "finished")
          throw new Error(
            `agent ${agent.name} did not finish (${result.outcome.type}, session ${result.sessionId})`,
          );
        if (result.finalValue !== undefined) return result.finalValue;
        if (plan.output !== undefined) {
          const { extractJson } = await import("@lash/subagents");
          const found = extractJson(result.text);
          if (found.found) return found.value;
        }
        return result.text;
      },
    };
    let value: unknown;
    try {
      value = await (fn as (c: EntryContext) => unknown)(entryCtx);
    } catch (e) {
      if (e instanceof agents.RunRequestError) throw e;
      io.stderr.write(`lash run: the entry ${ref} failed: ${errorMessage(e)}\n`);
      if (json)
        io.stdout.write(`${JSON.stringify({ type: "result", outcome: "failed", entry: ref, sessions })}\n`);
      return ExitCode.failed;
    }
    if (json)
      io.stdout.write(
        `${JSON.stringify({ type: "result", outcome: "finished", entry: ref, value, sessions })}\n`,
      );
    else
      io.stdout.write(
        `${value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value, null, 2)}\n`,
      );
    return ExitCode.ok;
  } finally {
    await ctx.close().catch(() => undefined);
  }
}
