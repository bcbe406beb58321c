/**
 * Running cells the way the conformance corpus runs them, for `lash lashlang run` (several cells,
 * initial globals, a fixture host, a check mode) and `lash lashlang run --corpus cases.jsonl`.
 *
 * 1. `runCells` runs cells in order against one state (optionally through a snapshot between
 *    cells), each with the corpus's check modes: `strict` (check, a check error is the result),
 *    `fallback` (check; when it fails and the cell has no `start`, run without checking),
 *    `off` (never check), `parse-only` (parse, never run).
 * 2. `judgeCase` compares one case's runs with its expectations (the corpus README's vocabulary)
 *    and returns the problems found, an empty list when the case passes.
 */
import type { Expr, Program, Stmt } from "./ast.ts";
import { check, type HostSurface } from "./checker.ts";
import { makeDiagnostic } from "./diagnostics.ts";
import { type FixtureHost, type HostLog, makeFixtureHost } from "./fixture-host.ts";
import { ProcessRuntime } from "./processes.ts";
import { type CellResult, LashlangState, type ProjectedBinding, parseCell, runProgram } from "./runner.ts";
import type { Json } from "./values.ts";

export type CheckMode = "strict" | "fallback" | "off" | "parse-only";

/** The corpus's mode names → check modes. */
export const CORPUS_MODES: { readonly [mode: string]: CheckMode } = {
  linked: "strict",
  link_fallback: "fallback",
  unlinked: "off",
  parse_only: "parse-only",
};

export interface CellRun {
  outcome: "finished" | "continued" | "error" | "parsed";
  value?: Json;
  prints: Json[];
  printed: string[];
  error?: { phase: string; kind?: string; message: string; line: number; column: number; rendered: string };
  /** The state's globals after the cell (JSON form). */
  globals: { [name: string]: Json };
  /** Module operations the cell called, in order, with their payloads (fixture host only). */
  calls: { op: string; payload: Json }[];
  /** Peak number of `sleep_echo` fixture calls in flight. */
  maxConcurrent: number;
  /** `yield` values of the processes the cell started, in the order they were made (when processes run). */
  yields?: Json[];
  steps: number;
  allocated: number;
}

export interface RunCellsOptions {
  mode?: CheckMode;
  globals?: { [name: string]: Json };
  host?: FixtureHost | null;
  snapshotBetweenCells?: boolean;
  /**
   * Check module operations against the fixture host's `ops` even when there is no host (then every
   * module is unknown, as in the corpus). Default: only when a host is given; without one, module
   * calls are not checked and fail at run time with "unknown tool".
   */
  surfaceFromHost?: boolean;
  stepBudget?: number;
  memoryBudget?: number;
  /**
   * Run declared process bodies (a `ProcessRuntime` over the fixture host) and link with the
   * processes, sleep and signals abilities on. Default: when the fixture's `processes.style` is `run`.
   */
  processes?: boolean;
}

/** The fixture's operations as a checker surface (every operation typed `any`). */
export function surfaceOf(fx: FixtureHost | null | undefined): HostSurface {
  const modules: HostSurface["modules"] = {};
  for (const key of Object.keys(fx?.ops ?? {})) {
    const i = key.lastIndexOf(".");
    const mod = key.slice(0, i);
    const spec = modules[mod] ?? { operations: {} };
    spec.operations[key.slice(i + 1)] = {};
    modules[mod] = spec;
  }
  return { modules };
}

/** Whether the program's main block contains a `start` expression. */
export function hasStart(p: Program): boolean {
  let found = false;
  const visit = (n: unknown): void => {
    if (found || n === null || typeof n !== "object") return;
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    if ((n as Expr).k === "start") {
      found = true;
      return;
    }
    for (const v of Object.values(n)) if (v && typeof v === "object") visit(v);
  };
  p.main.forEach((s: Stmt) => {
    visit(s);
  });
  return found;
}

