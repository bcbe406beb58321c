// `$LASH_HOME/auth.json`: the tokens of a provider sign-in (today: Codex with a
// ChatGPT plan). The file is only ever created with mode 0600 — a new file is
// written beside it with that mode and renamed over it, so there is no moment in
// which the tokens sit in a file others can read, and no chmod after the fact.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** What a Codex sign-in keeps. Times are epoch milliseconds. */
export interface CodexTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly idToken?: string | undefined;
  /** The ChatGPT account (workspace) the tokens belong to: sent as `chatgpt-account-id`. */
  readonly accountId?: string | undefined;
  readonly email?: string | undefined;
  readonly plan?: string | undefined;
  /** When the access token expires (absent when the server did not say). */
  readonly expiresAt?: number | undefined;
  readonly lastRefresh: number;
}

/** The file's shape: one entry per signed-in provider. */
export interface AuthFile {
  readonly codex?: CodexTokens;
}

/** `$LASH_HOME/auth.json` (default `~/.lash/auth.json`) for an environment. */
export function defaultAuthFile(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const home = env.LASH_HOME?.trim();
  return join(home ? resolve(home) : join(homedir(), ".lash"), "auth.json");
}

/** The file's content; a missing file is empty. An unreadable or malformed one is an error naming the file. */
export function readAuthFile(path: string): AuthFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return {};
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    return parsed as AuthFile;
  } catch {
    // JSON.parse's message can quote a piece of the file (a token): say where, never what
    throw new Error(`${path} is not valid JSON: delete it and sign in again (\`lash login codex\`)`);
  }
}

/** Writes the whole file: a fresh file created with mode 0600, renamed over the old one. */
export function writeAuthFile(path: string, content: AuthFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(content, null, 2)}\n`);
    // on disk before the rename: a crash must not leave an empty sign-in file
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export function readCodexTokens(path: string): CodexTokens | undefined {
  const t = readAuthFile(path).codex;
  return t && typeof t.accessToken === "string" && typeof t.refreshToken === "string" ? t : undefined;
}

export function writeCodexTokens(path: string, tokens: CodexTokens): void {
  writeAuthFile(path, { ...readAuthFile(path), codex: tokens });
}

/** Forgets the Codex sign-in; true when there was one. The file goes when nothing is left in it. */
export function removeCodexTokens(path: string): boolean {
  if (!existsSync(path)) return false;
  const { codex, ...rest } = readAuthFile(path);
  if (Object.keys(rest).length === 0) rmSync(path, { force: true });
  else writeAuthFile(path, rest);
  return codex !== undefined;
}

/** Every token value in the file (for redaction). */
export function authFileSecrets(path: string): { name: string; value: string }[] {
  let file: AuthFile;
  try {
    file = readAuthFile(path);
  } catch {
    return [];
  }
  const out: { name: string; value: string }[] = [];
  const t = file.codex;
  if (t)
    for (const [k, v] of [
      ["accessToken", t.accessToken],
      ["refreshToken", t.refreshToken],
      ["idToken", t.idToken],
    ] as const)
      if (typeof v === "string" && v !== "") out.push({ name: `auth.json.codex.${k}`, value: v });
  return out;
}
