// The skills plugin: the catalog (name + description of each skill) in the system
// prompt, and two read-only tools for progressive disclosure — `load_skill(name)`
// returns a skill's instructions, `read_skill_file(name, path)` one of its files,
// jailed to the skill's directory.
//
// `allowed-tools` only narrows: the tools a skill lists are the only ones its
// instructions may assume. `load_skill` reports which of them this session has and
// which it has not; nothing is ever added to the session's tools, and a listed tool
// the session lacks stays unavailable.
import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { type Plugin, type ToolContext, type ToolDefinition, ToolFailure, textOutput } from "@lash/core";
import { Effect } from "effect";
import type { Skill } from "./discover.ts";

export const SKILLS_PLUGIN = "skills";
export const LOAD_SKILL = "load_skill";
export const READ_SKILL_FILE = "read_skill_file";
/** Largest skill file `read_skill_file` returns (bigger ones are refused with the size). */
export const SKILL_FILE_MAX_BYTES = 512 * 1024;

export interface SkillsPluginOptions {
  /** The available skills (from `discoverSkills`). */
  readonly skills: readonly Skill[];
  /** Only these names are offered (a spec's `skills`); absent: every skill. Unknown names are ignored. */
  readonly only?: readonly string[];
  /**
   * Put the catalog in the system prompt (default true). `lash run` passes false: a built
   * agent's instructions already end with its catalog (the build applies it).
   */
  readonly catalog?: boolean;
}

/** The system-prompt section listing the skills (undefined when there are none). */
export function skillsCatalog(
  skills: readonly { readonly name: string; readonly description: string }[],
): string | undefined {
  if (skills.length === 0) return undefined;
  return [
    "## Skills",
    `Skills are instructions (and files) for particular tasks. When a task matches a skill's description, call \`${LOAD_SKILL}\` with its name before you start and follow what it says; read the files it mentions with \`${READ_SKILL_FILE}\`.`,
    "",
    ...skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, " ")}`),
  ].join("\n");
}

const invalid = (message: string) => new ToolFailure({ class: "invalidRequest", message });

/** The skills plugin (no tools and no prompt when no skill is available). */
export function skillsPlugin(options: SkillsPluginOptions): Plugin {
  const only = options.only === undefined ? undefined : new Set(options.only);
  const skills = options.skills.filter((s) => only === undefined || only.has(s.name));
  const byName = new Map(skills.map((s) => [s.name, s]));
  const names = skills.map((s) => s.name);
  const find = (name: unknown): Effect.Effect<Skill, ToolFailure> => {
    const skill = typeof name === "string" ? byName.get(name) : undefined;
    return skill
      ? Effect.succeed(skill)
      : Effect.fail(
          invalid(
            `no skill named ${JSON.stringify(name)}; available: ${names.length ? names.join(", ") : "(none)"}`,
          ),
        );
  };
  const sessionTools = (ctx: ToolContext): Effect.Effect<ReadonlySet<string> | undefined> => {
    const sessions = ctx.host?.sessions;
    if (sessions === undefined) return Effect.succeed(undefined);
    return sessions.toolDefinitions(ctx.sessionId).pipe(
      Effect.map((tools) => new Set(tools.map((t) => t.name)) as ReadonlySet<string>),
      Effect.orElseSucceed(() => undefined),
    );
  };

  const loadSkill: ToolDefinition<{ name: string }> = {
    name: LOAD_SKILL,
    description:
      "Load a skill's instructions by name (the skills are listed in the system prompt). Returns the skill's SKILL.md body and the list of its files, which read_skill_file reads.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", enum: names, description: "The skill's name." } },
      required: ["name"],
      additionalProperties: false,
    },
    readOnly: true,
    effects: ["read"],
    family: "read",
    execute: (args, ctx) =>
      Effect.gen(function* () {
        const skill = yield* find(args?.name);
        const parts = [`# Skill: ${skill.name}`, "", skill.body];
        const others = skill.files.filter((f) => f !== "SKILL.md");
        if (others.length > 0)
          parts.push(
            "",
            `Files of this skill (read them with ${READ_SKILL_FILE}, name "${skill.name}"):`,
            ...others.map((f) => `- ${f}`),
          );
        if (skill.allowedTools !== undefined) {
          const have = yield* sessionTools(ctx);
          const base = (t: string) => t.replace(/\(.*$/, "");
          const missing = have ? skill.allowedTools.filter((t) => !have.has(base(t))) : [];
          parts.push(
            "",
            `This skill's instructions assume only these tools: ${skill.allowedTools.join(" ") || "(none)"}.` +
              (missing.length > 0
                ? ` Not available in this session (the skill does not grant tools): ${missing.join(", ")}.`
                : ""),
          );
        }
        return textOutput(parts.join("\n"), {
          details: { skill: skill.name, dir: skill.dir, sha256: skill.sha256 },
        });
      }),
  };

  const readSkillFile: ToolDefinition<{ name: string; path: string }> = {
    name: READ_SKILL_FILE,
    description:
      "Read one file of a skill (a path relative to the skill's directory, as load_skill lists them). Paths outside the skill's directory are refused.",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", enum: names, description: "The skill's name." },
        path: { type: "string", description: "Relative path inside the skill, e.g. references/guide.md." },
      },
      required: ["name", "path"],
      additionalProperties: false,
    },
    readOnly: true,
    effects: ["read"],
    family: "read",
    execute: (args) =>
      Effect.gen(function* () {
        const skill = yield* find(args?.name);
        const file = yield* Effect.try({
          try: () => jailedPath(skill.dir, args?.path),
          catch: (e) => (e instanceof ToolFailure ? e : invalid(String(e))),
        });
        const bytes = yield* Effect.try({
          try: () => readFileSync(file),
          catch: (e) =>
            new ToolFailure({
              class: "execution",
              message: `cannot read ${args.path} of skill ${skill.name}: ${e instanceof Error ? e.message : String(e)}`,
            }),
        });
        if (bytes.includes(0))
          return textOutput(
            `${args.path} is a binary file (${bytes.length} bytes); it cannot be shown as text.`,
          );
        return textOutput(bytes.toString("utf8"), { details: { skill: skill.name, path: args.path } });
      }),
  };

  const prompt = options.catalog === false ? undefined : skillsCatalog(skills);
  return {
    name: SKILLS_PLUGIN,
    ...(skills.length > 0 ? { tools: [loadSkill, readSkillFile] as readonly ToolDefinition[] } : {}),
    ...(prompt !== undefined ? { prompt } : {}),
    status: () => ({ skills: skills.map((s) => ({ name: s.name, dir: s.dir, source: s.source })) }),
  };
}

