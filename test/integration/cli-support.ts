// Spawning the real `lash` process against the mock wire server.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Manifest, ResolvedAgent } from "@lash/agents";
import { bwrapStatus } from "@lash/policy";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { canonicalJson, sha256Hex } from "@lash/sansio";

export const MAIN = join(import.meta.dirname, "..", "..", "apps", "cli", "src", "main.ts");
export const MODEL = "openai-compatible/mock";

/**
 * The shell sandbox for these runs, explicitly: bwrap (the CLI's default on Linux) where it can
 * run, else `off` — so the tests that run `shell` through the CLI pass on a machine without
 * bubblewrap too. Tests that write their own config.json include `policy: SANDBOX_POLICY`.
 */
export const SANDBOX_POLICY: { readonly sandbox: { readonly mode: "bwrap" | "off" } } = {
  sandbox: { mode: bwrapStatus().available ? "bwrap" : "off" },
};

/**
 * Writes `policy.sandbox.mode: "off"` into a fresh LASH_HOME where bwrap cannot run, or always
 * with `off: true` (a test of what an unsandboxed command can reach: the host's /tmp, /proc).
 */
export function sandboxOffWhereBwrapCannotRun(home: string, off = false): void {
  if (SANDBOX_POLICY.sandbox.mode === "bwrap" && !off) return;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ policy: { sandbox: { mode: "off" } } }));
}

export interface Sandbox {
  readonly home: string;
  readonly cwd: string;
  readonly server: MockLlmServer;
  readonly env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

/**
 * A temporary LASH_HOME, HOME and workspace, and a mock server the CLI is pointed at.
 * `shellSandbox: "off"` writes a config that runs `shell` unsandboxed.
 */
export async function sandbox(
  replies: MockReply[] = [],
  options: { readonly shellSandbox?: "off" } = {},
): Promise<Sandbox> {
  const root = mkdtempSync(join(tmpdir(), "lash-cli-test-"));
  const home = join(root, "lash-home");
  const cwd = join(root, "work");
  mkdirSync(cwd);
  sandboxOffWhereBwrapCannotRun(home, options.shellSandbox === "off");
  const server = await startMockServer({ replies });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    LASH_HOME: home,
    LASH_MODEL: MODEL,
    OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
  };
  return {
    home,
    cwd,
    server,
    env,
    async cleanup() {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Spawned {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves with the first stdout line (parsed as JSON when `json`) matching `pred`. */
  waitForLine(pred: (line: string) => boolean): Promise<string>;
  readonly done: Promise<Run>;
}

export function start(
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; input?: string },
): Spawned {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters: { pred: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  let partial = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    stdout += chunk;
    partial += chunk;
    let nl = partial.indexOf("\n");
    while (nl >= 0) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      for (let i = waiters.length - 1; i >= 0; i--) {
        const w = waiters[i]!;
        if (w.pred(line)) {
          waiters.splice(i, 1);
          w.resolve(line);
        }
      }
      nl = partial.indexOf("\n");
    }
  });
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  if (options.input !== undefined) child.stdin.end(options.input);
  else child.stdin.end();
  const done = new Promise<Run>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      for (const w of waiters.splice(0))
        w.resolve(`__exited__ ${code} ${signal}\nstdout:${stdout}\nstderr:${stderr}`);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    done,
    waitForLine: (pred) =>
      new Promise((resolve) => {
        for (const line of stdout.split("\n"))
          if (pred(line)) {
            resolve(line);
            return;
          }
        waiters.push({ pred, resolve });
      }),
  };
}

export function lash(
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; input?: string },
): Promise<Run> {
  return start(args, options).done;
}

/** Parses JSONL output (blank lines ignored). */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The chat-completions `messages` of a recorded request. */
export function chatMessages(body: unknown): { role: string; content?: unknown; tool_call_id?: string }[] {
  return ((body as { messages?: unknown[] }).messages ?? []) as {
    role: string;
    content?: unknown;
    tool_call_id?: string;
  }[];
}

export const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((c) => (c as { text?: string }).text ?? "").join("")
      : "";

/** An agent of a hand-written build: `the <name> agent`, instructions `<NAME>`, the mock model, no tools. */
export const testAgent = (a: Partial<ResolvedAgent> & { readonly name: string }): ResolvedAgent => ({
  description: `the ${a.name} agent`,
  mode: "standard",
  instructions: a.name.toUpperCase(),
  tools: [],
  source: `agents/${a.name}.agent.md`,
  model: MODEL,
  ...a,
});

/**
 * A hand-written build in `cwd/.lash/build` (exactly per packages/agents/src/manifest.ts),
 * named by its real hash as `lash build` computes it (`lash run` verifies it, and re-hashes
 * `inputs`); returns the hash.
 */
export function writeManifest(
  cwd: string,
  agents: readonly ResolvedAgent[],
  project: Manifest["project"] = {},
  inputs: Manifest["inputs"] = [],
): string {
  const body: Omit<Manifest, "hash"> = {
    version: 1,
    lashVersion: "test",
    inputs,
    project,
    agents: [...agents].sort((x, y) => (x.name < y.name ? -1 : 1)),
    skills: [],
  };
  const hash = sha256Hex(canonicalJson(body));
  mkdirSync(join(cwd, ".lash", "build"), { recursive: true });
  writeFileSync(join(cwd, ".lash", "build", `${hash}.json`), JSON.stringify({ ...body, hash }));
  return hash;
}
