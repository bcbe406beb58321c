// `startServer`: the daemon's HTTP server. The HttpApi (LashApi) with every group and
// service behind a Node `http.Server` that also routes `/v1/agents/<name>/mcp` to the MCP
// handler and serves `/v1/openapi.json`.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform";
import { NodeHttpServer } from "@effect/platform-node";
import { Cause, Effect, Layer, ManagedRuntime, Option } from "effect";
import { AccessLive } from "./access.ts";
import { LashApi } from "./api.ts";
import { ApprovalsLive } from "./approvals.ts";
import { AuthorizationLive } from "./auth.ts";
import { DaemonOwnerLive } from "./daemons.ts";
import { StateDbLive } from "./db.ts";
import { type EventLogImpl, EventLogLive } from "./events.ts";
import { AgentsGroupLive } from "./groups/agents.ts";
import { ApprovalsGroupLive } from "./groups/approvals.ts";
import { HealthGroupLive, type Readiness } from "./groups/health.ts";
import { LoopsGroupLive } from "./groups/loops.ts";
import { MetricsGroupLive } from "./groups/metrics.ts";
import { RunsGroupLive } from "./groups/runs.ts";
import { SessionsGroupLive } from "./groups/sessions.ts";
import { ViewsGroupLive } from "./groups/views.ts";
import { type McpHandler, mcpHandler } from "./mcp.ts";
import { MetricsLive } from "./metrics.ts";
import type { RunManagerImpl } from "./runs.ts";
import { RunManagerLive } from "./runs.ts";
import { type SchedulerImpl, SchedulerLive } from "./scheduler.ts";
import {
  Approvals,
  EventLog,
  Host,
  RunManager,
  Scheduler,
  type ServeHost,
  type ServeSettings,
  Settings,
} from "./services.ts";

export interface RunningServer {
  /** `http://<host>:<port>` */
  readonly url: string;
  readonly port: number;
  /**
   * SIGTERM: refuse new turns (503 `draining`), let in-flight runs finish for up to
   * `timeoutMs`, flush the event log. What still runs stays resumable by the next daemon.
   * True when no run is left executing (the host may be closed then; closing it with runs
   * in flight would interrupt them, which commits them as cancelled).
   */
  readonly drain: (timeoutMs: number) => Promise<boolean>;
  /** Stop listening and release the daemon's services (not the host). */
  readonly close: () => Promise<void>;
}

