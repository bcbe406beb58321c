// Agents as files in the CLI (issue 18): `lash build`, `lash init`, `lash agents list|show`.
// The build itself is @lash/agents; the CLI adds the provider catalog (model checks), MCP
// server checks (`--check-mcp`, via @lash/plugin-mcp) and the output.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import {
  BUILD_DIR,
  BuildError,
  type BuildResult,
  type BuildSkill,
  buildProject,
  type Diagnostic,
  findProjectFile,
  formatDiagnostic,
  type Manifest,
  parseProject,
  type ResolvedAgent,
  readManifest,
} from "@lash/agents";
import { canonicalJson } from "@lash/sansio";
import { CliError, ExitCode, errorMessage, usageError } from "./errors.ts";
import { VERSION } from "./help.ts";
import type { MainIO } from "./io.ts";
import { resolvePaths } from "./paths.ts";

function parse<T extends ParseArgsOptionsConfig>(argv: readonly string[], options: T, what: string) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw usageError(`${what}: ${errorMessage(e)}`);
  }
}

/** The provider catalog's ids, and whether an id is one lash can run. */
async function catalogModels(): Promise<{ ids: string[]; known: (id: string) => boolean }> {
  const { ModelCatalog } = await import("@lash/providers");
  const catalog = ModelCatalog.default();
  const ids = catalog.list().map((m) => m.id);
  // openai-compatible/… names whatever a local server (Ollama, vLLM …) serves
  return { ids, known: (id) => catalog.lookup(id) !== undefined || id.startsWith("openai-compatible/") };
}

