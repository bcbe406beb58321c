import type {
  CompletedToolCall,
  ContextProjector,
  ExecResult,
  LlmRequest,
  LlmResult,
  Message,
  PendingToolCall,
  ProtocolDriver,
  ToolSpec,
  TurnOutcome,
  Usage,
} from "@lash/sansio";
import * as Data from "effect/Data";
import type * as Deferred from "effect/Deferred";
import type * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type * as Stream from "effect/Stream";
import type { TurnActivity, TurnActivityBody } from "./activity.ts";
import type { CompactionOptions, CompactionPayload } from "./compaction/compact.ts";
import type { DispatchOptions } from "./dispatch.ts";
import type { ApprovalRequest, ApproverShape, GovernanceShape } from "./governance.ts";
import type { ActivityExpired } from "./hub.ts";
import type { HookContext, Plugin } from "./plugin.ts";
import type {
  CommitResult,
  GraphNode,
  SessionLease,
  SessionNotFound,
  SessionRecord,
  StoreConflict,
  StoreError,
  UsageSummary,
} from "./store.ts";
import type { CreateSessionOptions, ToolDefinition, TurnInput } from "./tool.ts";

export type { UsageSummary } from "./store.ts";
export type { CreateSessionOptions, TurnInput } from "./tool.ts";

// The public shapes of `LashRuntime`: options, turn results and errors, the service itself.

export interface RuntimeOptions {
  /** Plugins every session gets (tools, hooks, prompt text). */
  readonly plugins?: readonly Plugin[];
  /** Record every effect for crash-resume (default true). */
  readonly journal?: boolean;
  readonly dispatch?: DispatchOptions;
  /** Model calls per turn before the final-notice iteration (default 50). */
  readonly maxTurns?: number;
  /** Protocol drivers by mode; `standard` is built in. */
  readonly drivers?: { readonly [mode: string]: ProtocolDriver };
  /** Executes `execCode` effects (the RLM mode installs one). */
  readonly codeExecutor?: CodeExecutor;
  /** Context projectors by mode (the RLM mode renders its own prompt); one is made per turn. */
  readonly projectors?: { readonly [mode: string]: (ctx: ProjectorContext) => ContextProjector };
  /** The session lease: one writer per session across processes. */
  readonly lease?: LeaseOptions;
  /**
   * A cut-off turn whose resume has started this many times without finishing
   * (each one crashed the process) is not resumed again automatically (default 3).
   */
  readonly maxResumeAttempts?: number;
  /**
   * Decides every tool call before it runs: allow, deny (the model reads why) or ask the
   * `approver`. Default: the `Governance` service when the runtime's context has one, else
   * `Governance.allowAll` (no approval step at all).
   */
  readonly governance?: GovernanceShape;
  /**
   * Answers the calls `governance` asks about, all of one model response in one request.
   * Default: the `Approver` service when the context has one; with none, a call that needs
   * an answer stops the turn (`TurnError` `approval`) and the request stays pending.
   */
  readonly approver?: ApproverShape;
  /**
   * Context compaction: before a turn whose first request is estimated at `threshold` (default
   * 0.8) of the model's context window, the history is summarised into a `compaction` node.
   * `contextWindow` overrides the catalog's window; `model` names a cheaper summariser.
   */
  readonly compaction?: CompactionOptions;
}

/**
 * Every turn (and resume, and abandon) holds the session's lease in the store:
 * a second runtime, in this process or another, is refused (`TurnError`
 * `busy`, naming the holder) or waits (`TurnOptions.wait`). The holder renews
 * it every `heartbeatMs`; a holder that died stops renewing, so its lease
 * expires after `ttlMs`, or at once when it was on this host and its pid is gone.
 */
export interface LeaseOptions {
  /** How long a lease lives without a heartbeat (default 30 s). */
  readonly ttlMs?: number;
  /** Heartbeat interval (default ttl / 3). */
  readonly heartbeatMs?: number;
  /** How often a waiting writer tries again (default 250 ms). */
  readonly pollMs?: number;
  /** Reported to other writers (default this process's pid and host name). */
  readonly pid?: number;
  readonly host?: string;
  /** Is a process of this host alive? (default `process.kill(pid, 0)`). */
  readonly isAlive?: (pid: number) => boolean;
}

