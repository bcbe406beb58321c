// Secrets and the tools: which environment variables a tool process may see, and
// the redaction of known secret values from everything a tool returns.
//
// Two layers, both plain synchronous code:
// - `scrubEnv` removes credentials from the environment a tool or MCP server is
//   started with (the real protection: what a process never receives it cannot print);
// - a `Redactor` replaces every known secret value (keys the host holds, configured
//   secrets) in tool output before it reaches the model, the journal, the graph,
//   the activity stream, traces or exports. It matches literal values only: a
//   secret the model has a tool transform (base64, reversed, split) is not caught.

/**
 * Name patterns of environment variables that hold credentials. A name matches
 * when any pattern does (case-insensitive):
 * `*_API_KEY` / `*APIKEY*`, `*_KEY`, `*PRIVATE_KEY*`, `*ACCESS_KEY*`, a `TOKEN`
 * word (`GITHUB_TOKEN`, `TOKEN_FILE`, not `TOKENIZERS_…`), `*SECRET*`,
 * `*PASSWORD*` / `*PASSWD*` / `*PASSPHRASE*`, a `CREDENTIAL(S)` word, `*_PAT`,
 * `*_AUTH` / `*_AUTH_*` words except `SSH_AUTH_SOCK`.
 */
export const SECRET_ENV_PATTERNS: readonly RegExp[] = [
  /API_?KEY/i,
  /_KEY$/i,
  /PRIVATE_?KEY/i,
  /ACCESS_?KEY/i,
  /(^|_)TOKENS?($|_)|TOKEN$/i,
  /SECRET/i,
  /PASSWORD|PASSWD|PASSPHRASE/i,
  /(^|_)CREDENTIALS?($|_)/i,
  /_PAT$/i,
  /(^|_)AUTH($|_)/i,
];

/** Names that match a pattern but hold no secret (they are kept). */
const NOT_SECRET = new Set(["SSH_AUTH_SOCK"]);

/** Values with the shape of a well-known credential, whatever the variable is called. */
const KEY_SHAPE =
  /^(?:sk-ant-[A-Za-z0-9_-]{16,}|sk-(?:proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})$/;

/** Does this environment variable name look like it holds a credential? */
export function isSecretEnvName(name: string): boolean {
  if (NOT_SECRET.has(name.toUpperCase())) return false;
  return SECRET_ENV_PATTERNS.some((p) => p.test(name));
}

/** Does this value have the shape of a well-known API key (`sk-…`, `sk-ant-…`, `AIza…`, `ghp_…`, `AKIA…`)? */
export function looksLikeKey(value: string): boolean {
  return KEY_SHAPE.test(value.trim());
}

export interface ScrubOptions {
  /** Variables the host holds as credentials, removed whatever they are called (e.g. the provider key names). */
  readonly secretNames?: Iterable<string>;
  /** Variables passed through even though they look like secrets (explicit config); never a `secretNames` one. */
  readonly pass?: Iterable<string>;
}

export interface ScrubbedEnv {
  readonly env: Record<string, string>;
  /** Names removed, sorted. */
  readonly removed: readonly string[];
}

/**
 * The environment a tool process gets: `env` without the host's credentials
 * (`secretNames`), without any variable whose name matches `SECRET_ENV_PATTERNS`
 * and without any value shaped like a well-known API key — except the names in
 * `pass` (which never bring back a `secretNames` one: the host's credentials win).
 * Everything else (PATH, HOME, LANG, TERM, proxies …) is kept.
 */
export function scrubEnv(
  env: { readonly [name: string]: string | undefined },
  options: ScrubOptions = {},
): ScrubbedEnv {
  const named = new Set(options.secretNames ?? []);
  const pass = new Set(options.pass ?? []);
  const out: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    // the host's own credential names are never passed, whatever `pass` says
    if (named.has(name) || (!pass.has(name) && (isSecretEnvName(name) || looksLikeKey(value)))) {
      removed.push(name);
      continue;
    }
    out[name] = value;
  }
  return { env: out, removed: removed.sort() };
}

/** A secret value and the name shown in its place (`[REDACTED:<name>]`). */
export interface SecretValue {
  readonly name: string;
  readonly value: string;
}

/** Values shorter than this are never redacted: they would replace ordinary words and numbers. */
export const MIN_SECRET_LENGTH = 8;

/**
 * The secret values in an environment: every variable named in `secretNames`
 * or matching `SECRET_ENV_PATTERNS`, and every value shaped like a known API key.
 */
