/**
 * Processes run by the host (reference §1.9): `start p(...)` runs the declared body of `p`
 * concurrently, in its own evaluator, and answers a handle at once; `await h` waits for the run's
 * result; `cancel h` stops it at its next host request; `yield` / `wake` are progress events;
 * `sleep for|until` waits on a timer the host may make durable; `wait_signal` / `signal_run` pass
 * values typed by the process's `signals` block.
 *
 * A `ProcessRuntime` wraps the host of the cell that declares the processes: module operations
 * inside a process body go to that host's `call` / `callBatch` (so a durable host journals them by
 * their call ids, which are deterministic: `lashlang:<run id>:resource:...`). The run id is the
 * `start` site's id, so a re-run of the same cell gives the same run ids and the same call ids.
 */
import type { ProcessDecl, Program, TypeExpr } from "./ast.ts";
import type { HandleRequest, OperationResult, StartRequest } from "./interp.ts";
import { type LashlangHost, LashlangState, parseCell, type RunOptions, runProgram } from "./runner.ts";
import { typeToSchema, validateAgainst } from "./types.ts";
import { fromJson, type Json, LangError, stringify, toJson, type Value } from "./values.ts";

/** Timers for `sleep`. A durable host records each wake-up time once (see core's rlm/processes). */
export interface ProcessTimers {
  /**
   * The wake-up time (ms since the epoch) of the sleep with this id: `compute(now)` the first time
   * it is asked; a durable host returns the recorded time when the sleep is asked again after a restart.
   */
  deadline(id: string, compute: (now: number) => number): Promise<number>;
  /** Resolves at `deadline`; rejects early when `signal` aborts. */
  sleepUntil(deadline: number, signal: AbortSignal): Promise<void>;
}

export interface ProcessEvent {
  kind: "started" | "yield" | "wake" | "finished" | "failed" | "cancelled";
  /** The run id (the `start` site's id). */
  run: string;
  process: string;
  value?: Json;
  error?: string;
}

export interface ProcessOptions {
  timers?: ProcessTimers;
  onEvent?: (e: ProcessEvent) => void;
  /** Step and memory budgets of each process body (the cell's options). */
  runOptions?: Pick<RunOptions, "stepBudget" | "memoryBudget">;
}

/**
 * Where the runs started by one cell do their work: the cell's host (module operations), its
 * timers and events, and a durable record (`record`) of what a run consumed. A run keeps the
 * context of the cell that started it after that cell has ended.
 */
export interface CellProcessContext extends ProcessOptions {
  /** The cell's host (default: the runtime's). */
  host?: LashlangHost;
  /**
   * A value recorded durably under `label`: `compute()` the first time, the recorded value when
   * asked again after a restart (the signals a run consumed, in order). Default: not durable.
   */
  record?: (label: string, compute: () => Promise<Json>) => Promise<Json>;
  /** Run ids of this cell are `<idPrefix>:<start site id>` (unique across the cells of a session). */
  idPrefix?: string;
  /** The content hash of the cell's module (`sha256:<hex>`), named by the run records. */
  moduleRef?: string;
  /** Opaque: which cell started the run (a host restarts a resumed run from that cell's context). */
  origin?: string;
}

/** A process run as the session keeps it (durable: the module ref, the arguments, the outcome). */
export interface ProcessRecord {
  id: string;
  process: string;
  /** `sha256:<hex>` of the module (the declaring cell's text), when the host gave one. */
  module?: string;
  args: { [k: string]: Json };
  state: "running" | "completed" | "failed" | "cancelled";
  result?: Json;
  error?: string;
  /** The failure as a value (`fail <record>`), when it was not text. */
  errorValue?: Json;
  origin?: string;
  /** Signals delivered to the run, in order (ids are the `signal_run` sites'). */
  signals?: { id: string; name: string; value: Json }[];
}

/** A process handle as the language sees it (a record). */
export const HANDLE_KEY = "__handle__";

interface Run {
  id: string;
  decl: ProcessDecl;
  args: { [k: string]: Json };
  cell: CellProcessContext;
  result: Promise<OperationResult>;
  outcome: OperationResult | null;
  done: boolean;
  abort: AbortController;
  /** Every delivery, in order; `consumed` holds the ids a `wait_signal` took. */
  deliveries: { id: string; name: string; value: Json }[];
  consumed: Set<string>;
  waits: number;
  wakeups: (() => void)[];
  /** Sent signals not yet in `deliveries` (the run's pump records them there in order). */
  live: { id: string; name: string; value: Json; ack: (error: string | null) => void }[];
  pumpWake: (() => void) | null;
  /** The signal the run waits for, if it is parked in `wait_signal`. */
  waitingFor: string | null;
}

