/** The builtin functions of §1.11. Pure: they never touch the host. */
import {
  CONTAINER_BYTES,
  charge,
  chargeList,
  chargeString,
  ENTRY_BYTES,
  jsonBytes,
  RECORD_BYTES,
  SLOT_BYTES,
  STRING_BYTES,
} from "./memory.ts";
import { validateAgainst } from "./types.ts";
import {
  compareStrings,
  cpArray,
  cpIndexOf,
  cpLength,
  equals,
  fromJson,
  hasSurrogates,
  Image,
  isTypeValue,
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
  typeError,
  typeName,
  utf16Index,
  type Value,
  valueError,
} from "./values.ts";

export interface BuiltinSpec {
  min: number;
  /** -1 = variadic */
  max: number;
  fn: (args: Value[]) => Value;
  /** The same function for exactly one / two arguments, without an argument array (hot builtins). */
  f1?: (a: Value) => Value;
  f2?: (a: Value, b: Value) => Value;
}

export const RANGE_LIMIT = 1_000_000;

function arityText(min: number, max: number): string {
  if (max < 0) return `at least ${min}`;
  if (min === max) return String(min);
  if (max === min + 1) return `${min} or ${max}`;
  return `${min} to ${max}`;
}

export function arityError(name: string, spec: BuiltinSpec, got: number): string {
  return `\`${name}\` takes ${arityText(spec.min, spec.max)} arg(s), got ${got}`;
}

function isScalar(v: Value): v is null | boolean | number | string {
  return v === null || typeof v !== "object";
}

function text(name: string, v: Value): string {
  if (isScalar(v)) return stringify(v);
  throw typeError(`\`${name}\` expected text, got ${typeName(v)}`);
}

function int(name: string, what: string, v: Value): number {
  if (typeof v !== "number" || !Number.isInteger(v))
    throw typeError(`\`${name}\` ${what} must be an integer, got ${describe(v)}`);
  return v;
}

function describe(v: Value): string {
  return typeof v === "number" ? `number ${stringify(v)}` : typeName(v);
}

function lenOf(name: string, v: Value): number {
  if (typeof v === "string") return cpLength(v);
  if (v === null) return 0;
  if (v instanceof List || v instanceof Tuple) return v.items.length;
  if (v instanceof Rec) return v.map.size;
  // the reference's wording (one message for every other value, images included)
  if (name === "len")
    throw typeError("`len` requires a string, tuple, list, record, or null; use `.size` for images");
  if (v instanceof Image) throw typeError(`\`${name}\` is not defined for images; use \`.size\` for images`);
  throw typeError(`\`${name}\` expects a string, list, tuple or record, got ${typeName(v)}`);
}

/** Clamped [start, end) bounds from possibly-null, possibly-negative integers. */
function bounds(name: string, len: number, s: Value, e: Value): [number, number] {
  const norm = (v: Value, dflt: number): number => {
    if (v === null) return dflt;
    const n = int(name, "bounds", v);
    const x = n < 0 ? len + n : n;
    return Math.min(Math.max(x, 0), len);
  };
  return [norm(s, 0), norm(e, len)];
}

export function sliceValue(x: Value, s: Value, e: Value): Value {
  if (typeof x === "string") {
    if (!hasSurrogates(x)) {
      const [a, b] = bounds("slice", x.length, s, e);
      if (a >= b) return "";
      charge(2 * STRING_BYTES); // V8 slices share the parent string (short ones are small copies)
      return x.slice(a, b);
    }
    const cps = cpArray(x);
    const [a, b] = bounds("slice", cps.length, s, e);
    if (a >= b) return "";
    chargeString(2 * (b - a));
    return cps.slice(a, b).join("");
  }
  if (x instanceof List || x instanceof Tuple) {
    const [a, b] = bounds("slice", x.items.length, s, e);
    chargeList(a >= b ? 0 : b - a);
    const items = a >= b ? [] : x.items.slice(a, b);
    markChildrenShared(items);
    return x instanceof List ? new List(items) : new Tuple(items);
  }
  throw typeError(`\`slice\` expects a string, list or tuple, got ${typeName(x)}`);
}

