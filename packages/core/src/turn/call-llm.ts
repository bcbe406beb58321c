import {
  callOf,
  costOf,
  type LlmEvent,
  type LlmRequest,
  LlmResult,
  llmErrorInfo,
  maskedText,
  ResponseAccumulator,
  type TurnEffect,
} from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import { Hashed } from "../journal.ts";
import { compactBetweenRounds } from "./compact-mid.ts";
import { envelopeHash } from "./request-digest.ts";
import { step, type TurnScope } from "./scope.ts";

type CallLlm = Extract<TurnEffect, { kind: "callLlm" }>;

/** Tokens of a reply cut short, estimated from its text (4 characters a token). */
function replyTokens(parts: readonly { readonly type: string; readonly text?: string }[]): number {
  let chars = 0;
  for (const p of parts) if (p.type === "text" || p.type === "reasoning") chars += p.text?.length ?? 0;
  return Math.ceil(chars / 4);
}

/** One model call: hooks around it, events published as they arrive, cancel via the turn's signal. */
export const callModel = (scope: TurnScope, request: LlmRequest): Effect.Effect<LlmResult> =>
  Effect.gen(function* () {
    const { hook, hooks, emit } = scope;
    let req = request;
    for (const { hooks: h } of hooks) {
      if (h.transformContext) req = yield* Effect.orElseSucceed(h.transformContext(hook, req), () => req);
    }
    for (const { hooks: h } of hooks) if (h.beforeLlmCall) yield* Effect.ignore(h.beforeLlmCall(hook, req));
    const acc = new ResponseAccumulator();
    // RLM: the mask hides the cell from the visible stream and ends the call at its close tag
    const mask = scope.rt.drivers[scope.session.mode]?.streamMask?.();
    const stop = mask ? new AbortController() : undefined;
    const signal = stop ? AbortSignal.any([scope.signal, stop.signal]) : scope.signal;
    const onEvent = (event: LlmEvent) => {
      if (mask) {
        if (mask.done) {
          // after the close tag only the accounting of what arrived still counts
          if (event.type === "usage" || event.type === "finish") acc.push(event);
          return;
        }
        if (event.type === "textDelta") {
          const m = mask.push(event.text);
          if (m.accepted !== "") acc.push({ ...event, text: m.accepted });
          if (m.visible !== "") emit({ type: "textDelta", text: m.visible });
          if (mask.done) stop?.abort();
          return;
        }
        if (event.type === "attemptReset") mask.reset();
      }
      acc.push(event);
      switch (event.type) {
        case "textDelta":
          return emit({ type: "textDelta", text: event.text });
        case "reasoningDelta":
          return emit({ type: "reasoningDelta", text: event.text });
        case "toolCallStart":
          return emit({ type: "toolCallDelta", callId: event.id, name: event.name });
        case "toolCallArgsDelta":
          return emit({ type: "toolCallDelta", callId: event.id, argsDelta: event.delta });
        case "retry":
          return emit({
            type: "retry",
            attempt: event.attempt,
            delayMs: event.delayMs,
            error: event.error,
            ...(event.reason !== undefined ? { reason: event.reason } : {}),
            ...(event.maxAttempts !== undefined ? { maxAttempts: event.maxAttempts } : {}),
          });
        case "attemptReset":
          return emit({ type: "attemptReset", attempt: event.attempt });
        default:
          return;
      }
    };
    const r = yield* Effect.either(callOf(scope.provider.stream(req))(onEvent, { signal }));
    if (scope.signal.aborted) return { ok: true, response: { ...acc.result(), stopReason: "cancelled" } };
    if (mask?.done) {
      // ended by the mask: a normal stop, with the usage of what was received: the provider's
      // counts so far; input it had not reported is the request's estimate, and output is at
      // least the received reply's length / 4
      const got = acc.result();
      const usage = { ...got.usage };
      if (usage.input === undefined) usage.input = scope.estimate.of(req);
      usage.output = Math.max(usage.output ?? 0, replyTokens(got.parts));
      return { ok: true, response: { ...got, stopReason: "stop", usage } };
    }
    if (Either.isLeft(r)) return { ok: false, error: llmErrorInfo(r.left) };
    if (mask) {
      const rest = mask.end();
      if (rest !== "") emit({ type: "textDelta", text: rest });
    }
    const response = acc.result();
    for (const { hooks: h } of hooks)
      if (h.afterLlmResponse) yield* Effect.ignore(h.afterLlmResponse(hook, response));
    return { ok: true, response };
  });

/** The `callLlm` effect: journaled by its request digest; a replayed answer is re-published as text. */
export const callLlm = step("lash.turn.callLlm")(function* (scope: TurnScope, effect: CallLlm) {
  // one clock, read twice without an effect each
  const clock = yield* Effect.clock;
  const t0 = clock.unsafeCurrentTimeMillis();
  const key = scope.keyOf(effect);
  // the turn's own rounds may have outgrown the window: compacted here, between rounds
  const request = yield* compactBetweenRounds(scope, effect.iteration, key, effect.request);
  const journal = scope.rt.journal;
  // the hash of { kind, effectId, iteration, request: requestDigest(…) }, from the turn's cached pieces
  const envelope = journal.enabled ? new Hashed(envelopeHash(scope.digests, effect, request)) : undefined;
  // a model's answer still waiting is written before the next call (journal.ts `deferred`: the rule)
  const r = journal.enabled
    ? yield* journal
        .onceDeferred(
          scope.ids,
          key,
          envelope,
          journal.answerWaiting(scope.turnId)
            ? Effect.zipRight(journal.flush(scope.turnId), callModel(scope, request))
            : callModel(scope, request),
          LlmResult,
          { answer: true },
        )
        .pipe(Effect.mapError(scope.failTurn))
    : { value: yield* callModel(scope, request), replayed: false };
  const t1 = clock.unsafeCurrentTimeMillis();
  if (r.replayed && r.value.ok) {
    const full = r.value.response.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
    const text = scope.rt.drivers[scope.session.mode]?.streamMask ? maskedText(full) : full;
    if (text) scope.emit({ type: "textDelta", text });
  }
  if (r.value.ok) {
    const response = r.value.response;
    // calibrate the host's estimate by what the provider counted (only when compaction can use it)
    if (response.usage.input !== undefined && (scope.rt.compaction.contextWindow ?? scope.info) !== undefined)
      scope.rt.calibration.observe(scope.sessionId, scope.estimate.of(request), response.usage.input);
    const c = costOf(response.usage, scope.info?.pricing);
    scope.emit({
      type: "llmResponse",
      iteration: effect.iteration,
      stopReason: response.stopReason,
      ...(response.responseId !== undefined ? { responseId: response.responseId } : {}),
      ...(response.providerReason !== undefined ? { providerReason: response.providerReason } : {}),
      usage: response.usage,
      ...(c !== undefined ? { costUsd: c } : {}),
      durationMs: t1 - t0,
      replayed: r.replayed,
    });
  }
  return {
    kind: "llmComplete",
    effectId: effect.effectId,
    result: r.value,
    textStreamed: !r.replayed,
  } as const;
});
