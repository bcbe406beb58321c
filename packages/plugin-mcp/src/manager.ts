import { scrubEnv, type ToolDefinition, type ToolEffectKind, ToolFailure, type ToolOutput } from "@lash/core";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  FiberId,
  FiberSet,
  Layer,
  PubSub,
  Scope,
  Stream,
} from "effect";
import { decodeMcpConfig, expandServerEnv, type McpConfig, type McpServerConfig } from "./config.ts";
import {
  type Connection,
  connect,
  listAllTools,
  type McpSkippedTool,
  type McpToolInfo,
} from "./connection.ts";
import { mapCallResult } from "./content.ts";
import { assignToolNames, lashlangIdent, nameKey } from "./names.ts";
import { normalizeInputSchema } from "./schema.ts";

export type McpServerState = "starting" | "ready" | "failed" | "restarting" | "disabled";

/** What hosts show for one server (`/info`, `lash doctor`). JSON-safe. */
export interface McpServerStatus {
  readonly name: string;
  readonly transport: "stdio" | "http" | "sse";
  readonly state: McpServerState;
  /** Why the server is `failed` or `restarting`. */
  readonly reason?: string;
  /** The most recent error of any kind (kept after recovery). */
  readonly lastError?: string;
  /** Tools the server offers now (last listing). */
  readonly toolCount: number;
  /** Listed tools left out because their definition breaks the MCP schema, each with why
   * (e.g. `inputSchema must have type "object"`); the server's other tools are usable. */
  readonly skippedTools?: readonly McpSkippedTool[];
  /** Process id of a running stdio server. */
  readonly pid?: number;
  /** `serverInfo` from `initialize`. */
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /** Connection attempts so far (the first start included). */
  readonly attempts: number;
  /** Times the server was restarted after it had been ready. */
  readonly restarts: number;
  /** When the next automatic attempt is due (epoch ms), while `failed` or `restarting`. */
  readonly nextAttemptAt?: number;
  /** When the state last changed (epoch ms). */
  readonly since: number;
}

