/**
 * The evaluator. Pure expressions and statements are compiled once into synchronous closures
 * (no promise or generator cost per expression). Statements that contain a host effect
 * (module operation, `await`, `start`, `cancel`, `sleep`, signals) run through a generator
 * interpreter that yields host requests; only those suspend. A step budget bounds the run.
 */
import type { AssignTarget, CompClause, Expr, Program, RecordEntry, Stmt, TypeExpr } from "./ast.ts";
import { arityError, BUILTINS, formatString, sequentialTemplate, unknownBuiltin } from "./builtins.ts";
import {
  CONTAINER_BYTES,
  charge,
  chargeList,
  chargeRecord,
  ENTRY_BYTES,
  exceeded,
  jsonBytes,
  over,
  RECORD_BYTES,
  SLOT_BYTES,
  STRING_BYTES,
} from "./memory.ts";
import { typeToSchema } from "./types.ts";
import {
  compareStrings,
  cpArray,
  equals,
  fromJson,
  hasSurrogates,
  Image,
  isTypeValue,
  type Json,
  LangError,
  List,
  markChildrenShared,
  Rec,
  share,
  stringify,
  Tuple,
  TYPE_KEY,
  toJson,
  toNumber,
  truthy,
  typeError,
  typeName,
  type Value,
  valueError,
} from "./values.ts";

// ---------------------------------------------------------------- host protocol

export interface OperationCall {
  /** Deterministic id: `lashlang:<cell>:resource:<module>.<op>:<site>:<occurrence>`. */
  id: string;
  /** Module path, e.g. `files` or `workspace.default`. */
  module: string;
  operation: string;
  /** JSON payload: the single record argument, else `{ "args": [...] }`. */
  args: Json;
}

export type OperationResult =
  | { ok: true; value: Json }
  /** `errorValue`: the failure as a value (a process's `fail <record>`); `error` is its text. */
  | { ok: false; error: string; errorValue?: Json };

export interface StartRequest {
  id: string;
  process: string;
  args: { [k: string]: Json };
}

export interface HandleRequest {
  id: string;
  value: Json;
}

export type HostRequest =
  | { kind: "call"; call: OperationCall }
  | { kind: "batch"; calls: OperationCall[] }
  | { kind: "start"; req: StartRequest }
  | { kind: "await"; reqs: HandleRequest[] }
  | { kind: "cancel"; req: HandleRequest }
  | { kind: "sleep"; req: { id: string; mode: "for" | "until"; value: Json } }
  | { kind: "wait_signal"; req: { id: string; name: string } }
  | { kind: "signal_run"; req: { id: string; run: Json; name: string; payload: Json } };

export type HostResponse = OperationResult | OperationResult[];

type Gen = Generator<HostRequest, Value, HostResponse>;
type SGen = Generator<HostRequest, number, HostResponse>;

// ---------------------------------------------------------------- context

export const DEFAULT_STEP_BUDGET = 10_000_000;

export interface Ctx {
  slots: (Value | undefined)[];
  steps: number;
  budget: number;
  finished: boolean;
  finishValue: Value;
  cellId: string;
  occ: Map<number, number>;
  print: (v: Value) => void;
  projected: (name: string) => Value;
  typeDecls: Map<string, TypeExpr>;
  typeDepth: number;
  /** Current value of a global (for `Type` references to variables holding Type values). */
  lookup: (name: string) => Value | undefined;
  /**
   * `yield` / `wake` / `fail` inside a process body (set only when running one): returns the
   * statement's completion code (`fail` throws).
   */
  processEvent?: (kind: "fail" | "yield" | "wake", value: Value) => number;
}

const CODE_NORMAL = 0;
const CODE_BREAK = 1;
const CODE_CONTINUE = 2;
const CODE_FINISH = 3;

export function budgetError(budget: number): LangError {
  return new LangError(
    "Budget",
    `step budget exhausted: the cell ran more than ${budget} steps`,
    "raise it with the `stepBudget` option (or split the work across cells)",
  );
}

function step(c: Ctx): void {
  if (++c.steps > c.budget) throw budgetError(c.budget);
}

function at<E extends LangError>(e: unknown, node: { start: number; end: number }): never {
  if (e instanceof LangError && e.start === undefined) {
    e.start = node.start;
    e.end = node.end;
  }
  throw e as E;
}

// ---------------------------------------------------------------- value operations

/** `a + b` of two strings, charged the shorter side (the rope shares the longer one). */
export function concat(a: string, b: string): string {
  charge(STRING_BYTES + Math.min(a.length, b.length));
  return a + b;
}

export function add(a: Value, b: Value): Value {
  if (typeof a === "number" && typeof b === "number") return a + b;
  if (typeof a === "string") return concat(a, typeof b === "string" ? b : stringify(b));
  if (typeof b === "string") return concat(stringify(a), b);
  if (a instanceof List) {
    if (b instanceof List) {
      chargeList(a.items.length + b.items.length);
      const items = a.items.concat(b.items);
      markChildrenShared(items);
      return new List(items);
    }
    if (b instanceof Tuple) throw typeError("can't concatenate list and tuple");
  }
  if (a instanceof Tuple) {
    if (b instanceof Tuple) {
      chargeList(a.items.length + b.items.length);
      return new Tuple(a.items.concat(b.items));
    }
    if (b instanceof List) throw typeError("can't concatenate list and tuple");
  }
  return toNumber(a) + toNumber(b);
}

export function binary(op: string, a: Value, b: Value): Value {
  switch (op) {
    case "+":
      return add(a, b);
    case "-":
      return toNumber(a) - toNumber(b);
    case "*":
      return toNumber(a) * toNumber(b);
    case "/":
      return toNumber(a) / toNumber(b);
    case "%":
      return toNumber(a) % toNumber(b);
    case "==":
      return equals(a, b);
    case "!=":
      return !equals(a, b);
  }
  let cmp: number;
  if (typeof a === "string" && typeof b === "string") cmp = compareStrings(a, b);
  else {
    const x = toNumber(a);
    const y = toNumber(b);
    if (Number.isNaN(x) || Number.isNaN(y)) return false;
    cmp = x < y ? -1 : x > y ? 1 : 0;
  }
  switch (op) {
    case "<":
      return cmp < 0;
    case "<=":
      return cmp <= 0;
    case ">":
      return cmp > 0;
    default:
      return cmp >= 0;
  }
}

export function readField(v: Value, name: string): Value {
  if (v instanceof Rec) {
    const r = v.map.get(name);
    return r === undefined ? null : r;
  }
  if (v === null) return null;
  if (v instanceof Image) {
    switch (name) {
      case "id":
        return v.id;
      case "mime":
        return v.mime;
      case "label":
        return v.label;
      case "size":
        return v.size;
      case "width":
        return v.width;
      case "height":
        return v.height;
    }
    return null;
  }
  throw typeError(`can't read \`.${name}\` from ${typeName(v)}`);
}

function intIndex(i: Value): number {
  if (typeof i !== "number" || !Number.isInteger(i)) throw typeError("index must be an integer");
  return i;
}

export function readIndex(v: Value, i: Value): Value {
  if (v instanceof List || v instanceof Tuple) {
    const items = v.items;
    let k = intIndex(i);
    if (k < 0) k += items.length;
    const r = items[k];
    return r === undefined ? null : r;
  }
  if (v instanceof Rec) {
    const r = v.map.get(typeof i === "string" ? i : stringify(i));
    return r === undefined ? null : r;
  }
  if (v === null) return null;
  if (typeof v === "string") {
    let k = intIndex(i);
    if (!hasSurrogates(v)) {
      if (k < 0) k += v.length;
      return k >= 0 && k < v.length ? v[k]! : null;
    }
    const cps = cpArray(v);
    if (k < 0) k += cps.length;
    return cps[k] ?? null;
  }
  throw typeError(`can't index ${typeName(v)}`);
}

export const UNWRAP_HINT = "remove `?` and inspect `.ok` or `.error` when you need to handle failures";

