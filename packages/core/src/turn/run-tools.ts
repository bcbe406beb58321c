import { CompletedToolCall, type PendingToolCall, type TurnEffect, Usage } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import type { DispatchGovernance } from "../approval.ts";
import { type BatchResult, runToolBatch } from "../dispatch.ts";
import type { GovernanceShape } from "../governance.ts";
import type { TurnError } from "../runtime-api.ts";
import { step, type TurnScope } from "./scope.ts";

type RunTools = Extract<TurnEffect, { kind: "runTools" }>;

/** What a batch records: checked against this on replay. */
const Batch = Schema.Struct({
  results: Schema.Array(CompletedToolCall),
  cancelled: Schema.Boolean,
  usage: Schema.Array(
    Schema.Struct({
      source: Schema.String,
      model: Schema.String,
      usage: Usage,
      costUsd: Schema.optional(Schema.Number),
    }),
  ),
});

/**
 * The one way a turn runs tool calls — the model's (standard mode) and a code cell's
 * (RLM operations) alike: hooks, argument validation, projection and the output budget
 * in `runToolBatch`, the batch journaled under `batchKey`, usage into the turn's ledger.
 */
export const dispatchTools = (
  scope: TurnScope,
  calls: readonly PendingToolCall[],
  batchKey: string,
  envelope: unknown,
): Effect.Effect<{ readonly value: BatchResult; readonly replayed: boolean }, TurnError> => {
  scope.toolCalls += calls.length;
  const batch0 = runToolBatch(
    {
      hook: scope.hook,
      catalog: scope.catalogNow,
      hooks: scope.hooks,
      project: scope.project,
      journal: scope.rt.journal,
      batchKey,
      emit: scope.emitEffect,
      emitNow: scope.emit,
      projectsAsIs: scope.projectsAsIs,
      signal: scope.signal,
      host: scope.toolHost,
      ...(scope.rt.dispatch ? { options: scope.rt.dispatch } : {}),
      ...(scope.rt.governance ? { governance: governanceOf(scope, scope.rt.governance) } : {}),
    },
    calls,
  );
  const journal = scope.rt.journal;
  // `beforeToolCall` hooks are plugin code: what the turn did so far goes to disk before they run
  const batch =
    journal.enabled && scope.hooks.some((h) => h.hooks.beforeToolCall)
      ? Effect.zipRight(journal.flush(scope.turnId), batch0)
      : batch0;
  // no journal, or the store's: a batch's outcome is a function of its attempts' records, so it
  // records nothing of its own — a replay runs it again and its attempts replay (the state a crash
  // before the turn's next write leaves anyway): one journal write less per round trip
  if (!journal.backend)
    return Effect.mapBoth(batch, {
      onFailure: scope.failTurn,
      onSuccess: (value) => {
        scope.extraUsage.push(...value.usage);
        return { value, replayed: false };
      },
    });
  // a backend records the batch; each attempt's own records are written as it starts and ends
  return journal.onceDeferred(scope.ids, batchKey, envelope, batch, Batch, { composite: true }).pipe(
    Effect.mapError(scope.failTurn),
    Effect.tap((r) => {
      scope.extraUsage.push(...r.value.usage);
    }),
  );
};

/** The approval step's view of the turn: the runtime's governance and approver, the session's grants, the audit. */
const governanceOf = (scope: TurnScope, governance: GovernanceShape): DispatchGovernance => {
  const { rt, sessionId } = scope;
  let grants = rt.grants.get(sessionId);
  if (!grants) {
    grants = new Map();
    rt.grants.set(sessionId, grants);
  }
  return {
    governance,
    approver: rt.approver,
    grants,
    newId: () => rt.ids.next("approval"),
    record: (key, records) => {
      scope.approvals.set(key, records);
    },
  };
};

/** The `runTools` effect. A replayed batch re-publishes each result as `toolCompleted`. */
export const runTools = step("lash.turn.runTools")(function* (scope: TurnScope, effect: RunTools) {
  const key = scope.keyOf(effect);
  // only a journal backend records a batch (the store's journal derives it from its attempts: `derived`)
  const envelope = scope.rt.journal.backend
    ? {
        kind: effect.kind,
        effectId: effect.effectId,
        iteration: effect.iteration,
        // lash's call ids are derived, not input: a journal written before they existed still matches
        calls: effect.calls.map(({ lashCallId: _, ...call }) => call),
      }
    : undefined;
  const r = yield* dispatchTools(scope, effect.calls, key, envelope);
  if (r.replayed) for (const res of r.value.results) scope.emit(replayedResult(res));
  return {
    kind: "toolResults",
    effectId: effect.effectId,
    results: r.value.results,
    cancelled: r.value.cancelled,
  } as const;
});

const replayedResult = (res: CompletedToolCall) =>
  ({
    type: "toolCompleted",
    callId: res.callId,
    ...(res.lashCallId !== undefined ? { lashCallId: res.lashCallId } : {}),
    name: res.name,
    isError: res.isError,
    content: res.content,
    ...(res.details !== undefined ? { details: res.details } : {}),
    durationMs: res.durationMs ?? 0,
    replayed: true,
  }) as const;