function toRun(
  r: CellResult | { parsed: true } | { parseError: NonNullable<CellResult["error"]> },
  state: LashlangState,
  log: HostLog,
): CellRun {
  const globals: { [name: string]: Json } = {};
  for (const k of state.globals.keys()) globals[k] = state.get(k)!;
  const base = { globals, calls: log.calls, maxConcurrent: log.maxConcurrent };
  if ("parsed" in r) return { outcome: "parsed", prints: [], printed: [], steps: 0, allocated: 0, ...base };
  if ("parseError" in r)
    return {
      outcome: "error",
      prints: [],
      printed: [],
      steps: 0,
      allocated: 0,
      error: errorOf(r.parseError),
      ...base,
    };
  const run: CellRun = {
    outcome: r.outcome,
    prints: r.prints,
    printed: r.printed,
    steps: r.steps,
    allocated: r.allocated,
    ...base,
  };
  if (r.outcome === "finished") run.value = r.value ?? null;
  if (r.error) run.error = errorOf(r.error);
  return run;
}

function errorOf(e: NonNullable<CellResult["error"]>): NonNullable<CellRun["error"]> {
  const out: NonNullable<CellRun["error"]> = {
    phase: e.phase,
    message: e.message,
    line: e.line,
    column: e.column,
    rendered: e.rendered,
  };
  if (e.kind !== undefined) out.kind = e.kind;
  return out;
}

/** Runs `sources` in order against one state; `onCell` sees each result as it is made. */
export async function runCells(
  sources: readonly string[],
  options: RunCellsOptions = {},
  onCell?: (run: CellRun, index: number) => void,
): Promise<CellRun[]> {
  const mode = options.mode ?? "strict";
  const fx = options.host ?? null;
  let state = new LashlangState();
  for (const [k, v] of Object.entries(options.globals ?? {})) state.set(k, v);
  const projected: { [k: string]: ProjectedBinding } = {};
  for (const [k, v] of Object.entries(fx?.projected ?? {})) projected[k] = { get: () => v };
  const surface = surfaceOf(fx);
  const runBodies = options.processes ?? fx?.processes?.style === "run";
  const runs: CellRun[] = [];
  for (let i = 0; i < sources.length; i++) {
    if (i > 0 && options.snapshotBetweenCells) state = LashlangState.restore(state.snapshot());
    const source = sources[i]!;
    const log: HostLog = { calls: [], inFlight: 0, maxConcurrent: 0 };
    const yields: Json[] = [];
    const parsed = parseCell(source);
    let r: Parameters<typeof toRun>[0];
    if (!parsed.ok) r = { parseError: parsed.error };
    else if (mode === "parse-only") r = { parsed: true };
    else {
      const runOptions = {
        projected,
        ...(options.stepBudget !== undefined ? { stepBudget: options.stepBudget } : {}),
        ...(options.memoryBudget !== undefined ? { memoryBudget: options.memoryBudget } : {}),
      };
      let checkError: CellResult | undefined;
      if (mode !== "off") {
        const errs = check(parsed.program, {
          ...(fx || options.surfaceFromHost ? { surface } : {}),
          // the corpus's test hosts link with every ability on; a plain run keeps them off
          ...(fx || runBodies
            ? { abilities: { processes: true, sleep: true, processSignals: true, triggers: true } }
            : {}),
          projected: Object.keys(projected),
        });
        const first = errs[0];
        if (first && (mode === "strict" || hasStart(parsed.program)))
          checkError = {
            outcome: "error",
            prints: [],
            printed: [],
            steps: 0,
            stepBudget: 0,
            allocated: 0,
            memoryBudget: 0,
            error: makeDiagnostic("check", source, first.message, first.start, first.end, first.hint),
          };
      }
      let host = makeFixtureHost(fx, log);
      let processes: ProcessRuntime | undefined;
      if (runBodies) {
        processes = new ProcessRuntime(host, {
          runOptions,
          onEvent: (e) => {
            if (e.kind === "yield") yields.push(e.value ?? null);
          },
        });
        host = processes.forCell(source);
      }
      r = checkError ?? (await runProgram(state, source, parsed.program, host, runOptions));
      await processes?.settle();
    }
    const run = toRun(r, state, log);
    if (runBodies) run.yields = yields.splice(0);
    runs.push(run);
    onCell?.(run, i);
  }
  return runs;
}

// ---------------------------------------------------------------- the corpus

export interface CorpusCheck {
  path: string;
  equals?: Json;
  contains?: string;
  len?: number;
  type?: string;
}

