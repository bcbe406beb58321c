/**
 * REPL state snapshots (§1.14): `{"globals": {name: value-json}}` with markers for tuples
 * (`__lashlang_snapshot_tuple__`), projected values (`__lashlang_snapshot_projected__`) and records whose
 * key order JSON objects cannot keep (`__lashlang_snapshot_entries__`, integer-like keys).
 */
import { fromJson, type Json, List, Rec, Tuple, toJson, type Value } from "./values.ts";

export const TUPLE_MARKER = "__lashlang_snapshot_tuple__";
export const PROJECTED_MARKER = "__lashlang_snapshot_projected__";
export const ENTRIES_MARKER = "__lashlang_snapshot_entries__";

export interface ProjectedMarker {
  name: string;
  type_name: string;
  projection_ref?: Json;
}

const INT_KEY = /^(?:0|[1-9]\d*)$/;

export function encodeValue(v: Value, projectedOf?: (v: Value) => ProjectedMarker | undefined): Json {
  if (projectedOf && v !== null && typeof v === "object") {
    const m = projectedOf(v);
    if (m) {
      const out: { [k: string]: Json } = { [PROJECTED_MARKER]: true, name: m.name, type_name: m.type_name };
      if (m.projection_ref !== undefined) out.projection_ref = m.projection_ref;
      return out;
    }
  }
  if (v instanceof Tuple)
    return { [TUPLE_MARKER]: true, items: v.items.map((x) => encodeValue(x, projectedOf)) };
  if (v instanceof List) return v.items.map((x) => encodeValue(x, projectedOf));
  if (v instanceof Rec) {
    const keys = [...v.map.keys()];
    if (keys.some((k) => INT_KEY.test(k)))
      return { [ENTRIES_MARKER]: keys.map((k) => [k, encodeValue(v.map.get(k)!, projectedOf)]) };
    const out: { [k: string]: Json } = {};
    for (const k of keys) out[k] = encodeValue(v.map.get(k)!, projectedOf);
    return out;
  }
  return toJson(v);
}

export type Decoded = { value: Value } | { projected: ProjectedMarker };

export function decodeValue(j: Json): Value {
  if (Array.isArray(j)) return new List(j.map(decodeValue));
  if (j !== null && typeof j === "object") {
    if (j[TUPLE_MARKER] === true && Array.isArray(j.items)) return new Tuple(j.items.map(decodeValue));
    const entries = j[ENTRIES_MARKER];
    if (Array.isArray(entries) && Object.keys(j).length === 1) {
      const m = new Map<string, Value>();
      for (const e of entries)
        if (Array.isArray(e) && typeof e[0] === "string") m.set(e[0], decodeValue(e[1] ?? null));
      return new Rec(m);
    }
    if (j.type === "image" || j.type === "resource") {
      const plain = fromJson(j);
      if (!(plain instanceof Rec)) return plain;
    }
    const m = new Map<string, Value>();
    for (const k of Object.keys(j)) m.set(k, decodeValue(j[k]!));
    return new Rec(m);
  }
  return fromJson(j);
}

export function isProjectedMarker(j: Json): j is { [k: string]: Json } {
  return j !== null && typeof j === "object" && !Array.isArray(j) && j[PROJECTED_MARKER] === true;
}

/** Stable JSON text (object keys in insertion order, no whitespace). */
export function jsonString(j: Json): string {
  return JSON.stringify(j);
}
