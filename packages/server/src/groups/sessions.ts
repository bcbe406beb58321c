// Handlers of `SessionsApi`: sessions (owned by the principal that created them), their
// turns (runs) and their durable event stream.
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform";
import { LashRuntime } from "@lash/core";
import { Effect } from "effect";
import { Conflict, CurrentPrincipal, LashApi, NotFound } from "../api.ts";
import type { EventLogImpl } from "../events.ts";
import { Access, EventLog, Host, Metrics, RunManager } from "../services.ts";
import { sseCursor, sseResponse } from "../sse.ts";
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
    const log = (yield* EventLog) as EventLogImpl;
    const metrics = yield* Metrics;
    const followed = log.followTracked(sessionId, cursor, runId);
    return sseResponse(followed.stream, { metrics, dropped: followed.dropped });
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
                  state: { ...(spec.create.state ?? {}), ...owner, "serve.agent": name },
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
                state: owner,
              }),
            ),
          );
        }
        if (layers.length > 0) host.setSessionLayers?.(record.id, layers);
        return yield* toSession(record);
      }),
    )
    .handle("list", () =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const all = yield* core(Effect.flatMap(LashRuntime, (rt) => rt.listSessions()));
        const mine = principal.admin ? all : all.filter((s) => ownerOf(s) === principal.name);
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
        yield* (yield* Access).checkSession(principal, path.id);
        const forked = yield* core(
          Effect.flatMap(LashRuntime, (rt) =>
            rt.fork(path.id, {
              ...(payload.atNode !== undefined ? { atNode: payload.atNode } : {}),
              ...(payload.title !== undefined ? { title: payload.title } : {}),
            }),
          ),
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
    ),
);
