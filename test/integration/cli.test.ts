// End-to-end: the real `lash` process against the mock wire server (real HTTP, real SQLite).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chatMessages, jsonLines, lash, MODEL, type Sandbox, sandbox, textOf } from "./cli-support.ts";

// each test spawns several CLI processes; the shared CI box can be slow
vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox;
afterEach(async () => {
  await box?.cleanup();
});

const writeThenAnswer = [
  {
    text: "Writing it.",
    toolCalls: [{ name: "write_file", arguments: { path: "out.txt", content: "hello\n" } }],
    usage: { input: 100, output: 20 },
  },
  { text: "The file is written.", textChunks: 3, usage: { input: 150, output: 8, cacheRead: 50 } },
];

describe("lash -p output formats", () => {
  it("text: the final answer on stdout, tool progress on stderr, exit 0", async () => {
    box = await sandbox(writeThenAnswer);
    const r = await lash(["-p", "write out.txt"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("The file is written.\n");
    expect(r.stderr).toMatch(/\[tool\] write_file · ok · \d+ms/);
    expect(readFileSync(join(box.cwd, "out.txt"), "utf8")).toBe("hello\n");
    // the prompt reached the model as the last user message
    const first = chatMessages(box.server.requests[0]!.body);
    expect(textOf(first.at(-1)!.content)).toBe("write out.txt");
  });

  it("json: one result object with outcome, text, sessionId, usage, cost, duration, tool calls", async () => {
    box = await sandbox(writeThenAnswer);
    const r = await lash(["-p", "write out.txt", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines).toHaveLength(1);
    const o = lines[0]!;
    expect(o).toMatchObject({
      type: "result",
      outcome: "finished",
      text: "The file is written.",
      model: MODEL,
      usage: { input: 250, output: 28, reasoning: 0, cacheRead: 50, cacheWrite: 0 },
      costUsd: null, // an unknown model has no price: absent, not zero
      toolCalls: 1,
    });
    expect(o.sessionId).toMatch(/^ses_/);
    expect(typeof o.durationMs).toBe("number");
    expect(r.stderr).toBe(""); // json mode keeps stderr for errors
  });

  it("json: costUsd for a catalog model (openai/gpt-5-mini over the Responses wire)", async () => {
    box = await sandbox([{ text: "ok", usage: { input: 1_000_000, output: 0 } }]);
    const env = {
      ...box.env,
      LASH_MODEL: undefined,
      OPENAI_API_KEY: "test",
      OPENAI_BASE_URL: box.server.baseUrl("openai-responses"),
    };
    const r = await lash(["-p", "hi", "--output-format", "json"], { env, cwd: box.cwd });
    expect(r.code).toBe(0);
    const o = jsonLines(r.stdout)[0]!;
    expect(o.model).toBe("openai/gpt-5-mini"); // the default when only OPENAI_API_KEY is set
    expect(o.costUsd).toBeCloseTo(0.25, 6);
    expect(box.server.requests[0]!.path).toBe("/v1/responses");
  });

  it("stream-json: versioned JSONL of every activity event, then the result", async () => {
    box = await sandbox(writeThenAnswer);
    const r = await lash(["-p", "write out.txt", "--output-format", "stream-json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines.every((l) => l.v === 1)).toBe(true);
    const types = lines.map((l) => l.type);
    expect(types[0]).toBe("session");
    expect(types.at(-1)).toBe("result");
    for (const t of [
      "turnStarted",
      "llmRequest",
      "textDelta",
      "toolStarted",
      "toolCompleted",
      "usage",
      "turnFinished",
    ])
      expect(types).toContain(t);
    expect(types.indexOf("toolStarted")).toBeLessThan(types.indexOf("toolCompleted"));
    const seqs = lines.filter((l) => typeof l.seq === "number").map((l) => l.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const deltas = lines.filter((l) => l.type === "textDelta").map((l) => l.text);
    expect(deltas.join("")).toBe("Writing it.The file is written.");
    expect(lines.at(-1)).toMatchObject({ outcome: "finished", toolCalls: 1, sessionId: lines[0]!.sessionId });
  });

  it("reads the prompt from stdin", async () => {
    box = await sandbox([{ text: "got it" }]);
    const r = await lash(["-p"], { env: box.env, cwd: box.cwd, input: "a prompt\nover two lines\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("got it\n");
    const msgs = chatMessages(box.server.requests[0]!.body);
    expect(textOf(msgs.at(-1)!.content)).toBe("a prompt\nover two lines");
  });

  it("--no-session persists nothing", async () => {
    box = await sandbox([{ text: "ephemeral" }]);
    const r = await lash(["-p", "hi", "--no-session", "--output-format", "json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout)[0]!.text).toBe("ephemeral");
    expect(existsSync(join(box.home, "lash.db"))).toBe(false);
  });

  it("--system, --append-system and --tools shape the request", async () => {
    box = await sandbox([{ text: "ok" }]);
    const r = await lash(
      ["-p", "hi", "--system", "BASE PROMPT", "--append-system", "EXTRA RULE", "--tools", "read_file,grep"],
      { env: box.env, cwd: box.cwd },
    );
    expect(r.code).toBe(0);
    const body = box.server.requests[0]!.body as {
      messages: { role: string; content: unknown }[];
      tools?: { function: { name: string } }[];
    };
    const system = textOf(body.messages.find((m) => m.role === "system")?.content);
    expect(system).toContain("BASE PROMPT");
    expect(system).toContain("EXTRA RULE");
    const names = (body.tools ?? []).map((t) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(["grep", "read_file"]));
    expect(names).not.toContain("shell");
    expect(names).not.toContain("write_file");
  });
});

describe("exit codes", () => {
  it("1 when the turn stops (a provider error the retry layer does not retry)", async () => {
    box = await sandbox([{ error: { code: "badRequest", message: "bad thing" } }]);
    const r = await lash(["-p", "hi", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)[0]).toMatchObject({ outcome: "stopped", reason: "providerError" });
  });

  it("1 with --max-turns when the model keeps calling tools", async () => {
    box = await sandbox();
    box.server.respondWith(() => ({ toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] }));
    const r = await lash(["-p", "loop", "--max-turns", "2"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/stopped \(maxTurns\)/);
  });

  it("2 for an unknown flag, with a pointer to --help", async () => {
    box = await sandbox();
    const r = await lash(["-p", "hi", "--frobnicate"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--frobnicate");
    expect(r.stderr).toContain("lash --help");
    expect(box.server.requests).toHaveLength(0);
  });

  it("2 for --resume without an id in print mode", async () => {
    box = await sandbox();
    const r = await lash(["-p", "--resume"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--resume needs a session id/);
  });

  it("2 for an unknown config key, naming the file, the path and the known keys", async () => {
    box = await sandbox();
    mkdirSync(box.home, { recursive: true });
    writeFileSync(join(box.home, "config.json"), JSON.stringify({ modle: "x/y", maxTurns: 5 }));
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(join(box.home, "config.json"));
    expect(r.stderr).toMatch(/modle: unknown key "modle" \(known keys: .*"model"/);
  });

  it("2 for a mistyped project config value, naming the expected value", async () => {
    box = await sandbox();
    mkdirSync(join(box.cwd, ".lash"));
    writeFileSync(
      join(box.cwd, ".lash", "config.json"),
      JSON.stringify({ maxTurns: "ten", mcpServers: { fs: { command: 5 } } }),
    );
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('maxTurns: expected a positive integer, got "ten"');
    expect(r.stderr).toContain("mcpServers.fs.command: expected a string, got 5");
  });

  it("2 with one message naming the environment variables and --base-url when no provider is configured", async () => {
    box = await sandbox();
    const env = { PATH: box.env.PATH, HOME: box.env.HOME, LASH_HOME: box.home };
    const r = await lash(["-p", "hi"], { env, cwd: box.cwd });
    expect(r.code).toBe(2);
    for (const s of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "--base-url", "Ollama"])
      expect(r.stderr).toContain(s);
    // a model whose vendor has no key: the same message, naming the model
    const r2 = await lash(["-p", "hi", "--model", "anthropic/claude-sonnet-4-5"], { env, cwd: box.cwd });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/no provider configured for anthropic\/claude-sonnet-4-5 .*ANTHROPIC_API_KEY/);
  });

  it("2 with no prompt (argument or stdin)", async () => {
    box = await sandbox();
    const r = await lash(["-p"], { env: box.env, cwd: box.cwd, input: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no prompt/);
  });

  it("--base-url points the chosen model's provider at a local server", async () => {
    box = await sandbox([{ text: "local" }]);
    const env = { PATH: box.env.PATH, HOME: box.env.HOME, LASH_HOME: box.home };
    const r = await lash(
      ["-p", "hi", "--model", "openai-compatible/llama3", "--base-url", box.server.baseUrl("openai-chat")],
      { env, cwd: box.cwd },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("local\n");
    expect(box.server.requests[0]!.model).toBe("llama3");
  });
});

describe("sessions across processes", () => {
  it("--continue resumes the latest session of the directory; --resume <id> and --fork <id> by id", async () => {
    box = await sandbox();
    box.server.respondWith((req) => ({ text: `reply ${req.index + 1}` }));
    const json = (r: { stdout: string }) => jsonLines(r.stdout).at(-1)!;
    const opts = { env: box.env, cwd: box.cwd };

    const a = json(await lash(["-p", "first", "--output-format", "json"], opts));
    const b = await lash(["-p", "second", "--continue", "--output-format", "json"], opts);
    expect(b.code).toBe(0);
    expect(json(b).sessionId).toBe(a.sessionId);
    expect(chatMessages(box.server.requests[1]!.body).map((m) => textOf(m.content))).toEqual(
      expect.arrayContaining(["first", "reply 1", "second"]),
    );

    // a second session in the same directory is now the latest
    const c = json(await lash(["-p", "other", "--output-format", "json"], opts));
    expect(c.sessionId).not.toBe(a.sessionId);

    // --resume <id> goes back to the first one
    const d = json(
      await lash(["-p", "third", "--resume", a.sessionId as string, "--output-format", "json"], opts),
    );
    expect(d.sessionId).toBe(a.sessionId);
    const seen = chatMessages(box.server.requests[3]!.body).map((m) => textOf(m.content));
    expect(seen).toEqual(expect.arrayContaining(["first", "second", "third"]));
    expect(seen).not.toContain("other");

    // --fork: a new session continuing the first one's history; the original is unchanged
    const e = json(
      await lash(["-p", "forked turn", "--fork", a.sessionId as string, "--output-format", "json"], opts),
    );
    expect(e.sessionId).not.toBe(a.sessionId);
    expect(chatMessages(box.server.requests[4]!.body).map((m) => textOf(m.content))).toEqual(
      expect.arrayContaining(["first", "third", "forked turn"]),
    );
    const shown = JSON.parse(
      (await lash(["sessions", "show", a.sessionId as string, "--json"], opts)).stdout,
    ) as {
      session: { turns: number };
    };
    expect(shown.session.turns).toBe(3);

    // list: three sessions here, the fork marked
    const list = await lash(["sessions", "list"], opts);
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split("\n")).toHaveLength(4); // header + 3
    expect(list.stdout).toContain(`fork of ${a.sessionId}`);
  });

  it("--fork --at <node> with an unknown node is a usage error", async () => {
    box = await sandbox([{ text: "x" }]);
    const opts = { env: box.env, cwd: box.cwd };
    const a = jsonLines((await lash(["-p", "one", "--output-format", "json"], opts)).stdout)[0]!;
    const r = await lash(["-p", "two", "--fork", a.sessionId as string, "--at", "node_nope"], opts);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot fork .*node_nope/);
  });

  it("sessions show / rm; unknown ids are usage errors", async () => {
    box = await sandbox(writeThenAnswer);
    const opts = { env: box.env, cwd: box.cwd };
    const a = jsonLines((await lash(["-p", "write out.txt", "--output-format", "json"], opts)).stdout)[0]!;
    const id = a.sessionId as string;
    const show = await lash(["sessions", "show", id.slice(0, 12)], opts); // a unique prefix works
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("user: write out.txt");
    expect(show.stdout).toMatch(/→ write_file \{"path":"out.txt"/);
    expect(show.stdout).toContain("assistant: The file is written.");
    const rm = await lash(["sessions", "rm", id], opts);
    expect(rm.code).toBe(0);
    const again = await lash(["sessions", "show", id], opts);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`no session "${id}"`);
  });
});

describe("other commands", () => {
  it("--version and --help", async () => {
    box = await sandbox();
    const v = await lash(["--version"], { env: box.env, cwd: box.cwd });
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^lash \d+\.\d+\.\d+/);
    const h = await lash(["--help"], { env: box.env, cwd: box.cwd });
    expect(h.code).toBe(0);
    for (const flag of [
      "--print",
      "--model",
      "--base-url",
      "--mode",
      "--max-turns",
      "--system",
      "--append-system",
      "--tools",
      "--cwd",
      "--session",
      "--continue",
      "--resume",
      "--fork",
      "--at",
      "--no-session",
      "--output-format",
    ])
      expect(h.stdout).toContain(flag);
  });

  it("config prints the effective config with secrets redacted", async () => {
    box = await sandbox();
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, "config.json"),
      JSON.stringify({
        model: "openai-compatible/from-config",
        mcpServers: {
          gh: { command: "npx", args: ["server-github"], env: { GITHUB_TOKEN: "ghp_secret123", LOG: "1" } },
        },
      }),
    );
    mkdirSync(join(box.cwd, ".lash"));
    writeFileSync(join(box.cwd, ".lash", "config.json"), JSON.stringify({ maxTurns: 7 }));
    const env = { ...box.env, LASH_MODEL: undefined, ANTHROPIC_API_KEY: "sk-ant-very-secret" };
    const r = await lash(["config"], { env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("ghp_secret123");
    expect(r.stdout).not.toContain("sk-ant-very-secret");
    const o = JSON.parse(r.stdout) as {
      config: { maxTurns: number; mcpServers: { gh: { env: Record<string, string> } } };
      model: { id: string; source: string };
      providers: Record<string, string>;
    };
    expect(o.config.maxTurns).toBe(7); // project config merged over the user's
    expect(o.config.mcpServers.gh.env).toEqual({ GITHUB_TOKEN: "<redacted>", LOG: "1" });
    expect(o.model).toEqual({ id: "openai-compatible/from-config", source: "config" });
    expect(o.providers.anthropic).toBe("set (ANTHROPIC_API_KEY)");
  });

  it("doctor checks node, database, provider keys and MCP servers", async () => {
    box = await sandbox();
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, "config.json"),
      JSON.stringify({ mcpServers: { docs: { url: "http://127.0.0.1:9/mcp" } } }),
    );
    const r = await lash(["doctor"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/✓ node +\d+/);
    expect(r.stdout).toMatch(/✓ database +.*lash\.db opens \(schema v\d+\)/);
    expect(r.stdout).toMatch(/provider anthropic +ANTHROPIC_API_KEY not set/);
    expect(r.stdout).toMatch(/[✓!] model +openai-compatible\/mock \(from env\)/);
    expect(r.stdout).toMatch(/✗ mcp docs +http · failed · cannot reach http:\/\/127.0.0.1:9\/mcp/);
    const bad = await lash(["doctor"], {
      env: { PATH: box.env.PATH, HOME: box.env.HOME, LASH_HOME: box.home },
      cwd: box.cwd,
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/✗ model/);
  });

  it("demo runs a scripted session end to end and says the model is scripted", async () => {
    box = await sandbox();
    const r = await lash(["demo"], { env: { PATH: box.env.PATH, HOME: box.env.HOME }, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("SCRIPTED");
    expect(r.stdout.match(/ {4}✓ \d+ms/g)).toHaveLength(3); // write, read, shell
    expect(r.stdout).toContain("3 notes/hello.md"); // the shell command really ran
    expect(r.stdout).toMatch(/the model received \d+ messages/);
    expect(existsSync(join(box.env.HOME as string, ".lash"))).toBe(false); // a temporary LASH_HOME
  });

  it("plain `lash` with no key and no terminal says so and runs the demo", async () => {
    box = await sandbox();
    const r = await lash([], { env: { PATH: box.env.PATH, HOME: box.env.HOME }, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("No API key is set");
    expect(r.stdout).toContain("SCRIPTED");
  });

  it("lashlang run reads a program from stdin", async () => {
    box = await sandbox();
    const r = await lash(["lashlang", "run", "-"], {
      env: box.env,
      cwd: box.cwd,
      input: "let x = 20\nfinish(x * 2 + 2)",
    });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("42");
  });
});

describe("wired packages", () => {
  it("--mode rlm: the model writes Lashlang, the host runs it, finish(value) is the answer", async () => {
    box = await sandbox([
      { text: "Computing.\n<lashlang>\nlet n = 20 + 1\nfinish({ answer: n * 2 })\n</lashlang>\n" },
    ]);
    const r = await lash(["-p", "compute", "--mode", "rlm", "--output-format", "json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    const o = jsonLines(r.stdout)[0]!;
    expect(o).toMatchObject({ outcome: "finished", finalValue: { answer: 42 } });
    expect(JSON.parse(o.text as string)).toEqual({ answer: 42 });
    const list = JSON.parse(
      (await lash(["sessions", "list", "--json"], { env: box.env, cwd: box.cwd })).stdout,
    ) as {
      mode: string;
    }[];
    expect(list[0]!.mode).toBe("rlm");
  });

  it("export writes html/json/md; import recreates the session", async () => {
    box = await sandbox(writeThenAnswer);
    const opts = { env: box.env, cwd: box.cwd };
    const a = jsonLines((await lash(["-p", "write out.txt", "--output-format", "json"], opts)).stdout)[0]!;
    const id = a.sessionId as string;
    const md = await lash(["export", id, "--format", "md", "-o", "s.md"], opts);
    expect(md.code).toBe(0);
    const text = readFileSync(join(box.cwd, "s.md"), "utf8");
    expect(text).toContain("write out.txt");
    expect(text).toContain("The file is written.");
    const html = await lash(["export", id, "-o", "s.html"], opts);
    expect(html.code).toBe(0);
    expect(readFileSync(join(box.cwd, "s.html"), "utf8")).toMatch(/^<!doctype html>/i);
    expect((await lash(["export", id, "--format", "json", "-o", "s.json"], opts)).code).toBe(0);
    const imp = await lash(["import", "s.json"], opts);
    expect(imp.code).toBe(0);
    const list = JSON.parse((await lash(["sessions", "list", "--all", "--json"], opts)).stdout) as unknown[];
    expect(list).toHaveLength(2);
    const bad = await lash(["export", "ses_nope"], opts);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("ses_nope");
  });

  it("--trace writes versioned JSONL trace records; trace view renders them", async () => {
    box = await sandbox(writeThenAnswer);
    const opts = { env: { ...box.env, SECRET_TOKEN: "tok-do-not-leak" }, cwd: box.cwd };
    const r = await lash(["-p", "write out.txt", "--trace", "t.jsonl"], opts);
    expect(r.code).toBe(0);
    const records = jsonLines(readFileSync(join(box.cwd, "t.jsonl"), "utf8"));
    expect(records.length).toBeGreaterThan(3);
    expect(records.every((x) => x.v === 1)).toBe(true);
    const kinds = new Set(records.map((x) => String(x.kind)));
    expect([...kinds].some((k) => /turn/i.test(k))).toBe(true);
    expect([...kinds].some((k) => /tool/i.test(k))).toBe(true);
    const view = await lash(["trace", "view", "t.jsonl", "-o", "t.html"], opts);
    expect(view.code).toBe(0);
    expect(readFileSync(join(box.cwd, "t.html"), "utf8")).toContain("<html");
  });

  it("MCP servers from config: tools reach the model as mcp__<server>__<tool>; doctor reports them ready", async () => {
    box = await sandbox([
      { toolCalls: [{ name: "mcp__fx__echo", arguments: { text: "hi there" } }] },
      { text: "echoed" },
    ]);
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
    const opts = { env: box.env, cwd: box.cwd };
    const r = await lash(["-p", "echo via mcp"], opts);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("echoed\n");
    const first = box.server.requests[0]!.body as { tools?: { function: { name: string } }[] };
    expect((first.tools ?? []).map((t) => t.function.name)).toContain("mcp__fx__echo");
    const toolMsg = chatMessages(box.server.requests[1]!.body).find((m) => m.role === "tool");
    expect(textOf(toolMsg?.content)).toContain("fx echo: hi there");
    const doctor = await lash(["doctor"], opts);
    expect(doctor.stdout).toMatch(/✓ mcp fx +stdio · ready · \d+ tools/);
  });
});
