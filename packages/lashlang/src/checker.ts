/**
 * The static checker (the reference's "linker", §1.12b): runs before anything executes.
 * - unknown builtins and arity, bare tool calls, abilities/features gates
 * - module operations against the host surface, and record-literal arguments against the
 *   operation's JSON schema (missing required field, unknown field of a closed object, enum)
 * - `start` against declared processes, names inside process bodies
 * - gradual definite-error rules over inferred types (see README for the relaxed ones)
 */
import type { Expr, ProcessDecl, Program, Stmt, TypeExpr } from "./ast.ts";
import { arityError, BUILTINS } from "./builtins.ts";
import { modulePath } from "./interp.ts";
import type { Json } from "./values.ts";

export interface OperationSpec {
  /** JSON Schema of the input payload (the record argument). */
  input?: Json;
  /** JSON Schema of the returned value (used for typing `await m.op(...)?`). */
  output?: Json;
  description?: string;
  /** Host tool id (e.g. `read_file`); used to catch bare tool calls. */
  tool?: string;
}

export interface ModuleSpec {
  description?: string;
  operations: { [operation: string]: OperationSpec };
}

/** What the host exposes to Lashlang: module paths → operations → input schema. */
export interface HostSurface {
  modules: { [path: string]: ModuleSpec };
}

export interface Abilities {
  processes?: boolean;
  sleep?: boolean;
  processSignals?: boolean;
  triggers?: boolean;
}

export interface CheckOptions {
  /** Without a surface, module operations are not checked (any dotted receiver is allowed). */
  surface?: HostSurface;
  /** Disabled by default: processes, sleep, process_signals, triggers. */
  abilities?: Abilities;
  /** `@label` annotations (default enabled). */
  labelAnnotations?: boolean;
  /** Names of read-only projected bindings. */
  projected?: string[];
  /** Run the gradual type rules (default true). */
  gradual?: boolean;
}

export interface CheckError {
  message: string;
  start: number;
  end: number;
  hint?: string;
}

// ---------------------------------------------------------------- types

export type Ty =
  | { k: "any" }
  | { k: "null" }
  | { k: "bool" }
  | { k: "int" }
  | { k: "float" }
  | { k: "str" }
  | { k: "enum"; values: string[] }
  | { k: "list"; item: Ty }
  | { k: "tuple" }
  | { k: "obj"; fields: Map<string, Ty>; optional?: Set<string> }
  | { k: "dict" }
  | { k: "union"; members: Ty[] };

const ANY: Ty = { k: "any" };
const BOOL: Ty = { k: "bool" };
const INT: Ty = { k: "int" };
const FLOAT: Ty = { k: "float" };
const STR: Ty = { k: "str" };
const NULL: Ty = { k: "null" };
const LIST_ANY: Ty = { k: "list", item: ANY };
const DICT: Ty = { k: "dict" };

type Cat = "scalar" | "list" | "tuple" | "object" | "unknown";

function cat(t: Ty): Cat {
  switch (t.k) {
    case "null":
    case "bool":
    case "int":
    case "float":
    case "str":
    case "enum":
      return "scalar";
    case "list":
      return "list";
    case "tuple":
      return "tuple";
    case "obj":
    case "dict":
      return "object";
    case "union": {
      const cs = new Set(t.members.map(cat));
      return cs.size === 1 ? [...cs][0]! : "unknown";
    }
    default:
      return "unknown";
  }
}

export function showTy(t: Ty): string {
  switch (t.k) {
    case "list":
      return `list[${showTy(t.item)}]`;
    case "obj":
      return `{${[...t.fields].map(([k, v]) => `${k}${t.optional?.has(k) ? "?" : ""}: ${showTy(v)}`).join(", ")}}`;
    case "enum":
      return `enum[${t.values.map((v) => JSON.stringify(v)).join(", ")}]`;
    case "union":
      return t.members.map(showTy).join(" | ");
    default:
      return t.k === "dict" ? "dict" : t.k;
  }
}

