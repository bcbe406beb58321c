/**
 * The runner API: parse → check → compile → run one cell against a REPL state and a host.
 * Pure-compute cells run synchronously; only host operations suspend (one `await` each).
 */

import type { Program, Stmt, TypeExpr } from "./ast.ts";
import { type CheckOptions, check, type HostSurface } from "./checker.ts";
import { type Diagnostic, makeDiagnostic } from "./diagnostics.ts";
import {
  CODE_FINISH,
  type CompiledCell,
  type Ctx,
  compileProgram,
  DEFAULT_STEP_BUDGET,
  type HandleRequest,
  type HostRequest,
  type HostResponse,
  type OperationCall,
  type OperationResult,
  type StartRequest,
  typeValue,
} from "./interp.ts";
import { charge, DEFAULT_MEMORY_BUDGET, engineLimitError, enterMeter, leaveMeter, Meter } from "./memory.ts";
import { ParseError, parse } from "./parser.ts";
import {
  decodeValue,
  encodeValue,
  isProjectedMarker,
  PROJECTED_MARKER,
  type ProjectedMarker,
} from "./snapshot.ts";
import { fromJson, type Json, jsonText, LangError, List, Rec, share, toJson, type Value } from "./values.ts";

// ---------------------------------------------------------------- host interface

/**
 * What the evaluator asks of its host. Every method is optional except `call`; a missing ability
 * answers with the error "unsupported host ability: <name>". Host methods never make the cell throw:
 * a rejected promise becomes an error result (`{ok: false, error}`).
 */
export interface LashlangHost {
  /** One module operation (`await files.read({...})`). */
  call(call: OperationCall): Promise<OperationResult>;
  /** An aggregate `await` batch; default: all `call`s started together (`Promise.all`). */
  callBatch?(calls: OperationCall[]): Promise<OperationResult[]>;
  /** `print v`: `text` is the rendering (strings raw, other values compact JSON). */
  print?(value: Json, text: string): void;
  /** `finish v`: may return a replacement value. */
  finish?(value: Json): Json | undefined;
  startProcess?(req: StartRequest): Promise<OperationResult>;
  /** `await` of a handle (or any non-container value): the evaluator wraps the result. */
  awaitHandle?(req: HandleRequest): Promise<OperationResult>;
  cancel?(req: HandleRequest): Promise<OperationResult>;
  sleep?(req: { id: string; mode: "for" | "until"; value: Json }): Promise<OperationResult>;
  waitSignal?(req: { id: string; name: string }): Promise<OperationResult>;
  signalRun?(req: { id: string; run: Json; name: string; payload: Json }): Promise<OperationResult>;
}

/** A read-only projected binding (e.g. RLM `history`), resolved lazily on first read in a cell. */
export interface ProjectedBinding {
  get(): Json;
  /** Type name recorded in snapshot markers (default "any"). */
  typeName?: string;
  /** Opaque reference recorded in snapshot markers so a resolver can re-resolve it later. */
  ref?: Json;
}

export interface RunOptions {
  /** Step budget (statements + loop iterations). Default 10,000,000. */
  stepBudget?: number;
  /**
   * Memory budget: approximate bytes of values the cell may allocate (see `memory.ts`). Default
   * 256 MiB. Over it, the cell ends with "memory budget exceeded" and its assignments are discarded.
   */
  memoryBudget?: number;
  /** Run the static checker first (default true). */
  check?: boolean;
  /** Host surface for the checker (modules, operations, schemas). */
  surface?: HostSurface;
  /** Checker options (abilities, feature flags). */
  checkOptions?: Omit<CheckOptions, "surface" | "globals">;
  /** Read-only projected bindings for this cell (shadow globals of the same name). */
  projected?: { [name: string]: ProjectedBinding };
  /** Re-resolves projected placeholders restored from a snapshot; missing → the cell fails loudly. */
  resolveProjection?: (marker: ProjectedMarker) => Json | undefined;
  /** Scope used in call ids (`lashlang:<cellId>:...`). Default "cell". */
  cellId?: string;
  /** Runs the statements as a process body: `yield` / `wake` / `fail` call this (processes.ts). */
  processEvent?: Ctx["processEvent"];
}

export interface CellResult {
  outcome: "finished" | "continued" | "error";
  /** The `finish` value (JSON form), when finished. */
  value?: Json;
  /** The `finish` value as a language value. */
  rawValue?: Value;
  /** Printed values (JSON form) in order. */
  prints: Json[];
  /** Printed texts (strings raw, other values compact JSON). */
  printed: string[];
  error?: Diagnostic & { kind?: string };
  steps: number;
  stepBudget: number;
  /** Approximate bytes of values the cell allocated (the memory budget's meter). */
  allocated: number;
  memoryBudget: number;
}