export type Part = string | number;
const templateCache = new Map<string, Part[] | LangError>();

/** Parses a template into literal parts and argument indexes (cached; errors cached too). */
function parseTemplate(tpl: string, nargs: number): Part[] {
  let parts = templateCache.get(tpl);
  if (parts === undefined) {
    try {
      parts = parseTemplateUncached(tpl);
    } catch (e) {
      parts = e as LangError;
    }
    if (templateCache.size > 512) templateCache.clear();
    templateCache.set(tpl, parts);
  }
  if (parts instanceof LangError) throw valueError(parts.message);
  void nargs;
  return parts;
}

function parseTemplateUncached(tpl: string): Part[] {
  const out: Part[] = [];
  let lit = "";
  let seq = 0;
  let usedSeq = false;
  let usedIdx = false;
  const n = tpl.length;
  let i = 0;
  while (i < n) {
    const c = tpl.charCodeAt(i);
    if (c === 123) {
      if (tpl.charCodeAt(i + 1) === 123) {
        lit += "{";
        i += 2;
        continue;
      }
      const close = tpl.indexOf("}", i + 1);
      if (close < 0) throw valueError("unmatched `{` in format string");
      const inner = tpl.slice(i + 1, close);
      let idx: number;
      if (inner === "") {
        if (usedIdx) throw valueError("can't mix `{}` and indexed format placeholders");
        usedSeq = true;
        idx = seq++;
      } else if (/^\d+$/.test(inner)) {
        if (usedSeq) throw valueError("can't mix `{}` and indexed format placeholders");
        usedIdx = true;
        idx = Number(inner);
      } else throw valueError("unmatched `{` in format string");
      if (lit !== "") out.push(lit);
      lit = "";
      out.push(idx);
      i = close + 1;
      continue;
    }
    if (c === 125) {
      if (tpl.charCodeAt(i + 1) === 125) {
        lit += "}";
        i += 2;
        continue;
      }
      throw valueError("unmatched `}` in format string");
    }
    let j = i + 1;
    while (j < n) {
      const d = tpl.charCodeAt(j);
      if (d === 123 || d === 125) break;
      j++;
    }
    lit += tpl.slice(i, j);
    i = j;
  }
  if (lit !== "") out.push(lit);
  return out;
}

/**
 * The parts of a literal template whose placeholders are `{}` used once each, in order, by exactly
 * `nargs` arguments (the evaluator then formats without an argument array: the arguments are
 * evaluated in the same order either way); null for any other template, which takes `formatString`.
 */
export function sequentialTemplate(tpl: string, nargs: number): Part[] | null {
  let parts: Part[];
  try {
    parts = parseTemplateUncached(tpl);
  } catch {
    return null;
  }
  let next = 0;
  for (const p of parts) if (typeof p === "number" && p !== next++) return null;
  return next === nargs ? parts : null;
}

export function formatString(tpl: Value, args: Value[]): string {
  if (typeof tpl !== "string") throw typeError(`\`format\` requires a string template, got ${typeName(tpl)}`);
  const parts = parseTemplate(tpl, args.length);
  let out = "";
  let used = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (typeof p === "string") out += p;
    else {
      if (p >= args.length) {
        const seqStyle = !parts.some(
          (x) => typeof x === "number" && x !== parts.filter((y) => typeof y === "number").indexOf(x),
        );
        throw valueError(
          seqStyle && tpl.includes("{}")
            ? `format string has more \`{}\` placeholders than arguments (${args.length})`
            : `format placeholder \`{${p}}\` has no matching argument`,
        );
      }
      const a = args[p]!;
      out += typeof a === "string" ? a : stringify(a);
      if (p < 31) used |= 1 << p;
    }
  }
  for (let k = 0; k < args.length; k++) {
    const isUsed = k < 31 ? (used & (1 << k)) !== 0 : parts.includes(k);
    if (!isUsed) throw valueError(`format argument \`${k}\` is unused`);
  }
  // the result is a rope of its parts
  charge(STRING_BYTES * parts.length + out.length);
  return out;
}

