import {
  callOf,
  costOf,
  ExecResult,
  type LlmRequest,
  LlmResult,
  llmErrorInfo,
  ResponseAccumulator,
  type TurnEffect,
} from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { describe, type ExecContext, TurnError } from "../runtime-api.ts";
import { dispatchTools } from "./run-tools.ts";
import { step, type TurnScope } from "./scope.ts";

type ExecCode = Extract<TurnEffect, { kind: "execCode" }>;

/** A sub-query from a cell (`llm.query`): its own journal entry and a ledger row of its own. */
const complete =
  (scope: TurnScope, key: string): ExecContext["complete"] =>
  (request, label) =>
    Effect.gen(function* () {
      const { session, sessionId } = scope;
      const model = request.model ?? session.model;
      const provider =
        model === session.model
          ? scope.provider
          : yield* scope.rt.providers
              .forModel(model)
              .pipe(
                Effect.mapError(
                  (e) => new TurnError({ sessionId, reason: "unknownModel", message: e.message }),
                ),
              );
      const full: LlmRequest = { ...request, model };
      const run = Effect.gen(function* () {
        const acc = new ResponseAccumulator();
        const r = yield* Effect.either(callOf(provider.stream(full))((e) => acc.push(e), {}));
        if (Either.isLeft(r)) return { ok: false, error: llmErrorInfo(r.left) } satisfies LlmResult;
        return { ok: true, response: acc.result() } satisfies LlmResult;
      });
      // what the model is told must be on disk before it is asked: the waiting records go first
      const call = Effect.zipRight(scope.rt.journal.flush(scope.turnId), run);
      const r = yield* scope.rt.journal
        .onceDeferred(scope.ids, `${key}:${label}`, full, call, LlmResult)
        .pipe(Effect.mapError(scope.failTurn));
      if (r.value.ok && Object.keys(r.value.response.usage).length > 0) {
        const c = costOf(r.value.response.usage, scope.rt.catalog.info(model)?.pricing);
        scope.extraUsage.push({
          source: "llm.query",
          model,
          usage: r.value.response.usage,
          ...(c !== undefined ? { costUsd: c } : {}),
        });
      }
      return r.value;
    });

/** The `execCode` effect: the runtime's code executor runs the cell; its tool calls take the turn's one dispatch path. */
export const runCell = step("lash.turn.runCell")(function* (scope: TurnScope, effect: ExecCode) {
  const executor = scope.rt.codeExecutor;
  const key = scope.keyOf(effect);
  const envelope = {
    kind: effect.kind,
    effectId: effect.effectId,
    iteration: effect.iteration,
    language: effect.language,
    code: effect.code,
  };
  const execCtx: ExecContext = {
    ...scope.hook,
    iteration: effect.iteration,
    effectId: effect.effectId,
    key,
    frameId: scope.session.frameId,
    tools: scope.catalogNow,
    emit: scope.emitEffect,
    cancelled: scope.cancel,
    dispatch: (calls, label) =>
      Effect.map(dispatchTools(scope, calls, `${key}:${label}`, { calls }), (r) => r.value.results),
    complete: complete(scope, key),
    remember: (label, value) =>
      scope.rt.journal.once(scope.ids, `${key}:${label}`, { label }, value).pipe(
        Effect.map((r) => r.value),
        Effect.mapError((e) => (e instanceof TurnError ? e : scope.failTurn(e))),
      ),
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
  // the cell runs journaled steps of its own (tool attempts, `llm.query`, sleeps' wake-up times):
  // composite, so a backend that cannot nest steps (Restate) records each of them as its own step
  const r = yield* scope.rt.journal
    .onceDeferred(scope.ids, key, envelope, run, ExecResult, { composite: true })
    .pipe(Effect.mapError((e) => (e instanceof TurnError ? e : scope.failTurn(e))));
  if (r.replayed && executor?.replayed)
    yield* Effect.ignore(executor.replayed(execCtx, effect.language, effect.code, r.value));
  return { kind: "execResult", effectId: effect.effectId, result: r.value } as const;
});