// ---------------------------------------------------------------- state

export class LashlangState {
  globals = new Map<string, Value>();
  /** Projected placeholders restored from a snapshot, re-resolved before the next cell. */
  pending = new Map<string, ProjectedMarker>();
  /** Containers that came from a projected binding (for snapshot markers). */
  origins = new WeakMap<object, ProjectedMarker>();

  get(name: string): Json | undefined {
    const v = this.globals.get(name);
    return v === undefined ? undefined : toJson(v);
  }
  set(name: string, value: Json): void {
    this.globals.set(name, fromJson(value));
    this.pending.delete(name);
  }
  setValue(name: string, value: Value): void {
    this.globals.set(name, share(value));
    this.pending.delete(name);
  }
  names(): string[] {
    return [...this.globals.keys(), ...this.pending.keys()];
  }

  /** Snapshot JSON text: `{"globals": {...}}` with tuple / projected / entries markers. */
  snapshot(): string {
    return JSON.stringify(this.snapshotJson());
  }
  snapshotJson(): { globals: { [k: string]: Json } } {
    const globals: { [k: string]: Json } = {};
    for (const [k, v] of this.globals) globals[k] = encodeValue(v, (x) => this.origins.get(x as object));
    for (const [k, m] of this.pending) {
      const out: { [k: string]: Json } = { [PROJECTED_MARKER]: true, name: m.name, type_name: m.type_name };
      if (m.projection_ref !== undefined) out.projection_ref = m.projection_ref;
      globals[k] = out;
    }
    return { globals };
  }

  static restore(snapshot: string | { globals?: { [k: string]: Json } }): LashlangState {
    const data =
      typeof snapshot === "string" ? (JSON.parse(snapshot) as { globals?: { [k: string]: Json } }) : snapshot;
    const s = new LashlangState();
    const g = data.globals;
    if (g === null || typeof g !== "object" || Array.isArray(g))
      throw new Error("invalid lashlang snapshot: missing `globals`");
    for (const k of Object.keys(g)) {
      const j = g[k]!;
      if (isProjectedMarker(j)) {
        const m: ProjectedMarker = { name: String(j.name), type_name: String(j.type_name ?? "any") };
        if (j.projection_ref !== undefined) m.projection_ref = j.projection_ref;
        s.pending.set(k, m);
      } else s.globals.set(k, decodeValue(j));
    }
    return s;
  }
}

// ---------------------------------------------------------------- parse / check helpers

export type ParseResult = { ok: true; program: Program } | { ok: false; error: Diagnostic };

export function parseCell(source: string): ParseResult {
  try {
    return { ok: true, program: parse(source) };
  } catch (e) {
    if (e instanceof ParseError)
      return {
        ok: false,
        error: makeDiagnostic("parse", source, e.message, e.offset, e.offset + e.length, e.hint),
      };
    throw e;
  }
}

export function checkCell(
  source: string,
  options: CheckOptions = {},
): { ok: true; program: Program } | { ok: false; error: Diagnostic } {
  const p = parseCell(source);
  if (!p.ok) return p;
  const errs = check(p.program, options);
  const first = errs[0];
  if (first)
    return {
      ok: false,
      error: makeDiagnostic("check", source, first.message, first.start, first.end, first.hint),
    };
  return p;
}

// ---------------------------------------------------------------- running

