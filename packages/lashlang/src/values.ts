/**
 * Runtime values (§1.5): null, bool, number (f64), string (code-point semantics), List, Tuple,
 * Rec (insertion-ordered), Image, Resource. Containers carry a `shared` flag used for copy-on-write:
 * a container reachable from more than one place is copied before it is mutated in place.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export class List {
  items: Value[];
  shared: boolean;
  constructor(items: Value[], shared = false) {
    this.items = items;
    this.shared = shared;
  }
}

export class Tuple {
  readonly items: Value[];
  constructor(items: Value[]) {
    this.items = items;
  }
}

export class Rec {
  /**
   * The entries, built on first use when the record was made in shape form (`Rec.shaped`: a
   * record literal's key list, shared by every record that literal builds, and its values), which
   * costs two small arrays instead of a hash table per record. Reading `map` turns a shaped record
   * into a map-backed one for good (`keys`/`vals` become null); a write always goes through `map`.
   */
  private m: Map<string, Value> | undefined;
  keys: readonly string[] | null;
  vals: Value[] | null;
  shared: boolean;
  constructor(map: Map<string, Value> | null = new Map(), shared = false) {
    this.m = map === null ? undefined : map;
    this.keys = null;
    this.vals = null;
    this.shared = shared;
  }
  /** A record of distinct `keys` (never mutated afterwards) and their `vals`. */
  static shaped(keys: readonly string[], vals: Value[]): Rec {
    const r = new Rec(null);
    r.keys = keys;
    r.vals = vals;
    return r;
  }
  get map(): Map<string, Value> {
    const m = this.m;
    return m !== undefined ? m : this.materialize();
  }
  set map(m: Map<string, Value>) {
    this.m = m;
    this.keys = null;
    this.vals = null;
  }
  private materialize(): Map<string, Value> {
    const keys = this.keys!;
    const vals = this.vals!;
    const m = new Map<string, Value>();
    for (let i = 0; i < keys.length; i++) m.set(keys[i]!, vals[i]!);
    this.m = m;
    this.keys = null;
    this.vals = null;
    return m;
  }
  get(key: string): Value | undefined {
    const keys = this.keys;
    if (keys !== null) {
      const i = keys.indexOf(key);
      return i < 0 ? undefined : this.vals![i];
    }
    return this.m!.get(key);
  }
  get size(): number {
    return this.keys !== null ? this.keys.length : this.m!.size;
  }
}

export class Image {
  readonly id: string;
  readonly mime: string;
  readonly label: string;
  readonly size: number;
  readonly width: number | null;
  readonly height: number | null;
  constructor(
    id: string,
    mime: string,
    label: string,
    size: number,
    width: number | null,
    height: number | null,
  ) {
    this.id = id;
    this.mime = mime;
    this.label = label;
    this.size = size;
    this.width = width;
    this.height = height;
  }
}

export class Resource {
  readonly resourceType: string;
  readonly alias: string;
  constructor(resourceType: string, alias: string) {
    this.resourceType = resourceType;
    this.alias = alias;
  }
}

export type Value = null | boolean | number | string | List | Tuple | Rec | Image | Resource;

export type ErrorKind =
  | "TypeError"
  | "ValueError"
  | "UndefinedVariable"
  | "UnknownBuiltin"
  | "NonListIteration"
  | "Unwrap"
  | "Host"
  | "Budget"
  | "Memory";

/** A language-level runtime error (never a JS bug). */
export class LangError extends Error {
  readonly kind: ErrorKind;
  start: number | undefined;
  end: number | undefined;
  hint: string | undefined;
  constructor(kind: ErrorKind, message: string, hint?: string) {
    super(message);
    this.kind = kind;
    this.hint = hint;
    this.start = undefined;
    this.end = undefined;
  }
}

export const typeError = (m: string, hint?: string): LangError => new LangError("TypeError", m, hint);
export const valueError = (m: string, hint?: string): LangError => new LangError("ValueError", m, hint);

export function typeName(v: Value): string {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
      return "number";
    case "string":
      return "string";
  }
  if (v instanceof List) return "list";
  if (v instanceof Rec) return "record";
  if (v instanceof Tuple) return "tuple";
  if (v instanceof Image) return "image";
  return "resource";
}

