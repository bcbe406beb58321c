// Loops: agents whose spec has `schedule` + `instruction`, fired by the daemon.
//
// - Every notion of time comes from Effect's `Clock` (`TestClock` drives it in tests).
// - The next firing: croner for a cron (time-zone aware, DST handled by croner), or
//   `every: <n><unit>` at the epoch-aligned multiples of the period (`every: 15m` fires at
//   :00, :15, :30, :45 UTC; `1d` at midnight UTC).
// - Each firing has a dedup key `<loop>@<scheduled ISO time>`, claimed in the state db's
//   `loop_firings` table with one `INSERT … ON CONFLICT DO NOTHING`: whichever scheduler
//   (process, connection) inserts the row runs the firing; every other one skips it.
// - Firings scheduled while no scheduler ran (after the loop's last claimed firing, before
//   this scheduler started) are "missed": with `missed: run` each is run once (not collapsed;
//   at most the `MAX_MISSED` newest, older ones are dropped unrecorded), with `missed: skip`
//   each is recorded `skipped`.
// - Per loop: at most `concurrency` firings run at once in one scheduler (later ones wait,
//   `queued`); a firing's run longer than `timeout` is cancelled and the firing recorded
//   `timeout` (not retried); a failed run is retried `retry.attempts - 1` times, waiting
//   `retry.backoff` (default 10 s), doubled each time. Each attempt is a new session.
// - A firing left unfinished by a daemon that stopped (or was killed) is adopted at start:
//   its run (resumed by the RunManager) is waited for, or, claimed but never started, run.
// - Pausing is persisted (`loops.paused`); firings scheduled while paused are not run, and
//   not counted as missed after a restart (`loops.resumed_at`).
import { randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import { Cron } from "croner";
import { Clock, Deferred, Duration, Effect, Layer, Option, type Scope } from "effect";
import {
  type FiringState,
  Loop,
  LoopFiring,
  NotFound,
  Principal,
  type RunState,
  Unavailable,
} from "./api.ts";
import { ensureOwnerColumn, registerDaemon } from "./daemons.ts";
import { createAgentSession } from "./groups/agents.ts";
import {
  Access,
  DaemonOwner,
  type DaemonOwnerShape,
  Host,
  RunManager,
  Scheduler,
  type SchedulerShape,
  StateDb,
} from "./services.ts";
import { triggerFirer } from "./triggers.ts";

/** Missed firings run at start per loop (the newest); older ones are dropped. */
export const MAX_MISSED = 100;
/** Backoff between attempts when `retry.backoff` is not given. */
export const DEFAULT_BACKOFF_MS = 10_000;

/** A loop as the scheduler runs it. */
export interface LoopDef {
  readonly name: string;
  readonly agent: string;
  /** The spec's schedule: a cron string, `{ cron, tz }` or `{ every }`. */
  readonly schedule: unknown;
  readonly instruction: string;
  readonly missed: "run" | "skip";
  readonly concurrency: number;
  readonly timeout?: string;
  readonly retry?: { readonly attempts: number; readonly backoff?: string };
}

export interface FiringError {
  readonly code: string;
  readonly message: string;
}

/** How a firing's run is started, awaited and cancelled (the daemon's: an agent session + RunManager). */
export interface LoopRunner {
  readonly start: (
    loop: LoopDef,
    firing: {
      readonly key: string;
      readonly text: string;
      /** Who triggered a manual firing (its session is theirs); absent: the loop's own principal. */
      readonly principal?: Principal;
    },
  ) => Effect.Effect<{ readonly sessionId: string; readonly runId: string }, FiringError>;
  readonly wait: (
    runId: string,
  ) => Effect.Effect<{ readonly state: RunState; readonly error?: FiringError | undefined }, FiringError>;
  readonly cancel: (runId: string) => Effect.Effect<void>;
}

/** `"30s"` → 30000 (units ms, s, m, h, d). */
export function parseDuration(text: string): number {
  const m = /^([1-9][0-9]*)(ms|s|m|h|d)$/.exec(text);
  if (!m)
    throw new Error(`invalid duration "${text}": use a number and a unit, e.g. "30s", "10m", "2h", "1d"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "ms"];
  return Number(m[1]) * unit;
}

/** The schedule's next firing strictly after `after` (epoch ms), or undefined when it has none. */
export type NextFiring = (after: number) => number | undefined;

export function nextFiringOf(schedule: unknown): NextFiring {
  if (typeof schedule === "object" && schedule !== null && "every" in schedule) {
    const period = parseDuration(String((schedule as { every: string }).every));
    return (after) => (Math.floor(after / period) + 1) * period;
  }
  const { cron, tz } =
    typeof schedule === "string"
      ? { cron: schedule, tz: undefined }
      : (schedule as { cron: string; tz?: string });
  const job = new Cron(cron, { paused: true, ...(tz !== undefined ? { timezone: tz } : {}) });
  return (after) => job.nextRun(new Date(after))?.getTime();
}

/** The loops of a build: its agents with a schedule and a loop. */
export function loopsOf(
  agents: readonly {
    name: string;
    schedule?: unknown;
    loop?: Omit<LoopDef, "name" | "agent" | "schedule">;
  }[],
): LoopDef[] {
  const out: LoopDef[] = [];
  for (const a of agents)
    if (a.schedule !== undefined && a.loop !== undefined)
      out.push({ name: a.name, agent: a.name, schedule: a.schedule, ...a.loop });
  return out;
}

export const firingKey = (loop: string, scheduledAt: number): string =>
  `${loop}@${new Date(scheduledAt).toISOString()}`;

/** What a firing sends the agent: the instruction, and the firing's key (the agent may want the time). */
export const firingText = (instruction: string, key: string): string =>
  `${instruction}\n\n(scheduled run ${key})`;

interface FiringRow {
  key: string;
  loop: string;
  scheduled_at: number;
  kind: "schedule" | "missed" | "manual";
  state: FiringState;
  attempts: number;
  session_id: string | null;
  run_id: string | null;
  instruction: string;
  claimed_at: number;
  principal: string | null;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  /** The daemon that claimed (or adopted) it (`daemons.ts`). */
  owner: string | null;
}

const toFiring = (r: FiringRow): LoopFiring =>
  new LoopFiring({
    key: r.key,
    loop: r.loop,
    scheduledAt: r.scheduled_at,
    kind: r.kind,
    state: r.state,
    attempts: r.attempts,
    ...(r.session_id !== null ? { sessionId: r.session_id } : {}),
    ...(r.run_id !== null ? { runId: r.run_id } : {}),
    instruction: r.instruction,
    claimedAt: r.claimed_at,
    ...(r.started_at !== null ? { startedAt: r.started_at } : {}),
    ...(r.finished_at !== null ? { finishedAt: r.finished_at } : {}),
    ...(r.error !== null ? { error: JSON.parse(r.error) as FiringError } : {}),
    ...(r.principal !== null ? { triggeredBy: (JSON.parse(r.principal) as { name: string }).name } : {}),
  });

/** The scheduler's tables (in the state db). */
export function createLoopTables(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS loop_firings (
      key TEXT PRIMARY KEY,
      loop TEXT NOT NULL,
      scheduled_at INTEGER NOT NULL,
      kind TEXT NOT NULL,
      state TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      session_id TEXT,
      run_id TEXT,
      instruction TEXT NOT NULL,
      claimed_at INTEGER NOT NULL,
      principal TEXT,
      started_at INTEGER,
      finished_at INTEGER,
      error TEXT
    );
    CREATE INDEX IF NOT EXISTS loop_firings_loop ON loop_firings (loop, scheduled_at);
    CREATE TABLE IF NOT EXISTS loops (
      name TEXT PRIMARY KEY,
      paused INTEGER NOT NULL DEFAULT 0,
      resumed_at INTEGER
    );
  `);
}

export interface SchedulerImpl extends SchedulerShape {
  /** Begin firing (the daemon calls it after the RunManager recovered its runs). */
  readonly start: () => void;
}

/**
 * A scheduler over `db` for `loops`, running firings with `runner`. Its fibers live in the
 * caller's scope and wait for `start()`.
 */
export const makeScheduler = (
  db: Database.Database,
  loops: readonly LoopDef[],
  runner: LoopRunner,
  owner?: DaemonOwnerShape,
): Effect.Effect<SchedulerImpl, never, Scope.Scope> =>
  Effect.gen(function* () {
    createLoopTables(db);
    ensureOwnerColumn(db, "loop_firings");
    // this scheduler's daemon (a scheduler of its own registers itself)
    const me =
      owner ??
      (yield* Effect.acquireRelease(
        Effect.sync(() => registerDaemon(db)),
        (r) => Effect.sync(r.close),
      ));
    const st = {
      claim: db.prepare(
        `INSERT INTO loop_firings (key, loop, scheduled_at, kind, state, attempts, instruction, claimed_at, principal, owner)
         VALUES (@key, @loop, @scheduled_at, @kind, @state, 0, @instruction, @claimed_at, @principal, @owner) ON CONFLICT(key) DO NOTHING`,
      ),
      adopt: db.prepare(`UPDATE loop_firings SET owner = ? WHERE key = ? AND owner IS ?`),
      get: db.prepare(`SELECT * FROM loop_firings WHERE key = ?`),
      list: db.prepare(
        `SELECT * FROM loop_firings WHERE loop = ? ORDER BY scheduled_at DESC, claimed_at DESC LIMIT ?`,
      ),
      last: db.prepare(
        `SELECT * FROM loop_firings WHERE loop = ? ORDER BY scheduled_at DESC, claimed_at DESC LIMIT 1`,
      ),
      lastScheduled: db.prepare(
        `SELECT MAX(scheduled_at) AS at FROM loop_firings WHERE loop = ? AND kind != 'manual'`,
      ),
      unfinished: db.prepare(
        `SELECT * FROM loop_firings WHERE loop = ? AND state IN ('queued', 'running') ORDER BY scheduled_at`,
      ),
      update: db.prepare(
        `UPDATE loop_firings SET state = @state, attempts = @attempts, session_id = @session_id, run_id = @run_id,
           started_at = @started_at, finished_at = @finished_at, error = @error WHERE key = @key`,
      ),
      loopRow: db.prepare(`SELECT paused, resumed_at FROM loops WHERE name = ?`),
      setPaused: db.prepare(
        `INSERT INTO loops (name, paused, resumed_at) VALUES (@name, @paused, @resumed_at)
         ON CONFLICT(name) DO UPDATE SET paused = @paused, resumed_at = COALESCE(@resumed_at, resumed_at)`,
      ),
    };
    const byName = new Map(loops.map((l) => [l.name, l]));
    const next = new Map(loops.map((l) => [l.name, nextFiringOf(l.schedule)]));
    const slots = new Map<string, Effect.Semaphore>();
    for (const l of loops) slots.set(l.name, yield* Effect.makeSemaphore(l.concurrency));
    const gate = yield* Deferred.make<void>();
    const scope = yield* Effect.scope;

    const row = (key: string) => st.get.get(key) as FiringRow | undefined;
    const save = (r: FiringRow) => st.update.run(r);
    const loopState = (name: string) =>
      st.loopRow.get(name) as { paused: number; resumed_at: number | null } | undefined;

    const loopOf = (name: string): Effect.Effect<LoopDef, NotFound> => {
      const l = byName.get(name);
      if (l) return Effect.succeed(l);
      return Effect.fail(
        new NotFound({
          code: "loop_not_found",
          message: `no loop named ${JSON.stringify(name)} (loops: ${[...byName.keys()].join(", ") || "none"}); a loop is an agent with schedule and instruction in its spec: add them, run \`lash build\` and restart \`lash serve\``,
        }),
      );
    };

    /** Claim a firing; true when this scheduler won it. */
    const claim = (
      loop: LoopDef,
      key: string,
      scheduledAt: number,
      kind: FiringRow["kind"],
      state: FiringState,
      instruction: string,
      principal?: Principal,
    ) =>
      Effect.map(
        Clock.currentTimeMillis,
        (now) =>
          st.claim.run({
            key,
            loop: loop.name,
            scheduled_at: scheduledAt,
            kind,
            state,
            instruction,
            claimed_at: now,
            principal: principal ? JSON.stringify({ name: principal.name, admin: principal.admin }) : null,
            owner: me.id,
          }).changes === 1,
      );

    /** Run a claimed firing to its end: slot, attempts, timeout, retries. */
    const execute = (loop: LoopDef, key: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        const attempts = loop.retry?.attempts ?? 1;
        const backoff =
          loop.retry?.backoff !== undefined ? parseDuration(loop.retry.backoff) : DEFAULT_BACKOFF_MS;
        const timeoutMs = loop.timeout !== undefined ? parseDuration(loop.timeout) : undefined;
        for (;;) {
          const r = row(key);
          if (!r || (r.state !== "queued" && r.state !== "running")) return;
          let runId = r.run_id;
          let attempt = r.attempts;
          if (r.state === "queued" || runId === null) {
            // a new attempt: a new session of the agent and a run
            attempt += 1;
            const now = yield* Clock.currentTimeMillis;
            const started = yield* Effect.either(
              runner.start(loop, {
                key,
                text: firingText(r.instruction, key),
                ...(r.principal !== null
                  ? { principal: new Principal(JSON.parse(r.principal) as { name: string; admin: boolean }) }
                  : {}),
              }),
            );
            if (started._tag === "Left") {
              if (started.left.code === "draining") return; // the next daemon adopts it
              const done = { ...r, attempts: attempt, started_at: r.started_at ?? now };
              if (attempt < attempts) {
                save({ ...done, state: "queued", error: JSON.stringify(started.left) });
                yield* Effect.sleep(Duration.millis(backoff * 2 ** (attempt - 1)));
                continue;
              }
              save({ ...done, state: "failed", finished_at: now, error: JSON.stringify(started.left) });
              return;
            }
            runId = started.right.runId;
            save({
              ...r,
              state: "running",
              attempts: attempt,
              session_id: started.right.sessionId,
              run_id: runId,
              started_at: r.started_at ?? now,
              error: null,
            });
          }
          const id = runId;
          const waited =
            timeoutMs === undefined
              ? Effect.map(runner.wait(id), Option.some)
              : Effect.timeoutTo(runner.wait(id), {
                  duration: Duration.millis(timeoutMs),
                  onSuccess: Option.some,
                  onTimeout: () => Option.none(),
                });
          const result = yield* Effect.either(waited);
          const now = yield* Clock.currentTimeMillis;
          const cur = row(key) ?? r;
          if (result._tag === "Right" && Option.isNone(result.right)) {
            yield* runner.cancel(id);
            save({
              ...cur,
              state: "timeout",
              finished_at: now,
              error: JSON.stringify({
                code: "firing_timeout",
                message: `the run took longer than the loop's timeout (${loop.timeout}) and was cancelled; raise timeout: in the spec of ${loop.agent} if it needs longer`,
              }),
            });
            return;
          }
          const outcome =
            result._tag === "Left"
              ? { state: "failed" as const, error: result.left }
              : Option.getOrThrow(result.right);
          if (outcome.state === "completed") {
            save({ ...cur, state: "completed", finished_at: now, error: null });
            return;
          }
          const error: FiringError = outcome.error ?? {
            code: `run_${outcome.state}`,
            message: `the firing's run ended ${outcome.state}`,
          };
          if (cur.attempts < attempts) {
            save({ ...cur, state: "queued", error: JSON.stringify(error) });
            yield* Effect.sleep(Duration.millis(backoff * 2 ** (cur.attempts - 1)));
            continue;
          }
          save({ ...cur, state: "failed", finished_at: now, error: JSON.stringify(error) });
          return;
        }
      }).pipe(
        (e) => slots.get(loop.name)!.withPermits(1)(e),
        Effect.catchAllCause((cause) => Effect.logError(`loop ${loop.name}: firing ${key} failed`, cause)),
      );

    const fork = (e: Effect.Effect<void>) => Effect.asVoid(Effect.forkIn(e, scope));

    /** One loop: adopt unfinished firings, then fire on schedule. */
    const runLoop = (loop: LoopDef) =>
      Effect.gen(function* () {
        yield* Deferred.await(gate);
        const nextAfter = next.get(loop.name)!;
        // what a daemon that no longer runs left unfinished (a live one keeps its own), claimed once
        for (const r of st.unfinished.all(loop.name) as FiringRow[])
          if (!me.alive(r.owner) && st.adopt.run(me.id, r.key, r.owner).changes === 1)
            yield* fork(execute(loop, r.key));
        const startedAt = yield* Clock.currentTimeMillis;
        const last = (st.lastScheduled.get(loop.name) as { at: number | null }).at;
        const resumedAt = loopState(loop.name)?.resumed_at ?? null;
        let cursor = Math.max(last ?? startedAt, resumedAt ?? Number.NEGATIVE_INFINITY);
        // missed firings: after the last claimed one, up to now
        if (last !== null) {
          const missed: number[] = [];
          for (let t = nextAfter(cursor); t !== undefined && t <= startedAt; t = nextAfter(t)) {
            missed.push(t);
            if (missed.length > MAX_MISSED) missed.shift();
          }
          for (const at of missed) {
            cursor = at;
            if (loopState(loop.name)?.paused) continue;
            const key = firingKey(loop.name, at);
            if (loop.missed === "skip") {
              if (yield* claim(loop, key, at, "missed", "skipped", loop.instruction)) {
                const r = row(key)!;
                save({
                  ...r,
                  finished_at: startedAt,
                  error: JSON.stringify({
                    code: "missed",
                    message: "no daemon ran at its time and the loop says missed: skip",
                  }),
                });
              }
            } else if (yield* claim(loop, key, at, "missed", "queued", loop.instruction))
              yield* fork(execute(loop, key));
          }
          cursor = Math.max(cursor, startedAt);
        }
        for (;;) {
          const at = nextAfter(cursor);
          if (at === undefined) return;
          const now = yield* Clock.currentTimeMillis;
          if (at > now) yield* Effect.sleep(Duration.millis(at - now));
          cursor = at;
          if (loopState(loop.name)?.paused) continue;
          const key = firingKey(loop.name, at);
          if (yield* claim(loop, key, at, "schedule", "queued", loop.instruction))
            yield* fork(execute(loop, key));
        }
      }).pipe(Effect.catchAllCause((cause) => Effect.logError(`loop ${loop.name} stopped`, cause)));

    for (const loop of loops) yield* Effect.forkIn(runLoop(loop), scope);

    const describe = (loop: LoopDef) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const paused = (loopState(loop.name)?.paused ?? 0) === 1;
        const nextAt = paused ? undefined : next.get(loop.name)!(now);
        const last = st.last.get(loop.name) as FiringRow | undefined;
        return new Loop({
          name: loop.name,
          agent: loop.agent,
          schedule: loop.schedule,
          instruction: loop.instruction,
          missed: loop.missed,
          concurrency: loop.concurrency,
          ...(loop.timeout !== undefined ? { timeout: loop.timeout } : {}),
          ...(loop.retry !== undefined ? { retry: loop.retry } : {}),
          paused,
          ...(nextAt !== undefined ? { nextFiring: nextAt } : {}),
          ...(last
            ? {
                lastFiring: {
                  key: last.key,
                  state: last.state,
                  ...(last.run_id !== null ? { runId: last.run_id } : {}),
                  ...(last.session_id !== null ? { sessionId: last.session_id } : {}),
                  at: last.scheduled_at,
                },
              }
            : {}),
        });
      });

    const impl: SchedulerImpl = {
      start: () => Effect.runSync(Deferred.succeed(gate, undefined)),
      list: () => Effect.forEach(loops, describe),
      get: (name) => Effect.flatMap(loopOf(name), describe),
      firings: (name, limit) =>
        Effect.map(loopOf(name), () => (st.list.all(name, limit) as FiringRow[]).map(toFiring)),
      trigger: (name, instruction, principal) =>
        Effect.gen(function* () {
          const loop = yield* loopOf(name);
          if (!(yield* Deferred.isDone(gate)))
            return yield* Effect.fail(
              new Unavailable({
                code: "scheduler_starting",
                message:
                  "the daemon is still recovering its runs and has not started its loops; retry in a moment",
              }),
            );
          const now = yield* Clock.currentTimeMillis;
          const key = `${loop.name}@manual:${new Date(now).toISOString()}:${randomBytes(3).toString("hex")}`;
          yield* claim(loop, key, now, "manual", "queued", instruction ?? loop.instruction, principal);
          yield* fork(execute(loop, key));
          return toFiring(row(key)!);
        }),
      setPaused: (name, paused) =>
        Effect.gen(function* () {
          const loop = yield* loopOf(name);
          const now = yield* Clock.currentTimeMillis;
          st.setPaused.run({ name: loop.name, paused: paused ? 1 : 0, resumed_at: paused ? null : now });
          return yield* describe(loop);
        }),
    };
    return impl;
  });

