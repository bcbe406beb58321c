// Skills in the agentskills.io format: a directory holding `SKILL.md` — YAML front
// matter (`name`, `description`, optional `license`, `compatibility`, `metadata`,
// `allowed-tools`; other keys are kept) and a Markdown body (the instructions the
// model loads on demand). Discovery walks skill roots in precedence order; the
// first root that defines a name wins. Synchronous `node:fs` on purpose: callers
// (the build, the CLI, the plugin's set-up) read a handful of small files once.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, parse as parseYaml } from "yaml";

export interface SkillRoot {
  readonly dir: string;
  readonly source: "project" | "user";
}

export interface Skill {
  readonly name: string;
  readonly description: string;
  /** Absolute directory of the skill. */
  readonly dir: string;
  /** Absolute path of its SKILL.md. */
  readonly file: string;
  /** The Markdown after the front matter (trimmed). */
  readonly body: string;
  /** Every front-matter key, unknown ones included. */
  readonly frontMatter: Record<string, unknown>;
  /** `allowed-tools`, split on whitespace (a YAML list is accepted too). */
  readonly allowedTools?: readonly string[];
  /** Regular files under the skill directory, relative with `/`, sorted (symlinks are not followed). */
  readonly files: readonly string[];
  /** sha256 (hex) over the files in order: for each, `path`, a NUL, the byte length, a NUL, the bytes. */
  readonly sha256: string;
  readonly source: SkillRoot["source"];
}

export interface SkillProblem {
  readonly file: string;
  /** 1-based; 0 when the problem is not about a place in the file. */
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly severity: "error" | "warning";
}

export const SKILL_FILE = "SKILL.md";
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SKILL_COMPATIBILITY_MAX = 500;
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The roots lash searches, in precedence order: the workspace's `.lash/skills`,
 * `.agents/skills`, `.claude/skills`, then `extra` (config `skills.roots`, resolved
 * against the workspace), then `$LASH_HOME/skills`.
 */
export function defaultSkillRoots(
  workspace: string,
  lashHome: string,
  extra: readonly string[] = [],
): SkillRoot[] {
  return [
    { dir: join(workspace, ".lash", "skills"), source: "project" },
    { dir: join(workspace, ".agents", "skills"), source: "project" },
    { dir: join(workspace, ".claude", "skills"), source: "project" },
    ...extra.map((dir): SkillRoot => ({ dir: resolve(workspace, dir), source: "project" })),
    { dir: join(lashHome, "skills"), source: "user" },
  ];
}

/**
 * The extra skill roots the project file (`lash.yaml`, `lash.yml` or `lash.json` in the
 * workspace) lists under `skills`, as `lash build` reads them; [] when there is no project
 * file or it cannot be read (`lash build` reports those problems).
 */
export function projectFileSkillRoots(workspace: string): string[] {
  for (const name of ["lash.yaml", "lash.yml", "lash.json"]) {
    const file = join(workspace, name);
    if (!existsSync(file)) continue;
    try {
      const value = parseYaml(readFileSync(file, "utf8")) as { skills?: unknown } | null;
      const skills = value?.skills;
      return Array.isArray(skills) ? skills.filter((s): s is string => typeof s === "string") : [];
    } catch {
      return [];
    }
  }
  return [];
}

/**
 * Every valid skill under the roots (each root's immediate subdirectories that hold
 * a SKILL.md). Invalid skills are left out and their problems reported; a name
 * already defined by an earlier root is a warning and the earlier one wins.
 * Sorted by name.
 */
export function discoverSkills(roots: readonly SkillRoot[]): { skills: Skill[]; problems: SkillProblem[] } {
  const byName = new Map<string, Skill>();
  const problems: SkillProblem[] = [];
  for (const root of roots) {
    if (!isDirectory(root.dir)) continue;
    for (const entry of readdirSync(root.dir).sort()) {
      const dir = join(root.dir, entry);
      if (!isDirectory(dir) || !existsSync(join(dir, SKILL_FILE))) continue;
      const result = readSkill(dir, root.source);
      problems.push(...result.problems);
      const skill = result.skill;
      if (skill === undefined) continue;
      const earlier = byName.get(skill.name);
      if (earlier !== undefined) {
        problems.push({
          file: skill.file,
          line: 0,
          column: 0,
          severity: "warning",
          message: `skill '${skill.name}' is also defined in ${earlier.dir}, which takes precedence; this one is ignored`,
        });
        continue;
      }
      byName.set(skill.name, skill);
    }
  }
  const skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { skills, problems };
}

