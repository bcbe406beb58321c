import { costOf, type Message, type ToolSpec } from "@lash/sansio";
import * as Effect from "effect/Effect";
import {
  CompactionFailed,
  CompactionPlan,
  compactSpan,
  DEFAULT_THRESHOLD,
  type ProjectedHistory,
  planKey,
  summaryMessage,
} from "../compaction/compact.ts";
import { requestTokens } from "../compaction/estimate.ts";
import { TurnError } from "../runtime-api.ts";
import type { NewNode } from "../store.ts";
import type { TurnScope } from "./scope.ts";

export interface CompactStepArgs {
  readonly projected: ProjectedHistory;
  readonly system: string | undefined;
  readonly tools: readonly ToolSpec[];
  readonly input: readonly Message[];
  /** A compaction asked for (`runtime.compact`): always, with these instructions. */
  readonly manual?: { readonly instructions?: string | undefined } | undefined;
  readonly resumed: boolean;
}

export interface CompactStepResult {
  /** The history the turn's machine starts from. */
  readonly history: Message[];
  /** The compaction node to commit first (absent: nothing was compacted). */
  readonly node?: NewNode;
}

/** The context window of the session's model: the configured override, else the catalog's. */
export const windowOf = (scope: TurnScope): number | undefined =>
  scope.rt.compaction.contextWindow ?? scope.info?.contextWindow;

/**
 * The turn's compaction step, before its first model call:
 *  1. decide — a manual compaction always; otherwise when the first request's estimate
 *     (calibrated by the last reported usage) reaches the threshold share of the window.
 *     A resumed turn follows the decision its journal recorded (never a new one: the
 *     estimate's calibration did not survive the crash);
 *  2. record the decision, then summarise in journaled stages (`compactSpan`);
 *  3. hand back the summary as the new history and the node to commit.
 * An automatic compaction that fails is reported on the activity stream and the turn goes
 * on with the full history; a manual one fails the call.
 */
export const compactStep = (
  scope: TurnScope,
  a: CompactStepArgs,
): Effect.Effect<CompactStepResult, TurnError> =>
  Effect.gen(function* () {
    const { rt, ids, sessionId } = scope;
    const { projected } = a;
    const unchanged: CompactStepResult = { history: projected.history };
    const opts = rt.compaction;
    const window = windowOf(scope);
    let plan: CompactionPlan | undefined;
    if (a.manual)
      plan = { trigger: "manual", ...(a.manual.instructions ? { instructions: a.manual.instructions } : {}) };
    else if (a.resumed) {
      const entry = yield* rt.journal.lookup(planKey(ids)).pipe(Effect.mapError(scope.failTurn));
      if (entry?.status === "completed") plan = entry.outcome as CompactionPlan;
    } else if (opts.auto !== false && window !== undefined && projected.span.length > 0) {
      const raw = requestTokens({
        system: a.system,
        messages: [...projected.history, ...a.input],
        tools: a.tools,
      });
      const estimate = rt.calibration.scale(sessionId, raw);
      if (estimate >= (opts.threshold ?? DEFAULT_THRESHOLD) * window) plan = { trigger: "threshold" };
    }
    if (!plan) return unchanged;
    if (projected.span.length === 0) return unchanged;

    yield* rt.journal
      .once(ids, planKey(ids), { kind: "compactPlan" }, Effect.succeed(plan), CompactionPlan)
      .pipe(Effect.mapError(scope.failTurn));
    const model = opts.model ?? scope.session.model;
    const provider =
      model === scope.session.model
        ? scope.provider
        : yield* rt.providers
            .forModel(model)
            .pipe(
              Effect.mapError(
                (e) => new TurnError({ sessionId, reason: "unknownModel", message: e.message }),
              ),
            );
    const info = model === scope.session.model ? scope.info : rt.catalog.info(model);
    const summariserWindow = opts.contextWindow ?? info?.contextWindow ?? window ?? 128_000;
    scope.emit({
      type: "plugin",
      plugin: "compaction",
      name: "started",
      data: { trigger: plan.trigger, messages: projected.span.length, model },
    });
    const result = yield* Effect.either(
      compactSpan(
        {
          journal: rt.journal,
          ids,
          provider,
          model,
          window: summariserWindow,
          maxOutput: info?.maxOutput ?? 4_096,
          safetyMargin: opts.safetyMargin,
          signal: scope.signal,
          trigger: plan.trigger,
          instructions: plan.instructions,
          onStage: (stage, stages, replayed) =>
            scope.emit({
              type: "plugin",
              plugin: "compaction",
              name: "stage",
              data: { stage, stages, replayed },
            }),
        },
        projected,
      ),
    );
    if (result._tag === "Left") {
      const e = result.left;
      if (e instanceof CompactionFailed) {
        if (plan.trigger === "manual")
          return yield* Effect.fail(
            new TurnError({
              sessionId,
              reason: "compaction",
              pendingTurnId: scope.turnId,
              message: `session ${sessionId}: the compaction failed: ${e.message}. The session is unchanged; try again, or name a summariser model with a larger window (compaction.model).`,
            }),
          );
        scope.emit({
          type: "error",
          kind: "compaction",
          message: `the context compaction failed (${e.message}); the turn goes on with the full history`,
        });
        return unchanged;
      }
      return yield* Effect.fail(scope.failTurn(e));
    }
    const payload = result.right;
    const nodeId = `${scope.turnId}.compaction`;
    if (Object.keys(payload.usage).length > 0) {
      const costUsd = costOf(payload.usage, info?.pricing);
      scope.extraUsage.push({
        source: "compaction",
        model,
        usage: payload.usage,
        ...(costUsd !== undefined ? { costUsd } : {}),
      });
    }
    scope.emit({
      type: "plugin",
      plugin: "compaction",
      name: "finished",
      data: {
        nodeId,
        replaced: payload.replaced,
        stages: payload.stages,
        tokensBefore: payload.tokensBefore,
        tokensAfter: payload.tokensAfter,
        ...(window !== undefined ? { contextWindow: window } : {}),
      },
    });
    const now = yield* Effect.clockWith((c) => c.currentTimeMillis);
    return {
      history: [summaryMessage(nodeId, payload.summary)],
      node: {
        id: nodeId,
        sessionId,
        parentId: scope.session.leafId,
        frameId: scope.session.frameId,
        kind: "protocol",
        turnId: scope.turnId,
        payload,
        createdAt: now,
      },
    };
  });
