// Command-line parsing: subcommands by first word, flags with node:util parseArgs (strict).
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { usageError } from "./errors.ts";
import { checkStoreSetting } from "./store-select.ts";

export type OutputFormat = "text" | "json" | "stream-json";

/** Who answers the approvals a policy asks for (`--approval-mode`). */
export type ApprovalMode = "approve-all" | "reject-all" | "fail" | "interactive";
export const APPROVAL_MODES: readonly ApprovalMode[] = ["approve-all", "reject-all", "fail", "interactive"];

/** Flags shared by the interactive TUI and `--print`. */
export interface RunFlags {
  readonly print: boolean;
  readonly prompt?: string;
  readonly model?: string;
  readonly baseUrl?: string;
  readonly mode?: "standard" | "rlm";
  readonly maxTurns?: number;
  /** `--context-window N`: the model's context window in tokens (for models the catalog does not know). */
  readonly contextWindow?: number;
  readonly system?: string;
  readonly appendSystem?: string;
  /** `--no-project-instructions`: leave AGENTS.md / CLAUDE.md out of the system prompt. */
  readonly noProjectInstructions?: boolean;
  readonly tools?: readonly string[];
  readonly cwd?: string;
  readonly session?: string;
  readonly continue: boolean;
  /** `--resume` without a value: "" (the TUI shows a picker). */
  readonly resume?: string;
  readonly fork?: string;
  readonly at?: string;
  readonly noSession: boolean;
  /** `--wait`: when another lash process is writing the session, wait for it instead of failing. */
  readonly wait?: boolean;
  /** `--resume-pending`: in `-p`, finish the session's cut-off turn (from its journal) before the prompt. */
  readonly resumePending?: boolean;
  readonly outputFormat: OutputFormat;
  readonly trace?: string;
  /** `--trace-level`: what the trace keeps (overrides config `trace.level`). */
  readonly traceLevel?: "standard" | "extended";
  /** `--request-timeout <s>`: the idle timeout of a model request, in ms. */
  readonly requestTimeoutMs?: number;
  /** `--request-deadline <s>`: the total time of one model call (all attempts), in ms. */
  readonly requestDeadlineMs?: number;
  /** `--approval-mode`: who answers approvals (default: `fail` with -p, `interactive` in the TUI). */
  readonly approvalMode?: ApprovalMode;
  /** `--dry-run`: write and exec tools do not run; they return what they would have done. */
  readonly dryRun?: boolean;
  /** `--rlm-var NAME=JSON|@FILE` (repeatable): read-only values in every Lashlang cell (RLM mode). */
  readonly rlmVars?: readonly string[];
  /** `--rlm-vars-file PATH`: a JSON object of read-only values (RLM mode). */
  readonly rlmVarsFile?: string;
  /** `--store <url>`: where sessions live (`postgres://…`, or `sqlite`: the default file); overrides config `store`. */
  readonly store?: string;
}

export type Command =
  | { readonly kind: "help"; readonly topic?: string }
  | { readonly kind: "version" }
  | { readonly kind: "run"; readonly flags: RunFlags }
  | {
      readonly kind: "sessions";
      readonly action: "list" | "show" | "rm" | "abandon" | "gc" | "compare";
      readonly args: SessionsArgs;
    }
  | { readonly kind: "config"; readonly cwd?: string; readonly json: boolean }
  | { readonly kind: "doctor"; readonly cwd?: string; readonly json: boolean; readonly repair: boolean }
  | { readonly kind: "demo"; readonly flags: DemoFlags }
  | { readonly kind: "lashlang"; readonly argv: readonly string[] }
  | { readonly kind: "export" | "import"; readonly argv: readonly string[] }
  | { readonly kind: "trace"; readonly argv: readonly string[] }
  | { readonly kind: "policy"; readonly argv: readonly string[] }
  | { readonly kind: "build" | "init" | "agents"; readonly argv: readonly string[] }
  | { readonly kind: "run-agent"; readonly argv: readonly string[] }
  | { readonly kind: "skills"; readonly argv: readonly string[] }
  | { readonly kind: "remote"; readonly argv: readonly string[] }
  | { readonly kind: "serve"; readonly argv: readonly string[] }
  | { readonly kind: "loop"; readonly argv: readonly string[] }
  | { readonly kind: "login" | "logout"; readonly argv: readonly string[] };

export interface SessionsArgs {
  readonly id?: string;
  /** `compare`: the second session. */
  readonly other?: string;
  readonly all: boolean;
  readonly json: boolean;
  readonly cwd?: string;
  readonly limit?: number;
  readonly yes: boolean;
  /** `gc`: keep artifacts stored fewer than this many seconds ago. */
  readonly minAgeSeconds?: number;
  /** `--store <url>`: where the sessions live; overrides config `store`. */
  readonly store?: string;
}

