import { existsSync, statSync } from "node:fs";
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
