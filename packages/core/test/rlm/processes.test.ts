// Durable `sleep` in RLM processes, with Effect's TestClock and a real Journal over a real SQLite
// file: the wake-up time is recorded once; a "restarted" host (a new Journal and ProcessRuntime
// on the same file, later on the clock) reads it back and sleeps only the remainder.
import { describe, expect, it } from "@effect/vitest";
import { LashlangState, ProcessRuntime, runCell } from "@lash/lashlang";
import { Deferred, Effect, Fiber, TestClock } from "effect";
import { Journal } from "../../src/journal.ts";
import { clockTimers, processActivity } from "../../src/rlm/processes.ts";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import { session } from "../store/helpers.ts";
import { tempDb } from "../store/sqlite-helpers.ts";

const ids = { sessionId: "s1", turnId: "t1" };
const CELL = `process nap() {
  sleep for "1m"
  finish "up"
}
finish (await start nap())?`;

describe("durable sleep (TestClock, SQLite journal)", () => {
  it.scoped("records the wake-up time once; after a restart the sleeper waits only the remainder", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s1"));
      const runtime = yield* Effect.runtime<never>();
      let computed = 0;

      /** One host lifetime: a Journal and a ProcessRuntime; `recorded` completes when the sleep's time is known. */
      const host = (recorded: Deferred.Deferred<number>) => {
        const journal = new Journal(store);
        const timers = clockTimers(runtime, (label, value) =>
          journal
            .once(
              ids,
              `cell:${label}`,
              { label },
              Effect.tap(value, () => {
                computed++;
              }),
            )
            .pipe(
              Effect.map((r) => r.value),
              Effect.tap((t) => Deferred.succeed(recorded, t)),
            ),
        );
        const processes = new ProcessRuntime(
          { call: async () => ({ ok: false, error: "no tools" }) },
          { timers },
        );
        return Effect.promise(async () => {
          const r = await runCell(new LashlangState(), CELL, processes.forCell(CELL), {
            checkOptions: { abilities: { processes: true, sleep: true } },
          });
          await processes.settle();
          return r;
        });
      };

      // first host: the clock starts at 0, the sleep wakes at 60 000; it "crashes" at 30 000
      const recorded1 = yield* Deferred.make<number>();
      const first = yield* Effect.fork(host(recorded1));
      expect(yield* Deferred.await(recorded1)).toBe(60_000);
      yield* TestClock.adjust("30 seconds");
      yield* Fiber.interrupt(first);

      // the restarted host, at 30 000: same recorded time, not computed again
      const recorded2 = yield* Deferred.make<number>();
      const second = yield* Effect.fork(host(recorded2));
      expect(yield* Deferred.await(recorded2)).toBe(60_000);
      expect(computed).toBe(1);
      yield* TestClock.adjust("29 seconds");
      expect(second.unsafePoll()).toBeNull();
      yield* TestClock.adjust("1 second");
      const r = yield* Fiber.join(second);
      expect(r.error).toBeUndefined();
      expect(r.value).toBe("up");
    }),
  );
});

describe("process events as turn activity", () => {
  it("a run is a call of process:<name>; yield is progress; a failed run is an error result", () => {
    expect(processActivity({ kind: "started", run: "r1", process: "scan", value: { n: 1 } })).toEqual({
      type: "toolStarted",
      callId: "r1",
      name: "process:scan",
      args: { n: 1 },
      family: "lashlang.process",
    });
    expect(processActivity({ kind: "yield", run: "r1", process: "scan", value: 3 })).toEqual({
      type: "toolProgress",
      callId: "r1",
      update: { kind: "process.yield", value: 3 },
    });
    expect(processActivity({ kind: "failed", run: "r1", process: "scan", error: "boom" })).toMatchObject({
      type: "toolCompleted",
      isError: true,
      content: [{ type: "text", text: "boom" }],
    });
  });
});
