/**
 * The RLM host's side of Lashlang processes (reference §1.9): durable `sleep` timers on Effect's
 * `Clock`, and process lifecycle events as turn activity.
 *
 * Each session has one `ProcessRuntime` (`@lash/lashlang`); a run keeps the context of the cell that
 * started it after that cell ends (its module operations take that cell's dispatch path, so the
 * journal records each by its call id, `lashlang:<run id>:resource:...`). The turn commits when its
 * runs have ended. When a host restarts mid-turn, a completed cell served from the journal starts its
 * unfinished runs again from their module (rlm/executor.ts `replayed`), an interrupted cell runs again,
 * and completed operations, wake-up times (`remember`) and signal deliveries come from the journal, so
 * a resumed sleeper waits only for what is left and wakes once.
 */
import type { ProcessEvent, ProcessTimers } from "@lash/lashlang";
import type { TurnActivityBody } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Deferred from "effect/Deferred";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import * as Runtime from "effect/Runtime";

/**
 * Timers whose wake-up times go through `remember` (a journaled value: recorded the first time,
 * read back after a restart) and whose waits use the runtime's `Clock` (a `TestClock` in tests).
 * A wait ends early, with an error, when `signal` aborts (cancel) or `stop` completes (the turn was stopped).
 */
export function clockTimers<E>(
  runtime: Runtime.Runtime<never>,
  remember: (label: string, value: Effect.Effect<number>) => Effect.Effect<number, E>,
  stop?: Deferred.Deferred<void>,
): ProcessTimers {
  const runPromise = Runtime.runPromise(runtime);
  return {
    deadline: (id, compute) =>
      runPromise(remember(`sleep:${id}`, Effect.map(Clock.currentTimeMillis, compute))),
    sleepUntil: async (deadline, signal) => {
      const wait = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sleep(Duration.millis(Math.max(0, deadline - now))),
      );
      const stopped = stop
        ? Effect.zipRight(Deferred.await(stop), Effect.fail("the turn was stopped" as const))
        : Effect.never;
      const fiber = Runtime.runFork(runtime)(Effect.raceFirst(wait, stopped));
      const onAbort = () => Runtime.runFork(runtime)(Fiber.interrupt(fiber));
      signal.addEventListener("abort", onAbort);
      const exit = await runPromise(Fiber.await(fiber));
      signal.removeEventListener("abort", onAbort);
      if (Exit.isFailure(exit)) throw new Error("cancelled");
    },
  };
}

/** A process event as turn activity: a run is shown as a call of `process:<name>` (family `lashlang.process`). */
export function processActivity(e: ProcessEvent): TurnActivityBody {
  const name = `process:${e.process}`;
  switch (e.kind) {
    case "started":
      return { type: "toolStarted", callId: e.run, name, args: e.value ?? null, family: "lashlang.process" };
    case "yield":
    case "wake":
      return {
        type: "toolProgress",
        callId: e.run,
        update: { kind: `process.${e.kind}`, value: e.value ?? null },
      };
    default: {
      const text =
        e.kind === "finished"
          ? JSON.stringify(e.value ?? null)
          : (e.error ?? "cancelled: the process was cancelled");
      return {
        type: "toolCompleted",
        callId: e.run,
        name,
        isError: e.kind !== "finished",
        content: [{ type: "text", text }],
        durationMs: 0,
        replayed: false,
      };
    }
  }
}
