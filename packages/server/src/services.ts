// The daemon's services and the seams between its modules. Each shape is implemented in
// its own module (named beside it) and provided as a Layer; `server.ts` wires them.
// Change this file additively: several modules are written against it at once.

import type { Manifest } from "@lash/agents";
import type { ApproverShape, CreateSessionOptions, LashRuntime, Plugin, SessionStore } from "@lash/core";
import type { NamedLayer, PolicyLayer } from "@lash/policy";
import type { TurnActivity, TurnOutcome } from "@lash/sansio";
import type Database from "better-sqlite3";
import { Context, type Effect, type ManagedRuntime, type Stream } from "effect";
import type {
  AgentMetrics,
  Approval,
  BadRequest,
  Conflict,
  DecideApproval,
  Forbidden,
  Loop,
  LoopFiring,
  NotFound,
  Principal,
  Run,
  ServerEvent,
  TooManyRequests,
  Unavailable,
} from "./api.ts";

// ---------------------------------------------------------------------------------------
// what the embedding host (the CLI's `lash serve`, or a library user) gives the daemon

/** An agent session's settings, as the host resolves them from the build. */
export interface AgentSessionSpec {
  /** Options of `LashRuntime.createSession` (model, mode, system prompt, tools, state …). */
  readonly create: CreateSessionOptions;
  /** In-memory plugins of the session (e.g. the typed output), attached again after a restart. */
  readonly plugins: readonly Plugin[];
  /** Policy layers of the agent (project file, `agent:<name>`), after the host's own. */
  readonly policyLayers: readonly NamedLayer[];
  /** The spec's `maxTurns`: pass it to `LashRuntime.turn` for the session's runs. */
  readonly maxTurns?: number;
}

/**
 * The runtime the daemon drives, built by the host (for `lash serve`: the CLI's context,
 * with the user's config, providers, tools, MCP servers, policy and trace).
 */
export interface ServeHost {
  readonly runtime: ManagedRuntime.ManagedRuntime<LashRuntime | SessionStore, unknown>;
  /** `provider/model` of sessions created without one. */
  readonly defaultModel: string;
  /** Settings of every plain (non-agent) session the daemon creates; the request's own win. */
  readonly sessionDefaults?: Pick<CreateSessionOptions, "mode" | "systemPrompt" | "cwd" | "tools">;
  /** Answers every approval the policy asks for, from now on (the daemon's HTTP approver). */
  readonly setApprover: (approver: ApproverShape) => void;
  /** The build the daemon serves (`GET /v1/agents`), when the workspace has one. */
  readonly manifest?: Manifest;
  /** Settings of a new session running built agent `name` (absent: agents cannot run). */
  readonly agentSession?: (name: string) => AgentSessionSpec;
  /** Extra policy layers for a session (agent and principal layers); the host's governance reads them. */
  readonly setSessionLayers?: (sessionId: string, layers: readonly NamedLayer[]) => void;
  /**
   * The effective policy layers of a session (config, project, agent, principal …), as the
   * host's governance decides its calls with them; the daemon reads `secondApprover` (the
   * two-step rule) from them. Absent: no two-step rule.
   */
  readonly policyLayers?: (sessionId: string) => readonly NamedLayer[];
  /** Principals' settings from config (`serve.principals`): the policy layer each one's sessions get. */
  readonly principals?: { readonly [name: string]: { readonly policy?: PolicyLayer } };
  /** Record a turn event in the host's trace (a no-op without one). */
  readonly traceEvent?: (event: TurnActivity) => void;
  /**
   * Runs execute on a cluster instead of in this process (`lash serve --engine restate`): each
   * run's turn is submitted to the engine, and every event of a session is in a log all the
   * daemons share. Absent: the local engine.
   */
  readonly cluster?: ClusterEngine;
  readonly close: () => Promise<void>;
}

/** A daemon event as the shared log keeps it (`seq` is the log's cursor, `Last-Event-ID`). */
export interface SharedEvent {
  readonly seq: number;
  readonly sessionId: string;
  readonly runId: string;
  readonly type: string;
  readonly at: number;
  readonly data: unknown;
}

