// The scrollback tests' view of the tmux harness (`tmux-term.ts`, which starts the real
// `lash` in a tmux pseudo-terminal against the mock wire server): the visible screen or
// the whole scrollback, keys sent in one write, and a line the shell prints before lash
// (only an explicit /clear may erase the terminal's own history).
import type { MockLlmServer, MockReply } from "@lash/providers/testing";
import { startLash as startTerm } from "./tmux-term.ts";

export { hasTmux } from "./tmux-term.ts";
export const TMUX_MISSING =
  "tmux is not installed, and this test drives lash in a real terminal through it. " +
  "Install it (Debian/Ubuntu: `apt-get install tmux`; macOS: `brew install tmux`): it is the one system " +
  "requirement of `pnpm test` beyond Node and npm (README, Quick start).";

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
  readonly reuse?: { readonly root: string };
}

/** A line the shell prints before lash starts. */
export const BEFORE_LASH = "-- the terminal before lash --";

export async function startLash(options: StartOptions): Promise<TmuxLash> {
  const t = await startTerm({
    cols: options.cols,
    rows: options.rows,
    replies: options.replies,
    ...(options.args ? { args: options.args } : {}),
    ...(options.reuse ? { reuse: options.reuse } : {}),
    before: `echo '${BEFORE_LASH}'`,
  });
  return {
    server: t.server,
    root: t.root,
    cwd: t.cwd,
    home: t.home,
    screen: t.screen,
    history: (join = false) => (join ? t.scrollbackJoined() : t.scrollback()),
    type: t.type,
    keys: t.keysTogether,
    bytes: t.bytes,
    resize: t.resize,
    waitScreen: (pred, what, timeoutMs = 60_000) => t.waitScreen(pred, what, timeoutMs),
    waitHistory: (pred, what, timeoutMs = 60_000) => t.waitFor(pred, what, timeoutMs),
    close: () => t.close(),
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