/** Same printed type. Identical objects and plain kinds are decided without printing. */
function sameTy(a: Ty, b: Ty): boolean {
  if (a === b) return true;
  if (!STRUCTURED.has(a.k) && !STRUCTURED.has(b.k)) return a.k === b.k;
  return showTy(a) === showTy(b);
}
const STRUCTURED = new Set<Ty["k"]>(["list", "obj", "enum", "union"]);

export function join(a: Ty, b: Ty): Ty {
  if (a.k === "any" || b.k === "any") return ANY;
  if (sameTy(a, b)) return a;
  if ((a.k === "int" && b.k === "float") || (a.k === "float" && b.k === "int")) return FLOAT;
  if (a.k === "list" && b.k === "list") return { k: "list", item: join(a.item, b.item) };
  const members: Ty[] = [];
  for (const t of [a, b])
    for (const m of t.k === "union" ? t.members : [t])
      if (!members.some((x) => sameTy(x, m))) members.push(m);
  return { k: "union", members };
}

/** JSON Schema → type (closed objects when `additionalProperties: false`). */
export function schemaToTy(s: Json | undefined): Ty {
  if (s === null || typeof s !== "object" || Array.isArray(s)) return ANY;
  if (Array.isArray(s.enum) && s.enum.every((x) => typeof x === "string"))
    return { k: "enum", values: s.enum as string[] };
  const alts = (s.anyOf ?? s.oneOf) as Json;
  if (Array.isArray(alts)) return alts.map(schemaToTy).reduce((x, y) => join(x, y));
  const t = Array.isArray(s.type) ? s.type : [s.type];
  const one = (ty: Json | undefined): Ty => {
    switch (ty) {
      case "string":
        return STR;
      case "integer":
        return INT;
      case "number":
        return FLOAT;
      case "boolean":
        return BOOL;
      case "null":
        return NULL;
      case "array":
        return { k: "list", item: schemaToTy(s.items) };
      case "object": {
        const props = s.properties;
        if (
          s.additionalProperties !== false ||
          props === null ||
          typeof props !== "object" ||
          Array.isArray(props)
        )
          return DICT;
        const fields = new Map<string, Ty>();
        const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
        const optional = new Set<string>();
        for (const k of Object.keys(props)) {
          fields.set(k, schemaToTy(props[k]));
          if (!required.has(k)) optional.add(k);
        }
        return { k: "obj", fields, optional };
      }
      default:
        return ANY;
    }
  };
  return t.map(one).reduce((x, y) => join(x, y));
}

const BUILTIN_TYPES: { [name: string]: Ty } = {
  len: INT,
  find: { k: "union", members: [INT, NULL] },
  to_int: INT,
  ceil_div: INT,
  floor_div: INT,
  empty: BOOL,
  contains: BOOL,
  starts_with: BOOL,
  ends_with: BOOL,
  to_float: FLOAT,
  to_string: STR,
  trim: STR,
  join: STR,
  keys: LIST_ANY,
  values: LIST_ANY,
  split: LIST_ANY,
  grep_text: LIST_ANY,
  range: LIST_ANY,
  push: LIST_ANY,
};

// ---------------------------------------------------------------- checker

type Env = Map<string, Ty>;

class Checker {
  errors: CheckError[] = [];
  silent = 0;
  loopNesting = 0;
  readonly opts: CheckOptions;
  readonly program: Program;
  readonly processes = new Map<string, ProcessDecl>();
  readonly projected: Set<string>;
  readonly gradual: boolean;
  /** Names visible in the current process body, or null in the foreground. */
  processScope: Set<string> | null = null;

  constructor(program: Program, opts: CheckOptions) {
    this.program = program;
    this.opts = opts;
    this.projected = new Set(opts.projected ?? []);
    this.gradual = opts.gradual !== false;
    for (const p of program.processes) this.processes.set(p.name, p);
  }