/** The cluster engine of `lash serve --engine restate` (`apps/cli/src/serve-restate.ts`). */
export interface ClusterEngine {
  /** Its name, as `--engine` spells it. */
  readonly name: string;
  /**
   * Run the turn of run `runId` (the run id is the turn id: unique across sessions) on the
   * cluster; resolves when it ended, on whichever worker ran it, and its events are in the log. A second call for the same
   * run attaches to the same turn (it never runs twice).
   */
  readonly submit: (
    sessionId: string,
    turn: { readonly runId: string; readonly text: string; readonly maxTurns?: number },
  ) => Promise<{
    readonly outcome: TurnOutcome;
    readonly text: string;
    /** Whether the shared log has the run's `runFinished` (the worker publishes it); else the daemon does. */
    readonly finished: boolean;
  }>;
  /** Append events to the shared log, in order; resolves once they are durable. */
  readonly append: (events: readonly Omit<SharedEvent, "seq">[]) => Promise<void>;
  /**
   * A session's events after `after`, then each one appended later by any daemon, in order,
   * each once. Never ends by itself.
   */
  readonly follow: (sessionId: string, after: number) => Stream.Stream<SharedEvent, unknown>;
  /** The seq of run `runId`'s last event in the shared log (0: none yet). */
  readonly lastSeq: (sessionId: string, runId: string) => Promise<number>;
}

export class Host extends Context.Tag("@lash/server/Host")<Host, ServeHost>() {}

/** The daemon's settings (`lash serve` flags). */
export interface ServeSettings {
  readonly host: string;
  readonly port: number;
  /** The daemon's own SQLite file: runs, events, approvals, tokens (`$LASH_HOME/serve.db`). */
  readonly stateDb: string;
  /** Runs executing at once across sessions (default 8); more wait `queued`. */
  readonly maxConcurrentRuns: number;
  /** Runs waiting in all (default 1000); beyond it `POST …/turns` is 429. */
  readonly maxQueuedRuns: number;
  /** Largest request body in bytes (default 1 MiB): 413 beyond it. */
  readonly maxBodyBytes: number;
  /** Events buffered per SSE client before it is dropped (default 10,000). */
  readonly sseBufferEvents: number;
  /** SIGTERM: how long in-flight runs may finish before they are left resumable (default 10 s). */
  readonly drainTimeoutMs: number;
  /** `none` only on a loopback address: every caller is the admin principal `local`. */
  readonly auth: "tokens" | "none";
}

export class Settings extends Context.Tag("@lash/server/Settings")<Settings, ServeSettings>() {}

/** The daemon's SQLite handle (`stateDb`); each module creates its own tables (`CREATE TABLE IF NOT EXISTS`). */
/** The better-sqlite3 connection of the state db (named, so declarations can refer to it). */
export interface StateDbHandle extends Database.Database {}

export class StateDb extends Context.Tag("@lash/server/StateDb")<StateDb, StateDbHandle>() {}

/** This daemon among those sharing the state db — `daemons.ts`. */
export interface DaemonOwnerShape {
  /** This daemon's id (what its runs and firings record as `owner`). */
  readonly id: string;
  /** Whether the daemon `owner` still runs (null: no owner, so not alive). */
  readonly alive: (owner: string | null) => boolean;
}

export class DaemonOwner extends Context.Tag("@lash/server/DaemonOwner")<DaemonOwner, DaemonOwnerShape>() {}

// ---------------------------------------------------------------------------------------
// events — `events.ts`

export interface EventLogShape {
  /**
   * Append one event of a session's stream and return it with its `seq`. Durable before
   * any reader sees it (a group commit: events appended in one tick are one transaction).
   */
  readonly append: (sessionId: string, runId: string, type: string, data: unknown) => ServerEvent;
  /** Stored events with `seq > after` (of one run when `runId` is given), in order. */
  readonly read: (sessionId: string, after: number, runId?: string) => readonly ServerEvent[];
  /**
   * Every event after `after`, then live ones, each exactly once. A run's stream ends after
   * its `runFinished`. A reader that falls `sseBufferEvents` behind is ended (it reconnects
   * with its cursor); it never slows a run.
   */
  readonly follow: (sessionId: string, after: number, runId?: string) => Stream.Stream<ServerEvent>;
  readonly lastSeq: (sessionId: string) => number;
}

export class EventLog extends Context.Tag("@lash/server/EventLog")<EventLog, EventLogShape>() {}

// ---------------------------------------------------------------------------------------
// runs — `runs.ts`

export interface StartRun {
  readonly sessionId: string;
  readonly text: string;
  readonly principal: Principal;
}