/** MCP servers of the project: their config checked, and with `check`, each pinged (started and listed). */
async function checkMcpServers(
  root: string,
  check: boolean,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
): Promise<Diagnostic[]> {
  const parsed = parseProject(root);
  const servers = parsed.project.mcpServers;
  const doc = parsed.projectDoc;
  if (!servers || !doc || Object.keys(servers).length === 0) return [];
  const m = await import("@lash/plugin-mcp");
  const out: Diagnostic[] = [];
  let config: ReturnType<typeof m.parseMcpConfig> | undefined;
  try {
    config = m.parseMcpConfig({ mcpServers: servers });
  } catch (e) {
    // "invalid MCP config:\n  mcpServers.<name>.<key>: <problem>" — one diagnostic per line, at its key
    const lines = errorMessage(e)
      .split("\n")
      .map((l) => /^\s*(mcpServers(?:\.[^:\s]+)*): (.+)$/.exec(l))
      .filter((m) => m !== null);
    if (lines.length === 0)
      out.push({
        file: doc.file,
        ...doc.at(["mcpServers"], true),
        severity: "error",
        message: errorMessage(e),
      });
    for (const [, path = "", message = ""] of lines)
      out.push({
        file: doc.file,
        ...doc.at(path.split(".")),
        severity: "error",
        message: `${path}: ${message}`,
      });
  }
  if (!check || !config) return out;
  const handle = await m.createMcpManager(config, { env, stderr: "pipe" });
  try {
    await handle.awaitSettled({ timeoutMs });
    for (const s of handle.status()) {
      if (s.state === "ready") continue;
      out.push({
        file: doc.file,
        ...doc.at(["mcpServers", s.name], true),
        severity: "error",
        message: `MCP server "${s.name}" is not reachable (${s.state}${s.reason ? `: ${s.reason}` : ""}) after ${timeoutMs} ms`,
      });
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
  return out;
}

export interface BuildRun {
  readonly result: BuildResult;
  readonly root: string;
}

/** Build `root` as `lash build` does (catalog models, MCP config, skills). */
export async function buildWithCli(
  root: string,
  options: { readonly checkMcp?: boolean; readonly mcpTimeoutMs?: number; readonly env: NodeJS.ProcessEnv },
): Promise<BuildRun> {
  const models = await catalogModels();
  const mcp = await checkMcpServers(
    root,
    options.checkMcp ?? false,
    options.mcpTimeoutMs ?? 10_000,
    options.env,
  );
  const { skills, skillDiagnostics } = await projectSkills(root, options.env);
  // MCP problems do not stop the build's other checks: every problem is reported at once
  const result = buildProject({
    root,
    lashVersion: VERSION,
    models,
    skills,
    extraDiagnostics: [...skillDiagnostics, ...mcp],
    write: true,
  });
  return { root, result };
}

/** The project's skills for the build (A2's discovery: .lash/skills, .agents/skills, .claude/skills, lash.yaml's roots, $LASH_HOME/skills). */
async function projectSkills(
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<{ skills: BuildSkill[]; skillDiagnostics: Diagnostic[] }> {
  const { defaultSkillRoots, discoverSkills } = await import("@lash/agents");
  const home = resolvePaths(env, root).home;
  const extra = parseProject(root).project.skills ?? [];
  const { skills, problems } = discoverSkills(defaultSkillRoots(root, home, extra));
  const shown = (abs: string) => {
    const inProject = relative(root, abs);
    if (!inProject.startsWith("..") && !isAbsolute(inProject)) return inProject.split(sep).join("/");
    const inHome = relative(home, abs);
    if (!inHome.startsWith("..") && !isAbsolute(inHome)) return `~lash/${inHome.split(sep).join("/")}`;
    // elsewhere (a lash.yaml root such as ../team-skills): relative to the project, so the
    // build's hash does not depend on where the checkout is (absolute only across drives)
    return isAbsolute(inProject) ? abs : inProject.split(sep).join("/");
  };
  return {
    skills: skills.map((s) => ({
      name: s.name,
      description: s.description,
      dir: s.dir,
      displayDir: shown(s.dir),
      files: s.files,
    })),
    skillDiagnostics: problems.map((p) => ({
      file: shown(p.file),
      line: Math.max(1, p.line),
      column: Math.max(1, p.column),
      severity: p.severity,
      message: p.message,
    })),
  };
}

function projectRoot(cwd: string | undefined): string {
  return resolve(cwd ?? process.cwd());
}

export async function runBuild(argv: readonly string[], io: MainIO): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      json: { type: "boolean" },
      "check-mcp": { type: "boolean" },
      "mcp-timeout": { type: "string" },
      cwd: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    "lash build",
  );
  if (values.help) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("build"));
    return ExitCode.ok;
  }
  const root = projectRoot((values.cwd as string | undefined) ?? positionals[0]);
  if (!existsSync(root)) throw usageError(`lash build: no such directory: ${root}`);
  const timeout = values["mcp-timeout"] as string | undefined;
  const seconds = timeout === undefined ? 10 : Number(timeout);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw usageError(`lash build: --mcp-timeout expects seconds (a positive number), got "${timeout}"`);
  const { result } = await buildWithCli(root, {
    checkMcp: values["check-mcp"] === true,
    mcpTimeoutMs: Math.round(seconds * 1000),
    env: io.env,
  });
  const errors = result.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = result.diagnostics.length - errors;
  if (values.json) {
    io.stdout.write(
      `${JSON.stringify({
        ok: result.ok,
        ...(result.manifest ? { hash: result.manifest.hash } : {}),
        ...(result.manifestPath ? { manifest: relative(root, result.manifestPath) } : {}),
        errors,
        warnings,
        diagnostics: result.diagnostics,
        ...(result.manifest
          ? {
              agents: result.manifest.agents.map((a) => a.name),
              skills: result.manifest.skills.map((s) => s.name),
            }
          : {}),
      })}\n`,
    );
    return result.ok ? ExitCode.ok : ExitCode.failed;
  }
  for (const d of result.diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
  if (!result.ok || !result.manifest) {
    io.stderr.write(
      `lash build: ${errors} error${errors === 1 ? "" : "s"}${warnings ? `, ${warnings} warning${warnings === 1 ? "" : "s"}` : ""}; nothing written\n`,
    );
    return ExitCode.failed;
  }
  const m = result.manifest;
  io.stdout.write(
    `built ${m.agents.length} agent${m.agents.length === 1 ? "" : "s"}${m.skills.length ? `, ${m.skills.length} skill${m.skills.length === 1 ? "" : "s"}` : ""} → ${relative(root, result.manifestPath ?? "")}${warnings ? ` (${warnings} warning${warnings === 1 ? "" : "s"})` : ""}\n`,
  );
  return ExitCode.ok;
}

