import { costOf, type TurnEffect, type TurnMachine } from "@lash/sansio";
import * as Effect from "effect/Effect";
import { TurnError } from "../runtime-api.ts";
import { callLlm } from "./call-llm.ts";
import { checkpoint, checkpointNow } from "./checkpoint.ts";
import { runCell } from "./run-cell.ts";
import { runTools } from "./run-tools.ts";
import type { TurnScope } from "./scope.ts";
import { syncEnvironment, syncNow } from "./sync-environment.ts";

export type Done = Extract<TurnEffect, { kind: "done" }>;

/** The machine's own events, published on the turn's activity stream. */
function publish(
  scope: TurnScope,
  machine: TurnMachine,
  effect: Extract<TurnEffect, { kind: "emit" }>,
): void {
  const ev = effect.event;
  switch (ev.type) {
    case "llmRequest":
      scope.emit({
        type: "llmRequest",
        iteration: ev.iteration,
        messageCount: ev.messageCount,
        tools: ev.tools,
      });
      return;
    case "usage": {
      const c = costOf(ev.usage, scope.info?.pricing);
      if (c !== undefined) scope.turnCost = (scope.turnCost ?? 0) + c;
      scope.emit({
        type: "usage",
        usage: ev.usage,
        cumulative: ev.cumulative,
        ...(scope.turnCost !== undefined ? { costUsd: scope.turnCost } : {}),
      });
      return;
    }
    case "error":
      scope.emit({ type: "error", message: ev.message, kind: ev.kind });
      return;
    case "protocol":
      scope.emit({ type: "plugin", plugin: machine.config.driver.name, name: ev.name, data: ev.data });
      return;
    default:
      return;
  }
}

/**
 * The turn loop: poll the machine, run what it asks for, hand back the reply, until
 * it is done. Notifications (`emit`, `progress`, `log`) are published synchronously;
 * each reply-producing effect has its own executor. A cancel seen between effects is
 * handed to the machine, which finishes the turn in order.
 */
export const runLoop = (scope: TurnScope, machine: TurnMachine): Effect.Effect<Done, TurnError> =>
  Effect.gen(function* () {
    for (let guard = 0; guard < 1_000_000; guard++) {
      const effect = machine.poll();
      if (!effect) {
        machine.cancel("internal error: the turn machine stalled");
        continue;
      }
      switch (effect.kind) {
        case "done":
          return effect;
        case "emit":
          publish(scope, machine, effect);
          continue;
        case "progress":
          scope.emit({ type: "messages", messages: effect.messages });
          continue;
        case "log":
          continue;
      }
      if (scope.signal.aborted) {
        machine.cancel("cancelled by the user");
        continue;
      }
      switch (effect.kind) {
        case "syncEnvironment":
          machine.respond(syncNow(scope, effect) ?? (yield* syncEnvironment(scope, effect)));
          break;
        case "callLlm":
          machine.respond(yield* callLlm(scope, effect));
          break;
        case "runTools": {
          const { cancelled, ...response } = yield* runTools(scope, effect);
          machine.respond(response);
          if (cancelled) machine.cancel("cancelled by the user");
          break;
        }
        case "execCode":
          machine.respond(yield* runCell(scope, effect));
          break;
        case "checkpoint":
          machine.respond(checkpointNow(scope, effect) ?? (yield* checkpoint(scope, effect)));
          break;
      }
    }
    return yield* Effect.fail(
      new TurnError({ sessionId: scope.sessionId, reason: "store", message: "the turn did not finish" }),
    );
  });
