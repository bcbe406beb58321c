// Slash commands: the table, parsing and suggestions.

export interface CommandSpec {
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly args?: string;
  readonly summary: string;
  /** Runs while a turn streams (others wait for the turn to end). */
  readonly whileRunning: boolean;
}

export const COMMANDS: readonly CommandSpec[] = [
  { name: "help", aliases: ["?"], summary: "keys and commands", whileRunning: true },
  { name: "new", summary: "start a new session", whileRunning: false },
  {
    name: "resume",
    aliases: ["continue"],
    args: "[id]",
    summary: "pick a session of this directory",
    whileRunning: false,
  },
  { name: "fork", summary: "copy this session from here and switch to the copy", whileRunning: false },
  {
    name: "finish",
    summary: "finish this session's cut-off turn (crash, kill) from its journal",
    whileRunning: false,
  },
  {
    name: "abandon",
    summary: "drop this session's cut-off turn (kept in the transcript as abandoned)",
    whileRunning: false,
  },
  { name: "tree", summary: "branches of this session; switch to another", whileRunning: false },
  { name: "model", args: "[provider/model]", summary: "show or switch the model", whileRunning: true },
  {
    name: "compact",
    args: "[instructions]",
    summary: "summarise the history so far into a compaction node (the model then sees the summary)",
    whileRunning: false,
  },
  {
    name: "stop",
    args: "[id]",
    summary: "cancel just the running subagent (the newest, or by session id); the turn goes on",
    whileRunning: true,
  },
  {
    name: "export",
    args: "[html|json|md] [path]",
    summary: "export this session (default: next to the sessions, in exports/)",
    whileRunning: true,
  },
  {
    name: "info",
    aliases: ["status"],
    summary: "session, model, paths, tools, plugins, usage",
    whileRunning: true,
  },
  { name: "cost", aliases: ["usage"], summary: "tokens and cost of this session", whileRunning: true },
  {
    name: "expand",
    args: "[n]",
    summary: "print the newest (or n-th newest) folded card again in full: diff, output, thinking, code",
    whileRunning: true,
  },
  {
    name: "theme",
    args: "[dark|light|high-contrast]",
    summary: "colour theme for what is drawn from now on (also LASH_THEME; NO_COLOR turns colour off)",
    whileRunning: true,
  },
  {
    name: "clear",
    summary: "clear the screen and the scrollback (the session is kept)",
    whileRunning: true,
  },
  { name: "quit", aliases: ["exit", "q"], summary: "leave lash", whileRunning: true },
];

export interface ParsedCommand {
  readonly spec: CommandSpec;
  readonly args: string;
}

export type ParseResult =
  | { readonly kind: "command"; readonly command: ParsedCommand }
  | { readonly kind: "unknown"; readonly name: string; readonly suggestion?: string }
  | { readonly kind: "text" };

/** A prompt starting with `/word` is a command; `//…` or `/path/like` text is sent as a prompt. */
export function parseCommand(input: string): ParseResult {
  const m = /^\/([A-Za-z?][\w-]*)(?:\s+([\s\S]*))?$/.exec(input.trim());
  if (!m) return { kind: "text" };
  const name = m[1]!.toLowerCase();
  const spec = COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
  if (spec) return { kind: "command", command: { spec, args: (m[2] ?? "").trim() } };
  const suggestion = suggest(name);
  return { kind: "unknown", name, ...(suggestion ? { suggestion } : {}) };
}

/** Command names starting with `prefix` (for Tab completion). */
export function complete(prefix: string): string[] {
  const p = prefix.replace(/^\//, "").toLowerCase();
  return COMMANDS.filter((c) => c.name.startsWith(p)).map((c) => c.name);
}

function distance(a: string, b: string): number {
  const d: number[] = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]!;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = d[j]!;
      d[j] = Math.min(d[j]! + 1, d[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return d[b.length]!;
}

function suggest(name: string): string | undefined {
  const names = COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
  const prefix = names.find((n) => n.startsWith(name) || name.startsWith(n));
  if (prefix) return COMMANDS.find((c) => c.name === prefix || c.aliases?.includes(prefix))?.name;
  let best: string | undefined;
  let bestD = 3;
  for (const n of names) {
    const dd = distance(name, n);
    if (dd < bestD) {
      bestD = dd;
      best = n;
    }
  }
  return best ? COMMANDS.find((c) => c.name === best || c.aliases?.includes(best))?.name : undefined;
}

export const KEYS: readonly (readonly [string, string])[] = [
  ["Enter", "send (while a turn runs: queue for the next turn)"],
  ["Shift+Enter, Alt+Enter, Ctrl+J", "new line (or end the line with \\ and press Enter)"],
  ["↑ / ↓", "move between lines; prompt history at the first/last line"],
  ["Esc, Ctrl+C", "cancel the running turn (what finished is kept)"],
  ["Ctrl+C", "clear the prompt; twice on an empty prompt: quit"],
  ["Ctrl+D", "quit (on an empty prompt)"],
  [
    "Ctrl+O",
    "expand/collapse thinking and tool output (prints the last turn again, expanded); /expand unfolds one card",
  ],
  ["Ctrl+L", "clear the screen (it goes to the scrollback) and draw the prompt again"],
  ["Ctrl+A/E, Home/End", "start/end of line"],
  ["Ctrl+U/K/W", "delete to line start / line end / word"],
  ["Alt+←/→, Alt+B/F", "move by word"],
  ["/ …", "command menu as you type (↑/↓ choose, Tab or Enter complete, Esc close)"],
  ["@path", "file menu (fuzzy, .gitignore respected); the file is attached when sent (images too)"],
  ["!command", "run it in a shell, no model turn; its output goes with your next prompt"],
  ["Ctrl+R", "search your earlier prompts (again: older match, Enter: use it)"],
  ["Ctrl+X", "drop the !command output waiting for the next prompt"],
  ["Tab", "complete a /command or an @path"],
  [
    "y / a / n / e",
    "approval prompt: approve once / the tool for the session / deny with a reason / edit the arguments (Y/A/N: every call left)",
  ],
];

export function helpLines(): string[] {
  const w = Math.max(...COMMANDS.map((c) => c.name.length + (c.args ? c.args.length + 1 : 0)));
  const cmds = COMMANDS.map((c) => {
    const head = `/${c.name}${c.args ? ` ${c.args}` : ""}`;
    const al = c.aliases?.length ? ` (also ${c.aliases.map((a) => `/${a}`).join(", ")})` : "";
    return `  ${head.padEnd(w + 2)} ${c.summary}${al}`;
  });
  const kw = Math.max(...KEYS.map(([k]) => k.length));
  const keys = KEYS.map(([k, v]) => `  ${k.padEnd(kw)}  ${v}`);
  return ["Commands", ...cmds, "", "Keys", ...keys];
}
