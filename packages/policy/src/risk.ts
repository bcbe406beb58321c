// The risk evaluator: how dangerous one tool call is, as a level (low | medium | high), a
// category and the reasons. `approval: "risk"` asks at or above the policy's threshold.
//
// Shell commands are tokenised with a real shell-words parser (`shell-quote`) and walked
// command by command — operators (`|`, `&&`, `||`, `;`, `&`, subshells), redirections,
// wrappers (`sudo`, `env`, `nice`, `xargs`, `timeout` …) and nested scripts (`sh -c '…'`,
// `eval`, backticks) — so a quoted "rm -rf" in an `echo` is just text and `ls; sudo reboot`
// is two commands. File tools are judged by the paths they touch (inside or outside the
// workspace, secret and build/config files) and the size of the change.
import os from "node:os";
import nodePath from "node:path";
import type { RiskSummary, ToolEffectKind, ToolPreview } from "@lash/core";
import { parse as parseShell } from "shell-quote";
import { pathArguments } from "./policy.ts";

export type RiskLevel = RiskSummary["level"];

export interface RiskInput {
  readonly name: string;
  readonly args: unknown;
  readonly effects: readonly ToolEffectKind[];
  /** The workspace root (absolute): relative paths resolve against it. */
  readonly workspace: string;
  /** The call's preview when known (its files and line counts are used). */
  readonly preview?: ToolPreview;
  /** The home directory `~` stands for (default: `os.homedir()`). */
  readonly home?: string;
}

interface Finding {
  readonly level: RiskLevel;
  readonly category: string;
  readonly reason: string;
}

const RANK: Record<RiskLevel, number> = { low: 0, medium: 1, high: 2 };

/** Changed lines (added + removed) from which a file change counts as large. */
export const LARGE_CHANGE_LINES = 300;
/** Files from which one change counts as broad. */
export const MANY_FILES = 10;

/** Assess one call. Pure and synchronous: the same call gets the same summary. */
export function assessRisk(input: RiskInput): RiskSummary {
  const ctx: Ctx = {
    root: nodePath.resolve(input.workspace),
    home: input.home ?? os.homedir(),
    findings: [],
  };
  const args = (typeof input.args === "object" && input.args !== null ? input.args : {}) as Record<
    string,
    unknown
  >;
  const effects = input.effects;
  if (typeof args.command === "string" && (input.name === "shell" || effects.includes("exec"))) {
    const cwd = typeof args.cwd === "string" ? resolveIn(ctx.root, args.cwd, ctx.home) : ctx.root;
    assessScript(ctx, args.command, cwd, 0);
    if (ctx.findings.length === 0) add(ctx, "low", "read", "reads only");
  } else if (effects.some((e) => e !== "read")) {
    assessFileCall(ctx, input, args);
  } else {
    add(ctx, "low", "read", "changes nothing");
    for (const p of pathArguments(input.name, args)) touchPath(ctx, p, ctx.root, "read");
  }
  return summarise(ctx.findings, effects);
}

function summarise(findings: readonly Finding[], effects: readonly ToolEffectKind[]): RiskSummary {
  // the deciding finding: the highest level, then the most telling category
  let top: Finding | undefined;
  for (const f of findings)
    if (
      top === undefined ||
      RANK[f.level] > RANK[top.level] ||
      (RANK[f.level] === RANK[top.level] && weight(f.category) > weight(top.category))
    )
      top = f;
  const fallback = (["exec", "write", "network", "secret", "read"] as const).find((e) => effects.includes(e));
  const level = top?.level ?? "low";
  // the deciding reason, the others of its level, then the medium ones (each once)
  const reasons = [
    ...new Set([
      ...(top !== undefined ? [top.reason] : []),
      ...findings.filter((f) => f.level === level).map((f) => f.reason),
      ...findings.filter((f) => f.level !== level && f.level !== "low").map((f) => f.reason),
    ]),
  ];
  return { level, category: top?.category ?? fallback ?? "read", reasons };
}

const CATEGORY_WEIGHT = ["read", "exec", "write", "network", "secret", "privilege", "destructive"];
const weight = (category: string) => CATEGORY_WEIGHT.indexOf(category);

interface Ctx {
  readonly root: string;
  readonly home: string;
  readonly findings: Finding[];
}

function add(ctx: Ctx, level: RiskLevel, category: string, reason: string): void {
  ctx.findings.push({ level, category, reason });
}

// ---------------------------------------------------------------------------
// paths

/** A path the call touches, resolved: `undefined` when it is known only at run time (`$VAR`). */
function resolveIn(cwd: string, p: string, home: string): string {
  if (p === "~" || p.startsWith("~/")) return nodePath.join(home, p.slice(1));
  return nodePath.resolve(cwd, p);
}

const isDynamic = (p: string) => p.includes("$") || p.includes("`") || /^~[^/]/.test(p);