export interface CorpusExpect {
  finish?: Json;
  finish_checks?: CorpusCheck[];
  finish_same_as_cell?: number;
  continued?: boolean;
  completes?: boolean;
  error_contains?: string;
  parse_error_contains?: string;
  parses?: boolean;
  prints?: Json[];
  globals?: { [k: string]: Json };
  max_concurrent?: number;
  /** The `yield` values of the cell's processes, in order (lash's own process cases). */
  yields?: Json[];
  calls?: { op: string; index: number; checks: CorpusCheck[] }[];
}

export interface CorpusCase {
  id: string;
  mode: string;
  source?: string;
  cells?: string[];
  snapshot_between_cells?: boolean;
  globals?: { [k: string]: Json };
  host: FixtureHost | null;
  expect: CorpusExpect | CorpusExpect[];
}

/** Parses a `cases.jsonl` text; a bad line is an error naming its line number. */
export function parseCorpus(text: string): CorpusCase[] {
  const out: CorpusCase[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let c: unknown;
    try {
      c = JSON.parse(line);
    } catch (e) {
      throw new Error(`line ${i + 1}: not JSON (${(e as Error).message})`);
    }
    const o = c as Partial<CorpusCase>;
    if (o === null || typeof o !== "object" || typeof o.id !== "string" || typeof o.mode !== "string")
      throw new Error(`line ${i + 1}: a case needs a string \`id\` and \`mode\``);
    if (!(o.mode in CORPUS_MODES))
      throw new Error(`line ${i + 1}: unknown mode \`${o.mode}\` (${Object.keys(CORPUS_MODES).join(", ")})`);
    if (typeof o.source !== "string" && !Array.isArray(o.cells))
      throw new Error(`line ${i + 1}: a case needs \`source\` or \`cells\``);
    out.push(o as CorpusCase);
  });
  return out;
}

/** Runs one corpus case. */
export function runCase(c: CorpusCase): Promise<CellRun[]> {
  return runCells(c.cells ?? [c.source!], {
    mode: CORPUS_MODES[c.mode]!,
    globals: c.globals ?? {},
    host: c.host,
    surfaceFromHost: true,
    snapshotBetweenCells: c.snapshot_between_cells === true,
  });
}

