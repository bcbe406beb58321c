import { type Message, standardDriver, TurnMachine } from "@lash/sansio";
import * as Clock from "effect/Clock";
import type * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type { TurnActivityBody } from "../activity.ts";
import { addGrantOf, grantsOf, recordsOfJournal } from "../approval.ts";
import { Artifacts } from "../artifacts.ts";
import { resolveMessages } from "../attachments.ts";
import { toolHostOf } from "../capabilities.ts";
import { projectHistory } from "../compaction/compact.ts";
import { RunningEstimate } from "../compaction/estimate.ts";
import type { ApprovalError } from "../governance.ts";
import { storeFailure } from "../lease.ts";
import type { ProjectedResult } from "../plugin.ts";
import { describe, TurnError, type TurnOptions } from "../runtime-api.ts";
import type { NewNode, PendingTurn, SessionNotFound } from "../store.ts";
import { toolSpec } from "../tool.ts";
import { compactStep } from "./compact.ts";
import type { RuntimeContext, TurnScope } from "./scope.ts";

export interface OpenArgs {
  readonly sessionId: string;
  readonly input: readonly Message[];
  readonly options: TurnOptions;
  readonly pending?: PendingTurn;
  readonly cancel: Deferred.Deferred<void>;
  /** Aborted when `cancel` completes (the caller wires the two once per turn). */
  readonly signal: AbortSignal;
  /** A compaction-only turn (`runtime.compact`): the history is compacted, the model is not called. */
  readonly compact?: { readonly instructions?: string | undefined } | undefined;
  /** The turn a handoff moved into its successor: its window is fresh, it is not compacted again. */
  readonly afterHandoff?: boolean;
}

export interface OpenedTurn {
  readonly scope: TurnScope;
  readonly machine: TurnMachine;
  readonly startedAt: number;
  readonly input: readonly Message[];
  /** The input after `beforeTurn` hooks added to it. */
  readonly turnInput: readonly Message[];
  /** Set when a plugin stopped the turn before any model call. */
  readonly abort: string | undefined;
  /** The compaction node to commit before the turn's messages (absent: no compaction). */
  readonly compaction: NewNode | undefined;
  /** A compaction-only turn: there is no loop to run. */
  readonly compactOnly: boolean;
  /** The compaction hands off (`compaction.strategy: "handoff"`, standard mode): the turn runs in a successor. */
  readonly handoff: boolean;
}

/**
 * Opens a turn: checks the model, writes the turn down as pending (not on resume),
 * publishes `turnStarted`, restores plugin state, reads the active path, runs the
 * `beforeTurn` hooks and builds the machine and the turn's scope.
 */