export function truthy(v: Value): boolean {
  if (v === null) return false;
  switch (typeof v) {
    case "boolean":
      return v;
    case "number":
      return v !== 0 && !Number.isNaN(v);
    case "string":
      return v.length > 0;
  }
  if (v instanceof Tuple) return v.items.length > 0;
  return true;
}

export function equals(a: Value, b: Value): boolean {
  if (a === b) return typeof a !== "number" || !Number.isNaN(a);
  if (a === null || b === null) return false;
  const ta = typeof a;
  if (ta !== "object" || typeof b !== "object") return false;
  if (a instanceof List) {
    if (!(b instanceof List)) return false;
    return seqEquals(a.items, b.items);
  }
  if (a instanceof Tuple) {
    if (!(b instanceof Tuple)) return false;
    return seqEquals(a.items, b.items);
  }
  if (a instanceof Rec) {
    if (!(b instanceof Rec) || a.map.size !== b.map.size) return false;
    for (const [k, v] of a.map) {
      const w = b.map.get(k);
      if (w === undefined || !equals(v, w)) return false;
    }
    return true;
  }
  if (a instanceof Image) {
    return (
      b instanceof Image &&
      a.id === b.id &&
      a.mime === b.mime &&
      a.label === b.label &&
      a.size === b.size &&
      a.width === b.width &&
      a.height === b.height
    );
  }
  if (a instanceof Resource)
    return b instanceof Resource && a.resourceType === b.resourceType && a.alias === b.alias;
  return false;
}

function seqEquals(a: Value[], b: Value[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!equals(a[i]!, b[i]!)) return false;
  return true;
}

/** Numeric coercion (§1.5). */
export function toNumber(v: Value): number {
  if (typeof v === "number") return v;
  if (v === null) return 0;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string") {
    const s = v.trim();
    if (s === "") return 0;
    const n = parseFloatStrict(s);
    if (n === undefined) throw typeError(`expected a number, got string \`${v}\``);
    return n;
  }
  throw typeError(`expected a number, got ${typeName(v)}`);
}

const FLOAT_RE = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)$/;
function parseFloatStrict(s: string): number | undefined {
  if (FLOAT_RE.test(s)) return Number(s);
  const l = s.toLowerCase().replace(/^[+]/, "");
  if (l === "inf" || l === "infinity") return Number.POSITIVE_INFINITY;
  if (l === "-inf" || l === "-infinity") return Number.NEGATIVE_INFINITY;
  if (l === "nan" || l === "-nan") return Number.NaN;
  return undefined;
}

/** Rust `{}` formatting of f64: integral values without `.0`, never exponent notation. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n)) {
    if (Math.abs(n) < 1e21) return Object.is(n, -0) ? "-0" : String(n);
    return BigInt(n).toString();
  }
  if (Number.isNaN(n)) return "NaN";
  if (n === Number.POSITIVE_INFINITY) return "inf";
  if (n === Number.NEGATIVE_INFINITY) return "-inf";
  const s = String(n);
  return s.indexOf("e") < 0 ? s : expandExponent(s);
}

function expandExponent(s: string): string {
  const neg = s.startsWith("-");
  const body = neg ? s.slice(1) : s;
  const [mant, expS] = body.split("e") as [string, string];
  const exp = Number(expS);
  const [ip, fp = ""] = mant.split(".") as [string, string?];
  const digits = ip + fp;
  const point = ip.length + exp;
  let out: string;
  if (point <= 0) out = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + "0".repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return neg ? `-${out}` : out;
}

/** `to_string` / `format` / string `+` rendering. */
export function stringify(v: Value): string {
  if (typeof v === "string") return v;
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return formatNumber(v);
  if (v instanceof Tuple) {
    if (v.items.length === 1) return `(${tupleItem(v.items[0]!)},)`;
    return `(${v.items.map(tupleItem).join(", ")})`;
  }
  return jsonText(v, true);
}

function tupleItem(v: Value): string {
  return typeof v === "string" ? JSON.stringify(v) : stringify(v);
}

