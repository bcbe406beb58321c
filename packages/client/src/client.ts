// The promise client, for code that does not use Effect: the same typed endpoints, each a
// function returning a promise that rejects with the API's tagged error (`err._tag`,
// `err.code`, `err.message`, as the daemon sent it) or a `ClientError` (`unreachable`, …).
//
//   const lash = createClient({ baseUrl: "http://127.0.0.1:7777", token });
//   const session = await lash.sessions.create({ title: "demo" });
//   const run = await lash.turns.start(session.id, "hello");
//   for await (const event of lash.events({ runId: run.id })) console.log(event.seq, event.type);
import { FetchHttpClient } from "@effect/platform";
import type {
  AgentInfo,
  AgentMetrics,
  AgentReply,
  Approval,
  CreateSession,
  DecideApproval,
  Loop,
  LoopFiring,
  Run,
  Session,
  SessionComparison,
  SessionNode,
  ViewLink,
  ViewRequest,
} from "@lash/server/api";
import { Cause, Effect, Exit } from "effect";
import { type ApiClient, type ClientOptions, makeApiClient } from "./effect.ts";
import { ClientError, isApiError, type LashError, unreachable } from "./errors.ts";
import {
  type EventStream,
  type EventsOptions,
  type StreamTarget,
  streamAgentChat,
  streamEvents,
  trimBase,
} from "./events.ts";

export interface LashClientPromise {
  readonly baseUrl: string;
  /** The Effect client underneath (every endpoint, typed errors). */
  readonly api: ApiClient;
  health(): Promise<{ readonly ok: boolean }>;
  ready(): Promise<{ readonly ready: boolean; readonly resumed: number }>;
  readonly sessions: {
    create(body?: typeof CreateSession.Type): Promise<Session>;
    /** `children: true` lists subagents' child sessions too (each with its `parent`). */
    list(options?: { readonly children?: boolean }): Promise<readonly Session[]>;
    get(id: string): Promise<Session>;
    fork(id: string, body?: { readonly atNode?: string; readonly title?: string }): Promise<Session>;
    delete(id: string): Promise<{ readonly deleted: string }>;
    messages(id: string): Promise<readonly unknown[]>;
    runs(id: string): Promise<readonly Run[]>;
    /** The active path's graph nodes, root first (node ids to fork at). */
    nodes(id: string): Promise<readonly SessionNode[]>;
    /** Two sessions' branches after the last node they share. */
    compare(id: string, other: string): Promise<SessionComparison>;
    /** The session exported: a self-contained HTML page (default), JSON or Markdown. */
    export(id: string, format?: ExportFormat): Promise<string>;
    /** The session's trace from its logged events: the viewer page (default) or JSON Lines. */
    trace(id: string, options?: TraceOptions): Promise<string>;
  };
  readonly turns: {
    /** Starts a run (202 with the queued/running run); `wait: true` returns it finished. */
    start(sessionId: string, text: string, options?: { readonly wait?: boolean }): Promise<Run>;
  };
  readonly runs: {
    get(id: string): Promise<Run>;
    cancel(id: string): Promise<Run>;
    /** One run's trace: the viewer page (default) or JSON Lines. */
    trace(id: string, options?: TraceOptions): Promise<string>;
  };
  readonly approvals: {
    list(options?: { readonly state?: "pending" | "all" }): Promise<readonly Approval[]>;
    get(id: string): Promise<Approval>;
    decide(id: string, decision: typeof DecideApproval.Type): Promise<Approval>;
  };
  readonly agents: {
    list(): Promise<readonly AgentInfo[]>;
    chat(name: string, input: unknown, options?: { readonly sessionId?: string }): Promise<AgentReply>;
    /** The chat's run events until its `runFinished` (reconnecting like `events`). */
    chatStream(
      name: string,
      input: unknown,
      options?: { readonly sessionId?: string } & EventsOptions,
    ): EventStream;
  };
  readonly views: {
    /**
     * A short-lived link (a path on the daemon) to an export or trace page that a browser tab
     * opens without a bearer header.
     */
    link(request: typeof ViewRequest.Type): Promise<ViewLink>;
  };
  readonly metrics: {
    /** Per-agent figures since the daemon started (runs, latency, model calls, tokens, cost). */
    agents(): Promise<{ readonly since: number; readonly agents: readonly AgentMetrics[] }>;
  };
  /** Loops: agents with a schedule (`GET /v1/loops`, firings, trigger, pause, resume). */
  readonly loops: {
    list(): Promise<readonly Loop[]>;
    /** Newest first (default 50, at most 1000). */
    firings(name: string, options?: { readonly limit?: number }): Promise<readonly LoopFiring[]>;
    /** A manual firing (202 once claimed); `instruction` replaces the loop's for this firing. */
    trigger(name: string, options?: { readonly instruction?: string }): Promise<LoopFiring>;
    pause(name: string): Promise<Loop>;
    resume(name: string): Promise<Loop>;
  };
  /**
   * A session's events (until closed) or a run's (until its `runFinished`), reconnecting with
   * `Last-Event-ID` by itself after a dropped connection or a daemon restart.
   */
  events(target: StreamTarget, options?: EventsOptions): EventStream;
}

export type ExportFormat = "html" | "json" | "md";

export interface TraceOptions {
  readonly format?: "html" | "jsonl";
  /** `extended` keeps streamed text and tool contents (default `standard`). */
  readonly level?: "standard" | "extended";
}

