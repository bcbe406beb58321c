import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { CliPaths } from "./context.ts";
import { usageError } from "./errors.ts";

/** `$LASH_HOME` (default `~/.lash`), its database and config, and the project config of `cwd`. */
export function resolvePaths(env: NodeJS.ProcessEnv, cwd: string): CliPaths {
  const fromEnv = env.LASH_HOME?.trim();
  const home = fromEnv ? resolve(fromEnv) : join(homedir(), ".lash");
  checkHome(home, fromEnv ? "LASH_HOME" : "~/.lash");
  const project = join(cwd, ".lash", "config.json");
  return {
    home,
    db: join(home, "lash.db"),
    config: join(home, "config.json"),
    ...(existsSync(project) ? { projectConfig: project } : {}),
  };
}

/** The state file of `lash serve` (runs, events, approvals, tokens) when `--state` is not given. */
export function serveStateFile(home: string): string {
  return join(home, "serve.db");
}

/** The home (or its nearest existing ancestor) must be a directory: a file there is a clear usage error. */
function checkHome(home: string, name: string): void {
  for (let dir = home; ; dir = dirname(dir)) {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return;
    if (stat !== undefined)
      throw usageError(
        `${name} (${home}) cannot be used: ${dir === home ? "it" : dir} is a file, not a directory. ` +
          "lash keeps its database and config there: point LASH_HOME at a directory (it is created when missing).",
      );
    if (dirname(dir) === dir) return;
  }
}

/**
 * The `--base-url` a session was created with, kept beside the database in
 * `$LASH_HOME/endpoints.json` (`{ "<session id>": { "baseUrl": "…" } }`), so `--continue` and
 * `--resume` reach the same server without the flag. A missing or unreadable file is empty.
 */
export function sessionEndpoint(home: string, sessionId: string): string | undefined {
  return readEndpoints(home)[sessionId]?.baseUrl;
}

export function recordSessionEndpoint(home: string, sessionId: string, baseUrl: string): void {
  // a URL with credentials in it (https://user:pass@host) is not written down: pass it again
  try {
    const url = new URL(baseUrl);
    if (url.username !== "" || url.password !== "") return;
  } catch {
    return;
  }
  const all = readEndpoints(home);
  if (all[sessionId]?.baseUrl === baseUrl) return;
  all[sessionId] = { baseUrl };
  const file = join(home, "endpoints.json");
  writeFileSync(`${file}.tmp`, `${JSON.stringify(all, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

function readEndpoints(home: string): Record<string, { baseUrl?: string } | undefined> {
  try {
    const parsed = JSON.parse(readFileSync(join(home, "endpoints.json"), "utf8")) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, { baseUrl?: string }>)
      : {};
  } catch {
    return {};
  }
}