function inside(root: string, abs: string): boolean {
  const rel = nodePath.relative(root, abs);
  return rel === "" || (!rel.startsWith("..") && !nodePath.isAbsolute(rel));
}

const SECRET_NAMES = new Set([
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ed25519",
  ".netrc",
  ".pgpass",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  "credentials",
  "auth.json",
  "shadow",
  "sudoers",
]);
const SECRET_EXT = new Set([".pem", ".key", ".p12", ".pfx", ".keystore", ".jks"]);
const SECRET_DIRS = [".ssh", ".aws", ".gnupg", ".docker", ".kube"];
const ENV_TEMPLATES = new Set([".env.example", ".env.sample", ".env.template", ".env.dist"]);

const BUILD_NAMES = new Set([
  "package.json",
  "package-lock.json",
  "pnpm-lock.yaml",
  "pnpm-workspace.yaml",
  "yarn.lock",
  "bun.lockb",
  "bun.lock",
  "npm-shrinkwrap.json",
  "Cargo.toml",
  "Cargo.lock",
  "go.mod",
  "go.sum",
  "pyproject.toml",
  "poetry.lock",
  "uv.lock",
  "requirements.txt",
  "Pipfile",
  "Pipfile.lock",
  "Gemfile",
  "Gemfile.lock",
  "composer.json",
  "composer.lock",
  "Dockerfile",
  "Containerfile",
  "Makefile",
  "Jenkinsfile",
  ".gitlab-ci.yml",
  ".travis.yml",
  ".gitignore",
  ".gitattributes",
  ".gitmodules",
  "tsconfig.json",
  "biome.json",
]);

/** What kind of file a path is: `secret`, `git` (repository internals), `lash` (lash's own config), `build` or plain. */
function fileKind(abs: string, root: string): "secret" | "git" | "lash" | "build" | undefined {
  // inside the workspace only the path below the root counts (a workspace may live under any directory)
  const parts = (inside(root, abs) ? nodePath.relative(root, abs) : abs)
    .split(nodePath.sep)
    .filter((s) => s !== "");
  const base = parts[parts.length - 1] ?? "";
  if (parts.includes(".git")) return "git";
  if (SECRET_DIRS.some((d) => parts.includes(d)) && !base.endsWith(".pub")) return "secret";
  if (base === ".env" || (base.startsWith(".env.") && !ENV_TEMPLATES.has(base))) return "secret";
  if (SECRET_NAMES.has(base) || SECRET_EXT.has(nodePath.extname(base))) return "secret";
  if (parts.includes(".lash") || parts.includes(".github") || parts.includes(".circleci")) {
    return parts.includes(".lash") ? "lash" : "build";
  }
  if (BUILD_NAMES.has(base) || /^docker-compose.*\.ya?ml$/.test(base) || /^Dockerfile\./.test(base))
    return "build";
  if (/^tsconfig\..*json$/.test(base) || /^(vite|vitest|webpack|rollup|eslint)\.config\./.test(base))
    return "build";
  return undefined;
}

const DEV_OK = new Set([
  "/dev/null",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/tty",
  "/dev/zero",
  "/dev/random",
  "/dev/urandom",
]);

/** Record what touching one path means. `p` is as written (for the reasons). */
function touchPath(
  ctx: Ctx,
  p: string,
  cwd: string,
  access: "read" | "write",
  /** Note a plain write inside the workspace as a low finding (file tools sum theirs up instead). */
  noteInside = true,
): void {
  if (isDynamic(p)) {
    if (access === "write") add(ctx, "medium", "write", `writes to a path known only when it runs: ${p}`);
    return;
  }
  const abs = resolveIn(cwd, p, ctx.home);
  if (abs.startsWith("/dev/") || abs.startsWith("/proc/") || abs.startsWith("/sys/")) {
    if (DEV_OK.has(abs) || abs.startsWith("/dev/fd/")) return;
    if (access === "write") add(ctx, "high", "destructive", `writes to a device or kernel file: ${abs}`);
    return;
  }
  const kind = fileKind(abs, ctx.root);
  const within = inside(ctx.root, abs);
  const shown = within ? nodePath.relative(ctx.root, abs) || "." : abs;
  if (kind === "secret")
    add(ctx, "high", "secret", `${access === "write" ? "writes" : "reads"} a secret file: ${shown}`);
  if (access === "write") {
    if (!within) add(ctx, "high", "write", `writes outside the workspace: ${abs}`);
    if (kind === "git") add(ctx, "high", "write", `writes git's internals: ${shown}`);
    if (kind === "lash") add(ctx, "high", "write", `changes lash's own config: ${shown}`);
    if (kind === "build") add(ctx, "medium", "write", `changes a build/config file: ${shown}`);
    if (within && noteInside) add(ctx, "low", "write", `writes ${shown}`);
  } else if (!within && kind === undefined) {
    add(ctx, "medium", "read", `reads outside the workspace: ${abs}`);
  }
}