export interface DemoFlags {
  /** Keep the demo's sessions in the real `$LASH_HOME` instead of a temporary one. */
  readonly keep: boolean;
  readonly json: boolean;
}

export const SUBCOMMANDS = [
  "sessions",
  "config",
  "doctor",
  "demo",
  "lashlang",
  "export",
  "import",
  "trace",
  "policy",
  "build",
  "init",
  "agents",
  "run",
  "skills",
  "remote",
  "serve",
  "loop",
  "login",
  "logout",
  "help",
] as const;

const RUN_OPTIONS = {
  print: { type: "boolean", short: "p" },
  model: { type: "string", short: "m" },
  "base-url": { type: "string" },
  mode: { type: "string" },
  "max-turns": { type: "string" },
  "context-window": { type: "string" },
  system: { type: "string" },
  "append-system": { type: "string" },
  "no-project-instructions": { type: "boolean" },
  tools: { type: "string" },
  cwd: { type: "string" },
  session: { type: "string" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string", short: "r" },
  fork: { type: "string" },
  at: { type: "string" },
  "no-session": { type: "boolean" },
  wait: { type: "boolean" },
  "resume-pending": { type: "boolean" },
  "output-format": { type: "string" },
  trace: { type: "string" },
  "trace-level": { type: "string" },
  "request-timeout": { type: "string" },
  "request-deadline": { type: "string" },
  "approval-mode": { type: "string" },
  "dry-run": { type: "boolean" },
  "rlm-var": { type: "string", multiple: true },
  "rlm-vars-file": { type: "string" },
  store: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

function parse<const O extends ParseArgsOptionsConfig>(args: readonly string[], options: O, where: string) {
  try {
    return parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>({
      args: [...args],
      options,
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    const msg = (e as Error).message.replace(/\. To specify a positional argument.*$/s, "");
    throw usageError(`${where}: ${msg}\nRun \`lash --help\` for usage.`);
  }
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw usageError(`${flag} expects a positive integer, got "${value}"`);
  return n;
}

/** Seconds (decimals allowed) → milliseconds. */
function positiveSeconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0)
    throw usageError(`${flag} expects a positive number of seconds (e.g. 120 or 0.5), got "${value}"`);
  return Math.round(n * 1000);
}

/** `--resume` takes an optional value: the next word when it is not a flag. */
function normalizeResume(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (a === "--resume" || a === "-r") {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith("-")) {
        out.push(`--resume=${next}`);
        i++;
      } else out.push("--resume=");
    } else out.push(a);
  }
  return out;
}

