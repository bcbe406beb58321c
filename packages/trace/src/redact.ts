/**
 * Redaction runs on every record before any sink sees it: the value of a
 * secret never reaches a file, a collector or a page.
 *
 * - Header-like keys (`authorization`, `x-api-key`, `cookie`, any key ending in
 *   `api_key`/`apiKey`/`token`/`secret`/`password`): the whole string value.
 * - `Bearer …` / `Basic …` credentials and well-known key shapes (`sk-…`,
 *   `sk-ant-…`, `AIza…`, `ghp_…`, `xox?-…`) anywhere in text.
 * - The values of environment variables whose names contain KEY, TOKEN, SECRET
 *   or PASSWORD (values shorter than `minSecretLength` are ignored: they would
 *   redact ordinary words).
 * - Host-configured patterns.
 */
export interface RedactionOptions {
  /** Environment to scan for secret values (default `process.env`). */
  readonly env?: { readonly [name: string]: string | undefined };
  /** Extra patterns; every match is replaced. Strings are matched literally. */
  readonly patterns?: readonly (RegExp | string)[];
  /** Literal secret values to redact (keys the host holds outside the environment). */
  readonly secrets?: readonly string[];
  /** Replacement text (default `[REDACTED]`). */
  readonly replacement?: string;
  /** Shortest environment value treated as a secret (default 6). */
  readonly minSecretLength?: number;
}

export const REDACTED = "[REDACTED]";

const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSWORD/i;
const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-goog-api-key)$|(api[-_]?key|access[-_]?key|token|secret|password|passwd)$/i;
const CREDENTIAL_TEXT = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/g;
const KEY_SHAPES =
  /\b(?:sk-ant-[A-Za-z0-9_-]{16,}|sk-(?:proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export type Redactor = <T>(value: T) => T;

/** Build a redactor. It returns a redacted deep copy (plain JSON values); the input is not changed. */
export function makeRedactor(options: RedactionOptions = {}): Redactor {
  const replacement = options.replacement ?? REDACTED;
  const min = options.minSecretLength ?? 6;
  const env = options.env ?? process.env;
  const literals = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= min && SECRET_ENV_NAME.test(name)) literals.add(value);
  }
  for (const s of options.secrets ?? []) if (s.length > 0) literals.add(s);
  const sources: string[] = [];
  if (literals.size > 0)
    sources.push(
      [...literals]
        .sort((a, b) => b.length - a.length)
        .map(escapeRegExp)
        .join("|"),
    );
  for (const p of options.patterns ?? []) sources.push(typeof p === "string" ? escapeRegExp(p) : p.source);
  const custom = sources.length > 0 ? new RegExp(sources.map((s) => `(?:${s})`).join("|"), "g") : undefined;
  const customFlagsI = (options.patterns ?? []).some((p) => p instanceof RegExp && p.flags.includes("i"));
  const customRe = custom && customFlagsI ? new RegExp(custom.source, "gi") : custom;

  const text = (s: string): string => {
    let out = s;
    if (customRe) out = out.replace(customRe, replacement);
    out = out.replace(CREDENTIAL_TEXT, (_m, scheme: string) => `${scheme} ${replacement}`);
    out = out.replace(KEY_SHAPES, replacement);
    return out;
  };

  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (value === null || typeof value !== "object") return value;
    if (depth > 64) return "[too deep]";
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      out[text(k)] = typeof v === "string" && SECRET_KEY.test(k) ? replacement : walk(v, depth + 1);
    }
    return out;
  };

  return <T>(value: T): T => walk(value, 0) as T;
}
