// `lash policy explain <tool> [args-json]` as a real process: the layers of the user's and the
// project's config, the project file's (lash.yaml, from the build) and an agent's (--agent),
// the verdict, the deciding layer and rule, the effects; bad input is a usage error naming the
// problem.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = join(import.meta.dirname, "..", "src", "main.ts");
let dir: string;
let home: string;
let project: string;

const run = (args: string[], cwd = project) => lash(["policy", ...args], cwd);

const lash = (args: string[], cwd = project) => {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: dir, LASH_HOME: home, NO_COLOR: "1" },
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lash-policy-explain-"));
  home = join(dir, "home");
  project = join(dir, "project");
  mkdirSync(home, { recursive: true });
  mkdirSync(join(project, ".lash"), { recursive: true });
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      policy: { profile: "coding", workspace: { denyPatterns: [".env*", "**/*.pem"] } },
      mcpServers: { github: { command: "true", trusted: true } },
    }),
  );
  writeFileSync(
    join(project, ".lash", "config.json"),
    JSON.stringify({ policy: { deny: ["group:mcp"], tools: { write_file: { approval: "always" } } } }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("lash policy explain", () => {
  it("shows the layers in order, the verdict, the deciding layer and rule, the effects", () => {
    const r = run(["explain", "write_file", '{"path": "src/a.ts", "content": "x"}']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe(
      `config files: ${join(home, "config.json")}, ${join(project, ".lash", "config.json")}`,
    );
    expect(r.stdout).toContain("tool: write_file\n");
    expect(r.stdout).toContain("effects: write\n");
    const layers = lines
      .filter((l) => /^ {2}\S/.test(l))
      .map((l) => l.trim().slice(0, l.trim().indexOf(": {")));
    expect(layers).toEqual(["global", "profile:coding (global)", "project"]);
    expect(r.stdout).toContain("verdict: ask\n");
    expect(r.stdout).toContain('decided by: project — tools.write_file.approval = "always"\n');
    expect(r.stdout).toContain("approval in effect: always\n");
  });

  it("a path matching workspace.denyPatterns is denied by that rule", () => {
    const r = run(["explain", "read_file", '{"path": "config/.env.local"}']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("verdict: deny\n");
    expect(r.stdout).toContain(
      'decided by: workspace.denyPatterns — workspace.denyPatterns ".env*" (global)',
    );
    expect(r.stdout).toContain('why: "config/.env.local" matches ".env*"');
  });

  it("deny wins: an MCP tool of a trusted server is denied by the project's group:mcp", () => {
    const r = run(["explain", "mcp__github__create_issue"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('note: an MCP tool of the trusted server "github"');
    expect(r.stdout).toContain("verdict: deny\n");
    expect(r.stdout).toContain('decided by: project — deny "group:mcp"');
  });

  it("a tool outside the profile's allow list is denied by the profile layer; reads are allowed", () => {
    const outside = run(["explain", "some_tool"]);
    expect(outside.stdout).toContain("verdict: deny\n");
    expect(outside.stdout).toContain("decided by: profile:coding (global) — allow [");
    expect(outside.stdout).toContain('(no built-in tool is called "some_tool"');
    const read = run(["explain", "grep", '{"pattern": "x"}']);
    expect(read.stdout).toContain("effects: read\n");
    expect(read.stdout).toContain("verdict: allow\n");
  });

  it("a destructive shell command asks under the coding profile (approval risk)", () => {
    const r = run(["explain", "shell", '{"command": "rm -rf /"}']);
    expect(r.stdout).toContain("effects: exec\n");
    expect(r.stdout).toContain("verdict: ask\n");
    expect(r.stdout).toContain('tools["group:exec"].approval = "risk"');
  });

  it("bad input is a usage error that says what to do", () => {
    const noTool = run(["explain"]);
    expect(noTool.code).toBe(2);
    expect(noTool.stderr).toContain("which tool?");
    const badJson = run(["explain", "shell", "{command: ls}"]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain("the arguments are not JSON");
    const action = run(["show"]);
    expect(action.code).toBe(2);
    expect(action.stderr).toContain('unknown action "show" (known: explain)');
  });

  it("lash config lists each file's policy as its own layer", () => {
    const r = spawnSync(process.execPath, [MAIN, "config", "--json"], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", HOME: dir, LASH_HOME: home, NO_COLOR: "1" },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const layers = (JSON.parse(r.stdout) as { policyLayers: { name: string; layer: unknown }[] })
      .policyLayers;
    expect(layers.map((l) => l.name)).toEqual(["global", "project"]);
    expect(layers[1]?.layer).toEqual({ deny: ["group:mcp"], tools: { write_file: { approval: "always" } } });
  });

  it("an unknown policy key in config is an error with a suggestion", () => {
    const other = join(dir, "other");
    mkdirSync(join(other, ".lash"), { recursive: true });
    writeFileSync(
      join(other, ".lash", "config.json"),
      JSON.stringify({ policy: { tools: { shell: { aproval: "always" } } } }),
    );
    const r = run(["explain", "shell"], other);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'policy.tools.shell.aproval: unknown key "aproval" (known keys: "approval"); did you mean "approval"?',
    );
  });

  describe("with a project file and agents (the layers of `lash run` and `lash serve`)", () => {
    let ws: string;
    beforeAll(() => {
      ws = join(dir, "workspace");
      mkdirSync(join(ws, "agents"), { recursive: true });
      writeFileSync(
        join(ws, "lash.yaml"),
        "agents: [agents]\npolicy:\n  tools:\n    shell:\n      approval: always\n",
      );
      writeFileSync(
        join(ws, "agents", "reader.agent.md"),
        "---\nname: reader\ndescription: Reads.\ntools: [read_file, shell]\npolicy:\n  deny: [shell]\n---\nREAD\n",
      );
    });

    it("before `lash build`: says the project file is not built yet; --agent is an error naming lash build", () => {
      const r = run(["explain", "shell", '{"command": "ls"}'], ws);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        "lash.yaml is not built: its policy applies to `lash run` once you run `lash build`",
      );
      const agent = run(["explain", "shell", "--agent", "reader"], ws);
      expect(agent.code).toBe(2);
      expect(agent.stderr).toContain("has no build");
      expect(agent.stderr).toContain("lash build");
    });

    it("after `lash build`: the project file's layer decides; with --agent the agent's deny does (strictest wins)", () => {
      expect(lash(["build"], ws).code).toBe(0);
      const r = run(["explain", "shell", '{"command": "ls"}'], ws);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^build: [0-9a-f]{12} \(project file lash\.yaml\)$/m);
      expect(r.stdout).toContain("the project file's layer applies to `lash run`");
      expect(r.stdout).toMatch(/^ {2}project file: \{/m);
      expect(r.stdout).toContain("verdict: ask\n");
      expect(r.stdout).toContain('decided by: project file — tools.shell.approval = "always"');

      const agent = run(["explain", "shell", '{"command": "ls"}', "--agent", "reader"], ws);
      expect(agent.code, agent.stderr).toBe(0);
      expect(agent.stdout).toContain("agent: reader\n");
      expect(agent.stdout).toMatch(/^ {2}agent:reader: \{/m);
      expect(agent.stdout).toContain("verdict: deny\n");
      expect(agent.stdout).toContain('decided by: agent:reader — deny "shell"');

      const unknown = run(["explain", "shell", "--agent", "writer"], ws);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain("no agent named `writer`");
      expect(unknown.stderr).toContain("agents: reader");
    });
  });
});
