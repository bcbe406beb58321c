import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultSkillRoots, discoverSkills, validateSkillDir } from "../src/index.ts";

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "lash-skills-"));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

const writeSkill = (root: string, dir: string, text: string, extra: Record<string, string> = {}) => {
  const d = join(root, dir);
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, "SKILL.md"), text);
  for (const [rel, content] of Object.entries(extra)) {
    mkdirSync(join(d, rel, ".."), { recursive: true });
    writeFileSync(join(d, rel), content);
  }
  return d;
};
const skillText = (name: string, description: string, body = "Do the thing.") =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

describe("skill discovery", () => {
  it("searches .lash, .agents, .claude, extra roots, then $LASH_HOME; the first root wins a name clash", () => {
    const ws = join(tmp, "ws");
    const home = join(tmp, "home");
    const roots = defaultSkillRoots(ws, home, ["vendor/skills"]);
    expect(roots.map((r) => [r.dir, r.source])).toEqual([
      [join(ws, ".lash", "skills"), "project"],
      [join(ws, ".agents", "skills"), "project"],
      [join(ws, ".claude", "skills"), "project"],
      [join(ws, "vendor", "skills"), "project"],
      [join(home, "skills"), "user"],
    ]);
    writeSkill(join(ws, ".lash", "skills"), "pdf", skillText("pdf", "Project PDF skill."));
    writeSkill(join(ws, ".claude", "skills"), "pdf", skillText("pdf", "Claude PDF skill."));
    writeSkill(join(ws, ".claude", "skills"), "review", skillText("review", "Reviews code."));
    writeSkill(join(home, "skills"), "review", skillText("review", "User review skill."));
    writeSkill(join(home, "skills"), "notes", skillText("notes", "User notes skill."), {
      "references/guide.md": "guide",
    });
    mkdirSync(join(ws, ".agents", "skills", "not-a-skill"), { recursive: true });

    const { skills, problems } = discoverSkills(roots);
    expect(skills.map((s) => [s.name, s.description, s.source])).toEqual([
      ["notes", "User notes skill.", "user"],
      ["pdf", "Project PDF skill.", "project"],
      ["review", "Reviews code.", "project"],
    ]);
    expect(skills.find((s) => s.name === "notes")?.files).toEqual(["SKILL.md", "references/guide.md"]);
    expect(problems).toHaveLength(2);
    expect(problems.every((p) => p.severity === "warning")).toBe(true);
    expect(problems[0]?.file).toBe(join(ws, ".claude", "skills", "pdf", "SKILL.md"));
    expect(problems[0]?.message).toContain(join(ws, ".lash", "skills", "pdf"));
    expect(problems[1]?.file).toBe(join(home, "skills", "review", "SKILL.md"));
  });

  it("leaves invalid skills out and reports them, keeping the valid ones", () => {
    const root = join(tmp, "skills");
    writeSkill(root, "good", skillText("good", "Fine."));
    writeSkill(root, "bad", skillText("other", "Name does not match."));
    const { skills, problems } = discoverSkills([{ dir: root, source: "project" }]);
    expect(skills.map((s) => s.name)).toEqual(["good"]);
    expect(problems).toEqual([
      expect.objectContaining({ file: join(root, "bad", "SKILL.md"), line: 2, column: 7, severity: "error" }),
    ]);
  });

  it("hashes the skill's files: same bytes same hash, any byte changed a different one", () => {
    const a = writeSkill(join(tmp, "a"), "s", skillText("s", "d"), { "scripts/run.sh": "echo 1" });
    const b = writeSkill(join(tmp, "b"), "s", skillText("s", "d"), { "scripts/run.sh": "echo 1" });
    const ha = validateSkillDir(a).skill?.sha256;
    expect(ha).toMatch(/^[0-9a-f]{64}$/);
    expect(validateSkillDir(b).skill?.sha256).toBe(ha);
    writeFileSync(join(b, "scripts/run.sh"), "echo 2");
    expect(validateSkillDir(b).skill?.sha256).not.toBe(ha);
  });
});

