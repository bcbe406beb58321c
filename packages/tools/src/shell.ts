import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import {
  scrubEnv,
  type ToolContext,
  type ToolDefinition,
  type ToolFailure,
  type ToolOutput,
} from "@lash/core";
import { Effect } from "effect";
import { groupAlive, prepareSupervisor, watchGroup } from "./reaper.ts";
import {
  asArgs,
  cancelled,
  failure,
  invalid,
  optionalInt,
  optionalString,
  requireString,
  toFailure,
} from "./util.ts";
import { asWorkspace, type Workspace, type WorkspaceOptions } from "./workspace.ts";

export interface ShellOptions {
  /** Variables to add or override (explicit: never scrubbed); `null`/`undefined` removes an inherited one. */
  readonly env?: Readonly<Record<string, string | null | undefined>>;
  /** Pass the host's environment through (scrubbed, see `scrubEnv`). Default true. */
  readonly inheritEnv?: boolean;
  /**
   * Remove credentials from the inherited environment: the names in `secretEnvNames`, every name
   * matching `SECRET_ENV_PATTERNS` (`*_API_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*` …) and every
   * value shaped like a known API key. Default true.
   */
  readonly scrubEnv?: boolean;
  /** Inherited variables passed through although they look like secrets (config `shell.passEnv`). */
  readonly passEnv?: readonly string[];
  /** Variables the host holds as credentials (its provider keys), removed whatever they are called. */
  readonly secretEnvNames?: readonly string[];
  /** Timeout when the call gives none. Default 120 000 ms. */
  readonly defaultTimeoutMs?: number;
  /** Largest timeout a call may ask for. Default 600 000 ms. */
  readonly maxTimeoutMs?: number;
  /** Bytes of output kept (the tail), per stream and for the combined text. Default 30 000. */
  readonly maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL when killing the process group. Default 2 000 ms. */
  readonly killGraceMs?: number;
  /** Shell binary run as `<shell> -c <command>`. Default `bash`. */
  readonly shell?: string;
  /**
   * Run every command inside this sandbox (e.g. @lash/policy's `bwrapSandbox`). When its `wrap`
   * throws (the sandbox cannot run here), the call fails with that message: never unsandboxed.
   */
  readonly sandbox?: ShellSandbox;
}

/**
 * A sandbox for `shell`, declared structurally here so any package can provide one
 * (@lash/policy's `bwrapSandbox` fits without either package importing the other).
 */
export interface ShellSandbox {
  /**
   * The command line to spawn instead of `argv` (`[shell, "-c", command]`) and its environment.
   * Throws (with a message naming the fix) when the sandbox cannot run.
   */
  wrap(
    argv: readonly string[],
    context: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
  ): { readonly argv: readonly string[]; readonly env: NodeJS.ProcessEnv };
  /** One line for previews and the tool description (what the sandbox lets a command do). */
  describe(): string;
}

export interface ShellArgs {
  readonly command: string;
  readonly cwd?: string;
  readonly timeoutMs?: number;
  readonly env?: Readonly<Record<string, string>>;
}

/** The structured value of `shell` (`shell.exec`). */
export interface ShellValue {
  /** The exit code, or null when the process was killed by a signal. */
  readonly exitCode: number | null;
  /** The signal that ended the process, if any. */
  readonly signal: string | null;
  /** The tail of stdout (at most `maxOutputBytes`). */
  readonly stdout: string;
  /** The tail of stderr (at most `maxOutputBytes`). */
  readonly stderr: string;
  readonly timedOut: boolean;
  /** True when earlier output was dropped from stdout, stderr or the combined text. */
  readonly truncated: boolean;
}

/** Progress updates streamed through `ctx.progress` while the command runs. */
export interface ShellProgress {
  readonly type: "output";
  readonly stream: "stdout" | "stderr";
  readonly text: string;
}

/** Keeps the last `max` bytes written to it. */
class TailBuffer {
  readonly max: number;
  #chunks: Buffer[] = [];
  #size = 0;
  total = 0;

  constructor(max: number) {
    this.max = max;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#size > this.max * 2) this.#compact();
  }

  #compact(): void {
    const all = Buffer.concat(this.#chunks);
    const kept = all.subarray(Math.max(0, all.length - this.max));
    this.#chunks = [kept];
    this.#size = kept.length;
  }

  get truncated(): boolean {
    return this.total > this.max;
  }