export function unwrapValue(v: Value): Value {
  if (!(v instanceof Rec)) throw typeError(`\`?\` expected a tool result wrapper, got ${typeName(v)}`);
  const ok = v.map.get("ok");
  if (typeof ok !== "boolean") throw typeError("`?` expected a tool result wrapper with boolean `ok`");
  if (ok) {
    const r = v.map.get("value");
    if (r === undefined) throw typeError("`?` found a successful tool result wrapper missing `value`");
    return r;
  }
  const err = v.map.get("error");
  throw new LangError(
    "Unwrap",
    `\`?\` unwrapped failed tool result: ${err === undefined ? "null" : stringify(err)}`,
    UNWRAP_HINT,
  );
}

function wrapResult(r: OperationResult): Rec {
  chargeRecord(2);
  const m = new Map<string, Value>();
  m.set("ok", r.ok);
  if (r.ok) m.set("value", hostValue(r.value));
  else m.set("error", r.errorValue !== undefined ? hostValue(r.errorValue) : r.error);
  return new Rec(m);
}

/** A host result as a language value, charged to the cell's memory budget. */
function hostValue(j: Json): Value {
  if (j !== null && typeof j === "object") charge(jsonBytes(j));
  else if (typeof j === "string") charge(STRING_BYTES + j.length);
  return fromJson(j);
}

function unwrapOperation(r: OperationResult): Value {
  if (r.ok) return hostValue(r.value);
  // no hint: the reference gives one only for a failed tool result (`?` on a wrapper value)
  throw new LangError("Unwrap", `\`?\` unwrapped failed module operation: ${r.error}`);
}

function own<T extends List | Rec>(v: T): T {
  if (!v.shared) return v;
  if (v instanceof List) {
    chargeList(v.items.length);
    const items = v.items.slice();
    markChildrenShared(items);
    return new List(items) as T;
  }
  chargeRecord((v as Rec).map.size);
  const m = new Map((v as Rec).map);
  markChildrenShared(m.values());
  return new Rec(m) as T;
}

function iterItems(v: Value): Value[] {
  if (v instanceof List) {
    v.shared = true;
    return v.items;
  }
  if (v instanceof Tuple) return v.items;
  throw new LangError("NonListIteration", "`for` expects a list or tuple");
}

// ---------------------------------------------------------------- static analysis helpers

function isCallLeaf(e: Expr): boolean {
  return e.k === "mcall" || (e.k === "unwrap" && e.expr.k === "mcall");
}

/** Dotted module path of a receiver (`files`, `workspace.default`), or null. */
export function modulePath(e: Expr): string | null {
  if (e.k === "var") return e.name;
  if (e.k === "field") {
    const p = modulePath(e.obj);
    return p === null ? null : `${p}.${e.name}`;
  }
  return null;
}

const EFFECT_BUILTINS = new Set(["wait_signal", "signal_run"]);

export class Compiler {
  readonly slotOf = new Map<string, number>();
  readonly names: string[] = [];
  readonly projectedNames: Set<string>;
  private pureMemo = new Map<Expr, boolean>();
  private exprFns = new Map<Expr, (c: Ctx) => Value>();
  private stmtFns = new Map<Stmt, (c: Ctx) => number>();
  private stmtPure = new Map<Stmt, boolean>();
  private leafMemo = new Map<Expr, boolean>();

  constructor(projectedNames: Iterable<string>) {
    this.projectedNames = new Set(projectedNames);
  }

  slot(name: string): number {
    let s = this.slotOf.get(name);
    if (s === undefined) {
      s = this.names.length;
      this.names.push(name);
      this.slotOf.set(name, s);
    }
    return s;
  }

  // ---------- purity ----------
  pure(e: Expr): boolean {
    const m = this.pureMemo.get(e);
    if (m !== undefined) return m;
    let r: boolean;
    switch (e.k) {
      case "mcall":
      case "await":
      case "start":
      case "sleep":
        r = false;
        break;
      case "lit":
      case "var":
      case "type":
        r = true;
        break;
      case "list":
      case "tuple":
        r = e.items.every((x) => this.pure(x));
        break;
      case "record":
        r = e.entries.every((x) => this.pure(x.value));
        break;
      case "comp":
        r = this.pure(e.elem) && e.clauses.every((c) => this.pure(c.expr));
        break;
      case "field":
        r = this.pure(e.obj);
        break;
      case "index":
        r = this.pure(e.obj) && this.pure(e.index);
        break;
      case "call":
        r = !EFFECT_BUILTINS.has(e.name) && e.args.every((x) => this.pure(x));
        break;
      case "unwrap":
      case "neg":
      case "not":
        r = this.pure(e.expr);
        break;
      case "bin":
      case "and":
      case "or":
        r = this.pure(e.l) && this.pure(e.r);
        break;
      case "tern":
        r = this.pure(e.cond) && this.pure(e.then) && this.pure(e.else);
        break;
    }
    this.pureMemo.set(e, r);
    return r;
  }

  stmtIsPure(s: Stmt): boolean {
    const m = this.stmtPure.get(s);
    if (m !== undefined) return m;
    let r: boolean;
    switch (s.k) {
      case "if":
        r = this.pure(s.cond) && this.blockPure(s.then) && (s.else === null || this.blockPure(s.else));
        break;
      case "for":
        r = this.pure(s.iter) && this.blockPure(s.body);
        break;
      case "while":
        r = this.pure(s.cond) && this.blockPure(s.body);
        break;
      case "break":
      case "continue":
        r = true;
        break;
      case "cancel":
        r = false;
        break;
      case "assign":
        r = this.pure(s.value) && s.target.path.every((p) => p.k === "field" || this.pure(p.expr));
        break;
      default:
        r = this.pure(s.expr);
    }
    this.stmtPure.set(s, r);
    return r;
  }

  blockPure(b: Stmt[]): boolean {
    return b.every((s) => this.stmtIsPure(s));
  }

  /** Values produced fresh (not aliased elsewhere) need no sharing mark when stored. */
  fresh(e: Expr): boolean {
    switch (e.k) {
      case "lit":
      case "list":
      case "tuple":
      case "record":
      case "comp":
      case "bin":
      case "neg":
      case "not":
      case "and":
      case "or":
      case "mcall":
        return true;
      case "call":
        return e.name !== "validate";
      case "tern":
        return this.fresh(e.then) && this.fresh(e.else);
      default:
        return false;
    }
  }

  // ---------- expressions (sync) ----------
  expr(e: Expr): (c: Ctx) => Value {
    let f = this.exprFns.get(e);
    if (f === undefined) {
      f = this.compileExpr(e);
      this.exprFns.set(e, f);
    }
    return f;
  }

