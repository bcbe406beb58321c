// Unit tests of the CLI shell: argument parsing, config validation and merging, model choice, git branch.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCommand } from "../src/args.ts";
import { mergeConfig, redactConfig, validateConfig } from "../src/config.ts";
import { CliError } from "../src/errors.ts";
import { gitBranch } from "../src/git.ts";
import { chooseModel, noProviderMessage } from "../src/providers.ts";

const usage = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(2);
    return (e as Error).message;
  }
  throw new Error("expected a usage error");
};

describe("parseCommand", () => {
  it("a prompt, print mode and flags", () => {
    const c = parseCommand([
      "-p",
      "fix",
      "the",
      "bug",
      "--model",
      "openai/gpt-5",
      "--max-turns",
      "3",
      "--tools",
      "grep, shell",
    ]);
    expect(c).toMatchObject({
      kind: "run",
      flags: {
        print: true,
        prompt: "fix the bug",
        model: "openai/gpt-5",
        maxTurns: 3,
        tools: ["grep", "shell"],
      },
    });
  });

  it("--resume takes the next word unless it is a flag; bare --resume means the picker", () => {
    expect(parseCommand(["--resume", "ses_1", "-p", "go"])).toMatchObject({
      flags: { resume: "ses_1", prompt: "go" },
    });
    expect(parseCommand(["--resume", "--model", "a/b"])).toMatchObject({
      flags: { resume: "", model: "a/b" },
    });
    expect(parseCommand(["-r"])).toMatchObject({ flags: { resume: "" } });
  });

  it("subcommands only as the first word", () => {
    expect(parseCommand(["sessions", "show", "abc"])).toMatchObject({
      kind: "sessions",
      action: "show",
      args: { id: "abc" },
    });
    expect(parseCommand(["sessions"])).toMatchObject({ kind: "sessions", action: "list" });
    expect(parseCommand(["-p", "sessions"])).toMatchObject({ kind: "run", flags: { prompt: "sessions" } });
    expect(parseCommand(["lashlang", "run", "-", "--json"])).toEqual({
      kind: "lashlang",
      argv: ["run", "-", "--json"],
    });
  });

  it("usage errors name the problem", () => {
    expect(usage(() => parseCommand(["--continue", "--fork", "x"]))).toContain(
      "--continue and --fork cannot be combined",
    );
    expect(usage(() => parseCommand(["--at", "n1"]))).toContain("--at only applies with --fork");
    expect(usage(() => parseCommand(["--output-format", "json"]))).toContain("only applies with -p");
    expect(usage(() => parseCommand(["-p", "x", "--output-format", "xml"]))).toContain(
      "text, json or stream-json",
    );
    expect(usage(() => parseCommand(["--max-turns", "0"]))).toContain("positive integer");
    expect(usage(() => parseCommand(["--model", "gpt-5"]))).toContain("provider/model");
    expect(usage(() => parseCommand(["--mode", "fast"]))).toContain('"standard" or "rlm"');
    expect(usage(() => parseCommand(["--no-session", "--continue"]))).toContain(
      "--no-session cannot be combined",
    );
    expect(usage(() => parseCommand(["sessions", "rm"]))).toContain("expects one session id");
    expect(usage(() => parseCommand(["sessions", "purge"]))).toContain('unknown sessions command "purge"');
  });
});

