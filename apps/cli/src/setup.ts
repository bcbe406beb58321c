// From flags, config and environment to the settings of a run.
import { existsSync, statSync } from "node:fs";
import { parse, resolve } from "node:path";
import { projectInstructions } from "@lash/agents";
import type { RunFlags } from "./args.ts";
import { type LoadedConfig, loadConfig } from "./config.ts";
import type { CliPaths, CliSettings } from "./context.ts";
import { validateTools } from "./create-context.ts";
import { CliError, ExitCode, usageError } from "./errors.ts";
import { resolvePaths } from "./paths.ts";
import { chooseModel, type ModelChoice, noProviderMessage } from "./providers.ts";

export interface Setup {
  readonly paths: CliPaths;
  readonly loaded: LoadedConfig;
  readonly settings: CliSettings;
  readonly modelChoice: ModelChoice;
  readonly env: NodeJS.ProcessEnv;
  /** Things the user should know before the run starts (printed on stderr). */
  readonly warnings: readonly string[];
}

/** The model of a resuming run that named none: the session's own is used (a new session needs a real one). */
export const UNCHOSEN_MODEL = "none/none";

/** Thrown when no model could be chosen at all (no key, no config): `lash` offers the demo. */
export class NoProvider extends CliError {
  constructor() {
    super(noProviderMessage(undefined), ExitCode.usage);
  }
}

export function resolveCwd(flag: string | undefined): string {
  const cwd = resolve(flag ?? process.cwd());
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw usageError(`--cwd: ${cwd} is not a directory`);
  return cwd;
}

/** A workspace at the file-system root gives the file tools the whole machine: say so. */
export function workspaceWarnings(cwd: string): string[] {
  if (parse(cwd).root !== cwd) return [];
  return [
    `warning: the workspace is ${cwd}, the root of the file system: the file tools can read and write every file this user can. Pass --cwd <project directory> to confine them.`,
  ];
}

/** The default system prompt: who lash is and where it runs (the project's AGENTS.md is added by `resolveSetup`). */
export function defaultSystemPrompt(cwd: string): string {
  const parts = [
    "You are lash, a coding agent working in the user's terminal. Use the tools to inspect and change files and to run commands; prefer small, verifiable steps, and say plainly what you did and what you could not do.",
    `Workspace: ${cwd}\nPlatform: ${process.platform}`,
  ];
  return parts.join("\n\n");
}

export async function resolveSetup(flags: RunFlags, env: NodeJS.ProcessEnv = process.env): Promise<Setup> {
  const cwd = resolveCwd(flags.cwd);
  const paths = resolvePaths(env, cwd);
  const loaded = loadConfig(paths.config, paths.projectConfig);
  const config = loaded.config;
  const tools = flags.tools ?? config.tools;
  validateTools(tools);
  if (flags.baseUrl !== undefined && flags.model === undefined && !env.LASH_MODEL && !config.model)
    throw usageError(
      "--base-url needs a model: add --model openai-compatible/<model> (e.g. openai-compatible/llama3.1 for Ollama)",
    );
  // `-p --continue` / `--resume` run on the session's own model: no model needs choosing up front
  const resumes =
    flags.print &&
    (flags.continue || flags.resume !== undefined || flags.session !== undefined || flags.fork !== undefined);
  const modelChoice =
    chooseModel(flags.model, env, config) ??
    (resumes ? { model: UNCHOSEN_MODEL, source: "default" } : undefined);
  if (!modelChoice) throw new NoProvider();
  const mode = flags.mode ?? config.mode ?? "standard";
  const base = flags.system ?? config.systemPrompt ?? defaultSystemPrompt(cwd);
  // AGENTS.md (CLAUDE.md where a directory has none) from the git root down to the workspace
  const projectInstructionsOn = !flags.noProjectInstructions && config.projectInstructions !== false;
  const instructions = projectInstructionsOn ? projectInstructions(cwd) : undefined;
  const systemPrompt = [base, instructions, config.appendSystemPrompt, flags.appendSystem]
    .filter((s): s is string => typeof s === "string" && s.trim() !== "")
    .join("\n\n");
  const maxTurns = flags.maxTurns ?? config.maxTurns;
  const contextWindow = flags.contextWindow ?? config.contextWindow;
  const compaction = {
    ...(config.compaction ?? {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
  };
  const settings: CliSettings = {
    model: modelChoice.model,
    mode,
    cwd,
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(Object.keys(compaction).length > 0 ? { compaction } : {}),
    ...(systemPrompt !== "" ? { systemPrompt } : {}),
    projectInstructions: projectInstructionsOn,
    ...(config.skills?.roots !== undefined ? { skillRoots: config.skills.roots } : {}),
    ...(tools !== undefined ? { tools } : {}),
    scripted: false,
  };
  return { paths, loaded, settings, modelChoice, env, warnings: workspaceWarnings(cwd) };
}