  private compileExpr(e: Expr): (c: Ctx) => Value {
    switch (e.k) {
      case "lit": {
        const v = e.value;
        return () => v;
      }
      case "var":
        return this.varRead(e.name, e);
      case "list": {
        const items = e.items.map((x) => this.expr(x));
        const n = items.length;
        const bytes = CONTAINER_BYTES + SLOT_BYTES * n;
        return (c) => {
          const out = new Array<Value>(n);
          for (let i = 0; i < n; i++) out[i] = share(items[i]!(c));
          if (over(bytes)) at(exceeded(), e);
          return new List(out);
        };
      }
      case "tuple": {
        const items = e.items.map((x) => this.expr(x));
        const bytes = CONTAINER_BYTES + SLOT_BYTES * items.length;
        return (c) => {
          const out = items.map((f) => share(f(c)));
          if (over(bytes)) at(exceeded(), e);
          return new Tuple(out);
        };
      }
      case "record": {
        const keys = e.entries.map((x) => x.key);
        const vals = e.entries.map((x) => this.expr(x.value));
        const n = keys.length;
        const bytes = RECORD_BYTES + ENTRY_BYTES * n;
        if (n > 0 && new Set(keys).size === n) {
          // distinct keys: the record is built in shape form (this literal's key list + values)
          return (c) => {
            const out = new Array<Value>(n);
            for (let i = 0; i < n; i++) out[i] = share(vals[i]!(c));
            if (over(bytes)) at(exceeded(), e);
            return Rec.shaped(keys, out);
          };
        }
        return (c) => {
          const m = new Map<string, Value>();
          for (let i = 0; i < n; i++) m.set(keys[i]!, share(vals[i]!(c)));
          if (over(bytes)) at(exceeded(), e);
          return new Rec(m);
        };
      }
      case "comp":
        return this.compileComp(e);
      case "field": {
        const obj = this.expr(e.obj);
        const name = e.name;
        let ck: readonly string[] | null = null;
        let ci = -1;
        return (c) => {
          const v = obj(c);
          if (v instanceof Rec) {
            const ks = v.keys;
            if (ks !== null) {
              // an inline cache of the field's position in the last key list seen here
              if (ks !== ck) {
                ck = ks;
                ci = ks.indexOf(name);
              }
              return ci < 0 ? null : v.vals![ci]!;
            }
            const r = v.map.get(name);
            return r === undefined ? null : r;
          }
          try {
            return readField(v, name);
          } catch (err) {
            return at(err, e);
          }
        };
      }
      case "index": {
        const obj = this.expr(e.obj);
        const idx = this.expr(e.index);
        return (c) => {
          const v = obj(c);
          const i = idx(c);
          if (v instanceof List) {
            if (typeof i === "number" && i >= 0) {
              const r = v.items[i];
              if (r !== undefined) return r;
            }
          } else if (v instanceof Rec && typeof i === "string") {
            const r = v.get(i);
            return r === undefined ? null : r;
          }
          try {
            return readIndex(v, i);
          } catch (err) {
            return at(err, e);
          }
        };
      }
      case "call":
        return this.compileCall(e);
      case "unwrap": {
        const inner = this.expr(e.expr);
        return (c) => {
          try {
            return unwrapValue(inner(c));
          } catch (err) {
            return at(err, e);
          }
        };
      }
      case "neg": {
        const inner = this.expr(e.expr);
        return (c) => {
          const v = inner(c);
          if (typeof v === "number") return -v;
          try {
            return -toNumber(v);
          } catch (err) {
            return at(err, e);
          }
        };
      }
      case "not": {
        const inner = this.expr(e.expr);
        return (c) => !truthy(inner(c));
      }
      case "and": {
        const l = this.expr(e.l);
        const r = this.expr(e.r);
        return (c) => truthy(l(c)) && truthy(r(c));
      }
      case "or": {
        const l = this.expr(e.l);
        const r = this.expr(e.r);
        return (c) => truthy(l(c)) || truthy(r(c));
      }
      case "tern": {
        const cond = this.expr(e.cond);
        const a = this.expr(e.then);
        const b = this.expr(e.else);
        return (c) => (truthy(cond(c)) ? a(c) : b(c));
      }
      case "bin":
        return this.compileBin(e);
      case "type":
        return this.compileType(e.type);
      default:
        return () => {
          throw new Error(`internal: effectful expression ${e.k} compiled as pure`);
        };
    }
  }

  private varRead(name: string, node: Expr): (c: Ctx) => Value {
    if (this.projectedNames.has(name)) return (c) => c.projected(name);
    const s = this.slot(name);
    return (c) => {
      const v = c.slots[s];
      if (v !== undefined) return v;
      const t = c.typeDecls.get(name);
      if (t !== undefined) return typeValue(c, t);
      const err = new LangError("UndefinedVariable", `unknown name \`${name}\``);
      return at(err, node);
    };
  }

  /**
   * An inline numeric comparison for loop conditions: op 1..4 = `<`, `<=`, `>`, `>=` between
   * globals and number literals (0 = none). When either side is not a number at run time the
   * condition's closure decides (the general rules, and the unknown-name error).
   */
  private numericTest(e: Expr): {
    op: number;
    lm: number;
    ls: number;
    lk: Value;
    rm: number;
    rs: number;
    rk: Value;
  } {
    const none = { op: 0, lm: 0, ls: -1, lk: null, rm: 0, rs: -1, rk: null };
    if (e.k !== "bin") return none;
    const op = e.op === "<" ? 1 : e.op === "<=" ? 2 : e.op === ">" ? 3 : e.op === ">=" ? 4 : 0;
    if (op === 0) return none;
    const l = this.operand(e.l);
    const r = this.operand(e.r);
    if (l.mode === 0 || l.mode >= 3 || r.mode === 0 || r.mode >= 3) return none;
    return { op, lm: l.mode, ls: l.slot, lk: l.k, rm: r.mode, rs: r.slot, rk: r.k };
  }

  /**
   * How a binary operand is fetched without a closure call: 1 = a global slot (read inline; an
   * unset slot falls back to the closure, which resolves type declarations or raises the unknown
   * name error), 2 = a literal, 0 = any other expression (its closure).
   */
  private operand(e: Expr): {
    mode: 0 | 1 | 2 | 3 | 4;
    slot: number;
    k: Value;
    op: number;
    k2: number;
    op2: number;
  } {
    if (e.k === "var" && !this.projectedNames.has(e.name))
      return { mode: 1, slot: this.slot(e.name), k: null, op: -1, k2: 0, op2: -1 };
    if (e.k === "lit") return { mode: 2, slot: -1, k: e.value, op: -1, k2: 0, op2: -1 };
    // 4 = `(global op number) op number` (`(i * 3) % 7`): both steps inline, as mode 3
    if (e.k === "bin" && e.l.k === "bin" && e.r.k === "lit" && typeof e.r.value === "number") {
      const inner = this.operand(e.l);
      const op2 = ARITH_OPS.indexOf(e.op);
      if (inner.mode === 3 && op2 >= 0)
        return { mode: 4, slot: inner.slot, k: inner.k, op: inner.op, k2: e.r.value, op2 };
    }
    // 3 = `global op number` (`i * 3`, `i % 10`): computed inline by `arith` when the global holds
    // a number, else by its closure.
    if (
      e.k === "bin" &&
      e.l.k === "var" &&
      !this.projectedNames.has(e.l.name) &&
      e.r.k === "lit" &&
      typeof e.r.value === "number"
    ) {
      const op = ARITH_OPS.indexOf(e.op);
      if (op >= 0) return { mode: 3, slot: this.slot(e.l.name), k: e.r.value, op, k2: 0, op2: -1 };
    }
    return { mode: 0, slot: -1, k: null, op: -1, k2: 0, op2: -1 };
  }