// ---- lash init

const INIT_PROJECT = `# lash project file (lash help build). Agents live in agents/ (*.agent.md, *.yaml)
# and in the project root (*.agent.md); \`lash build\` checks them and writes .lash/build/<hash>.json.
agents: [agents, .]
defaults:
  mode: standard
  # model: anthropic/claude-sonnet-4-5   # otherwise lash's usual model choice applies
entry: hello
`;

const INIT_AGENT = `---
name: hello
description: Greets the user and says what is in this project.
tools: [read_file, glob]
skills: [greeting]
maxTurns: 8
---
You are a friendly guide to this project. Greet the user (follow the greeting skill),
then say in two or three sentences what the project contains: look at its files first.
`;

const INIT_SKILL = `---
name: greeting
description: How to greet people in this project. Use when a reply starts with a greeting.
---
# Greeting

Start with "Hello" and the person's name when you know it; keep it to one line.
`;

const GITIGNORE_LINE = ".lash/build/";

export async function runInit(argv: readonly string[], io: MainIO): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { cwd: { type: "string" }, help: { type: "boolean", short: "h" } },
    "lash init",
  );
  if (values.help) {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("init"));
    return ExitCode.ok;
  }
  const root = projectRoot((values.cwd as string | undefined) ?? positionals[0]);
  mkdirSync(root, { recursive: true });
  const files: [string, string][] = [
    ["lash.yaml", INIT_PROJECT],
    ["agents/hello.agent.md", INIT_AGENT],
    [".lash/skills/greeting/SKILL.md", INIT_SKILL],
  ];
  const existing = files.map(([f]) => f).filter((f) => existsSync(join(root, f)));
  const otherProject = findProjectFile(root);
  if (otherProject && !existing.includes(relative(root, otherProject)))
    existing.push(relative(root, otherProject));
  if (existing.length > 0)
    throw new CliError(
      `lash init: ${existing.join(", ")} already exist${existing.length === 1 ? "s" : ""}; nothing was written (move ${existing.length === 1 ? "it" : "them"} away or edit by hand)`,
      ExitCode.failed,
    );
  for (const [f, text] of files) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), text, { flag: "wx" });
    io.stdout.write(`created ${f}\n`);
  }
  const gitignore = join(root, ".gitignore");
  if (!existsSync(gitignore)) {
    writeFileSync(gitignore, `${GITIGNORE_LINE}\n`, { flag: "wx" });
    io.stdout.write("created .gitignore\n");
  } else if (!readFileSync(gitignore, "utf8").split(/\r?\n/).includes(GITIGNORE_LINE)) {
    const text = readFileSync(gitignore, "utf8");
    appendFileSync(gitignore, `${text === "" || text.endsWith("\n") ? "" : "\n"}${GITIGNORE_LINE}\n`);
    io.stdout.write(`added ${GITIGNORE_LINE} to .gitignore\n`);
  }
  io.stdout.write("next: lash build, then lash run hello\n");
  return ExitCode.ok;
}

// ---- lash agents list|show

