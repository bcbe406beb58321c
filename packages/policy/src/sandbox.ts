// The shell sandbox: commands run inside bubblewrap (`bwrap`) with the workspace writable, the
// rest of the filesystem read-only, a private /tmp, their own PID namespace and no network
// unless the policy allows it. @lash/tools declares the structural `ShellSandbox` interface
// this object fits (`wrap`, `describe`); this package does not import @lash/tools.
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";

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
  /** One line for previews, e.g. "bwrap: workspace writable, rest read-only, network off". */
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
  return `bwrap: workspace writable, rest read-only, network ${options.network === true ? "on" : "off"}`;
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The bubblewrap command line for `argv` run in `cwd`: the whole filesystem read-only, then
 * `/dev`, a fresh `/proc`, a private writable `/tmp`, and the workspace bound writable on top
 * (after the tmpfs, so a workspace under /tmp stays visible); its own PID namespace, so killing
 * bwrap ends every process inside; `--die-with-parent`; `--unshare-net` unless `network`.
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
  },
): string[] {
  const ws = real(options.workspace);
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
    "--bind",
    ws,
    ws,
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
  return {
    wrap(argv, context) {
      const status = bwrapStatus(binary);
      if (!status.available) throw new SandboxUnavailableError(status.reason);
      return {
        argv: bwrapArgs(argv, { workspace: options.workspace, cwd: context.cwd, network, binary }),
        // the environment passes through as given (the shell tool has already scrubbed it)
        env: context.env,
      };
    },
    describe: () => describeSandbox({ network }),
    status: () => bwrapStatus(binary),
  };
}