/** Wall-clock timers (not durable): `lash lashlang run`, tests. */
export const wallTimers: ProcessTimers = {
  deadline: async (_id, compute) => compute(Date.now()),
  sleepUntil: (deadline, signal) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      signal.addEventListener("abort", () => {
        clearTimeout(t);
        reject(new Error("cancelled"));
      });
    }),
};

const UNITS: { [u: string]: number } = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `sleep for`: a number of ms, or `"500ms" | "5s" | "2m" | "1h"`. */
export function durationMs(v: Json): number {
  if (typeof v === "number" && Number.isFinite(v) && v >= 0) return v;
  if (typeof v === "string") {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(v);
    if (m) return Number(m[1]) * UNITS[m[2]!]!;
  }
  throw new Error(
    `sleep for: expected a duration like 500, "500ms", "5s", "2m" or "1h", got ${JSON.stringify(v)}`,
  );
}

/** `sleep until`: an RFC 3339 time or epoch milliseconds. */
export function untilMs(v: Json): number {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string") {
    const t = Date.parse(v);
    if (!Number.isNaN(t) && /^\d{4}-\d{2}-\d{2}T/.test(v)) return t;
  }
  throw new Error(
    `sleep until: expected an RFC 3339 time like "2030-01-01T00:00:00Z" or epoch milliseconds, got ${JSON.stringify(v)}`,
  );
}

function isObj(j: unknown): j is { [k: string]: Json } {
  return typeof j === "object" && j !== null && !Array.isArray(j);
}

const failed = (error: string): OperationResult => ({ ok: false, error });

/**
 * Runs the processes declared by cells. One runtime may serve many cells (an RLM session): a run
 * outlives the cell that started it, keeps that cell's context (host, timers, events), and its
 * handle can be awaited, signalled or cancelled from any later cell. Ended runs are records
 * (`records()` / `restore()`), so a handle stays awaitable after the runtime is rebuilt.
 */
export class ProcessRuntime {
  readonly runs = new Map<string, Run>();
  /** Runs known only by their record (restored; not running here). */
  private readonly stored = new Map<string, ProcessRecord>();
  private readonly base: CellProcessContext;
  constructor(inner: LashlangHost, options: ProcessOptions = {}) {
    this.base = { ...options, host: inner };
  }

  /**
   * The host for a cell whose text is `source` (its `process` declarations can be started).
   * `cell` is where the runs it starts do their work (default: the runtime's host and options).
   */
  forCell(source: string, cell: CellProcessContext = {}): LashlangHost {
    const parsed = parseCell(source);
    const program: Program = parsed.ok ? parsed.program : { items: [], processes: [], types: [], main: [] };
    return this.hostFor(program, source, null, { ...this.base, ...cell });
  }

  /** Every run this runtime knows: live runs (their current state) and restored records. */
  records(): ProcessRecord[] {
    const out = new Map<string, ProcessRecord>(this.stored);
    for (const r of this.runs.values()) {
      const o = r.outcome;
      out.set(r.id, {
        id: r.id,
        process: r.decl.name,
        ...(r.cell.moduleRef !== undefined ? { module: r.cell.moduleRef } : {}),
        args: r.args,
        state: !r.done ? "running" : r.abort.signal.aborted ? "cancelled" : o?.ok ? "completed" : "failed",
        ...(r.done && o?.ok ? { result: o.value } : {}),
        ...(r.done && o && !o.ok ? { error: o.error } : {}),
        ...(r.done && o && !o.ok && o.errorValue !== undefined ? { errorValue: o.errorValue } : {}),
        ...(r.cell.origin !== undefined ? { origin: r.cell.origin } : {}),
        ...(r.deliveries.length > 0 ? { signals: r.deliveries.map((d) => ({ ...d })) } : {}),
      });
    }
    return [...out.values()];
  }

  /**
   * Learn runs from their records (a session's stored state, a replayed cell's result). A live run
   * keeps running; signals a record lists that it has not seen are delivered to it.
   */
  restore(records: readonly ProcessRecord[]): void {
    for (const rec of records) {
      const live = this.runs.get(rec.id);
      if (live) {
        for (const d of rec.signals ?? []) this.deliver(live, d);
        continue;
      }
      this.stored.set(rec.id, rec);
    }
  }

