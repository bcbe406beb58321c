import { ToolSpec, type TurnEffect } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import { type ToolDefinition, toolSpec } from "../tool.ts";
import { step, type TurnScope } from "./scope.ts";

type SyncEnvironment = Extract<TurnEffect, { kind: "syncEnvironment" }>;

/** What the step records: checked against this on replay. */
const Environment = Schema.Struct({ tools: Schema.Array(ToolSpec), system: Schema.optional(Schema.String) });

const specs = new WeakMap<ReadonlyMap<string, ToolDefinition>, readonly ToolSpec[]>();

function sameTools(a: ReadonlyMap<string, ToolDefinition>, b: ReadonlyMap<string, ToolDefinition>): boolean {
  if (a.size !== b.size) return false;
  const ia = a.values();
  for (const tool of b.values()) if (ia.next().value !== tool) return false;
  return true;
}

/** The `syncEnvironment` effect: the session's tool catalog and system prompt as they are now. */
export const syncEnvironment = step("lash.turn.syncEnvironment")(function* (
  scope: TurnScope,
  effect: SyncEnvironment,
) {
  const { pluginHost, toolCatalog } = scope.rt;
  const r = yield* scope.rt.journal
    .onceDeferred(
      scope.ids,
      scope.keyOf(effect),
      { kind: effect.kind, effectId: effect.effectId, iteration: effect.iteration },
      Effect.gen(function* () {
        const before = scope.catalogNow;
        const now = yield* toolCatalog.forSession(scope.session);
        scope.catalogNow = now;
        // the same tools as before: the same spec list (request digests are cached by its identity)
        if (!specs.has(before) || !sameTools(before, now)) specs.set(now, [...now.values()].map(toolSpec));
        else specs.set(now, specs.get(before)!);
        const system = pluginHost.systemPrompt(scope.session);
        return {
          tools: specs.get(now)!,
          ...(system !== undefined ? { system } : {}),
        };
      }),
      Environment,
    )
    .pipe(Effect.mapError(scope.failTurn));
  return { kind: "environmentSynced", effectId: effect.effectId, ...r.value } as const;
});