describe("config", () => {
  it("accepts a full config, including an MCP block copied from another client", () => {
    const c = validateConfig(
      {
        model: "anthropic/claude-sonnet-4-5",
        mode: "rlm",
        maxTurns: 10,
        tools: ["grep"],
        providers: { "openai-compatible": { baseUrl: "http://localhost:11434/v1" } },
        mcpServers: {
          gh: { command: "npx", args: ["x"], autoApprove: ["a"], disabled: true },
          d: { url: "http://x" },
        },
        trace: { file: "t.jsonl" },
      },
      "c.json",
    );
    expect(c.mode).toBe("rlm");
  });

  it("errors name the file, the path and what was expected", () => {
    expect(usage(() => validateConfig({ trace: { file: "t", level: "max" } }, "/c.json"))).toBe(
      'invalid config in /c.json:\n  trace.level: expected "standard" or "extended", got "max"',
    );
    expect(usage(() => validateConfig({ mcpServers: { a: { command: "x", url: "y" } } }, "c"))).toContain(
      'mcpServers.a: needs either "command"',
    );
    expect(usage(() => validateConfig({ providers: { anthropic: { apiKey: "sk" } } }, "c"))).toContain(
      "API keys and secrets are read from the environment",
    );
    expect(usage(() => validateConfig([], "c"))).toContain("invalid config in c");
  });

  it("project config merges over the user's by key", () => {
    const merged = mergeConfig(
      { model: "a/b", providers: { openai: { baseUrl: "u1" } }, mcpServers: { x: { command: "x" } } },
      { maxTurns: 3, providers: { google: { baseUrl: "u2" } }, mcpServers: { y: { url: "http://y" } } },
    );
    expect(merged).toEqual({
      model: "a/b",
      maxTurns: 3,
      providers: { openai: { baseUrl: "u1" }, google: { baseUrl: "u2" } },
      mcpServers: { x: { command: "x" }, y: { url: "http://y" } },
    });
  });

  it("redacts secret-looking env and header values of MCP servers", () => {
    const r = redactConfig({
      mcpServers: {
        a: { command: "x", env: { API_KEY: "k", MODE: "m" } },
        b: { url: "http://b", headers: { Authorization: "Bearer t", Accept: "json" } },
      },
    });
    expect(r.mcpServers?.a?.env).toEqual({ API_KEY: "<redacted>", MODE: "m" });
    expect(r.mcpServers?.b?.headers).toEqual({ Authorization: "<redacted>", Accept: "json" });
  });
});

describe("model choice", () => {
  it("flag > LASH_MODEL > config > the first vendor with a key", () => {
    const env = { OPENAI_API_KEY: "k", GEMINI_API_KEY: "g" };
    expect(chooseModel("x/y", env, { model: "c/m" })).toEqual({ model: "x/y", source: "flag" });
    expect(chooseModel(undefined, { ...env, LASH_MODEL: "e/m" }, { model: "c/m" })).toEqual({
      model: "e/m",
      source: "env",
    });
    expect(chooseModel(undefined, env, { model: "c/m" })).toEqual({ model: "c/m", source: "config" });
    expect(chooseModel(undefined, env, {})).toEqual({ model: "openai/gpt-5-mini", source: "default" });
    expect(chooseModel(undefined, { ANTHROPIC_API_KEY: "a", ...env }, {})?.model).toBe(
      "anthropic/claude-sonnet-4-5",
    );
    expect(chooseModel(undefined, { GOOGLE_API_KEY: "g" }, {})?.model).toBe("google/gemini-2.5-flash");
    expect(chooseModel(undefined, { OPENAI_API_KEY: " " }, {})).toBeUndefined();
  });

  it("the no-provider message names every variable and --base-url", () => {
    const m = noProviderMessage(undefined);
    for (const s of [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "GEMINI_API_KEY",
      "OPENAI_COMPATIBLE_BASE_URL",
      "--base-url",
      "lash demo",
    ])
      expect(m).toContain(s);
  });
});

describe("gitBranch", () => {
  it("reads HEAD from the nearest .git, including a worktree's gitdir file and a detached HEAD", () => {
    const root = mkdtempSync(join(tmpdir(), "lash-git-"));
    try {
      mkdirSync(join(root, "repo", ".git"), { recursive: true });
      mkdirSync(join(root, "repo", "src", "deep"), { recursive: true });
      writeFileSync(join(root, "repo", ".git", "HEAD"), "ref: refs/heads/feature/x\n");
      expect(gitBranch(join(root, "repo", "src", "deep"))).toBe("feature/x");
      mkdirSync(join(root, "wt-git"));
      writeFileSync(join(root, "wt-git", "HEAD"), "0123456789abcdef0123456789abcdef01234567\n");
      mkdirSync(join(root, "wt"));
      writeFileSync(join(root, "wt", ".git"), `gitdir: ${join(root, "wt-git")}\n`);
      expect(gitBranch(join(root, "wt"))).toBe("0123456");
      mkdirSync(join(root, "none"));
      expect(gitBranch(join(root, "none"))).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