// ---------------------------------------------------------------------------
// file tools (write_file, edit, apply_patch, MCP and other tools)

function assessFileCall(ctx: Ctx, input: RiskInput, args: Record<string, unknown>): void {
  const paths = pathArguments(input.name, args);
  const files = input.preview?.files;
  for (const p of paths) touchPath(ctx, p, ctx.root, "write", false);
  for (const f of files ?? []) if (!paths.includes(f.path)) touchPath(ctx, f.path, ctx.root, "write", false);
  if (paths.length === 0 && (files === undefined || files.length === 0)) {
    // a tool that says it changes things but not what: an MCP tool, a plugin's tool
    const kinds = input.effects.filter((e) => e !== "read");
    const category = kinds.includes("exec") ? "exec" : (kinds[0] ?? "write");
    add(
      ctx,
      "medium",
      category,
      `${input.name} has effects ${kinds.join(", ")} and no preview of what it changes`,
    );
    return;
  }
  // size of the change: the preview's counts, else the patch or content itself
  let changed = 0;
  let deleted = 0;
  if (files !== undefined) {
    for (const f of files) {
      changed += f.added + f.removed;
      if (f.action === "delete") deleted++;
    }
  } else if (typeof args.patch === "string") {
    for (const line of args.patch.split("\n")) {
      if (line.startsWith("+++ ") || line.startsWith("--- ")) {
        if (line === "+++ /dev/null") deleted++;
        continue;
      }
      if (line.startsWith("+") || line.startsWith("-")) changed++;
    }
  } else if (typeof args.content === "string") {
    changed = args.content === "" ? 0 : args.content.split("\n").length;
  } else if (Array.isArray(args.edits)) {
    for (const e of args.edits as { oldText?: unknown; newText?: unknown }[]) {
      for (const t of [e?.oldText, e?.newText]) if (typeof t === "string") changed += t.split("\n").length;
    }
  }
  const count = Math.max(paths.length, files?.length ?? 0);
  if (deleted > 0)
    add(ctx, "medium", "destructive", `deletes ${deleted === 1 ? "a file" : `${deleted} files`}`);
  if (count >= MANY_FILES) add(ctx, "medium", "write", `touches ${count} files`);
  if (changed >= LARGE_CHANGE_LINES) add(ctx, "medium", "write", `a large change: ${changed} lines`);
  add(
    ctx,
    "low",
    "write",
    `changes ${count === 1 ? "1 file" : `${count} files`} (${changed === 1 ? "1 line" : `${changed} lines`})`,
  );
}

// ---------------------------------------------------------------------------
// shell

type Token = string | { readonly op: string } | { readonly op: "glob"; readonly pattern: string };

const SEPARATORS = new Set([";", "&&", "||", "|", "|&", "&", ";;", "(", ")"]);
const WRITE_REDIRECTS = new Set([">", ">>", ">|", "&>", "&>>"]);
const READ_REDIRECTS = new Set(["<", "<<<"]);
const MAX_DEPTH = 4;

/**
 * Prepare a script for shell-quote, which reads unquoted newlines as blanks and does not
 * know command substitution or heredocs: a small scanner (quotes, backslashes, comments)
 * turns unquoted newlines into `;`, drops heredoc bodies (data, not commands) and lifts out
 * every `` `…` `` and `$(…)` body (outside single quotes) — each is a script of its own,
 * assessed separately; in the text it becomes the unknown word `$SUBST`.
 */
function prepareScript(script: string): { text: string; nested: string[] } {
  let out = "";
  const nested: string[] = [];
  const heredocs: { word: string; tabs: boolean }[] = [];
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < script.length; i++) {
    const c = script[i] as string;
    if (quote !== "'" && c === "\\" && i + 1 < script.length) {
      const next = script[i + 1] as string;
      out += quote === undefined && next === "\n" ? " " : c + next; // a line continuation joins the lines
      i++;
      continue;
    }
    if (quote !== "'" && (c === "`" || (c === "$" && script[i + 1] === "("))) {
      let depth = 0;
      let j = c === "`" ? i + 1 : i + 2;
      const start = j;
      for (; j < script.length; j++) {
        const d = script[j] as string;
        if (d === "\\") j++;
        else if (c === "`" && d === "`") break;
        else if (c === "$" && d === "(") depth++;
        else if (c === "$" && d === ")") {
          if (depth === 0) break;
          depth--;
        }
      }
      nested.push(script.slice(start, j));
      out += "$SUBST";
      i = j;
      continue;
    }
    if (quote === undefined && c === "#" && (i === 0 || /[\s;&|()]/.test(script[i - 1] as string))) {
      // a comment, to the end of the line
      while (i + 1 < script.length && script[i + 1] !== "\n") i++;
      continue;
    }
    if (quote === undefined && c === "<" && script.startsWith("<<", i) && script[i + 2] !== "<") {
      // a heredoc: `<<[-] WORD` stays (a redirection of the word); its body, up to the line
      // that is WORD, is data, not commands — dropped
      const m = /^<<(-?)[ \t]*(?:'([^']*)'|"([^"]*)"|([^\s;&|<>()]+))/.exec(script.slice(i));
      if (m !== null) {
        heredocs.push({ word: m[2] ?? m[3] ?? m[4] ?? "", tabs: m[1] === "-" });
        out += `<< ${JSON.stringify(m[2] ?? m[3] ?? m[4] ?? "")}`;
        i += m[0].length - 1;
        continue;
      }
    }
    if (quote === undefined && (c === "'" || c === '"')) quote = c;
    else if (quote === c) quote = undefined;
    out += quote === undefined && c === "\n" ? " ; " : c;
    if (quote === undefined && c === "\n") {
      for (const doc of heredocs.splice(0)) {
        for (;;) {
          const end = script.indexOf("\n", i + 1);
          const line = script.slice(i + 1, end < 0 ? undefined : end);
          i = end < 0 ? script.length : end;
          if ((doc.tabs ? line.replace(/^\t+/, "") : line) === doc.word || end < 0) break;
        }
      }
    }
  }
  return { text: out, nested };
}

