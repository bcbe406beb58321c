// Runs the real `lash` CLI in a tmux pseudo-terminal against the mock wire server, and reads the
// terminal back: the visible screen, or the whole scrollback (`capture-pane -S -`).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { sandboxOffWhereBwrapCannotRun } from "../sandbox-mode.ts";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
export const TMUX_MISSING =
  "tmux is not installed, and this test drives lash in a real terminal through it. " +
  "Install it (Debian/Ubuntu: `apt-get install tmux`; macOS: `brew install tmux`): it is the one system " +
  "requirement of `pnpm test` beyond Node and npm (README, Quick start).";
const MAIN = join(import.meta.dirname, "..", "..", "src", "main.ts");

export interface TmuxLash {
  readonly server: MockLlmServer;
  readonly root: string;
  readonly cwd: string;
  readonly home: string;
  /** The visible screen. */
  screen(): string;
  /** The whole terminal: scrollback and screen; `join` joins rows the terminal wrapped. */
  history(join?: boolean): string;
  /** Text typed literally. */
  type(text: string): void;
  /** tmux key names (Enter, Down, C-u, …); several keys in one call reach lash in one write. */
  keys(...keys: string[]): void;
  /** Raw bytes in one write (hex pairs), whatever tmux would do with key names. */
  bytes(data: string): void;
  /** Resize the terminal. */
  resize(cols: number, rows: number): void;
  waitScreen(pred: (s: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  waitHistory(pred: (s: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly replies: MockReply[];
  readonly cols: number;
  readonly rows: number;
  /** Extra arguments of `lash`. */
  readonly args?: readonly string[];
  /** Reuse a LASH_HOME and working directory (a second run in the same project). */
  readonly reuse?: { readonly root: string; readonly cwd: string; readonly home: string };
}

/** A line the shell prints before lash starts. */
export const BEFORE_LASH = "-- the terminal before lash --";

let counter = 0;

export async function startLash(options: StartOptions): Promise<TmuxLash> {
  const server = await startMockServer({ replies: options.replies });
  const root = options.reuse?.root ?? mkdtempSync(join(tmpdir(), "lash-tmux-"));
  const cwd = options.reuse?.cwd ?? join(root, "work");
  const home = options.reuse?.home ?? join(root, "lash-home");
  mkdirSync(cwd, { recursive: true });
  sandboxOffWhereBwrapCannotRun(home);
  const name = `lash-${process.pid}-${++counter}`;
  const socket = join(root, `tmux-${counter}.sock`);
  const tm = (...args: string[]) => execFileSync("tmux", ["-S", socket, ...args], { encoding: "utf8" });
  const stderrLog = join(root, `stderr-${counter}.log`);
  const script = join(root, `run-${counter}.sh`);
  const env = {
    HOME: root,
    LASH_HOME: home,
    LASH_MODEL: "openai-compatible/mock",
    OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
    PATH: process.env.PATH ?? "",
    TERM: "xterm-256color",
  };
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      ...Object.entries(env).map(([k, v]) => `export ${k}='${v}'`),
      // the terminal's own history before lash: only an explicit /clear may erase it
      `echo '${BEFORE_LASH}'`,
      `'${process.execPath}' '${MAIN}' ${(options.args ?? []).map((a) => `'${a}'`).join(" ")} 2>'${stderrLog}'`,
      'echo "LASH-EXITED $?"',
      "sleep 600",
    ].join("\n"),
    { mode: 0o755 },
  );
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
  const screen = () => tm("capture-pane", "-p", "-t", name);
  const history = (joined = false) =>
    tm("capture-pane", "-p", ...(joined ? ["-J"] : []), "-S", "-", "-t", name);
  const wait = async (read: () => string, pred: (s: string) => boolean, what: string, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = read();
      if (pred(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    let stderr = "";
    try {
      stderr = readFileSync(stderrLog, "utf8");
    } catch {
      // not written yet
    }
    throw new Error(`timed out waiting for ${what}; screen:\n${screen()}\nstderr of lash:\n${stderr}`);
  };
  return {
    server,
    root,
    cwd,
    home,
    screen,
    history,
    type: (text) => void tm("send-keys", "-t", name, "-l", text),
    keys: (...keys) => void tm("send-keys", "-t", name, ...keys),
    bytes: (hex) => void tm("send-keys", "-t", name, "-H", ...(hex.match(/../g) ?? [])),
    resize: (cols, rows) => void tm("resize-window", "-t", name, "-x", String(cols), "-y", String(rows)),
    waitScreen: (pred, what, timeoutMs) => wait(screen, pred, what, timeoutMs),
    waitHistory: (pred, what, timeoutMs) => wait(() => history(), pred, what, timeoutMs),
    close: async () => {
      try {
        tm("kill-server");
      } catch {
        // already gone
      }
      await server.close();
      if (!options.reuse) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Display width of a captured row (tmux writes wide characters once; emoji and CJK take two columns). */
export function cellWidth(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0xfe0f || cp === 0x200d || (cp >= 0x300 && cp < 0x370)) continue;
    n +=
      cp >= 0x1100 &&
      /[\p{Emoji_Presentation}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(
        ch,
      )
        ? 2
        : 1;
  }
  return n;
}

export function count(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}
