// The real `lash` CLI in a tmux pseudo-terminal against the mock wire server:
// start it at a given size, type, and read the whole pane (`capture-pane -S -`,
// scrollback included) until it shows what a test waits for. The one tmux harness of the
// TUI tests (`tmux-harness.ts` is the scrollback tests' view of it).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  /** The whole pane, rows the terminal wrapped joined (`capture-pane -J`). */
  scrollbackJoined(): string;
  /** Type literal text. */
  type(text: string): void;
  /** Send tmux key names (`Enter`, `C-r`, `Escape`, `Down`), one write each. */
  keys(...names: string[]): void;
  /** Send tmux key names in one write (lash reads them in one chunk). */
  keysTogether(...names: string[]): void;
  /** Raw bytes in one write (hex pairs), whatever tmux would do with key names. */
  bytes(hex: string): void;
  /** Resize the terminal. */
  resize(cols: number, rows: number): void;
  /** Paste text as a terminal does (bracketed paste when the app asked for it). */
  paste(text: string): void;
  /** The visible screen with its colour escapes (`capture-pane -e`). */
  screenAnsi(): string;
  /** Poll the whole pane until `pred` holds. */
  waitFor(pred: (s: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** Poll the visible screen until `pred` holds. */
  waitScreen(pred: (s: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  stderr(): string;
  /** The pid of the lash process (the child of the pane's shell), if it runs. */
  lashPid(): number | undefined;
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
  /** The user config (`$LASH_HOME/config.json`). */
  readonly config?: Record<string, unknown>;
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
  if (options.config) {
    // merged into a config already there (e.g. the sandbox mode the tests set where bwrap cannot run)
    const file = join(home, "config.json");
    const old = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
    const policy = {
      ...(old.policy as object | undefined),
      ...(options.config.policy as object | undefined),
    };
    writeFileSync(file, JSON.stringify({ ...old, ...options.config, policy }));
  }
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
    "-f",
    "/dev/null",
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
  tm("set-option", "-t", name, "history-limit", "50000");
  // PIPE_PANE=<file>: the bytes lash writes to the terminal, for debugging
  if (process.env.PIPE_PANE) tm("pipe-pane", "-t", name, "-o", `cat >> ${process.env.PIPE_PANE}`);
  const stderr = () => {
    try {
      return readFileSync(errLog, "utf8");
    } catch {
      return "";
    }
  };
  const poll = async (read: () => string, pred: (s: string) => boolean, what: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = read();
      if (pred(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what}; pane:\n${last}\nstderr of lash:\n${stderr()}`);
  };
  const term: LashTerm & { root: string } = {
    root,
    cwd,
    home,
    server,
    screen: () => tm("capture-pane", "-p", "-t", name),
    scrollback: () => tm("capture-pane", "-p", "-S", "-", "-t", name),
    scrollbackJoined: () => tm("capture-pane", "-p", "-J", "-S", "-", "-t", name),
    type: (text) => {
      tm("send-keys", "-t", name, "-l", text);
    },
    keys: (...names) => {
      for (const n of names) tm("send-keys", "-t", name, n);
    },
    keysTogether: (...names) => void tm("send-keys", "-t", name, ...names),
    bytes: (hex) => void tm("send-keys", "-t", name, "-H", ...(hex.match(/../g) ?? [])),
    resize: (cols, rows) => void tm("resize-window", "-t", name, "-x", String(cols), "-y", String(rows)),
    paste: (text) => {
      tm("set-buffer", "-b", "lashpaste", text);
      tm("paste-buffer", "-p", "-b", "lashpaste", "-t", name);
    },
    screenAnsi: () => tm("capture-pane", "-p", "-e", "-t", name),
    waitFor: (pred, what, timeoutMs = 20_000) => poll(() => term.scrollback(), pred, what, timeoutMs),
    waitScreen: (pred, what, timeoutMs = 20_000) => poll(() => term.screen(), pred, what, timeoutMs),
    stderr,
    lashPid: () => {
      const shell = tm("display-message", "-p", "-t", name, "#{pane_pid}").trim();
      const r = spawnSync("ps", ["-o", "pid=", "--ppid", shell], { encoding: "utf8" });
      const pid = Number(r.stdout.trim().split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    },
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