function tokenize(text: string): Token[] {
  // variables stay visible as `$NAME` (their values are unknown here)
  const parsed = parseShell(text, (key) => `$${key}`);
  const out: Token[] = [];
  for (const t of parsed) {
    if (typeof t === "string") out.push(t);
    else if ("comment" in t) continue;
    else if ("op" in t) out.push(t.op === "glob" ? (t as { pattern: string }).pattern : { op: t.op });
  }
  return out;
}

interface Command {
  readonly words: string[];
  readonly redirects: { readonly op: string; readonly target: string }[];
  /** The commands before this one in its pipeline (`a | b | this`). */
  readonly pipedFrom: readonly Command[];
}

function splitCommands(tokens: readonly Token[]): Command[] {
  const commands: Command[] = [];
  let pipeline: Command[] = [];
  let current: Command = { words: [], redirects: [], pipedFrom: [] };
  const flush = (op: string | undefined) => {
    if (current.words.length > 0 || current.redirects.length > 0) {
      commands.push(current);
      pipeline.push(current);
    }
    if (op !== "|" && op !== "|&") pipeline = [];
    current = { words: [], redirects: [], pipedFrom: [...pipeline] };
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (typeof t === "string") {
      current.words.push(t);
      continue;
    }
    if (SEPARATORS.has(t.op)) {
      flush(t.op);
      continue;
    }
    // a redirection: `2>` arrives as a word "2" then the operator
    const last = current.words[current.words.length - 1];
    if (last !== undefined && /^\d+$/.test(last) && (WRITE_REDIRECTS.has(t.op) || t.op === ">&"))
      current.words.pop();
    const target = tokens[i + 1];
    if (typeof target === "string") {
      i++;
      if (t.op === ">&" || t.op === "<&") {
        if (!/^\d+$|^-$/.test(target)) current.redirects.push({ op: ">", target });
      } else current.redirects.push({ op: t.op, target });
    }
  }
  flush(undefined);
  return commands;
}

