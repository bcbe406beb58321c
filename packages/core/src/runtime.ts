import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  addUsage,
  type CompletedToolCall,
  type ContextProjector,
  costOf,
  type ExecResult,
  hashValue,
  type LlmRequest,
  type LlmResult,
  llmErrorInfo,
  type Message,
  messageText,
  type PendingToolCall,
  type ProtocolDriver,
  ResponseAccumulator,
  standardDriver,
  type ToolSpec,
  type TurnEffect,
  TurnMachine,
  type TurnOutcome,
  type Usage,
} from "@lash/sansio";
import {
  Clock,
  Context,
  Data,
  Deferred,
  Effect,
  Either,
  Fiber,
  Layer,
  Option,
  type Scope,
  Stream,
} from "effect";
import type { TurnActivity, TurnActivityBody } from "./activity.ts";
import { type DispatchOptions, runToolBatch } from "./dispatch.ts";
import { PluginHost, ToolCatalog } from "./host.ts";
import { ActivityHub } from "./hub.ts";
import { EffectJournal, Journal } from "./journal.ts";
import type { HookContext, Plugin, ProjectedResult } from "./plugin.ts";
import { IdGenerator, LlmProviders, ModelCatalog, type UnknownModel } from "./services.ts";
import {
  type CommitResult,
  type GraphNode,
  type NewNode,
  type PendingTurn,
  type SessionLease,
  type SessionMode,
  SessionNotFound,
  type SessionRecord,
  SessionStore,
  type StoreConflict,
  StoreError,
  type UsageRow,
} from "./store.ts";
import { type ToolDefinition, type ToolHost, type ToolUsage, toolSpec } from "./tool.ts";

// ---------------------------------------------------------------------------
// Public types

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

export interface CreateSessionOptions {
  readonly model: string;
  readonly mode?: SessionMode;
  readonly systemPrompt?: string;
  readonly title?: string;
  readonly cwd?: string;
  /** Restrict the session to these tool names. */
  readonly tools?: readonly string[];
  readonly parentLink?: SessionRecord["parentLink"];
  /** Extra plugins for this session (kept in memory by this runtime). */
  readonly plugins?: readonly Plugin[];
  /** Initial durable state entries (JSON values), e.g. a subagent's spawn record. */
  readonly state?: { readonly [key: string]: unknown };
}

export interface TurnInput {
  readonly text?: string;
  readonly messages?: readonly Message[];
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
    | "pendingTurn";
  readonly message: string;
  /** The turn's messages when it ran but could not commit. */
  readonly messages?: readonly Message[];
  /** `busy`: who holds the session's lease. */
  readonly holder?: SessionLease;
  /** `poisoned`, `pendingTurn`, `journalMismatch`: the cut-off turn. */
  readonly pendingTurnId?: string;
  readonly resumeAttempts?: number;
}> {}

export interface Comparison {
  readonly ancestor: string | null;
  readonly onlyA: readonly GraphNode[];
  readonly onlyB: readonly GraphNode[];
}

export interface UsageSummary {
  readonly rows: readonly UsageRow[];
  readonly total: Usage;
  readonly costUsd?: number;
  /** Per `(source, model)`. */
  readonly bySource: readonly {
    readonly source: string;
    readonly model: string;
    readonly usage: Usage;
    readonly costUsd?: number;
  }[];
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
  /** Activity after `cursor` (exactly once), then live. */
  observe(sessionId: string, cursor?: number): Stream.Stream<TurnActivity>;
  usage(sessionId: string): Effect.Effect<UsageSummary, SessionNotFound | StoreError>;
  /** Status of every plugin that reports one (MCP servers …). */
  pluginStatus(): { readonly [plugin: string]: unknown };
  /** The tools a session sees now. */
  tools(sessionId: string): Effect.Effect<readonly ToolSpec[], SessionNotFound | StoreError>;
  /** The tool definitions a session sees now (flags such as `readOnly` included). */
  toolDefinitions(sessionId: string): Effect.Effect<readonly ToolDefinition[], SessionNotFound | StoreError>;
  /** Subagent sessions whose `parentLink.sessionId` is this session. */
  children(sessionId: string): Effect.Effect<readonly SessionRecord[], StoreError>;
}

export interface TurnHandle {
  readonly events: Stream.Stream<TurnActivity>;
  readonly result: Effect.Effect<TurnResult, TurnError | SessionNotFound>;
  readonly cancel: Effect.Effect<void>;
}

export class LashRuntime extends Context.Tag("@lash/core/LashRuntime")<LashRuntime, LashRuntimeShape>() {
  static layer(options: RuntimeOptions = {}) {
    return Layer.scoped(LashRuntime, makeRuntime(options));
  }
}

// ---------------------------------------------------------------------------
// Implementation

const MAX_FRAME_SWITCHES = 16;

interface SessionLocal {
  readonly hub: ActivityHub;
  readonly lock: Effect.Semaphore;
  /** Guards this runtime's lease bookkeeping of the session. */
  readonly leaseLock: Effect.Semaphore;
}

/** A pid of this host that no longer exists. EPERM: it exists (another user's). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

const clockTime = (ms: number): string => new Date(ms).toISOString().replace("T", " ").slice(0, 19);

/** "pid 123 on host, since 2026-01-01 10:00:00 UTC (last heartbeat 2 s ago)" */
export function describeHolder(lease: SessionLease, now: number): string {
  const beat = Math.max(0, Math.round((now - lease.heartbeatAt) / 1000));
  return `pid ${lease.pid} on ${lease.host}, since ${clockTime(lease.acquiredAt)} UTC (last heartbeat ${beat} s ago)`;
}

function describe(e: unknown): string {
  if (typeof e === "object" && e !== null && "message" in e)
    return String((e as { message: unknown }).message);
  return String(e);
}