  err(message: string, node: { start: number; end: number }, hint?: string): void {
    if (this.silent > 0) return;
    if (this.errors.some((e) => e.start === node.start && e.message === message)) return;
    const e: CheckError = { message, start: node.start, end: node.end };
    if (hint) e.hint = hint;
    this.errors.push(e);
  }

  feature(name: string, on: boolean | undefined, node: { start: number; end: number }): void {
    if (!on) this.err(`lashlang feature \`${name}\` is disabled by this host`, node);
  }

  run(): CheckError[] {
    const abil = this.opts.abilities ?? {};
    for (const it of this.program.items) {
      if (it.k === "process") {
        this.feature("processes", abil.processes, it);
        if (it.signals.length > 0) this.feature("process_signals", abil.processSignals, it);
        if (it.label && this.opts.labelAnnotations === false) this.feature("label_annotations", false, it);
      } else if (it.k !== "typedecl" && it.label && this.opts.labelAnnotations === false) {
        this.feature("label_annotations", false, it);
      }
    }
    for (const p of this.program.processes) {
      const scope = new Set<string>(p.params.map((x) => x.name));
      collectAssigned(p.body, scope);
      for (const t of this.program.types) scope.add(t.name);
      for (const m of Object.keys(this.opts.surface?.modules ?? {})) scope.add(m.split(".")[0]!);
      this.processScope = scope;
      const env: Env = new Map();
      for (const x of p.params) env.set(x.name, tyOfTypeExpr(x.type));
      this.block(p.body, env);
      this.processScope = null;
    }
    this.block(this.program.main, new Map());
    this.errors.sort((a, b) => a.start - b.start);
    return this.errors;
  }

  // ---------- statements ----------
  block(b: Stmt[], env: Env): void {
    for (const s of b) this.stmt(s, env);
  }

  stmt(s: Stmt, env: Env): void {
    switch (s.k) {
      case "expr":
      case "print":
      case "finish":
      case "fail":
      case "yield":
      case "wake":
      case "cancel":
        if (s.k === "cancel") this.feature("processes", this.opts.abilities?.processes, s);
        this.expr(s.expr, env);
        return;
      case "assign": {
        const t = s.target;
        if (this.projected.has(t.name))
          this.err(
            `\`${t.name}\` is a read-only projected binding`,
            s,
            "copy the projected value into a new variable before changing it",
          );
        let cur: Ty | undefined = t.path.length > 0 ? this.readName(t.name, s, env, true) : undefined;
        for (let i = 0; i < t.path.length; i++) {
          const p = t.path[i]!;
          if (p.k === "index") this.expr(p.expr, env);
          if (cur === undefined) continue;
          if (p.k === "field" && cur.k === "obj" && !cur.fields.has(p.name)) {
            this.err(
              `object type has no field \`${p.name}\``,
              s,
              'use index syntax `r["key"] = v` to add keys dynamically',
            );
            cur = undefined;
          } else if (p.k === "field" && cur.k === "obj") cur = cur.fields.get(p.name);
          else cur = undefined;
        }
        const vt = this.expr(s.value, env);
        if (t.path.length === 0) env.set(t.name, vt);
        else if (t.path.length === 1 && t.path[0]!.k === "index") {
          const root = env.get(t.name);
          if (root && root.k === "obj") env.set(t.name, DICT);
        }
        return;
      }
      case "if": {
        this.expr(s.cond, env);
        const a = new Map(env);
        const b = new Map(env);
        this.block(s.then, a);
        if (s.else) this.block(s.else, b);
        mergeInto(env, a, b);
        return;
      }
      case "for":
      case "while": {
        let item: Ty = ANY;
        if (s.k === "for") {
          const it = this.expr(s.iter, env);
          const c = cat(it);
          if (c === "scalar" || c === "object")
            this.err(`cannot iterate over ${showTy(it)}; expected a list`, s.iter);
          if (it.k === "list") item = it.item;
        } else this.expr(s.cond, env);
        const bind = (e: Env) => {
          if (s.k === "for") e.set(s.name, item);
        };
        const saved = s.k === "for" ? env.get(s.name) : undefined;
        // widen: one silent pass, join, then the reporting pass
        this.loopNesting++;
        if (this.loopNesting <= 4) {
          const probe = new Map(env);
          bind(probe);
          this.silent++;
          this.block(s.body, probe);
          if (s.k === "while") this.expr(s.cond, probe);
          this.silent--;
          mergeInto(env, env, probe);
        } else {
          const assigned = new Set<string>();
          collectAssigned(s.body, assigned);
          for (const n of assigned) env.set(n, ANY);
        }
        const body = new Map(env);
        bind(body);
        this.block(s.body, body);
        if (s.k === "while") this.expr(s.cond, body);
        this.loopNesting--;
        mergeInto(env, env, body);
        if (s.k === "for") {
          if (saved === undefined) env.delete(s.name);
          else env.set(s.name, saved);
        }
        return;
      }
      case "break":
      case "continue":
        return;
    }
  }

