// Handlers of `SessionsApi`: sessions (owned by the principal that created them), their
// turns (runs) and their durable event stream.

import { randomBytes } from "node:crypto";
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform";
import { LashRuntime, SessionStore } from "@lash/core";
import { Effect } from "effect";
import { layersState, storedLayers, withLayers } from "../access.ts";
import { Conflict, CurrentPrincipal, LashApi, NotFound } from "../api.ts";
import { clusterSseResponse } from "../cluster-sse.ts";
import type { EventLogImpl } from "../events.ts";
import { Access, EventLog, Host, Metrics, RunManager, Settings } from "../services.ts";
import { SseReader, sseCursor, sseResponse } from "../sse.ts";
import { activePath, compareSessions, exportPage, type Page, toNode, tracePage } from "../views.ts";
import { core, ownerOf, toSession } from "./common.ts";

/** 400 for a cursor that is not a sequence number (the raw SSE routes answer it themselves). */
export const badCursor = (value: string | undefined) =>
  HttpServerResponse.unsafeJson(
    {
      _tag: "BadRequest",
      code: "bad_cursor",
      message: `the event cursor "${value ?? ""}" is not a sequence number; pass Last-Event-ID: <seq> or ?after=<seq> with the id of the last event you received`,
    },
    { status: 400 },
  );

/** The SSE response of a session's (or one run's) events after the request's cursor. */
export const eventsResponse = (
  sessionId: string,
  runId: string | undefined,
  headers: { readonly [k: string]: string | undefined },
  after: number | undefined,
) =>
  Effect.gen(function* () {
    const lastEventId = headers["last-event-id"];
    const cursor = sseCursor(lastEventId, after);
    if (cursor === undefined) return badCursor(lastEventId ?? String(after));
    const metrics = yield* Metrics;
    // on a cluster: the log every daemon shares (`lash serve --engine restate`)
    const { cluster } = yield* Host;
    if (cluster) return clusterSseResponse(cluster, sessionId, cursor, runId, { metrics });
    const log = (yield* EventLog) as EventLogImpl;
    const { sseBufferEvents } = yield* Settings;
    return sseResponse(
      new SseReader(log, sessionId, cursor, runId, { limit: Math.max(1, sseBufferEvents), metrics }),
    );
  });

/** An export or trace page: its content type, shown inline, never cached. */
export const pageResponse = (page: Page) =>
  HttpServerResponse.text(page.body, {
    contentType: page.contentType,
    headers: {
      "content-disposition": `inline; filename="${page.filename}"`,
      "cache-control": "no-store",
      // a view link's ticket is in the URL: never send it on
      "referrer-policy": "no-referrer",
      // the pages are self-contained: inline style and script, nothing fetched
      ...(page.contentType.startsWith("text/html")
        ? {
            "content-security-policy":
              "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:",
          }
        : {}),
    },
  });