function assessScript(ctx: Ctx, script: string, cwd: string, depth: number): void {
  if (depth > MAX_DEPTH) {
    add(ctx, "medium", "exec", "nests shells too deeply to read");
    return;
  }
  let tokens: Token[];
  const { text, nested } = prepareScript(script);
  for (const inner of nested) assessScript(ctx, inner, cwd, depth + 1);
  try {
    tokens = tokenize(text);
  } catch {
    add(ctx, "medium", "exec", "a command line that could not be parsed");
    return;
  }
  let dir = cwd;
  for (const command of splitCommands(tokens)) {
    for (const r of command.redirects) {
      if (WRITE_REDIRECTS.has(r.op)) touchPath(ctx, r.target, dir, "write");
      else if (READ_REDIRECTS.has(r.op) && r.op === "<") touchPath(ctx, r.target, dir, "read");
    }
    const next = assessCommand(ctx, command, dir, depth);
    if (next !== undefined) dir = next;
  }
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish", "ash"]);
const INTERPRETERS = new Set([...SHELLS, "python", "python3", "perl", "ruby", "node", "php"]);
const DOWNLOADERS = new Set(["curl", "wget", "fetch", "aria2c"]);
const NETWORK = new Set([
  "curl",
  "wget",
  "ssh",
  "scp",
  "sftp",
  "rsync",
  "nc",
  "ncat",
  "netcat",
  "telnet",
  "ftp",
  "http",
  "https",
  "socat",
  "aria2c",
]);
const READ_ONLY = new Set([
  "ls",
  "ll",
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "ag",
  "fd",
  "tree",
  "pwd",
  "echo",
  "printf",
  "which",
  "type",
  "file",
  "stat",
  "du",
  "df",
  "diff",
  "cmp",
  "sort",
  "uniq",
  "cut",
  "tr",
  "jq",
  "yq",
  "date",
  "whoami",
  "id",
  "uname",
  "hostname",
  "printenv",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "true",
  "false",
  "test",
  "[",
  "sleep",
  "seq",
  "nl",
  "od",
  "xxd",
  "hexdump",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "column",
  "awk",
  "sed",
  "cd",
  "pushd",
  "popd",
  "exit",
  "export",
  "set",
  "unset",
  "source",
  ".",
  "history",
  "man",
  "help",
]);
/** Commands whose non-option arguments are all files they read. */
const READS_ARGS = new Set([
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "wc",
  "ls",
  "stat",
  "file",
  "du",
  "diff",
  "cmp",
  "nl",
  "od",
  "xxd",
  "hexdump",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "tree",
  "source",
  ".",
]);
/** Commands whose non-option arguments are all files they change. */
const WRITES_ARGS = new Set(["touch", "mkdir", "rmdir", "truncate", "tee", "ln", "mv", "unlink", "shred"]);
const PACKAGE_MANAGERS = new Set([
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "pip",
  "pip3",
  "uv",
  "poetry",
  "cargo",
  "go",
  "gem",
  "apt",
  "apt-get",
  "brew",
  "dnf",
  "yum",
  "apk",
  "pacman",
  "composer",
  "npx",
  "pnpx",
  "bunx",
]);
const INSTALL_VERBS = new Set([
  "install",
  "i",
  "add",
  "update",
  "upgrade",
  "up",
  "get",
  "sync",
  "remove",
  "uninstall",
  "rm",
]);

/** Wrappers that run the rest of their words as a command; the value: how many option words take an argument. */
const WRAPPER_ARG_OPTIONS: Record<string, ReadonlySet<string>> = {
  sudo: new Set(["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"]),
  doas: new Set(["-u", "-C"]),
  env: new Set(["-u", "-C", "-S", "--unset", "--chdir"]),
  nice: new Set(["-n", "--adjustment"]),
  ionice: new Set(["-c", "-n", "-p"]),
  nohup: new Set(),
  time: new Set(["-f", "-o"]),
  timeout: new Set(["-s", "-k", "--signal", "--kill-after"]),
  stdbuf: new Set(["-i", "-o", "-e"]),
  xargs: new Set(["-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a"]),
  exec: new Set(["-a"]),
  command: new Set(),
  builtin: new Set(),
  watch: new Set(["-n", "-d"]),
  chroot: new Set(),
};

/** Short flags of a word like `-rf` (`undefined` for a long option or a non-option). */
function shortFlags(word: string): string | undefined {
  return /^-[A-Za-z]+$/.test(word) ? word.slice(1) : undefined;
}

function optionsAndOperands(words: readonly string[]): { options: string[]; operands: string[] } {
  const options: string[] = [];
  const operands: string[] = [];
  let ended = false;
  for (const w of words) {
    if (!ended && w === "--") ended = true;
    else if (!ended && w.startsWith("-") && w !== "-") options.push(w);
    else operands.push(w);
  }
  return { options, operands };
}

const hasShort = (options: readonly string[], letters: string) =>
  options.some((o) => {
    const f = shortFlags(o);
    return f !== undefined && [...letters].some((l) => f.includes(l));
  });

/** Assess one simple command; returns the new working directory after a `cd`. */
function assessCommand(ctx: Ctx, command: Command, cwd: string, depth: number): string | undefined {
  let words = [...command.words];
  // leading assignments: `FOO=bar cmd`
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string)) words.shift();
  // wrappers: sudo, env, nice, xargs …
  for (;;) {
    const name = nodePath.basename(words[0] ?? "");
    const argOptions = WRAPPER_ARG_OPTIONS[name];
    if (argOptions === undefined) break;
    if (name === "sudo" || name === "doas")
      add(
        ctx,
        "high",
        "privilege",
        `runs as another user (${name}${words[1] ? ` ${words.slice(1).join(" ")}` : ""})`,
      );
    if (name === "chroot") add(ctx, "high", "privilege", "changes the root directory (chroot)");
    let i = 1;
    while (i < words.length) {
      const w = words[i] as string;
      if (w === "--") {
        i++;
        break;
      }
      if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++;
      else if (w.startsWith("-") && w !== "-") i += argOptions.has(w) ? 2 : 1;
      else if ((name === "timeout" || name === "nice") && /^[\d.]+[smhd]?$/.test(w)) i++;
      else if (name === "chroot")
        i++; // the new root
      else break;
    }
    words = words.slice(i);
    if (name === "chroot") break;
  }
  const argv0 = words[0];
  if (argv0 === undefined) return undefined;
  const name = nodePath.basename(argv0);
  const rest = words.slice(1);
  const { options, operands } = optionsAndOperands(rest);

  // nested scripts: `bash -c '…'`, `eval …`
  if (SHELLS.has(name)) {
    const c = rest.findIndex((w) => w === "-c" || (shortFlags(w)?.includes("c") ?? false));
    if (c >= 0 && rest[c + 1] !== undefined) {
      assessScript(ctx, rest[c + 1] as string, cwd, depth + 1);
      return undefined;
    }
    const downloader = command.pipedFrom.find((p) => DOWNLOADERS.has(nodePath.basename(p.words[0] ?? "")));
    if (downloader !== undefined && operands.length === 0) {
      add(
        ctx,
        "high",
        "network",
        `pipes a download into a shell (${nodePath.basename(downloader.words[0] ?? "")} | ${name})`,
      );
      return undefined;
    }
    if (operands[0] !== undefined) touchPath(ctx, operands[0], cwd, "read");
    add(ctx, "medium", "exec", `runs a ${name} script`);
    return undefined;
  }
  if (name === "eval") {
    assessScript(ctx, rest.join(" "), cwd, depth + 1);
    return undefined;
  }
  if (
    INTERPRETERS.has(name) &&
    command.pipedFrom.some((p) => DOWNLOADERS.has(nodePath.basename(p.words[0] ?? "")))
  ) {
    add(ctx, "high", "network", `pipes a download into an interpreter (${name})`);
    return undefined;
  }

  switch (name) {
    case "rm": {
      const recursive = hasShort(options, "rR") || options.includes("--recursive");
      const force = hasShort(options, "f") || options.includes("--force");
      for (const p of operands) touchPath(ctx, p, cwd, "write");
      if (operands.some((p) => isRootish(ctx, p, cwd)))
        add(ctx, "high", "destructive", `deletes a top-level or home directory (rm ${rest.join(" ")})`);
      if (recursive)
        add(
          ctx,
          "high",
          "destructive",
          `deletes recursively${force ? ", forced" : ""} (rm ${rest.join(" ")})`,
        );
      else add(ctx, "medium", "destructive", `deletes files (rm ${rest.join(" ")})`);
      return undefined;
    }
    case "find": {
      const exec = rest.findIndex((w) => w === "-exec" || w === "-execdir" || w === "-ok" || w === "-okdir");
      if (rest.includes("-delete")) add(ctx, "high", "destructive", "deletes what it finds (find -delete)");
      if (exec >= 0) {
        const end = rest.findIndex((w, k) => k > exec && (w === ";" || w === "+"));
        const inner = rest.slice(exec + 1, end < 0 ? undefined : end).filter((w) => w !== "{}");
        const innerName = nodePath.basename(inner[0] ?? "");
        if (innerName === "rm" || innerName === "shred" || innerName === "unlink")
          add(ctx, "high", "destructive", `deletes what it finds (find -exec ${innerName})`);
        else assessCommand(ctx, { words: inner, redirects: [], pipedFrom: [] }, cwd, depth + 1);
      }
      const start = rest.find((w) => !w.startsWith("-"));
      if (start !== undefined) touchPath(ctx, start, cwd, "read");
      return undefined;
    }
    case "git":
      assessGit(ctx, rest, cwd);
      return undefined;
    case "chmod":
    case "chown":
    case "chgrp": {
      const recursive = hasShort(options, "R") || options.includes("--recursive");
      const mode = operands[0] ?? "";
      const open = name === "chmod" && (/^0?777$/.test(mode) || /^(a|ugo|o)\+[rwx]*w/.test(mode));
      for (const p of operands.slice(1)) touchPath(ctx, p, cwd, "write");
      if (recursive && open)
        add(ctx, "high", "privilege", `opens permissions recursively (${name} ${rest.join(" ")})`);
      else if (open || recursive || name !== "chmod")
        add(ctx, "medium", "privilege", `changes ownership or permissions (${name} ${rest.join(" ")})`);
      else add(ctx, "low", "write", `changes permissions (${name} ${rest.join(" ")})`);
      return undefined;
    }
    case "dd": {
      const of = rest.find((w) => w.startsWith("of="));
      if (of !== undefined) {
        const target = of.slice(3);
        if (target.startsWith("/dev/") && !DEV_OK.has(target))
          add(ctx, "high", "destructive", `writes a raw device (dd ${of})`);
        else touchPath(ctx, target, cwd, "write");
      }
      add(ctx, "medium", "exec", "copies raw data (dd)");
      return undefined;
    }
    case "shutdown":
    case "reboot":
    case "halt":
    case "poweroff":
    case "systemctl":
    case "service":
    case "mount":
    case "umount":
    case "useradd":
    case "userdel":
    case "passwd":
    case "crontab":
    case "iptables":
      add(ctx, "high", "privilege", `changes the system (${name})`);
      return undefined;
    case "kill":
    case "killall":
    case "pkill":
      add(ctx, "medium", "exec", `stops processes (${name})`);
      return undefined;
    case "cp":
    case "install": {
      const dest = operands[operands.length - 1];
      for (const p of operands.slice(0, -1)) touchPath(ctx, p, cwd, "read");
      if (dest !== undefined) touchPath(ctx, dest, cwd, "write");
      add(ctx, "low", "write", `copies files (${name})`);
      return undefined;
    }
    case "cd":
    case "pushd": {
      const to = operands[0];
      if (to === undefined || isDynamic(to)) return ctx.home;
      return resolveIn(cwd, to, ctx.home);
    }
    case "tar":
    case "unzip": {
      const extract = name === "unzip" || hasShort(options.slice(0, 1), "x") || /^x/.test(rest[0] ?? "");
      const into = rest[rest.indexOf("-C") + 1] ?? rest[rest.indexOf("-d") + 1];
      if (into !== undefined && (rest.includes("-C") || rest.includes("-d")))
        touchPath(ctx, into, cwd, "write");
      add(ctx, extract ? "medium" : "low", "write", `${extract ? "extracts" : "packs"} an archive (${name})`);
      return undefined;
    }
  }
  if (
    name === "mkfs" ||
    name.startsWith("mkfs.") ||
    ["fdisk", "parted", "wipefs", "sfdisk", "mkswap"].includes(name)
  ) {
    add(ctx, "high", "destructive", `formats or partitions a disk (${name})`);
    return undefined;
  }
  if (PACKAGE_MANAGERS.has(name)) {
    assessPackageManager(ctx, name, rest, operands);
    return undefined;
  }
  if (NETWORK.has(name)) {
    const outFlags =
      name === "curl" ? ["-o", "--output"] : name === "wget" ? ["-O", "--output-document"] : [];
    for (const flag of outFlags) {
      const out = rest[rest.indexOf(flag) + 1];
      if (rest.includes(flag) && out !== undefined && out !== "-") touchPath(ctx, out, cwd, "write");
    }
    if (name === "scp" || name === "rsync") {
      const dest = operands[operands.length - 1];
      if (dest !== undefined && !dest.includes(":")) touchPath(ctx, dest, cwd, "write");
    }
    add(ctx, "medium", "network", `reaches the network (${name})`);
    return undefined;
  }
  if (WRITES_ARGS.has(name)) {
    for (const p of operands) touchPath(ctx, p, cwd, "write");
    add(
      ctx,
      name === "shred" ? "high" : "low",
      name === "shred" ? "destructive" : "write",
      `changes files (${name})`,
    );
    return undefined;
  }
  if (name === "sed" && (hasShort(options, "i") || options.some((o) => o.startsWith("--in-place")))) {
    for (const p of operands.slice(1)) touchPath(ctx, p, cwd, "write");
    add(ctx, "low", "write", "edits files in place (sed -i)");
    return undefined;
  }
  if (READ_ONLY.has(name)) {
    if (READS_ARGS.has(name)) for (const p of operands) touchPath(ctx, p, cwd, "read");
    if ((name === "grep" || name === "rg" || name === "ag") && operands.length > 1)
      for (const p of operands.slice(1)) touchPath(ctx, p, cwd, "read");
    add(ctx, "low", "read", `reads (${name})`);
    return undefined;
  }
  add(ctx, "medium", "exec", `runs a program (${name})`);
  return undefined;
}

