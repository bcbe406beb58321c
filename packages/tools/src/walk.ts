import type { Dirent } from "node:fs";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { checkAborted } from "./util.ts";
import type { Workspace } from "./workspace.ts";

/** Directories never descended into. */
export const ALWAYS_SKIPPED = new Set([".git", "node_modules"]);

interface IgnoreLevel {
  /** Root-relative directory the .gitignore lives in ("" for the root). */
  readonly base: string;
  readonly rules: Ignore;
}

export interface WalkEntry {
  /** Root-relative posix path. */
  readonly relative: string;
  /** Absolute path (real, for I/O). */
  readonly absolute: string;
}

async function loadGitignore(dirAbsolute: string, base: string): Promise<IgnoreLevel | undefined> {
  try {
    const text = await readFile(path.join(dirAbsolute, ".gitignore"), "utf8");
    return { base, rules: ignore().add(text) };
  } catch {
    return undefined;
  }
}

function ignoredBy(levels: readonly IgnoreLevel[], relative: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const level of levels) {
    const prefix = level.base === "" ? "" : `${level.base}/`;
    if (prefix !== "" && !relative.startsWith(prefix)) continue;
    const sub = relative.slice(prefix.length);
    if (sub === "") continue;
    const result = level.rules.test(isDirectory ? `${sub}/` : sub);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/**
 * Walk the files under `start` (root-relative), honouring every .gitignore
 * from the workspace root down, skipping `.git/`, `node_modules/`, read-denied
 * paths and symlinks that leave the root. Directory symlinks are not followed.
 * Entries come in sorted order. Stops early when `visit` returns false.
 */
export async function walkFiles(
  workspace: Workspace,
  start: { readonly real: string; readonly relative: string },
  signal: AbortSignal,
  visit: (entry: WalkEntry) => boolean | Promise<boolean>,
): Promise<void> {
  const startRel = start.relative === "." ? "" : start.relative;
  // .gitignore files of the ancestors of `start`, from the root down.
  const levels: IgnoreLevel[] = [];
  const parts = startRel === "" ? [] : startRel.split("/");
  for (let i = 0; i < parts.length; i++) {
    const base = parts.slice(0, i).join("/");
    const level = await loadGitignore(path.join(workspace.realRoot, base), base);
    if (level !== undefined) levels.push(level);
  }

  const walkDir = async (
    dirReal: string,
    dirRel: string,
    inherited: readonly IgnoreLevel[],
  ): Promise<boolean> => {
    checkAborted(signal);
    const own = await loadGitignore(dirReal, dirRel);
    const active = own === undefined ? inherited : [...inherited, own];
    let entries: Dirent[];
    try {
      entries = await readdir(dirReal, { withFileTypes: true });
    } catch {
      return true; // unreadable directory: skip
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = dirRel === "" ? entry.name : `${dirRel}/${entry.name}`;
      const abs = path.join(dirReal, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        // Follow file symlinks only when they stay inside the root; never descend into linked directories.
        const target = await realpath(abs).catch(() => undefined);
        if (target === undefined) continue;
        const targetRel = workspace.relative(target);
        if (targetRel.startsWith("..") || workspace.policyViolation(targetRel, "read") !== undefined)
          continue;
        const st = await stat(target).catch(() => undefined);
        if (st === undefined || !st.isFile()) continue;
        isDir = false;
        isFile = true;
      }
      if (isDir) {
        if (ALWAYS_SKIPPED.has(entry.name)) continue;
        if (ignoredBy(active, rel, true) || workspace.isReadDenied(rel, true)) continue;
        if (!(await walkDir(abs, rel, active))) return false;
      } else if (isFile) {
        if (ignoredBy(active, rel, false) || workspace.isReadDenied(rel, false)) continue;
        if (workspace.policyViolation(rel, "read") !== undefined) continue;
        if (!(await visit({ relative: rel, absolute: abs }))) return false;
      }
    }
    return true;
  };

  await walkDir(start.real, startRel, levels);
}

/**
 * Glob matching: patterns without a `/` match the file name at any depth
 * (`*.ts`), others match the path relative to the search directory.
 */
export function globMatcher(pattern: string): (relativeToSearch: string) => boolean {
  const trimmed = pattern.startsWith("./") ? pattern.slice(2) : pattern;
  if (!trimmed.includes("/")) {
    return (rel) => path.posix.matchesGlob(path.posix.basename(rel), trimmed);
  }
  return (rel) => path.posix.matchesGlob(rel, trimmed);
}