const traceParams = (o: TraceOptions) => ({
  ...(o.format !== undefined ? { format: o.format } : {}),
  ...(o.level !== undefined ? { level: o.level } : {}),
});

/** A client of a `lash serve` daemon. */
export function createClient(options: ClientOptions): LashClientPromise {
  const baseUrl = trimBase(options.baseUrl);
  const api = Effect.runSync(makeApiClient(options).pipe(Effect.provide(FetchHttpClient.layer)));
  const connection = { baseUrl, token: options.token };

  const call = async <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
    const exit = await Effect.runPromiseExit(effect);
    if (Exit.isSuccess(exit)) return exit.value;
    throw toLashError(baseUrl, Cause.squash(exit.cause));
  };

  return {
    baseUrl,
    api,
    health: () => call(api.health()),
    ready: () => call(api.ready()),
    sessions: {
      create: (body = {}) => call(api.sessions.create({ payload: body })),
      list: (listOptions = {}) =>
        call(
          Effect.map(
            api.sessions.list({
              urlParams: listOptions.children === undefined ? {} : { children: listOptions.children },
            }),
            (r) => r.sessions,
          ),
        ),
      get: (id) => call(api.sessions.get({ path: { id } })),
      fork: (id, body = {}) => call(api.sessions.fork({ path: { id }, payload: body })),
      delete: (id) => call(api.sessions.delete({ path: { id } })),
      messages: (id) => call(Effect.map(api.sessions.messages({ path: { id } }), (r) => r.messages)),
      runs: (id) => call(Effect.map(api.sessions.runs({ path: { id } }), (r) => r.runs)),
      nodes: (id) => call(Effect.map(api.sessions.nodes({ path: { id } }), (r) => r.nodes)),
      compare: (id, other) => call(api.sessions.compare({ path: { id, other } })),
      export: (id, format) =>
        call(api.sessions.export({ path: { id }, urlParams: format !== undefined ? { format } : {} })),
      trace: (id, traceOptions = {}) =>
        call(api.sessions.trace({ path: { id }, urlParams: traceParams(traceOptions) })),
    },
    turns: {
      start: (sessionId, text, startOptions = {}) =>
        call(
          api.sessions.startTurn({
            path: { id: sessionId },
            urlParams: startOptions.wait === undefined ? {} : { wait: startOptions.wait },
            payload: { text },
          }),
        ),
    },
    runs: {
      get: (id) => call(api.runs.get({ path: { id } })),
      cancel: (id) => call(api.runs.cancel({ path: { id } })),
      trace: (id, traceOptions = {}) =>
        call(api.runs.trace({ path: { id }, urlParams: traceParams(traceOptions) })),
    },
    approvals: {
      list: (listOptions = {}) =>
        call(Effect.map(api.approvals.list({ urlParams: listOptions }), (r) => r.approvals)),
      get: (id) => call(api.approvals.get({ path: { id } })),
      decide: (id, decision) => call(api.approvals.decide({ path: { id }, payload: decision })),
    },
    agents: {
      list: () => call(Effect.map(api.agents.list(), (r) => r.agents)),
      chat: (name, input, chatOptions = {}) =>
        call(api.agents.chat({ path: { name }, payload: { input, sessionId: chatOptions.sessionId } })),
      chatStream: (name, input, chatOptions = {}) =>
        streamAgentChat(connection, name, { input, sessionId: chatOptions.sessionId }, chatOptions),
    },
    views: {
      link: (request) => call(api.views.link({ payload: request })),
    },
    metrics: {
      agents: () => call(api.metrics.agents()),
    },
    loops: {
      list: () => call(Effect.map(api.loops.list(), (r) => r.loops)),
      firings: (name, firingOptions = {}) =>
        call(
          Effect.map(
            api.loops.firings({
              path: { name },
              urlParams: firingOptions.limit === undefined ? {} : { limit: firingOptions.limit },
            }),
            (r) => r.firings,
          ),
        ),
      trigger: (name, triggerOptions = {}) =>
        call(
          api.loops.trigger({
            path: { name },
            payload:
              triggerOptions.instruction === undefined ? {} : { instruction: triggerOptions.instruction },
          }),
        ),
      pause: (name) => call(api.loops.pause({ path: { name } })),
      resume: (name) => call(api.loops.resume({ path: { name } })),
    },
    events: (target, eventOptions) => streamEvents(connection, target, eventOptions),
  };
}

/** The error a failed call rejects with: the API's own, else a `ClientError` naming the cause. */
function toLashError(baseUrl: string, error: unknown): LashError {
  if (isApiError(error) || error instanceof ClientError) return error;
  const tag = typeof error === "object" && error !== null ? (error as { _tag?: unknown })._tag : undefined;
  if (tag === "RequestError") return unreachable(baseUrl, error);
  if (tag === "ResponseError") {
    const status = (error as { response?: { status?: number } }).response?.status;
    return new ClientError({
      code: "unexpected_response",
      message: `lash serve at ${baseUrl} answered HTTP ${status ?? "?"} with a body that is not the API's (${String((error as Error).message ?? error).slice(0, 300)}). Check that --server points at lash serve and that client and daemon versions match.`,
    });
  }
  return new ClientError({
    code: "unexpected_response",
    message: `a call to lash serve at ${baseUrl} failed: ${error instanceof Error ? error.message : String(error)}`,
  });
}