export function formatStringOld(tpl: Value, args: Value[]): string {
  if (typeof tpl !== "string") throw typeError(`\`format\` requires a string template, got ${typeName(tpl)}`);
  let out = "";
  let seq = 0;
  let usedSeq = false;
  let usedIdx = false;
  const used = new Array<boolean>(args.length).fill(false);
  const n = tpl.length;
  let i = 0;
  while (i < n) {
    const c = tpl.charCodeAt(i);
    if (c === 123 /* { */) {
      if (tpl.charCodeAt(i + 1) === 123) {
        out += "{";
        i += 2;
        continue;
      }
      const close = tpl.indexOf("}", i + 1);
      if (close < 0) throw valueError("unmatched `{` in format string");
      const inner = tpl.slice(i + 1, close);
      let idx: number;
      if (inner === "") {
        if (usedIdx) throw valueError("can't mix `{}` and indexed format placeholders");
        usedSeq = true;
        idx = seq++;
        if (idx >= args.length)
          throw valueError(`format string has more \`{}\` placeholders than arguments (${args.length})`);
      } else if (/^\d+$/.test(inner)) {
        if (usedSeq) throw valueError("can't mix `{}` and indexed format placeholders");
        usedIdx = true;
        idx = Number(inner);
        if (idx >= args.length)
          throw valueError(`format placeholder \`{${inner}}\` has no matching argument`);
      } else {
        throw valueError("unmatched `{` in format string");
      }
      used[idx] = true;
      out += stringify(args[idx]!);
      i = close + 1;
      continue;
    }
    if (c === 125 /* } */) {
      if (tpl.charCodeAt(i + 1) === 125) {
        out += "}";
        i += 2;
        continue;
      }
      throw valueError("unmatched `}` in format string");
    }
    let j = i + 1;
    while (j < n) {
      const d = tpl.charCodeAt(j);
      if (d === 123 || d === 125) break;
      j++;
    }
    out += tpl.slice(i, j);
    i = j;
  }
  const unused = used.indexOf(false);
  if (unused >= 0) throw valueError(`format argument \`${unused}\` is unused`);
  return out;
}

function rangeOf(args: Value[]): List {
  let start = 0;
  let end: number;
  let step = 1;
  const r = (v: Value) => int("range", "arguments", v);
  if (args.length === 1) end = r(args[0]!);
  else {
    start = r(args[0]!);
    end = r(args[1]!);
    if (args.length === 3) step = r(args[2]!);
  }
  if (step === 0) throw valueError("`range` step must not be zero");
  const count =
    step > 0
      ? end > start
        ? Math.ceil((end - start) / step)
        : 0
      : start > end
        ? Math.ceil((start - end) / -step)
        : 0;
  if (count > RANGE_LIMIT) throw valueError(`\`range\` would produce ${count} items (limit ${RANGE_LIMIT})`);
  chargeList(count);
  const items = new Array<Value>(count);
  for (let k = 0, v = start; k < count; k++, v += step) items[k] = v;
  return new List(items);
}

function intDiv(name: string, a: Value, b: Value, ceil: boolean): number {
  const x = int(name, "arguments", a);
  const y = int(name, "arguments", b);
  if (y === 0) throw valueError(`\`${name}\` division by zero`);
  const q = x / y;
  return (ceil ? Math.ceil(q) : Math.floor(q)) + 0;
}

function findIn(args: Value[]): Value {
  const s = text("find", args[0]!);
  const needle = text("find", args[1]!);
  let start = 0;
  if (args.length === 3 && args[2] !== null) {
    const st = args[2]!;
    if (typeof st !== "number" || !Number.isInteger(st) || st < 0)
      throw typeError("`find` start must be a non-negative integer");
    start = st;
  }
  const len = cpLength(s);
  if (start > len) return null;
  const from = hasSurrogates(s) ? utf16Index(s, start) : start;
  const at = s.indexOf(needle, from);
  if (at < 0) return null;
  return cpIndexOf(s, at);
}