  /**
   * A binary operation with inline operand fetches and a numeric (and string `+`) fast path; any
   * other operand types go through `binary` (the general coercion rules). With `dst >= 0` the
   * closure is the statement `dst = l op r`: it stores the result and returns CODE_NORMAL.
   */
  private compileBin(e: Extract<Expr, { k: "bin" }>, dst = -1): (c: Ctx) => Value {
    const op = e.op;
    const l = this.expr(e.l);
    const r = this.expr(e.r);
    const lo = this.operand(e.l);
    const ro = this.operand(e.r);
    const lm = lo.mode;
    const ls = lo.slot;
    const lk = lo.k;
    const rm = ro.mode;
    const rs = ro.slot;
    const rk = ro.k;
    const lop = lo.op;
    const rop = ro.op;
    const lop2 = lo.op2;
    const rop2 = ro.op2;
    const lk2 = lo.k2;
    const rk2 = ro.k2;
    const slow = (a: Value, b: Value): Value => {
      try {
        return binary(op, a, b);
      } catch (err) {
        return at(err, e);
      }
    };
    const cat = (a: string, b: string): string => {
      if (over(STRING_BYTES + Math.min(a.length, b.length))) at(exceeded(), e);
      return a + b;
    };
    switch (op) {
      case "+":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v =
            typeof a === "number"
              ? typeof b === "number"
                ? a + b
                : slow(a, b)
              : typeof a === "string" && typeof b === "string"
                ? cat(a, b)
                : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "-":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a - b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "*":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a * b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "/":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a / b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "%":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a % b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "<":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a < b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "<=":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a <= b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case ">":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a > b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case ">=":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v = typeof a === "number" && typeof b === "number" ? a >= b : slow(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "==":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v =
            a === b && !Number.isNaN(a)
              ? true
              : typeof a !== "object" && typeof b !== "object"
                ? false
                : equals(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
      case "!=":
        return (c) => {
          const sl = c.slots;
          let a =
            lm === 1
              ? sl[ls]
              : lm === 2
                ? lk
                : lm === 3
                  ? arith(lop, sl[ls], lk)
                  : lm === 4
                    ? arith(lop2, arith(lop, sl[ls], lk), lk2)
                    : l(c);
          if (a === undefined) a = l(c);
          let b =
            rm === 1
              ? sl[rs]
              : rm === 2
                ? rk
                : rm === 3
                  ? arith(rop, sl[rs], rk)
                  : rm === 4
                    ? arith(rop2, arith(rop, sl[rs], rk), rk2)
                    : r(c);
          if (b === undefined) b = r(c);
          const v =
            a === b && !Number.isNaN(a)
              ? false
              : typeof a !== "object" && typeof b !== "object"
                ? true
                : !equals(a, b);
          if (dst < 0) return v;
          c.slots[dst] = v;
          return CODE_NORMAL;
        };
    }
  }

  private compileCall(e: Extract<Expr, { k: "call" }>): (c: Ctx) => Value {
    const spec = BUILTINS[e.name];
    const args = e.args.map((a) => this.expr(a));
    if (spec === undefined) {
      return () => at(unknownBuiltin(e.name), e);
    }
    if (args.length < spec.min || (spec.max >= 0 && args.length > spec.max)) {
      const msg = arityError(e.name, spec, args.length);
      return () => at(typeError(msg), e);
    }
    const fn = spec.fn;
    const f1 = spec.f1;
    const f2 = spec.f2;
    if (f1 !== undefined && args.length === 1) {
      const a0 = args[0]!;
      return (c) => {
        const v = a0(c);
        try {
          return f1(v);
        } catch (err) {
          return at(err, e);
        }
      };
    }
    if (f2 !== undefined && args.length === 2) {
      const a0 = args[0]!;
      const a1 = args[1]!;
      return (c) => {
        const v0 = a0(c);
        const v1 = a1(c);
        try {
          return f2(v0, v1);
        } catch (err) {
          return at(err, e);
        }
      };
    }
    if (e.name === "format") {
      // A literal `{}` template with one argument per placeholder is parsed here, once: each
      // argument is evaluated and appended in turn (no argument array, no template lookup).
      const t0 = e.args[0];
      const parts =
        t0 !== undefined && t0.k === "lit" && typeof t0.value === "string"
          ? sequentialTemplate(t0.value, args.length - 1)
          : null;
      if (parts !== null) {
        const np = parts.length;
        const fns = parts.map((p) => (typeof p === "number" ? args[p + 1]! : null));
        const bytes = STRING_BYTES * np;
        return (c) => {
          let out = "";
          for (let i = 0; i < np; i++) {
            const f = fns[i]!;
            if (f === null) out += parts[i] as string;
            else {
              const a = f(c);
              out += typeof a === "string" ? a : stringify(a);
            }
          }
          // the result is a rope of its parts (as `formatString` charges it)
          if (over(bytes + out.length)) at(exceeded(), e);
          return out;
        };
      }
      // the template and the arguments, without the generic argument array and its slice
      const tpl = args[0]!;
      const rest = args.slice(1);
      const n = rest.length;
      return (c) => {
        const t = tpl(c);
        const vals = new Array<Value>(n);
        for (let i = 0; i < n; i++) vals[i] = rest[i]!(c);
        try {
          return formatString(t, vals);
        } catch (err) {
          return at(err, e);
        }
      };
    }
    if (args.length === 1) {
      const a0 = args[0]!;
      return (c) => {
        const v = a0(c);
        try {
          return fn([v]);
        } catch (err) {
          return at(err, e);
        }
      };
    }
    if (args.length === 2) {
      const a0 = args[0]!;
      const a1 = args[1]!;
      return (c) => {
        const v0 = a0(c);
        const v1 = a1(c);
        try {
          return fn([v0, v1]);
        } catch (err) {
          return at(err, e);
        }
      };
    }
    const n = args.length;
    return (c) => {
      const vals = new Array<Value>(n);
      for (let i = 0; i < n; i++) vals[i] = args[i]!(c);
      try {
        return fn(vals);
      } catch (err) {
        return at(err, e);
      }
    };
  }

  private compileType(t: TypeExpr): (c: Ctx) => Value {
    if (!hasRefs(t)) {
      let cached: Rec | undefined;
      return (c) => {
        if (cached === undefined) cached = share(typeValue(c, t)) as Rec;
        return cached;
      };
    }
    return (c) => typeValue(c, t);
  }

  private compileComp(e: Extract<Expr, { k: "comp" }>): (c: Ctx) => Value {
    const elem = this.expr(e.elem);
    const clauses = e.clauses.map((cl) => ({
      kind: cl.kind,
      slot: cl.kind === "for" ? this.slot(cl.name) : -1,
      fn: this.expr(cl.expr),
      node: cl.expr,
    }));
    const run = (c: Ctx, i: number, out: Value[]): void => {
      if (i === clauses.length) {
        out.push(share(elem(c)));
        return;
      }
      const cl = clauses[i]!;
      if (cl.kind === "if") {
        if (truthy(cl.fn(c))) run(c, i + 1, out);
        return;
      }
      let items: Value[];
      try {
        items = iterItems(cl.fn(c));
      } catch (err) {
        at(err, cl.node);
      }
      const saved = c.slots[cl.slot];
      try {
        for (let k = 0; k < items.length; k++) {
          step(c);
          c.slots[cl.slot] = share(items[k]!);
          run(c, i + 1, out);
        }
      } finally {
        c.slots[cl.slot] = saved;
      }
    };
    return (c) => {
      const out: Value[] = [];
      run(c, 0, out);
      if (over(CONTAINER_BYTES + SLOT_BYTES * out.length)) at(exceeded(), e);
      return new List(out);
    };
  }

  // ---------- statements (sync) ----------
  stmt(s: Stmt): (c: Ctx) => number {
    let f = this.stmtFns.get(s);
    if (f === undefined) {
      f = this.compileStmt(s);
      this.stmtFns.set(s, f);
    }
    return f;
  }

  block(b: Stmt[]): (c: Ctx) => number {
    const fns = b.map((s) => this.stmt(s));
    const n = fns.length;
    if (n === 1) {
      const f = fns[0]!;
      const s0 = b[0]!;
      return (c) => {
        if (++c.steps > c.budget) return at(budgetError(c.budget), s0);
        return f(c);
      };
    }
    return (c) => {
      for (let i = 0; i < n; i++) {
        if (++c.steps > c.budget) return at(budgetError(c.budget), b[i]!);
        const code = fns[i]!(c);
        if (code !== CODE_NORMAL) return code;
      }
      return CODE_NORMAL;
    };
  }

  private compileStmt(s: Stmt): (c: Ctx) => number {
    switch (s.k) {
      case "expr": {
        const f = this.expr(s.expr);
        return (c) => {
          f(c);
          return CODE_NORMAL;
        };
      }
      case "assign":
        return this.compileAssign(s);
      case "if": {
        const cond = this.expr(s.cond);
        const then = this.block(s.then);
        const els = s.else ? this.block(s.else) : null;
        return (c) => {
          const v = cond(c);
          return v === true || (v !== false && truthy(v)) ? then(c) : els ? els(c) : CODE_NORMAL;
        };
      }
      case "while": {
        // The body's statements run inline (same step accounting as `block`), and a comparison of
        // globals/literals is tested inline when both sides are numbers.
        const cond = this.expr(s.cond);
        const test = this.numericTest(s.cond);
        const stmts = s.body;
        const fns = stmts.map((x) => this.stmt(x));
        const n = fns.length;
        const top = test.op;
        const lm = test.lm;
        const ls = test.ls;
        const lk = test.lk;
        const rm = test.rm;
        const rs = test.rs;
        const rk = test.rk;
        return (c) => {
          for (;;) {
            if (++c.steps > c.budget) return at(budgetError(c.budget), s);
            let ok: boolean;
            const a = top === 0 ? undefined : lm === 1 ? c.slots[ls] : lk;
            const b = top === 0 ? undefined : rm === 1 ? c.slots[rs] : rk;
            if (typeof a === "number" && typeof b === "number")
              ok = top === 1 ? a < b : top === 2 ? a <= b : top === 3 ? a > b : a >= b;
            else {
              const v = cond(c);
              ok = v === true || (v !== false && truthy(v));
            }
            if (!ok) return CODE_NORMAL;
            let code = CODE_NORMAL;
            for (let i = 0; i < n; i++) {
              if (++c.steps > c.budget) return at(budgetError(c.budget), stmts[i]!);
              code = fns[i]!(c);
              if (code !== CODE_NORMAL) break;
            }
            if (code === CODE_BREAK) return CODE_NORMAL;
            if (code === CODE_FINISH) return code;
          }
        };
      }
      case "for": {
        const iter = this.expr(s.iter);
        const body = this.block(s.body);
        const slot = this.projectedNames.has(s.name) ? -1 : this.slot(s.name);
        const name = s.name;
        const stmts = s.body;
        const fns = stmts.map((x) => this.stmt(x));
        const n = fns.length;
        void body;
        return (c) => {
          if (slot < 0) return at(readOnly(name), s);
          let items: Value[];
          try {
            items = iterItems(iter(c));
          } catch (err) {
            return at(err, s.iter);
          }
          const saved = c.slots[slot];
          try {
            outer: for (let k = 0; k < items.length; k++) {
              if (++c.steps > c.budget) return at(budgetError(c.budget), s);
              const item = items[k]!;
              if (item !== null && typeof item === "object" && (item instanceof List || item instanceof Rec))
                item.shared = true;
              c.slots[slot] = item;
              // the body's statements inline (same step accounting as `block`)
              for (let i = 0; i < n; i++) {
                if (++c.steps > c.budget) return at(budgetError(c.budget), stmts[i]!);
                const code = fns[i]!(c);
                if (code === CODE_NORMAL) continue;
                if (code === CODE_BREAK) break outer;
                if (code === CODE_FINISH) return code;
                break;
              }
            }
          } finally {
            c.slots[slot] = saved;
          }
          return CODE_NORMAL;
        };
      }
      case "break":
        return () => CODE_BREAK;
      case "continue":
        return () => CODE_CONTINUE;
      case "print": {
        const f = this.expr(s.expr);
        return (c) => {
          const v = f(c);
          try {
            c.print(v);
          } catch (err) {
            return at(err, s);
          }
          return CODE_NORMAL;
        };
      }
      case "finish": {
        const f = this.expr(s.expr);
        return (c) => {
          c.finishValue = f(c);
          c.finished = true;
          return CODE_FINISH;
        };
      }
      case "fail":
      case "yield":
      case "wake": {
        // Inside a process body the host gives `c.processEvent` (processes.ts); elsewhere an error.
        const k = s.k;
        const f = this.expr(s.expr);
        return (c) => {
          if (!c.processEvent) return at(typeError(`\`${k}\` can only run inside a process`), s);
          try {
            return c.processEvent(k, f(c));
          } catch (err) {
            return at(err, s);
          }
        };
      }
      case "cancel":
        return () => {
          throw new Error("internal: cancel compiled as pure");
        };
    }
  }

  private compileAssign(s: Extract<Stmt, { k: "assign" }>): (c: Ctx) => number {
    const t = s.target;
    if (this.projectedNames.has(t.name)) return () => at(readOnly(t.name), s);
    const slot = this.slot(t.name);
    const fresh = this.fresh(s.value);
    // In-place fast paths: `x = push(x, v)` and `x = x + [..]` on an unshared list.
    const inPlace = this.inPlaceAppend(t, s.value);
    if (t.path.length === 0) {
      const val = this.expr(s.value);
      if (inPlace) {
        const item = this.expr(inPlace.item);
        const isPush = inPlace.push;
        return (c) => {
          const cur = c.slots[slot];
          if (cur instanceof List && !cur.shared) {
            // Evaluating the item may make the list reachable from elsewhere (`push(xs, xs)`,
            // `xs + [xs]`): then it is no longer ours to append to (that would build a cycle).
            const more = share(item(c));
            if (cur.shared) c.slots[slot] = isPush ? pushCopy(cur, more) : add(cur, more);
            else if (isPush) {
              if (over(SLOT_BYTES)) at(exceeded(), s);
              cur.items.push(more);
            } else if (more instanceof List) {
              if (over(SLOT_BYTES * more.items.length)) at(exceeded(), s);
              for (const x of more.items) cur.items.push(share(x));
            } else c.slots[slot] = add(cur, more);
            return CODE_NORMAL;
          }
          c.slots[slot] = val(c);
          return CODE_NORMAL;
        };
      }
      // `x = l op r`: one closure computes and stores (the statement's code is CODE_NORMAL).
      if (s.value.k === "bin") return this.compileBin(s.value, slot) as (c: Ctx) => number;
      if (fresh) {
        return (c) => {
          c.slots[slot] = val(c);
          return CODE_NORMAL;
        };
      }
      return (c) => {
        c.slots[slot] = share(val(c));
        return CODE_NORMAL;
      };
    }
    const keys = t.path.map((p) => (p.k === "field" ? null : this.expr(p.expr)));
    const names = t.path.map((p) => (p.k === "field" ? p.name : ""));
    const val = this.expr(s.value);
    const inPlaceItem = inPlace ? this.expr(inPlace.item) : null;
    const isPush = inPlace?.push ?? false;
    // The key array is reused: an assignment statement never re-enters itself (no user functions).
    const ks = new Array<Value>(keys.length);
    const nk = keys.length;
    return (c) => {
      for (let i = 0; i < nk; i++) {
        const k = keys[i]!;
        ks[i] = k === null ? names[i]! : k(c);
      }
      try {
        if (inPlaceItem) {
          const holder = descend(c, slot, t, ks, true);
          const last = ks[ks.length - 1]!;
          const cur = holder === null ? undefined : peekChild(holder, last);
          if (cur instanceof List && !cur.shared) {
            const more = share(inPlaceItem(c));
            if (cur.shared) setChild(holder!, last, isPush ? pushCopy(cur, more) : add(cur, more), t);
            else if (isPush) {
              if (over(SLOT_BYTES)) at(exceeded(), s);
              cur.items.push(more);
            } else if (more instanceof List) {
              if (over(SLOT_BYTES * more.items.length)) at(exceeded(), s);
              for (const x of more.items) cur.items.push(share(x));
            } else setChild(holder!, last, add(cur, more), t);
            return CODE_NORMAL;
          }
        }
        const v = fresh ? val(c) : share(val(c));
        assignPath(c, slot, t, ks, v);
      } catch (err) {
        return at(err, s);
      }
      return CODE_NORMAL;
    };
  }

  /** Recognizes `T = push(T, v)` and `T = T + rhs` where T is the same pure target. */
  private inPlaceAppend(t: AssignTarget, value: Expr): { item: Expr; push: boolean } | null {
    if (!t.path.every((p) => p.k === "field" || this.pure(p.expr))) return null;
    if (
      value.k === "call" &&
      value.name === "push" &&
      value.args.length === 2 &&
      sameTarget(t, value.args[0]!)
    )
      return this.pure(value.args[1]!) ? { item: value.args[1]!, push: true } : null;
    if (
      value.k === "bin" &&
      value.op === "+" &&
      (value.r.k === "list" || value.r.k === "comp") &&
      sameTarget(t, value.l) &&
      this.pure(value.r)
    )
      return { item: value.r, push: false };
    return null;
  }

  // ---------- generator path (effectful) ----------
  *genExpr(e: Expr, c: Ctx): Gen {
    if (this.pure(e)) return this.expr(e)(c);
    switch (e.k) {
      case "mcall":
        return yield* this.genCall(e, c, false);
      case "unwrap":
        if (e.expr.k === "mcall") return yield* this.genCall(e.expr, c, true);
        try {
          return unwrapValue(yield* this.genExpr(e.expr, c));
        } catch (err) {
          return at(err, e);
        }
      case "await":
        return yield* this.genAwait(e, c);
      case "start": {
        const args: { [k: string]: Json } = {};
        for (const a of e.args) args[a.key] = toJson(yield* this.genExpr(a.value, c));
        const id = this.siteId(c, e, `process:${e.name}`);
        const r = (yield { kind: "start", req: { id, process: e.name, args } }) as OperationResult;
        if (!r.ok) return at(new LangError("Host", r.error), e);
        try {
          return hostValue(r.value);
        } catch (err) {
          return at(err, e);
        }
      }
      case "sleep": {
        const v = yield* this.genExpr(e.expr, c);
        const id = this.siteId(c, e, "sleep");
        const r = (yield { kind: "sleep", req: { id, mode: e.mode, value: toJson(v) } }) as OperationResult;
        if (!r.ok) return at(new LangError("Host", r.error), e);
        return null;
      }
      case "list":
      case "tuple": {
        const out: Value[] = [];
        for (const x of e.items) out.push(share(yield* this.genExpr(x, c)));
        if (over(CONTAINER_BYTES + SLOT_BYTES * out.length)) at(exceeded(), e);
        return e.k === "list" ? new List(out) : new Tuple(out);
      }
      case "record": {
        const m = new Map<string, Value>();
        for (const en of e.entries) m.set(en.key, share(yield* this.genExpr(en.value, c)));
        if (over(RECORD_BYTES + ENTRY_BYTES * m.size)) at(exceeded(), e);
        return new Rec(m);
      }
      case "comp": {
        const out: Value[] = [];
        yield* this.genComp(e.elem, e.clauses, 0, c, out);
        if (over(CONTAINER_BYTES + SLOT_BYTES * out.length)) at(exceeded(), e);
        return new List(out);
      }
      case "field": {
        const v = yield* this.genExpr(e.obj, c);
        try {
          return readField(v, e.name);
        } catch (err) {
          return at(err, e);
        }
      }
      case "index": {
        const v = yield* this.genExpr(e.obj, c);
        const i = yield* this.genExpr(e.index, c);
        try {
          return readIndex(v, i);
        } catch (err) {
          return at(err, e);
        }
      }
      case "call": {
        const vals: Value[] = [];
        for (const a of e.args) vals.push(yield* this.genExpr(a, c));
        if (e.name === "wait_signal" || e.name === "signal_run") return yield* this.genSignal(e, vals, c);
        const spec = BUILTINS[e.name];
        if (spec === undefined) return at(unknownBuiltin(e.name), e);
        if (vals.length < spec.min || (spec.max >= 0 && vals.length > spec.max))
          return at(typeError(arityError(e.name, spec, vals.length)), e);
        try {
          return spec.fn(vals);
        } catch (err) {
          return at(err, e);
        }
      }
      case "neg": {
        const v = yield* this.genExpr(e.expr, c);
        try {
          return -toNumber(v);
        } catch (err) {
          return at(err, e);
        }
      }
      case "not":
        return !truthy(yield* this.genExpr(e.expr, c));
      case "and":
        return truthy(yield* this.genExpr(e.l, c)) && truthy(yield* this.genExpr(e.r, c));
      case "or":
        return truthy(yield* this.genExpr(e.l, c)) || truthy(yield* this.genExpr(e.r, c));
      case "tern":
        return truthy(yield* this.genExpr(e.cond, c))
          ? yield* this.genExpr(e.then, c)
          : yield* this.genExpr(e.else, c);
      case "bin": {
        const a = yield* this.genExpr(e.l, c);
        const b = yield* this.genExpr(e.r, c);
        try {
          return binary(e.op, a, b);
        } catch (err) {
          return at(err, e);
        }
      }
      default:
        return this.expr(e)(c);
    }
  }

  private *genSignal(e: Extract<Expr, { k: "call" }>, vals: Value[], c: Ctx): Gen {
    if (e.name === "wait_signal") {
      if (vals.length !== 1 || typeof vals[0] !== "string")
        return at(typeError("`wait_signal` takes a signal name"), e);
      const id = this.siteId(c, e, "wait_signal");
      const r = (yield { kind: "wait_signal", req: { id, name: vals[0] } }) as OperationResult;
      if (!r.ok) return at(new LangError("Host", r.error), e);
      return fromJson(r.value);
    }
    if (vals.length !== 3 || typeof vals[1] !== "string")
      return at(typeError("`signal_run` takes a run handle, a signal name and a payload"), e);
    const id = this.siteId(c, e, "signal_run");
    const r = (yield {
      kind: "signal_run",
      req: { id, run: toJson(vals[0]!), name: vals[1], payload: toJson(vals[2]!) },
    }) as OperationResult;
    if (!r.ok) return at(new LangError("Host", r.error), e);
    return null;
  }

  siteId(c: Ctx, node: { start: number }, what: string): string {
    const n = c.occ.get(node.start) ?? 0;
    c.occ.set(node.start, n + 1);
    return `lashlang:${c.cellId}:${what}:${node.start}:${n}`;
  }

  private *callPayload(
    e: Extract<Expr, { k: "mcall" }>,
    c: Ctx,
  ): Generator<HostRequest, OperationCall, HostResponse> {
    const path = modulePath(e.recv);
    if (path === null) throw at(typeError(`receiver for operation \`${e.op}\` is not a module authority`), e);
    const vals: Value[] = [];
    for (const a of e.args) vals.push(yield* this.genExpr(a, c));
    const args: Json =
      vals.length === 1 && vals[0] instanceof Rec ? toJson(vals[0]) : { args: vals.map((v) => toJson(v)) };
    const id = this.siteId(c, e, `resource:${path}.${e.op}`);
    return { id, module: path, operation: e.op, args };
  }

  private *genCall(e: Extract<Expr, { k: "mcall" }>, c: Ctx, unwrap: boolean): Gen {
    const call = yield* this.callPayload(e, c);
    const r = (yield { kind: "call", call }) as OperationResult;
    try {
      return unwrap ? unwrapOperation(r) : wrapResult(r);
    } catch (err) {
      return at(err, e);
    }
  }

  private batchable(e: Expr): boolean {
    const m = this.leafMemo.get(e);
    if (m !== undefined) return m;
    let hasCall = false;
    const ok = (x: Expr): boolean => {
      if (x.k === "list" || x.k === "tuple") return x.items.every(ok);
      if (x.k === "record") return x.entries.every((en) => ok(en.value));
      if (isCallLeaf(x)) {
        const call = x.k === "mcall" ? x : (x as Extract<Expr, { k: "unwrap" }>).expr;
        if (call.k !== "mcall" || !call.args.every((a) => this.pure(a)) || modulePath(call.recv) === null)
          return false;
        hasCall = true;
        return true;
      }
      return this.pure(x);
    };
    const r = (e.k === "list" || e.k === "tuple" || e.k === "record") && ok(e) && hasCall;
    this.leafMemo.set(e, r);
    return r;
  }

  private *genAwait(e: Extract<Expr, { k: "await" }>, c: Ctx): Gen {
    const inner = e.expr;
    if (isCallLeaf(inner)) return yield* this.genExpr(inner, c);
    if (this.batchable(inner)) return yield* this.genBatch(inner, c);
    const v = yield* this.genExpr(inner, c);
    const reqs: HandleRequest[] = [];
    const collect = (x: Value): void => {
      if (x instanceof List || x instanceof Tuple) for (const y of x.items) collect(y);
      else if (x instanceof Rec && !isHandle(x)) for (const y of x.map.values()) collect(y);
      else reqs.push({ id: this.siteId(c, e, "await"), value: toJson(x) });
    };
    collect(v);
    const results = reqs.length === 0 ? [] : ((yield { kind: "await", reqs }) as OperationResult[]);
    let i = 0;
    const rebuild = (x: Value): Value => {
      if (x instanceof List) {
        chargeList(x.items.length);
        return new List(x.items.map(rebuild));
      }
      if (x instanceof Tuple) {
        chargeList(x.items.length);
        return new Tuple(x.items.map(rebuild));
      }
      if (x instanceof Rec && !isHandle(x)) {
        chargeRecord(x.map.size);
        const m = new Map<string, Value>();
        for (const [k, y] of x.map) m.set(k, rebuild(y));
        return new Rec(m);
      }
      const r = results[i++];
      return wrapResult(r ?? { ok: false, error: "host returned no result" });
    };
    try {
      return rebuild(v);
    } catch (err) {
      return at(err, e);
    }
  }

  private *genBatch(shape: Expr, c: Ctx): Gen {
    type Leaf = { call: OperationCall; unwrap: boolean; node: Expr };
    const leaves: Leaf[] = [];
    const plan = (x: Expr): (() => Value) => {
      if (x.k === "list" || x.k === "tuple") {
        const parts = x.items.map(plan);
        const bytes = CONTAINER_BYTES + SLOT_BYTES * parts.length;
        return x.k === "list"
          ? () => {
              charge(bytes);
              return new List(parts.map((p) => share(p())));
            }
          : () => {
              charge(bytes);
              return new Tuple(parts.map((p) => p()));
            };
      }
      if (x.k === "record") {
        const parts = x.entries.map((en) => [en.key, plan(en.value)] as const);
        const bytes = RECORD_BYTES + ENTRY_BYTES * parts.length;
        return () => {
          charge(bytes);
          return new Rec(new Map(parts.map(([k, p]) => [k, share(p())])));
        };
      }
      if (isCallLeaf(x)) {
        const call = (x.k === "mcall" ? x : (x as Extract<Expr, { k: "unwrap" }>).expr) as Extract<
          Expr,
          { k: "mcall" }
        >;
        const g = this.callPayload(call, c);
        const r = g.next();
        if (!r.done) throw new Error("internal: batched call arguments must be pure");
        const idx = leaves.length;
        leaves.push({ call: r.value, unwrap: x.k === "unwrap", node: x });
        return () => results[idx]!;
      }
      const v = this.expr(x)(c);
      return () => v;
    };
    let results: Value[] = [];
    const build = plan(shape);
    const raw = (yield { kind: "batch", calls: leaves.map((l) => l.call) }) as OperationResult[];
    let firstError: LangError | null = null;
    const shaped = (l: Leaf, i: number): Value => {
      try {
        return toValue(l, i);
      } catch (err) {
        return at(err, l.node);
      }
    };
    const toValue = (l: Leaf, i: number): Value => {
      const r = raw[i] ?? { ok: false as const, error: "host returned no result" };
      if (!l.unwrap) return wrapResult(r);
      if (r.ok) return hostValue(r.value);
      if (firstError === null) {
        firstError = new LangError("Unwrap", `\`?\` unwrapped failed module operation: ${r.error}`);
        firstError.start = l.node.start;
        firstError.end = l.node.end;
      }
      return null;
    };
    results = leaves.map(shaped);
    if (firstError) throw firstError;
    try {
      return build();
    } catch (err) {
      return at(err, shape);
    }
  }

  private *genComp(
    elem: Expr,
    clauses: CompClause[],
    i: number,
    c: Ctx,
    out: Value[],
  ): Generator<HostRequest, void, HostResponse> {
    if (i === clauses.length) {
      out.push(share(yield* this.genExpr(elem, c)));
      return;
    }
    const cl = clauses[i]!;
    if (cl.kind === "if") {
      if (truthy(yield* this.genExpr(cl.expr, c))) yield* this.genComp(elem, clauses, i + 1, c, out);
      return;
    }
    let items: Value[];
    try {
      items = iterItems(yield* this.genExpr(cl.expr, c));
    } catch (err) {
      return at(err, cl.expr);
    }
    const slot = this.slot(cl.name);
    const saved = c.slots[slot];
    try {
      for (const item of items) {
        step(c);
        c.slots[slot] = share(item);
        yield* this.genComp(elem, clauses, i + 1, c, out);
      }
    } finally {
      c.slots[slot] = saved;
    }
  }

  *genBlock(b: Stmt[], c: Ctx): SGen {
    for (const s of b) {
      if (++c.steps > c.budget) return at(budgetError(c.budget), s);
      const code = this.stmtIsPure(s) ? this.stmt(s)(c) : yield* this.genStmt(s, c);
      if (code !== CODE_NORMAL) return code;
    }
    return CODE_NORMAL;
  }

  private *genStmt(s: Stmt, c: Ctx): SGen {
    switch (s.k) {
      case "expr":
        yield* this.genExpr(s.expr, c);
        return CODE_NORMAL;
      case "print": {
        const v = yield* this.genExpr(s.expr, c);
        try {
          c.print(v);
        } catch (err) {
          return at(err, s);
        }
        return CODE_NORMAL;
      }
      case "finish":
        c.finishValue = yield* this.genExpr(s.expr, c);
        c.finished = true;
        return CODE_FINISH;
      case "cancel": {
        const v = yield* this.genExpr(s.expr, c);
        const id = this.siteId(c, s, "cancel");
        const r = (yield { kind: "cancel", req: { id, value: toJson(v) } }) as OperationResult;
        if (!r.ok) return at(new LangError("Host", r.error), s);
        return CODE_NORMAL;
      }
      case "assign": {
        const t = s.target;
        if (this.projectedNames.has(t.name)) return at(readOnly(t.name), s);
        const slot = this.slot(t.name);
        const ks: (string | Value)[] = [];
        for (const p of t.path) ks.push(p.k === "field" ? p.name : yield* this.genExpr(p.expr, c));
        const raw = yield* this.genExpr(s.value, c);
        const v = this.fresh(s.value) ? raw : share(raw);
        try {
          if (ks.length === 0) c.slots[slot] = v;
          else assignPath(c, slot, t, ks, v);
        } catch (err) {
          return at(err, s);
        }
        return CODE_NORMAL;
      }
      case "if": {
        const cond = truthy(yield* this.genExpr(s.cond, c));
        if (cond) return yield* this.genBlock(s.then, c);
        return s.else ? yield* this.genBlock(s.else, c) : CODE_NORMAL;
      }
      case "while":
        for (;;) {
          step(c);
          if (!truthy(yield* this.genExpr(s.cond, c))) return CODE_NORMAL;
          const code = yield* this.genBlock(s.body, c);
          if (code === CODE_BREAK) return CODE_NORMAL;
          if (code === CODE_FINISH) return code;
        }
      case "for": {
        if (this.projectedNames.has(s.name)) return at(readOnly(s.name), s);
        let items: Value[];
        try {
          items = iterItems(yield* this.genExpr(s.iter, c));
        } catch (err) {
          return at(err, s.iter);
        }
        const slot = this.slot(s.name);
        const saved = c.slots[slot];
        try {
          for (const item of items) {
            step(c);
            c.slots[slot] = share(item);
            const code = yield* this.genBlock(s.body, c);
            if (code === CODE_BREAK) break;
            if (code === CODE_FINISH) return code;
          }
        } finally {
          c.slots[slot] = saved;
        }
        return CODE_NORMAL;
      }
      case "fail":
      case "yield":
      case "wake": {
        if (!c.processEvent) return at(typeError(`\`${s.k}\` can only run inside a process`), s);
        const v = yield* this.genExpr(s.expr, c);
        try {
          return c.processEvent(s.k, v);
        } catch (err) {
          return at(err, s);
        }
      }
      default:
        return this.stmt(s)(c);
    }
  }
}

/** `push(list, v)` as a new list (the list's items become shared by both). */
function pushCopy(l: List, v: Value): List {
  chargeList(l.items.length + 1);
  const items = l.items.slice();
  markChildrenShared(items);
  items.push(share(v));
  return new List(items);
}

const ARITH_OPS: readonly string[] = ["+", "-", "*", "/", "%"];

/** `a op b` for two numbers (op: index in ARITH_OPS); undefined when either side is not a number. */
function arith(op: number, a: Value | undefined, b: Value): Value | undefined {
  if (typeof a !== "number" || typeof b !== "number") return undefined;
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return a / b;
    default:
      return a % b;
  }
}

function isHandle(r: Rec): boolean {
  return r.map.has("__handle__") || r.map.has("handle");
}

export function readOnly(name: string): LangError {
  return typeError(
    `\`${name}\` is a read-only projected binding`,
    "copy the projected value into a new variable before changing it",
  );
}

function sameTarget(t: AssignTarget, e: Expr): boolean {
  let x = e;
  for (let i = t.path.length - 1; i >= 0; i--) {
    const p = t.path[i]!;
    if (p.k === "field") {
      if (x.k !== "field" || x.name !== p.name) return false;
      x = x.obj;
    } else {
      if (x.k !== "index" || !sameExpr(x.index, p.expr)) return false;
      x = x.obj;
    }
  }
  return x.k === "var" && x.name === t.name;
}

function sameExpr(a: Expr, b: Expr): boolean {
  if (a.k !== b.k) return false;
  if (a.k === "var") return a.name === (b as typeof a).name;
  if (a.k === "lit") return a.value === (b as typeof a).value;
  return false;
}

function hasRefs(t: TypeExpr): boolean {
  switch (t.k) {
    case "ref":
      return true;
    case "list":
      return hasRefs(t.item);
    case "object":
      return t.fields.some((f) => hasRefs(f.type));
    case "union":
      return t.members.some(hasRefs);
    default:
      return false;
  }
}

export function typeValue(c: Ctx, t: TypeExpr): Rec {
  const schema = typeToSchema(t, (path, start, end) => {
    const name = path[0]!;
    if (path.length > 1) return {};
    const v = c.lookup(name);
    if (v !== undefined) {
      if (isTypeValue(v)) return toJson(v.map.get(TYPE_KEY)!);
      const err = typeError(`\`${name}\` is not a Type value`);
      err.start = start;
      err.end = end;
      throw err;
    }
    const decl = c.typeDecls.get(name);
    if (decl !== undefined) {
      if (++c.typeDepth > 64) throw valueError(`type \`${name}\` is recursive`);
      try {
        return toJson(typeValue(c, decl).map.get(TYPE_KEY)!);
      } finally {
        c.typeDepth--;
      }
    }
    const err = new LangError("UndefinedVariable", `unknown name \`${name}\``);
    err.start = start;
    err.end = end;
    throw err;
  });
  return new Rec(new Map([[TYPE_KEY, fromJson(schema)]]));
}

// ---------------------------------------------------------------- path assignment

function keyText(k: Value): string {
  return typeof k === "string" ? k : stringify(k);
}

function stepLabel(t: AssignTarget, i: number, k: Value): string {
  return t.path[i]!.k === "field" ? `field \`.${keyText(k)}\`` : `key \`${keyText(k)}\``;
}

function listIndex(items: Value[], k: Value): number {
  if (typeof k !== "number" || !Number.isInteger(k))
    throw typeError("list assignment index must be an integer");
  const i = k < 0 ? k + items.length : k;
  if (i < 0 || i >= items.length) throw valueError("list assignment index out of bounds");
  return i;
}

function immutable(v: Value, t: AssignTarget, i: number, k: Value): never {
  if (v instanceof Tuple) throw typeError("can't assign tuple indexes; tuples are immutable");
  if (v instanceof Image) throw typeError("can't assign image fields; images are immutable");
  if (v === null) throw valueError(`can't assign through missing ${stepLabel(t, i, k)}`);
  const what = t.path[i]!.k === "field" ? `field \`.${keyText(k)}\` on` : "an index of";
  throw typeError(`can't assign ${what} ${typeName(v)}`);
}

function peekChild(holder: List | Rec, k: Value): Value | undefined {
  if (holder instanceof Rec) return holder.map.get(keyText(k));
  if (typeof k !== "number" || !Number.isInteger(k)) return undefined;
  return holder.items[k < 0 ? k + holder.items.length : k];
}

function setChild(holder: List | Rec, k: Value, v: Value, _t: AssignTarget): void {
  if (holder instanceof Rec) setEntry(holder.map, keyText(k), v);
  else holder.items[listIndex(holder.items, k)] = v;
}

/** Sets a record entry; a new key is charged to the memory budget. */
function setEntry(m: Map<string, Value>, k: string, v: Value): void {
  const n = m.size;
  m.set(k, v);
  if (m.size !== n) charge(ENTRY_BYTES);
}

/** Walks to (and owns) the container that holds the last path step. */
function descend(c: Ctx, slot: number, t: AssignTarget, ks: Value[], _forRead: boolean): List | Rec | null {
  const root = c.slots[slot];
  if (root === undefined) throw new LangError("UndefinedVariable", `unknown name \`${t.name}\``);
  if (!(root instanceof List || root instanceof Rec)) return immutable(root, t, 0, ks[0]!);
  let cur: List | Rec = own(root);
  c.slots[slot] = cur;
  for (let i = 0; i < ks.length - 1; i++) {
    const k = ks[i]!;
    let child: Value | undefined;
    if (cur instanceof Rec) {
      child = cur.map.get(keyText(k));
      if (child === undefined)
        throw valueError(
          t.path[i]!.k === "field"
            ? `can't assign through missing field \`.${keyText(k)}\``
            : `can't assign through missing key \`${keyText(k)}\``,
        );
    } else {
      child = cur.items[listIndex(cur.items, k)];
    }
    const next = ks[i + 1]!;
    if (!(child instanceof List || child instanceof Rec)) return immutable(child ?? null, t, i + 1, next);
    const owned: List | Rec = own(child);
    if (owned !== child) setChild(cur, k, owned, t);
    cur = owned;
  }
  return cur;
}

export function assignPath(c: Ctx, slot: number, t: AssignTarget, ks: Value[], v: Value): void {
  const holder = descend(c, slot, t, ks, false)!;
  const last = ks[ks.length - 1]!;
  if (holder instanceof Rec) setEntry(holder.map, keyText(last), v);
  else holder.items[listIndex(holder.items, last)] = v;
}

// ---------------------------------------------------------------- program entry

export interface CompiledCell {
  compiler: Compiler;
  program: Program;
  pure: boolean;
  runSync: (c: Ctx) => number;
  runGen: (c: Ctx) => SGen;
}

export function compileProgram(program: Program, projectedNames: Iterable<string>): CompiledCell {
  const compiler = new Compiler(projectedNames);
  const pure = compiler.blockPure(program.main);
  const runSync = pure ? compiler.block(program.main) : () => CODE_NORMAL;
  if (program.main.length === 0) {
    return {
      compiler,
      program,
      pure: true,
      runSync: () => CODE_NORMAL,
      runGen: (c) => compiler.genBlock([], c),
    };
  }
  // Make sure every statement is compiled (so slots are allocated) before running.
  for (const s of program.main) if (compiler.stmtIsPure(s)) compiler.stmt(s);
  collectNames(program.main, compiler);
  return { compiler, program, pure, runSync, runGen: (c) => compiler.genBlock(program.main, c) };
}

function collectNames(b: Stmt[], comp: Compiler): void {
  const visitE = (e: Expr): void => {
    switch (e.k) {
      case "var":
        if (!comp.projectedNames.has(e.name)) comp.slot(e.name);
        return;
      case "list":
      case "tuple":
        e.items.forEach(visitE);
        return;
      case "record":
        for (const x of e.entries as RecordEntry[]) visitE(x.value);
        return;
      case "comp":
        visitE(e.elem);
        for (const cl of e.clauses) {
          if (cl.kind === "for") comp.slot(cl.name);
          visitE(cl.expr);
        }
        return;
      case "field":
        visitE(e.obj);
        return;
      case "index":
        visitE(e.obj);
        visitE(e.index);
        return;
      case "call":
        e.args.forEach(visitE);
        return;
      case "mcall":
        e.args.forEach(visitE);
        return;
      case "unwrap":
      case "neg":
      case "not":
      case "await":
      case "sleep":
        visitE(e.expr);
        return;
      case "bin":
      case "and":
      case "or":
        visitE(e.l);
        visitE(e.r);
        return;
      case "tern":
        visitE(e.cond);
        visitE(e.then);
        visitE(e.else);
        return;
      case "start":
        for (const x of e.args) visitE(x.value);
        return;
      default:
        return;
    }
  };
  for (const s of b) {
    switch (s.k) {
      case "if":
        visitE(s.cond);
        collectNames(s.then, comp);
        if (s.else) collectNames(s.else, comp);
        break;
      case "for":
        if (!comp.projectedNames.has(s.name)) comp.slot(s.name);
        visitE(s.iter);
        collectNames(s.body, comp);
        break;
      case "while":
        visitE(s.cond);
        collectNames(s.body, comp);
        break;
      case "assign":
        if (!comp.projectedNames.has(s.target.name)) comp.slot(s.target.name);
        for (const p of s.target.path) if (p.k === "index") visitE(p.expr);
        visitE(s.value);
        break;
      case "break":
      case "continue":
        break;
      default:
        visitE(s.expr);
    }
  }
}

export { CODE_FINISH };
