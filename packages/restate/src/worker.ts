// A lash worker on Restate: one Virtual Object per session id, one invocation per turn.
import { createServer, type Http2Server, type Http2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import {
  EffectJournal,
  Journal,
  LashRuntime,
  type LashRuntimeShape,
  type PendingTurn,
  type RuntimeOptions,
  SessionStore,
  type SessionStoreShape,
  type TurnActivity,
} from "@lash/core";
import * as restate from "@restatedev/restate-sdk";
import { Effect, Layer, ManagedRuntime } from "effect";
import { RestateJournal } from "./journal.ts";

/** The Virtual Object's name: `LashSession/{sessionId}/turn` at the ingress. */
export const SESSION_OBJECT = "LashSession";

/**
 * What the `turn` handler takes: the turn's id (part of the idempotency key; unique across
 * sessions, as lash's node ids derive from it) and its input.
 */
export interface TurnRequest {
  readonly turnId: string;
  readonly text: string;
  readonly maxTurns?: number;
}

/** What the `turn` handler answers. */
export interface TurnReply {
  readonly sessionId: string;
  readonly turnId: string;
  readonly outcome: string;
  readonly text: string;
  readonly headRevision: number;
  /** True when an earlier attempt of the invocation had already committed the turn. */
  readonly alreadyCommitted: boolean;
}

/** The idempotency key of a turn at the ingress. */
export const idempotencyKey = (sessionId: string, turnId: string): string => `${sessionId}:${turnId}`;

// biome-ignore lint/suspicious/noExplicitAny: whatever LashRuntime.layer needs (store, providers, ids, catalog)
type RuntimeServices = Layer.Layer<any, any, never>;

export interface RestateWorkerOptions {
  /** The runtime's services: a `SessionStore` every worker reaches, `LlmProviders`, `IdGenerator`, `ModelCatalog`. */
  readonly services: RuntimeServices;
  /** Plugins (tools) and other runtime options; the journal is always Restate's. */
  readonly runtime?: Omit<RuntimeOptions, "journal">;
  /** Port of the endpoint (HTTP/2, 127.0.0.1); 0 (default) picks a free one. */
  readonly port?: number;
  /**
   * Restate's admin API (e.g. http://127.0.0.1:9070): the endpoint is registered there when given
   * (unless `register: false`), and an invocation whose replay mismatches is killed through it.
   */
  readonly adminUrl?: string;
  /** Register the endpoint with the admin API (default true; false behind a load balancer registered once). */
  readonly register?: boolean;
  /**
   * Every event of the turns this worker runs (as `LashRuntime.turn`'s `onEvent`), e.g. to publish
   * them where a reader on another worker follows them. A retried invocation publishes again the
   * events of the steps it replays: the sink drops what it already has.
   */
  readonly onEvent?: (event: TurnActivity) => void;
  /**
   * Told of each journal step of a turn as it completes: its name (lash's replay key) and whether
   * it came from Restate's journal (`replayed`) rather than ran here — for logs and tests.
   */
  readonly onStep?: (name: string, replayed: boolean) => void;
}

export interface RestateWorker {
  /** The endpoint's URL (what the admin API registers). */
  readonly url: string;
  readonly runtime: LashRuntimeShape;
  close(): Promise<void>;
}

export interface Pin {
  readonly revision: number;
  readonly leafId: string | null;
}

type Run = <A>(effect: Effect.Effect<A, unknown, LashRuntime | SessionStore>) => Promise<A>;

/**
 * The store as turn `turnId` of `sessionId` saw it when it started (at `pin`), for the replay of
 * a turn that is already committed: the session at the pinned revision and leaf, without the
 * turn's nodes and usage; the pending-turn row kept in memory. Everything else, the commit
 * included (the idempotent turn stamp answers it), goes to the real store.
 */
export function pinnedStore(
  real: SessionStoreShape,
  sessionId: string,
  turnId: string,
  pin: Pin,
): SessionStoreShape {
  let pending: PendingTurn | undefined;
  const mine = (id: string) => id === sessionId;
  const without = <T extends { readonly turnId?: string | null }>(rows: readonly T[]) =>
    rows.filter((r) => r.turnId !== turnId);
  return {
    ...real,
    getSession: (id) =>
      mine(id)
        ? Effect.map(real.getSession(id), (s) => ({
            ...s,
            headRevision: pin.revision,
            leafId: pin.leafId,
            turnCount: Math.max(0, s.turnCount - 1),
          }))
        : real.getSession(id),
    activePath: (id, leafId) =>
      mine(id) ? Effect.map(real.activePath(id, leafId ?? pin.leafId), without) : real.activePath(id, leafId),
    projectionPath: (id, frameId) =>
      mine(id) ? Effect.map(real.projectionPath(id, frameId), without) : real.projectionPath(id, frameId),
    sessionNodes: (id) => (mine(id) ? Effect.map(real.sessionNodes(id), without) : real.sessionNodes(id)),
    usage: (id) => (mine(id) ? Effect.map(real.usage(id), without) : real.usage(id)),
    beginTurn: (turn) =>
      mine(turn.sessionId)
        ? Effect.sync(() => {
            pending = turn;
          })
        : real.beginTurn(turn),
    pendingTurn: (id) => (mine(id) ? Effect.sync(() => pending) : real.pendingTurn(id)),
    abandonTurn: (id, t) =>
      mine(id)
        ? Effect.sync(() => {
            pending = undefined;
          })
        : real.abandonTurn(id, t),
    countResumeAttempt: (id, t) => (mine(id) ? Effect.succeed(1) : real.countResumeAttempt(id, t)),
  };
}

/** The Virtual Object whose `turn` handler runs one lash turn per invocation. */
export function sessionObject(
  run: Run,
  journal: RestateJournal,
  adminUrl?: string,
  onEvent?: (event: TurnActivity) => void,
  /** Runs an effect on a runtime whose store shows `sessionId` as it was at `pin` (see `pinnedStore`); default `run`. */
  asOfPin: (sessionId: string, turnId: string, pin: Pin) => Run = () => run,
) {
  return restate.object({
    name: SESSION_OBJECT,
    handlers: {
      turn: async (ctx: restate.ObjectContext, request: TurnRequest): Promise<TurnReply> => {
        const sessionId = ctx.key;
        const { turnId } = request;
        // first step: the revision and leaf the turn starts from
        const pin = await ctx.run<Pin>("pin", () =>
          run(
            Effect.map(
              Effect.flatMap(SessionStore, (s) => s.getSession(sessionId)),
              (s) => ({ revision: s.headRevision, leafId: s.leafId }),
            ),
          ),
        );
        const state = await run(
          Effect.gen(function* () {
            const store = yield* SessionStore;
            const session = yield* store.getSession(sessionId);
            const pending = yield* store.pendingTurn(sessionId);
            const path = session.headRevision === pin.revision ? [] : yield* store.activePath(sessionId);
            return {
              session,
              resume: pending?.turnId === turnId,
              committed: path.some((n) => n.turnId === turnId),
            };
          }),
        );
        if (!state.committed && !state.resume && state.session.headRevision !== pin.revision) {
          throw new restate.TerminalError(
            `session ${sessionId} moved from revision ${pin.revision} to ${state.session.headRevision} outside turn ${turnId}; ` +
              "submit the turn again with a new turn id.",
          );
        }
        // An earlier attempt committed the turn and died before it answered. Restate replays that
        // attempt's recorded steps, so the handler must take them again in the same order (ending
        // early is a journal mismatch Restate retries forever): the turn runs again against the
        // session as it was at the pin; every step replays from Restate's journal (nothing runs
        // again) and the store's idempotent commit answers with the stored result.
        const runTurn = state.committed ? asOfPin(sessionId, turnId, pin) : run;
        const result = await journal.bind({ sessionId, turnId }, ctx, () =>
          runTurn(
            Effect.flatMap(LashRuntime, (rt) =>
              Effect.either(
                state.resume
                  ? rt.resumePending(sessionId, onEvent ? { onEvent } : {})
                  : rt.turn(
                      sessionId,
                      { text: request.text },
                      {
                        turnId,
                        resumePending: false,
                        wait: true,
                        ...(onEvent ? { onEvent } : {}),
                        ...(request.maxTurns ? { maxTurns: request.maxTurns } : {}),
                      },
                    ),
              ),
            ),
          ),
        );
        if (result._tag === "Left") {
          const e = result.left as { _tag?: string; reason?: string; message?: string };
          // a replay that asks for something else than was recorded: terminal, not retried forever
          if (e._tag === "TurnError" && e.reason === "journalMismatch") {
            // Restate treats an end before the recorded steps are all replayed as its own journal
            // mismatch, retried without end: the invocation is killed through the admin API instead
            if (adminUrl) await killInvocation(adminUrl, ctx.request().id);
            throw new restate.TerminalError(e.message ?? "journal mismatch", { errorCode: 409 });
          }
          if (e._tag === "TurnError" && (e.reason === "unknownModel" || e.reason === "invalidSession"))
            throw new restate.TerminalError(e.message ?? String(e.reason), { errorCode: 400 });
          throw new Error(e.message ?? String(e));
        }
        const r = result.right;
        if (!r)
          throw new restate.TerminalError(`session ${sessionId}: turn ${turnId} was not pending any more`);
        return {
          sessionId: r.sessionId,
          turnId: r.turnId,
          outcome: r.outcome.type,
          text: r.text,
          headRevision: r.headRevision,
          alreadyCommitted: state.committed,
        };
      },
    },
  });
}

/**
 * Serves the lash Restate endpoint (HTTP/2 on 127.0.0.1) and registers it with the admin API.
 * Submit turns through the ingress: `POST {ingress}/LashSession/{sessionId}/turn` with the
 * header `idempotency-key: {sessionId}:{turnId}` and a `TurnRequest` body.
 */
export async function startRestateWorker(options: RestateWorkerOptions): Promise<RestateWorker> {
  const journal = new RestateJournal(options.onStep);
  const layer = LashRuntime.layer({
    // Restate's retry policy decides how often an invocation is retried, not lash's poison guard
    maxResumeAttempts: Number.MAX_SAFE_INTEGER,
    ...options.runtime,
    journal: true,
  }).pipe(
    Layer.provideMerge(Layer.succeed(EffectJournal, new Journal(undefined, journal))),
    Layer.provideMerge(options.services),
  );
  const managed = ManagedRuntime.make(layer as Layer.Layer<LashRuntime | SessionStore, unknown, never>);
  const runtime = await managed.runPromise(LashRuntime);
  const run = <A>(effect: Effect.Effect<A, unknown, LashRuntime | SessionStore>): Promise<A> =>
    managed.runPromise(effect);
  const realStore = await managed.runPromise(SessionStore);
  // the rare replay of a committed turn: a runtime of its own over the pinned view of the store
  const asOfPin =
    (sessionId: string, turnId: string, pin: Pin): Run =>
    async (effect) => {
      const pinned = ManagedRuntime.make(
        LashRuntime.layer({
          maxResumeAttempts: Number.MAX_SAFE_INTEGER,
          ...options.runtime,
          journal: true,
        }).pipe(
          Layer.provideMerge(Layer.succeed(EffectJournal, new Journal(undefined, journal))),
          Layer.provideMerge(Layer.succeed(SessionStore, pinnedStore(realStore, sessionId, turnId, pin))),
          Layer.provideMerge(options.services),
        ) as Layer.Layer<LashRuntime | SessionStore, unknown, never>,
      );
      try {
        return await pinned.runPromise(effect);
      } finally {
        await pinned.dispose();
      }
    };
  const handler = restate.createEndpointHandler({
    services: [sessionObject(run, journal, options.adminUrl, options.onEvent, asOfPin)],
  });
  const server: Http2Server = createServer(handler);
  // Restate keeps its HTTP/2 connections open: close() ends them
  const sessions = new Set<Http2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (options.adminUrl && options.register !== false) await registerDeployment(options.adminUrl, url);
  return {
    url,
    runtime,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.destroy();
      await closed;
      await managed.dispose();
    },
  };
}

/** Ends an invocation for good (Restate's "kill"): its caller gets a failure, nothing retries it. */
export async function killInvocation(adminUrl: string, invocationId: string): Promise<void> {
  const res = await fetch(`${adminUrl}/invocations/${encodeURIComponent(invocationId)}/kill`, {
    method: "PATCH",
  });
  if (res.ok || res.status === 404) return;
  await fetch(`${adminUrl}/invocations/${encodeURIComponent(invocationId)}?mode=kill`, { method: "DELETE" });
}

/** Registers (or re-registers: `force`) the endpoint at `url` with Restate's admin API. */
export async function registerDeployment(adminUrl: string, url: string): Promise<void> {
  const res = await fetch(`${adminUrl}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: url, force: true }),
  });
  if (!res.ok)
    throw new Error(
      `registering the lash endpoint ${url} with Restate's admin API ${adminUrl} failed (${res.status}): ${await res.text()}. ` +
        "Check that restate-server runs and that it can reach the endpoint.",
    );
}
