// The scheduler under a controlled clock (`TestClock`), over a real SQLite state db: firing
// times (cron with a time zone across both DST changes, `every`), dedup between two
// schedulers on two connections to one file, missed firings after a restart (run / skip),
// adoption of a firing left running, the concurrency limit, the timeout, retry with backoff,
// pause. The run is a recording `LoopRunner` whose runs take (Test)Clock time; the daemon's
// real path (agent session + RunManager + mock model) is test/integration/serve-loops.test.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "@effect/vitest";
import type Database from "better-sqlite3";
import { Clock, Duration, Effect, Exit, Scope, TestClock } from "effect";
import { afterEach } from "vitest";
import type { RunState } from "../src/api.ts";
import { openStateDb } from "../src/db.ts";
import {
  type FiringError,
  firingKey,
  type LoopDef,
  type LoopRunner,
  makeScheduler,
  nextFiringOf,
} from "../src/scheduler.ts";

const dirs: string[] = [];
const dbs: Database.Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh state db file; `connect()` opens another connection to it. */
function stateFile(): { connect: () => Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), "lash-sched-test-"));
  dirs.push(dir);
  const file = join(dir, "serve.db");
  return {
    connect: () => {
      const db = openStateDb(file);
      dbs.push(db);
      return db;
    },
  };
}

interface Call {
  readonly key: string;
  readonly runId: string;
  readonly at: number;
  readonly text: string;
}

/**
 * A runner that records each start; each run takes `takes(attempt)` ms of clock time and
 * ends with `ends(attempt)` (the attempt counts the starts of one firing key).
 */
function recorder(
  options: {
    readonly takes?: (attempt: number) => number;
    readonly ends?: (attempt: number) => RunState;
  } = {},
) {
  const calls: Call[] = [];
  const cancelled: string[] = [];
  const waited: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const attemptOf = new Map<string, number>();
  const runner: LoopRunner = {
    start: (_loop, firing) =>
      Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis;
        const runId = `run-${calls.length + 1}`;
        attemptOf.set(runId, calls.filter((c) => c.key === firing.key).length + 1);
        calls.push({ key: firing.key, runId, at, text: firing.text });
        return { sessionId: `session-${calls.length}`, runId };
      }),
    wait: (runId) =>
      Effect.gen(function* () {
        waited.push(runId);
        const attempt = attemptOf.get(runId) ?? 1;
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        yield* Effect.sleep(Duration.millis(options.takes?.(attempt) ?? 0));
        const state = options.ends?.(attempt) ?? "completed";
        const error: FiringError | undefined =
          state === "completed" ? undefined : { code: "model_error", message: "the model failed" };
        return { state, error };
      }).pipe(Effect.ensuring(Effect.sync(() => (running -= 1)))),
    cancel: (runId) => Effect.sync(() => void cancelled.push(runId)),
  };
  return {
    runner,
    calls,
    cancelled,
    waited,
    get maxRunning() {
      return maxRunning;
    },
  };
}

const loop = (over: Partial<LoopDef> = {}): LoopDef => ({
  name: "tick",
  agent: "tick",
  schedule: { every: "1m" },
  instruction: "check the queue",
  missed: "run",
  concurrency: 1,
  ...over,
});

const MIN = 60_000;
const T0 = Date.parse("2026-06-01T12:00:30Z");

/** A scheduler in its own scope (closing it is the daemon going away), started. */
const open = (db: Database.Database, loops: readonly LoopDef[], runner: LoopRunner) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make();
    const scheduler = yield* Scope.extend(makeScheduler(db, loops, runner), scope);
    scheduler.start();
    yield* Effect.yieldNow();
    return { scheduler, stop: Scope.close(scope, Exit.void) };
  });

interface Row {
  key: string;
  kind: string;
  state: string;
  attempts: number;
  run_id: string | null;
  error: string | null;
}
const rows = (db: Database.Database): Row[] =>
  db.prepare(`SELECT * FROM loop_firings ORDER BY scheduled_at, claimed_at`).all() as Row[];