/** The keys of a `grep_text` hit, in order (shared by every hit record). */
const HIT_KEYS: readonly string[] = ["line", "text", "match", "start", "end"];

function grepText(args: Value[]): List {
  const s = text("grep_text", args[0]!);
  const needle = text("grep_text", args[1]!);
  if (needle === "") throw valueError("`grep_text` needle must not be empty");
  const out: Value[] = [];
  let lineNo = 0;
  let pos = 0;
  const n = s.length;
  const nlen = cpLength(needle);
  // code-point columns differ from UTF-16 ones only when the text has surrogate pairs
  const wide = hasSurrogates(s);
  while (pos <= n) {
    let nl = s.indexOf("\n", pos);
    if (nl < 0) nl = n;
    if (pos === n && nl === n && lineNo > 0) break;
    lineNo++;
    let line = s.slice(pos, nl);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const at = line.indexOf(needle);
    if (at >= 0) {
      const st = wide ? cpIndexOf(line, at) : at;
      // the hit record (5 entries) and its line
      charge(SLOT_BYTES + RECORD_BYTES + 5 * ENTRY_BYTES + STRING_BYTES);
      out.push(Rec.shaped(HIT_KEYS, [lineNo, line, needle, st, st + nlen]));
    }
    pos = nl + 1;
  }
  charge(CONTAINER_BYTES);
  return new List(out);
}

function split(s: string, sep: string): List {
  const items = sep === "" ? ["", ...cpArray(s), ""] : s.split(sep);
  // each piece: a slot and a string header (V8 slices long pieces out of `s`; short ones are copies)
  charge(CONTAINER_BYTES + (SLOT_BYTES + STRING_BYTES) * items.length + (sep === "" ? 0 : s.length));
  return new List(items);
}

export function validateValue(v: Value, t: Value): Value {
  if (!isTypeValue(t))
    throw typeError(
      "`validate` requires a Type literal as the second argument",
      "pass `Type { ... }` or a variable that holds a Type literal",
    );
  const schema = t.map.get(TYPE_KEY)!;
  const err = validateAgainst(v, toJson(schema));
  if (err) throw valueError(`validation failed: ${err}`);
  return v;
}

export function jsonParse(v: Value): Value {
  if (typeof v !== "string") throw typeError(`\`json_parse\` expects a string, got ${typeName(v)}`);
  let j: unknown;
  try {
    j = JSON.parse(v);
  } catch (e) {
    throw valueError(`invalid json: ${(e as Error).message}`);
  }
  charge(jsonBytes(j));
  return fromJson(j);
}

function containsValue(h: Value, n: Value): boolean {
  if (h === null) return false;
  if (typeof h === "string") return h.includes(text("contains", n));
  if (h instanceof List || h instanceof Tuple) {
    for (const x of h.items) if (equals(x, n)) return true;
    return false;
  }
  if (h instanceof Rec) return h.map.has(text("contains", n));
  if (isScalar(h)) return stringify(h).includes(text("contains", n));
  throw typeError(`\`contains\` expects a string, list, tuple or record, got ${typeName(h)}`);
}

function keysOf(name: string, v: Value, values: boolean): List {
  if (v === null) return new List([]);
  if (v instanceof Rec) {
    chargeList(v.map.size);
    const items = values ? [...v.map.values()] : [...v.map.keys()];
    if (values) markChildrenShared(items);
    return new List(items);
  }
  throw typeError(`\`${name}\` expects a record, got ${typeName(v)}`);
}

function toInt(v: Value): number {
  const n = toNumber(v);
  if (!Number.isFinite(n)) throw valueError(`\`to_int\` can't convert ${stringify(n)} to an integer`);
  return Math.trunc(n) + 0;
}