  readName(name: string, node: { start: number; end: number }, env: Env, _assign = false): Ty {
    if (this.processScope && !this.processScope.has(name) && !env.has(name)) {
      this.err(`unknown name \`${name}\``, node);
      return ANY;
    }
    return env.get(name) ?? ANY;
  }

  // ---------- expressions ----------
  expr(e: Expr, env: Env): Ty {
    switch (e.k) {
      case "lit":
        if (e.value === null) return NULL;
        if (typeof e.value === "boolean") return BOOL;
        if (typeof e.value === "number") return Number.isInteger(e.value) ? INT : FLOAT;
        return STR;
      case "var":
        if (this.projected.has(e.name)) return ANY;
        if (this.program.types.some((t) => t.name === e.name) && !env.has(e.name)) return DICT;
        return this.readName(e.name, e, env);
      case "list": {
        let item: Ty | null = null;
        for (const x of e.items) {
          const t = this.expr(x, env);
          item = item === null ? t : join(item, t);
        }
        return { k: "list", item: item ?? ANY };
      }
      case "tuple":
        for (const x of e.items) this.expr(x, env);
        return { k: "tuple" };
      case "record": {
        const fields = new Map<string, Ty>();
        for (const en of e.entries) fields.set(en.key, this.expr(en.value, env));
        return { k: "obj", fields };
      }
      case "comp": {
        const inner = new Map(env);
        for (const cl of e.clauses) {
          const t = this.expr(cl.expr, inner);
          if (cl.kind === "for") {
            const c = cat(t);
            if (c === "scalar" || c === "object")
              this.err(`cannot iterate over ${showTy(t)}; expected a list`, cl.expr);
            inner.set(cl.name, t.k === "list" ? t.item : ANY);
          }
        }
        this.expr(e.elem, inner);
        return LIST_ANY;
      }
      case "field": {
        const t = this.expr(e.obj, env);
        if (t.k === "obj") {
          const f = t.fields.get(e.name);
          if (f === undefined) {
            this.err(
              `object type has no field \`${e.name}\``,
              e,
              'use `r["key"]` to read keys that may be absent',
            );
            return ANY;
          }
          return f;
        }
        return ANY;
      }
      case "index": {
        const t = this.expr(e.obj, env);
        this.expr(e.index, env);
        return t.k === "list" ? t.item : ANY;
      }
      case "call":
        return this.call(e, env);
      case "mcall":
        this.mcall(e, env);
        return ANY;
      case "unwrap":
        if (e.expr.k === "mcall") return this.mcall(e.expr, env);
        this.expr(e.expr, env);
        return ANY;
      case "await": {
        const t = this.expr(e.expr, env);
        return e.expr.k === "unwrap" && e.expr.expr.k === "mcall" ? t : ANY;
      }
      case "neg": {
        const t = this.expr(e.expr, env);
        const c = cat(t);
        if (c !== "scalar" && c !== "unknown") this.err(`operator \`-\` does not accept ${showTy(t)}`, e);
        return FLOAT;
      }
      case "not":
        this.expr(e.expr, env);
        return BOOL;
      case "and":
      case "or": {
        const l = this.expr(e.l, env);
        const r = this.expr(e.r, env);
        if (this.gradual && known(l) && known(r) && (!isBool(l) || !isBool(r)))
          this.err(`operator \`${e.k}\` does not accept ${showTy(l)} and ${showTy(r)}`, e);
        return BOOL;
      }
      case "tern":
        this.expr(e.cond, env);
        return join(this.expr(e.then, env), this.expr(e.else, env));
      case "bin":
        return this.bin(e, env);
      case "type":
        this.typeRefs(e.type, env, e);
        return DICT;
      case "start": {
        this.feature("processes", this.opts.abilities?.processes, e);
        for (const a of e.args) this.expr(a.value, env);
        const p = this.processes.get(e.name);
        if (!p) {
          this.err(
            `unknown process \`${e.name}\``,
            e,
            "declare it in this cell with `process name(...) { ... }`",
          );
          return ANY;
        }
        const seen = new Set<string>();
        for (const a of e.args) {
          if (seen.has(a.key)) this.err(`duplicate process argument \`${a.key}\``, e);
          seen.add(a.key);
          if (!p.params.some((x) => x.name === a.key))
            this.err(`process \`${p.name}\` does not accept argument \`${a.key}\``, e);
        }
        for (const x of p.params)
          if (!seen.has(x.name)) this.err(`process \`${p.name}\` is missing argument \`${x.name}\``, e);
        return ANY;
      }
      case "sleep":
        this.feature("sleep", this.opts.abilities?.sleep, e);
        this.expr(e.expr, env);
        return NULL;
    }
  }