export const makeRuntime = (options: RuntimeOptions) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const ids = yield* IdGenerator;
    const providers = yield* LlmProviders;
    const catalog = yield* ModelCatalog;
    const runtimeScope = yield* Effect.scope;
    const journal = Option.getOrElse(
      yield* Effect.serviceOption(EffectJournal),
      () => new Journal(options.journal === false ? undefined : store),
    );
    const drivers: { readonly [mode: string]: ProtocolDriver } = {
      standard: standardDriver,
      ...options.drivers,
    };
    const givenHost = yield* Effect.serviceOption(PluginHost);
    const pluginHost = Option.isSome(givenHost)
      ? givenHost.value
      : yield* Effect.try({ try: () => PluginHost.make(options.plugins ?? []), catch: (e) => e }).pipe(
          Effect.orDie,
        );
    const toolCatalog = Option.getOrElse(yield* Effect.serviceOption(ToolCatalog), () =>
      ToolCatalog.make(pluginHost),
    );
    const codeExecutor = options.codeExecutor;
    const runtimeMaxTurns = options.maxTurns;
    const options_dispatch = options.dispatch;
    const projectorFactories = options.projectors ?? {};
    const locals = new Map<string, SessionLocal>();

    const local = (sessionId: string): Effect.Effect<SessionLocal> =>
      Effect.suspend(() => {
        const existing = locals.get(sessionId);
        if (existing) return Effect.succeed(existing);
        return Effect.map(ActivityHub.make(sessionId), (hub) => {
          const again = locals.get(sessionId);
          if (again) return again;
          const created: SessionLocal = {
            hub,
            lock: Effect.unsafeMakeSemaphore(1),
            leaseLock: Effect.unsafeMakeSemaphore(1),
          };
          locals.set(sessionId, created);
          return created;
        });
      });

    // ---- the session lease ----

    const leaseTtl = options.lease?.ttlMs ?? 30_000;
    const heartbeatMs = options.lease?.heartbeatMs ?? Math.max(1, Math.floor(leaseTtl / 3));
    const pollMs = options.lease?.pollMs ?? 250;
    const me = { pid: options.lease?.pid ?? process.pid, host: options.lease?.host ?? hostname() };
    const isAlive = options.lease?.isAlive ?? pidAlive;
    /** Unique per runtime: two runtimes of one process are two writers. */
    const holderId = `${me.host}:${me.pid}:${randomUUID()}`;
    const maxResumeAttempts = options.maxResumeAttempts ?? 3;
    const held = new Map<string, { count: number; readonly heartbeat: Fiber.RuntimeFiber<void> }>();

    /** A store failure as the turn's typed error (a missing session stays `SessionNotFound`). */
    const storeFailure =
      (sessionId: string) =>
      (e: {
        readonly _tag: string;
        readonly message: string;
      }): Effect.Effect<never, TurnError | SessionNotFound> =>
        e._tag === "SessionNotFound"
          ? Effect.fail(e as SessionNotFound)
          : Effect.fail(new TurnError({ sessionId, reason: "store", message: e.message }));

    /** One compare-and-set; a holder on this host whose pid is gone is replaced at once. */
    const tryLease = (sessionId: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis;
        const request = { sessionId, holder: holderId, pid: me.pid, host: me.host, now, ttlMs: leaseTtl };
        const first = yield* store.acquireLease(request);
        if (first.acquired || first.lease.host !== me.host || isAlive(first.lease.pid)) return first;
        return yield* store.acquireLease({ ...request, replacing: first.lease.holder });
      }).pipe(Effect.catchAll(storeFailure(sessionId)));

    const heartbeat = (sessionId: string): Effect.Effect<void> =>
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(heartbeatMs),
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.ignore(store.renewLease(sessionId, holderId, now, leaseTtl)),
          ),
        ),
      );

    const acquireLease: LashRuntimeShape["acquireLease"] = (sessionId, o = {}) =>
      Effect.gen(function* () {
        const l = yield* local(sessionId);
        let announced = false;
        for (;;) {
          // the compare-and-set and the bookkeeping happen together or not at all
          const got = yield* l.leaseLock.withPermits(1)(
            Effect.uninterruptible(
              Effect.gen(function* () {
                const mine = held.get(sessionId);
                if (mine) {
                  mine.count++;
                  return undefined;
                }
                const r = yield* tryLease(sessionId);
                if (!r.acquired) return r.lease;
                // forked from an uninterruptible region: the heartbeat itself must stay interruptible
                const fiber = yield* Effect.forkIn(Effect.interruptible(heartbeat(sessionId)), runtimeScope);
                held.set(sessionId, { count: 1, heartbeat: fiber });
                return undefined;
              }),
            ),
          );
          if (got === undefined) return;
          const now = yield* Clock.currentTimeMillis;
          if (!o.wait) {
            return yield* Effect.fail(
              new TurnError({
                sessionId,
                reason: "busy",
                holder: got,
                message:
                  `session ${sessionId} is in use by another lash process (${describeHolder(got, now)}). ` +
                  "Wait for it to finish (wait option / --wait), or watch it instead of writing to it. " +
                  `If that process is gone, its lease expires ${Math.max(0, Math.ceil((got.expiresAt - now) / 1000))} s after its last heartbeat.`,
              }),
            );
          }
          if (!announced) {
            announced = true;
            o.onLeaseWait?.(got);
          }
          yield* Effect.sleep(pollMs);
        }
      });

    const releaseLease: LashRuntimeShape["releaseLease"] = (sessionId) =>
      Effect.flatMap(local(sessionId), (l) =>
        l.leaseLock.withPermits(1)(
          Effect.gen(function* () {
            const mine = held.get(sessionId);
            if (!mine) return;
            mine.count--;
            if (mine.count > 0) return;
            held.delete(sessionId);
            yield* Fiber.interrupt(mine.heartbeat);
            yield* Effect.ignore(store.releaseLease(sessionId, holderId));
          }),
        ),
      );

    /** Run `effect` holding the session's lease (taken first, released after, also on interruption). */
    const withLease = <A, E, R>(
      sessionId: string,
      o: Pick<TurnOptions, "wait" | "onLeaseWait">,
      effect: Effect.Effect<A, E, R>,
    ): Effect.Effect<A, E | TurnError | SessionNotFound, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(
          restore(acquireLease(sessionId, o)),
          restore(effect).pipe(Effect.ensuring(releaseLease(sessionId))),
        ),
      );

    // leases still held when the runtime closes (a host that exits mid-turn) are given back
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        [...held.entries()],
        ([sessionId, h]) =>
          Effect.zipRight(
            Fiber.interrupt(h.heartbeat),
            Effect.ignore(store.releaseLease(sessionId, holderId)),
          ),
        { discard: true },
      ).pipe(Effect.zipRight(Effect.sync(() => held.clear()))),
    );

    const pluginsOf = (sessionId: string): readonly Plugin[] => pluginHost.plugins(sessionId);
    const catalogFor = (session: SessionRecord) => toolCatalog.forSession(session);
    const systemPromptFor = (session: SessionRecord) => pluginHost.systemPrompt(session);

    const createSession: LashRuntimeShape["createSession"] = (o) =>
      Effect.gen(function* () {
        const id = yield* ids.next("ses");
        const frameId = yield* ids.next("frame");
        const now = yield* Clock.currentTimeMillis;
        const mode = o.mode ?? "standard";
        if (!drivers[mode]) {
          return yield* Effect.fail(
            new StoreError({
              message: `mode "${mode}" is not available in this runtime (available: ${Object.keys(drivers).join(", ")})`,
            }),
          );
        }
        const record: SessionRecord = {
          id,
          model: o.model,
          mode,
          createdAt: now,
          updatedAt: now,
          leafId: null,
          headRevision: 0,
          turnCount: 0,
          frameId,
          state: { ...o.state, ...(o.tools ? { "lash.tools": [...o.tools] } : {}) },
          ...(o.title !== undefined ? { title: o.title } : {}),
          ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
          ...(o.systemPrompt !== undefined ? { systemPrompt: o.systemPrompt } : {}),
          ...(o.parentLink !== undefined ? { parentLink: o.parentLink } : {}),
        };
        const created = yield* store.createSession(record);
        if (o.plugins?.length) pluginHost.attach(id, o.plugins);
        return created;
      });

    const attachPlugins: LashRuntimeShape["attachPlugins"] = (sessionId, plugins) =>
      Effect.sync(() => pluginHost.attach(sessionId, plugins));

    const fork: LashRuntimeShape["fork"] = (sessionId, o = {}) =>
      Effect.gen(function* () {
        const source = yield* store.getSession(sessionId);
        const at = o.atNode ?? source.leafId;
        let frameId = source.frameId;
        if (at) {
          const node = yield* store.getNode(at);
          if (!node)
            return yield* Effect.fail(new SessionNotFound({ sessionId, message: `node ${at} not found` }));
          frameId = node.frameId;
        }
        const id = yield* ids.next("ses");
        const now = yield* Clock.currentTimeMillis;
        const { parentLink: _omit, ...rest } = source;
        return yield* store.fork({
          ...rest,
          id,
          title: o.title ?? (source.title ? `${source.title} (fork)` : "fork"),
          createdAt: now,
          updatedAt: now,
          leafId: at,
          headRevision: 0,
          turnCount: 0,
          frameId,
          origin: { sessionId, nodeId: at },
        });
      });

    const branch: LashRuntimeShape["branch"] = (sessionId, nodeId) =>
      Effect.gen(function* () {
        const session = yield* store.getSession(sessionId);
        const now = yield* Clock.currentTimeMillis;
        return yield* store.setLeaf(sessionId, nodeId, session.headRevision, now);
      });

    const pathOfLeaf = (leaf: string) =>
      Effect.gen(function* () {
        const node = yield* store.getNode(leaf);
        if (!node)
          return yield* Effect.fail(
            new SessionNotFound({ sessionId: "?", message: `node ${leaf} not found` }),
          );
        return yield* store.activePath(node.sessionId, leaf);
      });

    const compare: LashRuntimeShape["compare"] = (leafA, leafB) =>
      Effect.gen(function* () {
        const a = yield* pathOfLeaf(leafA);
        const b = yield* pathOfLeaf(leafB);
        let i = 0;
        while (i < a.length && i < b.length && a[i]!.id === b[i]!.id) i++;
        return { ancestor: i > 0 ? a[i - 1]!.id : null, onlyA: a.slice(i), onlyB: b.slice(i) };
      });

    const chronological: LashRuntimeShape["chronological"] = (sessionId) =>
      Effect.flatMap(store.getSession(sessionId), () => store.activePath(sessionId));

    const readView: LashRuntimeShape["readView"] = (sessionId) =>
      Effect.map(chronological(sessionId), (nodes) =>
        nodes.filter((n) => n.kind === "message").map((n) => n.payload as Message),
      );

    const usage: LashRuntimeShape["usage"] = (sessionId) =>
      Effect.gen(function* () {
        yield* store.getSession(sessionId);
        const rows = yield* store.usage(sessionId);
        let total: Usage = {};
        let cost: number | undefined;
        const groups = new Map<string, { source: string; model: string; usage: Usage; costUsd?: number }>();
        for (const r of rows) {
          total = addUsage(total, r.usage);
          if (r.costUsd !== undefined) cost = (cost ?? 0) + r.costUsd;
          const key = `${r.source}\u0000${r.model}`;
          const g = groups.get(key) ?? { source: r.source, model: r.model, usage: {} };
          g.usage = addUsage(g.usage, r.usage);
          if (r.costUsd !== undefined) g.costUsd = (g.costUsd ?? 0) + r.costUsd;
          groups.set(key, g);
        }
        return {
          rows,
          total,
          ...(cost !== undefined ? { costUsd: cost } : {}),
          bySource: [...groups.values()],
        };
      });

    const tools: LashRuntimeShape["tools"] = (sessionId) =>
      Effect.gen(function* () {
        const session = yield* store.getSession(sessionId);
        const map = yield* catalogFor(session);
        return [...map.values()].map(toolSpec);
      });

    const toolDefinitions: LashRuntimeShape["toolDefinitions"] = (sessionId) =>
      Effect.gen(function* () {
        const session = yield* store.getSession(sessionId);
        const map = yield* catalogFor(session);
        return [...map.values()];
      });

    // ---- the turn ----

    interface RunArgs {
      readonly sessionId: string;
      readonly input: readonly Message[];
      readonly options: TurnOptions;
      readonly pending?: PendingTurn;
      readonly cancel: Deferred.Deferred<void>;
    }

    const runOneTurn = (args: RunArgs): Effect.Effect<TurnResult, TurnError | SessionNotFound> =>
      Effect.gen(function* () {
        const { sessionId, options, cancel } = args;
        const startedAt = yield* Clock.currentTimeMillis;
        const session = yield* store.getSession(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
        const l = yield* local(sessionId);
        const turnId = args.pending?.turnId ?? (yield* ids.next("turn"));
        const resumed = args.pending !== undefined;
        const input = args.input.map((m, i) => (m.id ? m : { ...m, id: `${turnId}.in${i}` }));
        // a turn that cannot reach a model is refused before it is written down as pending
        const provider = yield* providers
          .forModel(session.model)
          .pipe(
            Effect.catchAll((e: UnknownModel) =>
              Effect.fail(new TurnError({ sessionId, reason: "unknownModel", message: e.message })),
            ),
          );
        if (!resumed) {
          yield* store
            .beginTurn({
              sessionId,
              turnId,
              input: { messages: input, maxTurns: options.maxTurns },
              expectedRevision: session.headRevision,
              startedAt,
            })
            .pipe(Effect.catchAll(storeFailure(sessionId)));
        }
        const emit = (body: TurnActivityBody) =>
          Effect.map(l.hub.publish(turnId, body), (event) => {
            options.onEvent?.(event);
          });
        const hook: HookContext = { session, turnId };
        const plugins = pluginsOf(sessionId);
        const namedHooks = pluginHost.hooks(sessionId);
        const projector = pluginHost.projector(sessionId);
        const project = (
          call: Parameters<NonNullable<typeof projector>>[1],
          out: Parameters<NonNullable<typeof projector>>[2],
        ) =>
          projector ? projector(hook, call, out) : Effect.succeed<ProjectedResult>({ content: out.content });

        yield* emit({ type: "turnStarted", input, resumed, model: session.model });
        for (const p of plugins) {
          if (p.restore) yield* Effect.ignore(p.restore(hook, session.state[p.name]));
        }

        const info = catalog.info(session.model);
        const path = yield* store.activePath(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
        const history = path
          .filter((n) => n.kind === "message" && n.frameId === session.frameId)
          .map((n) => n.payload as Message);

        // beforeTurn hooks (a failure or abort stops the turn before any model call)
        let turnInput = input;
        let abort: string | undefined;
        for (const { plugin, hooks } of namedHooks) {
          if (!hooks.beforeTurn || abort) continue;
          const r = yield* Effect.either(hooks.beforeTurn(hook, turnInput));
          if (Either.isLeft(r)) abort = `the ${plugin} plugin failed before the turn: ${describe(r.left)}`;
          else if (r.right && "abort" in r.right) abort = r.right.abort;
          else if (r.right && "messages" in r.right) turnInput = [...turnInput, ...r.right.messages];
        }

        const driver = drivers[session.mode] ?? standardDriver;
        const initialCatalog = yield* catalogFor(session);
        const initialSystem = systemPromptFor(session);
        const projectorFor = projectorFactories[session.mode];
        const machine = new TurnMachine({
          sessionId,
          turnId,
          model: session.model,
          driver,
          history,
          input: turnInput,
          tools: [...initialCatalog.values()].map(toolSpec),
          maxTurns:
            options.maxTurns ??
            (args.pending?.input as { maxTurns?: number } | undefined)?.maxTurns ??
            runtimeMaxTurns ??
            50,
          ...(initialSystem !== undefined ? { system: initialSystem } : {}),
          ...(info ? { contextWindow: info.contextWindow } : {}),
          ...(projectorFor ? { projector: projectorFor({ ...hook, tools: () => catalogNow }) } : {}),
        });
        if (abort !== undefined) {
          machine.cancel();
        }
        const ids2 = { sessionId, turnId };
        const toolHost: ToolHost = {
          runtime: self,
          session,
          emit: (event) => {
            Effect.runFork(emit(event));
          },
        };
        const keyOf = (e: TurnEffect & { effectId: number; iteration: number }) =>
          `${sessionId}:${turnId}:${e.iteration}:${e.kind}:${e.effectId}`;
        let catalogNow = initialCatalog;
        let toolCalls = 0;
        const extraUsage: ToolUsage[] = [];
        let turnCost: number | undefined;
        let done: Extract<TurnEffect, { kind: "done" }> | undefined;
        const isCancelled = () => Effect.map(Deferred.poll(cancel), Option.isSome);

        const callModel = (request: LlmRequest) =>
          Effect.gen(function* () {
            let req = request;
            for (const { hooks } of namedHooks) {
              if (hooks.transformContext)
                req = yield* Effect.orElseSucceed(hooks.transformContext(hook, req), () => req);
            }
            for (const { hooks } of namedHooks)
              if (hooks.beforeLlmCall) yield* Effect.ignore(hooks.beforeLlmCall(hook, req));
            const acc = new ResponseAccumulator();
            const consume = Stream.runForEach(provider.stream(req), (event) =>
              Effect.gen(function* () {
                acc.push(event);
                switch (event.type) {
                  case "textDelta":
                    return yield* emit({ type: "textDelta", text: event.text });
                  case "reasoningDelta":
                    return yield* emit({ type: "reasoningDelta", text: event.text });
                  case "toolCallStart":
                    return yield* emit({ type: "toolCallDelta", callId: event.id, name: event.name });
                  case "toolCallArgsDelta":
                    return yield* emit({ type: "toolCallDelta", callId: event.id, argsDelta: event.delta });
                  case "retry":
                    return yield* emit({
                      type: "retry",
                      attempt: event.attempt,
                      delayMs: event.delayMs,
                      error: event.error,
                      ...(event.reason !== undefined ? { reason: event.reason } : {}),
                      ...(event.maxAttempts !== undefined ? { maxAttempts: event.maxAttempts } : {}),
                    });
                  case "attemptReset":
                    return yield* emit({ type: "attemptReset", attempt: event.attempt });
                  default:
                    return;
                }
              }),
            );
            const outcome = yield* Effect.raceFirst(
              Effect.map(Effect.either(consume), (r) => ({ cancelled: false as const, r })),
              Effect.as(Deferred.await(cancel), { cancelled: true as const }),
            );
            if (outcome.cancelled) {
              const partial = acc.result();
              return { ok: true, response: { ...partial, stopReason: "cancelled" } } satisfies LlmResult;
            }
            if (Either.isLeft(outcome.r))
              return { ok: false, error: llmErrorInfo(outcome.r.left) } satisfies LlmResult;
            const response = acc.result();
            for (const { hooks } of namedHooks)
              if (hooks.afterLlmResponse) yield* Effect.ignore(hooks.afterLlmResponse(hook, response));
            return { ok: true, response } satisfies LlmResult;
          });

        const failTurn = (e: { readonly _tag: string; readonly message: string }) =>
          e._tag === "JournalMismatch"
            ? new TurnError({
                sessionId,
                reason: "journalMismatch",
                pendingTurnId: turnId,
                message: `session ${sessionId}: the cut-off turn ${turnId} cannot be resumed: ${e.message}`,
              })
            : new TurnError({ sessionId, reason: "store", message: e.message });

        for (let guard = 0; guard < 1_000_000; guard++) {
          const effect = machine.poll();
          if (!effect) {
            machine.cancel("internal error: the turn machine stalled");
            continue;
          }
          if (effect.kind === "done") {
            done = effect;
            break;
          }
          switch (effect.kind) {
            case "emit": {
              const ev = effect.event;
              if (ev.type === "llmRequest")
                yield* emit({
                  type: "llmRequest",
                  iteration: ev.iteration,
                  messageCount: ev.messageCount,
                  tools: ev.tools,
                });
              else if (ev.type === "usage") {
                const c = costOf(ev.usage, info?.pricing);
                if (c !== undefined) turnCost = (turnCost ?? 0) + c;
                yield* emit({
                  type: "usage",
                  usage: ev.usage,
                  cumulative: ev.cumulative,
                  ...(turnCost !== undefined ? { costUsd: turnCost } : {}),
                });
              } else if (ev.type === "error")
                yield* emit({ type: "error", message: ev.message, kind: ev.kind });
              else if (ev.type === "protocol")
                yield* emit({ type: "plugin", plugin: driver.name, name: ev.name, data: ev.data });
              continue;
            }
            case "progress":
              yield* emit({ type: "messages", messages: effect.messages });
              continue;
            case "log":
              continue;
            default:
              break;
          }
          if (yield* isCancelled()) {
            machine.cancel("cancelled by the user");
            continue;
          }
          const key = keyOf(effect);
          switch (effect.kind) {
            case "syncEnvironment": {
              const r = yield* journal
                .once(
                  ids2,
                  key,
                  { kind: effect.kind, effectId: effect.effectId, iteration: effect.iteration },
                  Effect.gen(function* () {
                    catalogNow = yield* catalogFor(session);
                    const system = systemPromptFor(session);
                    return {
                      tools: [...catalogNow.values()].map(toolSpec),
                      ...(system !== undefined ? { system } : {}),
                    };
                  }),
                )
                .pipe(Effect.mapError(failTurn));
              machine.respond({ kind: "environmentSynced", effectId: effect.effectId, ...r.value });
              break;
            }
            case "callLlm": {
              const t0 = yield* Clock.currentTimeMillis;
              const { request } = effect;
              const envelope = {
                kind: effect.kind,
                effectId: effect.effectId,
                iteration: effect.iteration,
                request,
              };
              const r = yield* journal
                .once(ids2, key, envelope, callModel(request))
                .pipe(Effect.mapError(failTurn));
              const t1 = yield* Clock.currentTimeMillis;
              if (r.replayed && r.value.ok) {
                const text = r.value.response.parts
                  .flatMap((p) => (p.type === "text" ? [p.text] : []))
                  .join("");
                if (text) yield* emit({ type: "textDelta", text });
              }
              if (r.value.ok) {
                const c = costOf(r.value.response.usage, info?.pricing);
                yield* emit({
                  type: "llmResponse",
                  iteration: effect.iteration,
                  stopReason: r.value.response.stopReason,
                  ...(r.value.response.responseId !== undefined
                    ? { responseId: r.value.response.responseId }
                    : {}),
                  ...(r.value.response.providerReason !== undefined
                    ? { providerReason: r.value.response.providerReason }
                    : {}),
                  usage: r.value.response.usage,
                  ...(c !== undefined ? { costUsd: c } : {}),
                  durationMs: t1 - t0,
                  replayed: r.replayed,
                });
              }
              machine.respond({
                kind: "llmComplete",
                effectId: effect.effectId,
                result: r.value,
                textStreamed: !r.replayed,
              });
              break;
            }
            case "runTools": {
              toolCalls += effect.calls.length;
              const envelope = {
                kind: effect.kind,
                effectId: effect.effectId,
                iteration: effect.iteration,
                // lash's call ids are derived, not input: a journal written before they existed still matches
                calls: effect.calls.map(({ lashCallId: _, ...call }) => call),
              };
              const batch = runToolBatch(
                {
                  hook,
                  catalog: catalogNow,
                  hooks: namedHooks,
                  project,
                  journal,
                  batchKey: key,
                  emit,
                  cancel,
                  host: toolHost,
                  ...(options_dispatch ? { options: options_dispatch } : {}),
                },
                effect.calls,
              );
              const r = yield* journal.once(ids2, key, envelope, batch).pipe(Effect.mapError(failTurn));
              if (r.replayed) {
                for (const res of r.value.results) {
                  yield* emit({
                    type: "toolCompleted",
                    callId: res.callId,
                    ...(res.lashCallId !== undefined ? { lashCallId: res.lashCallId } : {}),
                    name: res.name,
                    isError: res.isError,
                    content: res.content,
                    ...(res.details !== undefined ? { details: res.details } : {}),
                    durationMs: res.durationMs ?? 0,
                    replayed: true,
                  });
                }
              }
              extraUsage.push(...r.value.usage);
              machine.respond({ kind: "toolResults", effectId: effect.effectId, results: r.value.results });
              if (r.value.cancelled) machine.cancel("cancelled by the user");
              break;
            }
            case "execCode": {
              const executor = codeExecutor;
              const envelope = {
                kind: effect.kind,
                effectId: effect.effectId,
                iteration: effect.iteration,
                language: effect.language,
                code: effect.code,
              };
              const execCtx: ExecContext = {
                ...hook,
                iteration: effect.iteration,
                effectId: effect.effectId,
                key,
                frameId: session.frameId,
                tools: catalogNow,
                emit,
                cancelled: cancel,
                dispatch: (calls, label) =>
                  Effect.gen(function* () {
                    toolCalls += calls.length;
                    const batchKey = `${key}:${label}`;
                    const run = runToolBatch(
                      {
                        hook,
                        catalog: catalogNow,
                        hooks: namedHooks,
                        project,
                        journal,
                        batchKey,
                        emit,
                        cancel,
                        host: toolHost,
                        ...(options_dispatch ? { options: options_dispatch } : {}),
                      },
                      calls,
                    );
                    const r = yield* journal
                      .once(ids2, batchKey, { calls }, run)
                      .pipe(Effect.mapError(failTurn));
                    extraUsage.push(...r.value.usage);
                    return r.value.results;
                  }),
                complete: (request, label) =>
                  Effect.gen(function* () {
                    const model = request.model ?? session.model;
                    const sub =
                      model === session.model
                        ? provider
                        : yield* providers
                            .forModel(model)
                            .pipe(
                              Effect.mapError(
                                (e) =>
                                  new TurnError({ sessionId, reason: "unknownModel", message: e.message }),
                              ),
                            );
                    const full: LlmRequest = { ...request, model };
                    const subKey = `${key}:${label}`;
                    const run = Effect.gen(function* () {
                      const acc = new ResponseAccumulator();
                      const r = yield* Effect.either(
                        Stream.runForEach(sub.stream(full), (e) => Effect.sync(() => acc.push(e))),
                      );
                      if (Either.isLeft(r))
                        return { ok: false, error: llmErrorInfo(r.left) } satisfies LlmResult;
                      return { ok: true, response: acc.result() } satisfies LlmResult;
                    });
                    const r = yield* journal.once(ids2, subKey, full, run).pipe(Effect.mapError(failTurn));
                    if (r.value.ok && Object.keys(r.value.response.usage).length > 0) {
                      const subInfo = catalog.info(model);
                      const c = costOf(r.value.response.usage, subInfo?.pricing);
                      extraUsage.push({
                        source: "llm.query",
                        model,
                        usage: r.value.response.usage,
                        ...(c !== undefined ? { costUsd: c } : {}),
                      });
                    }
                    return r.value;
                  }),
              };
              const run = executor
                ? executor.execute(execCtx, effect.language, effect.code).pipe(
                    Effect.catchAll((e) =>
                      e instanceof TurnError
                        ? Effect.fail(e)
                        : Effect.succeed<ExecResult>({
                            ok: false,
                            output: [],
                            error: `the code executor failed: ${describe(e)}`,
                          }),
                    ),
                  )
                : Effect.succeed<ExecResult>({
                    ok: false,
                    output: [],
                    error: `no executor for ${effect.language} cells in this runtime`,
                  });
              const r = yield* journal
                .once(ids2, key, envelope, run)
                .pipe(Effect.mapError((e) => (e instanceof TurnError ? e : failTurn(e))));
              if (r.replayed && executor?.replayed)
                yield* Effect.ignore(executor.replayed(execCtx, effect.language, effect.code, r.value));
              machine.respond({ kind: "execResult", effectId: effect.effectId, result: r.value });
              break;
            }
            case "checkpoint": {
              const envelope = {
                kind: effect.kind,
                effectId: effect.effectId,
                iteration: effect.iteration,
                checkpoint: effect.checkpoint,
              };
              const collect = Effect.gen(function* () {
                const out: Message[] = [];
                for (const { hooks } of namedHooks) {
                  if (!hooks.onCheckpoint) continue;
                  const r = yield* Effect.orElseSucceed(
                    hooks.onCheckpoint(hook, effect.checkpoint),
                    () => undefined,
                  );
                  if (r) out.push(...r);
                }
                return out;
              });
              const r = yield* journal.once(ids2, key, envelope, collect).pipe(Effect.mapError(failTurn));
              machine.respond({ kind: "checkpointDelivered", effectId: effect.effectId, messages: r.value });
              break;
            }
          }
        }
        if (!done)
          return yield* Effect.fail(
            new TurnError({ sessionId, reason: "store", message: "the turn did not finish" }),
          );

        let outcome = done.outcome;
        // a plugin that aborts the turn stops it before the model is called; the input is still kept
        const turnMessages: readonly Message[] =
          abort !== undefined && done.messages.length === 0 ? turnInput : done.messages;
        if (abort !== undefined) outcome = { type: "stopped", reason: "pluginAbort", message: abort };

        // ---- commit ----
        const now = yield* Clock.currentTimeMillis;
        let parent = session.leafId;
        const nodes: NewNode[] = [];
        for (const message of turnMessages) {
          nodes.push({
            id: message.id,
            sessionId,
            parentId: parent,
            frameId: session.frameId,
            kind: "message",
            turnId,
            payload: message,
            createdAt: now,
          });
          parent = message.id;
        }
        let frameId: string | undefined;
        if (outcome.type === "frameSwitch") {
          frameId = outcome.frameId;
          nodes.push({
            id: `${turnId}.frame`,
            sessionId,
            parentId: parent,
            frameId: outcome.frameId,
            kind: "frame",
            turnId,
            payload: {
              frameId: outcome.frameId,
              previous: session.frameId,
              task: outcome.task,
              seed: outcome.seed ?? null,
              reason: "continue_as",
            },
            createdAt: now,
          });
          parent = `${turnId}.frame`;
        }
        const cost = costOf(done.usage, info?.pricing);
        const hasUsage = Object.keys(done.usage).length > 0;
        const usageRows: UsageRow[] = hasUsage
          ? [
              {
                turnId,
                source: "turn",
                model: session.model,
                usage: done.usage,
                ...(cost !== undefined ? { costUsd: cost } : {}),
              },
            ]
          : [];
        for (const u of extraUsage) usageRows.push({ turnId, ...u });
        let state: { [key: string]: unknown } | undefined;
        for (const p of plugins) {
          if (!p.snapshot) continue;
          const snap = yield* Effect.either(p.snapshot(hook));
          if (Either.isRight(snap) && snap.right !== undefined) {
            state ??= { ...session.state };
            state[p.name] = snap.right;
          }
        }
        const firstText = input.map(messageText).join(" ").trim();
        const title = session.title ?? (firstText ? firstText.replace(/\s+/g, " ").slice(0, 80) : undefined);
        const hash = hashValue({ turnId, messages: turnMessages, outcome });
        const commit = yield* store
          .commit({
            sessionId,
            turnId,
            hash,
            expectedRevision: args.pending?.expectedRevision ?? session.headRevision,
            nodes,
            leafId: parent,
            usage: usageRows,
            updatedAt: now,
            ...(title !== undefined ? { title } : {}),
            ...(frameId !== undefined ? { frameId } : {}),
            ...(state !== undefined ? { state } : {}),
          })
          .pipe(
            Effect.catchAll((e) =>
              e._tag === "StoreConflict"
                ? Effect.fail(
                    new TurnError({
                      sessionId,
                      reason: "conflict",
                      message: `${e.message} — another writer committed to this session first; this turn's messages were not committed (they are returned on this error and its journal is kept)`,
                      messages: turnMessages,
                    }),
                  )
                : storeFailure(sessionId)(e),
            ),
          );
        for (const { hooks } of namedHooks) {
          if (hooks.afterCommit)
            yield* Effect.ignore(hooks.afterCommit(hook, { headRevision: commit.headRevision }));
        }
        yield* emit({
          type: "turnFinished",
          outcome,
          usage: done.usage,
          ...(cost !== undefined ? { costUsd: cost } : {}),
          headRevision: commit.headRevision,
        });
        const endedAt = yield* Clock.currentTimeMillis;
        const text =
          outcome.type === "finished" && outcome.finish.kind === "assistantMessage"
            ? outcome.finish.text
            : outcome.type === "stopped"
              ? (outcome.text ?? "")
              : "";
        return {
          sessionId,
          turnId,
          outcome,
          text,
          ...(outcome.type === "finished" && outcome.finish.kind !== "assistantMessage"
            ? { finalValue: outcome.finish.value }
            : {}),
          usage: done.usage,
          ...(cost !== undefined ? { costUsd: cost } : {}),
          messages: turnMessages,
          headRevision: commit.headRevision,
          toolCalls,
          durationMs: endedAt - startedAt,
          resumed,
        } satisfies TurnResult;
      });

    /** A logical turn: the turn plus follow-up turns after frame switches (at most 16). */
    const runLogical = (args: RunArgs) =>
      Effect.gen(function* () {
        let result = yield* runOneTurn(args);
        for (let n = 0; result.outcome.type === "frameSwitch" && n < MAX_FRAME_SWITCHES; n++) {
          const task = result.outcome.task;
          result = yield* runOneTurn({
            sessionId: args.sessionId,
            options: args.options,
            cancel: args.cancel,
            input: [{ id: "", role: "user", parts: [{ type: "text", text: task }] }],
          });
        }
        return result;
      });

    const inputMessages = (input: TurnInput): Message[] => {
      const out: Message[] = [...(input.messages ?? [])];
      if (input.text !== undefined)
        out.push({ id: "", role: "user", parts: [{ type: "text", text: input.text }] });
      return out;
    };

    const inputText = (pending: PendingTurn): string =>
      ((pending.input as { messages?: Message[] } | undefined)?.messages ?? [])
        .filter((m) => m.role === "user")
        .map(messageText)
        .join("\n")
        .trim();

    /** Resume the cut-off turn, if any (under the lock and lease). `onResume` is told before it runs. */
    const resumeLocked = (
      sessionId: string,
      options: TurnOptions,
      cancel: Deferred.Deferred<void>,
      onResume?: () => void,
    ) =>
      Effect.gen(function* () {
        const pending = yield* store.pendingTurn(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
        if (!pending) return undefined;
        // the poison-turn guard: every resume is counted before it runs, so one that crashes stays counted
        const attempts = pending.resumeAttempts ?? 0;
        if (attempts >= maxResumeAttempts) {
          return yield* Effect.fail(
            new TurnError({
              sessionId,
              reason: "poisoned",
              pendingTurnId: pending.turnId,
              resumeAttempts: attempts,
              message:
                `session ${sessionId}: the cut-off turn ${pending.turnId} was resumed ${attempts} times and ` +
                "the process ended each time before it finished, so it is not resumed again automatically. " +
                "Abandon it (it stays visible as abandoned) or fork the session from before it.",
            }),
          );
        }
        yield* store
          .countResumeAttempt(sessionId, pending.turnId)
          .pipe(Effect.catchAll(storeFailure(sessionId)));
        onResume?.();
        const stored = pending.input as { messages?: Message[] } | undefined;
        return yield* runLogical({ sessionId, input: stored?.messages ?? [], options, pending, cancel });
      });

    /** A new turn: first the cut-off one (resumed, or refused when `resumePending: false`). */
    const newTurnLocked = (
      sessionId: string,
      input: TurnInput,
      options: TurnOptions,
      cancel: Deferred.Deferred<void>,
      onResume?: () => void,
    ) =>
      Effect.gen(function* () {
        if (options.resumePending !== false) yield* resumeLocked(sessionId, options, cancel, onResume);
        else {
          const pending = yield* store.pendingTurn(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
          if (pending) {
            const text = inputText(pending);
            return yield* Effect.fail(
              new TurnError({
                sessionId,
                reason: "pendingTurn",
                pendingTurnId: pending.turnId,
                resumeAttempts: pending.resumeAttempts ?? 0,
                message:
                  `session ${sessionId} has a turn that was cut off before it finished (${pending.turnId}` +
                  `${text ? `: "${text.length > 80 ? `${text.slice(0, 79)}…` : text}"` : ""}). ` +
                  "Resume it or abandon it before starting a new turn.",
              }),
            );
          }
        }
        return yield* runLogical({ sessionId, input: inputMessages(input), options, cancel });
      });

    const withLock = <A, E, R>(sessionId: string, effect: Effect.Effect<A, E, R>) =>
      Effect.flatMap(local(sessionId), (l) => l.lock.withPermits(1)(effect));

    /** Run `body` with a cancel signal; interrupting the caller signals cancel and waits for the commit. */
    const cancellable = <A, E>(body: (cancel: Deferred.Deferred<void>) => Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        const cancel = yield* Deferred.make<void>();
        const fiber = yield* Effect.forkIn(body(cancel), runtimeScope);
        return yield* Fiber.join(fiber).pipe(
          Effect.onInterrupt(() => Effect.zipRight(Deferred.succeed(cancel, undefined), Fiber.await(fiber))),
        );
      });

    const turn: LashRuntimeShape["turn"] = (sessionId, input, options = {}) =>
      cancellable((cancel) =>
        withLock(sessionId, withLease(sessionId, options, newTurnLocked(sessionId, input, options, cancel))),
      );

    const resumePending: LashRuntimeShape["resumePending"] = (sessionId, options = {}) =>
      cancellable((cancel) =>
        withLock(sessionId, withLease(sessionId, options, resumeLocked(sessionId, options, cancel))),
      );

    const abandonPending: LashRuntimeShape["abandonPending"] = (sessionId, o = {}) =>
      withLock(
        sessionId,
        withLease(
          sessionId,
          { ...(o.wait !== undefined ? { wait: o.wait } : {}) },
          Effect.gen(function* () {
            const fail = storeFailure(sessionId);
            const pending = yield* store.pendingTurn(sessionId).pipe(Effect.catchAll(fail));
            if (!pending) return undefined;
            const session = yield* store.getSession(sessionId).pipe(Effect.catchAll(fail));
            const entries = yield* store
              .journalForTurn(sessionId, pending.turnId)
              .pipe(Effect.catchAll(fail));
            const completedSteps = entries.filter((e) => e.status === "completed").length;
            const now = yield* Clock.currentTimeMillis;
            const input = inputText(pending);
            const nodeId = `${pending.turnId}.abandoned`;
            const payload = {
              type: "turnAbandoned",
              turnId: pending.turnId,
              input,
              reason: o.reason ?? "abandoned by the user",
              startedAt: pending.startedAt,
              completedSteps,
              resumeAttempts: pending.resumeAttempts ?? 0,
            };
            const commit = yield* store
              .commit({
                sessionId,
                turnId: pending.turnId,
                hash: hashValue({ turnId: pending.turnId, abandoned: payload }),
                expectedRevision: session.headRevision,
                nodes: [
                  {
                    id: nodeId,
                    sessionId,
                    parentId: session.leafId,
                    frameId: session.frameId,
                    kind: "protocol",
                    turnId: pending.turnId,
                    payload,
                    createdAt: now,
                  },
                ],
                leafId: nodeId,
                usage: [],
                updatedAt: now,
              })
              .pipe(Effect.catchAll(fail));
            return {
              sessionId,
              turnId: pending.turnId,
              input,
              completedSteps,
              resumeAttempts: pending.resumeAttempts ?? 0,
              headRevision: commit.headRevision,
            } satisfies AbandonedTurn;
          }),
        ),
      );

    const startTurn: LashRuntimeShape["startTurn"] = (sessionId, input, options = {}) =>
      Effect.gen(function* () {
        const l = yield* local(sessionId);
        const cancel = yield* Deferred.make<void>();
        const from = l.hub.lastSeq;
        const resultDeferred = yield* Deferred.make<TurnResult, TurnError | SessionNotFound>();
        // a cut-off turn is finished first: then the stream ends after the second turn, not the first
        let turnsLeft = 1;
        const body = withLock(
          sessionId,
          withLease(
            sessionId,
            options,
            newTurnLocked(sessionId, input, options, cancel, () => {
              turnsLeft = 2;
            }),
          ),
        ).pipe(
          Effect.tapError((e) =>
            l.hub.publish("", { type: "error", kind: "turnFailed", message: e.message }),
          ),
        );
        yield* Effect.forkIn(Effect.intoDeferred(body, resultDeferred), runtimeScope);
        const ends = (e: TurnActivity) => {
          if (e.type === "error" && e.kind === "turnFailed") return true;
          if (e.type === "turnFinished" && e.outcome.type !== "frameSwitch") turnsLeft--;
          return turnsLeft === 0;
        };
        return {
          events: l.hub.observe(from).pipe(Stream.takeUntil(ends)),
          result: Deferred.await(resultDeferred),
          cancel: Deferred.succeed(cancel, undefined).pipe(Effect.asVoid),
        };
      });

    const observe: LashRuntimeShape["observe"] = (sessionId, cursor = 0) =>
      Stream.unwrap(Effect.map(local(sessionId), (l) => l.hub.observe(cursor)));

    const pluginStatus = () => pluginHost.status();

    const deleteSession: LashRuntimeShape["deleteSession"] = (id) =>
      Effect.zipRight(
        store.deleteSession(id),
        Effect.sync(() => {
          locals.delete(id);
          pluginHost.detach(id);
        }),
      );

    const self: LashRuntimeShape = {
      createSession,
      getSession: (id) => store.getSession(id),
      listSessions: (o) => store.listSessions(o),
      deleteSession,
      attachPlugins,
      fork,
      branch,
      compare,
      readView,
      chronological,
      turn,
      startTurn,
      resumePending,
      abandonPending,
      acquireLease,
      releaseLease,
      observe,
      usage,
      pluginStatus,
      tools,
      toolDefinitions,
      children: (id) => store.children(id),
    };
    return self;
  });
