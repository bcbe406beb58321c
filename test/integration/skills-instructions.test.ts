// Skills and project instruction files through a real `lash -p` against the mock
// wire server: what reaches the model's first request, what the skill tools return,
// and the `lash skills` command.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const write = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};
const systemOf = (body: unknown): string =>
  chatMessages(body)
    .filter((m) => m.role === "system")
    .map((m) => textOf(m.content))
    .join("\n");
const toolResults = (body: unknown): Map<string, string> =>
  new Map(
    chatMessages(body)
      .filter((m) => m.role === "tool")
      .map((m) => [m.tool_call_id ?? "", textOf(m.content)]),
  );
const toolNames = (body: unknown): string[] =>
  ((body as { tools?: { function?: { name?: string } }[] }).tools ?? []).map((t) => t.function?.name ?? "");

describe("skills in a lash -p session", () => {
  it("puts the catalog in the first request; load_skill returns the body; read_skill_file is jailed", async () => {
    box = await sandbox([
      {
        toolCalls: [
          { id: "c1", name: "load_skill", arguments: { name: "release-notes" } },
          {
            id: "c2",
            name: "read_skill_file",
            arguments: { name: "release-notes", path: "templates/notes.md" },
          },
          {
            id: "c3",
            name: "read_skill_file",
            arguments: { name: "release-notes", path: "../../secret.txt" },
          },
          { id: "c4", name: "read_skill_file", arguments: { name: "release-notes", path: "escape.txt" } },
          { id: "c5", name: "read_skill_file", arguments: { name: "release-notes", path: "/etc/hostname" } },
        ],
      },
      { text: "done" },
    ]);
    const skillDir = join(box.cwd, ".lash", "skills", "release-notes");
    write(
      join(skillDir, "SKILL.md"),
      "---\nname: release-notes\ndescription: Write release notes from the git log. Use when asked for a changelog.\nallowed-tools: read_file shell web_fetch\n---\n\n# Release notes\n\nSTEP-ONE: read templates/notes.md.\n",
    );
    write(join(skillDir, "templates", "notes.md"), "TEMPLATE-BODY\n");
    write(join(box.cwd, "secret.txt"), "TOP-SECRET\n");
    symlinkSync(join(box.cwd, "secret.txt"), join(skillDir, "escape.txt"));
    // a user-level skill and a project skill of the same name: the project's wins
    write(
      join(box.home, "skills", "release-notes", "SKILL.md"),
      "---\nname: release-notes\ndescription: USER-LEVEL copy.\n---\nuser body\n",
    );
    write(
      join(box.home, "skills", "triage", "SKILL.md"),
      "---\nname: triage\ndescription: Sort incoming issues by severity.\n---\nTriage body.\n",
    );

    const r = await lash(["-p", "write the release notes"], { env: box.env, cwd: box.cwd });
    expect(r.stderr).not.toContain("internal error");
    expect(r.code).toBe(0);
    const [first, second] = box.server.requests;
    const system = systemOf(first!.body);
    expect(system).toContain("## Skills");
    expect(system).toContain(
      "- release-notes: Write release notes from the git log. Use when asked for a changelog.",
    );
    expect(system).toContain("- triage: Sort incoming issues by severity.");
    expect(system).not.toContain("USER-LEVEL");
    expect(system).not.toContain("STEP-ONE"); // progressive disclosure: no body up front
    expect(toolNames(first!.body)).toEqual(expect.arrayContaining(["load_skill", "read_skill_file"]));

    const results = toolResults(second!.body);
    expect(results.get("c1")).toContain("STEP-ONE: read templates/notes.md.");
    expect(results.get("c1")).toContain("- templates/notes.md");
    // allowed-tools narrows, never grants: web_fetch is not a lash tool, so it is reported missing
    expect(results.get("c1")).toContain(
      "Not available in this session (the skill does not grant tools): web_fetch",
    );
    expect(results.get("c2")).toBe("TEMPLATE-BODY\n");
    expect(results.get("c3")).toContain("contains '..'");
    expect(results.get("c4")).toContain("resolves outside the skill's directory");
    expect(results.get("c5")).toContain("is absolute");
    for (const id of ["c3", "c4", "c5"]) expect(results.get(id)).not.toContain("TOP-SECRET");
    expect(toolNames(second!.body)).not.toContain("web_fetch");
  });
});

