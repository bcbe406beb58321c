// The console's files when the daemon runs from the repository: packages/console/dist/<stamp>/,
// built with esbuild on first use when missing or stale (the stamp hashes the sources, so an
// edit to the console, the client or the API schema makes a new build). Each build is written
// to a private directory and renamed into place, so daemons starting at once never read half a
// build. The packed CLI replaces this module with the files it was built with (apps/cli's
// scripts/bundle.ts), so an installed lash never needs esbuild.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ConsoleFiles } from "./assets.ts";
import { buildConsole, type ConsoleManifest, DIST_DIR, sourceStamp } from "./build.ts";

function read(dir: string): ConsoleFiles {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as ConsoleManifest;
  const files: Record<string, string> = {};
  for (const f of manifest.files) files[f] = readFileSync(join(dir, f), "utf8");
  return { files, stamp: manifest.stamp };
}

/** The built console, building it first when dist/ has no build of the current sources. */
export async function loadFiles(): Promise<ConsoleFiles> {
  const stamp = sourceStamp();
  const dir = join(DIST_DIR, stamp);
  if (existsSync(join(dir, "manifest.json"))) return read(dir);
  const work = join(DIST_DIR, `.building-${process.pid}-${Date.now().toString(36)}`);
  try {
    await buildConsole(work);
    try {
      renameSync(work, dir);
    } catch (e) {
      // another process renamed its build of the same sources first: use that one
      if (!existsSync(join(dir, "manifest.json"))) throw e;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  // older builds are of sources that no longer exist
  for (const name of readdirSync(DIST_DIR))
    if (name !== stamp && !name.startsWith("."))
      rmSync(join(DIST_DIR, name), { recursive: true, force: true });
  return read(dir);
}
