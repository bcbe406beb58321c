// `lash run` as a real process against the mock wire server, over hand-written manifests
// (exactly per packages/agents/src/manifest.ts): a typed output, an agent calling another as
// a tool (a child session, cost rolled up), an entry function with no model call of its own,
// an RLM agent, input validation and the no-build error.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ResolvedAgent } from "@lash/agents";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatMessages,
  jsonLines,
  lash,
  MODEL,
  type Sandbox,
  sandbox,
  testAgent,
  textOf,
  writeManifest,
} from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const agent = (a: Partial<ResolvedAgent> & { name: string; instructions: string }): ResolvedAgent =>
  testAgent(a);

const systemOf = (body: unknown): string =>
  chatMessages(body)
    .filter((m) => m.role === "system")
    .map((m) => textOf(m.content))
    .join("\n");

const summary = {
  type: "object",
  properties: { title: { type: "string" }, score: { type: "integer" } },
  required: ["title", "score"],
  additionalProperties: false,
} as const;

describe("lash run", () => {
  it("says to run lash build when there is no build", async () => {
    box = await sandbox([]);
    const r = await lash(["run", "x", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("run `lash build` first");
    expect(box.server.requests).toHaveLength(0);
  });

  it("runs an agent with a typed output: its instructions are the system prompt, the JSON matches the schema", async () => {
    box = await sandbox([{ text: JSON.stringify({ title: "ok", score: 3 }) }]);
    writeManifest(box.cwd, [
      agent({
        name: "summarizer",
        instructions: "SUMMARIZER-PROMPT",
        tools: [{ name: "read_file", kind: "builtin" }],
        output: summary,
      }),
    ]);
    const r = await lash(["run", "summarizer", "summarize README", "--output-format", "json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const result = jsonLines(r.stdout).at(-1)!;
    expect(result.outcome).toBe("finished");
    const value = JSON.parse(result.text as string) as { title: string; score: number };
    expect(value).toEqual({ title: "ok", score: 3 });
    const body = box.server.requests[0]!.body as {
      tools?: { function: { name: string } }[];
      response_format?: { json_schema?: { schema?: unknown } };
    };
    expect(systemOf(body)).toContain("SUMMARIZER-PROMPT");
    // the agent's tools only (plus the typed-output tools), and the schema as structured output
    const names = (body.tools ?? []).map((t) => t.function.name);
    expect(names).toContain("read_file");
    expect(names).not.toContain("shell");
    expect(names).not.toContain("write_file");
    expect(JSON.stringify(body.response_format ?? {})).toContain('"score"');
    expect(textOf(chatMessages(body).at(-1)!.content)).toBe("summarize README");
    // an ordinary session
    const list = await lash(["sessions", "list", "--json"], { env: box.env, cwd: box.cwd });
    expect(list.stdout).toContain(result.sessionId as string);
  });

  it("rejects input that does not match the agent's input schema, naming the field", async () => {
    box = await sandbox([]);
    writeManifest(box.cwd, [
      agent({
        name: "typed",
        instructions: "T",
        input: { type: "object", properties: { repo: { type: "string" } }, required: ["repo"] },
      }),
    ]);
    const r = await lash(["run", "typed", '{"repository":"x"}'], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("input schema");
    expect(r.stderr).toContain("repo");
    expect(box.server.requests).toHaveLength(0);
  });

  it("an agent calls another as a tool: a child session in the graph, its cost rolled up", async () => {
    box = await sandbox([
      {
        toolCalls: [{ id: "c1", name: "reviewer", arguments: { path: "a.ts" } }],
        usage: { input: 10, output: 5 },
      },
      { text: "LGTM from the reviewer", usage: { input: 100, output: 50 } },
      { text: "The reviewer says LGTM.", usage: { input: 10, output: 5 } },
    ]);
    writeManifest(box.cwd, [
      agent({ name: "lead", instructions: "LEAD-PROMPT", tools: [{ name: "reviewer", kind: "agent" }] }),
      agent({
        name: "reviewer",
        description: "reviews one file",
        instructions: "REVIEWER-PROMPT",
        input: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      }),
    ]);
    const r = await lash(["run", "lead", "review a.ts", "--output-format", "json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.stderr).not.toContain("error");
    expect(r.code).toBe(0);
    const result = jsonLines(r.stdout).at(-1)!;
    expect(result.text).toBe("The reviewer says LGTM.");
    const first = box.server.requests[0]!.body as {
      tools?: { function: { name: string; description?: string; parameters?: unknown } }[];
    };
    const tool = (first.tools ?? []).find((t) => t.function.name === "reviewer");
    expect(tool?.function.description).toBe("reviews one file");
    expect(JSON.stringify(tool?.function.parameters)).toContain('"path"');
    expect(systemOf(box.server.requests[1]!.body)).toContain("REVIEWER-PROMPT");
    expect(textOf(chatMessages(box.server.requests[1]!.body).at(-1)!.content)).toContain("a.ts");
    // the child session is the run's child in the store; its usage is in the parent's total
    // the parent's own turn used 20 input tokens; its ledger adds the child's 100
    expect((result.usage as { input: number }).input).toBe(20);
    const show = await lash(["sessions", "show", result.sessionId as string, "--json"], {
      env: box.env,
      cwd: box.cwd,
    });
    const shown = JSON.parse(show.stdout) as { usage: { total: { input: number; output: number } } };
    expect(shown.usage.total).toMatchObject({ input: 120, output: 60 });
    // the child session is in the store, linked to the run's session
    const stream = await lash(["sessions", "show", result.sessionId as string, "--json"], {
      env: box.env,
      cwd: box.cwd,
    });
    const toolResult = (
      JSON.parse(stream.stdout) as {
        messages: { role: string; parts: { details?: { childSessionId?: string; capability?: string } }[] }[];
      }
    ).messages.find((m) => m.role === "tool")!.parts[0]!;
    expect(toolResult.details?.capability).toBe("reviewer");
    const childId = toolResult.details!.childSessionId!;
    const child = await lash(["sessions", "show", childId, "--json"], { env: box.env, cwd: box.cwd });
    expect(child.code).toBe(0);
    const childShown = JSON.parse(child.stdout) as {
      session: { parent?: string };
      usage: { total: { input: number } };
    };
    expect(childShown.session.parent).toBe(result.sessionId);
    expect(childShown.usage.total.input).toBe(100);
  });

  it("an entry function calls two agents in sequence and makes no model call of its own", async () => {
    box = await sandbox([{ text: "first says A" }, { text: "second says B" }]);
    writeFileSync(
      join(box.cwd, "flow.ts"),
      [
        "interface Ctx { input: unknown; callAgent(name: string, input?: unknown): Promise<unknown>; log(...a: unknown[]): void }",
        "export async function main(ctx: Ctx): Promise<string> {",
        "  const a = await ctx.callAgent('first', 'step one: ' + String(ctx.input));",
        "  const b = await ctx.callAgent('second', 'after: ' + String(a));",
        "  return String(a) + ' | ' + String(b);",
        "}",
      ].join("\n"),
    );
    writeManifest(
      box.cwd,
      [
        agent({ name: "first", instructions: "FIRST-PROMPT" }),
        agent({ name: "second", instructions: "SECOND-PROMPT" }),
      ],
      { entry: { function: "flow.ts#main" } },
    );
    const r = await lash(["run", "the input", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const result = jsonLines(r.stdout).at(-1)!;
    expect(result.value).toBe("first says A | second says B");
    expect(result.sessions as string[]).toHaveLength(2);
    expect(textOf(chatMessages(box.server.requests[0]!.body).at(-1)!.content)).toBe("step one: the input");
    expect(box.server.requests).toHaveLength(2);
    expect(systemOf(box.server.requests[0]!.body)).toContain("FIRST-PROMPT");
    expect(systemOf(box.server.requests[1]!.body)).toContain("SECOND-PROMPT");
    expect(textOf(chatMessages(box.server.requests[1]!.body).at(-1)!.content)).toBe("after: first says A");
  });

  it("runs an RLM agent: a scripted Lashlang cell finishes with the value", async () => {
    box = await sandbox([{ text: 'Done.\n<lashlang>\nfinish { title: "rlm", score: 7 }\n</lashlang>\n' }]);
    writeManifest(box.cwd, [
      agent({ name: "rlmer", instructions: "RLM-PROMPT", mode: "rlm", output: summary }),
    ]);
    const r = await lash(["run", "rlmer", "go", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const result = jsonLines(r.stdout).at(-1)!;
    expect(result.finalValue).toEqual({ title: "rlm", score: 7 });
    expect(systemOf(box.server.requests[0]!.body)).toContain("RLM-PROMPT");
  });
});

describe("lash init && lash build && lash run", () => {
  it("runs the scaffolded agent of a fresh project against the mock server", async () => {
    box = await sandbox([{ text: "Hello from the scaffold." }]);
    const opts = { env: box.env, cwd: box.cwd };
    expect((await lash(["init"], opts)).code).toBe(0);
    const build = await lash(["build"], opts);
    expect(build.code).toBe(0);
    const r = await lash(["run", "hello", "say hi", "-m", MODEL], opts);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Hello from the scaffold.\n");
    expect(box.server.requests).toHaveLength(1);
    expect(textOf(chatMessages(box.server.requests[0]!.body).at(-1)!.content)).toBe("say hi");
    // the build appended the agent's skills catalog to its instructions: the system prompt
    // holds it once, and the skills tools are offered with the agent's own
    const system = systemOf(box.server.requests[0]!.body);
    expect(system.split("## Skills").length - 1).toBe(1);
    expect(system).toContain("- greeting: How to greet people");
    const tools = (box.server.requests[0]!.body as { tools?: { function: { name: string } }[] }).tools ?? [];
    expect(tools.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(["read_file", "glob", "load_skill", "read_skill_file"]),
    );
  });
});

describe("lash run: agents as tools in RLM mode", () => {
  it("an RLM agent calls another agent from Lashlang (agents.<name>)", async () => {
    box = await sandbox([
      { text: '<lashlang>\nr = await agents.code_reviewer({ path: "a.ts" })\nfinish r.value\n</lashlang>\n' },
      { text: "LGTM via Lashlang" },
    ]);
    writeManifest(box.cwd, [
      agent({
        name: "lead",
        mode: "rlm",
        instructions: "RLM-LEAD",
        tools: [{ name: "code-reviewer", kind: "agent" }],
      }),
      agent({
        name: "code-reviewer",
        instructions: "REVIEWER-PROMPT",
        input: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      }),
    ]);
    const r = await lash(["run", "lead", "review", "--output-format", "json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    const result = jsonLines(r.stdout).at(-1)!;
    expect(result.finalValue).toBe("LGTM via Lashlang");
    expect(box.server.requests).toHaveLength(2);
    expect(systemOf(box.server.requests[1]!.body)).toContain("REVIEWER-PROMPT");
  });
});

describe("lash run: MCP tools", () => {
  it("grants `mcp:<server>` as every tool of that server, and nothing else", async () => {
    box = await sandbox([{ text: "done" }]);
    const fixture = join(
      import.meta.dirname,
      "..",
      "..",
      "packages",
      "plugin-mcp",
      "test",
      "fixtures",
      "stdio-server.ts",
    );
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, "config.json"),
      JSON.stringify({
        mcpServers: { fx: { command: process.execPath, args: [fixture], env: { LABEL: "fx" } } },
      }),
    );
    writeManifest(box.cwd, [
      agent({ name: "mcpuser", instructions: "M", tools: [{ name: "mcp:fx", kind: "mcp" }] }),
    ]);
    const r = await lash(["run", "mcpuser", "go"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const body = box.server.requests[0]!.body as { tools?: { function: { name: string } }[] };
    const names = (body.tools ?? []).map((t) => t.function.name);
    expect(names).toContain("mcp__fx__echo");
    // read_output follows the tools whose long output it pages
    expect(names.filter((n) => n !== "read_output").every((n) => n.startsWith("mcp__fx__"))).toBe(true);
  });
  it("applies the agent's policy layer and the project file's defaults.approvalMode", async () => {
    box = await sandbox([
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "x.txt", content: "hi" } }] },
      { text: "done" },
    ]);
    writeManifest(
      box.cwd,
      [
        agent({
          name: "writer",
          instructions: "W",
          tools: [{ name: "write_file", kind: "builtin", access: "write" }],
          policy: { tools: { write_file: { approval: "always" } } },
        }),
      ],
      { defaults: { approvalMode: "reject-all" } },
    );
    const r = await lash(["run", "writer", "write it"], { env: box.env, cwd: box.cwd });
    // without the agent's layer the file would be written; without the project's mode, -p's
    // default (`fail`) would stop the run with exit 1
    expect(r.code).toBe(0);
    expect(existsSync(join(box.cwd, "x.txt"))).toBe(false);
    expect(JSON.stringify(box.server.requests[1]!.body)).toContain(
      "Denied: write_file was not run; the approver (reject-all) denied it",
    );
  });

  it("refuses a project file whose defaults.approvalMode is not a mode", async () => {
    box = await sandbox([]);
    writeManifest(box.cwd, [agent({ name: "a", instructions: "A" })], {
      defaults: { approvalMode: "sometimes" },
    });
    const r = await lash(["run", "a", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('defaults.approvalMode "sometimes"');
    expect(box.server.requests).toHaveLength(0);
  });
  it("offers load_skill for the agent's skills only (a spec's `skills` narrows them)", async () => {
    box = await sandbox([
      { toolCalls: [{ id: "s1", name: "load_skill", arguments: { name: "beta-skill" } }] },
      { toolCalls: [{ id: "s2", name: "load_skill", arguments: { name: "alpha-skill" } }] },
      { text: "ok" },
    ]);
    for (const name of ["alpha-skill", "beta-skill"]) {
      mkdirSync(join(box.cwd, ".lash", "skills", name), { recursive: true });
      writeFileSync(
        join(box.cwd, ".lash", "skills", name, "SKILL.md"),
        `---\nname: ${name}\ndescription: the ${name} description\n---\nthe ${name.toUpperCase()} body\n`,
      );
    }
    writeManifest(box.cwd, [agent({ name: "narrow", instructions: "N", skills: ["alpha-skill"] })]);
    const r = await lash(["run", "narrow", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const second = chatMessages(box.server.requests[1]!.body)
      .filter((m) => m.role === "tool")
      .map((m) => textOf(m.content))
      .join("\n");
    expect(second).toContain('must be one of "alpha-skill", got "beta-skill"');
    expect(second).not.toContain("BETA-SKILL body");
    expect(JSON.stringify(box.server.requests[2]!.body)).toContain("the ALPHA-SKILL body");
  });
});