/** `/`, `/*`, `~`, `$HOME`, a top-level directory such as `/usr`, or the workspace root itself. */
function isRootish(ctx: Ctx, p: string, cwd: string): boolean {
  if (p === "~" || p === "~/" || ["$HOME", "$HOME/", "$HOME/*"].includes(p) || p === "/*" || p === "~/*")
    return true;
  if (isDynamic(p)) return false;
  const abs = resolveIn(cwd, p, ctx.home);
  return abs === "/" || nodePath.dirname(abs) === "/" || abs === ctx.home || abs === ctx.root;
}

const GIT_READ = new Set([
  "status",
  "log",
  "diff",
  "show",
  "blame",
  "grep",
  "ls-files",
  "ls-tree",
  "rev-parse",
  "describe",
  "shortlog",
  "reflog",
  "cat-file",
  "help",
  "version",
  "whatchanged",
]);
const GIT_NETWORK = new Set(["fetch", "pull", "clone", "ls-remote", "submodule"]);
const GIT_WRITE = new Set([
  "add",
  "commit",
  "mv",
  "rm",
  "stash",
  "merge",
  "rebase",
  "cherry-pick",
  "revert",
  "tag",
  "switch",
  "checkout",
  "restore",
  "am",
  "apply",
  "init",
  "worktree",
  "notes",
]);