export function envSecrets(
  env: { readonly [name: string]: string | undefined },
  options: { readonly secretNames?: Iterable<string> } = {},
): SecretValue[] {
  const named = new Set(options.secretNames ?? []);
  const out: SecretValue[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length < MIN_SECRET_LENGTH) continue;
    if (named.has(name) || isSecretEnvName(name) || looksLikeKey(value)) out.push({ name, value });
  }
  return out;
}

export interface Redactor {
  /** How many distinct values it replaces. */
  readonly size: number;
  /** `text` with every secret value replaced by `[REDACTED:<name>]`. */
  readonly text: (text: string) => string;
  /** A redacted deep copy of a JSON-like value (strings in arrays and objects, keys included). */
  readonly deep: <T>(value: T) => T;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The name a replacement may show: letters, digits, `_ . - [ ]` only. */
const safeName = (name: string): string => name.replace(/[^A-Za-z0-9_.[\]-]/g, "_") || "secret";

export interface RedactorOptions {
  /**
   * Names (environment variables, config keys; policy `redaction.keys`) whose values are
   * redacted wherever they are written as `NAME=value` (also `export NAME=value`, quoted
   * values) or `"NAME": "value"` (JSON), whatever the value. The values these names hold
   * in the environment belong in `secrets` too (see `envSecrets`' `secretNames`).
   */
  readonly keys?: Iterable<string>;
}

/** `NAME=value` / `NAME="value"` / `"NAME": "value"` for any of these names (case-insensitive). */
function keyPattern(keys: readonly string[]): RegExp | undefined {
  const names = keys
    .map((k) => k.trim())
    .filter((k) => k !== "")
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp);
  if (names.length === 0) return undefined;
  const alt = names.join("|");
  // 1: JSON key, 2: its quoted value's body; 3: NAME=, 4: its value (quoted or a run of non-space)
  return new RegExp(
    `"(${alt})"(\\s*:\\s*)"((?:[^"\\\\]|\\\\.)*)"|(?<![A-Za-z0-9_])(${alt})([ \\t]*=[ \\t]*)("[^"\\n]*"|'[^'\\n]*'|[^\\s"',;]+)`,
    "gi",
  );
}

/**
 * Build a redactor for these values. Values shorter than `MIN_SECRET_LENGTH`
 * (after trimming) are skipped; a value listed twice is replaced under its first name;
 * longer values win over values they contain. `options.keys` adds the values written
 * next to those names (`KEY=value`, `"key": "value"`).
 */
export function makeRedactor(secrets: Iterable<SecretValue>, options: RedactorOptions = {}): Redactor {
  const names = new Map<string, string>();
  for (const { name, value } of secrets) {
    const v = value.trim();
    if (v.length < MIN_SECRET_LENGTH || names.has(v)) continue;
    names.set(v, safeName(name));
  }
  const keyList = [...(options.keys ?? [])];
  const byKey = keyPattern(keyList);
  const keySet = new Set(keyList.map((k) => k.trim().toLowerCase()));
  if (names.size === 0 && !byKey) return { size: 0, text: (t) => t, deep: (v) => v };
  const pattern =
    names.size === 0
      ? undefined
      : new RegExp(
          [...names.keys()]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join("|"),
          "g",
        );
  const byValue = (t: string): string =>
    !pattern || t.length < MIN_SECRET_LENGTH
      ? t
      : t.replace(pattern, (m) => `[REDACTED:${names.get(m) ?? "secret"}]`);
  const text = (t: string): string => {
    const out = byValue(t);
    if (!byKey) return out;
    return out.replace(
      byKey,
      (
        m,
        jsonKey?: string,
        colon?: string,
        jsonValue?: string,
        envKey?: string,
        eq?: string,
        envValue?: string,
      ) => {
        if (jsonKey !== undefined)
          return jsonValue === "" || jsonValue?.startsWith("[REDACTED:")
            ? m
            : `"${jsonKey}"${colon}"[REDACTED:${safeName(jsonKey)}]"`;
        if (envKey === undefined || envValue === undefined || envValue.startsWith("[REDACTED:")) return m;
        const q = envValue[0] === '"' || envValue[0] === "'" ? envValue[0] : "";
        if (q && envValue.length <= 2) return m;
        return `${envKey}${eq}${q}[REDACTED:${safeName(envKey)}]${q}`;
      },
    );
  };
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (value === null || typeof value !== "object" || depth > 100) return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    if (value instanceof Uint8Array || value instanceof Date) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[text(k)] =
        typeof v === "string" && v !== "" && keySet.has(k.toLowerCase())
          ? `[REDACTED:${safeName(k)}]`
          : walk(v, depth + 1);
    return out;
  };
  return { size: names.size + (byKey ? 1 : 0), text, deep: <T>(v: T): T => walk(v, 0) as T };
}