  /**
   * Start a stored run again from its module (after a host restart): the body runs from the
   * beginning in `cell`'s context, where a durable host serves its completed operations, sleeps and
   * consumed signals from the journal. `source` is the module's text.
   */
  resume(id: string, source: string, cell: CellProcessContext = {}): string | null {
    const rec = this.stored.get(id);
    if (rec?.state !== "running") return `no unfinished process run ${id} to resume`;
    const parsed = parseCell(source);
    if (!parsed.ok) return `the module of process run ${id} does not parse`;
    const decl = parsed.program.processes.find((p) => p.name === rec.process);
    if (!decl) return `the module of process run ${id} declares no process \`${rec.process}\``;
    this.stored.delete(id);
    const ctx: CellProcessContext = { ...this.base, ...cell };
    this.start(decl, parsed.program, source, { id, process: rec.process, args: rec.args }, ctx);
    const run = this.runs.get(id)!;
    for (const d of rec.signals ?? []) this.deliver(run, d);
    return null;
  }

  /** Cancel every open run (its host is going away: the session is closed or reloaded). */
  cancelAll(reason = "cancelled: the session's process runtime was closed"): void {
    for (const r of this.runs.values()) if (!r.done) r.abort.abort(reason);
  }

  /** Ids of stored runs that are still `running` (a host restart left them): `resume` them. */
  unfinished(): ProcessRecord[] {
    return [...this.stored.values()].filter((r) => r.state === "running");
  }

  /**
   * Waits until every run started so far has ended. Runs parked in `wait_signal` when nothing
   * else can still send them one are cancelled.
   */
  async settle(): Promise<void> {
    for (;;) {
      const open = [...this.runs.values()].filter((r) => !r.done);
      if (open.length === 0) return;
      if (open.every((r) => r.waitingFor !== null)) {
        for (const r of open)
          r.abort.abort(
            `cancelled: the cell that started it ended while it waited for signal \`${r.waitingFor}\` and nothing else can send one`,
          );
        await Promise.all(open.map((r) => r.result));
        continue;
      }
      // wake when any open run ends or parks, then look again
      await new Promise<void>((resolve) => {
        this.changed = resolve;
        for (const r of open) void r.result.then(() => resolve());
      });
    }
  }

  private changed: () => void = () => {};

  private runOf(handle: Json): Run | ProcessRecord | string {
    if (!isObj(handle) || handle[HANDLE_KEY] !== "process" || typeof handle.run !== "string")
      return "expected handle record";
    const run = this.runs.get(handle.run) ?? this.stored.get(handle.run);
    if (!run) return `no process run ${handle.run} in this session`;
    return run;
  }

  /**
   * The run's signal log: delivery n is recorded durably (`signals:<run>:<n>`) as it arrives, so a
   * replay reads the same deliveries in the same order from the journal; a signal sent again with
   * an id already in the log (a re-run of the sending cell) is not delivered twice.
   */
  private async pump(run: Run): Promise<void> {
    const record = run.cell.record;
    for (let n = 0; !run.done; n++) {
      let d: { id: string; name: string; value: Json };
      try {
        const compute = () => this.nextLive(run);
        d = (record ? await record(`signals:${run.id}:${n}`, compute) : await compute()) as typeof d;
      } catch {
        break;
      }
      this.deliver(run, d);
    }
    for (const l of run.live.splice(0))
      l.ack(`process run ${run.id} has already ended; the signal was not delivered`);
  }

  /** The next sent signal not in the log yet (acknowledging those already in it); rejects when the run ends. */
  private nextLive(run: Run): Promise<Json> {
    return new Promise<Json>((resolve, reject) => {
      const look = () => {
        for (const l of run.live.filter((l) => run.deliveries.some((d) => d.id === l.id))) {
          run.live.splice(run.live.indexOf(l), 1);
          l.ack(null);
        }
        if (run.done) return reject(new Error("the run has ended"));
        const next = run.live[0];
        if (next) return resolve({ id: next.id, name: next.name, value: next.value });
        run.pumpWake = look;
      };
      look();
    });
  }

  private deliver(run: Run, d: { id: string; name: string; value: Json }): void {
    if (!run.deliveries.some((x) => x.id === d.id)) {
      run.deliveries.push({ id: d.id, name: d.name, value: d.value });
      for (const w of run.wakeups.splice(0)) w();
    }
    // senders of what is now in the log get their answer
    for (const l of run.live.filter((l) => run.deliveries.some((x) => x.id === l.id))) {
      run.live.splice(run.live.indexOf(l), 1);
      l.ack(null);
    }
  }

