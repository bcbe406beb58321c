// restate-server for tests and local clusters: a static binary from npm, on loopback ports, in a temp dir.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

/**
 * The restate-server binary: `LASH_RESTATE_SERVER`, else the platform package of
 * `@restatedev/restate-server` (npm). `undefined` when neither is there.
 */
export function restateServerBinary(): string | undefined {
  const fromEnv = process.env.LASH_RESTATE_SERVER;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  try {
    const require = createRequire(import.meta.url);
    const wrapper = require.resolve("@restatedev/restate-server/package.json");
    const platform = createRequire(wrapper).resolve(
      `@restatedev/restate-server-${process.platform}-${process.arch}/package.json`,
    );
    const bin = join(dirname(platform), "bin", "restate-server");
    return existsSync(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RestateServerOptions {
  /** Where the server keeps its data (a fresh temp dir for tests). */
  readonly dir: string;
  readonly binary?: string;
  /** Retries of a failed invocation attempt: fast for tests (default), Restate's own for a cluster. */
  readonly fastRetries?: boolean;
}

export interface RestateServer {
  readonly ingressUrl: string;
  readonly adminUrl: string;
  readonly child: ChildProcess;
  /** SIGTERM, then SIGKILL of the server's process group; resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts restate-server bound to 127.0.0.1 only (ingress, admin, node fabric; TCP, no unix
 * sockets), telemetry off. It still tries an outbound version check at start that no setting
 * turns off: run it inside a private network namespace (`unshare -n`) where nothing may leave
 * the machine. Resolves once the ingress and the admin API answer their health checks.
 */
export async function startRestateServer(options: RestateServerOptions): Promise<RestateServer> {
  const binary = options.binary ?? restateServerBinary();
  if (!binary)
    throw new Error(
      "restate-server was not found: install @restatedev/restate-server (npm; Business Source License) " +
        "or set LASH_RESTATE_SERVER to the binary's path.",
    );
  const [node, admin, ingress] = [await freePort(), await freePort(), await freePort()];
  mkdirSync(options.dir, { recursive: true });
  const retry = options.fastRetries !== false;
  const config = [
    'cluster-name = "lash"',
    'node-name = "lash-node"',
    `base-dir = ${JSON.stringify(join(options.dir, "data"))}`,
    'listen-mode = "tcp"',
    `bind-address = "127.0.0.1:${node}"`,
    `advertised-address = "http://127.0.0.1:${node}/"`,
    "default-num-partitions = 2",
    'rocksdb-total-memory-size = "128MiB"',
    "disable-telemetry = true",
    'log-format = "compact"',
    'shutdown-timeout = "2s"',
    "log-disable-ansi-codes = true",
    ...(retry
      ? [
          "",
          "[default-retry-policy]",
          'initial-interval = "50ms"',
          "exponentiation-factor = 1.5",
          "max-attempts = 1000",
          'on-max-attempts = "kill"',
          'max-interval = "250ms"',
        ]
      : []),
    "",
    "[admin]",
    `bind-address = "127.0.0.1:${admin}"`,
    "disable-web-ui = true",
    "",
    "[admin.query-engine]",
    'memory-size = "64MiB"',
    "",
    "[ingress]",
    `bind-address = "127.0.0.1:${ingress}"`,
    "",
  ].join("\n");
  const file = join(options.dir, "restate.toml");
  writeFileSync(file, config);
  // detached: its own session and process group (setsid), stopped as a group
  // its log goes to <dir>/restate.log
  const logFile = join(options.dir, "restate.log");
  const log = openSync(logFile, "a");
  const child = spawn(binary, ["--no-logo", "-c", file], {
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...process.env, DO_NOT_TRACK: "1" },
  });
  closeSync(log);
  const tail = () => readFileSync(logFile, "utf8").slice(-4000);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ingressUrl = `http://127.0.0.1:${ingress}`;
  const adminUrl = `http://127.0.0.1:${admin}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {}
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, 5000);
    await exited;
    clearTimeout(timer);
  };
  // readiness: poll both health endpoints (the server offers no other signal)
  for (let i = 0; ; i++) {
    if (child.exitCode !== null)
      throw new Error(`restate-server exited at start (${child.exitCode}): ${tail()}`);
    const ok = await Promise.all([
      fetch(`${ingressUrl}/restate/health`).then(
        (r) => r.ok,
        () => false,
      ),
      fetch(`${adminUrl}/health`).then(
        (r) => r.ok,
        () => false,
      ),
    ]);
    if (ok[0] && ok[1]) break;
    if (i > 600) {
      await stop();
      throw new Error(`restate-server did not become healthy within 30 s: ${tail()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ingressUrl, adminUrl, child, stop };
}
