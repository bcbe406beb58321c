// Runs: one turn each, queued durably, executed on the host's runtime (one at a time per
// session, `maxConcurrentRuns` across sessions), every event into the durable log. After
// a crash the daemon resumes what was running from core's journal and re-queues the rest.
import { randomUUID } from "node:crypto";
import { LashRuntime, newestSuccessor, SessionStore, type TurnError, type TurnResult } from "@lash/core";
import { type Message, messageText, type TurnActivity, type TurnOutcome } from "@lash/sansio";
import type Database from "better-sqlite3";
import { Cause, Data, Effect, Exit, Fiber, Layer } from "effect";
import { storedLayers } from "./access.ts";
import { Conflict, NotFound, Run, type RunState, TooManyRequests, Unavailable } from "./api.ts";
import { ensureOwnerColumn } from "./daemons.ts";
import { type EventLogImpl, eventKey } from "./events.ts";
import {
  DaemonOwner,
  type DaemonOwnerShape,
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
  /** JSON `{from, to}`: the run moved along a handoff. */
  handoff?: string | null;
  /** The daemon that executes it (`daemons.ts`). */
  owner: string | null;
}

/** What a finished run records: a turn's result, or what its commit keeps of it (after a crash). */
type Finished = Pick<TurnResult, "outcome" | "text" | "finalValue" | "handoff">;

/** A recovered run whose turn is neither pending nor committed (closed by another writer). */
class TurnLost extends Data.TaggedError("TurnLost")<{ readonly message: string }> {}

/** The text and value of an outcome, as core's `TurnResult` reports them. */
const finishedOf = (outcome: TurnOutcome): Finished => ({
  outcome,
  text:
    outcome.type === "finished" && outcome.finish.kind === "assistantMessage"
      ? outcome.finish.text
      : outcome.type === "stopped"
        ? (outcome.text ?? "")
        : "",
  ...(outcome.type === "finished" && outcome.finish.kind !== "assistantMessage"
    ? { finalValue: outcome.finish.value }
    : {}),
});

/**
 * Tests only: LASH_TEST_KILL_AFTER_COMMIT=1 makes the daemon die (SIGKILL, as `kill -9`) right
 * after a turn's commit, before its run records the result, so that a test can check the
 * recovery from the commit (test/integration/serve-durability.test.ts).
 */
const KILL_AFTER_COMMIT = process.env.LASH_TEST_KILL_AFTER_COMMIT === "1";

const TERMINAL: ReadonlySet<RunState> = new Set(["completed", "failed", "cancelled"]);
export const isTerminal = (s: RunState): boolean => TERMINAL.has(s);

interface Live {
  fiber?: Fiber.RuntimeFiber<unknown, unknown>;
  /** On a cluster: the worker published the run's `runFinished` in the shared log. */
  sharedFinished?: boolean;
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
  /** Sessions whose agent plugins this daemon attached (created here, or re-attached at their first run). */
  readonly attached = new Set<string>();
  /** After a drain: the daemon is closing; what still runs is left to the journal. */
  private stopped = false;
  private ord: number;
  private readonly st: {
    insert: Database.Statement;
    claim: Database.Statement;
    get: Database.Statement;
    list: Database.Statement;
    byTurn: Database.Statement;
    unfinished: Database.Statement;
    update: Database.Statement;
    setHandoff: Database.Statement;
    countQueued: Database.Statement;
  };

  private readonly log: EventLogImpl;
  private readonly owner: DaemonOwnerShape;
  private readonly host: ServeHost;
  private readonly settings: ServeSettings;
  private readonly metrics: MetricsShape;