/** Deep equality of JSON values: numbers numerically, objects regardless of key order. */
export function jsonEquals(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEquals(x, b[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEquals(a[k], b[k]));
}

function pointer(v: Json, path: string): Json | undefined {
  if (path === "") return v;
  let cur: Json | undefined = v;
  for (const raw of path.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (cur && typeof cur === "object") cur = cur[seg];
    else return undefined;
  }
  return cur;
}

function jsonType(v: Json | undefined): string {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "list";
  if (typeof v === "object") return "record";
  if (typeof v === "boolean") return "bool";
  return typeof v;
}

const show = (v: Json | undefined): string => (v === undefined ? "nothing" : JSON.stringify(v));

function checkProblems(v: Json | undefined, checks: readonly CorpusCheck[], what: string): string[] {
  const out: string[] = [];
  for (const ch of checks) {
    const x = pointer(v ?? null, ch.path);
    const at = `${what}${ch.path === "" ? "" : ` at ${ch.path}`}`;
    if ("equals" in ch && !jsonEquals(x, ch.equals))
      out.push(`${at}: expected ${show(ch.equals)}, got ${show(x)}`);
    if (ch.contains !== undefined && (typeof x !== "string" || !x.includes(ch.contains)))
      out.push(`${at}: expected a string containing ${JSON.stringify(ch.contains)}, got ${show(x)}`);
    if (ch.len !== undefined) {
      const n = Array.isArray(x)
        ? x.length
        : typeof x === "string"
          ? Array.from(x).length
          : x && typeof x === "object"
            ? Object.keys(x).length
            : -1;
      if (n !== ch.len) out.push(`${at}: expected length ${ch.len}, got ${n < 0 ? show(x) : n}`);
    }
    if (ch.type !== undefined && jsonType(x) !== ch.type)
      out.push(`${at}: expected a ${ch.type}, got ${jsonType(x)}`);
  }
  return out;
}

/** The problems of one case's runs against its expectations (empty: the case passes). */
export function judgeCase(c: CorpusCase, runs: readonly CellRun[]): string[] {
  const expects = Array.isArray(c.expect) ? c.expect : [c.expect];
  const problems: string[] = [];
  if (runs.length !== expects.length)
    return [`expected ${expects.length} cell result(s), got ${runs.length}`];
  runs.forEach((r, i) => {
    const ex = expects[i]!;
    const p = (s: string): void => {
      problems.push(runs.length > 1 ? `cell ${i}: ${s}` : s);
    };
    const detail = r.error ? r.error.message : show(r.value);
    if (r.error?.phase === "parse") {
      if (ex.parse_error_contains === undefined) p(`unexpected parse error: ${r.error.message}`);
      else if (!r.error.message.includes(ex.parse_error_contains))
        p(
          `parse error ${JSON.stringify(r.error.message)} does not contain ${JSON.stringify(ex.parse_error_contains)}`,
        );
      return;
    }
    if (ex.parse_error_contains !== undefined) {
      p(`expected a parse error containing ${JSON.stringify(ex.parse_error_contains)}, got ${r.outcome}`);
      return;
    }
    if (r.outcome === "parsed") {
      if (ex.parses !== true) p("the case was only parsed but expects a run");
      return;
    }
    if (ex.error_contains !== undefined) {
      if (r.outcome !== "error")
        p(`expected an error containing ${JSON.stringify(ex.error_contains)}, got ${r.outcome} ${detail}`);
      else if (!r.error!.message.includes(ex.error_contains))
        p(`error ${JSON.stringify(r.error!.message)} does not contain ${JSON.stringify(ex.error_contains)}`);
    } else if (r.outcome === "error") p(`unexpected error: ${r.error!.message}`);
    if ("finish" in ex) {
      if (r.outcome !== "finished") p(`expected finish ${show(ex.finish)}, got ${r.outcome} ${detail}`);
      else if (!jsonEquals(r.value, ex.finish)) p(`expected finish ${show(ex.finish)}, got ${show(r.value)}`);
    }
    if (ex.finish_checks) {
      if (r.outcome !== "finished") p(`expected to finish, got ${r.outcome} ${detail}`);
      else
        problems.push(
          ...checkProblems(r.value, ex.finish_checks, runs.length > 1 ? `cell ${i}: finish` : "finish"),
        );
    }
    if (ex.finish_same_as_cell !== undefined) {
      const other = runs[ex.finish_same_as_cell];
      if (r.outcome !== "finished") p(`expected to finish, got ${r.outcome} ${detail}`);
      else if (!other || !jsonEquals(r.value, other.value))
        p(
          `expected the finish value of cell ${ex.finish_same_as_cell} (${show(other?.value)}), got ${show(r.value)}`,
        );
    }
    if (ex.continued && r.outcome !== "continued") p(`expected to continue, got ${r.outcome} ${detail}`);
    if (ex.completes && r.outcome !== "finished" && r.outcome !== "continued")
      p(`expected to complete, got ${r.outcome} ${detail}`);
    if (ex.prints && !jsonEquals(r.prints, ex.prints))
      p(`expected prints ${show(ex.prints)}, got ${show(r.prints)}`);
    for (const [k, v] of Object.entries(ex.globals ?? {}))
      if (!jsonEquals(r.globals[k], v)) p(`expected global \`${k}\` = ${show(v)}, got ${show(r.globals[k])}`);
    if (ex.yields && !jsonEquals(r.yields ?? [], ex.yields))
      p(`expected process yields ${show(ex.yields)}, got ${show(r.yields ?? [])}`);
    if (ex.max_concurrent !== undefined && r.maxConcurrent !== ex.max_concurrent)
      p(`expected at most ${ex.max_concurrent} concurrent fixture calls, saw ${r.maxConcurrent}`);
    for (const call of ex.calls ?? []) {
      const made = r.calls.filter((x) => x.op === call.op)[call.index];
      if (!made) p(`expected call ${call.op}#${call.index}, it was not made`);
      else
        problems.push(
          ...checkProblems(
            made.payload,
            call.checks,
            `${runs.length > 1 ? `cell ${i}: ` : ""}call ${call.op}#${call.index}`,
          ),
        );
    }
  });
  return problems;
}
