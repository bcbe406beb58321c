// `lash build`: parse the project file and every agent spec, check models and references,
// collect every problem at once (file:line:column), and compile a content-addressed
// manifest (`.lash/build/<sha256>.json`). Synchronous node:fs: it is a build step.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, posix, relative, resolve, sep } from "node:path";
import type { JsonSchema } from "@lash/core";
import { AGENT_TOOLS, FS_READ_TOOLS, FS_WRITE_TOOLS, PLAN_TOOLS, RUNTIME_TOOLS } from "@lash/policy";
import { canonicalJson, resolveOutputSchema, sha256Hex } from "@lash/sansio";
import { Cron } from "croner";
import picomatch from "picomatch";
import {
  MANIFEST_VERSION,
  type Manifest,
  type ManifestSkill,
  type ResolvedAgent,
  type ResolvedTool,
} from "./manifest.ts";
import { skillsCatalog } from "./skills/plugin.ts";
import {
  closest,
  type Diagnostic,
  decodeWithPositions,
  didYouMeanText,
  parseYamlSource,
  type SourceDoc,
  splitFrontMatter,
} from "./source.ts";
import { AgentSpec, ProjectFile } from "./spec.ts";

/** The tools every lash session can have, by name (the CLI may pass its own list). */
export const DEFAULT_BUILTIN_TOOLS: readonly string[] = [
  ...FS_READ_TOOLS,
  ...FS_WRITE_TOOLS,
  ...RUNTIME_TOOLS,
  ...PLAN_TOOLS,
  ...AGENT_TOOLS,
  "load_skill",
  "read_skill_file",
];

export const PROJECT_FILES = ["lash.yaml", "lash.yml", "lash.json"] as const;
export const DEFAULT_AGENT_DIRS = ["agents", "."] as const;
export const BUILD_DIR = ".lash/build";

/** A skill the build resolves (discovered by the skills module). */
export interface BuildSkill {
  readonly name: string;
  readonly description: string;
  /** Absolute directory. */
  readonly dir: string;
  /** As the manifest records it: project-relative, or `~lash/…` under `$LASH_HOME`. */
  readonly displayDir: string;
  /** Files of the skill, relative to `dir` (posix), sorted. */
  readonly files: readonly string[];
}

export interface BuildOptions {
  /** The project directory (where lash.yaml is). */
  readonly root: string;
  readonly lashVersion: string;
  /** The provider catalog: every id, and whether an id is known (dated snapshots, Bedrock ids …). */
  readonly models?: { readonly ids: readonly string[]; readonly known?: (id: string) => boolean };
  /** Built-in tool names (default {@link DEFAULT_BUILTIN_TOOLS}). */
  readonly builtinTools?: readonly string[];
  /** The project's skills (after discovery); absent: skills are not checked. */
  readonly skills?: readonly BuildSkill[];
  /** Problems found elsewhere (skill discovery, MCP checks), reported with the rest. */
  readonly extraDiagnostics?: readonly Diagnostic[];
  /** Render the skills catalog appended to an agent's instructions (default: a Markdown list). */
  readonly skillsCatalog?: (skills: readonly { name: string; description: string }[]) => string;
}

export interface ParsedAgent {
  readonly spec: AgentSpec;
  readonly source: string;
  readonly doc: SourceDoc;
  /** Path of the spec's values inside the YAML (front matter: []). */
}

export interface ProjectParse {
  readonly root: string;
  readonly projectFile?: string;
  readonly project: ProjectFile;
  readonly projectDoc?: SourceDoc;
  readonly agents: readonly ParsedAgent[];
  /** Names of agents whose spec has errors (references to them are not reported again). */
  readonly brokenAgents: ReadonlySet<string>;
  /** Project-relative path → file text (every input read so far). */
  readonly inputs: Map<string, Buffer>;
  readonly diagnostics: Diagnostic[];
}

export interface BuildResult {
  readonly ok: boolean;
  readonly diagnostics: readonly Diagnostic[];
  readonly manifest?: Manifest;
  /** The manifest file written (absolute), when ok and written. */
  readonly manifestPath?: string;
}

