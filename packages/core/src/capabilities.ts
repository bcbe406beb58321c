/**
 * The capabilities a turn lends its tools (`ToolHost`): sessions, child turns, artifacts,
 * activity events and one-shot model calls, each typed, built from the runtime and the
 * turn's scope. No tool sees the runtime itself.
 */
import { callOf, costOf, type LlmRequest, LlmResult, llmErrorInfo, ResponseAccumulator } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import type { ArtifactsShape } from "./artifacts.ts";
import type { LashRuntimeShape, TurnResult } from "./runtime-api.ts";
import type { SessionRecord } from "./store.ts";
import {
  type ChildRunner,
  type ChildTurnResult,
  type Emitter,
  type Llm,
  type LlmCallResult,
  type Sessions,
  ToolFailure,
  type ToolHost,
} from "./tool.ts";
import type { TurnScope } from "./turn/scope.ts";

const failure = (e: { readonly message: string }): ToolFailure =>
  e instanceof ToolFailure ? e : new ToolFailure({ class: "execution", message: e.message });

/** The runtime's sessions as a tool sees them (errors as `ToolFailure`s). */
export function sessionsOf(runtime: LashRuntimeShape): Sessions {
  return {
    create: (options) => Effect.mapError(runtime.createSession(options), failure),
    get: (id) => Effect.mapError(runtime.getSession(id), failure),
    children: (id) => Effect.mapError(runtime.children(id), failure),
    attachPlugins: (id, plugins) => runtime.attachPlugins(id, plugins),
    readView: (id) => Effect.mapError(runtime.readView(id), failure),
    chronological: (id) => Effect.mapError(runtime.chronological(id), failure),
    usage: (id) => Effect.mapError(runtime.usage(id), failure),
    toolDefinitions: (id) => Effect.mapError(runtime.toolDefinitions(id), failure),
  };
}

const childResult = (r: TurnResult): ChildTurnResult => ({
  sessionId: r.sessionId,
  turnId: r.turnId,
  outcome: r.outcome,
  text: r.text,
  usage: r.usage,
});

/** Child turns on the runtime (interrupting one cancels the child's turn gracefully). */
export function childRunnerOf(runtime: LashRuntimeShape): ChildRunner {
  return {
    turn: (id, input, options) =>
      runtime
        .turn(id, input, options?.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {})
        .pipe(Effect.map(childResult), Effect.mapError(failure)),
    resumePending: (id, options) =>
      runtime.resumePending(id, options?.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}).pipe(
        Effect.map((r) => (r === undefined ? undefined : childResult(r))),
        Effect.mapError(failure),
      ),
  };
}

/**
 * One-shot model calls of one tool attempt, journaled under `${attemptKey}:llm:<n>` (the
 * attempt's n-th call) and written before the reply reaches the tool: a resumed turn gets the
 * recorded reply, so a re-run attempt of an idempotent tool neither pays for the call again nor
 * sees another answer than the one it may already have acted on.
 */
export function llmOf(scope: () => TurnScope, attemptKey: string | undefined): Llm {
  let n = 0;
  return {
    complete: (request, options) =>
      Effect.gen(function* () {
        if (attemptKey === undefined)
          return yield* Effect.fail(
            new ToolFailure({
              class: "unavailable",
              message:
                "model calls are only available inside a tool call the runtime dispatched (the host was not bound to a call)",
            }),
          );
        const s = scope();
        const key = `${attemptKey}:llm:${++n}`;
        const model = request.model ?? s.session.model;
        const provider =
          model === s.session.model
            ? s.provider
            : yield* s.rt.providers.forModel(model).pipe(
                Effect.mapError(
                  (e) =>
                    new ToolFailure({
                      class: "invalidRequest",
                      message: `unknown model ${model}: ${e.message}`,
                    }),
                ),
              );
        const full: LlmRequest = { ...request, model, tools: request.tools ?? [] };
        const run = Effect.gen(function* () {
          const acc = new ResponseAccumulator();
          const r = yield* Effect.either(callOf(provider.stream(full))((e) => acc.push(e), {}));
          if (Either.isLeft(r)) return { ok: false, error: llmErrorInfo(r.left) } satisfies LlmResult;
          return { ok: true, response: acc.result() } satisfies LlmResult;
        });
        // what the model is told must be on disk before it is asked: the waiting records go first
        // (the reply is written at once, not deferred: the tool may act on it outside the process)
        const call = Effect.zipRight(s.rt.journal.flush(s.turnId), run);
        const r = yield* s.rt.journal.once(s.ids, key, full, call, LlmResult).pipe(
          Effect.mapError(
            (e) =>
              new ToolFailure({
                class: "internal",
                message: `the model call could not be journaled: ${e.message}`,
              }),
          ),
        );
        if (!r.value.ok)
          return yield* Effect.fail(
            new ToolFailure({
              class: "external",
              message: `the model call failed (${r.value.error.kind}): ${r.value.error.message}`,
            }),
          );
        const response = r.value.response;
        const cost = costOf(response.usage, s.rt.catalog.info(model)?.pricing);
        const result: LlmCallResult = {
          model,
          response,
          ...(Object.keys(response.usage).length > 0
            ? {
                usage: {
                  source: options?.source ?? "llm",
                  model,
                  usage: response.usage,
                  ...(cost !== undefined ? { costUsd: cost } : {}),
                },
              }
            : {}),
        };
        return result;
      }),
  };
}

/** The host a turn lends its tools; `forCall` binds it to one tool attempt (its `llm` calls). */
export function toolHostOf(args: {
  readonly runtime: LashRuntimeShape;
  readonly session: SessionRecord;
  readonly emit: Emitter;
  readonly artifacts: ArtifactsShape;
  readonly scope: () => TurnScope;
}): ToolHost {
  const sessions = sessionsOf(args.runtime);
  const children = childRunnerOf(args.runtime);
  const make = (attemptKey: string | undefined): ToolHost => ({
    session: args.session,
    emit: args.emit,
    artifacts: args.artifacts,
    sessions,
    children,
    llm: llmOf(args.scope, attemptKey),
    forCall: (key) => make(key),
  });
  return make(undefined);
}