export interface McpManagerOptions {
  /** How long `tools()` (run before every model call) waits for servers still starting. Default 3000 ms. */
  readonly startupWaitMs?: number;
  /** Budget for spawn/connect + `initialize` + the first `tools/list`. Default 30 s. */
  readonly startupTimeoutMs?: number;
  /** Per-call timeout when the server config sets no `timeoutMs`. Default 60 s. */
  readonly callTimeoutMs?: number;
  /**
   * Largest `tools/call` result accepted (its JSON size); a larger one is a tool error saying so,
   * and the server stays connected. Default 8 MiB. Messages over 4× this (at least 64 MiB) cannot
   * be read at all: the stdio connection is closed, with a reason that says why.
   */
  readonly maxResultBytes?: number;
  /** Largest message read from a stdio server (default: 4 × `maxResultBytes`, at least 64 MiB). */
  readonly maxMessageBytes?: number;
  /** Restart backoff: `baseMs · 2^(n-1)` capped at `maxMs`; after `maxAttempts` consecutive failed
   * attempts the server stays `failed` until a call or `restart()` asks again. */
  readonly backoff?: { readonly baseMs?: number; readonly maxMs?: number; readonly maxAttempts?: number };
  /**
   * The host's environment: used for `${VAR}` expansion in the config and, scrubbed of
   * credentials (`scrubEnv`), as the base environment of stdio servers, to which each
   * server's own `env` is added. Default `process.env`.
   */
  readonly env?: { readonly [key: string]: string | undefined };
  /** Variables the host holds as credentials (its provider keys), never passed to a server unless its `env` names them. */
  readonly secretEnvNames?: readonly string[];
  /** stdio servers' stderr: kept (last lines show in failure reasons) by default. */
  readonly stderr?: "pipe" | "inherit" | "ignore";
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

export interface McpToolsOptions {
  /** Override `startupWaitMs` for this call. */
  readonly waitMs?: number;
  /** Tool names already used by other plugins (collisions get suffixes). */
  readonly reserved?: Iterable<string>;
}

export interface McpSettleOptions {
  readonly servers?: readonly string[];
  readonly timeoutMs?: number;
}

export interface McpCallOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export interface McpManagerShape {
  /** The configured servers (normalized). */
  readonly servers: readonly McpServerConfig[];
  /** Status of every configured server, in config order. */
  status(): readonly McpServerStatus[];
  /** Every server's current status, then every change (one server's new status) as it happens. */
  readonly changes: Stream.Stream<McpServerStatus>;
  /** Callback form of `changes`; returns the unsubscribe function. */
  subscribe(listener: (status: McpServerStatus) => void): () => void;
  /** Waits until no server (of `servers`, default all) is `starting` or `restarting`, or `timeoutMs`
   * passes (default: the startup timeout + 1 s); returns every status. */
  awaitSettled(options?: McpSettleOptions): Effect.Effect<readonly McpServerStatus[]>;
  /** The lash tools of every ready server (waits up to `startupWaitMs` for servers still starting, and
   * re-lists servers that sent `notifications/tools/list_changed`). */
  tools(options?: McpToolsOptions): Effect.Effect<readonly ToolDefinition[]>;
  /** The tools a server listed (raw MCP shapes), `[]` when it is not ready. */
  serverTools(server: string): readonly McpToolInfo[];
  /** Call a tool. Failures are `ToolFailure`s naming the server; an `isError` result is an output. */
  callTool(
    server: string,
    tool: string,
    args: unknown,
    options?: McpCallOptions,
  ): Effect.Effect<ToolOutput, ToolFailure>;
  /** Restart a server now (also wakes one that gave up). */
  restart(server: string): Effect.Effect<void>;
}

export class McpManager extends Context.Tag("@lash/plugin-mcp/McpManager")<McpManager, McpManagerShape>() {
  /** Start every enabled server in the background; they are stopped when the scope closes. */
  static make(
    config: McpConfig,
    options: McpManagerOptions = {},
  ): Effect.Effect<McpManagerShape, never, Scope.Scope> {
    return makeManager(config, options);
  }
  static layer(config: McpConfig, options: McpManagerOptions = {}): Layer.Layer<McpManager> {
    return Layer.scoped(McpManager, makeManager(config, options));
  }
}

interface ServerSlot {
  readonly config: McpServerConfig;
  status: McpServerStatus;
  conn: Connection | undefined;
  tools: readonly McpToolInfo[];
  /** Bumped by `list_changed`; the listing is current when `listedGen === listGen`. */
  listGen: number;
  listedGen: number;
  /** Attempts that have finished (success or failure). */
  concluded: number;
  /** Completed to cut a backoff wait short. */
  wake: Deferred.Deferred<void>;
  /** One re-list at a time per server. */
  readonly refreshLock: Effect.Semaphore;
  /** `tools()` stopped waiting for this server's first start. */
  gaveUpWaiting: boolean;
  /** A call asked for the server; a pause that starts before the request is served is skipped. */
  wakeRequested: boolean;
}

const MIB = 1024 * 1024;
const DEFAULT_MAX_RESULT_BYTES = 8 * MIB;
const megabytes = (bytes: number): string => `${(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MB`;

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e));

const RESTART_REQUESTED = "restart requested";

/** `DELETE` the streamable-HTTP session (spec: a client that no longer needs it SHOULD); at most
 * 2 s, failures ignored (a server that does not allow it answers 405). */
const terminateSession = (conn: Connection): Effect.Effect<void> =>
  conn.transport instanceof StreamableHTTPClientTransport && conn.transport.sessionId !== undefined
    ? Effect.tryPromise(() => (conn.transport as StreamableHTTPClientTransport).terminateSession()).pipe(
        Effect.timeout(Duration.seconds(2)),
        Effect.ignore,
      )
    : Effect.void;

/** A streamable-HTTP request answered 404 while it carried a session id: the session is gone and
 * the request was not processed (MCP spec, session management). */
const sessionGone = (error: unknown, conn: Connection): boolean =>
  error instanceof StreamableHTTPError &&
  error.code === 404 &&
  conn.transport instanceof StreamableHTTPClientTransport &&
  conn.transport.sessionId !== undefined;

