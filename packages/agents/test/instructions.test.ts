import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  capText,
  discoverSkills,
  findInstructionFiles,
  instructionDirs,
  projectInstructions,
  skillsPlugin,
} from "../src/index.ts";

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "lash-instr-"));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe("instruction files", () => {
  it("walks from the git root down to the workspace; CLAUDE.md only where a directory has no AGENTS.md", () => {
    const repo = join(tmp, "repo");
    const ws = join(repo, "pkg", "app");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(tmp, "AGENTS.md"), "ABOVE-THE-REPO");
    writeFileSync(join(repo, "CLAUDE.md"), "REPO-CLAUDE");
    writeFileSync(join(repo, "pkg", "AGENTS.md"), "PKG-AGENTS");
    writeFileSync(join(repo, "pkg", "CLAUDE.md"), "PKG-CLAUDE");
    writeFileSync(join(ws, "AGENTS.md"), "APP-AGENTS");
    expect(instructionDirs(ws)).toEqual([repo, join(repo, "pkg"), ws]);
    expect(findInstructionFiles(ws).map((f) => [f.name, f.text])).toEqual([
      ["CLAUDE.md", "REPO-CLAUDE"],
      ["AGENTS.md", "PKG-AGENTS"],
      ["AGENTS.md", "APP-AGENTS"],
    ]);
    // subagents: AGENTS.md only
    expect(findInstructionFiles(ws, { claude: false }).map((f) => f.text)).toEqual([
      "PKG-AGENTS",
      "APP-AGENTS",
    ]);
    const text = projectInstructions(ws) ?? "";
    expect(text.indexOf("REPO-CLAUDE")).toBeLessThan(text.indexOf("APP-AGENTS"));
    expect(text).not.toContain("ABOVE-THE-REPO");
  });

  it("outside a git repository reads only the workspace; none found gives undefined", () => {
    const ws = join(tmp, "plain");
    mkdirSync(ws);
    expect(instructionDirs(ws)).toEqual([ws]);
    expect(projectInstructions(ws)).toBeUndefined();
  });

  it("caps a file keeping head and tail with a note naming it", () => {
    const text = `${"a".repeat(100)}MIDDLE${"z".repeat(100)}`;
    const cut = capText(text, 100, "/p/AGENTS.md");
    expect(cut.truncated).toBe(true);
    expect(cut.text.startsWith("a".repeat(60))).toBe(true);
    expect(cut.text.endsWith("z".repeat(40))).toBe(true);
    expect(cut.text).not.toContain("MIDDLE");
    expect(cut.text).toContain(
      "characters of /p/AGENTS.md left out here (the file has 206); read the file for the rest",
    );
    expect(capText("short", 100, "x")).toEqual({ text: "short", truncated: false });
  });
});

describe("skills plugin", () => {
  const setup = () => {
    const root = join(tmp, "skills");
    for (const name of ["alpha", "beta"]) {
      mkdirSync(join(root, name, "docs"), { recursive: true });
      writeFileSync(
        join(root, name, "SKILL.md"),
        `---\nname: ${name}\ndescription: The ${name} skill.\n---\n${name} body\n`,
      );
      writeFileSync(join(root, name, "docs", "a.md"), `${name} doc`);
    }
    writeFileSync(join(tmp, "outside.txt"), "OUTSIDE");
    symlinkSync(join(tmp, "outside.txt"), join(root, "alpha", "docs", "link.md"));
    symlinkSync(join(root, "beta", "docs", "a.md"), join(root, "alpha", "docs", "sibling.md"));
    return discoverSkills([{ dir: root, source: "project" }]).skills;
  };
  const call = (plugin: ReturnType<typeof skillsPlugin>, tool: string, args: unknown) => {
    const t = plugin.tools!.find((x) => x.name === tool)!;
    const ctx = {
      sessionId: "s",
      callId: "c",
      attempt: 1,
      signal: new AbortController().signal,
      progress: () => {},
    };
    return Effect.runPromise(
      t.execute(args, ctx).pipe(
        Effect.map((o) => ({ ok: true, text: (o.content[0] as { text: string }).text })),
        Effect.catchAll((e) => Effect.succeed({ ok: false, text: e.message })),
      ),
    );
  };

  it("a spec's skills list restricts the catalog and the tools", async () => {
    const plugin = skillsPlugin({ skills: setup(), only: ["beta"] });
    expect(plugin.prompt).toContain("- beta: The beta skill.");
    expect(plugin.prompt).not.toContain("alpha");
    expect(await call(plugin, "load_skill", { name: "alpha" })).toEqual({
      ok: false,
      text: 'no skill named "alpha"; available: beta',
    });
    expect((await call(plugin, "load_skill", { name: "beta" })).text).toContain("beta body");
    expect(skillsPlugin({ skills: [] }).tools).toBeUndefined();
    expect(skillsPlugin({ skills: [] }).prompt).toBeUndefined();
  });

  it("read_skill_file reads inside the skill and refuses .., absolute paths and symlinks that leave it", async () => {
    const plugin = skillsPlugin({ skills: setup() });
    expect(await call(plugin, "read_skill_file", { name: "alpha", path: "docs/a.md" })).toEqual({
      ok: true,
      text: "alpha doc",
    });
    const refused = async (path: string) => {
      const r = await call(plugin, "read_skill_file", { name: "alpha", path });
      expect(r.ok).toBe(false);
      expect(r.text).not.toContain("OUTSIDE");
      return r.text;
    };
    expect(await refused("../beta/docs/a.md")).toContain("contains '..'");
    expect(await refused("docs/../../beta/SKILL.md")).toContain("contains '..'");
    expect(await refused(join(tmp, "outside.txt"))).toContain("is absolute");
    expect(await refused("docs/link.md")).toContain("resolves outside the skill's directory");
    // a symlink into another skill is outside this one too
    expect(await refused("docs/sibling.md")).toContain("resolves outside the skill's directory");
    expect(await refused("docs")).toContain("is a directory");
    expect(await refused("nope.md")).toContain("no file 'nope.md'");
  });
});