/** What a mode's projector factory gets at the start of a turn. */
export interface ProjectorContext extends HookContext {
  /** The tools visible to the turn now (with their Lashlang bindings). */
  readonly tools: () => ReadonlyMap<string, ToolDefinition>;
}

/** What a code executor (the RLM mode) may use while it runs a cell. */
export interface ExecContext extends HookContext {
  readonly iteration: number;
  readonly effectId: number;
  /** Replay key of the cell; derive keys for anything the executor journals under it. */
  readonly key: string;
  readonly frameId: string;
  /** Run tool calls through the same dispatch as standard mode (validation, journal, hooks, budget, concurrency). */
  readonly dispatch: (
    calls: readonly PendingToolCall[],
    label: string,
  ) => Effect.Effect<readonly CompletedToolCall[], TurnError>;
  /** A one-shot, journaled model call (no tools) on `model` (default: the session's); usage is recorded under the turn. */
  readonly complete: (
    request: Omit<LlmRequest, "model"> & { readonly model?: string },
    label: string,
  ) => Effect.Effect<LlmResult, TurnError>;
  /**
   * A value recorded in the journal under the cell's key + `label`: computed the first time, read
   * back when the turn is resumed after a crash (Lashlang `sleep` wake-up times). Optional: a
   * host without it gets values that are not durable.
   */
  readonly remember?: <A>(label: string, value: Effect.Effect<A>) => Effect.Effect<A, TurnError>;
  /** The tools visible to this turn. */
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly emit: (body: TurnActivityBody) => Effect.Effect<void>;
  /** Completed when the turn is cancelled. */
  readonly cancelled: Deferred.Deferred<void>;
}

export interface CodeExecutor {
  readonly execute: (ctx: ExecContext, language: string, code: string) => Effect.Effect<ExecResult, unknown>;
  /** Told when a cell's result came from the journal (nothing ran), so the executor can bring its state up to date. */
  readonly replayed?: (
    ctx: ExecContext,
    language: string,
    code: string,
    result: ExecResult,
  ) => Effect.Effect<void, unknown>;
}

export interface TurnOptions {
  readonly maxTurns?: number;
  /** Called synchronously for every activity event of this turn. */
  readonly onEvent?: (event: TurnActivity) => void;
  /**
   * Resume an interrupted turn of this session first (default true). With
   * `false`, a turn on a session that has one fails (`TurnError` `pendingTurn`):
   * resume it, or abandon it (`abandonPending`), first.
   */
  readonly resumePending?: boolean;
  /**
   * The new turn's id (default: a fresh one). For hosts whose turns are retried by an
   * engine outside the process (`@lash/restate`: the invocation's turn id), so every
   * attempt of a turn journals under the same keys.
   */
  readonly turnId?: string;
  /** When another writer holds the session's lease: wait for it (true) instead of failing `busy` (default false). */
  readonly wait?: boolean;
  /** Called once when the turn starts waiting for another writer's lease. */
  readonly onLeaseWait?: (holder: SessionLease) => void;
}

/** What `abandonPending` closed. */
export interface AbandonedTurn {
  readonly sessionId: string;
  readonly turnId: string;
  /** The abandoned turn's input text. */
  readonly input: string;
  /** Journal records of steps that had completed (model calls, tool batches …) and are dropped. */
  readonly completedSteps: number;
  readonly resumeAttempts: number;
  readonly headRevision: number;
}

export interface TurnResult {
  readonly sessionId: string;
  readonly turnId: string;
  readonly outcome: TurnOutcome;
  /** The assistant's final text ("" when the turn ended otherwise). */
  readonly text: string;
  readonly finalValue?: unknown;
  readonly usage: Usage;
  /** Absent when the model's price is unknown. */
  readonly costUsd?: number;
  readonly messages: readonly Message[];
  readonly headRevision: number;
  readonly toolCalls: number;
  readonly durationMs: number;
  readonly resumed: boolean;
  /** The compaction this turn committed before its messages (its node id and payload). */
  readonly compaction?: { readonly nodeId: string; readonly payload: CompactionPayload };
  /** The turn's compaction handed off: it ran in the successor `to` (this result's `sessionId`) of `from`. */
  readonly handoff?: { readonly from: string; readonly to: string };
}

