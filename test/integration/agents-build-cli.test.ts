// `lash init`, `lash build` and `lash agents` as a new user runs them (issue 18, acceptance 1
// and the init/build half of 5): a real `lash` process in a temporary directory.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { lash } from "./cli-support.ts";

vi.setConfig({ testTimeout: 120_000 });

const FIXTURES = join(import.meta.dirname, "..", "..", "packages", "agents", "test", "fixtures");
const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});
function tempDir(): { dir: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), "lash-agents-cli-"));
  temps.push(root);
  return { dir: root, env: { PATH: process.env.PATH, HOME: root, LASH_HOME: join(root, ".lash-home") } };
}

describe("lash init && lash build", () => {
  it("scaffolds a project in an empty directory that builds, lists and shows; init refuses to overwrite", async () => {
    const { dir, env } = tempDir();
    const init = await lash(["init"], { env, cwd: dir });
    expect(init.stderr).toBe("");
    expect(init.code).toBe(0);
    for (const f of ["lash.yaml", "agents/hello.agent.md", ".lash/skills/greeting/SKILL.md"])
      expect(existsSync(join(dir, f)), f).toBe(true);
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(".lash/build/\n");

    const build = await lash(["build"], { env, cwd: dir });
    expect(build.stderr).toBe("");
    expect(build.code).toBe(0);
    const hash = /→ \.lash\/build\/([0-9a-f]{64})\.json/.exec(build.stdout)?.[1];
    expect(hash, build.stdout).toBeDefined();
    const manifest = JSON.parse(readFileSync(join(dir, ".lash", "build", `${hash}.json`), "utf8"));
    expect(manifest.hash).toBe(hash);
    expect(manifest.agents.map((a: { name: string }) => a.name)).toEqual(["hello"]);

    const again = await lash(["build", "--json"], { env, cwd: dir });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      ok: true,
      hash,
      errors: 0,
      warnings: 0,
      agents: ["hello"],
    });

    const list = await lash(["agents", "list"], { env, cwd: dir });
    expect(list.stdout).toBe("hello  Greets the user and says what is in this project.\n");
    const show = await lash(["agents", "show", "hello"], { env, cwd: dir });
    expect(show.stdout).toContain("tools:   read_file, glob");
    expect(show.stdout).toContain("You are a friendly guide to this project.");

    writeFileSync(join(dir, ".gitignore"), "node_modules/\n");
    const refused = await lash(["init"], { env, cwd: dir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toBe(
      "lash init: lash.yaml, agents/hello.agent.md, .lash/skills/greeting/SKILL.md already exist; nothing was written (move them away or edit by hand)\n",
    );
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe("node_modules/\n");
  });

  it("prints every problem of a broken project as file:line:col and exits non-zero", async () => {
    const { env } = tempDir();
    const run = await lash(["build"], { env, cwd: join(FIXTURES, "broken") });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toContain('agents/alpha.agent.md:7:5: unknown tool "raed_file"; did you mean "read_file"?');
    expect(lines).toContain("agents/alpha.agent.md:6:5: agent cycle: alpha → beta → gamma → alpha");
    expect(lines).toContain(
      'lash.yaml:3:10: unknown model "claude-sonet-4-5"; did you mean "anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4", "anthropic/claude-opus-4-5"?',
    );
    // skills are discovered by the CLI: an unknown skill is reported in the same run
    expect(lines).toContain('agents/gamma.yaml:4:10: unknown skill "nope"');
    expect(lines.at(-1)).toBe("lash build: 13 errors; nothing written");
    expect(existsSync(join(FIXTURES, "broken", ".lash"))).toBe(false);

    const json = await lash(["build", "--json"], { env, cwd: join(FIXTURES, "broken") });
    expect(json.code).toBe(1);
    const out = JSON.parse(json.stdout);
    expect(out.ok).toBe(false);
    expect(out.diagnostics).toContainEqual({
      file: "agents/alpha.agent.md",
      line: 8,
      column: 5,
      severity: "error",
      message: 'unknown MCP server "gitlab" (tool "mcp:gitlab"); did you mean "github"?',
    });
  });

  it("reports invalid MCP server configs in lash.yaml one per line, at their keys", async () => {
    const { dir, env } = tempDir();
    writeFileSync(join(dir, "lash.yaml"), "mcpServers:\n  bad:\n    command: 42\n  worse:\n    url: 7\n");
    const run = await lash(["build"], { env, cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      [
        "lash.yaml:3:14: mcpServers.bad.command: expected a non-empty string",
        "lash.yaml:5:10: mcpServers.worse.url: expected a non-empty string",
        "lash build: 2 errors; nothing written",
        "",
      ].join("\n"),
    );
  });

  it("--check-mcp starts each MCP server: a real stdio server passes, one that does not start is reported at its key", async () => {
    const { dir, env } = tempDir();
    const server = join(
      import.meta.dirname,
      "..",
      "..",
      "packages",
      "plugin-mcp",
      "test",
      "fixtures",
      "stdio-server.ts",
    );
    const real = `  real:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(server)}]\n`;
    writeFileSync(join(dir, "lash.yaml"), `mcpServers:\n${real}`);
    const ok = await lash(["build", "--check-mcp", "--mcp-timeout", "60"], { env, cwd: dir });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    writeFileSync(
      join(dir, "lash.yaml"),
      `mcpServers:\n  ghost:\n    command: ${JSON.stringify(join(dir, "no-such-server"))}\n${real}`,
    );
    const unchecked = await lash(["build"], { env, cwd: dir });
    expect(unchecked.code).toBe(0);
    const run = await lash(["build", "--check-mcp", "--mcp-timeout", "60"], { env, cwd: dir });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^lash\.yaml:2:3: MCP server "ghost" is not reachable \(failed/);
    expect(lines.slice(1)).toEqual(["lash build: 1 error; nothing written"]);
  });
});

describe("lash build: the hash does not depend on where the checkout is", () => {
  it("records a lash.yaml skill root outside the project relative to it: two checkouts build to the same hash", async () => {
    const { dir, env } = tempDir();
    const hashes: string[] = [];
    for (const where of ["one", "two/deeper"]) {
      const base = join(dir, where);
      mkdirSync(join(base, "team-skills", "tidy"), { recursive: true });
      writeFileSync(
        join(base, "team-skills", "tidy", "SKILL.md"),
        "---\nname: tidy\ndescription: Tidy things.\n---\nTidy.\n",
      );
      cpSync(join(FIXTURES, "valid"), join(base, "proj"), { recursive: true });
      const yaml = join(base, "proj", "lash.yaml");
      writeFileSync(yaml, `${readFileSync(yaml, "utf8")}skills: [../team-skills]\n`);
      const build = await lash(["build", "--json"], { env, cwd: join(base, "proj") });
      expect(build.code, build.stderr).toBe(0);
      const hash = JSON.parse(build.stdout).hash as string;
      const manifest = JSON.parse(readFileSync(join(base, "proj", ".lash", "build", `${hash}.json`), "utf8"));
      expect(manifest.skills.map((x: { dir: string }) => x.dir)).toContain("../team-skills/tidy");
      expect(JSON.stringify(manifest)).not.toContain(dir);
      hashes.push(hash);
    }
    expect(hashes[1]).toBe(hashes[0]);
  });
});

describe("lash run uses only an intact, current build", () => {
  async function built(): Promise<{ dir: string; env: NodeJS.ProcessEnv; path: string; hash: string }> {
    const { dir, env } = tempDir();
    expect((await lash(["init"], { env, cwd: dir })).code).toBe(0);
    const build = await lash(["build", "--json"], { env, cwd: dir });
    expect(build.code, build.stderr).toBe(0);
    const hash = JSON.parse(build.stdout).hash as string;
    return { dir, env, hash, path: join(dir, ".lash", "build", `${hash}.json`) };
  }

  it("refuses a build whose inputs changed since, naming the file", async () => {
    const { dir, env, hash } = await built();
    const spec = join(dir, "agents", "hello.agent.md");
    writeFileSync(spec, readFileSync(spec, "utf8").replace("friendly", "grumpy"));
    const r = await lash(["run", "hello", "hi"], { env, cwd: dir });
    expect(r.stderr).toBe(
      `lash run: agents/hello.agent.md changed since build ${hash.slice(0, 12)}; run \`lash build\`\n`,
    );
    expect(r.code).toBe(2);
    // a skill's file counts too
    writeFileSync(spec, readFileSync(spec, "utf8").replace("grumpy", "friendly"));
    writeFileSync(join(dir, ".lash", "skills", "greeting", "SKILL.md"), "changed\n");
    const s = await lash(["run", "hello", "hi"], { env, cwd: dir });
    expect(s.stderr).toContain(".lash/skills/greeting/SKILL.md changed since build");
    expect(s.code).toBe(2);
  });

  it("refuses a build file that was modified, and one that is not JSON, naming it; exit 2", async () => {
    const { dir, env, path } = await built();
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.replace('"read_file"', '"write_file"'));
    const modified = await lash(["run", "hello", "hi"], { env, cwd: dir });
    expect(modified.stderr).toBe(`lash run: ${path} does not match its hash; run \`lash build\`\n`);
    expect(modified.code).toBe(2);
    writeFileSync(path, text.slice(0, 40));
    const corrupt = await lash(["run", "hello", "hi"], { env, cwd: dir });
    expect(corrupt.stderr.startsWith(`lash run: ${path} is not a valid build (`), corrupt.stderr).toBe(true);
    expect(corrupt.stderr.endsWith("); run `lash build`\n")).toBe(true);
    expect(corrupt.stderr).not.toContain("internal error");
    expect(corrupt.code).toBe(2);
  });
});
