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

/** A process handle as the language sees it (a record). */
export const HANDLE_KEY = "__handle__";

interface Run {
  id: string;
  decl: ProcessDecl;
  result: Promise<OperationResult>;
  done: boolean;
  abort: AbortController;
  mailbox: Map<string, Json[]>;
  waiters: Map<string, ((v: Json) => void)[]>;
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

/** Runs the processes declared by cells against one host (one runtime per RLM cell or CLI run). */
export class ProcessRuntime {
  readonly runs = new Map<string, Run>();
  private readonly timers: ProcessTimers;
  private readonly inner: LashlangHost;
  private readonly options: ProcessOptions;
  constructor(inner: LashlangHost, options: ProcessOptions = {}) {
    this.inner = inner;
    this.options = options;
    this.timers = options.timers ?? wallTimers;
  }

  /** The host for a cell whose text is `source` (its `process` declarations can be started). */
  forCell(source: string): LashlangHost {
    const parsed = parseCell(source);
    const program: Program = parsed.ok ? parsed.program : { items: [], processes: [], types: [], main: [] };
    return this.hostFor(program, source, null);
  }

  /**
   * Waits until every run started so far has ended (the cell that started them has ended). Runs
   * parked in `wait_signal` when nothing else can still send them one are cancelled.
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

  private runOf(handle: Json): Run | string {
    if (!isObj(handle) || handle[HANDLE_KEY] !== "process" || typeof handle.run !== "string")
      return `expected a process handle (the value of \`start name(...)\`), got ${stringify(fromJson(handle))}`;
    const run = this.runs.get(handle.run);
    if (!run)
      return `no process run ${handle.run} here: a run ends with the cell that started it, so await its handle in that cell`;
    return run;
  }

  private hostFor(program: Program, source: string, self: Run | null): LashlangHost {
    const inner = this.inner;
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
        this.start(decl, program, source, req);
        return { ok: true, value: { [HANDLE_KEY]: "process", run: req.id, process: req.process } };
      },
      awaitHandle: async (req: HandleRequest) => {
        const run = this.runOf(req.value);
        if (typeof run === "string") return failed(run);
        return run.result;
      },
      cancel: async (req) => {
        const run = this.runOf(req.value);
        if (typeof run === "string") return failed(run);
        if (!run.done) run.abort.abort();
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
        const deadline = await this.timers.deadline(req.id, compute);
        try {
          await this.timers.sleepUntil(deadline, self?.abort.signal ?? new AbortController().signal);
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
        const queued = self.mailbox.get(req.name);
        if (queued && queued.length > 0) return { ok: true, value: queued.shift()! };
        const name = req.name;
        return new Promise<OperationResult>((resolve) => {
          const ws = self.waiters.get(name) ?? [];
          ws.push((v) => {
            self.waitingFor = null;
            resolve({ ok: true, value: v });
          });
          self.waiters.set(name, ws);
          self.waitingFor = name;
          this.changed();
          self.abort.signal.addEventListener("abort", () =>
            resolve(failed(`cancelled: the process was cancelled while it waited for signal \`${name}\``)),
          );
        });
      },
      signalRun: async (req) => {
        const run = this.runOf(req.run);
        if (typeof run === "string") return failed(run);
        const sig = run.decl.signals.find((s) => s.name === req.name);
        if (!sig)
          return failed(
            `process \`${run.decl.name}\` declares no signal \`${req.name}\` (its signals: ${run.decl.signals.map((s) => s.name).join(", ") || "none"})`,
          );
        const problem = checkType(sig.type, req.payload, program);
        if (problem) return failed(`signal \`${req.name}\` of process \`${run.decl.name}\`: ${problem}`);
        if (run.done) return failed(`process run ${run.id} has already ended; the signal was not delivered`);
        const ws = run.waiters.get(req.name);
        const w = ws?.shift();
        if (w) w(req.payload);
        else {
          const q = run.mailbox.get(req.name) ?? [];
          q.push(req.payload);
          run.mailbox.set(req.name, q);
        }
        return { ok: true, value: null };
      },
    };
    if (inner.print) host.print = inner.print.bind(inner);
    return host;
  }

  private start(decl: ProcessDecl, program: Program, source: string, req: StartRequest): void {
    const emit = this.options.onEvent ?? (() => {});
    const run: Run = {
      id: req.id,
      decl,
      result: Promise.resolve(failed("not started")),
      done: false,
      abort: new AbortController(),
      mailbox: new Map(),
      waiters: new Map(),
      waitingFor: null,
    };
    this.runs.set(req.id, run);
    const body: Program = { items: [], processes: program.processes, types: program.types, main: decl.body };
    const state = new LashlangState();
    for (const p of decl.params) state.set(p.name, req.args[p.name] ?? null);
    const host = this.hostFor(program, source, run);
    emit({ kind: "started", run: run.id, process: decl.name, value: req.args });
    const cancelled = new Promise<OperationResult>((resolve) =>
      run.abort.signal.addEventListener("abort", () => {
        const why = run.abort.signal.reason;
        resolve(failed(typeof why === "string" ? why : "cancelled: the process was cancelled"));
      }),
    );
    const body$ = runProgram(state, source, body, host, {
      ...this.options.runOptions,
      cellId: run.id,
      processEvent: (kind, value: Value) => {
        if (kind === "fail")
          throw new LangError("Host", typeof value === "string" ? value : stringify(value));
        emit({ kind, run: run.id, process: decl.name, value: toJson(value) });
        return 0;
      },
    }).then(
      (r): OperationResult => {
        if (r.outcome === "error") return failed(r.error?.message ?? "the process failed");
        return { ok: true, value: r.outcome === "finished" ? (r.value ?? null) : null };
      },
      // a host that throws (not a language error) fails the run, never leaves it open
      (e: unknown): OperationResult =>
        failed(`the process crashed: ${e instanceof Error ? e.message : String(e)}`),
    );
    run.result = Promise.race([body$, cancelled]).then((r) => {
      run.done = true;
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
