import { Message, type TurnEffect } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import { step, type TurnScope } from "./scope.ts";

type Checkpoint = Extract<TurnEffect, { kind: "checkpoint" }>;
const Messages = Schema.Array(Message);

/**
 * The `checkpoint` effect answered without an effect when no plugin has an `onCheckpoint` hook
 * and nothing can be replayed (no journal, or a turn begun here): no messages, nothing recorded.
 * A resumed turn finds no record for it and runs it (no hooks: no messages), as the first run did.
 */
export const checkpointNow = (scope: TurnScope, effect: Checkpoint) => {
  const journal = scope.rt.journal;
  if (journal.enabled && (scope.resumed || journal.backend)) return undefined;
  for (const { hooks } of scope.hooks) if (hooks.onCheckpoint) return undefined;
  return { kind: "checkpointDelivered", effectId: effect.effectId, messages: none } as const;
};
const none: Message[] = [];

/** The `checkpoint` effect: plugins' `onCheckpoint` hooks may add messages for the next iteration. */
export const checkpoint = step("lash.turn.checkpoint")(function* (scope: TurnScope, effect: Checkpoint) {
  const envelope = {
    kind: effect.kind,
    effectId: effect.effectId,
    iteration: effect.iteration,
    checkpoint: effect.checkpoint,
  };
  const collect = Effect.gen(function* () {
    const out: Message[] = [];
    // plugin code runs next: what the turn has done so far goes to disk first
    if (scope.hooks.some((h) => h.hooks.onCheckpoint)) yield* scope.rt.journal.flush(scope.turnId);
    for (const { hooks } of scope.hooks) {
      if (!hooks.onCheckpoint) continue;
      const r = yield* Effect.orElseSucceed(
        hooks.onCheckpoint(scope.hook, effect.checkpoint),
        () => undefined,
      );
      if (r) out.push(...r);
    }
    return out;
  });
  const r = yield* scope.rt.journal
    .onceDeferred(scope.ids, scope.keyOf(effect), envelope, collect, Messages)
    .pipe(Effect.mapError(scope.failTurn));
  return { kind: "checkpointDelivered", effectId: effect.effectId, messages: r.value } as const;
});