  typeRefs(t: TypeExpr, env: Env, node: { start: number; end: number }): void {
    if (t.k === "ref" && t.path.length === 1 && this.processScope) this.readName(t.path[0]!, node, env);
    if (t.k === "list") this.typeRefs(t.item, env, node);
    if (t.k === "object") for (const f of t.fields) this.typeRefs(f.type, env, node);
    if (t.k === "union") for (const m of t.members) this.typeRefs(m, env, node);
  }

  bin(e: Extract<Expr, { k: "bin" }>, env: Env): Ty {
    const l = this.expr(e.l, env);
    const r = this.expr(e.r, env);
    const cl = cat(l);
    const cr = cat(r);
    const bothKnown = this.gradual && cl !== "unknown" && cr !== "unknown";
    // The reference types a tuple as a list: `(1, 2) == [1, 2]` links (and is false at run time),
    // `(1,) + [2]` links (and fails at run time: "can't concatenate list and tuple").
    const seq = (c: string) => (c === "tuple" ? "list" : c);
    switch (e.op) {
      case "==":
      case "!=":
        if (bothKnown && seq(cl) !== seq(cr))
          this.err(`operator \`${e.op}\` does not accept ${showTy(l)} and ${showTy(r)}`, e);
        return BOOL;
      case "<":
      case "<=":
      case ">":
      case ">=":
        if (bothKnown && (cl !== "scalar" || cr !== "scalar"))
          this.err(`operator \`${e.op}\` does not accept ${showTy(l)} and ${showTy(r)}`, e);
        return BOOL;
      case "+":
        if (bothKnown && !(seq(cl) === seq(cr) && cl !== "object"))
          this.err(`operator \`+\` does not accept ${showTy(l)} and ${showTy(r)}`, e);
        if (cl === "list" && cr === "list")
          return l.k === "list" && r.k === "list" ? { k: "list", item: join(l.item, r.item) } : LIST_ANY;
        if (cl === "tuple") return { k: "tuple" };
        if (l.k === "str" || r.k === "str") return STR;
        return cl === "scalar" && cr === "scalar" ? FLOAT : ANY;
      default:
        if (bothKnown && (cl !== "scalar" || cr !== "scalar"))
          this.err(`operator \`${e.op}\` does not accept ${showTy(l)} and ${showTy(r)}`, e);
        return FLOAT;
    }
  }