  /** The first delivery of `name` no `wait_signal` has taken; waits for one. */
  private take(run: Run, name: string): Promise<Json> {
    const next = run.deliveries.find((d) => d.name === name && !run.consumed.has(d.id));
    if (next) {
      run.consumed.add(next.id);
      return Promise.resolve({ id: next.id, value: next.value });
    }
    return new Promise<Json>((resolve, reject) => {
      run.waitingFor = name;
      this.changed();
      const onAbort = () => reject(new Error("cancelled"));
      run.abort.signal.addEventListener("abort", onAbort, { once: true });
      run.wakeups.push(() => {
        run.abort.signal.removeEventListener("abort", onAbort);
        run.waitingFor = null;
        this.take(run, name).then(resolve, reject);
      });
    });
  }

  private hostFor(
    program: Program,
    source: string,
    self: Run | null,
    cell: CellProcessContext,
  ): LashlangHost {
    const inner = cell.host ?? this.base.host!;
    const timers = cell.timers ?? wallTimers;
    const decls = new Map(program.processes.map((p) => [p.name, p]));
    const live = (): string | null =>
      self?.abort.signal.aborted ? "cancelled: the process was cancelled" : null;
    const host: LashlangHost = {
      call: async (c) => (live() ? failed(live()!) : inner.call(c)),
      callBatch: async (calls) => {
        const dead = live();
        if (dead) return calls.map(() => failed(dead));
        if (inner.callBatch) return inner.callBatch(calls);
        return Promise.all(calls.map((c) => inner.call(c)));
      },
      startProcess: async (req) => {
        const dead = live();
        if (dead) return failed(dead);
        const decl = decls.get(req.process);
        if (!decl) return failed(`unknown process \`${req.process}\`: declare it in this cell`);
        const id = cell.idPrefix !== undefined && self === null ? `${cell.idPrefix}:${req.id}` : req.id;
        if (this.runs.has(id)) return failed(`process run ${id} was already started`);
        this.stored.delete(id);
        this.start(decl, program, source, { ...req, id }, cell);
        return { ok: true, value: { [HANDLE_KEY]: "process", run: id, process: req.process } };
      },
      awaitHandle: async (req: HandleRequest) => {
        const run = this.runOf(req.value);
        if (typeof run === "string") return failed(run);
        const live = this.runs.get(run.id);
        if (live) return live.result;
        const rec = run as ProcessRecord;
        if (rec.state === "completed") return { ok: true, value: rec.result ?? null };
        if (rec.state === "running")
          return failed(
            `process run ${rec.id} is not running in this host (it was left unfinished by a host that stopped); resume the session's unfinished runs first`,
          );
        if (rec.errorValue !== undefined)
          return { ok: false, error: rec.error ?? "the process failed", errorValue: rec.errorValue };
        return failed(rec.error ?? `cancelled: the process was cancelled`);
      },
      cancel: async (req) => {
        const run = this.runOf(req.value);
        if (typeof run === "string") return failed(run);
        const r = this.runs.get(run.id);
        if (r && !r.done) r.abort.abort();
        return { ok: true, value: null };
      },
      sleep: async (req) => {
        const dead = live();
        if (dead) return failed(dead);
        let compute: (now: number) => number;
        try {
          if (req.mode === "for") {
            const ms = durationMs(req.value);
            compute = (now) => now + ms;
          } else {
            const at = untilMs(req.value);
            compute = () => at;
          }
        } catch (e) {
          return failed((e as Error).message);
        }
        const deadline = await timers.deadline(req.id, compute);
        try {
          await timers.sleepUntil(deadline, self?.abort.signal ?? new AbortController().signal);
        } catch {
          return failed("cancelled: the process was cancelled");
        }
        return { ok: true, value: null };
      },
      waitSignal: async (req) => {
        if (!self) return failed("`wait_signal` can only be used inside a process body");
        const dead = live();
        if (dead) return failed(dead);
        if (!self.decl.signals.some((s) => s.name === req.name))
          return failed(
            `process \`${self.decl.name}\` declares no signal \`${req.name}\`; add it to its \`signals { ... }\` block`,
          );
        const name = req.name;
        // the k-th consumption of this run is recorded: a replay takes the same signals in the same order
        const label = `signal:${self.id}:${self.waits++}`;
        const compute = () => this.take(self, name);
        try {
          const got = cell.record ? await cell.record(label, compute) : await compute();
          const { id, value } = got as { id: string; value: Json };
          self.consumed.add(id);
          return { ok: true, value };
        } catch {
          return failed(`cancelled: the process was cancelled while it waited for signal \`${name}\``);
        }
      },
      signalRun: async (req) => {
        const found = this.runOf(req.run);
        if (typeof found === "string") return failed(found);
        const run = this.runs.get(found.id);
        if (!run) return failed(`process run ${found.id} has already ended; the signal was not delivered`);
        const sig = run.decl.signals.find((s) => s.name === req.name);
        if (!sig)
          return failed(
            `process \`${run.decl.name}\` declares no signal \`${req.name}\` (its signals: ${run.decl.signals.map((s) => s.name).join(", ") || "none"})`,
          );
        const problem = checkType(sig.type, req.payload, program);
        if (problem) return failed(`signal \`${req.name}\` of process \`${run.decl.name}\`: ${problem}`);
        if (run.done) return failed(`process run ${run.id} has already ended; the signal was not delivered`);
        // the `signal_run` site's id names the delivery: a re-run of the sending cell does not deliver it twice
        const id = cell.idPrefix !== undefined && self === null ? `${cell.idPrefix}:${req.id}` : req.id;
        if (run.deliveries.some((d) => d.id === id)) return { ok: true, value: null };
        // answered once the delivery is in the run's log (journaled by the run's pump)
        return new Promise<OperationResult>((resolve) => {
          run.live.push({
            id,
            name: req.name,
            value: req.payload,
            ack: (error) => resolve(error ? failed(error) : { ok: true, value: null }),
          });
          const wake = run.pumpWake;
          run.pumpWake = null;
          wake?.();
        });
      },
    };
    if (inner.print) host.print = inner.print.bind(inner);
    return host;
  }