  text(): string {
    const all = Buffer.concat(this.#chunks);
    let tail = all.subarray(Math.max(0, all.length - this.max));
    if (this.truncated) {
      let skip = 0;
      while (skip < 4 && skip < tail.length && ((tail[skip] ?? 0) & 0xc0) === 0x80) skip++;
      tail = tail.subarray(skip);
    }
    return tail.toString("utf8");
  }
}

const NAME = "shell";
/** Characters of an unfinished output line held back from progress updates (see `onData`). */
const PROGRESS_HOLD = 4096;
/** Characters kept back when a long partial line is sent anyway (longer than any API key). */
const PROGRESS_KEEP = 256;

function buildEnv(
  options: ShellOptions,
  extra: Readonly<Record<string, string>> | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv =
    options.inheritEnv === false
      ? {}
      : options.scrubEnv === false
        ? { ...process.env }
        : scrubEnv(process.env, {
            ...(options.secretEnvNames ? { secretNames: options.secretEnvNames } : {}),
            ...(options.passEnv ? { pass: options.passEnv } : {}),
          }).env;
  env.PAGER = "cat";
  env.GIT_PAGER = "cat";
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === null || value === undefined) delete env[key];
    else env[key] = value;
  }
  for (const [key, value] of Object.entries(extra ?? {})) env[key] = value;
  return env;
}

