// Runs: one turn each, queued durably, executed on the host's runtime (one at a time per
// session, `maxConcurrentRuns` across sessions), every event into the durable log. After
// a crash the daemon resumes what was running from core's journal and re-queues the rest.
import { randomUUID } from "node:crypto";
import { LashRuntime, type TurnError, type TurnResult } from "@lash/core";
import type { TurnActivity } from "@lash/sansio";
import type Database from "better-sqlite3";
import { Cause, Effect, Exit, Fiber, Layer } from "effect";
import { Conflict, NotFound, Run, type RunState, TooManyRequests, Unavailable } from "./api.ts";
import { type EventLogImpl, eventKey } from "./events.ts";
import {
  EventLog,
  Host,
  Metrics,
  type MetricsShape,
  RunManager,
  type RunManagerShape,
  type ServeHost,
  type ServeSettings,
  Settings,
  type StartRun,
  StateDb,
} from "./services.ts";

interface RunRow {
  id: string;
  ord: number;
  session_id: string;
  principal: string;
  admin: number;
  state: RunState;
  input: string;
  turn_id: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  outcome: string | null;
  text: string | null;
  value: string | null;
  error: string | null;
  resumes: number;
}

const TERMINAL: ReadonlySet<RunState> = new Set(["completed", "failed", "cancelled"]);
export const isTerminal = (s: RunState): boolean => TERMINAL.has(s);

interface Live {
  fiber?: Fiber.RuntimeFiber<unknown, unknown>;
  cancelRequested: boolean;
  model: string;
  agent?: string;
}

export class RunManagerImpl implements RunManagerShape {
  private readonly queue: string[] = [];
  private readonly busy = new Set<string>();
  private executing = 0;
  private readonly live = new Map<string, Live>();
  private readonly waiters = new Map<string, ((run: Run) => void)[]>();
  private readonly idle: (() => void)[] = [];
  private draining = false;
  /** After a drain: the daemon is closing; what still runs is left to the journal. */
  private stopped = false;
  private ord: number;
  private readonly st: {
    insert: Database.Statement;
    get: Database.Statement;
    list: Database.Statement;
    byTurn: Database.Statement;
    unfinished: Database.Statement;
    update: Database.Statement;
    countQueued: Database.Statement;
  };

  private readonly log: EventLogImpl;
  private readonly host: ServeHost;
  private readonly settings: ServeSettings;
  private readonly metrics: MetricsShape;

  constructor(
    db: Database.Database,
    log: EventLogImpl,
    host: ServeHost,
    settings: ServeSettings,
    metrics: MetricsShape,
  ) {
    this.log = log;
    this.host = host;
    this.settings = settings;
    this.metrics = metrics;
    this.st = {
      insert: db.prepare(
        `INSERT INTO runs (id, ord, session_id, principal, admin, state, input, created_at) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?)`,
      ),
      get: db.prepare(`SELECT * FROM runs WHERE id = ?`),
      list: db.prepare(`SELECT * FROM runs WHERE session_id = ? ORDER BY ord`),
      byTurn: db.prepare(`SELECT * FROM runs WHERE session_id = ? AND turn_id = ?`),
      unfinished: db.prepare(
        `SELECT * FROM runs WHERE state IN ('queued', 'running', 'waitingApproval') ORDER BY ord`,
      ),
      update: db.prepare(
        `UPDATE runs SET state = @state, turn_id = @turn_id, started_at = @started_at, finished_at = @finished_at,
           outcome = @outcome, text = @text, value = @value, error = @error, resumes = @resumes WHERE id = @id`,
      ),
      countQueued: db.prepare(`SELECT COUNT(*) AS n FROM runs WHERE state = 'queued'`),
    };
    this.ord = (db.prepare(`SELECT MAX(ord) AS m FROM runs`).get() as { m: number | null }).m ?? 0;
  }

  // ---------------------------------------------------------------------------------------
  // rows

  private row(id: string): RunRow | undefined {
    return this.st.get.get(id) as RunRow | undefined;
  }