/** Until `pred` holds, letting the scheduler's fibers run (a wait on their effect, no clock change). */
const until = (pred: () => boolean, show: () => unknown = () => (dbs[0] ? rows(dbs[0]) : "")) =>
  Effect.gen(function* () {
    for (let i = 0; !pred(); i++) {
      if (i > 10_000) return yield* Effect.die(new Error(`never happened; state: ${JSON.stringify(show())}`));
      yield* Effect.yieldNow();
    }
  });

const iso = (ms: number) => new Date(ms).toISOString();

describe("next firing times", () => {
  it("a cron with a time zone fires at local 09:00 on both sides of Berlin's DST changes", () => {
    const next = nextFiringOf({ cron: "0 9 * * *", tz: "Europe/Berlin" });
    const times = (from: string, n: number) => {
      const out: string[] = [];
      let t = Date.parse(from);
      for (let i = 0; i < n; i++) {
        t = next(t)!;
        out.push(iso(t));
      }
      return out;
    };
    // last Sunday of March 2026 (29th): CET (UTC+1) → CEST (UTC+2)
    expect(times("2026-03-27T12:00:00Z", 4)).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
      "2026-03-31T07:00:00.000Z",
    ]);
    // last Sunday of October 2026 (25th): back to CET
    expect(times("2026-10-24T00:00:00Z", 3)).toEqual([
      "2026-10-24T07:00:00.000Z",
      "2026-10-25T08:00:00.000Z",
      "2026-10-26T08:00:00.000Z",
    ]);
  });

  it("the doubled hour of October fires once; the missing 02:30 of March fires at 03:30 CEST", () => {
    const run = (cron: string, from: string, n: number) => {
      const next = nextFiringOf({ cron, tz: "Europe/Berlin" });
      const out: string[] = [];
      for (let t = Date.parse(from); out.length < n; ) {
        t = next(t)!;
        out.push(iso(t));
      }
      return out;
    };
    // 02:00 CEST is 00:00Z, 02:00 CET (the clocks went back) 01:00Z: cron fires the first only
    expect(run("0 * * * *", "2026-10-24T22:30:00Z", 4)).toEqual([
      "2026-10-24T23:00:00.000Z",
      "2026-10-25T00:00:00.000Z",
      "2026-10-25T02:00:00.000Z",
      "2026-10-25T03:00:00.000Z",
    ]);
    // 02:30 does not exist on 29 March: that day's firing is at 03:30 CEST (01:30Z)
    expect(run("30 2 * * *", "2026-03-27T12:00:00Z", 3)).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
  });

  it("every: at the epoch-aligned multiples of the period", () => {
    const next = nextFiringOf({ every: "15m" });
    expect(iso(next(Date.parse("2026-06-01T12:07:00Z"))!)).toBe("2026-06-01T12:15:00.000Z");
    expect(iso(next(Date.parse("2026-06-01T12:15:00Z"))!)).toBe("2026-06-01T12:30:00.000Z");
  });
});

