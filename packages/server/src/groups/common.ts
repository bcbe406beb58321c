// Helpers of the session and run handlers: core effects on the host's runtime, the Session shape.
import { handoffLinks, type LashRuntime, type SessionRecord, SessionStore } from "@lash/core";
import { Effect } from "effect";
import { NotFound, Session } from "../api.ts";
import { isTerminal } from "../runs.ts";
import { Host, RunManager } from "../services.ts";

/** Run a core effect on the host's runtime; a missing session is a 404, anything else a defect. */
export const core = <A, E>(effect: Effect.Effect<A, E, LashRuntime | SessionStore>) =>
  Effect.gen(function* () {
    const host = yield* Host;
    const runtime = yield* host.runtime.runtimeEffect.pipe(Effect.orDie);
    return yield* Effect.provide(effect, runtime).pipe(
      Effect.catchAll((e: unknown) => {
        if (e instanceof NotFound) return Effect.fail(e);
        const t = e as { _tag?: string; sessionId?: string };
        if (t._tag === "SessionNotFound" || t._tag === "StoreNotFound")
          return Effect.fail(
            new NotFound({
              code: "session_not_found",
              message: `no session ${t.sessionId ?? ""}; list yours with GET /v1/sessions`.replace("  ", " "),
            }),
          );
        return Effect.die(e);
      }),
    );
  });

export const ownerOf = (s: SessionRecord): string => {
  const o = s.state["serve.owner"];
  return typeof o === "string" ? o : "local";
};

export const agentOf = (s: SessionRecord): string | undefined => {
  const a = s.state["serve.agent"];
  return typeof a === "string" ? a : undefined;
};

/** The API's Session of a core session record (with its active run). */
export const toSession = (s: SessionRecord) =>
  Effect.gen(function* () {
    const runs = yield* (yield* RunManager).list(s.id);
    const open = runs.filter((r) => !isTerminal(r.state));
    const active = open.find((r) => r.state !== "queued") ?? open[0];
    const agent = agentOf(s);
    const handoff = yield* core(Effect.flatMap(SessionStore, (store) => handoffLinks(store, s)));
    return new Session({
      id: s.id,
      ...(s.title !== undefined ? { title: s.title } : {}),
      model: s.model,
      mode: s.mode,
      owner: ownerOf(s),
      ...(agent !== undefined ? { agent } : {}),
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      headRevision: s.headRevision,
      turnCount: s.turnCount,
      ...(s.origin ? { origin: { sessionId: s.origin.sessionId, nodeId: s.origin.nodeId } } : {}),
      ...(s.parentLink ? { parent: { sessionId: s.parentLink.sessionId, callId: s.parentLink.callId } } : {}),
      ...(active ? { activeRunId: active.id } : {}),
      ...(handoff.from !== undefined || handoff.to !== undefined ? { handoff } : {}),
    });
  });
