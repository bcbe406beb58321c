// `lash skills list|validate [dir]|add <dir>`: the SKILL.md skills a session in this
// workspace can load (@lash/agents discovery and validation).
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  defaultSkillRoots,
  discoverSkills,
  projectFileSkillRoots,
  type Skill,
  type SkillProblem,
  validateSkillDir,
} from "@lash/agents";
import { loadConfig } from "./config.ts";
import { CliError, ExitCode, usageError } from "./errors.ts";
import { helpText } from "./help.ts";
import type { MainIO } from "./io.ts";
import { resolvePaths } from "./paths.ts";
import { resolveCwd } from "./setup.ts";

const USAGE = "usage: lash skills list|validate [dir]|add <dir> [--json] [--cwd <dir>]";

export async function runSkills(argv: readonly string[], io: MainIO): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    throw usageError(`lash skills: ${(e as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(helpText("skills"));
    return ExitCode.ok;
  }
  const [action = "list", ...args] = positionals;
  const cwd = resolveCwd(values.cwd);
  const paths = resolvePaths(io.env, cwd);
  const { config } = loadConfig(paths.config, paths.projectConfig);
  const roots = defaultSkillRoots(cwd, paths.home, [
    ...(config.skills?.roots ?? []),
    ...projectFileSkillRoots(cwd),
  ]);
  const show = (p: SkillProblem) => formatProblem(p, cwd);
  switch (action) {
    case "list": {
      if (args.length > 0) throw usageError(`lash skills list takes no arguments\n${USAGE}`);
      const { skills, problems } = discoverSkills(roots);
      if (values.json) {
        io.stdout.write(
          `${JSON.stringify({ skills: skills.map((s) => summary(s, cwd)), problems: problems.map((p) => ({ ...p })) }, null, 2)}\n`,
        );
        return ExitCode.ok;
      }
      for (const p of problems) io.stderr.write(`${show(p)}\n`);
      if (skills.length === 0) {
        io.stdout.write(
          `no skills found (searched ${roots.map((r) => displayPath(r.dir, cwd)).join(", ")}); \`lash skills add <dir>\` adds one\n`,
        );
        return ExitCode.ok;
      }
      for (const s of skills)
        io.stdout.write(`${s.name}  ${oneLine(s.description)}\n  ${displayPath(s.dir, cwd)} (${s.source})\n`);
      return ExitCode.ok;
    }
    case "validate": {
      if (args.length > 1) throw usageError(`lash skills validate takes at most one directory\n${USAGE}`);
      const result =
        args[0] !== undefined
          ? (() => {
              const r = validateSkillDir(resolve(cwd, args[0]));
              return { skills: r.skill ? [r.skill] : [], problems: r.problems };
            })()
          : discoverSkills(roots);
      const errors = result.problems.filter((p) => p.severity === "error").length;
      if (values.json) {
        io.stdout.write(
          `${JSON.stringify({ ok: errors === 0, skills: result.skills.map((s) => summary(s, cwd)), problems: result.problems }, null, 2)}\n`,
        );
      } else {
        for (const p of result.problems) io.stdout.write(`${show(p)}\n`);
        const warnings = result.problems.length - errors;
        io.stdout.write(
          `${result.skills.length} valid skill(s)${result.skills.length ? `: ${result.skills.map((s) => s.name).join(", ")}` : ""}; ${errors} error(s), ${warnings} warning(s)\n`,
        );
      }
      return errors === 0 ? ExitCode.ok : ExitCode.failed;
    }
    case "add": {
      if (args.length !== 1) throw usageError(`lash skills add needs one skill directory\n${USAGE}`);
      const source = resolve(cwd, args[0]!);
      const { skill, problems } = validateSkillDir(source);
      for (const p of problems) io.stderr.write(`${show(p)}\n`);
      if (skill === undefined)
        throw new CliError(
          `lash: ${displayPath(source, cwd)} is not a valid skill; nothing was copied`,
          ExitCode.failed,
        );
      const target = join(cwd, ".lash", "skills", skill.name);
      if (existsSync(target))
        throw new CliError(
          `lash: ${displayPath(target, cwd)} already exists; remove it first to replace the skill (nothing was copied)`,
          ExitCode.failed,
        );
      mkdirSync(join(cwd, ".lash", "skills"), { recursive: true });
      // the files the skill is made of (no symlinks, no .git), as validation listed and hashed them
      for (const rel of skill.files) {
        mkdirSync(join(target, rel, ".."), { recursive: true });
        cpSync(join(skill.dir, rel), join(target, rel));
      }
      io.stdout.write(
        `added skill ${skill.name} → ${displayPath(target, cwd)} (${skill.files.length} file(s))\n`,
      );
      return ExitCode.ok;
    }
    default:
      throw usageError(`lash skills: unknown action "${action}"\n${USAGE}`);
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      json: { type: "boolean" },
      cwd: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: true,
  });
}

function summary(s: Skill, cwd: string) {
  return {
    name: s.name,
    description: s.description,
    dir: displayPath(s.dir, cwd),
    source: s.source,
    files: s.files,
    sha256: s.sha256,
    ...(s.allowedTools ? { allowedTools: s.allowedTools } : {}),
  };
}

function formatProblem(p: SkillProblem, cwd: string): string {
  const where = p.line > 0 ? `${displayPath(p.file, cwd)}:${p.line}:${p.column}` : displayPath(p.file, cwd);
  return `${where}: ${p.severity}: ${p.message}`;
}

const displayPath = (path: string, cwd: string): string => {
  const rel = relative(cwd, path);
  return rel === "" ? "." : rel.startsWith("..") ? path : rel;
};
const oneLine = (s: string) => s.replace(/\s+/g, " ");
