import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { ToolOutput } from "@lash/core";
import { Effect, Exit, Fiber } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ShellProgress, type ShellValue, shellTool } from "../src/index.ts";
import { context, isAlive, makeDirs, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, { "sub/file.txt": "hello\n" });
});
afterEach(() => dirs.cleanup());

const value = (out: ToolOutput) => out.value as ShellValue;

/** A grandchild that ignores SIGTERM, so only the SIGKILL after the grace period ends it. */
const STUBBORN = "(trap '' TERM; exec sleep 30) & echo $! > pid; echo ready; wait";

/** Live (non-zombie) processes in a process group, from /proc. */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat = "";
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (pgrp === String(pgid) && state !== "Z" && state !== "X") out.push(Number(entry));
  }
  return out;
}

/** A progress callback that resolves when the streamed output contains `marker`. */
function waitForOutput(marker: string) {
  let seen = "";
  let resolve: () => void = () => {};
  const reached = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    reached,
    progress: (update: unknown) => {
      seen += (update as ShellProgress).text;
      if (seen.includes(marker)) resolve();
    },
  };
}

describe("shell", () => {
  it("runs a command in the workspace root and returns structured output", async () => {
    const out = await run(shellTool(dirs.root), { command: "echo out; echo err >&2; pwd" });
    expect(value(out)).toMatchObject({ exitCode: 0, timedOut: false, truncated: false, stderr: "err\n" });
    expect(value(out).stdout).toBe(`out\n${dirs.root}\n`);
    expect(text(out)).toContain("[exit code: 0]");
    expect(out.isError).toBeUndefined();
  });

  it("returns a non-zero exit as data, not a failure", async () => {
    const out = await run(shellTool(dirs.root), { command: "echo nope >&2; exit 3" });
    expect(value(out).exitCode).toBe(3);
    expect(value(out).stderr).toBe("nope\n");
    expect(text(out)).toContain("[exit code: 3]");
  });

  it("runs in a jailed cwd", async () => {
    const out = await run(shellTool(dirs.root), { command: "cat file.txt", cwd: "sub" });
    expect(value(out).stdout).toBe("hello\n");
    const escaped = await runFailure(shellTool(dirs.root), { command: "ls", cwd: "../outside" });
    expect(escaped.class).toBe("permissionDenied");
    const missing = await runFailure(shellTool(dirs.root), { command: "ls", cwd: "nope" });
    expect(missing.class).toBe("invalidRequest");
  });

  it("passes the environment through, with additions and removals", async () => {
    process.env.LASH_TOOLS_TEST_INHERITED = "inherited";
    process.env.LASH_TOOLS_TEST_REMOVED = "should-not-show";
    try {
      const tool = shellTool(dirs.root, { env: { LASH_ADDED: "added", LASH_TOOLS_TEST_REMOVED: null } });
      const out = await run(tool, {
        command:
          'echo "$LASH_TOOLS_TEST_INHERITED|$LASH_ADDED|$(printenv LASH_TOOLS_TEST_REMOVED || echo unset)|$PER_CALL"',
        env: { PER_CALL: "call" },
      });
      expect(value(out).stdout).toBe("inherited|added|unset|call\n");
    } finally {
      delete process.env.LASH_TOOLS_TEST_INHERITED;
      delete process.env.LASH_TOOLS_TEST_REMOVED;
    }
  });

  it("scrubs credentials from the inherited environment; explicit env and passEnv get through", async () => {
    const secrets: Record<string, string> = {
      ANTHROPIC_API_KEY: "sk-ant-test-anthropic-0123456789",
      OPENAI_API_KEY: "sk-test-openai-0123456789abcdef",
      OPENAI_COMPATIBLE_API_KEY: "compat-key-0123456789",
      GEMINI_API_KEY: "gemini-key-0123456789",
      GOOGLE_API_KEY: "google-key-0123456789",
      LASH_TEST_GH_TOKEN: "gh-token-0123456789",
      LASH_TEST_DB_PASSWORD: "db-password-0123456789",
      AWS_SECRET_ACCESS_KEY: "aws-secret-0123456789",
      LASH_TEST_HELD: "held-by-the-host-0123456789",
    };
    const saved = Object.fromEntries(Object.keys(secrets).map((k) => [k, process.env[k]]));
    Object.assign(process.env, secrets, { LASH_TEST_PASSED_TOKEN: "passed-token-0123456789" });
    try {
      const tool = shellTool(dirs.root, {
        secretEnvNames: ["LASH_TEST_HELD"],
        passEnv: ["LASH_TEST_PASSED_TOKEN"],
        env: { LASH_TEST_EXPLICIT_SECRET: "explicit-secret-0123456789" },
      });
      const out = await run(tool, { command: "env" });
      const env = value(out).stdout;
      for (const [name, v] of Object.entries(secrets)) {
        expect(env, name).not.toContain(`${name}=`);
        expect(env, name).not.toContain(v);
      }
      // kept: the ordinary environment, the explicitly passed and the explicitly set variables
      expect(env).toContain(`PATH=${process.env.PATH}`);
      expect(env).toContain("LASH_TEST_PASSED_TOKEN=passed-token-0123456789");
      expect(env).toContain("LASH_TEST_EXPLICIT_SECRET=explicit-secret-0123456789");
      // the tool tells the model
      expect(tool.description).toContain("Credentials (API keys, tokens, passwords) are removed");
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      delete process.env.LASH_TEST_PASSED_TOKEN;
    }
  });

  it("streams progress in whole lines, so a value written in two pieces arrives whole", async () => {
    const ctx = context();
    // two writes with a pause between them: two chunks on the pipe
    await run(
      shellTool(dirs.root),
      { command: "printf 'key=sk-proj-'; sleep 0.2; printf 'abc123\\nnext'" },
      ctx,
    );
    const texts = (ctx.updates as ShellProgress[]).map((u) => u.text);
    expect(texts.join("")).toBe("key=sk-proj-abc123\nnext");
    expect(texts.some((t) => t.includes("key=sk-proj-abc123"))).toBe(true);
    // a long line without a newline is not held back whole: all but its tail goes out
    const long = context();
    await run(shellTool(dirs.root), { command: "head -c 6000 /dev/zero | tr '\\0' a" }, long);
    const parts = (long.updates as ShellProgress[]).map((u) => u.text);
    expect(parts.join("")).toBe("a".repeat(6000));
    expect(parts.length).toBeGreaterThan(1);
  });

  it("a SIGKILL of the process running the tool also kills the command's process group", async () => {
    const child = spawn(
      process.execPath,
      [
        path.join(import.meta.dirname, "fixtures", "shell-child.ts"),
        dirs.root,
        "echo $$; (sleep 2; echo late > bg-marker) & sleep 2; echo done > marker",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    // the first line is the command's pid, which is its process group id
    const pgid = await new Promise<number>((resolve, reject) => {
      let text = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => {
        text += chunk;
        if (text.includes("\n")) resolve(Number(text.split("\n")[0]));
      });
      child.on("exit", () => reject(new Error(`the child exited early: ${text}`)));
    });
    expect(groupMembers(pgid).length).toBeGreaterThan(0);
    child.kill("SIGKILL");
    await exited;
    // poll until the group is empty (bounded); a surviving command would write the markers at 2 s
    const deadline = Date.now() + 15_000;
    while (groupMembers(pgid).length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(groupMembers(pgid)).toEqual([]);
    expect(existsSync(path.join(dirs.root, "marker"))).toBe(false);
    expect(existsSync(path.join(dirs.root, "bg-marker"))).toBe(false);
  });

  it("a background job a finished command left behind ends when the host process exits", async () => {
    const child = spawn(
      process.execPath,
      [
        path.join(import.meta.dirname, "fixtures", "shell-child.ts"),
        dirs.root,
        "echo $$; (sleep 2; echo late > bg-marker) & echo started",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let text = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      text += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(code).toBe(0); // the tool returned and the host exited normally
    const pgid = Number(text.split("\n")[0]);
    expect(pgid).toBeGreaterThan(0);
    const deadline = Date.now() + 15_000;
    while (groupMembers(pgid).length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(groupMembers(pgid)).toEqual([]);
    expect(existsSync(path.join(dirs.root, "bg-marker"))).toBe(false);
  });

  it("keeps the tail of long output with a truncation marker", async () => {
    const tool = shellTool(dirs.root, { maxOutputBytes: 1000 });
    const out = await run(tool, { command: "for i in $(seq 1 2000); do echo line$i; done" });
    expect(value(out).truncated).toBe(true);
    expect(value(out).stdout).toContain("line2000\n");
    expect(value(out).stdout).not.toContain("line1\n");
    expect(Buffer.byteLength(value(out).stdout)).toBeLessThanOrEqual(1000);
    const t = text(out);
    expect(t).toMatch(/^\[… output truncated: \d+ earlier bytes not shown/);
    expect(t).toContain("line2000");
    expect(t).not.toContain("line1\n");
  });

  it("streams output through ctx.progress", async () => {
    const ctx = context();
    await run(shellTool(dirs.root), { command: "echo one; echo two >&2" }, ctx);
    const updates = ctx.updates as ShellProgress[];
    expect(updates.map((u) => u.text).join("")).toContain("one");
    expect(updates.some((u) => u.stream === "stderr" && u.text.includes("two"))).toBe(true);
  });

  it("on timeout kills the whole process group, including a grandchild", async () => {
    const tool = shellTool(dirs.root, { killGraceMs: 500 });
    const out = await run(tool, { command: "sleep 30 & echo $! > pid; echo started; wait", timeoutMs: 1500 });
    expect(value(out).timedOut).toBe(true);
    expect(value(out).exitCode).toBeNull();
    expect(text(out)).toContain("timed out after 1500 ms");
    expect(text(out)).toContain("started");
    const pid = Number(readFileSync(path.join(dirs.root, "pid"), "utf8").trim());
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(false);
  });

  it("cancellation through ctx.signal kills the process group and fails as cancelled", async () => {
    const controller = new AbortController();
    const ready = waitForOutput("ready");
    const ctx = context({ signal: controller.signal, progress: ready.progress });
    const pending = Effect.runPromiseExit(
      shellTool(dirs.root, { killGraceMs: 300 }).execute({ command: STUBBORN }, ctx),
    );
    await ready.reached;
    const pid = Number(readFileSync(path.join(dirs.root, "pid"), "utf8").trim());
    expect(isAlive(pid)).toBe(true);
    controller.abort();
    const exit = await pending;
    expect(Exit.isFailure(exit)).toBe(true);
    if (Exit.isFailure(exit)) expect(JSON.stringify(exit.cause)).toContain("cancelled");
    expect(isAlive(pid)).toBe(false);
  });

  it("interrupting the fiber kills the process group (SIGKILL after the grace) before the interruption completes", async () => {
    const ready = waitForOutput("ready");
    const ctx = context({ progress: ready.progress });
    const fiber = Effect.runFork(
      shellTool(dirs.root, { killGraceMs: 300 }).execute({ command: STUBBORN }, ctx),
    );
    await ready.reached;
    const pid = Number(readFileSync(path.join(dirs.root, "pid"), "utf8").trim());
    expect(isAlive(pid)).toBe(true);
    const exit = await Effect.runPromise(Fiber.interrupt(fiber));
    expect(Exit.isInterrupted(exit)).toBe(true);
    expect(isAlive(pid)).toBe(false);
  });

  it("does not hang on background processes that keep the pipes open", async () => {
    const out = await run(shellTool(dirs.root), { command: "sleep 30 & echo $! > pid; echo done" });
    expect(value(out).exitCode).toBe(0);
    expect(value(out).stdout).toBe("done\n");
    const pid = Number(readFileSync(path.join(dirs.root, "pid"), "utf8").trim());
    process.kill(pid, "SIGKILL");
  });

  it("reports a shell that cannot be started as a failure", async () => {
    const failure = await runFailure(shellTool(dirs.root, { shell: "/nonexistent/bash" }), {
      command: "true",
    });
    expect(failure.class).toBe("execution");
    expect(failure.message).toContain("could not start `/nonexistent/bash`");
  });

  it("refuses bad arguments with a clear failure", async () => {
    const empty = await runFailure(shellTool(dirs.root), { command: "" });
    expect(empty.class).toBe("invalidRequest");
    const timeout = await runFailure(shellTool(dirs.root), { command: "true", timeoutMs: "soon" });
    expect(timeout.message).toContain("timeoutMs");
    const notObject = await runFailure(shellTool(dirs.root), "ls");
    expect(notObject.message).toContain("JSON object");
  });

  it("declares its contract", () => {
    const tool = shellTool(dirs.root);
    expect(tool.name).toBe("shell");
    expect(tool.truncate).toBe("tail");
    expect(tool.family).toBe("shell");
    expect(tool.binding).toMatchObject({ module: "shell", operation: "exec" });
    expect(tool.inputSchema).toMatchObject({ required: ["command"], additionalProperties: false });
  });
});
