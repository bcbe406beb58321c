import type { TurnEffect } from "@lash/sansio";
import { Effect } from "effect";
import { toolSpec } from "../tool.ts";
import { step, type TurnScope } from "./scope.ts";

type SyncEnvironment = Extract<TurnEffect, { kind: "syncEnvironment" }>;

/** The `syncEnvironment` effect: the session's tool catalog and system prompt as they are now. */
export const syncEnvironment = step("lash.turn.syncEnvironment")(function* (
  scope: TurnScope,
  effect: SyncEnvironment,
) {
  const { pluginHost, toolCatalog } = scope.rt;
  const r = yield* scope.rt.journal
    .once(
      scope.ids,
      scope.keyOf(effect),
      { kind: effect.kind, effectId: effect.effectId, iteration: effect.iteration },
      Effect.gen(function* () {
        scope.catalogNow = yield* toolCatalog.forSession(scope.session);
        const system = pluginHost.systemPrompt(scope.session);
        return {
          tools: [...scope.catalogNow.values()].map(toolSpec),
          ...(system !== undefined ? { system } : {}),
        };
      }),
    )
    .pipe(Effect.mapError(scope.failTurn));
  return { kind: "environmentSynced", effectId: effect.effectId, ...r.value } as const;
});
