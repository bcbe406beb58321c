import type {
  ContextProjector,
  LlmProvider,
  Message,
  ModelInfo,
  ProtocolDriver,
  ToolSpec,
} from "@lash/sansio";
import type * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type { TurnActivityBody } from "../activity.ts";
import type { ApprovalRecord, Grants } from "../approval.ts";
import type { CompactionOptions, CompactionPayload } from "../compaction/compact.ts";
import type { Calibration, RunningEstimate } from "../compaction/estimate.ts";
import type { DispatchOptions, NamedHooks } from "../dispatch.ts";
import type { ApproverShape, GovernanceShape } from "../governance.ts";
import type { PluginHostShape, ToolCatalogShape } from "../host.ts";
import type { ActivityHub } from "../hub.ts";
import type { Journal } from "../journal.ts";
import type { Leases } from "../lease.ts";
import type { HookContext, Plugin, ProjectedResult } from "../plugin.ts";
import type { CodeExecutor, LashRuntimeShape, ProjectorContext, TurnError } from "../runtime-api.ts";
import type { IdGeneratorShape, LlmProvidersShape, ModelCatalogShape } from "../services.ts";
import type { NewNode, SessionRecord, SessionStoreShape } from "../store.ts";
import type { ToolDefinition, ToolHost, ToolUsage } from "../tool.ts";
import type { DigestCache } from "./request-digest.ts";

/** Per session, per runtime: the activity hub and the two locks. */
export interface SessionLocal {
  readonly hub: ActivityHub;
  readonly lock: Effect.Semaphore;
  /** Guards this runtime's lease bookkeeping of the session. */
  readonly leaseLock: Effect.Semaphore;
}

/** The runtime's services, as every turn sees them. */
export interface RuntimeContext {
  readonly store: SessionStoreShape;
  readonly ids: IdGeneratorShape;
  readonly providers: LlmProvidersShape;
  readonly catalog: ModelCatalogShape;
  readonly journal: Journal;
  readonly drivers: { readonly [mode: string]: ProtocolDriver };
  readonly pluginHost: PluginHostShape;
  readonly toolCatalog: ToolCatalogShape;
  readonly codeExecutor: CodeExecutor | undefined;
  readonly maxTurns: number | undefined;
  readonly maxResumeAttempts: number;
  readonly dispatch: DispatchOptions | undefined;
  readonly projectors: { readonly [mode: string]: (ctx: ProjectorContext) => ContextProjector };
  readonly runtimeScope: Scope.Scope;
  readonly leases: Leases;
  readonly local: (sessionId: string) => Effect.Effect<SessionLocal>;
  /** The runtime itself, lent to tools that drive it (subagents). Set once the runtime is built. */
  readonly self: () => LashRuntimeShape;
  /** Decides each tool call; absent when everything is allowed (`Governance.allowAll`): no approval step at all. */
  readonly governance: GovernanceShape | undefined;
  /** Answers the calls governance asks about (absent: asking fails the turn with `approval`). */
  readonly approver: ApproverShape | undefined;
  /** Per session: tools approved for the rest of the session, each up to a risk level (rebuilt from the graph when a session is first opened). */
  readonly grants: Map<string, Grants>;
  /** When and how sessions are compacted (`RuntimeOptions.compaction`). */
  readonly compaction: CompactionOptions;
  /** Per session: reported / estimated tokens of the last model call that reported usage. */
  readonly calibration: Calibration;
}

/**
 * One turn's world: what every effect executor reads. Built once when the turn opens;
 * the few fields that change during the turn (the tool catalog after an environment
 * sync, counters, extra usage) are the mutable ones below.
 */
export interface TurnScope {
  readonly rt: RuntimeContext;
  readonly sessionId: string;
  readonly turnId: string;
  readonly session: SessionRecord;
  readonly ids: { readonly sessionId: string; readonly turnId: string };
  readonly hook: HookContext;
  readonly plugins: readonly Plugin[];
  readonly hooks: readonly NamedHooks[];
  readonly provider: LlmProvider;
  readonly info: ModelInfo | undefined;
  /** Publishes on the session's hub (numbered, timestamped) and to the caller's `onEvent`. Synchronous. */
  readonly emit: (body: TurnActivityBody) => void;
  readonly emitEffect: (body: TurnActivityBody) => Effect.Effect<void>;
  readonly cancel: Deferred.Deferred<void>;
  /** Aborted when `cancel` completes: the in-flight model call stops and the loop sees it at once. */
  readonly signal: AbortSignal;
  readonly project: (
    call: Parameters<NonNullable<ReturnType<PluginHostShape["projector"]>>>[1],
    out: Parameters<NonNullable<ReturnType<PluginHostShape["projector"]>>>[2],
  ) => Effect.Effect<ProjectedResult, unknown>;
  /** No plugin projects tool results: `project` hands the output's content back as it is. */
  readonly projectsAsIs: boolean;
  readonly toolHost: ToolHost;
  /** A journal or store failure as this turn's error. */
  readonly failTurn: (e: { readonly _tag: string; readonly message: string }) => TurnError;
  /** Replay key of an effect: `session:turn:iteration:kind:effectId`. */
  readonly keyOf: (e: {
    readonly kind: string;
    readonly effectId: number;
    readonly iteration: number;
  }) => string;
  catalogNow: ReadonlyMap<string, ToolDefinition>;
  /** The environment the turn's last `syncEnvironment` answered with (absent before the first). */
  env?: { readonly tools: readonly ToolSpec[]; readonly system?: string } | undefined;
  /** The turn was cut off and is being resumed from its journal (not begun by this call). */
  readonly resumed: boolean;
  toolCalls: number;
  turnCost: number | undefined;
  readonly extraUsage: ToolUsage[];
  /** The turn's approval decisions by journal key, committed with it as graph nodes. */
  readonly approvals: Map<string, readonly ApprovalRecord[]>;
  /** The turn's request-size estimate, kept up to date call by call (calibrates compaction). */
  readonly estimate: RunningEstimate;
  /** Per-turn cache of request digests (see `requestDigest`). */
  readonly digests: DigestCache;
  /** Compactions made between this turn's model rounds (compact-mid.ts). */
  midTurn?: MidTurn | undefined;
}

/**
 * How a turn step is defined: `Effect.fnUntraced` by default, `Effect.fn(name)` — a span
 * per step with its name, for Effect's tracer — when `LASH_EFFECT_SPANS=1` is set. A traced
 * step costs about 15 µs per call here (a span and a captured stack), a sizeable share of
 * a model round trip, so it is opt-in; lash's own traces come from the activity stream.
 */
export const step: (name: string) => typeof Effect.fnUntraced =
  process.env.LASH_EFFECT_SPANS === "1"
    ? (name) => Effect.fn(name) as unknown as typeof Effect.fnUntraced
    : () => Effect.fnUntraced;

/** Compactions made between a turn's model rounds (compact-mid.ts). */
export interface MidTurn {
  /** How many leading messages of the machine's request the summary replaces. */
  readonly cut: number;
  readonly summary: Message;
  readonly last: { readonly nodeId: string; readonly payload: CompactionPayload };
  /** The nodes to commit, each after the message with `afterMessageId` (absent: before the turn's messages). */
  readonly nodes: readonly { readonly afterMessageId: string; readonly node: NewNode }[];
}