/** Order by UTF-16 code units: the same everywhere (`localeCompare` depends on the locale). */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const rel = (root: string, p: string) => relative(root, p).split(sep).join(posix.sep) || ".";

/** sha256 of a file's bytes (as text when it is UTF-8, which is the usual sha256 of the file). */
export function fileSha256(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes)
    ? sha256Hex(text)
    : sha256Hex(`binary:${bytes.toString("latin1")}`);
}

/** The project file of `root` (lash.yaml, lash.yml or lash.json), if any. */
export function findProjectFile(root: string): string | undefined {
  for (const f of PROJECT_FILES) if (existsSync(join(root, f))) return join(root, f);
  return undefined;
}

/** Parse the project file and every agent spec; syntax and schema problems go to `diagnostics`. */
export function parseProject(root: string): ProjectParse {
  root = resolve(root);
  const diagnostics: Diagnostic[] = [];
  const inputs = new Map<string, Buffer>();
  const read = (abs: string): string => {
    const bytes = readFileSync(abs);
    inputs.set(rel(root, abs), bytes);
    return bytes.toString("utf8");
  };
  let project: ProjectFile = {};
  let projectDoc: SourceDoc | undefined;
  const projectPath = findProjectFile(root);
  if (projectPath) {
    const file = rel(root, projectPath);
    const text = read(projectPath);
    projectDoc = parseYamlSource(file, text, text, 0, diagnostics);
    if (projectDoc.value !== undefined) {
      const value = projectDoc.value ?? {};
      const decoded = decodeWithPositions(ProjectFile, { ...projectDoc, value }, diagnostics, file);
      if (decoded) project = decoded;
    }
  }
  const agents: ParsedAgent[] = [];
  const brokenAgents = new Set<string>();
  const seenFiles = new Set<string>();
  for (const dir of project.agents ?? DEFAULT_AGENT_DIRS) {
    const abs = resolve(root, dir);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) {
      if (project.agents && projectDoc) {
        const i = project.agents.indexOf(dir);
        diagnostics.push({
          file: projectDoc.file,
          ...projectDoc.at(["agents", i]),
          severity: "error",
          message: `agent directory "${dir}" does not exist`,
        });
      }
      continue;
    }
    const isRoot = abs === root;
    for (const name of readdirSync(abs).sort()) {
      const path = join(abs, name);
      const isAgentMd = name.endsWith(".agent.md") || name.endsWith(".agent");
      const isYaml = !isRoot && (name.endsWith(".yaml") || name.endsWith(".yml"));
      if ((!isAgentMd && !isYaml) || seenFiles.has(path) || !statSync(path).isFile()) continue;
      seenFiles.add(path);
      const file = rel(root, path);
      const text = read(path);
      const parsed = isAgentMd
        ? parseAgentMd(file, text, diagnostics, brokenAgents)
        : parseAgentYaml(file, text, diagnostics, brokenAgents);
      if (parsed) agents.push(parsed);
    }
  }
  return {
    root,
    ...(projectPath ? { projectFile: rel(root, projectPath) } : {}),
    project,
    ...(projectDoc ? { projectDoc } : {}),
    agents,
    brokenAgents,
    inputs,
    diagnostics,
  };
}

function parseAgentMd(
  file: string,
  text: string,
  diagnostics: Diagnostic[],
  broken: Set<string>,
): ParsedAgent | undefined {
  const split = splitFrontMatter(text);
  if ("error" in split) {
    diagnostics.push({ file, line: 1, column: 1, severity: "error", message: split.error });
    return undefined;
  }
  const doc = parseYamlSource(file, text, split.yaml, split.yamlOffset, diagnostics);
  if (doc.value === undefined) return undefined;
  if (!isRecord(doc.value)) {
    diagnostics.push({
      file,
      ...doc.at([]),
      severity: "error",
      message: "the front matter must be a YAML mapping",
    });
    return undefined;
  }
  if ("instructions" in doc.value && split.body !== "") {
    diagnostics.push({
      file,
      ...doc.at(["instructions"], true),
      severity: "error",
      message: "instructions are given twice: in the front matter and as the Markdown body; keep one",
    });
    return undefined;
  }
  const value = split.body !== "" ? { ...doc.value, instructions: split.body } : doc.value;
  const spec = decodeWithPositions(AgentSpec, { ...doc, value }, diagnostics, "the agent spec");
  if (!spec && typeof value.name === "string") broken.add(value.name);
  return spec ? { spec, source: file, doc } : undefined;
}