  call(e: Extract<Expr, { k: "call" }>, env: Env): Ty {
    const argTys = e.args.map((a) => this.expr(a, env));
    if (e.name === "wait_signal" || e.name === "signal_run") {
      this.feature("process_signals", this.opts.abilities?.processSignals, e);
      return ANY;
    }
    const spec = BUILTINS[e.name];
    if (!spec) {
      const bare = this.bareTool(e.name);
      if (bare)
        this.err(
          `tools must be called through module paths, e.g. \`${bare}(...)\``,
          e,
          `bare tool calls are not allowed; call the module operation: \`await ${bare}({ ... })?\``,
        );
      else this.err(`unknown builtin \`${e.name}\``, e);
      return ANY;
    }
    if (e.args.length < spec.min || (spec.max >= 0 && e.args.length > spec.max)) {
      this.err(arityError(e.name, spec, e.args.length), e);
      return ANY;
    }
    if (e.name === "validate" && e.args[1]) {
      const a = e.args[1];
      const t = argTys[1]!;
      if (a.k !== "type" && a.k !== "var" && a.k !== "field" && a.k !== "index" && cat(t) !== "unknown")
        this.err(
          "`validate` requires a Type literal as the second argument",
          a,
          "pass `Type { ... }` or a variable that holds a Type literal",
        );
    }
    return BUILTIN_TYPES[e.name] ?? ANY;
  }

  bareTool(name: string): string | null {
    const mods = this.opts.surface?.modules ?? {};
    for (const [path, m] of Object.entries(mods)) {
      for (const [op, spec] of Object.entries(m.operations)) {
        if (spec.tool === name || `${path.replace(/\./g, "_")}_${op}` === name) return `${path}.${op}`;
      }
    }
    return null;
  }

  mcall(e: Extract<Expr, { k: "mcall" }>, env: Env): Ty {
    const path = modulePath(e.recv);
    const argTys = e.args.map((a) => this.expr(a, env));
    void argTys;
    const surface = this.opts.surface;
    if (path === null) {
      this.expr(e.recv, env);
      this.err(`receiver for operation \`${e.op}\` is not a module authority`, e);
      return ANY;
    }
    if (!surface) return ANY;
    const mod = surface.modules[path];
    if (!mod) {
      const root = path.split(".")[0]!;
      if (env.has(root) || this.projected.has(root)) {
        this.err(`receiver for operation \`${e.op}\` is not a module authority`, e);
        return ANY;
      }
      const known = Object.keys(surface.modules);
      const under = known.filter((k) => k.startsWith(`${path}.`));
      if (under.length > 0)
        this.err(
          `module \`${path}\` does not expose operation \`${e.op}\`; available identity-qualified paths: ${under.map((u) => `${u}.${e.op}`).join(", ")}`,
          e,
        );
      else
        this.err(
          `unknown module \`${path}\``,
          e,
          known.length > 0 ? `available modules: ${known.join(", ")}` : "this host exposes no modules",
        );
      return ANY;
    }
    const spec = mod.operations[e.op];
    if (!spec) {
      const ops = Object.keys(mod.operations);
      this.err(
        `module \`${path}\` does not expose operation \`${e.op}\``,
        e,
        ops.length > 0 ? `available operations: ${ops.map((o) => `${path}.${o}`).join(", ")}` : undefined,
      );
      return ANY;
    }
    if (spec.input !== undefined && e.args.length === 1 && e.args[0]!.k === "record") {
      this.checkArgs(`${path}.${e.op}`, spec.input, e.args[0]!, env);
    }
    return schemaToTy(spec.output);
  }