/**
 * The real path of `path` inside the skill directory `dir`, or a ToolFailure that
 * says why not: an absolute path, a `..` segment, a missing file, a directory, a
 * symlink that resolves outside the skill, or a file too large.
 */
export function jailedPath(dir: string, path: unknown): string {
  if (typeof path !== "string" || path.trim() === "")
    throw invalid("'path' must be a non-empty relative path");
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("~"))
    throw invalid(
      `'${path}' is absolute; give a path relative to the skill's directory (e.g. references/guide.md)`,
    );
  if (path.split(/[\\/]/).includes(".."))
    throw invalid(`'${path}' contains '..'; a skill's files are read only from inside its directory`);
  const root = realpathSync(dir);
  const target = join(root, path);
  try {
    lstatSync(target);
  } catch {
    throw invalid(`no file '${path}' in the skill (load_skill lists its files)`);
  }
  let real: string;
  try {
    real = realpathSync(target);
  } catch {
    throw invalid(`'${path}' is a symlink that points to a file that does not exist`);
  }
  const rel = relative(root, real);
  if (rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel))
    throw invalid(`'${path}' resolves outside the skill's directory (a symlink to ${real}); refused`);
  const st = lstatSync(real);
  if (st.isDirectory()) throw invalid(`'${path}' is a directory; name a file in it (load_skill lists them)`);
  if (st.size > SKILL_FILE_MAX_BYTES)
    throw invalid(
      `'${path}' is ${st.size} bytes, more than ${SKILL_FILE_MAX_BYTES} bytes; it is not returned`,
    );
  return real;
}