/** What `compact` committed. */
export interface CompactionResult {
  readonly sessionId: string;
  readonly turnId: string;
  readonly nodeId: string;
  readonly payload: CompactionPayload;
  readonly headRevision: number;
  /** With `compaction.strategy: "handoff"`: the successor session the summary opened. */
  readonly successor?: string;
}

/** The turn could not run or commit (typed, for hosts to match on). */
export class TurnError extends Data.TaggedError("TurnError")<{
  readonly sessionId: string;
  readonly reason:
    | "conflict"
    | "journalMismatch"
    | "store"
    | "unknownModel"
    | "busy"
    | "invalidSession"
    /** The cut-off turn's resumes crashed `maxResumeAttempts` times: it is not resumed automatically. */
    | "poisoned"
    /** A new turn was asked for (`resumePending: false`) while a cut-off turn is pending. */
    | "pendingTurn"
    /**
     * A tool call needs an approval and none could be had (no approver, or it failed — e.g.
     * `--approval-mode fail`). The request stays in the journal: resuming the turn with an
     * approver that answers asks it again (same id, same preview).
     */
    | "approval"
    /** `compact`: the summary could not be made (the summariser failed, or there was nothing to compact). */
    | "compaction";
  readonly message: string;
  /** The turn's messages when it ran but could not commit. */
  readonly messages?: readonly Message[];
  /** `busy`: who holds the session's lease. */
  readonly holder?: SessionLease;
  /** `poisoned`, `pendingTurn`, `journalMismatch`: the cut-off turn. */
  readonly pendingTurnId?: string;
  readonly resumeAttempts?: number;
  /** `approval`: the request that could not be answered. */
  readonly approvalRequest?: ApprovalRequest;
}> {}

export interface Comparison {
  readonly ancestor: string | null;
  readonly onlyA: readonly GraphNode[];
  readonly onlyB: readonly GraphNode[];
}