const makeManager = (config: McpConfig, options: McpManagerOptions) =>
  Effect.gen(function* () {
    const startupWaitMs = options.startupWaitMs ?? 3000;
    const startupTimeoutMs = options.startupTimeoutMs ?? 30_000;
    const callTimeoutMs = options.callTimeoutMs ?? 60_000;
    const maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    const maxMessageBytes = options.maxMessageBytes ?? Math.max(4 * maxResultBytes, 64 * MIB);
    const baseMs = options.backoff?.baseMs ?? 500;
    const maxMs = options.backoff?.maxMs ?? 30_000;
    const maxAttempts = options.backoff?.maxAttempts ?? 6;
    const env = options.env ?? process.env;
    const serverEnv = scrubEnv(env, { secretNames: options.secretEnvNames ?? [] }).env;
    const clientInfo = options.clientInfo ?? { name: "lash", version: "0.1.0" };
    const stderr = options.stderr ?? "pipe";

    const pubsub = yield* PubSub.unbounded<McpServerStatus>();
    const listeners = new Set<(s: McpServerStatus) => void>();
    const run = yield* FiberSet.makeRuntime<never, void, never>();
    const now0 = yield* Clock.currentTimeMillis;

    const slots = new Map<string, ServerSlot>();
    for (const server of config.servers) {
      slots.set(server.name, {
        config: server,
        status: {
          name: server.name,
          transport: server.type,
          state: server.enabled ? "starting" : "disabled",
          toolCount: 0,
          attempts: 0,
          restarts: 0,
          since: now0,
        },
        conn: undefined,
        tools: [],
        listGen: 0,
        listedGen: 0,
        concluded: 0,
        wake: Deferred.unsafeMake<void>(FiberId.none),
        refreshLock: Effect.unsafeMakeSemaphore(1),
        gaveUpWaiting: false,
        wakeRequested: false,
      });
    }

    const publish = (status: McpServerStatus) =>
      Effect.zipRight(
        PubSub.publish(pubsub, status),
        Effect.sync(() => {
          for (const l of listeners) {
            try {
              l(status);
            } catch {
              // a host listener never breaks supervision
            }
          }
        }),
      );

    const update = (
      slot: ServerSlot,
      patch: Partial<McpServerStatus>,
      clear: readonly (keyof McpServerStatus)[] = [],
    ) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis;
        const next: { -readonly [K in keyof McpServerStatus]?: McpServerStatus[K] } = { ...slot.status };
        for (const k of clear) delete next[k];
        Object.assign(next, patch);
        if (patch.state !== undefined && patch.state !== slot.status.state) next.since = now;
        slot.status = next as McpServerStatus;
        yield* publish(slot.status);
      });

    /** Wait (on status changes, not by polling) until `done(slot)` holds or `timeoutMs` passes. */
    const waitUntil = (done: () => boolean, timeoutMs: number): Effect.Effect<boolean> =>
      Effect.async<boolean>((resume) => {
        if (done()) {
          resume(Effect.succeed(true));
          return;
        }
        const listener = () => {
          if (done()) {
            listeners.delete(listener);
            resume(Effect.succeed(true));
          }
        };
        listeners.add(listener);
        return Effect.sync(() => listeners.delete(listener));
      }).pipe(
        Effect.timeoutTo({
          duration: Duration.millis(timeoutMs),
          onTimeout: () => false,
          onSuccess: (b) => b,
        }),
      );

    const onToolsChanged = (slot: ServerSlot) => () => {
      slot.listGen++;
      run(Effect.ignore(refresh(slot)));
    };

    /** Re-list a ready server whose list changed. */
    const refresh = (slot: ServerSlot): Effect.Effect<void> =>
      slot.refreshLock.withPermits(1)(
        Effect.gen(function* () {
          const conn = slot.conn;
          if (!conn || slot.listedGen === slot.listGen) return;
          const gen = slot.listGen;
          const timeoutMs = slot.config.timeoutMs ?? callTimeoutMs;
          const skipped: McpSkippedTool[] = [];
          const listed = yield* Effect.either(
            Effect.tryPromise((signal) =>
              listAllTools(conn.client, { signal, timeoutMs, onSkipped: (t) => skipped.push(t) }),
            ),
          );
          if (Either.isLeft(listed)) {
            yield* update(slot, {
              lastError: `tools/list after list_changed failed: ${describe(listed.left.error)}`,
            });
            return;
          }
          if (slot.conn !== conn) return;
          slot.tools = listed.right;
          slot.listedGen = gen;
          yield* update(
            slot,
            { toolCount: listed.right.length, ...(skipped.length > 0 ? { skippedTools: skipped } : {}) },
            skipped.length > 0 ? [] : ["skippedTools"],
          );
        }),
      );

    const backoffMs = (failures: number) => Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));

    /** Sleep for the backoff, or until a call / `restart()` wakes the server. */
    const pause = (slot: ServerSlot, ms: number | undefined) =>
      Effect.gen(function* () {
        slot.wake = yield* Deferred.make<void>();
        if (slot.wakeRequested) {
          slot.wakeRequested = false;
          return;
        }
        const wait = Deferred.await(slot.wake);
        yield* ms === undefined ? wait : Effect.race(Effect.sleep(Duration.millis(ms)), wait);
        slot.wakeRequested = false; // a request made during this wait was served by it
      });

    const supervise = (slot: ServerSlot) =>
      Effect.gen(function* () {
        let failures = 0;
        let everReady = false;
        while (true) {
          const attempts = slot.status.attempts + 1;
          yield* update(slot, { state: everReady || attempts > 1 ? "restarting" : "starting", attempts }, [
            "nextAttemptAt",
            "pid",
          ]);
          const expanded = expandServerEnv(slot.config, env);
          const startupMs = slot.config.startupTimeoutMs ?? startupTimeoutMs;
          const result = Either.isLeft(expanded)
            ? Either.left(expanded.left)
            : yield* connect(expanded.right, {
                clientInfo,
                onToolsChanged: onToolsChanged(slot),
                requestTimeoutMs: startupMs,
                maxMessageBytes,
                stderr,
                env: serverEnv,
              }).pipe(
                Effect.timeoutFail({
                  duration: Duration.millis(startupMs),
                  onTimeout: () => new Error(`no answer to initialize within ${startupMs} ms`),
                }),
                Effect.mapError(describe),
                Effect.either,
              );
          slot.concluded++;
          if (Either.isLeft(result)) {
            failures++;
            const reason = result.left;
            const giveUp = failures >= maxAttempts;
            const delay = giveUp ? undefined : backoffMs(failures);
            const now = yield* Clock.currentTimeMillis;
            yield* update(
              slot,
              {
                state: "failed",
                reason: giveUp
                  ? `${reason} (gave up after ${failures} attempts; a call or restart() tries again)`
                  : reason,
                lastError: reason,
                ...(delay === undefined ? {} : { nextAttemptAt: now + delay }),
              },
              ["nextAttemptAt", "pid"],
            );
            yield* pause(slot, delay);
            if (giveUp) failures = 0;
            continue;
          }
          const { connection, tools, skipped } = result.right;
          failures = 0;
          if (everReady) yield* update(slot, { restarts: slot.status.restarts + 1 });
          everReady = true;
          slot.tools = tools;
          slot.listedGen = slot.listGen;
          slot.conn = connection;
          yield* update(
            slot,
            {
              state: "ready",
              toolCount: tools.length,
              ...(skipped.length > 0 ? { skippedTools: skipped } : {}),
              ...(connection.pid === undefined ? {} : { pid: connection.pid }),
              ...(connection.serverInfo ? { serverInfo: connection.serverInfo } : {}),
            },
            skipped.length > 0 ? ["reason", "nextAttemptAt"] : ["reason", "nextAttemptAt", "skippedTools"],
          );
          const why = yield* Deferred.await(connection.closed).pipe(
            Effect.ensuring(
              Effect.gen(function* () {
                if (slot.conn === connection) slot.conn = undefined;
                // closed by us (the manager's scope ends: not completed; or a restart was asked):
                // end the streamable-HTTP session on the server too (DELETE), bounded
                const reason = yield* Deferred.poll(connection.closed);
                const ours =
                  reason._tag === "None" ||
                  (yield* reason.value.pipe(Effect.map((r) => r === RESTART_REQUESTED)));
                if (ours) yield* terminateSession(connection);
                yield* Effect.promise(() => connection.client.close().catch(() => undefined));
              }),
            ),
          );
          failures = 1;
          const delay = backoffMs(failures);
          const now = yield* Clock.currentTimeMillis;
          yield* update(
            slot,
            { state: "restarting", reason: why, lastError: why, nextAttemptAt: now + delay },
            ["pid"],
          );
          yield* pause(slot, delay);
        }
      });

    for (const slot of slots.values()) if (slot.config.enabled) yield* Effect.forkScoped(supervise(slot));

    const status = () => [...slots.values()].map((s) => s.status);

    const awaitSettled: McpManagerShape["awaitSettled"] = (o = {}) => {
      const watched = [...slots.values()].filter((s) => !o.servers || o.servers.includes(s.config.name));
      return waitUntil(
        () => watched.every((s) => s.status.state !== "starting" && s.status.state !== "restarting"),
        o.timeoutMs ?? startupTimeoutMs + 1000,
      ).pipe(Effect.map(() => status()));
    };

    const unavailable = (message: string, cls: ToolFailure["class"] = "unavailable") =>
      new ToolFailure({ class: cls, message, retry: "never" });

    /** The live connection, waking / waiting for a restart when there is none. */
    const readyConnection = (slot: ServerSlot, timeoutMs: number): Effect.Effect<Connection, ToolFailure> =>
      Effect.gen(function* () {
        if (slot.conn) return slot.conn;
        const name = slot.config.name;
        if (slot.status.state === "disabled")
          return yield* unavailable(`MCP server "${name}" is disabled in the config ("enabled": false).`);
        const concluded = slot.concluded;
        // cut the supervisor's current wait short; when it is not waiting yet (it is still noticing the
        // closed connection, or connecting), its next pause is skipped instead
        slot.wakeRequested = true;
        yield* Deferred.succeed(slot.wake, undefined);
        yield* waitUntil(
          () =>
            slot.conn !== undefined ||
            slot.status.state === "disabled" ||
            (slot.status.state === "failed" && slot.concluded > concluded),
          timeoutMs,
        );
        if (slot.conn) return slot.conn;
        const s = slot.status;
        return yield* unavailable(
          `MCP server "${name}" is not available (${s.state}${s.reason ? `: ${s.reason}` : ""}).`,
        );
      });

    const callTool: McpManagerShape["callTool"] = (server, tool, args, o = {}) =>
      Effect.gen(function* () {
        const slot = slots.get(server);
        if (!slot)
          return yield* unavailable(
            `no MCP server named "${server}" (configured: ${[...slots.keys()].join(", ") || "none"})`,
            "invalidRequest",
          );
        const timeoutMs = o.timeoutMs ?? slot.config.timeoutMs ?? callTimeoutMs;
        const start = yield* Clock.currentTimeMillis;
        const argsObj =
          typeof args === "object" && args !== null && !Array.isArray(args)
            ? (args as Record<string, unknown>)
            : {};
        const attempt = (conn: Connection) =>
          Effect.gen(function* () {
            const left = Math.max(1, timeoutMs - ((yield* Clock.currentTimeMillis) - start));
            return yield* Effect.either(
              Effect.tryPromise({
                try: (signal) =>
                  conn.client.callTool({ name: tool, arguments: argsObj }, undefined, {
                    signal: o.signal ? AbortSignal.any([signal, o.signal]) : signal,
                    timeout: left,
                  }),
                catch: (e) => e,
              }).pipe(
                Effect.timeoutFail({
                  duration: Duration.millis(left),
                  onTimeout: () => new McpError(-32001, "timed out"),
                }),
              ),
            );
          });
        let conn = yield* readyConnection(slot, timeoutMs);
        let outcome = yield* attempt(conn);
        if (Either.isLeft(outcome) && sessionGone(outcome.left, conn) && !o.signal?.aborted) {
          // Streamable HTTP: 404 to a request carrying our session id means the server does not know
          // the session (it restarted) and never processed the request (spec). Start a new session
          // and send the call again, once.
          const why = `the server no longer knows the session (HTTP 404; it may have restarted)`;
          yield* Deferred.succeed(conn.closed, why);
          if (slot.conn === conn) {
            slot.conn = undefined;
            yield* update(slot, { state: "restarting", reason: why, lastError: why }, ["pid"]);
          }
          const left = Math.max(1, timeoutMs - ((yield* Clock.currentTimeMillis) - start));
          conn = yield* readyConnection(slot, left);
          outcome = yield* attempt(conn);
        }
        if (Either.isRight(outcome)) {
          const size = Buffer.byteLength(JSON.stringify(outcome.right) ?? "");
          if (size > maxResultBytes)
            return yield* unavailable(
              `the result of "${tool}" from MCP server "${server}" is ${megabytes(size)}, over the ${megabytes(maxResultBytes)} limit for MCP results; ask the tool for less (a narrower query, a page, a file path instead of the contents).`,
              "execution",
            );
          return mapCallResult(server, tool, outcome.right);
        }
        const error = outcome.left;
        if (o.signal?.aborted)
          return yield* unavailable(
            `the call to "${tool}" on MCP server "${server}" was cancelled.`,
            "cancelled",
          );
        if (error instanceof McpError && error.code === -32001)
          return yield* unavailable(
            `MCP server "${server}" did not answer the call to "${tool}" within ${timeoutMs} ms.`,
            "timeout",
          );
        if (error instanceof McpError && error.code !== -32000)
          return yield* unavailable(
            `MCP server "${server}" rejected the call to "${tool}": ${error.message}`,
            "execution",
          );
        // The transport failed: the connection is gone (stdio exit) or broken (HTTP): reconnect.
        const closedFirst = yield* Deferred.poll(conn.closed);
        const why =
          closedFirst._tag === "Some"
            ? yield* closedFirst.value
            : `transport error: ${describe(error)}${conn.stderrTail() ? ` (stderr: ${conn.stderrTail()})` : ""}`;
        yield* Deferred.succeed(conn.closed, why);
        if (slot.conn === conn) {
          slot.conn = undefined;
          yield* update(slot, { state: "restarting", reason: why, lastError: why }, ["pid"]);
        } else yield* update(slot, { lastError: why });
        return yield* unavailable(
          `MCP server "${server}" failed during the call to "${tool}": ${why}. It is being restarted; the call may or may not have taken effect.`,
        );
      });

    const serverTools = (server: string) => {
      const slot = slots.get(server);
      return slot?.conn ? slot.tools : [];
    };

    const tools: McpManagerShape["tools"] = (o = {}) =>
      Effect.gen(function* () {
        const waitFor = [...slots.values()].filter((s) => s.status.state === "starting" && !s.gaveUpWaiting);
        if (waitFor.length > 0) {
          yield* waitUntil(
            () => waitFor.every((s) => s.status.state !== "starting"),
            o.waitMs ?? startupWaitMs,
          );
          for (const s of waitFor) if (s.status.state === "starting") s.gaveUpWaiting = true;
        }
        const stale = [...slots.values()].filter((s) => s.conn && s.listedGen !== s.listGen);
        yield* Effect.forEach(
          stale,
          (s) => refresh(s).pipe(Effect.timeout(Duration.millis(o.waitMs ?? startupWaitMs)), Effect.ignore),
          { concurrency: "unbounded", discard: true },
        );
        // Ready servers, and servers restarting after a crash (their last tools stay, so the tool list
        // does not flap; a call waits for the restart).
        const live = [...slots.values()].filter(
          (s) => s.conn !== undefined || (s.status.state === "restarting" && s.tools.length > 0),
        );
        const pairs = live.flatMap((s) => s.tools.map((t) => ({ slot: s, tool: t })));
        const names = assignToolNames(
          pairs.map((p) => ({ server: p.slot.config.name, tool: p.tool.name })),
          o.reserved,
        );
        const ops = new Map<string, Set<string>>();
        return pairs.map(({ slot, tool }) => {
          const server = slot.config.name;
          const name = names.get(nameKey(server, tool.name)) ?? tool.name;
          const used = ops.get(server) ?? new Set<string>();
          ops.set(server, used);
          let op = lashlangIdent(tool.name);
          for (let n = 2; used.has(op); n++) op = `${lashlangIdent(tool.name)}_${n}`;
          used.add(op);
          return toolDefinition(
            server,
            tool,
            name,
            op,
            slot.config.timeoutMs ?? callTimeoutMs,
            slot.config.trusted === true,
          );
        });
      });

    const toolDefinition = (
      server: string,
      tool: McpToolInfo,
      name: string,
      operation: string,
      timeoutMs: number,
      trusted: boolean,
    ): ToolDefinition => {
      const a = tool.annotations ?? {};
      const effects = mcpToolEffects(a, trusted);
      // an untrusted server's claims are not believed: its tools are writes, never read-only
      const readOnly = !effects.includes("write");
      const idempotent = readOnly || a.idempotentHint === true;
      const description =
        tool.description?.trim() ||
        tool.title?.trim() ||
        a.title?.trim() ||
        `Tool "${tool.name}" of the MCP server "${server}".`;
      return {
        name,
        description,
        inputSchema: normalizeInputSchema(tool.inputSchema),
        readOnly,
        idempotent,
        effects,
        // the manager's own timeout answers first, with a message naming the server
        timeoutMs: timeoutMs + 5000,
        binding: { module: `mcp.${lashlangIdent(server)}`, operation },
        family: "mcp",
        execute: (args, ctx) => callTool(server, tool.name, args, { signal: ctx.signal, timeoutMs }),
      };
    };

    const restart: McpManagerShape["restart"] = (server) =>
      Effect.gen(function* () {
        const slot = slots.get(server);
        if (!slot?.config.enabled) return;
        const conn = slot.conn;
        if (conn) yield* Deferred.succeed(conn.closed, RESTART_REQUESTED);
        else yield* Deferred.succeed(slot.wake, undefined);
      });

    const shape: McpManagerShape = {
      servers: config.servers,
      status,
      changes: Stream.unwrapScoped(
        Effect.map(PubSub.subscribe(pubsub), (queue) =>
          Stream.concat(Stream.fromIterable(status()), Stream.fromQueue(queue)),
        ),
      ),
      subscribe: (listener) => {
        listeners.add(listener);
        return () => {
          listeners.delete(listener);
        };
      },
      awaitSettled,
      tools,
      serverTools,
      callTool,
      restart,
    };
    return shape;
  });