describe("skill validation", () => {
  const problemsOf = (name: string, text: string) => {
    const dir = writeSkill(tmp, name, text);
    const r = validateSkillDir(dir);
    return r.problems.map((p) => `${p.line}:${p.column} ${p.severity}: ${p.message}`);
  };

  it("accepts the full format and keeps unknown keys", () => {
    const dir = writeSkill(
      tmp,
      "pdf-tools",
      [
        "---",
        "name: pdf-tools",
        "description: >",
        "  Extract text from PDFs. Use when the user mentions PDFs.",
        "license: Apache-2.0",
        "compatibility: Requires python3",
        "metadata:",
        "  author: example",
        '  version: "1.0"',
        "allowed-tools: read_file shell",
        "disable-model-invocation: true",
        "---",
        "# PDF tools",
        "",
        "Run scripts/extract.py.",
      ].join("\n"),
      { "scripts/extract.py": "print(1)" },
    );
    const { skill, problems } = validateSkillDir(dir);
    expect(problems).toEqual([]);
    expect(skill).toMatchObject({
      name: "pdf-tools",
      description: "Extract text from PDFs. Use when the user mentions PDFs.",
      body: "# PDF tools\n\nRun scripts/extract.py.",
      allowedTools: ["read_file", "shell"],
      files: ["SKILL.md", "scripts/extract.py"],
    });
    expect(skill?.frontMatter["disable-model-invocation"]).toBe(true);
    expect(skill?.frontMatter.metadata).toEqual({ author: "example", version: "1.0" });
  });

  it("reports name rules at the value's line and column", () => {
    expect(problemsOf("Bad--Name", "---\ndescription: x\nname: Bad--Name\n---\nbody\n")).toEqual([
      "3:7 error: 'name' may hold only lowercase letters, digits and single hyphens, not at the start or end (got 'Bad--Name')",
    ]);
    expect(problemsOf("dir-name", "---\nname: other\ndescription: x\n---\nbody\n")[0]).toMatch(
      /^2:7 error: 'name' must match the directory name: the directory is 'dir-name'/,
    );
    const long = "a".repeat(65);
    expect(problemsOf(long, `---\nname: ${long}\ndescription: x\n---\nbody\n`)).toEqual([
      "2:7 error: 'name' must be 1 to 64 characters (it has 65)",
    ]);
  });

  it("reports missing and over-long fields, YAML errors and a missing front matter", () => {
    expect(problemsOf("a", "---\nname: a\n---\nbody\n")).toEqual([
      "2:1 error: front matter is missing 'description' (what the skill does and when to use it)",
    ]);
    expect(problemsOf("b", `---\nname: b\ndescription: ${"x".repeat(1025)}\n---\nbody\n`)).toEqual([
      "3:14 error: 'description' must be at most 1024 characters (it has 1025)",
    ]);
    expect(
      problemsOf("c", `---\nname: c\ndescription: d\ncompatibility: ${"x".repeat(501)}\n---\nbody\n`),
    ).toEqual(["4:16 error: 'compatibility' must be at most 500 characters (it has 501)"]);
    expect(problemsOf("d", "---\nname: d\ndescription: [unclosed\n---\nbody\n")[0]).toMatch(
      /^\d+:\d+ error: front matter is not valid YAML: /,
    );
    expect(problemsOf("e", "# no front matter\n")).toEqual([
      "1:1 error: SKILL.md must start with YAML front matter between '---' lines (with at least 'name' and 'description')",
    ]);
    expect(problemsOf("f", "---\nname: f\ndescription: d\nmetadata:\n  n: 1\n---\n\n")).toEqual([
      "5:3 warning: 'metadata.n' should be a string (quote it: n: \"1\")",
      "7:1 warning: SKILL.md has no instructions after the front matter",
    ]);
  });

  it("does not follow symlinks when listing and hashing files", () => {
    writeFileSync(join(tmp, "secret.txt"), "secret");
    const dir = writeSkill(tmp, "s", skillText("s", "d"));
    symlinkSync(join(tmp, "secret.txt"), join(dir, "link.txt"));
    expect(validateSkillDir(dir).skill?.files).toEqual(["SKILL.md"]);
  });
});