/** Compact JSON text of a value; `sortKeys` sorts record keys (to_string), else insertion order (print). */
export function jsonText(v: Value, sortKeys: boolean): string {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return Number.isFinite(v) ? formatNumber(v) : "null";
    case "string":
      return JSON.stringify(v);
  }
  if (v instanceof List || v instanceof Tuple) {
    let out = "[";
    const items = v.items;
    for (let i = 0; i < items.length; i++) {
      if (i > 0) out += ",";
      out += jsonText(items[i]!, sortKeys);
    }
    return `${out}]`;
  }
  if (v instanceof Rec) {
    const keys = [...v.map.keys()];
    if (sortKeys) keys.sort(compareStrings);
    let out = "{";
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) out += ",";
      const k = keys[i]!;
      out += `${JSON.stringify(k)}:${jsonText(v.map.get(k)!, sortKeys)}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(toJson(v, sortKeys));
}

/** Code-point order comparison (UTF-16 order fixed up for surrogates). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

/** Value → plain JSON (tuples/lists → arrays, records → objects, images → image descriptors). */
export function toJson(v: Value, sortKeys = false): Json {
  if (v === null || typeof v !== "object") {
    if (typeof v === "number" && !Number.isFinite(v)) return null;
    return v;
  }
  if (v instanceof List || v instanceof Tuple) return v.items.map((x) => toJson(x, sortKeys));
  if (v instanceof Rec) {
    const out: { [k: string]: Json } = {};
    const keys = [...v.map.keys()];
    if (sortKeys) keys.sort(compareStrings);
    for (const k of keys) out[k] = toJson(v.map.get(k)!, sortKeys);
    return out;
  }
  if (v instanceof Image) {
    const out: { [k: string]: Json } = {
      type: "image",
      id: v.id,
      mime: v.mime,
      label: v.label,
      size: v.size,
    };
    if (v.width !== null) out.width = v.width;
    if (v.height !== null) out.height = v.height;
    return out;
  }
  return { type: "resource", resource_type: v.resourceType, alias: v.alias };
}

/** Plain JSON → value; objects shaped like image/resource descriptors decode to those values. */
export function fromJson(j: unknown): Value {
  if (j === null || j === undefined) return null;
  switch (typeof j) {
    case "boolean":
    case "number":
    case "string":
      return j;
  }
  if (Array.isArray(j)) return new List(j.map(fromJson));
  if (typeof j === "object") {
    const o = j as { [k: string]: unknown };
    if (o.type === "image" && typeof o.id === "string" && typeof o.mime === "string") {
      const num = (x: unknown): number | null => (typeof x === "number" ? x : null);
      return new Image(
        o.id,
        o.mime,
        typeof o.label === "string" ? o.label : "",
        typeof o.size === "number" ? o.size : 0,
        num(o.width),
        num(o.height),
      );
    }
    if (o.type === "resource" && typeof o.resource_type === "string" && typeof o.alias === "string") {
      const keys = Object.keys(o);
      if (keys.length === 3) return new Resource(o.resource_type, o.alias);
    }
    const m = new Map<string, Value>();
    for (const k of Object.keys(o)) m.set(k, fromJson(o[k]));
    return new Rec(m);
  }
  return null;
}

/** Marks a container as reachable from more than one place (copy before mutating). */
export function share(v: Value): Value {
  if (v !== null && typeof v === "object") {
    if (v instanceof List || v instanceof Rec) v.shared = true;
  }
  return v;
}

export function markChildrenShared(items: Iterable<Value>): void {
  for (const v of items) {
    if (v !== null && typeof v === "object" && (v instanceof List || v instanceof Rec)) v.shared = true;
  }
}

// ---------- code-point string helpers ----------
const SURROGATE = /[\uD800-\uDFFF]/;
export function hasSurrogates(s: string): boolean {
  return SURROGATE.test(s);
}
export function cpLength(s: string): number {
  if (!hasSurrogates(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n;
}
/** Code points of s as an array (only used on the slow path). */
export function cpArray(s: string): string[] {
  return Array.from(s);
}
/** Converts a UTF-16 index to a code-point index. */
export function cpIndexOf(s: string, utf16Index: number): number {
  if (!hasSurrogates(s)) return utf16Index;
  return cpLength(s.slice(0, utf16Index));
}
/** Converts a code-point index (clamped) to a UTF-16 index. */
export function utf16Index(s: string, cpIndex: number): number {
  let i = 0;
  let n = 0;
  while (i < s.length && n < cpIndex) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
    n++;
  }
  return i;
}

export function recordOf(entries: [string, Value][]): Rec {
  return new Rec(new Map(entries));
}

export const TYPE_KEY = "$lash_type";
export function isTypeValue(v: Value): v is Rec {
  return v instanceof Rec && v.map.size === 1 && v.map.has(TYPE_KEY);
}
