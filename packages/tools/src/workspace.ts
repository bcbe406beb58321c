import { realpathSync } from "node:fs";
import { lstat, readlink, realpath, stat } from "node:fs/promises";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { denied, invalid } from "./util.ts";

export type Access = "read" | "write";

export interface WorkspaceOptions {
  /** Directory every path is jailed to. Must exist. */
  readonly root: string;
  /**
   * When given, only paths matching one of these gitignore-style patterns
   * (relative to the root) may be read or written.
   */
  readonly allow?: readonly string[];
  /** Gitignore-style patterns that may be neither read nor written. */
  readonly deny?: readonly string[];
  /** Gitignore-style patterns that may be read but not written. Default: `[".git/"]`. */
  readonly denyWrite?: readonly string[];
  /**
   * Open regular files that have more than one name (hard links). Default false: a hard link's
   * other names cannot be found cheaply and may lie outside the workspace, so reading or writing
   * it could reach a file the jail is meant to keep out. The sandbox, where one runs, covers this.
   */
  readonly allowHardLinks?: boolean;
}

export interface ResolvedPath {
  /** Absolute path as given (normalised, inside the root). */
  readonly absolute: string;
  /** Absolute path with symlinks resolved (inside the root); use it for I/O. */
  readonly real: string;
  /** Path relative to the root, with `/` separators; `.` for the root itself. */
  readonly relative: string;
}

export const DEFAULT_DENY_WRITE: readonly string[] = [".git/"];

function matcher(patterns: readonly string[] | undefined): Ignore | undefined {
  if (patterns === undefined || patterns.length === 0) return undefined;
  return ignore().add([...patterns]);
}

function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}

function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const rel = path.relative(root, candidate);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/**
 * The jail for every path a tool touches: paths are normalised against the
 * root; `..` escapes, absolute paths outside the root and symlinks that lead
 * outside it are refused, as are paths matching the deny patterns.
 */
export class Workspace {
  /** The root as given, normalised and absolute. */
  readonly root: string;
  /** The root with symlinks resolved. */
  readonly realRoot: string;
  readonly #allow: Ignore | undefined;
  readonly #deny: Ignore | undefined;
  readonly #denyWrite: Ignore | undefined;
  readonly options: WorkspaceOptions;

  constructor(options: WorkspaceOptions | string) {
    const opts = typeof options === "string" ? { root: options } : options;
    this.options = opts;
    this.root = path.resolve(opts.root);
    this.realRoot = realpathSync(this.root);
    this.#allow = matcher(opts.allow);
    this.#deny = matcher(opts.deny);
    this.#denyWrite = matcher(opts.denyWrite ?? DEFAULT_DENY_WRITE);
  }

  /** Root-relative posix path of an absolute path inside the root. */
  relative(absolute: string): string {
    const base = isInside(this.realRoot, absolute) ? this.realRoot : this.root;
    const rel = toPosix(path.relative(base, absolute));
    return rel === "" ? "." : rel;
  }