  private start(
    decl: ProcessDecl,
    program: Program,
    source: string,
    req: StartRequest,
    cell: CellProcessContext,
  ): void {
    const emit = cell.onEvent ?? (() => {});
    const run: Run = {
      id: req.id,
      decl,
      args: req.args,
      cell,
      result: Promise.resolve(failed("not started")),
      outcome: null,
      done: false,
      abort: new AbortController(),
      deliveries: [],
      consumed: new Set(),
      waits: 0,
      wakeups: [],
      live: [],
      pumpWake: null,
      waitingFor: null,
    };
    this.runs.set(req.id, run);
    const body: Program = { items: [], processes: program.processes, types: program.types, main: decl.body };
    const state = new LashlangState();
    for (const p of decl.params) state.set(p.name, req.args[p.name] ?? null);
    // a run started inside a process body gets ids under its parent's
    const { idPrefix: _prefix, ...inherited } = cell;
    const host = this.hostFor(program, source, run, inherited);
    emit({ kind: "started", run: run.id, process: decl.name, value: req.args });
    const cancelled = new Promise<OperationResult>((resolve) =>
      run.abort.signal.addEventListener("abort", () => {
        const why = run.abort.signal.reason;
        resolve(failed(typeof why === "string" ? why : "cancelled: the process was cancelled"));
      }),
    );
    // `fail <value>`: the awaiting side's wrapper carries the value itself (reference), its text beside it
    let failedWith: Json | undefined;
    const body$ = runProgram(state, source, body, host, {
      ...cell.runOptions,
      cellId: run.id,
      processEvent: (kind, value: Value) => {
        if (kind === "fail") {
          if (typeof value !== "string") failedWith = toJson(value);
          throw new LangError("Host", typeof value === "string" ? value : stringify(value));
        }
        emit({ kind, run: run.id, process: decl.name, value: toJson(value) });
        return 0;
      },
    }).then(
      (r): OperationResult => {
        if (r.outcome === "error")
          return failedWith !== undefined && r.error?.kind === "Host"
            ? { ok: false, error: r.error.message, errorValue: failedWith }
            : failed(r.error?.message ?? "the process failed");
        return { ok: true, value: r.outcome === "finished" ? (r.value ?? null) : null };
      },
      // a host that throws (not a language error) fails the run, never leaves it open
      (e: unknown): OperationResult =>
        failed(`the process crashed: ${e instanceof Error ? e.message : String(e)}`),
    );
    if (decl.signals.length > 0) void this.pump(run);
    run.result = Promise.race([body$, cancelled]).then((r) => {
      run.done = true;
      run.outcome = r;
      const wake = run.pumpWake;
      run.pumpWake = null;
      wake?.();
      if (run.abort.signal.aborted) emit({ kind: "cancelled", run: run.id, process: decl.name });
      else if (r.ok) emit({ kind: "finished", run: run.id, process: decl.name, value: r.value });
      else emit({ kind: "failed", run: run.id, process: decl.name, error: r.error });
      return r;
    });
  }
}

function checkType(t: TypeExpr, payload: Json, program: Program): string | null {
  const types = new Map(program.types.map((d) => [d.name, d.type]));
  const resolve = (path: string[]): Json => {
    const d = path.length === 1 ? types.get(path[0]!) : undefined;
    return d ? typeToSchema(d, resolve) : {};
  };
  return validateAgainst(fromJson(payload), typeToSchema(t, resolve));
}