  private toRun(r: RunRow): Run {
    return new Run({
      id: r.id,
      sessionId: r.session_id,
      ...(r.turn_id !== null ? { turnId: r.turn_id } : {}),
      principal: r.principal,
      state: r.state,
      input: r.input,
      createdAt: r.created_at,
      ...(r.started_at !== null ? { startedAt: r.started_at } : {}),
      ...(r.finished_at !== null ? { finishedAt: r.finished_at } : {}),
      ...(r.outcome !== null ? { outcome: JSON.parse(r.outcome) } : {}),
      ...(r.text !== null ? { text: r.text } : {}),
      ...(r.value !== null ? { value: JSON.parse(r.value) } : {}),
      ...(r.error !== null ? { error: JSON.parse(r.error) } : {}),
      lastSeq: this.log.runLastSeq(r.id),
      resumes: r.resumes,
    });
  }

  private save(r: RunRow): void {
    this.st.update.run({
      id: r.id,
      state: r.state,
      turn_id: r.turn_id,
      started_at: r.started_at,
      finished_at: r.finished_at,
      outcome: r.outcome,
      text: r.text,
      value: r.value,
      error: r.error,
      resumes: r.resumes,
    });
  }

  private patch(id: string, p: Partial<RunRow>): RunRow | undefined {
    const r = this.row(id);
    if (!r) return undefined;
    const next = { ...r, ...p };
    this.save(next);
    return next;
  }

  // ---------------------------------------------------------------------------------------
  // the API