function assessGit(ctx: Ctx, rest: readonly string[], cwd: string): void {
  let i = 0;
  // global options: -C <dir>, -c <k=v>, --git-dir=…, --no-pager …
  while (i < rest.length && (rest[i] as string).startsWith("-"))
    i += rest[i] === "-C" || rest[i] === "-c" ? 2 : 1;
  const sub = rest[i];
  const args = rest.slice(i + 1);
  const { options, operands } = optionsAndOperands(args);
  const shown = `git ${rest.slice(i).join(" ")}`.trim();
  if (rest.includes("-C")) touchPath(ctx, rest[rest.indexOf("-C") + 1] ?? ".", cwd, "read");
  switch (sub) {
    case "push": {
      const force =
        options.some(
          (o) =>
            o === "--force" || o.startsWith("--force-with-lease") || o === "--mirror" || o === "--delete",
        ) ||
        hasShort(options, "fd") ||
        operands.some((o) => o.startsWith("+") || o.startsWith(":"));
      if (force) add(ctx, "high", "destructive", `rewrites or deletes remote history (${shown})`);
      else add(ctx, "medium", "network", `publishes commits (${shown})`);
      return;
    }
    case "reset":
      if (options.includes("--hard") || options.includes("--merge") || options.includes("--keep"))
        add(ctx, "high", "destructive", `discards uncommitted changes (${shown})`);
      else add(ctx, "medium", "write", `moves the branch (${shown})`);
      return;
    case "clean":
      if (hasShort(options, "f") || options.includes("--force"))
        add(ctx, "high", "destructive", `deletes untracked files (${shown})`);
      else add(ctx, "low", "read", `lists untracked files (${shown})`);
      return;
    case "branch":
      if (
        hasShort(options, "D") ||
        options.includes("--delete") ||
        (hasShort(options, "d") && hasShort(options, "f"))
      )
        add(ctx, "medium", "destructive", `deletes a branch (${shown})`);
      else if (operands.length > 0 || hasShort(options, "mMcC"))
        add(ctx, "medium", "write", `changes branches (${shown})`);
      else add(ctx, "low", "read", `lists branches (${shown})`);
      return;
    case "checkout":
    case "restore":
      if (operands.includes(".") || options.includes("--force") || hasShort(options, "f"))
        add(ctx, "high", "destructive", `discards working-tree changes (${shown})`);
      else add(ctx, "medium", "write", `changes the working tree (${shown})`);
      return;
    case "stash":
      if (operands[0] === "drop" || operands[0] === "clear")
        add(ctx, "high", "destructive", `drops stashed changes (${shown})`);
      else if (operands[0] === "list" || operands[0] === "show")
        add(ctx, "low", "read", `reads stashes (${shown})`);
      else add(ctx, "medium", "write", `changes the working tree (${shown})`);
      return;
    case "remote":
    case "config": {
      const reading =
        operands.length === 0 ||
        ["show", "get", "get-url"].includes(operands[0] ?? "") ||
        options.some((o) => o === "-v" || o === "-l" || o === "--list" || o.startsWith("--get"));
      if (reading) add(ctx, "low", "read", `reads repository settings (${shown})`);
      else add(ctx, "medium", "write", `changes repository settings (${shown})`);
      return;
    }
  }
  if (sub === undefined || GIT_READ.has(sub)) add(ctx, "low", "read", `reads the repository (${shown})`);
  else if (GIT_NETWORK.has(sub)) add(ctx, "medium", "network", `reaches a remote (${shown})`);
  else if (GIT_WRITE.has(sub)) add(ctx, "medium", "write", `changes the repository (${shown})`);
  else add(ctx, "medium", "exec", `runs git ${sub}`);
}