/** A manager for hosts that do not use Effect. */
export interface McpManagerHandle
  extends Omit<McpManagerShape, "awaitSettled" | "tools" | "callTool" | "restart"> {
  /** The Effect-side manager (for `mcpPlugin`). */
  readonly manager: McpManagerShape;
  awaitSettled(options?: McpSettleOptions): Promise<readonly McpServerStatus[]>;
  tools(options?: McpToolsOptions): Promise<readonly ToolDefinition[]>;
  callTool(server: string, tool: string, args: unknown, options?: McpCallOptions): Promise<ToolOutput>;
  restart(server: string): Promise<void>;
  /** Stop every server (closes stdio processes, HTTP sessions). */
  close(): Promise<void>;
}

/**
 * Promise-friendly constructor: `config` is a parsed `McpConfig`, or the raw file (JSON text or value).
 * Rejects with `McpConfigError` on a bad config. `callTool` rejects with the `ToolFailure`.
 */
export async function createMcpManager(
  config: McpConfig | unknown,
  options: McpManagerOptions = {},
): Promise<McpManagerHandle> {
  const parsed = isMcpConfig(config) ? config : await Effect.runPromise(decodeMcpConfig(config));
  const scope = Effect.runSync(Scope.make());
  const manager = await Effect.runPromise(Scope.extend(makeManager(parsed, options), scope));
  let closing: Promise<void> | undefined;
  return {
    manager,
    servers: manager.servers,
    status: manager.status,
    changes: manager.changes,
    subscribe: manager.subscribe,
    serverTools: manager.serverTools,
    awaitSettled: (o) => Effect.runPromise(manager.awaitSettled(o)),
    tools: (o) => Effect.runPromise(manager.tools(o)),
    callTool: (server, tool, args, o) =>
      Effect.runPromise(Effect.either(manager.callTool(server, tool, args, o))).then((r) => {
        if (Either.isLeft(r)) throw r.left;
        return r.right;
      }),
    restart: (server) => Effect.runPromise(manager.restart(server)),
    close: () => {
      closing ??= Effect.runPromise(Scope.close(scope, Exit.void));
      return closing;
    },
  };
}

function isMcpConfig(v: unknown): v is McpConfig {
  return typeof v === "object" && v !== null && Array.isArray((v as { servers?: unknown }).servers);
}

/**
 * The effects of an MCP tool. Only a server marked `trusted: true` in config is believed:
 * `readOnlyHint: true` → `read`, otherwise `write`; `openWorldHint` (true unless the server
 * says `false`, as the MCP spec defaults it) adds `network`. An untrusted server's tools are
 * all `write`, whatever their annotations say.
 */
export function mcpToolEffects(
  annotations: NonNullable<McpToolInfo["annotations"]>,
  trusted: boolean,
): ToolEffectKind[] {
  if (!trusted) return ["write"];
  const kind: ToolEffectKind = annotations.readOnlyHint === true ? "read" : "write";
  return annotations.openWorldHint === false ? [kind] : [kind, "network"];
}
