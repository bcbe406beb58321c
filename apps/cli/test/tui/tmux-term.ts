// The real `lash` CLI in a tmux pseudo-terminal against the mock wire server:
// start it at a given size, type, and read the whole pane (`capture-pane -S -`,
// scrollback included) until it shows what a test waits for.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { sandboxOffWhereBwrapCannotRun } from "../sandbox-mode.ts";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
export const TMUX_MISSING =
  "tmux is not installed, and this test drives lash in a real terminal through it. " +
  "Install it (Debian/Ubuntu: `apt-get install tmux`; macOS: `brew install tmux`).";
const MAIN = join(import.meta.dirname, "..", "..", "src", "main.ts");

export interface LashTerm {
  readonly cwd: string;
  readonly home: string;
  readonly server: MockLlmServer;
  /** The visible screen. */
  screen(): string;
  /** The whole pane: scrollback and screen. */
  scrollback(): string;
  /** Type literal text. */
  type(text: string): void;
  /** Send tmux key names (`Enter`, `C-r`, `Escape`, `Down`). */
  keys(...names: string[]): void;
  /** Paste text as a terminal does (bracketed paste when the app asked for it). */
  paste(text: string): void;
  /** The visible screen with its colour escapes (`capture-pane -e`). */
  screenAnsi(): string;
  /** Poll the whole pane until `pred` holds. */
  waitFor(pred: (s: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  stderr(): string;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly cols: number;
  readonly rows: number;
  readonly replies: MockReply[];
  /** Files to create in the working directory (relative path → content). */
  readonly files?: Record<string, string | Buffer>;
  /** Extra CLI arguments. */
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
  /** Prompt history entries (`$LASH_HOME/prompt-history.json`). */
  readonly history?: readonly string[];
  /** Reuse this home and working directory (a second run of the same project). */
  readonly reuse?: { readonly root: string };
  /** Run this before lash in the start script (e.g. to seed a session). */
  readonly before?: string;
}

let counter = 0;

export async function startLash(options: StartOptions): Promise<LashTerm & { readonly root: string }> {
  if (!hasTmux) throw new Error(TMUX_MISSING);
  const root = options.reuse?.root ?? mkdtempSync(join(tmpdir(), "lash-tmux-"));
  const cwd = join(root, "work");
  const home = join(root, "lash-home");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  sandboxOffWhereBwrapCannotRun(home);
  for (const [rel, content] of Object.entries(options.files ?? {})) {
    const p = join(cwd, rel);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, content);
  }
  if (options.history) writeFileSync(join(home, "prompt-history.json"), JSON.stringify(options.history));
  const server = await startMockServer({ replies: options.replies });
  const name = `lash-term-${process.pid}-${++counter}`;
  const socket = join(root, `tmux-${counter}.sock`);
  const errLog = join(root, `stderr-${counter}.log`);
  const env: Record<string, string> = {
    HOME: root,
    LASH_HOME: home,
    LASH_MODEL: "openai-compatible/mock",
    OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
    PATH: process.env.PATH ?? "",
    TERM: "xterm-256color",
    ...options.env,
  };
  const script = join(root, `run-${counter}.sh`);
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`),
      ...(options.before ? [options.before] : []),
      `${quote(process.execPath)} ${quote(MAIN)} ${(options.args ?? []).map(quote).join(" ")} 2>${quote(errLog)}`,
      'echo "LASH-EXITED $?"',
      "sleep 120",
    ].join("\n"),
    { mode: 0o755 },
  );
  const tm = (...args: string[]) => execFileSync("tmux", ["-S", socket, ...args], { encoding: "utf8" });
  tm(
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    String(options.cols),
    "-y",
    String(options.rows),
    "-c",
    cwd,
    script,
  );
  const stderr = () => {
    try {
      return readFileSync(errLog, "utf8");
    } catch {
      return "";
    }
  };
  const term: LashTerm & { root: string } = {
    root,
    cwd,
    home,
    server,
    screen: () => tm("capture-pane", "-p", "-t", name),
    scrollback: () => tm("capture-pane", "-p", "-S", "-", "-t", name),
    type: (text) => {
      tm("send-keys", "-t", name, "-l", text);
    },
    keys: (...names) => {
      for (const n of names) tm("send-keys", "-t", name, n);
    },
    paste: (text) => {
      tm("set-buffer", "-b", "lashpaste", text);
      tm("paste-buffer", "-p", "-b", "lashpaste", "-t", name);
    },
    screenAnsi: () => tm("capture-pane", "-p", "-e", "-t", name),
    async waitFor(pred, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        last = term.scrollback();
        if (pred(last)) return last;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`timed out waiting for ${what}; pane:\n${last}\nstderr of lash:\n${stderr()}`);
    },
    stderr,
    async close() {
      try {
        tm("kill-server");
      } catch {
        // already gone
      }
      await server.close();
      if (!options.reuse) rmSync(root, { recursive: true, force: true });
    },
  };
  return term;
}

/** The pane's lines, trailing blanks removed. */
export function paneLines(s: string): string[] {
  const lines = s.split("\n").map((l) => l.replace(/\s+$/, ""));
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export const SIZES = [
  { cols: 80, rows: 24 },
  { cols: 120, rows: 40 },
] as const;