export function parseRunFlags(argv: readonly string[]): RunFlags | { help: true } | { version: true } {
  const { values, positionals } = parse(normalizeResume(argv), RUN_OPTIONS, "lash");
  if (values.help) return { help: true };
  if (values.version) return { version: true };
  const mode = values.mode;
  if (mode !== undefined && mode !== "standard" && mode !== "rlm")
    throw usageError(`--mode expects "standard" or "rlm", got "${mode}"`);
  const traceLevel = values["trace-level"];
  if (traceLevel !== undefined && traceLevel !== "standard" && traceLevel !== "extended")
    throw usageError(`--trace-level expects "standard" or "extended", got "${traceLevel}"`);
  const format = values["output-format"] ?? "text";
  if (format !== "text" && format !== "json" && format !== "stream-json")
    throw usageError(`--output-format expects text, json or stream-json, got "${format}"`);
  if (values["output-format"] !== undefined && !values.print)
    throw usageError("--output-format only applies with -p/--print");
  const tools = values.tools
    ?.split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  const sessionSources = [
    values.session !== undefined && "--session",
    values.continue && "--continue",
    values.resume !== undefined && "--resume",
    values.fork !== undefined && "--fork",
  ].filter((s): s is string => typeof s === "string");
  if (sessionSources.length > 1) throw usageError(`${sessionSources.join(" and ")} cannot be combined`);
  if (values.at !== undefined && values.fork === undefined) throw usageError("--at only applies with --fork");
  if (values["no-session"] && sessionSources.length)
    throw usageError(`--no-session cannot be combined with ${sessionSources[0]}`);
  if (values.print && values.resume === "")
    throw usageError(
      "--resume needs a session id (or name) with -p/--print; `lash sessions list` shows them",
    );
  if (values.model !== undefined && !/^[^/\s]+\/\S+$/.test(values.model))
    throw usageError(
      `--model expects provider/model (e.g. anthropic/claude-sonnet-4-5, openai/gpt-5-mini, openai-compatible/llama3), got "${values.model}"`,
    );
  const approvalMode = values["approval-mode"] as ApprovalMode | undefined;
  if (approvalMode !== undefined && !APPROVAL_MODES.includes(approvalMode))
    throw usageError(
      `--approval-mode expects approve-all, reject-all, fail or interactive, got "${approvalMode}"`,
    );
  if (approvalMode === "interactive" && values.print)
    throw usageError(
      "--approval-mode interactive needs the interactive TUI (it prompts in the terminal); with -p use approve-all, reject-all or fail",
    );
  const prompt = positionals.length ? positionals.join(" ") : undefined;
  return {
    print: values.print ?? false,
    ...(prompt !== undefined ? { prompt } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(values["base-url"] !== undefined ? { baseUrl: values["base-url"] } : {}),
    ...(mode !== undefined ? { mode } : {}),
    ...(values["max-turns"] !== undefined
      ? { maxTurns: positiveInt(values["max-turns"], "--max-turns") }
      : {}),
    ...(values["context-window"] !== undefined
      ? { contextWindow: positiveInt(values["context-window"], "--context-window") }
      : {}),
    ...(values.system !== undefined ? { system: values.system } : {}),
    ...(values["append-system"] !== undefined ? { appendSystem: values["append-system"] } : {}),
    ...(values["no-project-instructions"] ? { noProjectInstructions: true } : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
    ...(values.session !== undefined ? { session: values.session } : {}),
    continue: values.continue ?? false,
    ...(values.resume !== undefined ? { resume: values.resume } : {}),
    ...(values.fork !== undefined ? { fork: values.fork } : {}),
    ...(values.at !== undefined ? { at: values.at } : {}),
    noSession: values["no-session"] ?? false,
    ...(values.wait ? { wait: true } : {}),
    ...(values["resume-pending"] ? { resumePending: true } : {}),
    outputFormat: format,
    ...(values.trace !== undefined ? { trace: values.trace } : {}),
    ...(traceLevel !== undefined ? { traceLevel } : {}),
    ...(values["request-timeout"] !== undefined
      ? { requestTimeoutMs: positiveSeconds(values["request-timeout"], "--request-timeout") }
      : {}),
    ...(values["request-deadline"] !== undefined
      ? { requestDeadlineMs: positiveSeconds(values["request-deadline"], "--request-deadline") }
      : {}),
    ...(approvalMode !== undefined ? { approvalMode } : {}),
    ...(values["dry-run"] ? { dryRun: true } : {}),
    ...(values["rlm-var"] !== undefined ? { rlmVars: values["rlm-var"] } : {}),
    ...(values["rlm-vars-file"] !== undefined ? { rlmVarsFile: values["rlm-vars-file"] } : {}),
    ...(values.store !== undefined ? { store: checkStoreSetting(values.store, "--store").setting } : {}),
  };
}

export function parseCommand(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  switch (first) {
    case "help":
      return { kind: "help", ...(rest[0] !== undefined ? { topic: rest[0] } : {}) };
    case "lashlang":
      return { kind: "lashlang", argv: rest };
    case "export":
    case "import":
      return { kind: first, argv: rest };
    case "trace":
      return { kind: "trace", argv: rest };
    case "policy":
      return { kind: "policy", argv: rest };
    case "build":
    case "init":
    case "agents":
      return { kind: first, argv: rest };
    case "skills":
      return { kind: "skills", argv: rest };
    case "remote":
      return { kind: "remote", argv: rest };
    case "serve":
      return { kind: "serve", argv: rest };
    case "loop":
      return { kind: "loop", argv: rest };
    case "login":
    case "logout":
      return { kind: first, argv: rest };
    case "run":
      return { kind: "run-agent", argv: rest };
    case "sessions": {
      const [action = "list", ...more] = rest;
      if (action === "--help" || action === "-h") return { kind: "help", topic: "sessions" };
      if (
        action !== "list" &&
        action !== "show" &&
        action !== "rm" &&
        action !== "ls" &&
        action !== "abandon" &&
        action !== "gc" &&
        action !== "compare"
      )
        throw usageError(
          `unknown sessions command "${action}"; expected list, show <id>, rm <id>, abandon <id>, gc or compare <a> <b>`,
        );
      const { values, positionals } = parse(
        more,
        {
          all: { type: "boolean", short: "a" },
          json: { type: "boolean" },
          cwd: { type: "string" },
          limit: { type: "string", short: "n" },
          yes: { type: "boolean", short: "y" },
          "min-age": { type: "string" },
          store: { type: "string" },
          help: { type: "boolean", short: "h" },
        },
        `lash sessions ${action}`,
      );
      if (values.help) return { kind: "help", topic: "sessions" };
      const act = action === "ls" ? "list" : action;
      if (act === "compare" && positionals.length !== 2)
        throw usageError("lash sessions compare expects two session ids (e.g. a session and its fork)");
      if (act !== "list" && act !== "gc" && act !== "compare" && positionals.length !== 1)
        throw usageError(`lash sessions ${act} expects one session id`);
      if (act === "gc" && positionals.length > 0)
        throw usageError("lash sessions gc takes no session id: it collects artifacts no session refers to");
      const limit = positiveInt(values.limit, "--limit");
      const minAge = values["min-age"];
      if (minAge !== undefined && !/^\d+$/.test(minAge))
        throw usageError(`--min-age expects a whole number of seconds (e.g. --min-age 0), got "${minAge}"`);
      return {
        kind: "sessions",
        action: act,
        args: {
          ...(positionals[0] !== undefined ? { id: positionals[0] } : {}),
          ...(act === "compare" && positionals[1] !== undefined ? { other: positionals[1] } : {}),
          all: values.all ?? false,
          json: values.json ?? false,
          ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
          ...(limit !== undefined ? { limit } : {}),
          yes: values.yes ?? false,
          ...(minAge !== undefined ? { minAgeSeconds: Number(minAge) } : {}),
          ...(values.store !== undefined
            ? { store: checkStoreSetting(values.store, "--store").setting }
            : {}),
        },
      };
    }
    case "config":
    case "doctor": {
      const { values, positionals } = parse(
        rest,
        {
          json: { type: "boolean" },
          cwd: { type: "string" },
          help: { type: "boolean", short: "h" },
          ...(first === "doctor" ? { repair: { type: "boolean" } } : {}),
        },
        `lash ${first}`,
      );
      if (values.help) return { kind: "help", topic: first };
      if (positionals.length) throw usageError(`lash ${first} takes no arguments (got "${positionals[0]}")`);
      const common = { json: values.json ?? false, ...(values.cwd !== undefined ? { cwd: values.cwd } : {}) };
      return first === "doctor"
        ? { kind: "doctor", ...common, repair: (values as { repair?: boolean }).repair ?? false }
        : { kind: "config", ...common };
    }
    case "demo": {
      const { values, positionals } = parse(
        rest,
        { keep: { type: "boolean" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
        "lash demo",
      );
      if (values.help) return { kind: "help", topic: "demo" };
      if (positionals.length) throw usageError(`lash demo takes no arguments (got "${positionals[0]}")`);
      return { kind: "demo", flags: { keep: values.keep ?? false, json: values.json ?? false } };
    }
    default: {
      if (first !== undefined) rejectTypoedSubcommand(first, rest);
      const flags = parseRunFlags(argv);
      if ("help" in flags) return { kind: "help" };
      if ("version" in flags) return { kind: "version" };
      return { kind: "run", flags };
    }
  }
}

/**
 * Ordinary words within one edit of a subcommand: a prompt may well start with them
 * (`lash hello`, `lash track down the leak`), so they are never taken for a typo.
 */
const NOT_TYPOS = new Set([
  "hello",
  "hell",
  "held",
  "helm",
  "heap",
  "hemp",
  "kelp",
  "yelp",
  "whelp",
  "helps",
  "memo",
  "demon",
  "deco",
  "demos",
  "expert",
  "impart",
  "track",
  "trade",
  "tract",
  "grace",
  "brace",
  "race",
  "trance",
  "truce",
  "trice",
  // one edit from "loop"
  "look",
  "loom",
  "loot",
  "loon",
  "hoop",
  "coop",
  "poop",
  "goop",
]);

/** Optimal-string-alignment distance (Damerau–Levenshtein with adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/**
 * The subcommand a first word was probably meant to be: one edit away for words of 4–7
 * letters, two for longer ones (`sesions`, `exprot`, `lashlnag`); never for short or common words.
 */
export function typoedSubcommand(word: string): string | undefined {
  const w = word.toLowerCase();
  if (!/^[a-z]+$/.test(w) || w.length < 4 || NOT_TYPOS.has(w)) return undefined;
  const max = w.length >= 8 ? 2 : 1;
  let best: { name: string; d: number } | undefined;
  for (const name of SUBCOMMANDS) {
    const d = editDistance(w, name);
    if (d <= max && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** `lash sesions list` is an error naming the subcommand, not a prompt sent to the model. */
function rejectTypoedSubcommand(first: string, rest: readonly string[]): void {
  if (first.startsWith("-")) return;
  const meant = typoedSubcommand(first);
  if (meant === undefined) return;
  const words = [first, ...rest.filter((a) => !a.startsWith("-"))].join(" ");
  throw usageError(
    `unknown command "${first}" — did you mean \`lash ${meant}\`?\n` +
      `To send it to the model as a prompt, put it after --: lash -- ${words} (or quote it: lash -p "${words}")`,
  );
}
