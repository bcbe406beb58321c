// The shell sandbox: commands run inside bubblewrap (`bwrap`) with the workspace writable
// (except lash's and git's own files in it), the rest of the filesystem read-only, private
// empty /tmp, /var/tmp, /run and $XDG_RUNTIME_DIR (no host Unix sockets), $LASH_HOME hidden,
// their own PID namespace and no network unless the policy allows it. @lash/tools declares the structural `ShellSandbox` interface
// this object fits (`wrap`, `describe`); this package does not import @lash/tools.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";

/** Whether bubblewrap can run here; `reason` says why not. */
export type BwrapStatus =
  | { readonly available: true; readonly binary: string }
  | { readonly available: false; readonly binary: string; readonly reason: string };

export interface BwrapSandboxOptions {
  /** The workspace root: the one writable directory (besides a private /tmp). */
  readonly workspace: string;
  /** Let commands reach the network (policy `sandbox.network: true`). Default false. */
  readonly network?: boolean;
  /** The bubblewrap binary. Default `bwrap` (looked up on PATH). */
  readonly binary?: string;
  /**
   * lash's home (`$LASH_HOME`: credentials, sessions): hidden under an empty tmpfs, or — when
   * the workspace is it or contains it — its auth.json and lash.db files covered by /dev/null.
   */
  readonly home?: string;
  /** `$XDG_RUNTIME_DIR` (sockets of the user's session): hidden when set. Default: the process's. */
  readonly runtimeDir?: string;
}

/** What a sandboxed shell's `wrap` returns: the command line to spawn and its environment. */
export interface WrappedCommand {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** The object the shell tool's `sandbox` option takes (structurally @lash/tools' `ShellSandbox`). */
export interface BwrapSandbox {
  /** The command line run inside bubblewrap; throws {@link SandboxUnavailableError} when it cannot run. */
  wrap(
    argv: readonly string[],
    context: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
  ): WrappedCommand;
  /** One line for previews, e.g. "bwrap: workspace writable (not .lash, .git, lash.yaml), rest read-only, no host sockets, network off". */
  describe(): string;
  /** Whether bubblewrap runs here (checked once per binary, then cached). */
  status(): BwrapStatus;
}

/** The fix named when the sandbox cannot run: install bubblewrap or turn the sandbox off. */
export const SANDBOX_FIX =
  'install bubblewrap (Debian/Ubuntu: `apt install bubblewrap`; Fedora: `dnf install bubblewrap`), or set `"policy": {"sandbox": {"mode": "off"}}` in the lash config to run shell commands unsandboxed';

/** Thrown by `wrap` when bubblewrap is missing or cannot run here (never a silent fallback). */
export class SandboxUnavailableError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(`shell: the sandbox cannot run: ${reason}. To fix: ${SANDBOX_FIX}.`);
    this.name = "SandboxUnavailableError";
    this.reason = reason;
  }
}

const statusCache = new Map<string, BwrapStatus>();

/**
 * Whether `bwrap` is on PATH and can run here: `bwrap --ro-bind / / --dev /dev --proc /proc
 * --unshare-pid true` (what every sandboxed command needs) is tried once (per binary) and the answer cached, with the reason when it cannot (not Linux, not installed,
 * user namespaces not permitted in this container …).
 */
export function bwrapStatus(binary = "bwrap"): BwrapStatus {
  const cached = statusCache.get(binary);
  if (cached) return cached;
  const status = probe(binary);
  statusCache.set(binary, status);
  return status;
}

const PROBE = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "true"];

function probe(binary: string): BwrapStatus {
  if (process.platform !== "linux")
    return {
      available: false,
      binary,
      reason: `bubblewrap runs only on Linux (this is ${process.platform})`,
    };
  const r = spawnSync(binary, PROBE, {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
    encoding: "utf8",
  });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return {
      available: false,
      binary,
      reason:
        code === "ENOENT"
          ? `\`${binary}\` (bubblewrap) is not installed or not on PATH`
          : `\`${binary}\` could not be started: ${r.error.message}`,
    };
  }
  if (r.status !== 0) {
    const said = (r.stderr ?? "").trim().split("\n")[0] ?? "";
    return {
      available: false,
      binary,
      reason: `\`${binary} ${PROBE.join(" ")}\` failed (${r.status === null ? `signal ${r.signal}` : `exit ${r.status}`}${said ? `: ${said}` : ""})`,
    };
  }
  return { available: true, binary };
}

/** The one-line description of a bwrap sandbox, for previews and `lash doctor`. */
export function describeSandbox(options: { readonly network?: boolean }): string {
  return `bwrap: workspace writable (not .lash, .git, lash.yaml), rest read-only, no host sockets, network ${options.network === true ? "on" : "off"}`;
}

/**
 * What in the workspace stays read-only: lash's project config and builds (`.lash`), git's
 * hooks and config (`.git`), and the project file — what lash or git run later, unsandboxed.
 */
export const PROTECTED_IN_WORKSPACE: readonly string[] = [
  ".lash",
  ".git",
  "lash.yaml",
  "lash.yml",
  "lash.json",
];

/** The files of `$LASH_HOME` covered when the home cannot be hidden whole (it is in the workspace). */
export const HOME_SECRET_FILES: readonly string[] = [
  "auth.json",
  "lash.db",
  "lash.db-wal",
  "lash.db-shm",
  "lash.db-journal",
];