export interface RunManagerShape {
  /** Queue a run (one at a time per session, `maxConcurrentRuns` across sessions). */
  readonly start: (
    input: StartRun,
  ) => Effect.Effect<Run, TooManyRequests | Unavailable | NotFound | BadRequest>;
  readonly get: (runId: string) => Effect.Effect<Run, NotFound>;
  readonly list: (sessionId: string) => Effect.Effect<readonly Run[]>;
  /** Until the run is `completed`, `failed` or `cancelled`. */
  readonly wait: (runId: string) => Effect.Effect<Run, NotFound>;
  readonly cancel: (runId: string) => Effect.Effect<Run, NotFound | Conflict>;
  /** The run that executes `turnId` of `sessionId` (for the approver). */
  readonly runOfTurn: (sessionId: string, turnId: string) => Run | undefined;
  /** Mark a live run as waiting for (or done waiting for) an approval. */
  readonly setWaiting: (runId: string, waiting: boolean) => void;
}

export class RunManager extends Context.Tag("@lash/server/RunManager")<RunManager, RunManagerShape>() {}

// ---------------------------------------------------------------------------------------
// sessions and access — `access.ts`

export interface AccessShape {
  /** The session's owner (principal name) and agent, from its durable state; NotFound if absent. */
  readonly sessionInfo: (
    sessionId: string,
  ) => Effect.Effect<{ readonly owner: string; readonly agent?: string }, NotFound>;
  /** 404 for a session that does not exist, 403 for one the principal may not see. */
  readonly checkSession: (
    principal: Principal,
    sessionId: string,
  ) => Effect.Effect<void, NotFound | Forbidden>;
  /** 404 for an unknown agent, 403 when its `acl` does not give the principal `need`. */
  readonly checkAgent: (
    principal: Principal,
    agent: string,
    need: "execute" | "read",
  ) => Effect.Effect<void, NotFound | Forbidden>;
  /** Policy layers a principal adds to its sessions (they can only narrow). */
  readonly principalLayers: (principal: Principal) => readonly NamedLayer[];
}

export class Access extends Context.Tag("@lash/server/Access")<Access, AccessShape>() {}

// ---------------------------------------------------------------------------------------
// approvals — `approvals.ts`

export interface ApprovalsShape {
  /** The approver the daemon installs on the host (`ServeHost.setApprover`). */
  readonly approver: ApproverShape;
  readonly list: (principal: Principal, state: "pending" | "all") => Effect.Effect<readonly Approval[]>;
  readonly get: (principal: Principal, id: string) => Effect.Effect<Approval, NotFound | Forbidden>;
  readonly decide: (
    principal: Principal,
    id: string,
    body: typeof DecideApproval.Type,
  ) => Effect.Effect<Approval, BadRequest | NotFound | Forbidden | Conflict>;
}

export class Approvals extends Context.Tag("@lash/server/Approvals")<Approvals, ApprovalsShape>() {}

// ---------------------------------------------------------------------------------------
// metrics — `metrics.ts`

export interface MetricsShape {
  /** Every event appended to the log (runs by outcome, tools, tokens, approvals derive from them). */
  readonly record: (event: ServerEvent, session: { readonly model: string; readonly agent?: string }) => void;
  readonly sseOpened: () => void;
  readonly sseClosed: (dropped: boolean) => void;
  /** The Prometheus text exposition. */
  readonly render: () => string;
  /** Per-agent figures since the daemon started (`GET /v1/metrics/agents`). */
  readonly agents: () => { readonly since: number; readonly agents: readonly AgentMetrics[] };
}

export class Metrics extends Context.Tag("@lash/server/Metrics")<Metrics, MetricsShape>() {}

// ---------------------------------------------------------------------------------------
// loops (scheduled agents) — `scheduler.ts`

export interface SchedulerShape {
  /** Every loop of the build (agents with `schedule` and `instruction`). */
  readonly list: () => Effect.Effect<readonly Loop[]>;
  /** The loop `name` (its agent's name); NotFound naming the loops there are. */
  readonly get: (name: string) => Effect.Effect<Loop, NotFound>;
  /** Its firings, newest first. */
  readonly firings: (name: string, limit: number) => Effect.Effect<readonly LoopFiring[], NotFound>;
  /** A manual firing (its own dedup key), run like a scheduled one; returned once claimed. */
  readonly trigger: (
    name: string,
    instruction?: string,
    principal?: Principal,
  ) => Effect.Effect<LoopFiring, NotFound | Unavailable>;
  /** Pause or resume the loop's scheduled firings (persisted in the state db). */
  readonly setPaused: (name: string, paused: boolean) => Effect.Effect<Loop, NotFound>;
}

export class Scheduler extends Context.Tag("@lash/server/Scheduler")<Scheduler, SchedulerShape>() {}