function parseAgentYaml(
  file: string,
  text: string,
  diagnostics: Diagnostic[],
  broken: Set<string>,
): ParsedAgent | undefined {
  const doc = parseYamlSource(file, text, text, 0, diagnostics);
  if (doc.value === undefined) return undefined;
  if (!isRecord(doc.value)) {
    diagnostics.push({
      file,
      ...doc.at([]),
      severity: "error",
      message: "an agent spec must be a YAML mapping",
    });
    return undefined;
  }
  const spec = decodeWithPositions(AgentSpec, doc, diagnostics, "the agent spec");
  if (!spec && typeof doc.value.name === "string") broken.add(doc.value.name);
  return spec ? { spec, source: file, doc } : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const toolName = (t: AgentSpec["tools"] extends readonly (infer T)[] | undefined ? T : never): string =>
  typeof t === "string" ? t : t.name;

/** Default rendering of the skills catalog an agent's instructions get. */
/** The catalog the build appends to an agent's instructions: the skills plugin's own text. */
export function defaultSkillsCatalog(skills: readonly { name: string; description: string }[]): string {
  return skillsCatalog(skills) ?? "";
}

/**
 * Check a parsed project and compile its manifest. Returns every problem found
 * (errors and warnings); the manifest only when there are no errors.
 */
export function compileProject(parse: ProjectParse, options: BuildOptions): BuildResult {
  const { root, project, projectDoc } = parse;
  const diagnostics: Diagnostic[] = [...parse.diagnostics, ...(options.extraDiagnostics ?? [])];
  const err = (doc: SourceDoc, path: readonly (string | number)[], message: string, key = false) =>
    diagnostics.push({ file: doc.file, ...doc.at(path, key), severity: "error", message });
  const warn = (doc: SourceDoc, path: readonly (string | number)[], message: string, key = false) =>
    diagnostics.push({ file: doc.file, ...doc.at(path, key), severity: "warning", message });

  const builtins = new Set(options.builtinTools ?? DEFAULT_BUILTIN_TOOLS);
  const servers = new Set(Object.keys(project.mcpServers ?? {}));
  const byName = new Map<string, ParsedAgent>();
  for (const a of parse.agents) {
    const prev = byName.get(a.spec.name);
    if (prev) err(a.doc, ["name"], `agent "${a.spec.name}" is already defined in ${prev.source}`);
    else byName.set(a.spec.name, a);
  }
  const agentNames = [...byName.keys()];
  const modelIds = options.models?.ids ?? [];
  const knownModel = (id: string) =>
    options.models === undefined || (options.models.known?.(id) ?? modelIds.includes(id));
  const checkModel = (doc: SourceDoc, path: readonly (string | number)[], id: string) => {
    if (knownModel(id)) return;
    const tail = (m: string) => m.slice(m.indexOf("/") + 1);
    const sameTail = modelIds.filter((m) => tail(m) === id);
    const byTail = closest(id, modelIds.map(tail)).flatMap((t) => modelIds.filter((m) => tail(m) === t));
    const hints = sameTail.length
      ? sameTail
      : [...new Set([...closest(id, modelIds), ...byTail])].slice(0, 3);
    err(doc, path, `unknown model "${id}"${didYouMeanText(hints)}`);
  };
  if (project.defaults?.model && projectDoc)
    checkModel(projectDoc, ["defaults", "model"], project.defaults.model);

  const skillsByName = new Map((options.skills ?? []).map((s) => [s.name, s]));
  const referencedSkills = new Set<string>();
  let everyAgentListsSkills = parse.agents.length > 0;

  // references, per agent
  const edges = new Map<string, { to: string; index: number }[]>();
  for (const a of byName.values()) {
    const { spec, doc } = a;
    if (spec.model !== undefined) checkModel(doc, ["model"], spec.model);
    if (spec.model !== undefined && spec.compatibleModels !== undefined)
      err(doc, ["compatibleModels"], "give model or compatibleModels, not both", true);
    spec.compatibleModels?.forEach((glob, i) => {
      if (options.models === undefined) return;
      const isMatch = picomatch(glob);
      if (!modelIds.some((id) => isMatch(id)))
        err(
          doc,
          ["compatibleModels", i],
          `no model in the catalog matches "${glob}"${didYouMeanText(closest(glob, modelIds))}`,
        );
    });
    const out: { to: string; index: number }[] = [];
    spec.tools?.forEach((t, i) => {
      const name = toolName(t);
      const path = typeof t === "string" ? ["tools", i] : ["tools", i, "name"];
      if (name.startsWith("mcp:")) {
        const server = name.slice(4).split("/")[0] ?? "";
        if (!servers.has(server))
          err(
            doc,
            path,
            `unknown MCP server "${server}" (tool "${name}")${servers.size ? didYouMeanText(closest(server, servers)) : `; add it under mcpServers in ${parse.projectFile ?? "lash.yaml"}`}`,
          );
      } else if (byName.has(name)) {
        out.push({ to: name, index: i });
      } else if (!builtins.has(name) && !parse.brokenAgents.has(name)) {
        err(
          doc,
          path,
          `unknown tool "${name}"${didYouMeanText(closest(name, [...builtins, ...agentNames]))}`,
        );
      }
    });
    edges.set(spec.name, out);
    if (spec.skills === undefined) everyAgentListsSkills = false;
    spec.skills?.forEach((s, i) => {
      referencedSkills.add(s);
      if (options.skills !== undefined && !skillsByName.has(s))
        err(doc, ["skills", i], `unknown skill "${s}"${didYouMeanText(closest(s, skillsByName.keys()))}`);
    });
    for (const key of ["input", "output"] as const) {
      const v = spec[key];
      if (v === undefined) continue;
      const r = resolveOutputSchema(v);
      if (!r.ok) err(doc, [key], `${key}: ${r.error}`);
    }
    if (spec.schedule !== undefined) checkSchedule(doc, spec.schedule, err);
    checkLoop(doc, spec, err);
    // unused grants: a policy allow pattern that matches none of the agent's tools
    if (spec.policy?.allow && spec.tools) {
      const names = spec.tools.map(toolName);
      spec.policy.allow.forEach((p, i) => {
        if (p.startsWith("group:")) return;
        const m = picomatch(p);
        if (!names.some((n) => n === p || m(n) || m(n.replace(/^mcp:([^/]+)\/(.+)$/, "mcp__$1__$2"))))
          warn(doc, ["policy", "allow", i], `policy.allow grants "${p}", which none of the agent's tools is`);
      });
    }
  }

  // agent → agent cycles, each reported once, at the first agent's reference
  const reported = new Set<string>();
  const visit = (name: string, stack: string[]) => {
    const at = stack.indexOf(name);
    if (at >= 0) {
      const cycle = stack.slice(at);
      const key = [...cycle].sort().join(",");
      if (reported.has(key)) return;
      reported.add(key);
      const first = cycle[0] as string;
      const next = cycle[1] ?? first;
      const agent = byName.get(first) as ParsedAgent;
      const index = (edges.get(first) ?? []).find((e) => e.to === next)?.index ?? 0;
      const t = agent.spec.tools?.[index];
      err(
        agent.doc,
        typeof t === "string" || t === undefined ? ["tools", index] : ["tools", index, "name"],
        `agent cycle: ${[...cycle, first].join(" → ")}`,
      );
      return;
    }
    if (stack.length > byName.size) return;
    for (const e of edges.get(name) ?? []) visit(e.to, [...stack, name]);
  };
  for (const name of [...byName.keys()].sort()) visit(name, []);

  // extra skill roots
  project.skills?.forEach((dir, i) => {
    const abs = resolve(root, dir);
    if (projectDoc && (!existsSync(abs) || !statSync(abs).isDirectory()))
      err(projectDoc, ["skills", i], `skill root "${dir}" does not exist`);
  });

  // entry
  let entry: Manifest["project"]["entry"];
  if (project.entry !== undefined && projectDoc) {
    const hash = project.entry.lastIndexOf("#");
    if (hash > 0 && /\.(m|c)?[jt]s$/.test(project.entry.slice(0, hash))) {
      const file = project.entry.slice(0, hash);
      const abs = resolve(root, file);
      if (!existsSync(abs)) err(projectDoc, ["entry"], `entry file "${file}" does not exist`);
      else {
        parse.inputs.set(rel(root, abs), readFileSync(abs));
        entry = { function: `${rel(root, abs)}#${project.entry.slice(hash + 1)}` };
      }
    } else if (byName.has(project.entry)) entry = { agent: project.entry };
    else
      err(
        projectDoc,
        ["entry"],
        `entry "${project.entry}" is neither an agent nor a function (path.ts#name)${didYouMeanText(closest(project.entry, agentNames))}`,
      );
  }

  // skills
  const manifestSkills: ManifestSkill[] = [];
  if (options.skills) {
    for (const s of [...options.skills].sort((a, b) => byCodePoint(a.name, b.name))) {
      const hashes: Record<string, string> = {};
      for (const f of s.files) {
        const bytes = readFileSync(join(s.dir, f));
        hashes[f] = fileSha256(bytes);
        parse.inputs.set(posix.join(s.displayDir, f), bytes);
      }
      manifestSkills.push({
        name: s.name,
        description: s.description,
        dir: s.displayDir,
        sha256: sha256Hex(canonicalJson(hashes)),
      });
      if (everyAgentListsSkills && !referencedSkills.has(s.name) && projectDoc)
        diagnostics.push({
          file: `${s.displayDir}/SKILL.md`,
          line: 1,
          column: 1,
          severity: "warning",
          message: `skill "${s.name}" is not in any agent's skills`,
        });
    }
  }

  const errors = diagnostics.filter((d) => d.severity === "error");
  const sorted = sortDiagnostics(diagnostics);
  if (errors.length > 0) return { ok: false, diagnostics: sorted };

  const catalog = options.skillsCatalog ?? defaultSkillsCatalog;
  const agents: ResolvedAgent[] = [...byName.values()]
    .sort((a, b) => byCodePoint(a.spec.name, b.spec.name))
    .map((a) => resolveAgent(a, project, modelIds, manifestSkills, catalog, builtins));
  const inputs = [...parse.inputs.entries()]
    .map(([path, bytes]) => ({ path, sha256: fileSha256(bytes) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const body: Omit<Manifest, "hash"> = {
    version: MANIFEST_VERSION,
    lashVersion: options.lashVersion,
    inputs,
    project: {
      ...(project.defaults ? { defaults: project.defaults } : {}),
      ...(entry ? { entry } : {}),
      ...(project.mcpServers ? { mcpServers: project.mcpServers } : {}),
      ...(project.policy ? { policy: project.policy } : {}),
    },
    agents,
    skills: manifestSkills,
  };
  const hash = sha256Hex(canonicalJson(body));
  return { ok: true, diagnostics: sorted, manifest: { ...body, hash } as Manifest };
}

function resolveAgent(
  a: ParsedAgent,
  project: ProjectFile,
  modelIds: readonly string[],
  skills: readonly ManifestSkill[],
  catalog: (skills: readonly { name: string; description: string }[]) => string,
  builtins: ReadonlySet<string>,
): ResolvedAgent {
  const { spec } = a;
  const model =
    spec.model ??
    (spec.compatibleModels
      ? [...modelIds].sort().find((id) => spec.compatibleModels?.some((g) => picomatch(g)(id)))
      : undefined) ??
    project.defaults?.model;
  const visible = spec.skills ? skills.filter((s) => spec.skills?.includes(s.name)) : skills;
  const skillText = catalog(visible.map((s) => ({ name: s.name, description: s.description })));
  const instructions = [spec.instructions ?? "", skillText].filter((s) => s !== "").join("\n\n");
  const tools: ResolvedTool[] = (spec.tools ?? []).map((t) => {
    const name = toolName(t);
    const kind: ResolvedTool["kind"] = name.startsWith("mcp:")
      ? "mcp"
      : builtins.has(name)
        ? "builtin"
        : "agent";
    return { name, kind, ...(typeof t !== "string" && t.access ? { access: t.access } : {}) };
  });
  const schema = (v: unknown): JsonSchema | undefined => {
    const r = resolveOutputSchema(v);
    return r.ok ? (r.schema as JsonSchema) : undefined;
  };
  const input = spec.input !== undefined ? schema(spec.input) : undefined;
  const output = spec.output !== undefined ? schema(spec.output) : undefined;
  return {
    name: spec.name,
    description: spec.description,
    ...(model !== undefined ? { model } : {}),
    ...(spec.compatibleModels ? { compatibleModels: spec.compatibleModels } : {}),
    mode: spec.mode ?? project.defaults?.mode ?? "standard",
    instructions,
    tools,
    ...(spec.policy ? { policy: spec.policy } : {}),
    ...(spec.skills ? { skills: spec.skills } : {}),
    ...(input ? { input } : {}),
    ...(output ? { output } : {}),
    ...(spec.maxTurns !== undefined ? { maxTurns: spec.maxTurns } : {}),
    ...(spec.budget ? { budget: spec.budget } : {}),
    ...(spec.schedule !== undefined ? { schedule: spec.schedule } : {}),
    ...(spec.schedule !== undefined && spec.instruction !== undefined
      ? {
          loop: {
            instruction: spec.instruction,
            missed: spec.missed ?? "run",
            concurrency: spec.concurrency ?? 1,
            ...(spec.timeout !== undefined ? { timeout: spec.timeout } : {}),
            ...(spec.retry !== undefined ? { retry: spec.retry } : {}),
          },
        }
      : {}),
    ...(spec.acl ? { acl: spec.acl } : {}),
    source: a.source,
  };
}

/** The loop fields: `instruction` with `schedule`, and none of the loop's settings without one. */
function checkLoop(
  doc: SourceDoc,
  spec: AgentSpec,
  err: (doc: SourceDoc, path: readonly (string | number)[], message: string) => void,
) {
  if (spec.schedule !== undefined && spec.instruction === undefined)
    err(
      doc,
      ["schedule"],
      'schedule: a scheduled agent needs an instruction, the message each firing sends it; add instruction: "<what to do each time>"',
    );
  if (spec.schedule === undefined)
    for (const key of ["instruction", "missed", "concurrency", "timeout", "retry"] as const)
      if (spec[key] !== undefined)
        err(
          doc,
          [key],
          `${key}: only a scheduled agent has it; add schedule: (a cron string, { cron, tz } or { every: "15m" }) or remove ${key}`,
        );
}

function checkSchedule(
  doc: SourceDoc,
  schedule: AgentSpec["schedule"],
  err: (doc: SourceDoc, path: readonly (string | number)[], message: string) => void,
) {
  if (schedule === undefined) return;
  const cron = typeof schedule === "string" ? schedule : "cron" in schedule ? schedule.cron : undefined;
  const path = typeof schedule === "string" ? ["schedule"] : ["schedule", "cron"];
  if (cron !== undefined) {
    try {
      new Cron(cron, { paused: true }).stop();
    } catch (e) {
      err(doc, path, `schedule: invalid cron "${cron}": ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (typeof schedule !== "string" && "tz" in schedule && schedule.tz !== undefined) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: schedule.tz });
    } catch {
      err(
        doc,
        ["schedule", "tz"],
        `schedule: unknown time zone "${schedule.tz}" (an IANA name such as "Europe/Berlin")`,
      );
    }
  }
}

export function sortDiagnostics(ds: readonly Diagnostic[]): Diagnostic[] {
  return [...ds].sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.column - b.column ||
      byCodePoint(a.message, b.message),
  );
}

/** Parse, check and compile `options.root`; with `write`, write the manifest to `.lash/build/<hash>.json`. */
export function buildProject(options: BuildOptions & { readonly write?: boolean }): BuildResult {
  const parse = parseProject(options.root);
  const result = compileProject(parse, options);
  if (!result.ok || !result.manifest || options.write === false) return result;
  const dir = join(parse.root, BUILD_DIR);
  mkdirSync(dir, { recursive: true });
  const manifestPath = join(dir, `${result.manifest.hash}.json`);
  writeFileSync(manifestPath, `${canonicalJson(result.manifest)}\n`);
  // skills.lock: written when there are skills (or to empty a stale one)
  if (result.manifest.skills.length > 0 || existsSync(join(parse.root, "skills.lock")))
    writeFileSync(join(parse.root, "skills.lock"), skillsLock(result.manifest.skills));
  return { ...result, manifestPath };
}

/** Every regular file under `dir` (posix paths relative to it, sorted); symlinks are not followed. */
export function skillFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = sub === "" ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(path);
    }
  };
  walk("");
  return out.sort();
}

/** `skills.lock`: each skill's directory and the sha256 over its files. */
export function skillsLock(skills: readonly ManifestSkill[]): string {
  const entries = Object.fromEntries(skills.map((s) => [s.name, { dir: s.dir, sha256: s.sha256 }]));
  return `${JSON.stringify({ version: 1, skills: entries }, null, 2)}\n`;
}

/** A build that cannot be used as it is: corrupt, modified, stale, or an ambiguous `--manifest`. */
export class BuildError extends Error {
  override readonly name = "BuildError";
}

export interface ReadManifestOptions {
  /** A prefix of the build's hash; absent: the newest build. */
  readonly hash?: string;
  /** `$LASH_HOME`, for inputs recorded as `~lash/…` (skills there); absent: those are not re-checked. */
  readonly home?: string;
  /** Re-hash the recorded inputs and refuse a build whose files changed (default true). */
  readonly checkInputs?: boolean;
}

/**
 * The newest manifest in `root/.lash/build` (or the one whose hash starts with `hash`), verified:
 * the file must match its own hash, and (unless `checkInputs: false`) every recorded input must
 * still have the content it was built from. Throws {@link BuildError} (naming the file and saying
 * `run \`lash build\``) when it is corrupt, modified or stale, or when the prefix is ambiguous;
 * undefined when there is no build at all.
 */
export function readManifest(
  root: string,
  hashOrOptions?: string | ReadManifestOptions,
): Manifest | undefined {
  const options: ReadManifestOptions =
    typeof hashOrOptions === "string" ? { hash: hashOrOptions } : (hashOrOptions ?? {});
  const { hash } = options;
  root = resolve(root);
  const dir = join(root, BUILD_DIR);
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((f) => /^[0-9a-f]{64}\.json$/.test(f) && (hash === undefined || f.startsWith(hash)))
    .map((f) => ({ f, t: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t || byCodePoint(a.f, b.f));
  if (hash !== undefined && files.length > 1)
    throw new BuildError(
      `--manifest ${hash} matches ${files.length} builds: ${files
        .map((x) => x.f.slice(0, -5))
        .sort(byCodePoint)
        .join(", ")}; give more of the hash`,
    );
  const first = files[0];
  if (!first) return undefined;
  const path = join(dir, first.f);
  const expected = first.f.slice(0, -5);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  } catch (e) {
    throw new BuildError(
      `${path} is not a valid build (${e instanceof Error ? e.message : String(e)}); run \`lash build\``,
    );
  }
  const { hash: recorded, ...body } = (isRecord(manifest) ? manifest : {}) as Partial<Manifest>;
  if (recorded !== expected || sha256Hex(canonicalJson(body)) !== expected)
    throw new BuildError(`${path} does not match its hash; run \`lash build\``);
  if (options.checkInputs !== false) {
    for (const input of manifest.inputs) {
      const abs = input.path.startsWith("~lash/")
        ? options.home !== undefined
          ? join(options.home, input.path.slice("~lash/".length))
          : undefined
        : resolve(root, input.path);
      if (abs === undefined) continue;
      let now: string | undefined;
      try {
        now = fileSha256(readFileSync(abs));
      } catch {
        now = undefined;
      }
      if (now !== input.sha256)
        throw new BuildError(
          `${input.path} ${now === undefined ? "is gone" : "changed"} since build ${expected.slice(0, 12)}; run \`lash build\``,
        );
    }
  }
  return manifest;
}