async function currentManifest(root: string, io: MainIO): Promise<Manifest> {
  // the newest build when it is intact and up to date; otherwise build again
  let built: Manifest | undefined;
  try {
    built = readManifest(root, { home: resolvePaths(io.env, root).home });
  } catch (e) {
    if (!(e instanceof BuildError)) throw e;
  }
  if (built) return built;
  const { result } = await buildWithCli(root, { env: io.env });
  if (!result.manifest) {
    for (const d of result.diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
    throw new CliError("lash agents: the project does not build (the problems are above)", ExitCode.failed);
  }
  return result.manifest;
}

export async function runAgents(argv: readonly string[], io: MainIO): Promise<number> {
  const [action = "list", ...rest] = argv;
  if (action === "--help" || action === "-h" || action === "help") {
    const { helpText } = await import("./help.ts");
    io.stdout.write(helpText("agents"));
    return ExitCode.ok;
  }
  if (action !== "list" && action !== "show")
    throw usageError(`unknown agents command "${action}"; expected list or show <name>`);
  const { values, positionals } = parse(
    rest,
    { json: { type: "boolean" }, cwd: { type: "string" } },
    `lash agents ${action}`,
  );
  const root = projectRoot(values.cwd as string | undefined);
  const manifest = await currentManifest(root, io);
  if (action === "list") {
    if (positionals.length) throw usageError(`lash agents list takes no arguments (got "${positionals[0]}")`);
    if (values.json) {
      io.stdout.write(
        `${JSON.stringify(manifest.agents.map((a) => ({ name: a.name, description: a.description, mode: a.mode, model: a.model ?? null, source: a.source })))}\n`,
      );
      return ExitCode.ok;
    }
    if (manifest.agents.length === 0) io.stdout.write("no agents (add agents/<name>.agent.md)\n");
    const width = Math.max(0, ...manifest.agents.map((a) => a.name.length));
    for (const a of manifest.agents)
      io.stdout.write(`${a.name.padEnd(width)}  ${a.description}${a.mode === "rlm" ? " [rlm]" : ""}\n`);
    return ExitCode.ok;
  }
  const name = positionals[0];
  if (name === undefined || positionals.length > 1)
    throw usageError("lash agents show expects one agent name");
  const agent = manifest.agents.find((a) => a.name === name);
  if (!agent) {
    const names = manifest.agents.map((a) => a.name);
    throw new CliError(
      `lash agents: no agent "${name}" in build ${manifest.hash.slice(0, 12)}${names.length ? ` (agents: ${names.join(", ")})` : ""}`,
      ExitCode.failed,
    );
  }
  if (values.json) {
    io.stdout.write(`${canonicalJson(agent)}\n`);
    return ExitCode.ok;
  }
  io.stdout.write(showAgent(agent, manifest));
  return ExitCode.ok;
}

function showAgent(a: ResolvedAgent, m: Manifest): string {
  const lines = [
    `${a.name} — ${a.description}`,
    `  source:  ${a.source}`,
    `  build:   ${BUILD_DIR}/${m.hash}.json`,
    `  mode:    ${a.mode}`,
    `  model:   ${a.model ?? "(lash's default)"}${a.compatibleModels ? ` (compatible: ${a.compatibleModels.join(", ")})` : ""}`,
    `  tools:   ${a.tools.length ? a.tools.map((t) => `${t.name}${t.kind === "agent" ? " (agent)" : ""}${t.access ? ` [${t.access}]` : ""}`).join(", ") : "(none)"}`,
    ...(a.skills ? [`  skills:  ${a.skills.join(", ")}`] : []),
    ...(a.maxTurns !== undefined ? [`  maxTurns: ${a.maxTurns}`] : []),
    ...(a.budget ? [`  budget:  ${JSON.stringify(a.budget)}`] : []),
    ...(a.schedule !== undefined ? [`  schedule: ${JSON.stringify(a.schedule)}`] : []),
    ...(a.loop ? [`  loop:    ${JSON.stringify(a.loop)}`] : []),
    ...(a.input ? [`  input:   ${JSON.stringify(a.input)}`] : []),
    ...(a.output ? [`  output:  ${JSON.stringify(a.output)}`] : []),
    ...(a.policy ? [`  policy:  ${JSON.stringify(a.policy)}`] : []),
    ...(a.acl ? [`  acl:     ${JSON.stringify(a.acl)}`] : []),
    "",
    "Instructions:",
    ...a.instructions.split("\n").map((l) => (l === "" ? "" : `  ${l}`)),
  ];
  return `${lines.join("\n")}\n`;
}