describe("Scheduler (TestClock, real SQLite)", () => {
  it.effect("fires a Berlin cron at the right instants as the clock crosses the March DST change", () =>
    Effect.gen(function* () {
      const db = stateFile().connect();
      const rec = recorder();
      yield* TestClock.setTime(Date.parse("2026-03-27T12:00:00Z"));
      const s = yield* open(db, [loop({ schedule: { cron: "0 9 * * *", tz: "Europe/Berlin" } })], rec.runner);
      yield* TestClock.adjust(Duration.days(4));
      yield* until(() => rows(db).every((r) => r.state === "completed") && rec.calls.length === 4);
      expect(rec.calls.map((c) => [c.key, iso(c.at)])).toEqual([
        ["tick@2026-03-28T08:00:00.000Z", "2026-03-28T08:00:00.000Z"],
        ["tick@2026-03-29T07:00:00.000Z", "2026-03-29T07:00:00.000Z"],
        ["tick@2026-03-30T07:00:00.000Z", "2026-03-30T07:00:00.000Z"],
        ["tick@2026-03-31T07:00:00.000Z", "2026-03-31T07:00:00.000Z"],
      ]);
      expect(rec.calls[0]!.text).toBe("check the queue\n\n(scheduled run tick@2026-03-28T08:00:00.000Z)");
      expect(rows(db).map((r) => [r.kind, r.state, r.attempts])).toEqual(
        Array.from({ length: 4 }, () => ["schedule", "completed", 1]),
      );
      const listed = yield* s.scheduler.get("tick");
      expect(listed.lastFiring).toMatchObject({ key: "tick@2026-03-31T07:00:00.000Z", state: "completed" });
      expect(iso(listed.nextFiring!)).toBe("2026-04-01T07:00:00.000Z");
      yield* s.stop;
    }),
  );

  it.effect("two schedulers on two connections to one db file run each firing once", () =>
    Effect.gen(function* () {
      const file = stateFile();
      const a = recorder();
      const b = recorder();
      yield* TestClock.setTime(T0);
      const sa = yield* open(file.connect(), [loop()], a.runner);
      const sb = yield* open(file.connect(), [loop()], b.runner);
      yield* TestClock.adjust(Duration.minutes(10));
      const db = file.connect();
      yield* until(() => rows(db).length === 10 && rows(db).every((r) => r.state === "completed"));
      const keys = [...a.calls, ...b.calls].map((c) => c.key).sort();
      expect(keys).toEqual(
        Array.from({ length: 10 }, (_, i) => firingKey("tick", Date.parse("2026-06-01T12:01:00Z") + i * MIN)),
      );
      yield* sa.stop;
      yield* sb.stop;
    }),
  );

  it.effect(
    "after a restart, firings missed while down run once each (missed: run) — and are not repeated",
    () =>
      Effect.gen(function* () {
        const file = stateFile();
        const db = file.connect();
        const first = recorder();
        yield* TestClock.setTime(T0);
        const s1 = yield* open(db, [loop()], first.runner);
        yield* TestClock.adjust(Duration.minutes(3)); // 12:01, 12:02, 12:03
        yield* until(() => rows(db).length === 3 && rows(db).every((r) => r.state === "completed"));
        yield* s1.stop;
        yield* TestClock.adjust(Duration.minutes(5)); // down: 12:04 … 12:08 missed
        const second = recorder();
        const s2 = yield* open(file.connect(), [loop()], second.runner);
        yield* until(
          () => second.calls.length === 5 && rows(db).every((r) => r.state === "completed"),
          () => [rows(db), second.calls],
        );
        expect(second.calls.map((c) => c.key)).toEqual(
          [4, 5, 6, 7, 8].map((m) => `tick@2026-06-01T12:0${m}:00.000Z`),
        );
        expect(rows(db).map((r) => r.kind)).toEqual([
          ...Array(3).fill("schedule"),
          ...Array(5).fill("missed"),
        ]);
        yield* TestClock.adjust(Duration.minutes(1)); // on schedule again: 12:09
        yield* until(() => second.calls.length === 6);
        expect(second.calls.at(-1)!.key).toBe("tick@2026-06-01T12:09:00.000Z");
        const all = [...first.calls, ...second.calls].map((c) => c.key);
        expect(new Set(all).size).toBe(all.length);
        yield* s2.stop;
      }),
  );

  it.effect("after a restart, missed firings are recorded skipped with missed: skip", () =>
    Effect.gen(function* () {
      const file = stateFile();
      const db = file.connect();
      const first = recorder();
      yield* TestClock.setTime(T0);
      const s1 = yield* open(db, [loop({ missed: "skip" })], first.runner);
      yield* TestClock.adjust(Duration.minutes(2));
      yield* until(() => rows(db).length === 2 && rows(db).every((r) => r.state === "completed"));
      yield* s1.stop;
      yield* TestClock.adjust(Duration.minutes(3));
      const second = recorder();
      const s2 = yield* open(file.connect(), [loop({ missed: "skip" })], second.runner);
      expect(second.calls).toEqual([]);
      expect(rows(db).map((r) => [r.key.slice(-13), r.kind, r.state])).toEqual([
        ["12:01:00.000Z", "schedule", "completed"],
        ["12:02:00.000Z", "schedule", "completed"],
        ["12:03:00.000Z", "missed", "skipped"],
        ["12:04:00.000Z", "missed", "skipped"],
        ["12:05:00.000Z", "missed", "skipped"],
      ]);
      yield* TestClock.adjust(Duration.minutes(1));
      yield* until(() => second.calls.length === 1);
      expect(second.calls[0]!.key).toBe("tick@2026-06-01T12:06:00.000Z");
      yield* s2.stop;
    }),
  );

  it.effect("a firing whose daemon went away mid-run is adopted: its run is awaited, not started again", () =>
    Effect.gen(function* () {
      const file = stateFile();
      const db = file.connect();
      const first = recorder({ takes: () => 10 * MIN });
      yield* TestClock.setTime(T0);
      const s1 = yield* open(db, [loop({ schedule: { every: "1h" } })], first.runner);
      yield* TestClock.adjust(Duration.minutes(60)); // fires 13:00
      yield* until(() => first.calls.length === 1);
      yield* s1.stop;
      expect(rows(db).map((r) => [r.state, r.run_id])).toEqual([["running", "run-1"]]);
      const second = recorder({ takes: () => MIN });
      const s2 = yield* open(file.connect(), [loop({ schedule: { every: "1h" } })], second.runner);
      yield* TestClock.adjust(Duration.minutes(1));
      yield* until(() => rows(db)[0]!.state === "completed");
      expect(second.calls).toEqual([]);
      expect(second.waited).toEqual(["run-1"]);
      yield* s2.stop;
    }),
  );

  it.effect("runs at most `concurrency` firings of a loop at once; the others wait their turn", () =>
    Effect.gen(function* () {
      const db = stateFile().connect();
      const rec = recorder({ takes: () => 5 * MIN });
      yield* TestClock.setTime(T0);
      const s = yield* open(db, [loop({ concurrency: 2 })], rec.runner);
      yield* TestClock.adjust(Duration.minutes(6));
      // 6 claimed; 2 started at once, the next two when they ended at 12:06 and 12:07
      expect(rows(db)).toHaveLength(6);
      expect(rec.maxRunning).toBe(2);
      expect(rec.calls.map((c) => [c.key.slice(-13), iso(c.at).slice(-13)])).toEqual([
        ["12:01:00.000Z", "12:01:00.000Z"],
        ["12:02:00.000Z", "12:02:00.000Z"],
        ["12:03:00.000Z", "12:06:00.000Z"],
      ]);
      expect(rows(db).filter((r) => r.state === "queued")).toHaveLength(3);
      yield* s.scheduler.setPaused("tick", true);
      yield* TestClock.adjust(Duration.minutes(30));
      yield* until(() => rows(db).every((r) => r.state === "completed"));
      expect(rec.maxRunning).toBe(2);
      yield* s.stop;
    }),
  );

  it.effect("a run longer than the timeout is cancelled and the firing recorded timeout", () =>
    Effect.gen(function* () {
      const db = stateFile().connect();
      const rec = recorder({ takes: () => 10 * MIN });
      yield* TestClock.setTime(T0);
      const s = yield* open(db, [loop({ schedule: { every: "1h" }, timeout: "2m" })], rec.runner);
      yield* TestClock.adjust(Duration.minutes(60 + 2)); // fires 13:00, times out 13:02
      yield* until(() => rows(db)[0]?.state === "timeout");
      expect(rec.cancelled).toEqual(["run-1"]);
      const row = rows(db)[0]!;
      expect(row.attempts).toBe(1);
      expect(JSON.parse(row.error!)).toMatchObject({ code: "firing_timeout" });
      expect(JSON.parse(row.error!).message).toContain("raise timeout:");
      yield* s.stop;
    }),
  );

  it.effect("a failed run is retried with doubling backoff; the last attempt's outcome is the firing's", () =>
    Effect.gen(function* () {
      const db = stateFile().connect();
      const rec = recorder({ takes: () => 0, ends: (attempt) => (attempt < 3 ? "failed" : "completed") });
      const flaky = loop({ name: "flaky", schedule: { every: "1h" }, retry: { attempts: 3, backoff: "1m" } });
      const doomed = loop({
        name: "doomed",
        schedule: { every: "1h" },
        retry: { attempts: 2, backoff: "1m" },
      });
      const failing = recorder({ takes: () => 0, ends: () => "failed" });
      yield* TestClock.setTime(T0);
      const s1 = yield* open(db, [flaky], rec.runner);
      const s2 = yield* open(db, [doomed], failing.runner);
      yield* TestClock.adjust(Duration.minutes(60 + 5));
      yield* until(
        () => rows(db).length === 2 && rows(db).every((r) => r.state !== "queued" && r.state !== "running"),
      );
      // 13:00, +1 min, +2 min more
      expect(rec.calls.map((c) => iso(c.at).slice(11, 19))).toEqual(["13:00:00", "13:01:00", "13:03:00"]);
      const byKey = Object.fromEntries(rows(db).map((r) => [r.key.split("@")[0], r]));
      expect(byKey.flaky).toMatchObject({ state: "completed", attempts: 3, run_id: "run-3" });
      expect(byKey.doomed).toMatchObject({ state: "failed", attempts: 2 });
      expect(JSON.parse(byKey.doomed!.error!)).toEqual({ code: "model_error", message: "the model failed" });
      yield* s1.stop;
      yield* s2.stop;
    }),
  );

  it.effect(
    "pause is persisted: no firings while paused, none counted missed after a restart; a trigger still runs",
    () =>
      Effect.gen(function* () {
        const file = stateFile();
        const db = file.connect();
        const rec = recorder();
        yield* TestClock.setTime(T0);
        const s1 = yield* open(db, [loop()], rec.runner);
        yield* TestClock.adjust(Duration.minutes(1));
        yield* until(() => rec.calls.length === 1);
        const paused = yield* s1.scheduler.setPaused("tick", true);
        expect(paused.paused).toBe(true);
        expect(paused.nextFiring).toBeUndefined();
        yield* TestClock.adjust(Duration.minutes(3));
        expect(rec.calls).toHaveLength(1);
        const manual = yield* s1.scheduler.trigger("tick", "now, please");
        expect(manual).toMatchObject({ kind: "manual", instruction: "now, please" });
        yield* until(() => rec.calls.length === 2);
        expect(rec.calls[1]!.text).toBe(`now, please\n\n(scheduled run ${manual.key})`);
        yield* s1.stop;
        // a restart while paused, then a resume: the paused minutes are not missed firings
        yield* TestClock.adjust(Duration.minutes(2));
        const s2 = yield* open(file.connect(), [loop()], rec.runner);
        expect((yield* s2.scheduler.list())[0]!.paused).toBe(true);
        yield* TestClock.adjust(Duration.minutes(2));
        yield* s2.scheduler.setPaused("tick", false);
        yield* TestClock.adjust(Duration.minutes(1));
        yield* until(() => rec.calls.length === 3);
        expect(rec.calls[2]!.key).toBe("tick@2026-06-01T12:09:00.000Z");
        expect(
          rows(db)
            .filter((r) => r.kind !== "manual")
            .map((r) => r.key.slice(-13)),
        ).toEqual(["12:01:00.000Z", "12:09:00.000Z"]);
        const unknown = yield* Effect.flip(s2.scheduler.trigger("tock"));
        expect(unknown).toMatchObject({ _tag: "NotFound", code: "loop_not_found" });
        expect(unknown.message).toContain("loops: tick");
        yield* s2.stop;
      }),
  );
});