async function perform(host: LashlangHost, req: HostRequest): Promise<HostResponse> {
  const guard = async (
    name: string,
    f: (() => Promise<OperationResult>) | undefined,
  ): Promise<OperationResult> => {
    if (!f) return { ok: false, error: `unsupported host ability: ${name}` };
    try {
      return await f();
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  };
  switch (req.kind) {
    case "call":
      return guard("call", () => host.call(req.call));
    case "batch":
      if (host.callBatch) {
        try {
          return await host.callBatch(req.calls);
        } catch (e) {
          const error = e instanceof Error ? e.message : String(e);
          return req.calls.map(() => ({ ok: false as const, error }));
        }
      }
      return Promise.all(req.calls.map((c) => guard("call", () => host.call(c))));
    case "start":
      return guard("processes", host.startProcess && (() => host.startProcess!(req.req)));
    case "await":
      return Promise.all(
        req.reqs.map((r) => guard("await", host.awaitHandle && (() => host.awaitHandle!(r)))),
      );
    case "cancel":
      return guard("cancel", host.cancel && (() => host.cancel!(req.req)));
    case "sleep":
      return guard("sleep", host.sleep && (() => host.sleep!(req.req)));
    case "wait_signal":
      return guard("process_signals", host.waitSignal && (() => host.waitSignal!(req.req)));
    case "signal_run":
      return guard("process_signals", host.signalRun && (() => host.signalRun!(req.req)));
  }
}

export function renderPrint(v: Value): string {
  return typeof v === "string" ? v : jsonText(v, false);
}

const noHost: LashlangHost = {
  call: async (c) => ({ ok: false, error: `unknown tool: ${c.module}.${c.operation}` }),
};

/**
 * Runs one cell. Parse and check errors leave the state untouched; a runtime error keeps the
 * assignments made before it. Never rejects for language errors.
 */
export async function runCell(
  state: LashlangState,
  source: string,
  host: LashlangHost = noHost,
  options: RunOptions = {},
): Promise<CellResult> {
  const budget = options.stepBudget ?? DEFAULT_STEP_BUDGET;
  const base = baseResult(budget, options);
  const parsed = parseCell(source);
  if (!parsed.ok) return { ...base, outcome: "error", error: parsed.error };
  const program = parsed.program;
  const projected = options.projected ?? {};
  const projectedNames = Object.keys(projected);
  if (options.check !== false) {
    const errs = check(program, {
      ...options.checkOptions,
      ...(options.surface ? { surface: options.surface } : {}),
      projected: projectedNames,
    });
    const first = errs[0];
    if (first)
      return {
        ...base,
        outcome: "error",
        error: makeDiagnostic("check", source, first.message, first.start, first.end, first.hint),
      };
  }
  // Re-resolve projected placeholders restored from a snapshot.
  for (const [name, marker] of state.pending) {
    const j = options.resolveProjection?.(marker);
    if (j === undefined) {
      const msg = `projected value \`${name}\` (${marker.name}) could not be re-resolved after restore`;
      return {
        ...base,
        outcome: "error",
        error: { ...makeDiagnostic("runtime", source, msg, 0, 1), kind: "ValueError" },
      };
    }
    const v = share(fromJson(j));
    if (v !== null && typeof v === "object") state.origins.set(v, marker);
    state.globals.set(name, v);
  }
  state.pending.clear();
  return runCompiled(state, source, compileProgram(program, projectedNames), host, options, budget, base);
}

/** Runs an already parsed program without the checker (the conformance "unlinked" mode). */
export function runProgram(
  state: LashlangState,
  source: string,
  program: Program,
  host: LashlangHost = noHost,
  options: RunOptions = {},
): Promise<CellResult> {
  const budget = options.stepBudget ?? DEFAULT_STEP_BUDGET;
  const base = baseResult(budget, options);
  return runCompiled(
    state,
    source,
    compileProgram(program, Object.keys(options.projected ?? {})),
    host,
    options,
    budget,
    base,
  );
}

type Base = Pick<CellResult, "prints" | "printed" | "steps" | "stepBudget" | "allocated" | "memoryBudget">;

function baseResult(stepBudget: number, options: RunOptions): Base {
  const memoryBudget = options.memoryBudget ?? DEFAULT_MEMORY_BUDGET;
  if (!(memoryBudget > 0))
    throw new RangeError(`memoryBudget must be a positive number of bytes, got ${memoryBudget}`);
  return { prints: [], printed: [], steps: 0, stepBudget, allocated: 0, memoryBudget };
}

/**
 * Where a runtime error points, as in the reference: at the innermost statement that contains the
 * failing expression (its whole span), except a failed module operation under `?`, which points at
 * the operation call (the reference's effect site).
 */
function runtimeSpan(program: Program, e: LangError): [number | undefined, number | undefined] {
  if (e.start === undefined || e.message.startsWith("`?` unwrapped failed module operation"))
    return [e.start, e.end];
  const at = e.start;
  let best: Stmt | undefined;
  const visit = (stmts: Stmt[]): void => {
    for (const s of stmts) {
      if (s.start > at || s.end <= at) continue;
      best = s;
      if (s.k === "if") {
        visit(s.then);
        if (s.else) visit(s.else);
      } else if (s.k === "for" || s.k === "while") visit(s.body);
      return;
    }
  };
  visit(program.main);
  if (best === undefined) for (const p of program.processes) if (p.start <= at && at < p.end) visit(p.body);
  return best === undefined ? [e.start, e.end] : [best.start, best.end];
}

async function runCompiled(
  state: LashlangState,
  source: string,
  cell: CompiledCell,
  host: LashlangHost,
  options: RunOptions,
  budget: number,
  base: Base,
): Promise<CellResult> {
  const { compiler, program } = cell;
  const projected = options.projected ?? {};
  const names = compiler.names;
  const slots: (Value | undefined)[] = new Array(names.length);
  // The state's containers are marked shared, so the cell copies before it changes one in place:
  // a cell that goes over its memory budget can then be discarded, leaving the state as it was.
  for (let i = 0; i < names.length; i++) {
    const v = state.globals.get(names[i]!);
    slots[i] = v === undefined ? v : share(v);
  }
  const meter = new Meter(base.memoryBudget);
  const typeDecls = new Map<string, TypeExpr>();
  for (const t of program.types) typeDecls.set(t.name, t.type);
  const projCache = new Map<string, Value>();
  const prints = base.prints;
  const printed = base.printed;
  const c: Ctx = {
    slots,
    steps: 0,
    budget,
    finished: false,
    finishValue: null,
    cellId: options.cellId ?? "cell",
    occ: new Map(),
    print: (v) => {
      const text = renderPrint(v);
      // the printed text and its JSON form are kept for the result
      charge(32 + 2 * text.length);
      const j = toJson(v);
      prints.push(j);
      printed.push(text);
      host.print?.(j, text);
    },
    projected: (name) => {
      let v = projCache.get(name);
      if (v === undefined) {
        const b = projected[name]!;
        v = share(fromJson(b.get()));
        if (v !== null && typeof v === "object") {
          const m: ProjectedMarker = { name, type_name: b.typeName ?? "any" };
          if (b.ref !== undefined) m.projection_ref = b.ref;
          state.origins.set(v, m);
        }
        projCache.set(name, v);
      }
      return v;
    },
    typeDecls,
    typeDepth: 0,
    ...(options.processEvent ? { processEvent: options.processEvent } : {}),
    lookup: (name) => {
      if (name in projected) return c.projected(name);
      const s = compiler.slotOf.get(name);
      if (s !== undefined) return c.slots[s];
      return state.globals.get(name);
    },
  };
  let error: LangError | null = null;
  try {
    if (cell.pure) {
      const prev = enterMeter(meter);
      try {
        cell.runSync(c);
      } finally {
        leaveMeter(prev);
      }
    } else {
      const gen = cell.runGen(c);
      let prev = enterMeter(meter);
      let r: IteratorResult<HostRequest, number>;
      try {
        r = gen.next();
      } finally {
        leaveMeter(prev);
      }
      while (!r.done) {
        const resp = await perform(host, r.value);
        prev = enterMeter(meter);
        try {
          r = gen.next(resp);
        } finally {
          leaveMeter(prev);
        }
      }
    }
  } catch (e) {
    if (e instanceof LangError) error = e;
    else if (e instanceof RangeError && /call stack/i.test(e.message))
      error = new LangError("ValueError", "value nesting too deep");
    else if (e instanceof RangeError && engineLimitError(e)) error = engineLimitError(e)!;
    else throw e;
  } finally {
    // A cell over its memory budget is discarded: the state keeps what it held before the cell.
    const discard = error !== null && error.kind === "Memory";
    for (let i = 0; i < names.length && !discard; i++) {
      const v = c.slots[i];
      if (v !== undefined) state.globals.set(names[i]!, v);
    }
    for (const n of Object.keys(projected)) state.globals.delete(n);
  }
  const result: CellResult = { ...base, steps: c.steps, allocated: meter.used, outcome: "continued" };
  if (error) {
    result.outcome = "error";
    const [start, end] = runtimeSpan(program, error);
    result.error = {
      ...makeDiagnostic("runtime", source, error.message, start, end, error.hint),
      kind: error.kind,
    };
    return result;
  }
  if (c.finished) {
    let j = toJson(c.finishValue);
    const replaced = host.finish?.(j);
    if (replaced !== undefined) {
      j = replaced;
      c.finishValue = fromJson(replaced);
    }
    result.outcome = "finished";
    result.value = j;
    result.rawValue = c.finishValue;
  }
  return result;
}

void CODE_FINISH;
void List;
void Rec;
void typeValue;

// ---------------------------------------------------------------- session

export interface SessionOptions extends Omit<RunOptions, "cellId"> {
  host?: LashlangHost;
}

/** A REPL session: one state, one host, cells run in order with distinct call-id scopes. */
export class LashlangSession {
  state: LashlangState;
  host: LashlangHost;
  options: SessionOptions;
  private cells = 0;

  constructor(options: SessionOptions = {}, state: LashlangState = new LashlangState()) {
    this.options = options;
    this.host = options.host ?? noHost;
    this.state = state;
  }

  run(source: string, options: RunOptions = {}): Promise<CellResult> {
    this.cells++;
    return runCell(this.state, source, this.host, {
      ...this.options,
      cellId: `cell${this.cells}`,
      ...options,
    });
  }

  snapshot(): string {
    return this.state.snapshot();
  }

  static restore(snapshot: string, options: SessionOptions = {}): LashlangSession {
    return new LashlangSession(options, LashlangState.restore(snapshot));
  }
}