  constructor(
    db: Database.Database,
    log: EventLogImpl,
    host: ServeHost,
    settings: ServeSettings,
    metrics: MetricsShape,
    owner: DaemonOwnerShape,
  ) {
    this.owner = owner;
    ensureOwnerColumn(db, "runs");
    // (a state db of an older lash: the handoff column is added)
    const cols = db.prepare(`SELECT name FROM pragma_table_info('runs')`).all() as { name: string }[];
    if (!cols.some((c) => c.name === "handoff")) db.exec(`ALTER TABLE runs ADD COLUMN handoff TEXT`);
    this.log = log;
    this.host = host;
    this.settings = settings;
    this.metrics = metrics;
    this.st = {
      insert: db.prepare(
        `INSERT INTO runs (id, ord, session_id, principal, admin, state, input, created_at, owner) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)`,
      ),
      claim: db.prepare(`UPDATE runs SET owner = ? WHERE id = ? AND owner IS ?`),
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
      setHandoff: db.prepare(`UPDATE runs SET handoff = ? WHERE id = ?`),
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
      ...(r.handoff ? { handoff: JSON.parse(r.handoff) as { from: string; to: string } } : {}),
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
      ...(r.handoff ? { handoff: JSON.parse(r.handoff) as { from: string; to: string } } : {}),
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
      // a session that handed off: the run goes to the newest session of its chain
      const session = yield* Effect.tryPromise({
        try: () =>
          this.host.runtime.runPromise(
            Effect.flatMap(SessionStore, (store) => newestSuccessor(store, input.sessionId)),
          ),
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
        session.id,
        input.principal.name,
        input.principal.admin ? 1 : 0,
        input.text,
        Date.now(),
        this.owner.id,
      );
      const moved = session.id !== input.sessionId ? { from: input.sessionId, to: session.id } : undefined;
      if (moved) this.st.setHandoff.run(JSON.stringify(moved), id);
      this.noteSession(session.id, session.model, session.state["serve.agent"]);
      this.emit(session.id, id, "runQueued", {
        text: input.text,
        principal: input.principal.name,
        ...(moved ? { handoff: moved } : {}),
      });
      // the caller learns of the run from the response: its row and first event are durable first
      this.log.flush();
      if (this.host.cluster) yield* Effect.promise(() => this.sharedTail);
      this.queue.push(id);
      this.pump();
      return yield* this.shared(this.toRun(this.row(id)!));
    });

  /** On a cluster a run's `lastSeq` is the cursor of its last event in the shared log (what streams use). */
  private shared = (run: Run): Effect.Effect<Run> => {
    const cluster = this.host.cluster;
    if (!cluster) return Effect.succeed(run);
    return Effect.map(
      // (after this daemon's own appends are durable)
      Effect.promise(() =>
        this.sharedTail.then(() => cluster.lastSeq(run.sessionId, run.id)).catch(() => run.lastSeq),
      ),
      (lastSeq) => new Run({ ...run, lastSeq }),
    );
  };

  get = (runId: string) => Effect.flatMap(this.getLocal(runId), this.shared);

  private getLocal = (runId: string) =>
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
    Effect.flatMap(
      Effect.sync(() => (this.st.list.all(sessionId) as RunRow[]).map((r) => this.toRun(r))),
      (runs) => Effect.forEach(runs, this.shared),
    );

  /** The session's current run (running first, else the first queued). */
  activeRun = (sessionId: string): string | undefined => {
    const rows = (this.st.list.all(sessionId) as RunRow[]).filter((r) => !isTerminal(r.state));
    return (rows.find((r) => r.state !== "queued") ?? rows[0])?.id;
  };

  wait = (runId: string) =>
    Effect.flatMap(this.getLocal(runId), (run) =>
      isTerminal(run.state)
        ? this.shared(run)
        : Effect.async<Run>((resume) => {
            const list = this.waiters.get(runId) ?? [];
            const cb = (r: Run) => resume(Effect.succeed(r));
            list.push(cb);
            this.waiters.set(runId, list);
            return Effect.sync(() => {
              const l = this.waiters.get(runId);
              if (l) l.splice(l.indexOf(cb), 1);
            });
          }).pipe(Effect.flatMap(this.shared)),
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
        if (r.state !== "queued")
          // cut off by a crash and not resumed yet: its pending turn in core is closed as abandoned
          yield* Effect.promise(() =>
            this.host.runtime
              .runPromise(
                Effect.flatMap(LashRuntime, (rt) =>
                  rt.abandonPending(r.session_id, { reason: "cancelled over HTTP", wait: true }),
                ),
              )
              .catch(() => undefined),
          );
        this.finish(runId, { state: "cancelled" });
        return this.toRun(this.row(runId)!);
      }
      const live = this.live.get(runId);
      if (live && this.host.cluster)
        return yield* new Conflict({
          code: "cancel_unsupported",
          message: `run ${runId} runs on the ${this.host.cluster.name} cluster, where cancelling a running turn is not built yet; its event stream (GET /v1/runs/${runId}/events) ends with its runFinished`,
        });
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

  /** Model and agent of the sessions this daemon ran (the metrics' labels). */
  private readonly sessions = new Map<string, { readonly model: string; readonly agent?: string }>();

  private noteSession = (sessionId: string, model: string, agent: unknown): void => {
    this.sessions.set(sessionId, { model, ...(typeof agent === "string" ? { agent } : {}) });
  };

  /** Append one event of a run to the log and count it in the metrics. */
  private emit(sessionId: string, runId: string, type: string, data: unknown, shared = true): void {
    const event = this.log.append(sessionId, runId, type, data);
    this.metrics.record(event, this.sessions.get(sessionId) ?? { model: "" });
    // on a cluster the session's streams read the shared log: the run's own events go there too
    const cluster = this.host.cluster;
    if (cluster && shared) {
      const e = { sessionId, runId, type, at: event.at, data };
      this.sharedTail = this.sharedTail.then(() => cluster.append([e])).catch(() => undefined);
    }
  }

  /** The shared log's appends of this daemon, in order (`emit`); settled once they are durable. */
  private sharedTail: Promise<void> = Promise.resolve();

  // ---------------------------------------------------------------------------------------
  // scheduling

  private pump(): void {
    if (this.draining) return;
    for (let i = 0; i < this.queue.length && this.executing < this.settings.maxConcurrentRuns; ) {
      const id = this.queue[i]!;
      const r = this.row(id);
      if (!r || isTerminal(r.state)) {
        this.queue.splice(i, 1);
        continue;
      }
      if (this.busy.has(r.session_id)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      // a run an earlier daemon left running resumes from core's journal
      this.execute(r, r.state !== "queued");
    }
  }

  /** Run (or, `resume`, finish from the journal) one run's turn. */
  private execute(r: RunRow, resume: boolean): void {
    if (this.host.cluster) {
      this.executeOnCluster(r, resume, this.host.cluster);
      return;
    }
    this.busy.add(r.session_id);
    this.executing++;
    const live: Live = { cancelRequested: false, model: "" };
    this.live.set(r.id, live);
    const keys = resume ? this.log.keys(r.id) : new Set<string>();
    let turnId = r.turn_id ?? undefined;
    let attempt = 0;
    let skipUsage = false;
    if (resume) {
      const next = this.patch(r.id, { resumes: r.resumes + 1, state: "running" });
      attempt = next?.resumes ?? r.resumes + 1;
    } else {
      this.patch(r.id, { state: "running", started_at: Date.now() });
    }
    const onEvent = (ev: TurnActivity): void => {
      if (this.stopped) return;
      if (ev.type === "turnFinished" && KILL_AFTER_COMMIT) process.kill(process.pid, "SIGKILL");
      const { seq: _seq, sessionId: _sid, at: _at, ...data } = ev;
      if (turnId === undefined) {
        turnId = ev.turnId;
        this.patch(r.id, { turn_id: turnId });
        if (!keys.has("runStarted")) {
          keys.add("runStarted");
          this.emit(r.session_id, r.id, "runStarted", { turnId });
        }
      }
      // the `usage` of a replayed model response comes right after it: logged once, with it
      if (ev.type === "usage" && skipUsage) {
        skipUsage = false;
        return;
      }
      if (ev.type === "llmResponse" || ev.type === "llmRequest") skipUsage = false;
      const key = eventKey(ev.type, data);
      // (the same messages twice in a live turn are two events; only a resume replays them)
      if (key !== undefined && (resume || ev.type !== "messages")) {
        if (keys.has(key)) {
          if (ev.type === "llmResponse") skipUsage = true;
          return;
        }
        keys.add(key);
      }
      this.emit(r.session_id, r.id, ev.type, data);
      this.host.traceEvent?.(ev);
    };
    const sessionId = r.session_id;
    const host = this.host;
    const attached = this.attached;
    const noteSession = this.noteSession;
    const emitResumed = (n: number) => this.emit(sessionId, r.id, "runResumed", { attempt: n });
    const committed = (turn: string) => this.committedTurn(r.id, sessionId, turn);
    const program = Effect.gen(function* () {
      const rt = yield* LashRuntime;
      const session = yield* rt.getSession(sessionId);
      live.model = session.model;
      const agent = session.state["serve.agent"];
      noteSession(sessionId, session.model, agent);
      if (resume) emitResumed(attempt);
      // an agent's settings: its plugins (after a restart) and its `maxTurns` for every run
      const spec =
        typeof agent === "string" && host.agentSession
          ? yield* Effect.try(() => host.agentSession!(agent))
          : undefined;
      if (typeof agent === "string") live.agent = agent;
      if (!attached.has(sessionId)) {
        // a session of an earlier daemon: its in-memory plugins again, and its policy layers
        // (agent's and principal's, as stored at creation) for a host that keeps them in memory
        if (spec) yield* rt.attachPlugins(sessionId, spec.plugins);
        const layers = storedLayers(session.state);
        if (layers.length > 0) host.setSessionLayers?.(sessionId, layers);
      }
      attached.add(sessionId);
      if (resume) {
        const resumed = yield* rt.resumePending(sessionId, { onEvent, wait: true });
        if (resumed) return resumed;
        // the turn handed off before the crash: its rest is pending in the successor
        const newest = yield* newestSuccessor(yield* SessionStore, sessionId);
        if (newest.id !== sessionId) {
          const moved = yield* rt.resumePending(newest.id, { onEvent, wait: true });
          if (moved) return { ...moved, handoff: { from: sessionId, to: newest.id } };
        }
        // committed before the crash let this run record its result: finish it from the commit
        if (turnId !== undefined) return yield* committed(turnId);
      }
      return yield* rt.turn(
        sessionId,
        { text: r.input },
        {
          onEvent,
          resumePending: true,
          wait: true,
          ...(spec?.maxTurns !== undefined ? { maxTurns: spec.maxTurns } : {}),
        },
      );
    });
    const fiber = this.host.runtime.runFork(program);
    live.fiber = fiber;
    fiber.addObserver((exit) => this.settle(r.id, sessionId, live, exit));
  }

  /**
   * `--engine restate`: the run's turn is submitted to the cluster (its id is the run id, the
   * idempotency key `{session}:{run id}`), and whichever worker runs it publishes its events in
   * the shared log. A resumed run (this daemon restarted) submits again: that attaches to the
   * same invocation, nothing runs twice.
   */
  private executeOnCluster(r: RunRow, resume: boolean, cluster: NonNullable<ServeHost["cluster"]>): void {
    this.busy.add(r.session_id);
    this.executing++;
    const live: Live = { cancelRequested: false, model: "" };
    this.live.set(r.id, live);
    const sessionId = r.session_id;
    let attempt = 0;
    if (resume) {
      const next = this.patch(r.id, { resumes: r.resumes + 1, state: "running" });
      attempt = next?.resumes ?? r.resumes + 1;
    } else this.patch(r.id, { state: "running", started_at: Date.now(), turn_id: r.id });
    const host = this.host;
    const noteSession = this.noteSession;
    // (a daemon that restarts and attaches to its run again says so in its own log only: on the
    // cluster the turn went on without it)
    const emit = (type: string, data: unknown) => this.emit(sessionId, r.id, type, data, !resume);
    const shared = () => this.sharedTail;
    const program = Effect.gen(function* () {
      const rt = yield* LashRuntime;
      const session = yield* rt.getSession(sessionId);
      live.model = session.model;
      const agent = session.state["serve.agent"];
      noteSession(sessionId, session.model, agent);
      if (typeof agent === "string") live.agent = agent;
      const spec =
        typeof agent === "string" && host.agentSession
          ? yield* Effect.try(() => host.agentSession!(agent))
          : undefined;
      emit(resume ? "runResumed" : "runStarted", resume ? { attempt } : { turnId: r.id });
      yield* Effect.promise(shared);
      const reply = yield* Effect.tryPromise(() =>
        cluster.submit(sessionId, {
          runId: r.id,
          text: r.input,
          ...(spec?.maxTurns !== undefined ? { maxTurns: spec.maxTurns } : {}),
        }),
      );
      live.sharedFinished = reply.finished;
      return finishedOf(reply.outcome);
    });
    const fiber = this.host.runtime.runFork(program);
    live.fiber = fiber;
    fiber.addObserver((exit) => this.settle(r.id, sessionId, live, exit));
  }

  /**
   * The result of a run whose turn committed before the daemon could record it (a crash
   * right after the commit): the outcome its `turnFinished` event logged, else the outcome
   * the committed messages give (the last assistant message's text). Never run again.
   */
  private committedTurn(runId: string, sessionId: string, turnId: string) {
    const log = this.log;
    return Effect.gen(function* () {
      const store = yield* SessionStore;
      const nodes = (yield* store.sessionNodes(sessionId)).filter(
        (n) => n.turnId === turnId && n.kind === "message",
      );
      if (nodes.length === 0)
        return yield* new TurnLost({
          message: `turn ${turnId} was cut off by a crash and then closed without a commit (abandoned by another writer); its run cannot finish — start a new turn`,
        });
      const logged = log.read(sessionId, 0, runId).find((e) => e.type === "turnFinished");
      const outcome = (logged?.data as { outcome?: TurnOutcome } | undefined)?.outcome;
      if (outcome) return finishedOf(outcome);
      const last = nodes.map((n) => n.payload as Message).findLast((m) => m.role === "assistant");
      return finishedOf({
        type: "finished",
        finish: { kind: "assistantMessage", text: last ? messageText(last) : "" },
      });
    });
  }

  private settle(runId: string, sessionId: string, live: Live, exit: Exit.Exit<Finished, unknown>): void {
    if (this.stopped) return; // left resumable
    if (Exit.isSuccess(exit)) {
      const res = exit.value;
      // the run's turn handed off: its record names the successor
      if (res.handoff) this.st.setHandoff.run(JSON.stringify(res.handoff), runId);
      const o = res.outcome;
      const cancelled = o.type === "stopped" && o.reason === "cancelled";
      this.finish(runId, {
        state: cancelled || live.cancelRequested ? "cancelled" : "completed",
        outcome: o,
        text: res.text,
        ...(res.finalValue !== undefined ? { value: res.finalValue } : {}),
      });
    } else if (Exit.isInterrupted(exit) || live.cancelRequested) {
      this.finish(runId, { state: "cancelled" });
    } else {
      const e = Cause.squash(exit.cause) as Partial<TurnError> & { _tag?: string; message?: string };
      const code =
        e._tag === "TurnError"
          ? String(e.reason)
          : e._tag === "TurnLost"
            ? "turn_lost"
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
    // (on a cluster the worker that ran the turn publishes the runFinished of a run that has an
    // outcome, after its turnFinished; the daemon publishes the others)
    this.emit(r.session_id, runId, "runFinished", f, !this.live.get(runId)?.sharedFinished);
    const run = this.toRun(r);
    for (const w of this.waiters.get(runId) ?? []) w(run);
    this.waiters.delete(runId);
  }

  // ---------------------------------------------------------------------------------------
  // startup and shutdown

  /** Resume runs a previous daemon left running, re-queue its queued ones; returns how many resumed. */
  recover = (): number => {
    // in their original order: a session's earlier (cut-off) run resumes before its queued ones;
    // only what a daemon that no longer runs left (another live daemon on this db keeps its
    // own), each claimed once
    const rows = (this.st.unfinished.all() as RunRow[]).filter(
      (r) => !this.owner.alive(r.owner) && this.st.claim.run(this.owner.id, r.id, r.owner).changes === 1,
    );
    for (const r of rows) this.queue.push(r.id);
    this.pump();
    return rows.filter((r) => r.state !== "queued").length;
  };

  /**
   * Refuse new runs; resolves true once nothing executes, false after `timeoutMs` with runs
   * still executing (they stay resumable: nothing interrupts them).
   */
  drain = (timeoutMs: number): Promise<boolean> => {
    this.draining = true;
    const done = () => {
      this.stopped = true;
    };
    if (this.executing === 0) {
      done();
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        done();
        resolve(false);
      }, timeoutMs);
      this.idle.push(() => {
        clearTimeout(t);
        done();
        resolve(true);
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
    return new RunManagerImpl(db, log, host, settings, metrics, yield* DaemonOwner);
  }),
);
