import { ToolSpec, type TurnEffect } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import { type ToolDefinition, toolSpec } from "../tool.ts";
import { step, type TurnScope } from "./scope.ts";

type SyncEnvironment = Extract<TurnEffect, { kind: "syncEnvironment" }>;

/** What the step records: checked against this on replay. */
const Environment = Schema.Struct({ tools: Schema.Array(ToolSpec), system: Schema.optional(Schema.String) });

type Env = { readonly tools: readonly ToolSpec[]; readonly system?: string };

const specs = new WeakMap<ReadonlyMap<string, ToolDefinition>, readonly ToolSpec[]>();

function sameTools(a: ReadonlyMap<string, ToolDefinition>, b: ReadonlyMap<string, ToolDefinition>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  const ia = a.values();
  for (const tool of b.values()) if (ia.next().value !== tool) return false;
  return true;
}

/** `syncEnvironment` without an effect: the previous answer when nothing changed and the catalog needs no effect. */
export const syncNow = (scope: TurnScope, effect: SyncEnvironment) => {
  const prev = scope.env;
  const { journal, toolCatalog, pluginHost } = scope.rt;
  if (prev === undefined || journal.backend || (scope.resumed && journal.enabled)) return undefined;
  const now = toolCatalog.forSessionNow?.(scope.session);
  if (now === undefined || !sameTools(scope.catalogNow, now)) return undefined;
  if (pluginHost.systemPrompt(scope.session) !== prev.system) return undefined;
  return { kind: "environmentSynced", effectId: effect.effectId, ...prev } as const;
};

/**
 * The `syncEnvironment` effect: the session's tool catalog and system prompt as they are now.
 *
 * Recorded only when it changed: a sync that finds the same tools (by definition identity)
 * and the same system prompt as the turn's previous sync answers with the previous
 * environment and writes nothing. A resumed turn's replay finds no record for such a sync
 * and answers the same way — with the environment the turn had before it — so the replayed
 * model requests match what was recorded. A journal backend (`@lash/restate`) records every
 * sync, as before.
 */
export const syncEnvironment = step("lash.turn.syncEnvironment")(function* (
  scope: TurnScope,
  effect: SyncEnvironment,
) {
  const { pluginHost, toolCatalog, journal } = scope.rt;
  const prev = scope.env;
  const answer = (env: Env) => ({ kind: "environmentSynced", effectId: effect.effectId, ...env }) as const;
  if (prev !== undefined && !journal.backend) {
    if (scope.resumed && journal.enabled) {
      // replaying: a sync the first run found unchanged has no record, and answers as it did then
      const entry = yield* journal
        .lookup(scope.keyOf(effect), scope.turnId)
        .pipe(Effect.mapError(scope.failTurn));
      if (entry === undefined) return answer(prev);
    } else {
      const now = yield* toolCatalog.forSession(scope.session);
      const system = pluginHost.systemPrompt(scope.session);
      if (system === prev.system && sameTools(scope.catalogNow, now)) return answer(prev);
    }
  }
  const r = yield* journal
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
  scope.env = r.value;
  return answer(r.value);
});