/** Settings with the defaults of `lash serve`. */
export function serveSettings(partial: Partial<ServeSettings> & { readonly stateDb: string }): ServeSettings {
  return {
    host: "127.0.0.1",
    port: 7777,
    maxConcurrentRuns: 8,
    maxQueuedRuns: 1000,
    maxBodyBytes: 1024 * 1024,
    sseBufferEvents: 10_000,
    drainTimeoutMs: 10_000,
    auth: "tokens",
    ...partial,
  };
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

const MCP_PATH = /^\/v1\/agents\/([^/]+)\/mcp\/?$/;
/** `POST /v1/loops/<name>/trigger` may come without a body: it is the empty payload `{}`. */
const LOOP_TRIGGER_PATH = /^\/v1\/loops\/[^/]+\/trigger\/?$/;

export async function startServer(
  host: ServeHost,
  settings: ServeSettings,
  extras: {
    readonly mcp?: McpHandler;
    /**
     * A raw route tried before the API (the web console at `/` and `/console/…`): returns
     * false for a request it does not take.
     */
    readonly web?: (req: IncomingMessage, res: ServerResponse) => boolean;
  } = {},
): Promise<RunningServer> {
  const readiness: Readiness = { ready: false, resumed: 0 };
  const base = Layer.mergeAll(
    Layer.succeed(Host, host),
    Layer.succeed(Settings, settings),
    StateDbLive(settings.stateDb),
  );
  const l1 = Layer.provideMerge(Layer.mergeAll(EventLogLive, MetricsLive, AccessLive, DaemonOwnerLive), base);
  const l2 = Layer.provideMerge(RunManagerLive, l1);
  const services = Layer.provideMerge(Layer.mergeAll(ApprovalsLive, AuthorizationLive, SchedulerLive), l2);
  const groups = Layer.mergeAll(
    HealthGroupLive(readiness),
    SessionsGroupLive,
    RunsGroupLive,
    ApprovalsGroupLive,
    AgentsGroupLive,
    MetricsGroupLive,
    ViewsGroupLive,
    LoopsGroupLive,
  );
  const api = HttpApiBuilder.api(LashApi).pipe(Layer.provide(groups));
  const layer = Layer.mergeAll(
    api,
    HttpApiBuilder.Router.Live,
    HttpApiBuilder.Middleware.layer,
    NodeHttpServer.layerContext,
  ).pipe(Layer.provideMerge(services));
  const runtime = ManagedRuntime.make(layer);
  const { handler, runs, log, approvals, mcpEndpoint, scheduler } = await runtime.runPromise(
    Effect.gen(function* () {
      const notFound = HttpServerResponse.unsafeJson(
        {
          _tag: "NotFound",
          code: "route_not_found",
          message: "no such route; see GET /v1/openapi.json for the API",
        },
        { status: 404 },
      );
      const app = (yield* HttpApiBuilder.httpApp).pipe(
        // the router's own 404 has no body: say what is wrong
        Effect.catchAllCause((cause) =>
          Option.getOrUndefined(Cause.failureOption(cause as Cause.Cause<{ _tag?: string }>))?._tag ===
          "RouteNotFound"
            ? Effect.succeed(notFound)
            : Effect.failCause(cause),
        ),
        Effect.map((res) => (res.status === 404 && res.body._tag === "Empty" ? notFound : res)),
      );
      const handler = yield* NodeHttpServer.makeHandler(app);
      return {
        handler,
        runs: (yield* RunManager) as RunManagerImpl,
        log: (yield* EventLog) as EventLogImpl,
        approvals: yield* Approvals,
        scheduler: (yield* Scheduler) as SchedulerImpl,
        // `/v1/agents/<name>/mcp` (mcp.ts), unless the caller brings its own
        mcpEndpoint: extras.mcp ?? (yield* mcpHandler),
      };
    }),
  );
  host.setApprover(approvals.approver);
  const openapi = JSON.stringify(OpenApi.fromApi(LashApi));

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    const mcp = MCP_PATH.exec(path);
    if (mcp) {
      mcpEndpoint(req, res, decodeURIComponent(mcp[1]!)).catch((e: unknown) => {
        if (!res.headersSent)
          json(res, 500, {
            _tag: "InternalError",
            code: "mcp_failed",
            message: String((e as Error)?.message ?? e),
          });
        else res.end();
      });
      return;
    }
    if (extras.web?.(req, res)) return;
    if (path === "/v1/openapi.json" && req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(openapi);
      return;
    }
    if (
      req.method === "POST" &&
      LOOP_TRIGGER_PATH.test(path) &&
      (req.headers["content-length"] === "0" ||
        (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined))
    ) {
      req.resume();
      const replay = Object.assign(Readable.from([Buffer.from("{}")]), {
        url: req.url,
        method: req.method,
        headers: { ...req.headers, "content-length": "2", "content-type": "application/json" },
        socket: req.socket,
      });
      handler(replay as unknown as IncomingMessage, res);
      return;
    }
    const tooLarge = () =>
      json(res, 413, {
        _tag: "PayloadTooLarge",
        code: "payload_too_large",
        message: `the request body is larger than ${settings.maxBodyBytes} bytes; send a smaller one`,
      });
    const length = Number(req.headers["content-length"] ?? "0");
    if (length > settings.maxBodyBytes) {
      req.resume();
      res.setHeader("connection", "close");
      tooLarge();
      return;
    }
    // a body without a Content-Length (chunked): read it here, bounded, then hand it on
    if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] !== undefined) {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on("data", (chunk: Buffer) => {
        if (over) return;
        size += chunk.length;
        if (size > settings.maxBodyBytes) {
          over = true;
          chunks.length = 0;
          res.setHeader("connection", "close");
          tooLarge();
          return;
        }
        chunks.push(chunk);
      });
      req.on("end", () => {
        if (over) return;
        const body = Buffer.concat(chunks);
        const replay = Object.assign(Readable.from([body]), {
          url: req.url,
          method: req.method,
          headers: { ...req.headers, "content-length": String(body.length) },
          socket: req.socket,
        });
        delete replay.headers["transfer-encoding"];
        handler(replay as unknown as IncomingMessage, res);
      });
      return;
    }
    handler(req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostName = settings.host.includes(":") ? `[${settings.host}]` : settings.host;

  // resume what the previous daemon left running, then say ready
  readiness.resumed = runs.recover();
  // loops fire only now: their runs must not be taken for ones to recover
  scheduler.start();
  readiness.ready = true;

  let closed = false;
  return {
    url: `http://${hostName}:${port}`,
    port,
    drain: async (timeoutMs) => {
      const idle = await runs.drain(timeoutMs);
      log.flush();
      return idle;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await mcpEndpoint.close().catch(() => undefined);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      log.flush();
      await runtime.dispose();
    },
  };
}