/** Directories of host Unix sockets and shared scratch space, covered by an empty tmpfs. */
const HIDDEN_DIRS: readonly string[] = ["/run", "/var/run", "/var/tmp"];

/** Is `path` the directory `dir` or inside it? */
function within(path: string, dir: string): boolean {
  const r = relative(dir, path);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

const exists = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The bubblewrap command line for `argv` run in `cwd`: the whole filesystem read-only, then
 * `/dev`, a fresh `/proc`, a private writable `/tmp`, empty tmpfs over `/run`, `/var/run`,
 * `/var/tmp` and `$XDG_RUNTIME_DIR` (a read-only mount does not stop `connect()` on a socket
 * file: docker.sock, D-Bus, an ssh-agent stay out of reach) and over `$LASH_HOME`
 * (`/etc/resolv.conf` is bound back when it lives there); the workspace bound writable on top
 * (after the tmpfs, so a workspace under /tmp stays visible), then `.lash`, `.git` and the
 * project file read-only again (a command must not plant config, MCP servers or git hooks
 * that lash or git run later outside the sandbox); its own PID namespace, so killing bwrap
 * ends every process inside; `--die-with-parent`; `--unshare-net` unless `network`.
 * No `--new-session`: the shell tool already starts bwrap as a session and group leader
 * without a controlling terminal (so TIOCSTI has no terminal to reach), and staying in that
 * process group is what lets a timeout kill the whole group.
 */
export function bwrapArgs(
  argv: readonly string[],
  options: {
    readonly workspace: string;
    readonly cwd: string;
    readonly network?: boolean;
    readonly binary?: string;
    readonly home?: string;
    readonly runtimeDir?: string;
  },
): string[] {
  const ws = real(options.workspace);
  // directories replaced by an empty tmpfs: outside the workspace (one inside it is the
  // workspace's business), each once (/var/run is usually a link to /run)
  const hidden: string[] = [];
  const hide = (dir: string | undefined) => {
    if (dir === undefined || dir === "" || !isAbsolute(dir) || !existsSync(dir)) return;
    const r = real(dir);
    if (r === "/" || within(r, ws) || within(r, "/tmp") || hidden.some((h) => within(r, h))) return;
    hidden.push(r);
  };
  for (const d of HIDDEN_DIRS) hide(d);
  hide(options.runtimeDir);
  const home = options.home === undefined ? undefined : real(options.home);
  hide(home);
  const tmpfs = hidden.flatMap((d) => ["--tmpfs", d]);
  // name resolution: /etc/resolv.conf is often a link into /run (systemd-resolved)
  const resolv = real("/etc/resolv.conf");
  const keep =
    resolv !== "/etc/resolv.conf" && hidden.some((h) => within(resolv, h))
      ? ["--ro-bind-try", resolv, resolv]
      : [];
  const readOnly = PROTECTED_IN_WORKSPACE.map((name) => join(ws, name))
    .filter(exists)
    .flatMap((p) => ["--ro-bind", p, p]);
  const homeFiles =
    home !== undefined && within(home, ws)
      ? HOME_SECRET_FILES.map((f) => join(home, f))
          .filter(exists)
          .flatMap((f) => ["--ro-bind", "/dev/null", f])
      : [];
  return [
    options.binary ?? "bwrap",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    ...tmpfs,
    ...keep,
    "--bind",
    ws,
    ws,
    ...readOnly,
    ...homeFiles,
    "--unshare-pid",
    ...(options.network === true ? [] : ["--unshare-net"]),
    "--die-with-parent",
    "--chdir",
    options.cwd,
    "--",
    ...argv,
  ];
}

/**
 * A bubblewrap sandbox for the shell tool (`shellTool(ws, { sandbox: bwrapSandbox({workspace}) })`).
 * Whether bubblewrap runs is checked on the first `wrap` (once, cached); when it cannot, `wrap`
 * throws {@link SandboxUnavailableError} naming the reason and the fix, and the shell tool
 * returns that as its error result — it never runs the command unsandboxed.
 */
export function bwrapSandbox(options: BwrapSandboxOptions): BwrapSandbox {
  const binary = options.binary ?? "bwrap";
  const network = options.network === true;
  const runtimeDir = options.runtimeDir ?? process.env.XDG_RUNTIME_DIR;
  return {
    wrap(argv, context) {
      const status = bwrapStatus(binary);
      if (!status.available) throw new SandboxUnavailableError(status.reason);
      // a missing .lash is created (empty) so it can be bound read-only: a command must not
      // create the project config the next lash reads
      const dotLash = join(options.workspace, ".lash");
      if (!exists(dotLash)) {
        try {
          mkdirSync(dotLash);
        } catch (e) {
          throw new SandboxUnavailableError(
            `cannot create ${dotLash} to keep it read-only inside the sandbox (${(e as Error).message})`,
          );
        }
      }
      return {
        argv: bwrapArgs(argv, {
          workspace: options.workspace,
          cwd: context.cwd,
          network,
          binary,
          ...(options.home !== undefined ? { home: options.home } : {}),
          ...(runtimeDir !== undefined ? { runtimeDir } : {}),
        }),
        // the environment passes through as given (the shell tool has already scrubbed it)
        env: context.env,
      };
    },
    describe: () => describeSandbox({ network }),
    status: () => bwrapStatus(binary),
  };
}