/** The principal a loop's sessions and runs belong to (admins see them; the console as admin). */
export const loopPrincipal = (loop: LoopDef): Principal =>
  new Principal({ name: `loop:${loop.name}`, admin: false });

/** The daemon's scheduler: the build's loops, each firing an agent session + run of the RunManager. */
export const SchedulerLive = Layer.scoped(
  Scheduler,
  Effect.gen(function* () {
    const host = yield* Host;
    const db = yield* StateDb;
    const runs = yield* RunManager;
    const access = yield* Access;
    const services = Layer.mergeAll(
      Layer.succeed(Host, host),
      Layer.succeed(RunManager, runs),
      Layer.succeed(Access, access),
    );
    const describeError = (e: { code?: string; message?: string }): FiringError => ({
      code: e.code ?? "run_failed",
      message: e.message ?? String(e),
    });
    const runner: LoopRunner = {
      start: (loop, firing) =>
        Effect.gen(function* () {
          const principal = firing.principal ?? loopPrincipal(loop);
          const sessionId = yield* createAgentSession(principal, loop.agent, firing.key);
          const run = yield* runs.start({ sessionId, text: firing.text, principal });
          return { sessionId, runId: run.id };
        }).pipe(Effect.provide(services), Effect.mapError(describeError)),
      wait: (runId) =>
        Effect.map(runs.wait(runId), (run) => ({ state: run.state, error: run.error })).pipe(
          Effect.mapError(describeError),
        ),
      cancel: (runId) => Effect.ignore(runs.cancel(runId)),
    };
    const scheduler = yield* makeScheduler(
      db,
      loopsOf(host.manifest?.agents ?? []),
      runner,
      yield* DaemonOwner,
    );
    // RLM sessions' registered triggers fire from the same start (triggers.ts)
    const firer = yield* triggerFirer;
    return {
      ...scheduler,
      start: () => {
        scheduler.start();
        firer.start();
      },
    } satisfies SchedulerImpl;
  }),
);