describe("project instructions (AGENTS.md) in a lash -p session", () => {
  it("adds AGENTS.md from the git root down to the workspace, outermost first", async () => {
    box = await sandbox([{ text: "ok" }]);
    const repo = dirname(box.cwd);
    mkdirSync(join(repo, ".git"));
    write(join(repo, "AGENTS.md"), "ROOT-RULE: use tabs.\n");
    write(join(box.cwd, "AGENTS.md"), "SUB-RULE: run the tests.\n");
    write(join(box.cwd, "CLAUDE.md"), "CLAUDE-IGNORED\n");
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const system = systemOf(box.server.requests[0]!.body);
    expect(system).toContain("ROOT-RULE: use tabs.");
    expect(system).toContain("SUB-RULE: run the tests.");
    expect(system.indexOf("ROOT-RULE")).toBeLessThan(system.indexOf("SUB-RULE"));
    expect(system).toContain(join(box.cwd, "AGENTS.md"));
    expect(system).not.toContain("CLAUDE-IGNORED");
  });

  it("cuts a file over 20,000 characters, keeping head and tail; --no-project-instructions leaves it out", async () => {
    box = await sandbox([{ text: "ok" }, { text: "ok" }]);
    // 12,000 characters of head and 8,000 of tail are kept; the marker sits between them
    write(
      join(box.cwd, "AGENTS.md"),
      `HEAD-MARKER\n${"h".repeat(15_000)}\nMIDDLE-MARKER\n${"t".repeat(15_000)}\nTAIL-MARKER\n`,
    );
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const system = systemOf(box.server.requests[0]!.body);
    expect(system.includes("HEAD-MARKER")).toBe(true);
    expect(system.includes("TAIL-MARKER")).toBe(true);
    expect(system.includes("MIDDLE-MARKER")).toBe(false);
    expect(system).toMatch(/characters of .*AGENTS\.md left out here .*read the file for the rest/);

    const off = await lash(["-p", "hi", "--no-project-instructions"], { env: box.env, cwd: box.cwd });
    expect(off.code).toBe(0);
    const plain = systemOf(box.server.requests[1]!.body);
    expect(plain.includes("HEAD-MARKER")).toBe(false);
    expect(plain).not.toContain("Project instructions");
  });

  it("uses CLAUDE.md where there is no AGENTS.md; a subagent gets AGENTS.md only", async () => {
    box = await sandbox([
      {
        toolCalls: [{ id: "s1", name: "spawn_agent", arguments: { task: "Say hi.", capability: "explore" } }],
      },
      { text: "hi from the child" },
      { text: "done" },
    ]);
    const repo = dirname(box.cwd);
    mkdirSync(join(repo, ".git"));
    write(join(repo, "CLAUDE.md"), "CLAUDE-RULE at the root.\n");
    write(join(box.cwd, "AGENTS.md"), "AGENTS-RULE in the workspace.\n");
    const r = await lash(["-p", "delegate"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const [parent, child] = box.server.requests;
    const parentSystem = systemOf(parent!.body);
    expect(parentSystem).toContain("CLAUDE-RULE at the root.");
    expect(parentSystem).toContain("AGENTS-RULE in the workspace.");
    const childSystem = systemOf(child!.body);
    expect(childSystem).toContain("You are a focused subagent.");
    expect(childSystem).toContain("AGENTS-RULE in the workspace.");
    expect(childSystem).not.toContain("CLAUDE-RULE");
  });
});

describe("lash skills", () => {
  it("validate reports file:line:column and exits 1; add copies a valid skill and refuses to overwrite; list shows it", async () => {
    box = await sandbox();
    const src = join(dirname(box.cwd), "incoming");
    write(join(src, "bad-skill", "SKILL.md"), "---\nname: Bad_Skill\ndescription: x\n---\nbody\n");
    write(
      join(src, "good-skill", "SKILL.md"),
      "---\nname: good-skill\ndescription: Does good things.\n---\nGood body.\n",
    );
    write(join(src, "good-skill", "references", "a.md"), "ref\n");

    const bad = await lash(["skills", "validate", join(src, "bad-skill")], { env: box.env, cwd: box.cwd });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      `${join(src, "bad-skill", "SKILL.md")}:2:7: error: 'name' may hold only lowercase`,
    );
    expect(bad.stdout).toContain("'name' must match the directory name");

    const refused = await lash(["skills", "add", join(src, "bad-skill")], { env: box.env, cwd: box.cwd });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is not a valid skill; nothing was copied");
    expect(existsSync(join(box.cwd, ".lash", "skills"))).toBe(false);

    const added = await lash(["skills", "add", join(src, "good-skill")], { env: box.env, cwd: box.cwd });
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect(readFileSync(join(box.cwd, ".lash", "skills", "good-skill", "references", "a.md"), "utf8")).toBe(
      "ref\n",
    );

    const again = await lash(["skills", "add", join(src, "good-skill")], { env: box.env, cwd: box.cwd });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists; remove it first");

    const list = await lash(["skills", "list", "--json"], { env: box.env, cwd: box.cwd });
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout) as { skills: { name: string; dir: string; source: string }[] };
    expect(listed.skills).toEqual([
      expect.objectContaining({
        name: "good-skill",
        dir: join(".lash", "skills", "good-skill"),
        source: "project",
      }),
    ]);

    const all = await lash(["skills", "validate"], { env: box.env, cwd: box.cwd });
    expect(all.code).toBe(0);
    expect(all.stdout).toContain("1 valid skill(s): good-skill; 0 error(s), 0 warning(s)");

    // the project file's `skills` roots count too (as lash build reads them)
    write(join(box.cwd, "lash.yaml"), "skills:\n  - vendor/skills\n");
    write(
      join(box.cwd, "vendor", "skills", "vendored", "SKILL.md"),
      "---\nname: vendored\ndescription: V.\n---\nv\n",
    );
    const withProject = await lash(["skills", "list"], { env: box.env, cwd: box.cwd });
    expect(withProject.code).toBe(0);
    expect(withProject.stdout).toContain(`vendored  V.\n  ${join("vendor", "skills", "vendored")} (project)`);
  });
});