export function shellTool(
  workspace: Workspace | WorkspaceOptions | string,
  options: ShellOptions = {},
): ToolDefinition<ShellArgs> {
  const ws = asWorkspace(workspace);
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = Math.max(options.maxTimeoutMs ?? 600_000, defaultTimeoutMs);
  const maxOutputBytes = options.maxOutputBytes ?? 30_000;
  const killGraceMs = options.killGraceMs ?? 2_000;
  const shell = options.shell ?? "bash";

  const parse = (rawArgs: unknown) => {
    const args = asArgs(NAME, rawArgs);
    const command = requireString(NAME, args, "command", { nonEmpty: true });
    const cwd = optionalString(NAME, args, "cwd");
    const timeoutMs = optionalInt(NAME, args, "timeoutMs", { min: 1, max: maxTimeoutMs }) ?? defaultTimeoutMs;
    const env = args.env;
    if (env !== undefined && env !== null) {
      if (
        typeof env !== "object" ||
        Array.isArray(env) ||
        Object.values(env).some((v) => typeof v !== "string")
      ) {
        throw invalid("shell: `env` must be an object mapping variable names to string values.");
      }
    }
    return { command, cwd, timeoutMs, env: (env ?? undefined) as Record<string, string> | undefined };
  };

  const resolveCwd = async (cwd: string | undefined): Promise<string> => {
    const resolved = await ws.resolve(cwd ?? ".", "read", { isDirectory: true });
    const info = await stat(resolved.real).catch(() => undefined);
    if (info === undefined) throw invalid(`shell: the working directory \`${cwd}\` does not exist.`);
    if (!info.isDirectory()) throw invalid(`shell: the working directory \`${cwd}\` is not a directory.`);
    return resolved.real;
  };

  const run = (
    command: string,
    argv: readonly string[],
    cwd: string,
    timeoutMs: number,
    env: NodeJS.ProcessEnv,
    ctx: ToolContext,
  ): Effect.Effect<ToolOutput, ToolFailure> =>
    Effect.async<ToolOutput, ToolFailure>((resume) => {
      if (ctx.signal.aborted) {
        resume(Effect.fail(cancelled("The shell command was cancelled before it started.")));
        return;
      }
      const stdout = new TailBuffer(maxOutputBytes);
      const stderr = new TailBuffer(maxOutputBytes);
      const combined = new TailBuffer(maxOutputBytes);
      let timedOut = false;
      let aborted = false;
      let killing = false;
      let settled = false;
      let exitCode: number | null = null;
      let exitSignal: string | null = null;
      const timers: NodeJS.Timeout[] = [];
      let markClosed: () => void = () => {};
      const closed = new Promise<void>((resolve) => {
        markClosed = resolve;
      });

      // its own process group (killed as a whole), watched so that it dies with this process:
      // the supervisor runs before the command starts, so registering it is one pipe write
      prepareSupervisor();
      const [file = shell, ...rest] = argv;
      const child = spawn(file, rest, {
        cwd,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const pid = child.pid;
      const release = pid === undefined ? () => undefined : watchGroup(pid);

      const signalGroup = (sig: NodeJS.Signals) => {
        if (pid === undefined) return;
        try {
          process.kill(-pid, sig);
        } catch {
          // the group is already gone
        }
      };

      const finish = () => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        ctx.signal.removeEventListener("abort", onAbort);
        flushProgress();
        release();
        markClosed();
        const text = combined.text();
        const truncated = stdout.truncated || stderr.truncated || combined.truncated;
        const value: ShellValue = {
          exitCode,
          signal: exitSignal,
          stdout: stdout.text(),
          stderr: stderr.text(),
          timedOut,
          truncated,
        };
        const parts: string[] = [];
        if (combined.truncated) {
          parts.push(
            `[… output truncated: ${combined.total - Buffer.byteLength(text)} earlier bytes not shown; showing the last ${Buffer.byteLength(text)} of ${combined.total} bytes …]`,
          );
        }
        parts.push(text.length === 0 ? "(no output)" : text.replace(/\n$/, ""));
        if (timedOut) {
          parts.push(`[timed out after ${timeoutMs} ms; the command and its child processes were killed]`);
        } else if (exitCode !== null) {
          parts.push(`[exit code: ${exitCode}]`);
        } else if (exitSignal !== null) {
          parts.push(`[killed by signal ${exitSignal}]`);
        }
        if (aborted) {
          resume(
            Effect.fail(
              cancelled(
                `The shell command was cancelled; its process group was killed. Output so far:\n${parts.join("\n")}`,
              ),
            ),
          );
          return;
        }
        resume(
          Effect.succeed({
            content: [{ type: "text", text: parts.join("\n") }],
            value,
            details: { command, cwd: ws.relative(cwd), ...value },
          }),
        );
      };

      const destroyPipes = () => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      };

      /** SIGTERM the group, SIGKILL after the grace period, give up on the pipes after twice that. */
      const killGroup = (): Promise<void> => {
        if (!killing && !settled) {
          killing = true;
          signalGroup("SIGTERM");
          timers.push(setTimeout(() => signalGroup("SIGKILL"), killGraceMs));
          timers.push(
            setTimeout(
              () => {
                destroyPipes();
                finish();
              },
              killGraceMs * 2 + 1000,
            ),
          );
        }
        return closed;
      };

      const onAbort = () => {
        aborted = true;
        void killGroup();
      };
      ctx.signal.addEventListener("abort", onAbort, { once: true });

      const sendProgress = (stream: "stdout" | "stderr", text: string) => {
        if (text === "") return;
        try {
          ctx.progress({ type: "output", stream, text } satisfies ShellProgress);
        } catch {
          // a failing progress listener must not break the command
        }
      };
      // Progress goes out in whole lines (up to the last \n or \r; of a partial line longer than
      // PROGRESS_HOLD all but its last PROGRESS_KEEP characters), so a secret value is not split
      // across two updates where the host's redaction could not see it whole.
      const held = { stdout: "", stderr: "" };
      const flushProgress = () => {
        for (const stream of ["stdout", "stderr"] as const) {
          sendProgress(stream, held[stream]);
          held[stream] = "";
        }
      };
      const onData = (stream: "stdout" | "stderr", buffer: TailBuffer) => {
        // A decoder per stream keeps multi-byte characters split across chunks whole.
        const decoder = new StringDecoder("utf8");
        return (chunk: Buffer) => {
          buffer.push(chunk);
          combined.push(chunk);
          const text = held[stream] + decoder.write(chunk);
          const cut = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r")) + 1;
          let upTo = text.length - cut > PROGRESS_HOLD ? text.length - PROGRESS_KEEP : cut;
          const last = text.charCodeAt(upTo - 1);
          if (last >= 0xd800 && last <= 0xdbff) upTo--; // keep a surrogate pair together
          held[stream] = text.slice(upTo);
          sendProgress(stream, text.slice(0, upTo));
        };
      };
      child.stdout?.on("data", onData("stdout", stdout));
      child.stderr?.on("data", onData("stderr", stderr));

      child.on("error", (error) => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        ctx.signal.removeEventListener("abort", onAbort);
        release();
        markClosed();
        resume(Effect.fail(failure(`shell: could not start \`${file}\`: ${error.message}`)));
      });
      child.on("exit", (code, sig) => {
        exitCode = code;
        exitSignal = sig;
        if (!killing) {
          // Background processes may still hold the pipes open: do not wait for them forever.
          timers.push(
            setTimeout(() => {
              destroyPipes();
              finish();
            }, 250),
          );
        }
      });
      child.on("close", (code, sig) => {
        if (exitCode === null && exitSignal === null) {
          exitCode = code;
          exitSignal = sig;
        }
        if (!killing || pid === undefined) {
          finish();
          return;
        }
        // Pipes close a moment before a dying process is gone: wait until the group has no live member
        // (the SIGKILL and give-up timers keep running meanwhile).
        const poll = () => {
          if (settled) return;
          void groupAlive(pid).then((alive) => {
            if (!alive) finish();
            else timers.push(setTimeout(poll, 10));
          });
        };
        poll();
      });

      timers.push(
        setTimeout(() => {
          timedOut = true;
          void killGroup();
        }, timeoutMs),
      );

      // Interruption of the fiber: kill the whole group and wait until it is gone.
      return Effect.promise(() => {
        aborted = true;
        return killGroup();
      });
    });

  return {
    name: NAME,
    description: [
      "Run a shell command with `bash -c` in the workspace (or in `cwd`, relative to the root) and wait for it to finish. Use it for builds, tests, git, package managers and other CLI tools; prefer read_file/glob/grep/edit for reading, finding and changing files.",
      "stdin is empty and there is no terminal, so interactive programs will not work; pass flags that avoid prompts and pagers.",
      ...(options.sandbox
        ? [
            `Commands run in a sandbox (${options.sandbox.describe()}): writes outside the workspace (other than /tmp, which is private and discarded) fail.`,
          ]
        : []),
      ...(options.scrubEnv === false || options.inheritEnv === false
        ? []
        : ["Credentials (API keys, tokens, passwords) are removed from its environment."]),
      `Times out after \`timeoutMs\` (default ${defaultTimeoutMs} ms, max ${maxTimeoutMs} ms); on timeout or cancellation the command and every process it started are killed.`,
      `Output is stdout and stderr interleaved; only the last ${maxOutputBytes} bytes are kept, with a marker when earlier output was dropped — redirect to a file and read it if you need everything.`,
      "A non-zero exit code is reported in the result (`[exit code: N]`), not as a tool error.",
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line, run with `bash -c`." },
        cwd: {
          type: "string",
          description: "Working directory, relative to the workspace root. Default: the root.",
        },
        timeoutMs: {
          type: "integer",
          minimum: 1,
          maximum: maxTimeoutMs,
          description: `Timeout in milliseconds. Default ${defaultTimeoutMs}.`,
        },
        env: {
          type: "object",
          additionalProperties: { type: "string" },
          description: "Extra environment variables for this command.",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    readOnly: false,
    // exec, not network: what a command may reach is the sandbox's `network` setting and the risk
    // evaluator's per-command verdict (curl, git push); declaring network here would make
    // `deny: ["group:network"]` remove the shell altogether
    effects: ["exec"],
    idempotent: false,
    truncate: "tail",
    family: "shell",
    timeoutMs: maxTimeoutMs + killGraceMs * 2 + 5_000,
    binding: {
      module: "shell",
      operation: "exec",
      returns:
        "{exitCode: number|null, signal: string|null, stdout, stderr, timedOut, truncated} — a non-zero exitCode is data",
    },
    preview: (rawArgs) =>
      Effect.gen(function* () {
        const args = yield* Effect.try({ try: () => parse(rawArgs), catch: toFailure });
        const cwd = yield* Effect.tryPromise({ try: () => resolveCwd(args.cwd), catch: toFailure });
        const sandbox = sandboxDescription(options);
        return {
          summary: `run \`${args.command}\` in ${cwd} (${sandbox})`,
          command: { command: args.command, cwd, sandbox },
        };
      }),
    execute: (rawArgs, ctx) =>
      Effect.gen(function* () {
        const args = yield* Effect.try({ try: () => parse(rawArgs), catch: toFailure });
        const cwd = yield* Effect.tryPromise({ try: () => resolveCwd(args.cwd), catch: toFailure });
        const env = buildEnv(options, args.env);
        const argv = [shell, "-c", args.command];
        // sandboxed: the sandbox's command line; when it cannot run, its message is the result
        const sandbox = options.sandbox;
        const wrapped = sandbox
          ? yield* Effect.try({
              try: () => sandbox.wrap(argv, { cwd, env }),
              catch: (e) => failure(e instanceof Error ? e.message : String(e)),
            })
          : { argv, env };
        return yield* run(args.command, wrapped.argv, cwd, args.timeoutMs, wrapped.env, ctx);
      }),
  };
}

/** What the shell's sandbox lets a command do, for previews: its `describe()`, else "no sandbox". */
function sandboxDescription(options: ShellOptions): string {
  return options.sandbox?.describe() ?? "no sandbox";
}