  checkArgs(opName: string, schema: Json, rec: Extract<Expr, { k: "record" }>, _env: Env): void {
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return;
    const props = schema.properties;
    const propMap = props !== null && typeof props === "object" && !Array.isArray(props) ? props : {};
    const expects = showTy(schemaToTy(schema));
    const keys = new Set(rec.entries.map((x) => x.key));
    if (Array.isArray(schema.required)) {
      for (const r of schema.required) {
        if (typeof r === "string" && !keys.has(r)) {
          this.err(
            `operation \`${opName}\` expects ${expects}, got a record without \`${r}\``,
            rec,
            `missing required field \`${r}\``,
          );
        }
      }
    }
    for (const en of rec.entries) {
      const ps = propMap[en.key];
      if (ps === undefined) {
        if (schema.additionalProperties === false)
          this.err(
            `operation \`${opName}\` expects ${expects}, got unknown field \`${en.key}\``,
            en.value,
            `known fields: ${Object.keys(propMap).join(", ")}`,
          );
        continue;
      }
      if (
        ps !== null &&
        typeof ps === "object" &&
        !Array.isArray(ps) &&
        Array.isArray(ps.enum) &&
        en.value.k === "lit"
      ) {
        const v = en.value.value;
        if (!ps.enum.some((x) => x === v))
          this.err(
            `operation \`${opName}\` expects \`${en.key}\` to be one of [${ps.enum.map((x) => JSON.stringify(x)).join(", ")}], got ${JSON.stringify(v)}`,
            en.value,
          );
      }
    }
  }
}

function known(t: Ty): boolean {
  return cat(t) !== "unknown";
}

function isBool(t: Ty): boolean {
  return t.k === "bool" || (t.k === "union" && t.members.every((m) => m.k === "bool"));
}

/** target := a ⊔ b (names of `a` first, then names only in `b`, which become `any`). */
function mergeInto(target: Env, a: Env, b: Env): void {
  const out: [string, Ty][] = [];
  for (const [n, x] of a) {
    const y = b.get(n);
    out.push([n, y === undefined ? ANY : x === y && x.k !== "any" ? x : join(x, y)]);
  }
  for (const n of b.keys()) if (!a.has(n)) out.push([n, ANY]);
  target.clear();
  for (const [k, v] of out) target.set(k, v);
}

function tyOfTypeExpr(t: TypeExpr): Ty {
  switch (t.k) {
    case "prim":
      return t.name === "str"
        ? STR
        : t.name === "int"
          ? INT
          : t.name === "float"
            ? FLOAT
            : t.name === "bool"
              ? BOOL
              : t.name === "dict"
                ? DICT
                : ANY;
    case "null":
      return NULL;
    case "lit":
      return { k: "enum", values: [t.value] };
    case "enum":
      return { k: "enum", values: t.values };
    case "list":
      return { k: "list", item: tyOfTypeExpr(t.item) };
    case "object": {
      const fields = new Map<string, Ty>();
      const optional = new Set<string>();
      for (const f of t.fields) {
        fields.set(f.name, tyOfTypeExpr(f.type));
        if (f.optional) optional.add(f.name);
      }
      return { k: "obj", fields, optional };
    }
    case "union":
      return t.members.map(tyOfTypeExpr).reduce((x, y) => join(x, y));
    default:
      return ANY;
  }
}

function collectAssigned(b: Stmt[], out: Set<string>): void {
  const visitE = (e: Expr): void => {
    if (e.k === "comp") for (const c of e.clauses) if (c.kind === "for") out.add(c.name);
  };
  for (const s of b) {
    switch (s.k) {
      case "assign":
        out.add(s.target.name);
        visitE(s.value);
        break;
      case "for":
        out.add(s.name);
        collectAssigned(s.body, out);
        break;
      case "while":
        collectAssigned(s.body, out);
        break;
      case "if":
        collectAssigned(s.then, out);
        if (s.else) collectAssigned(s.else, out);
        break;
      case "break":
      case "continue":
        break;
      default:
        visitE(s.expr);
    }
  }
}

/** Checks a parsed program; returns the errors in source order (empty = accepted). */
export function check(program: Program, options: CheckOptions = {}): CheckError[] {
  return new Checker(program, options).run();
}
