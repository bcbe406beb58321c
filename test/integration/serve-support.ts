// Running the real `lash serve` as a child process and talking to it over HTTP/SSE.
import { existsSync, readFileSync } from "node:fs";
import { afterEach } from "vitest";
import { type Sandbox, type Spawned, sandbox, start } from "./cli-support.ts";

export interface Daemon {
  readonly url: string;
  readonly proc: Spawned;
}

export interface DaemonOptions {
  /** Bearer tokens (no `--no-auth`): the auth tests' daemons. */
  readonly auth?: boolean;
  /** Extra environment of the daemon process (e.g. a LASH_TEST_… hook). */
  readonly env?: NodeJS.ProcessEnv;
  /** The port (default 0: any free one; a restarted daemon takes its predecessor's). */
  readonly port?: number;
}

/**
 * `lash serve --port 0 --no-auth …` (with `auth`: tokens, no `--no-auth`) in the sandbox;
 * resolves once it printed its URL.
 */
export async function startDaemon(
  sb: Sandbox,
  extra: readonly string[] = [],
  options: DaemonOptions = {},
): Promise<Daemon> {
  const port = String(options.port ?? 0);
  const proc = start(["serve", "--port", port, ...(options.auth ? [] : ["--no-auth"]), ...extra], {
    env: { ...sb.env, ...options.env },
    cwd: sb.cwd,
  });
  const line = await proc.waitForLine(
    (l) => l.startsWith("lash serve: listening on") || l.startsWith("__exited__"),
  );
  const m = /listening on (http:\/\/\S+)/.exec(line);
  if (!m) {
    const run = await proc.done;
    throw new Error(`lash serve did not start: ${line}\n${run.stderr}`);
  }
  return { url: m[1]!, proc };
}

/** Kill a daemon that still runs (SIGKILL) and wait for its exit. */
export async function stopDaemon(d: Daemon): Promise<void> {
  if (d.proc.child.exitCode === null && d.proc.child.signalCode === null) d.proc.child.kill("SIGKILL");
  await d.proc.done;
}

/**
 * The sandboxes and daemons of a test file, ended after each test (daemons killed, mock
 * servers closed, directories removed). Call once at the top of the file.
 */
export function serveTests(): {
  /** A sandbox (see cli-support's `sandbox`), cleaned up after the test. */
  sandbox(...args: Parameters<typeof sandbox>): Promise<Sandbox>;
  /** A daemon (see `startDaemon`), killed after the test. */
  daemon(sb: Sandbox, extra?: readonly string[], options?: DaemonOptions): Promise<Daemon>;
  /** Run `f` after the test (before the daemons and sandboxes are ended). */
  defer(f: () => Promise<unknown> | unknown): void;
} {
  const daemons: Daemon[] = [];
  const boxes: Sandbox[] = [];
  const deferred: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const f of deferred.splice(0).reverse()) await f();
    for (const d of daemons.splice(0)) await stopDaemon(d);
    for (const b of boxes.splice(0)) await b.cleanup();
  });
  return {
    async sandbox(...args) {
      const b = await sandbox(...args);
      boxes.push(b);
      return b;
    },
    async daemon(sb, extra = [], options = {}) {
      const d = await startDaemon(sb, extra, options);
      daemons.push(d);
      return d;
    },
    defer(f) {
      deferred.push(f);
    },
  };
}

/** Resolves once `file` exists and has a line (a tool's signal that it ran). */
export async function fileLine(file: string): Promise<void> {
  while (!existsSync(file) || readFileSync(file, "utf8").trim() === "")
    await new Promise((r) => setTimeout(r, 20));
}

export interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** One HTTP call (as the holder of `token`, when given: `Authorization: Bearer <token>`). */
export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

export { readSse, type SseEvent } from "./sse-support.ts";