export const SessionsGroupLive = HttpApiBuilder.group(LashApi, "sessions", (handlers) =>
  handlers
    .handle("create", ({ payload }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const host = yield* Host;
        const access = yield* Access;
        const owner = { "serve.owner": principal.name };
        let layers = access.principalLayers(principal);
        let record: Parameters<typeof toSession>[0];
        if (payload.agent !== undefined) {
          const name = payload.agent;
          yield* access.checkAgent(principal, name, "execute");
          if (!host.agentSession)
            return yield* new NotFound({
              code: "agent_not_found",
              message: `no built agent ${name}: this daemon serves no build; run \`lash build\` in its workspace and restart lash serve`,
            });
          const spec = yield* Effect.try({
            try: () => host.agentSession!(name),
            catch: (e) =>
              new NotFound({
                code: "agent_not_found",
                message: `no built agent ${name} (${(e as Error).message}); run \`lash build\` and restart lash serve`,
              }),
          });
          layers = [...spec.policyLayers, ...layers];
          record = yield* core(
            Effect.flatMap(LashRuntime, (rt) =>
              rt
                .createSession({
                  ...spec.create,
                  ...(payload.title !== undefined ? { title: payload.title } : {}),
                  state: {
                    ...(spec.create.state ?? {}),
                    ...owner,
                    "serve.agent": name,
                    ...layersState(layers),
                  },
                })
                .pipe(Effect.tap((s) => rt.attachPlugins(s.id, spec.plugins))),
            ),
          );
        } else {
          record = yield* core(
            Effect.flatMap(LashRuntime, (rt) =>
              rt.createSession({
                ...host.sessionDefaults,
                model: payload.model ?? host.defaultModel,
                ...(payload.mode !== undefined ? { mode: payload.mode } : {}),
                ...(payload.title !== undefined ? { title: payload.title } : {}),
                ...(payload.systemPrompt !== undefined ? { systemPrompt: payload.systemPrompt } : {}),
                state: { ...owner, ...layersState(layers) },
              }),
            ),
          );
        }
        if (layers.length > 0) host.setSessionLayers?.(record.id, layers);
        ((yield* RunManager) as { attached?: Set<string> }).attached?.add(record.id);
        return yield* toSession(record);
      }),
    )
    .handle("list", ({ urlParams }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const access = yield* Access;
        const all = yield* core(
          Effect.flatMap(LashRuntime, (rt) =>
            rt.listSessions(urlParams.children ? { includeChildren: true } : {}),
          ),
        );
        // a child session belongs to its root's owner (access.ts)
        const ownerOfAny = (s: (typeof all)[number]) =>
          s.parentLink ? Effect.map(access.sessionInfo(s.id), (i) => i.owner) : Effect.succeed(ownerOf(s));
        const mine = principal.admin
          ? all
          : yield* Effect.filter(all, (s) => Effect.map(ownerOfAny(s), (o) => o === principal.name));
        return { sessions: yield* Effect.forEach(mine, toSession) };
      }).pipe(Effect.orDie),
    )
    .handle("get", ({ path }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        return yield* toSession(yield* core(Effect.flatMap(LashRuntime, (rt) => rt.getSession(path.id))));
      }),
    )
    .handle("messages", ({ path }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        const messages = yield* core(Effect.flatMap(LashRuntime, (rt) => rt.readView(path.id)));
        return { messages: messages as readonly unknown[] };
      }),
    )
    .handle("fork", ({ path, payload }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const access = yield* Access;
        yield* access.checkSession(principal, path.id);
        const principalLayers = access.principalLayers(principal);
        // core's fork, with the caller as the new session's owner (its durable state is the source's)
        const forked = yield* core(
          Effect.gen(function* () {
            const store = yield* SessionStore;
            const source = yield* store.getSession(path.id);
            const at = payload.atNode ?? source.leafId;
            let frameId = source.frameId;
            if (at) {
              const node = yield* store.getNode(at);
              if (!node)
                return yield* new NotFound({
                  code: "node_not_found",
                  message: `session ${path.id} has no node ${at}; pass a node id of its graph as atNode, or leave it out to fork at the leaf`,
                });
              frameId = node.frameId;
            }
            const now = Date.now();
            const { parentLink: _omit, ...rest } = source;
            return yield* store.fork({
              ...rest,
              id: `ses_${now.toString(36).padStart(9, "0")}${randomBytes(6).toString("hex")}`,
              title: payload.title ?? (source.title ? `${source.title} (fork)` : "fork"),
              createdAt: now,
              updatedAt: now,
              leafId: at,
              headRevision: 0,
              turnCount: 0,
              frameId,
              origin: { sessionId: path.id, nodeId: at },
              // the source's layers, then the new owner's: a fork never loosens either
              state: {
                ...source.state,
                "serve.owner": principal.name,
                ...layersState(withLayers(storedLayers(source.state), principalLayers)),
              },
            });
          }),
        );
        return yield* toSession(forked);
      }),
    )
    .handle("delete", ({ path }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        const session = yield* toSession(
          yield* core(Effect.flatMap(LashRuntime, (rt) => rt.getSession(path.id))),
        );
        if (session.activeRunId !== undefined)
          return yield* new Conflict({
            code: "run_active",
            message: `session ${path.id} has an active run (${session.activeRunId}); cancel it with POST /v1/runs/${session.activeRunId}/cancel, or wait for it to finish`,
          });
        yield* core(Effect.flatMap(LashRuntime, (rt) => rt.deleteSession(path.id)));
        return { deleted: path.id };
      }),
    )
    .handle("startTurn", ({ path, payload, urlParams }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        yield* (yield* Access).checkSession(principal, path.id);
        const runs = yield* RunManager;
        const run = yield* runs.start({ sessionId: path.id, text: payload.text, principal });
        return urlParams.wait ? yield* runs.wait(run.id) : run;
      }),
    )
    .handle("runs", ({ path }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        return { runs: yield* (yield* RunManager).list(path.id) };
      }),
    )
    .handleRaw("events", ({ path, urlParams, request }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        return yield* eventsResponse(path.id, undefined, request.headers, urlParams.after);
      }),
    )
    .handle("nodes", ({ path }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        return { nodes: (yield* activePath(path.id)).map(toNode) };
      }),
    )
    .handle("compare", ({ path }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const access = yield* Access;
        yield* access.checkSession(principal, path.id);
        yield* access.checkSession(principal, path.other);
        return yield* compareSessions(path.id, path.other);
      }),
    )
    .handleRaw("export", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        return pageResponse(yield* exportPage(path.id, urlParams.format ?? "html"));
      }),
    )
    .handleRaw("trace", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* (yield* Access).checkSession(yield* CurrentPrincipal, path.id);
        const events = (yield* EventLog).read(path.id, 0);
        return pageResponse(
          yield* tracePage(events, {
            format: urlParams.format ?? "html",
            level: urlParams.level ?? "standard",
            title: `lash trace · session ${path.id}`,
          }),
        );
      }),
    ),
);