  /**
   * Why a root-relative path is refused for this access, or undefined when it
   * is allowed. `isDirectory` also tests the path as a directory (`dir/`).
   */
  policyViolation(relative: string, access: Access, isDirectory = false): string | undefined {
    if (relative === "." || relative === "") return undefined;
    const candidates = isDirectory || access === "write" ? [relative, `${relative}/`] : [relative];
    const hit = (m: Ignore | undefined) => m !== undefined && candidates.some((c) => m.ignores(c));
    if (hit(this.#deny)) return `\`${relative}\` matches a deny pattern of this workspace`;
    if (access === "write" && hit(this.#denyWrite)) {
      return `\`${relative}\` matches a write-protected pattern of this workspace (${(this.options.denyWrite ?? DEFAULT_DENY_WRITE).join(", ")})`;
    }
    if (this.#allow !== undefined && !isDirectory && !candidates.some((c) => this.#allow?.ignores(c))) {
      return `\`${relative}\` is not covered by the allow patterns of this workspace (${(this.options.allow ?? []).join(", ")})`;
    }
    return undefined;
  }

  /** Whether a walker should skip this path entirely (read-denied). */
  isReadDenied(relative: string, isDirectory: boolean): boolean {
    if (relative === "." || relative === "") return false;
    const candidates = isDirectory ? [relative, `${relative}/`] : [relative];
    return this.#deny !== undefined && candidates.some((c) => this.#deny?.ignores(c));
  }

  /**
   * Resolve a path given by the model. Relative paths are relative to the
   * root. Throws a `permissionDenied` ToolFailure that says why when the path
   * escapes the root or matches a deny pattern.
   */
  async resolve(input: string, access: Access, opts?: { isDirectory?: boolean }): Promise<ResolvedPath> {
    if (typeof input !== "string" || input.length === 0) throw invalid("A path is required.");
    if (input.includes("\0")) throw invalid("The path contains a NUL byte.");
    const absolute = path.resolve(this.root, input);
    checkNameLengths(input, absolute);
    if (!isInside(this.root, absolute) && !isInside(this.realRoot, absolute)) {
      const why = path.isAbsolute(input)
        ? `the absolute path \`${input}\` is outside the workspace root ${this.root}`
        : `\`${input}\` escapes the workspace root via \`..\``;
      throw denied(
        `Access refused: ${why}. Use a path inside the workspace (relative paths are resolved against the root).`,
      );
    }
    const real = await this.#realpathOfNearest(absolute);
    if (!isInside(this.realRoot, real)) {
      throw denied(
        `Access refused: \`${input}\` resolves through a symbolic link to ${real}, which is outside the workspace root ${this.root}.`,
      );
    }
    const lexicalRel =
      toPosix(path.relative(isInside(this.root, absolute) ? this.root : this.realRoot, absolute)) || ".";
    const realRel = toPosix(path.relative(this.realRoot, real)) || ".";
    for (const rel of new Set([lexicalRel, realRel])) {
      const why = this.policyViolation(rel, access, opts?.isDirectory ?? false);
      if (why !== undefined) throw denied(`Access refused (${access}): ${why}.`);
    }
    if (this.options.allowHardLinks !== true) {
      const st = await stat(real).catch(() => undefined);
      if (st?.isFile() === true && st.nlink > 1)
        throw denied(
          `Access refused (${access}): \`${input}\` is a hard link (the file has ${st.nlink} names), and its other names may be outside the workspace root ${this.root}, so the file tools do not open it. Work on a copy (e.g. \`cp --no-preserve=links\` in the shell), or allow hard links in the config (\`files.allowHardLinks\`) if that is intended.`,
        );
    }
    return { absolute, real, relative: lexicalRel };
  }

  /** Realpath of the path, or of its nearest existing ancestor plus the rest. Dangling links are followed. */
  async #realpathOfNearest(absolute: string, depth = 0): Promise<string> {
    if (depth > 40) throw invalid(`Too many levels of symbolic links resolving ${absolute}.`);
    let current = absolute;
    const rest: string[] = [];
    for (;;) {
      try {
        const real = await realpath(current);
        return rest.length === 0 ? real : path.join(real, ...rest.reverse());
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      }
      // A dangling symlink exists but realpath fails: follow it by hand.
      const stat = await lstat(current).catch(() => undefined);
      if (stat?.isSymbolicLink() === true) {
        const target = path.resolve(path.dirname(current), await readlink(current));
        const resolved = await this.#realpathOfNearest(target, depth + 1);
        return rest.length === 0 ? resolved : path.join(resolved, ...rest.reverse());
      }
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** File systems take names of at most 255 bytes and paths of at most 4096: say so before the OS does. */
const NAME_MAX = 255;
const PATH_MAX = 4096;

function checkNameLengths(input: string, absolute: string): void {
  for (const name of absolute.split(path.sep)) {
    const bytes = Buffer.byteLength(name);
    if (bytes > NAME_MAX)
      throw invalid(
        `The path \`${input.length > 80 ? `${input.slice(0, 77)}...` : input}\` has a file or directory name of ${bytes} bytes; names may have at most ${NAME_MAX} bytes. Use a shorter name.`,
      );
  }
  const total = Buffer.byteLength(absolute);
  if (total > PATH_MAX)
    throw invalid(
      `The path is ${total} bytes long once resolved; paths may have at most ${PATH_MAX} bytes. Use a shorter path.`,
    );
}

export function asWorkspace(workspace: Workspace | WorkspaceOptions | string): Workspace {
  return workspace instanceof Workspace ? workspace : new Workspace(workspace);
}