/** Validate one skill directory; `skill` is present when it has no errors (warnings allowed). */
export function validateSkillDir(dir: string): { skill?: Skill; problems: SkillProblem[] } {
  return readSkill(resolve(dir), "project");
}

function readSkill(dirIn: string, source: SkillRoot["source"]): { skill?: Skill; problems: SkillProblem[] } {
  const dir = resolve(dirIn);
  const file = join(dir, SKILL_FILE);
  const problems: SkillProblem[] = [];
  const at = (line: number, column: number, message: string, severity: SkillProblem["severity"] = "error") =>
    problems.push({ file, line, column, message, severity });
  if (!isDirectory(dir)) {
    at(0, 0, `${dir} is not a directory (a skill is a directory holding ${SKILL_FILE})`);
    return { problems };
  }
  if (!existsSync(file)) {
    at(0, 0, `no ${SKILL_FILE} in ${dir} (a skill is a directory holding ${SKILL_FILE})`);
    return { problems };
  }
  const text = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
  const split = splitFrontMatter(text);
  if (split === undefined) {
    at(
      1,
      1,
      `${SKILL_FILE} must start with YAML front matter between '---' lines (with at least 'name' and 'description')`,
    );
    return { problems };
  }
  // Front matter starts on line 2 of the file (line 1 is the opening `---`).
  const lineCounter = new LineCounter();
  const doc = parseDocument(split.yaml, { lineCounter, prettyErrors: false });
  const pos = (offset: number | undefined): [number, number] => {
    if (offset === undefined) return [2, 1];
    const p = lineCounter.linePos(offset);
    return [p.line + 1, p.col];
  };
  const nodePos = (node: unknown): [number, number] => {
    const range = (node as Node | undefined)?.range;
    return pos(range?.[0]);
  };
  for (const error of doc.errors) {
    const [line, column] = pos(error.pos[0]);
    at(line, column, `front matter is not valid YAML: ${error.message.split("\n")[0]}`);
  }
  if (doc.errors.length > 0) return { problems };
  if (!isMap(doc.contents)) {
    at(2, 1, "front matter must be a YAML mapping with at least 'name' and 'description'");
    return { problems };
  }
  const frontMatter = (doc.toJS() ?? {}) as Record<string, unknown>;
  const keyNode = new Map<string, Node>();
  const valueNode = new Map<string, Node>();
  for (const item of doc.contents.items) {
    if (isScalar(item.key)) {
      keyNode.set(String(item.key.value), item.key);
      if (item.value) valueNode.set(String(item.key.value), item.value as Node);
    }
  }
  const valueAt = (key: string): [number, number] => nodePos(valueNode.get(key) ?? keyNode.get(key));
  const dirName = basename(dir);

  // name
  const name = frontMatter.name;
  if (name === undefined) {
    at(2, 1, `front matter is missing 'name' (use the directory name: name: ${dirName})`);
  } else if (typeof name !== "string") {
    at(...valueAt("name"), "'name' must be a string");
  } else {
    const normalized = name.normalize("NFKC");
    if (normalized.length === 0 || normalized.length > SKILL_NAME_MAX) {
      at(
        ...valueAt("name"),
        `'name' must be 1 to ${SKILL_NAME_MAX} characters (it has ${normalized.length})`,
      );
    } else if (!NAME_PATTERN.test(normalized)) {
      at(
        ...valueAt("name"),
        `'name' may hold only lowercase letters, digits and single hyphens, not at the start or end (got '${name}')`,
      );
    }
    if (normalized !== dirName.normalize("NFKC")) {
      at(
        ...valueAt("name"),
        `'name' must match the directory name: the directory is '${dirName}', the name is '${name}' (rename one of them)`,
      );
    }
  }
  // description
  const description = frontMatter.description;
  if (description === undefined) {
    at(2, 1, "front matter is missing 'description' (what the skill does and when to use it)");
  } else if (typeof description !== "string" || description.trim() === "") {
    at(...valueAt("description"), "'description' must be a non-empty string");
  } else if (description.length > SKILL_DESCRIPTION_MAX) {
    at(
      ...valueAt("description"),
      `'description' must be at most ${SKILL_DESCRIPTION_MAX} characters (it has ${description.length})`,
    );
  }
  // optional fields
  if (frontMatter.license !== undefined && typeof frontMatter.license !== "string") {
    at(...valueAt("license"), "'license' must be a string (a license name or the name of a bundled file)");
  }
  const compatibility = frontMatter.compatibility;
  if (compatibility !== undefined) {
    if (typeof compatibility !== "string" || compatibility.trim() === "") {
      at(...valueAt("compatibility"), "'compatibility' must be a non-empty string");
    } else if (compatibility.length > SKILL_COMPATIBILITY_MAX) {
      at(
        ...valueAt("compatibility"),
        `'compatibility' must be at most ${SKILL_COMPATIBILITY_MAX} characters (it has ${compatibility.length})`,
      );
    }
  }
  const metadata = frontMatter.metadata;
  if (metadata !== undefined) {
    if (!isMap(valueNode.get("metadata"))) {
      at(...valueAt("metadata"), "'metadata' must be a mapping of string keys to string values");
    } else {
      for (const [key, value] of Object.entries(metadata as Record<string, unknown>)) {
        if (typeof value !== "string") {
          at(
            ...valueAt("metadata"),
            `'metadata.${key}' should be a string (quote it: ${key}: "${String(value)}")`,
            "warning",
          );
        }
      }
    }
  }
  let allowedTools: string[] | undefined;
  const rawAllowed = frontMatter["allowed-tools"];
  if (rawAllowed !== undefined) {
    const node = valueNode.get("allowed-tools");
    if (typeof rawAllowed === "string") {
      allowedTools = rawAllowed.split(/\s+/).filter((t) => t !== "");
    } else if (isSeq(node) && (rawAllowed as unknown[]).every((t) => typeof t === "string")) {
      allowedTools = rawAllowed as string[];
    } else {
      at(...valueAt("allowed-tools"), "'allowed-tools' must be a space-separated string of tool names");
    }
  }
  const body = split.body.trim();
  if (body === "")
    at(split.bodyLine, 1, `${SKILL_FILE} has no instructions after the front matter`, "warning");

  if (problems.some((p) => p.severity === "error")) return { problems };
  const files = listFiles(dir);
  const skill: Skill = {
    name: (name as string).normalize("NFKC"),
    description: (description as string).trim(),
    dir,
    file,
    body,
    frontMatter,
    ...(allowedTools !== undefined ? { allowedTools } : {}),
    files,
    sha256: hashFiles(dir, files),
    source,
  };
  return { skill, problems };
}

function splitFrontMatter(text: string): { yaml: string; body: string; bodyLine: number } | undefined {
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trimEnd() !== "---") return undefined;
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]?.trimEnd() === "---") {
      return {
        yaml: lines.slice(1, i).join("\n"),
        body: lines.slice(i + 1).join("\n"),
        bodyLine: i + 2,
      };
    }
  }
  return undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Regular files under `dir` (relative, `/`-separated, sorted); symlinks and `.git` are skipped. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel))) {
      if (entry === ".git") continue;
      const relPath = rel === "" ? entry : `${rel}/${entry}`;
      const st = lstatSync(join(dir, relPath));
      if (st.isDirectory()) walk(relPath);
      else if (st.isFile()) out.push(relPath);
    }
  };
  walk("");
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function hashFiles(dir: string, files: readonly string[]): string {
  const hash = createHash("sha256");
  for (const rel of files) {
    const bytes = readFileSync(join(dir, rel));
    hash.update(`${rel}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest("hex");
}
