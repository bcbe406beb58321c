import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { CliPaths } from "./context.ts";

/** `$LASH_HOME` (default `~/.lash`), its database and config, and the project config of `cwd`. */
export function resolvePaths(env: NodeJS.ProcessEnv, cwd: string): CliPaths {
  const fromEnv = env.LASH_HOME?.trim();
  const home = fromEnv ? resolve(fromEnv) : join(homedir(), ".lash");
  const project = join(cwd, ".lash", "config.json");
  return {
    home,
    db: join(home, "lash.db"),
    config: join(home, "config.json"),
    ...(existsSync(project) ? { projectConfig: project } : {}),
  };
}
