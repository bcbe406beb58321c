// `tsc -b tsconfig.build.json` for the packaging tests, one at a time across test files
// and processes (two `tsc -b` writing the same dist/ at once could let one read a
// half-written declaration). The lock is a directory holding the owner's pid; a lock
// whose owner is gone is taken over.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";

const root = join(import.meta.dirname, "..", "..");
const lock = join(root, "node_modules", ".cache", "lash-build.lock");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function acquire(): Promise<void> {
  mkdirSync(join(lock, ".."), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "pid"), String(process.pid));
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(join(lock, "pid"), "utf8"));
    } catch {}
    // no pid yet: the owner is between mkdir and write; poll again
    if (Number.isInteger(owner) && !alive(owner)) rmSync(lock, { recursive: true, force: true });
    else await new Promise((r) => setTimeout(r, 100));
  }
}

/** Build every library package to dist/ (incremental; quick when dist/ is current). */
export async function buildPackages(): Promise<void> {
  await acquire();
  try {
    await promisify(execFile)(process.execPath, [tsc, "-b", "tsconfig.build.json"], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: { stdout?: string }) => {
      throw new Error(`pnpm build (tsc -b tsconfig.build.json) failed:\n${e.stdout ?? e}`);
    });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