function assessPackageManager(
  ctx: Ctx,
  name: string,
  rest: readonly string[],
  operands: readonly string[],
): void {
  const verb = operands[0];
  if (
    name === "npx" ||
    name === "pnpx" ||
    name === "bunx" ||
    (name === "pnpm" && verb === "dlx") ||
    (name === "yarn" && verb === "dlx")
  ) {
    add(ctx, "medium", "network", `downloads and runs a package (${name} ${rest.join(" ")})`);
    return;
  }
  if (verb === "publish" || (name === "cargo" && verb === "yank"))
    add(ctx, "high", "network", `publishes a package (${name} ${verb})`);
  else if (
    verb === undefined &&
    (name === "npm" || name === "pnpm" || name === "yarn" || name === "bun") &&
    rest.length === 0
  )
    add(ctx, "medium", "network", `installs packages (${name})`);
  else if (verb !== undefined && INSTALL_VERBS.has(verb) && !(name === "go" && verb !== "get"))
    add(ctx, "medium", "network", `installs or removes packages (${name} ${verb})`);
  else add(ctx, "medium", "exec", `runs a program (${name}${verb ? ` ${verb}` : ""})`);
}

/** `assessRisk` as `decide`/`makeGovernance` take it (`DecideOptions.assessRisk`), for a workspace root. */
export function riskAssessor(
  workspace: string,
  home?: string,
): (call: {
  readonly name: string;
  readonly args?: unknown;
  readonly effects: readonly ToolEffectKind[];
}) => RiskSummary {
  return (call) =>
    assessRisk({
      name: call.name,
      args: call.args,
      effects: call.effects,
      workspace,
      ...(home !== undefined ? { home } : {}),
    });
}