export interface LashRuntimeShape {
  createSession(options: CreateSessionOptions): Effect.Effect<SessionRecord, StoreError>;
  getSession(id: string): Effect.Effect<SessionRecord, SessionNotFound | StoreError>;
  listSessions(
    options?: import("./store.ts").ListOptions,
  ): Effect.Effect<readonly SessionRecord[], StoreError>;
  deleteSession(id: string): Effect.Effect<void, SessionNotFound | StoreError>;
  /** Attach in-memory plugins to a session opened from the store (reopen in another process). */
  attachPlugins(sessionId: string, plugins: readonly Plugin[]): Effect.Effect<void>;
  /** A new session continuing from `atNode` (default: the leaf). Cost independent of history length. */
  fork(
    sessionId: string,
    options?: { readonly atNode?: string; readonly title?: string },
  ): Effect.Effect<SessionRecord, SessionNotFound | StoreError>;
  /** Move the session's leaf to `nodeId` (a node on any of its branches). */
  branch(
    sessionId: string,
    nodeId: string | null,
  ): Effect.Effect<CommitResult, StoreConflict | SessionNotFound | StoreError>;
  compare(leafA: string, leafB: string): Effect.Effect<Comparison, StoreError | SessionNotFound>;
  /** The settled transcript of the active path. */
  readView(sessionId: string): Effect.Effect<readonly Message[], SessionNotFound | StoreError>;
  /** Active-path nodes in order (messages, protocol events, frames). */
  chronological(sessionId: string): Effect.Effect<readonly GraphNode[], SessionNotFound | StoreError>;
  /** Run a turn to its end. Interrupting this effect cancels the turn gracefully: what finished is committed. */
  turn(
    sessionId: string,
    input: TurnInput,
    options?: TurnOptions,
  ): Effect.Effect<TurnResult, TurnError | SessionNotFound>;
  /** Start a turn in the background: its events, its result, and a cancel handle. */
  startTurn(
    sessionId: string,
    input: TurnInput,
    options?: TurnOptions,
  ): Effect.Effect<TurnHandle, never, Scope.Scope>;
  /** Finish a turn that was cut off (crash) from its journal. `undefined` when there is none. */
  resumePending(
    sessionId: string,
    options?: TurnOptions,
  ): Effect.Effect<TurnResult | undefined, TurnError | SessionNotFound>;
  /**
   * Close the session's cut-off turn as abandoned: a `turnAbandoned` protocol
   * node in the graph (the model never sees it), its pending row and journal
   * cleared. `undefined` when nothing is pending.
   */
  abandonPending(
    sessionId: string,
    options?: { readonly reason?: string; readonly wait?: boolean },
  ): Effect.Effect<AbandonedTurn | undefined, TurnError | SessionNotFound>;
  /**
   * Hold the session's lease until `releaseLease` (re-entrant: turns of this
   * runtime run under it). A host takes it before it inspects or resumes a
   * cut-off turn, so another process's live turn is never mistaken for one.
   */
  acquireLease(
    sessionId: string,
    options?: Pick<TurnOptions, "wait" | "onLeaseWait">,
  ): Effect.Effect<void, TurnError | SessionNotFound>;
  releaseLease(sessionId: string): Effect.Effect<void>;
  /**
   * The session's activity: every event with `seq > cursor`, each exactly once, then live.
   * Without a cursor: every event still kept in memory, then live.
   *
   * What is kept (per session, in this process): the events of the turn in flight; after a
   * turn, its events while the session is among the runtime's 64 that finished a turn most
   * recently (a new turn of the session drops them too); never more than 20,000 per session.
   * A cursor older than that fails the stream with `ActivityExpired` (it names the oldest
   * event kept) — nothing is skipped silently. Older activity is read from the store: the
   * transcript with `readView`; a daemon (`lash serve`) keeps every event in its own log.
   */
  observe(sessionId: string, cursor?: number): Stream.Stream<TurnActivity, ActivityExpired>;
  usage(sessionId: string): Effect.Effect<UsageSummary, SessionNotFound | StoreError>;
  /** Status of every plugin that reports one (MCP servers …). */
  pluginStatus(): { readonly [plugin: string]: unknown };
  /** The tools a session sees now. */
  tools(sessionId: string): Effect.Effect<readonly ToolSpec[], SessionNotFound | StoreError>;
  /** The tool definitions a session sees now (flags such as `readOnly` included). */
  toolDefinitions(sessionId: string): Effect.Effect<readonly ToolDefinition[], SessionNotFound | StoreError>;
  /**
   * Compact the session now: summarise its history since the last compaction (with the
   * summariser, in journaled stages) into a `compaction` node on its leaf. A cut-off turn is
   * resumed first. The replaced nodes stay in the graph; the next turn's prompt is the summary
   * plus what follows it. `undefined` when there is nothing to compact.
   */
  compact(
    sessionId: string,
    options?: { readonly instructions?: string } & Pick<TurnOptions, "wait" | "onLeaseWait" | "onEvent">,
  ): Effect.Effect<CompactionResult | undefined, TurnError | SessionNotFound>;
  /** Subagent sessions whose `parentLink.sessionId` is this session. */
  children(sessionId: string): Effect.Effect<readonly SessionRecord[], StoreError>;
}

export interface TurnHandle {
  readonly events: Stream.Stream<TurnActivity>;
  readonly result: Effect.Effect<TurnResult, TurnError | SessionNotFound>;
  readonly cancel: Effect.Effect<void>;
}

/** "pid 123 on host, since 2026-01-01 10:00:00 UTC (last heartbeat 2 s ago)" */
export function describeHolder(lease: SessionLease, now: number): string {
  const beat = Math.max(0, Math.round((now - lease.heartbeatAt) / 1000));
  const since = new Date(lease.acquiredAt).toISOString().replace("T", " ").slice(0, 19);
  return `pid ${lease.pid} on ${lease.host}, since ${since} UTC (last heartbeat ${beat} s ago)`;
}

/** The message of an unknown failure value. */
export function describe(e: unknown): string {
  if (typeof e === "object" && e !== null && "message" in e)
    return String((e as { message: unknown }).message);
  return String(e);
}
