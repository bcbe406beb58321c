import { costOf, type LlmRequest, type Message } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import {
  CompactionFailed,
  compactSpan,
  DEFAULT_THRESHOLD,
  midPlanKey,
  summaryMessage,
} from "../compaction/compact.ts";
import { TurnError } from "../runtime-api.ts";
import type { GraphNode } from "../store.ts";
import type { TurnScope } from "./scope.ts";

const MidPlan = Schema.Struct({ cut: Schema.Number });

/*
 * Compaction between the model rounds of one turn (standard sessions, summary strategy): a
 * turn whose own tool loop outgrows the window is compacted before its next model call, not
 * only at turn boundaries.
 *
 * What is compacted: every message of the request before the start of the latest round (the
 * last assistant message, whose tool calls the request's last tool results answer) — the
 * history before the turn and the completed rounds of this turn alike. The latest round stays
 * verbatim, so each tool result still follows the assistant message that called it. The
 * request then carries the summary and that round; later requests carry the summary and what
 * followed the cut. A second compaction in the same turn merges the first one's summary.
 *
 * Durable like the turn-boundary compaction: the decision (its cut) and each summariser stage
 * are journaled under the round, so a resumed turn replays them (its model calls' digests
 * match) and never summarises twice; a resumed round whose model call was already journaled
 * without a decision is not compacted. The compaction nodes are committed with the turn, each
 * after the last message it replaced.
 */

/** The request as sent: the turn's summaries in place of what they replaced. */
const substituted = (scope: TurnScope, request: LlmRequest): LlmRequest => {
  const mid = scope.midTurn;
  return mid ? { ...request, messages: [mid.summary, ...request.messages.slice(mid.cut)] } : request;
};

/** The window the turn's requests must fit (absent: no automatic compaction). */
const windowOf = (scope: TurnScope): number | undefined =>
  scope.rt.compaction.contextWindow ?? scope.info?.contextWindow;

export const compactBetweenRounds = (
  scope: TurnScope,
  round: number,
  key: string,
  request: LlmRequest,
): Effect.Effect<LlmRequest, TurnError> =>
  // no window to fit (or the turn's first call): the request as it is, without an effect per round
  round === 0 || windowOf(scope) === undefined
    ? Effect.succeed(substituted(scope, request))
    : compactIfNeeded(scope, round, key, request);

const compactIfNeeded = (
  scope: TurnScope,
  round: number,
  key: string,
  request: LlmRequest,
): Effect.Effect<LlmRequest, TurnError> =>
  Effect.gen(function* () {
    const { rt, ids, sessionId } = scope;
    const opts = rt.compaction;
    const window = windowOf(scope);
    const current = substituted(scope, request);
    // the turn's first model call: the turn-boundary compaction (compact.ts) has decided already
    if (
      round === 0 ||
      window === undefined ||
      opts.auto === false ||
      (opts.strategy ?? "summary") !== "summary" ||
      scope.session.mode !== "standard"
    )
      return current;
    const planKey = midPlanKey(ids, round);
    let cut: number | undefined;
    const recorded = yield* rt.journal.lookup(planKey).pipe(Effect.mapError(scope.failTurn));
    if (recorded?.status === "completed") cut = (recorded.outcome as { cut: number }).cut;
    else {
      // a round whose model call was made without a compaction is not compacted on a resume
      const called = yield* rt.journal.lookup(key).pipe(Effect.mapError(scope.failTurn));
      if (called !== undefined) return current;
      // counted incrementally: the turn's estimate adds only what is new since its last request
      const estimate = rt.calibration.scale(sessionId, scope.estimate.of(current));
      if (estimate < (opts.threshold ?? DEFAULT_THRESHOLD) * window) return current;
      // the start of the latest round: everything before it can be summarised
      let start = request.messages.length - 1;
      while (start > 0 && request.messages[start]!.role !== "assistant") start--;
      const from = scope.midTurn?.cut ?? 0;
      if (start <= from) return current;
      cut = (yield* rt.journal
        .once(ids, planKey, { kind: "compactMidPlan" }, Effect.succeed({ cut: start }), MidPlan)
        .pipe(Effect.mapError(scope.failTurn))).value.cut;
    }
    const from = scope.midTurn?.cut ?? 0;
    const spanMessages = request.messages.slice(from, cut);
    const span = spanMessages.map(
      (m) => ({ id: m.id, sessionId, kind: "message", payload: m }) as unknown as GraphNode,
    );
    const model = opts.model ?? scope.session.model;
    const provider =
      model === scope.session.model ? scope.provider : yield* rt.providers.forModel(model).pipe(Effect.orDie);
    const info = model === scope.session.model ? scope.info : rt.catalog.info(model);
    scope.emit({
      type: "plugin",
      plugin: "compaction",
      name: "started",
      data: { trigger: "threshold", messages: span.length, model, round },
    });
    const payload = yield* compactSpan(
      {
        journal: rt.journal,
        ids,
        provider,
        model,
        window: opts.contextWindow ?? info?.contextWindow ?? window,
        maxOutput: info?.maxOutput ?? 4_096,
        safetyMargin: opts.safetyMargin,
        signal: scope.signal,
        trigger: "threshold",
        round,
        onStage: (stage, stages, replayed) =>
          scope.emit({
            type: "plugin",
            plugin: "compaction",
            name: "stage",
            data: { stage, stages, replayed },
          }),
      },
      {
        history: current.messages as Message[],
        last: scope.midTurn?.last,
        span,
      },
    ).pipe(
      Effect.mapError((e) =>
        e instanceof CompactionFailed
          ? new TurnError({
              sessionId,
              reason: "compaction",
              pendingTurnId: scope.turnId,
              message: `session ${sessionId}: the turn's requests outgrew the context window and the compaction between its model rounds failed: ${e.message}. The turn stays pending: resume it (lash -p --continue --resume-pending) to try again, or name a summariser model with a larger window (compaction.model).`,
            })
          : scope.failTurn(e),
      ),
    );
    const nodeId = `${scope.turnId}.compaction.r${round}`;
    if (Object.keys(payload.usage).length > 0) {
      const costUsd = costOf(payload.usage, info?.pricing);
      scope.extraUsage.push({
        source: "compaction",
        model,
        usage: payload.usage,
        ...(costUsd !== undefined ? { costUsd } : {}),
      });
    }
    const now = yield* Effect.clockWith((c) => c.currentTimeMillis);
    scope.midTurn = {
      cut,
      summary: summaryMessage(nodeId, payload.summary),
      last: { nodeId, payload },
      nodes: [
        ...(scope.midTurn?.nodes ?? []),
        {
          afterMessageId: request.messages[cut - 1]!.id,
          node: {
            id: nodeId,
            sessionId,
            parentId: null,
            frameId: scope.session.frameId,
            kind: "protocol",
            turnId: scope.turnId,
            payload,
            createdAt: now,
          },
        },
      ],
    };
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
        contextWindow: window,
        round,
      },
    });
    return substituted(scope, request);
  });