function joinList(l: Value, sepV: Value): string {
  if (!(l instanceof List || l instanceof Tuple))
    throw typeError(`\`join\` expects a list, got ${typeName(l)}`);
  const sep = text("join", sepV);
  const items = l.items;
  let allStrings = true;
  for (let i = 0; i < items.length; i++)
    if (typeof items[i] !== "string") {
      allStrings = false;
      break;
    }
  const out = allStrings ? items.join(sep) : items.map((x) => text("join", x)).join(sep);
  chargeString(out.length);
  return out;
}

function pushValue(l: Value, v: Value): List {
  if (!(l instanceof List))
    throw typeError(`\`push\` requires a list as the first argument, got ${typeName(l)}`);
  chargeList(l.items.length + 1);
  const items = l.items.slice();
  markChildrenShared(items);
  items.push(share(v));
  return new List(items);
}

const len1 = (a: Value): Value => lenOf("len", a);
const toString1 = (a: Value): Value => {
  const s = stringify(a);
  chargeString(s.length);
  return s;
};
function trimText(v: Value): string {
  const s = text("trim", v).trim();
  charge(2 * STRING_BYTES); // a slice of the argument
  return s;
}

const split2 = (a: Value, b: Value): Value => split(text("split", a), text("split", b));
const contains2 = (a: Value, b: Value): Value => containsValue(a, b);

export const BUILTINS: { [name: string]: BuiltinSpec } = {
  len: { min: 1, max: 1, fn: (a) => len1(a[0]!), f1: len1 },
  empty: { min: 1, max: 1, fn: (a) => lenOf("empty", a[0]!) === 0 },
  keys: { min: 1, max: 1, fn: (a) => keysOf("keys", a[0]!, false) },
  values: { min: 1, max: 1, fn: (a) => keysOf("values", a[0]!, true) },
  trim: { min: 1, max: 1, fn: (a) => trimText(a[0]!) },
  to_string: { min: 1, max: 1, fn: (a) => toString1(a[0]!), f1: toString1 },
  to_int: { min: 1, max: 1, fn: (a) => toInt(a[0]!) },
  to_float: { min: 1, max: 1, fn: (a) => toNumber(a[0]!) },
  json_parse: { min: 1, max: 1, fn: (a) => jsonParse(a[0]!) },
  contains: { min: 2, max: 2, fn: (a) => contains2(a[0]!, a[1]!), f2: contains2 },
  starts_with: {
    min: 2,
    max: 2,
    fn: (a) => text("starts_with", a[0]!).startsWith(text("starts_with", a[1]!)),
  },
  ends_with: { min: 2, max: 2, fn: (a) => text("ends_with", a[0]!).endsWith(text("ends_with", a[1]!)) },
  split: { min: 2, max: 2, fn: (a) => split2(a[0]!, a[1]!), f2: split2 },
  join: { min: 2, max: 2, fn: (a) => joinList(a[0]!, a[1]!), f2: joinList },
  find: { min: 2, max: 3, fn: findIn },
  grep_text: { min: 2, max: 2, fn: grepText },
  validate: { min: 2, max: 2, fn: (a) => validateValue(a[0]!, a[1]!) },
  ceil_div: { min: 2, max: 2, fn: (a) => intDiv("ceil_div", a[0]!, a[1]!, true) },
  floor_div: { min: 2, max: 2, fn: (a) => intDiv("floor_div", a[0]!, a[1]!, false) },
  push: { min: 2, max: 2, fn: (a) => pushValue(a[0]!, a[1]!), f2: pushValue },
  slice: { min: 3, max: 3, fn: (a) => sliceValue(a[0]!, a[1]!, a[2]!) },
  format: { min: 1, max: -1, fn: (a) => formatString(a[0]!, a.slice(1)) },
  range: { min: 1, max: 3, fn: rangeOf },
};

export const BUILTIN_NAMES: readonly string[] = Object.keys(BUILTINS);

export function unknownBuiltin(name: string): LangError {
  return new LangError("UnknownBuiltin", `unknown builtin \`${name}\``);
}

export { compareStrings };