export const openTurn = (
  rt: RuntimeContext,
  args: OpenArgs,
): Effect.Effect<OpenedTurn, TurnError | SessionNotFound> =>
  Effect.gen(function* () {
    const { sessionId, options, cancel } = args;
    const { store, pluginHost } = rt;
    const startedAt = yield* Clock.currentTimeMillis;
    const session = yield* store.getSession(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
    const l = yield* rt.local(sessionId);
    const turnId = args.pending?.turnId ?? options.turnId ?? (yield* rt.ids.next("turn"));
    const resumed = args.pending !== undefined;
    const compact =
      args.compact ??
      (args.pending?.input as { compact?: { instructions?: string } } | undefined)?.compact ??
      undefined;
    const input = args.input.map((m, i) => (m.id ? m : { ...m, id: `${turnId}.in${i}` }));
    // a turn that cannot reach a model is refused before it is written down as pending
    const provider = yield* rt.providers
      .forModel(session.model)
      .pipe(Effect.mapError((e) => new TurnError({ sessionId, reason: "unknownModel", message: e.message })));
    if (!resumed) {
      yield* store
        .beginTurn({
          sessionId,
          turnId,
          input: {
            messages: input,
            maxTurns: options.maxTurns,
            ...(compact
              ? { compact: { ...(compact.instructions ? { instructions: compact.instructions } : {}) } }
              : {}),
          },
          expectedRevision: session.headRevision,
          startedAt,
        })
        .pipe(Effect.catchAll(storeFailure(sessionId)));
    }
    const clock = yield* Effect.clock;
    const emit = (body: TurnActivityBody): void => {
      const event = l.hub.publishNow(turnId, body, clock.unsafeCurrentTimeMillis());
      options.onEvent?.(event);
    };
    const emitEffect = (body: TurnActivityBody) => Effect.sync(() => emit(body));
    const hook = { session, turnId };
    const plugins = pluginHost.plugins(sessionId);
    const hooks = pluginHost.hooks(sessionId);
    const projector = pluginHost.projector(sessionId);
    emit({
      type: "turnStarted",
      input,
      resumed: resumed && args.afterHandoff !== true,
      model: session.model,
    });
    for (const p of plugins) if (p.restore) yield* Effect.ignore(p.restore(hook, session.state[p.name]));

    const info = rt.catalog.info(session.model);
    // what the request is built from: the newest compaction on the active path and what follows
    // it, read without the span the summary replaces (forks, exports and views read it all)
    const path = yield* store
      .projectionPath(sessionId, session.frameId)
      .pipe(Effect.catchAll(storeFailure(sessionId)));
    // tools approved for the session in an earlier process: not asked about again (grants made
    // before a compaction live in the replaced span: the whole path, once per process)
    if (rt.governance && !rt.grants.has(sessionId)) {
      const whole = yield* store.activePath(sessionId).pipe(Effect.catchAll(storeFailure(sessionId)));
      rt.grants.set(sessionId, grantsOf(whole, new Map()));
    }
    // ... and in the cut-off turn itself (a batch or cell replayed whole does not run its approval step)
    if (rt.governance && resumed) {
      const grants = rt.grants.get(sessionId)!;
      const entries = yield* store
        .journalForTurn(sessionId, turnId)
        .pipe(Effect.catchAll(storeFailure(sessionId)));
      for (const e of entries)
        if (e.status === "completed")
          for (const rec of recordsOfJournal(e.key, e.outcome) ?? []) addGrantOf(grants, rec);
    }
    // the active-path projection: the last compaction's summary and the messages after it
    const projected = projectHistory(path, session.frameId);

    // beforeTurn hooks (a failure or abort stops the turn before any model call)
    let turnInput: readonly Message[] = input;
    let abort: string | undefined;
    for (const { plugin, hooks: h } of hooks) {
      if (!h.beforeTurn || abort) continue;
      const r = yield* Effect.either(h.beforeTurn(hook, turnInput));
      if (Either.isLeft(r)) abort = `the ${plugin} plugin failed before the turn: ${describe(r.left)}`;
      else if (r.right && "abort" in r.right) abort = r.right.abort;
      else if (r.right && "messages" in r.right) turnInput = [...turnInput, ...r.right.messages];
    }

    const initialCatalog = yield* rt.toolCatalog.forSession(session);
    const initialSystem = pluginHost.systemPrompt(session);
    const projectorFor = rt.projectors[session.mode];
    const artifacts = Artifacts.fromStore(store);
    // the capabilities tools get (their `llm` calls read the scope below, once the turn runs)
    const toolHost = toolHostOf({ runtime: rt.self(), session, emit, artifacts, scope: () => scope });
    const scope: TurnScope = {
      rt,
      sessionId,
      turnId,
      session,
      ids: { sessionId, turnId },
      hook,
      plugins,
      hooks,
      provider,
      info,
      emit,
      emitEffect,
      cancel,
      signal: args.signal,
      project: (call, out) =>
        projector
          ? Effect.provideService(projector(hook, call, out), Artifacts, artifacts)
          : Effect.succeed<ProjectedResult>({ content: out.content }),
      projectsAsIs: projector === undefined,
      toolHost,
      failTurn: (e) =>
        e._tag === "ApprovalError"
          ? new TurnError({
              sessionId,
              reason: "approval",
              pendingTurnId: turnId,
              message: `session ${sessionId}: the turn stopped: ${e.message} The request stays pending: continuing the session with an approver that answers asks it again.`,
              ...((e as ApprovalError).request ? { approvalRequest: (e as ApprovalError).request } : {}),
            })
          : e._tag === "JournalMismatch"
            ? new TurnError({
                sessionId,
                reason: "journalMismatch",
                pendingTurnId: turnId,
                message: `session ${sessionId}: the cut-off turn ${turnId} cannot be resumed: ${e.message}`,
              })
            : new TurnError({ sessionId, reason: "store", message: e.message }),
      keyOf: (e) => `${sessionId}:${turnId}:${e.iteration}:${e.kind}:${e.effectId}`,
      catalogNow: initialCatalog,
      resumed,
      toolCalls: 0,
      turnCost: undefined,
      extraUsage: [],
      approvals: new Map(),
      digests: { messages: [], prefix: [], session: sessionId },
      estimate: new RunningEstimate(),
    };
    const tools = [...initialCatalog.values()].map(toolSpec);
    const compacted =
      abort === undefined && !args.afterHandoff
        ? yield* compactStep(scope, {
            projected,
            system: initialSystem,
            tools,
            input: turnInput,
            manual: compact,
            resumed,
          })
        : { history: projected.history, node: undefined };
    // attachments stored as artifacts carry their bytes again in what the model is sent
    const history: Message[] = yield* resolveMessages(compacted.history, store.readArtifact).pipe(
      Effect.catchAll(storeFailure(sessionId)),
    );
    const machine = new TurnMachine({
      sessionId,
      turnId,
      model: session.model,
      driver: rt.drivers[session.mode] ?? standardDriver,
      history,
      input: turnInput,
      tools,
      maxTurns:
        options.maxTurns ??
        (args.pending?.input as { maxTurns?: number } | undefined)?.maxTurns ??
        rt.maxTurns ??
        50,
      ...(initialSystem !== undefined ? { system: initialSystem } : {}),
      ...(info ? { contextWindow: info.contextWindow } : {}),
      ...(projectorFor ? { projector: projectorFor({ ...hook, tools: () => scope.catalogNow }) } : {}),
    });
    if (abort !== undefined) machine.cancel();
    return {
      scope,
      machine,
      startedAt,
      input,
      turnInput,
      abort,
      compaction: compacted.node,
      compactOnly: compact !== undefined,
      handoff:
        compacted.node !== undefined && rt.compaction.strategy === "handoff" && session.mode === "standard",
    };
  });