  start = (input: StartRun): Effect.Effect<Run, TooManyRequests | Unavailable | NotFound> =>
    Effect.gen(this, function* () {
      if (this.draining)
        return yield* new Unavailable({
          code: "draining",
          message: "lash serve is shutting down and takes no new turns; retry against the next daemon",
        });
      const queued = (this.st.countQueued.get() as { n: number }).n;
      if (queued >= this.settings.maxQueuedRuns)
        return yield* new TooManyRequests({
          code: "too_many_queued_runs",
          message: `${queued} runs are already queued (the limit is ${this.settings.maxQueuedRuns}); wait for some to finish, or raise it with lash serve --max-queued`,
        });
      yield* Effect.tryPromise({
        try: () =>
          this.host.runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.getSession(input.sessionId))),
        catch: () =>
          new NotFound({
            code: "session_not_found",
            message: `no session ${input.sessionId}; create one with POST /v1/sessions`,
          }),
      });
      const id = `run_${randomUUID()}`;
      this.ord += 1;
      this.st.insert.run(
        id,
        this.ord,
        input.sessionId,
        input.principal.name,
        input.principal.admin ? 1 : 0,
        input.text,
        Date.now(),
      );
      this.log.append(input.sessionId, id, "runQueued", {
        text: input.text,
        principal: input.principal.name,
      });
      this.queue.push(id);
      this.pump();
      return this.toRun(this.row(id)!);
    });

  get = (runId: string) =>
    Effect.suspend(() => {
      const r = this.row(runId);
      return r
        ? Effect.succeed(this.toRun(r))
        : Effect.fail(
            new NotFound({
              code: "run_not_found",
              message: `no run ${runId}; list runs with GET /v1/sessions/<id>/runs`,
            }),
          );
    });

  list = (sessionId: string) =>
    Effect.sync(() => (this.st.list.all(sessionId) as RunRow[]).map((r) => this.toRun(r)));

  /** The session's current run (running first, else the first queued). */
  activeRun = (sessionId: string): string | undefined => {
    const rows = (this.st.list.all(sessionId) as RunRow[]).filter((r) => !isTerminal(r.state));
    return (rows.find((r) => r.state !== "queued") ?? rows[0])?.id;
  };

  wait = (runId: string) =>
    Effect.flatMap(this.get(runId), (run) =>
      isTerminal(run.state)
        ? Effect.succeed(run)
        : Effect.async<Run>((resume) => {
            const list = this.waiters.get(runId) ?? [];
            const cb = (r: Run) => resume(Effect.succeed(r));
            list.push(cb);
            this.waiters.set(runId, list);
            return Effect.sync(() => {
              const l = this.waiters.get(runId);
              if (l) l.splice(l.indexOf(cb), 1);
            });
          }),
    );

  cancel = (runId: string) =>
    Effect.gen(this, function* () {
      const r = this.row(runId);
      if (!r) return yield* new NotFound({ code: "run_not_found", message: `no run ${runId}` });
      if (isTerminal(r.state))
        return yield* new Conflict({
          code: "run_finished",
          message: `run ${runId} already finished (${r.state}); there is nothing to cancel`,
        });
      const i = this.queue.indexOf(runId);
      if (i >= 0) {
        this.queue.splice(i, 1);
        this.finish(runId, { state: "cancelled" });
        return this.toRun(this.row(runId)!);
      }
      const live = this.live.get(runId);
      if (live) {
        live.cancelRequested = true;
        if (live.fiber) yield* Fiber.interrupt(live.fiber);
        return yield* this.wait(runId).pipe(Effect.orDie);
      }
      // not queued here and not running here (e.g. a row of another daemon): close it
      this.finish(runId, { state: "cancelled" });
      return this.toRun(this.row(runId)!);
    });

  runOfTurn = (sessionId: string, turnId: string): Run | undefined => {
    const r = this.st.byTurn.get(sessionId, turnId) as RunRow | undefined;
    return r ? this.toRun(r) : undefined;
  };

  setWaiting = (runId: string, waiting: boolean): void => {
    const r = this.row(runId);
    if (!r || isTerminal(r.state) || r.state === "queued") return;
    this.patch(runId, { state: waiting ? "waitingApproval" : "running" });
  };

  // ---------------------------------------------------------------------------------------
  // scheduling

  private pump(): void {
    if (this.draining) return;
    for (let i = 0; i < this.queue.length && this.executing < this.settings.maxConcurrentRuns; ) {
      const id = this.queue[i]!;
      const r = this.row(id);
      if (r?.state !== "queued") {
        this.queue.splice(i, 1);
        continue;
      }
      if (this.busy.has(r.session_id)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.execute(r, false);
    }
  }

  /** Run (or, `resume`, finish from the journal) one run's turn. */
  private execute(r: RunRow, resume: boolean): void {
    this.busy.add(r.session_id);
    this.executing++;
    const live: Live = { cancelRequested: false, model: "" };
    this.live.set(r.id, live);
    const keys = resume ? this.log.keys(r.id) : new Set<string>();
    let turnId = r.turn_id ?? undefined;
    if (resume) {
      const next = this.patch(r.id, { resumes: r.resumes + 1, state: "running" });
      this.log.append(r.session_id, r.id, "runResumed", { attempt: next?.resumes ?? r.resumes + 1 });
    } else {
      this.patch(r.id, { state: "running", started_at: Date.now() });
    }
    const onEvent = (ev: TurnActivity): void => {
      if (this.stopped) return;
      const { seq: _seq, sessionId: _sid, at: _at, ...data } = ev;
      if (turnId === undefined) {
        turnId = ev.turnId;
        this.patch(r.id, { turn_id: turnId });
        if (!keys.has("runStarted")) {
          keys.add("runStarted");
          this.log.append(r.session_id, r.id, "runStarted", { turnId });
        }
      }
      const key = eventKey(ev.type, data);
      if (key !== undefined) {
        if (keys.has(key)) return;
        keys.add(key);
      }
      const event = this.log.append(r.session_id, r.id, ev.type, data);
      this.metrics.record(event, { model: live.model, ...(live.agent ? { agent: live.agent } : {}) });
      this.host.traceEvent?.(ev);
    };
    const sessionId = r.session_id;
    const program = Effect.gen(function* () {
      const rt = yield* LashRuntime;
      const session = yield* rt.getSession(sessionId);
      live.model = session.model;
      const agent = session.state["serve.agent"];
      if (typeof agent === "string") live.agent = agent;
      if (resume) {
        const resumed = yield* rt.resumePending(sessionId, { onEvent, wait: true });
        if (resumed) return resumed;
        if (turnId !== undefined) return undefined; // committed before the crash recorded it
      }
      return yield* rt.turn(sessionId, { text: r.input }, { onEvent, resumePending: true, wait: true });
    });
    const fiber = this.host.runtime.runFork(program);
    live.fiber = fiber;
    fiber.addObserver((exit) => this.settle(r.id, sessionId, live, exit));
  }

  private settle(
    runId: string,
    sessionId: string,
    live: Live,
    exit: Exit.Exit<TurnResult | undefined, unknown>,
  ): void {
    if (this.stopped) return; // left resumable
    if (Exit.isSuccess(exit)) {
      const res = exit.value;
      if (!res) this.finish(runId, { state: "completed" });
      else {
        const o = res.outcome;
        const cancelled = o.type === "stopped" && o.reason === "cancelled";
        this.finish(runId, {
          state: cancelled || live.cancelRequested ? "cancelled" : "completed",
          outcome: o,
          text: res.text,
          ...(res.finalValue !== undefined ? { value: res.finalValue } : {}),
        });
      }
    } else if (Exit.isInterrupted(exit) || live.cancelRequested) {
      this.finish(runId, { state: "cancelled" });
    } else {
      const e = Cause.squash(exit.cause) as Partial<TurnError> & { _tag?: string; message?: string };
      const code =
        e._tag === "TurnError"
          ? String(e.reason)
          : e._tag === "SessionNotFound"
            ? "session_not_found"
            : "internal";
      this.finish(runId, { state: "failed", error: { code, message: String(e.message ?? e) } });
    }
    this.live.delete(runId);
    this.busy.delete(sessionId);
    this.executing--;
    if (this.executing === 0) for (const f of this.idle.splice(0)) f();
    this.pump();
  }

  private finish(
    runId: string,
    f: {
      state: RunState;
      outcome?: unknown;
      text?: string;
      value?: unknown;
      error?: { code: string; message: string };
    },
  ): void {
    const r = this.patch(runId, {
      state: f.state,
      finished_at: Date.now(),
      outcome: f.outcome !== undefined ? JSON.stringify(f.outcome) : null,
      text: f.text ?? null,
      value: f.value !== undefined ? JSON.stringify(f.value) : null,
      error: f.error ? JSON.stringify(f.error) : null,
    });
    if (!r) return;
    const event = this.log.append(r.session_id, runId, "runFinished", f);
    this.metrics.record(event, { model: this.live.get(runId)?.model ?? "" });
    const run = this.toRun(r);
    for (const w of this.waiters.get(runId) ?? []) w(run);
    this.waiters.delete(runId);
  }

  // ---------------------------------------------------------------------------------------
  // startup and shutdown

  /** Resume runs a previous daemon left running, re-queue its queued ones; returns how many resumed. */
  recover = (): number => {
    const rows = this.st.unfinished.all() as RunRow[];
    let resumed = 0;
    for (const r of rows) {
      if (r.state === "queued") this.queue.push(r.id);
      else if (!this.busy.has(r.session_id)) {
        this.execute(r, true);
        resumed++;
      } else this.queue.push(r.id);
    }
    this.pump();
    return resumed;
  };

  /** Refuse new runs; resolves when nothing executes or after `timeoutMs` (what still runs stays resumable). */
  drain = (timeoutMs: number): Promise<void> => {
    this.draining = true;
    const done = () => {
      this.stopped = true;
    };
    if (this.executing === 0) {
      done();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        done();
        resolve();
      }, timeoutMs);
      this.idle.push(() => {
        clearTimeout(t);
        done();
        resolve();
      });
    });
  };

  get isDraining(): boolean {
    return this.draining;
  }
}

export const RunManagerLive = Layer.effect(
  RunManager,
  Effect.gen(function* () {
    const db = yield* StateDb;
    const log = (yield* EventLog) as EventLogImpl;
    const host = yield* Host;
    const settings = yield* Settings;
    const metrics = yield* Metrics;
    return new RunManagerImpl(db, log, host, settings, metrics);
  }),
);
