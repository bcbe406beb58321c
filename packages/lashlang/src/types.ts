/** `Type { ... }` literals → JSON Schema (§1.10) and the `validate` checker. */
import type { TypeExpr } from "./ast.ts";
import { type Json, List, Rec, Tuple, typeName, type Value } from "./values.ts";

export type RefResolver = (path: string[], start: number, end: number) => Json;

export function typeToSchema(t: TypeExpr, resolve: RefResolver): Json {
  switch (t.k) {
    case "prim":
      switch (t.name) {
        case "str":
          return { type: "string" };
        case "int":
          return { type: "integer" };
        case "float":
          return { type: "number" };
        case "bool":
          return { type: "boolean" };
        case "dict":
          return { type: "object" };
        case "any":
          return {};
      }
      return {};
    case "null":
      return { type: "null" };
    case "lit":
      return { type: "string", enum: [t.value] };
    case "enum":
      return { type: "string", enum: [...t.values] };
    case "list":
      return { type: "array", items: typeToSchema(t.item, resolve) };
    case "object": {
      const properties: { [k: string]: Json } = {};
      const required: Json[] = [];
      for (const f of t.fields) {
        properties[f.name] = typeToSchema(f.type, resolve);
        if (!f.optional) required.push(f.name);
      }
      return { type: "object", properties, required, additionalProperties: false };
    }
    case "union":
      return { anyOf: t.members.map((m) => typeToSchema(m, resolve)) };
    case "ref":
      return resolve(t.path, t.start, t.end);
    case "process":
    case "trigger":
      return {};
  }
}

function schemaTypeMatches(ty: string, v: Value): boolean {
  switch (ty) {
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    case "null":
      return v === null;
    case "array":
      return v instanceof List || v instanceof Tuple;
    case "object":
      return v instanceof Rec;
  }
  return true;
}

function isObj(j: Json | undefined): j is { [k: string]: Json } {
  return typeof j === "object" && j !== null && !Array.isArray(j);
}

function describeSchema(s: Json): string {
  if (!isObj(s)) return "any";
  if (Array.isArray(s.enum))
    return `one of [${s.enum.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(", ")}]`;
  if (typeof s.type === "string") return s.type;
  if (Array.isArray(s.type)) return s.type.join(" | ");
  const alts = (s.anyOf ?? s.oneOf) as Json;
  if (Array.isArray(alts)) return alts.map(describeSchema).join(" | ");
  return "any";
}

function pathKey(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Returns an error message ("$.a[2].b: expected integer, got string") or null when `v` matches. */
export function validateAgainst(v: Value, schema: Json, path = "$"): string | null {
  if (!isObj(schema)) return null;
  const alts = (schema.anyOf ?? schema.oneOf) as Json;
  if (Array.isArray(alts)) {
    for (const a of alts) if (validateAgainst(v, a, path) === null) return null;
    if (alts.length === 1) return validateAgainst(v, alts[0]!, path);
    return `${path}: expected ${describeSchema(schema)}, got ${typeName(v)}`;
  }
  const ty = schema.type;
  if (typeof ty === "string" && !schemaTypeMatches(ty, v))
    return `${path}: expected ${ty}, got ${typeName(v)}`;
  if (Array.isArray(ty) && !ty.some((t) => typeof t === "string" && schemaTypeMatches(t, v)))
    return `${path}: expected ${ty.join(" | ")}, got ${typeName(v)}`;
  if (Array.isArray(schema.enum)) {
    const ok = schema.enum.some((e) => e === v);
    if (!ok)
      return `${path}: expected ${describeSchema({ enum: schema.enum })}, got ${typeof v === "string" ? v : typeName(v)}`;
  }
  if ("const" in schema && schema.const !== v) return `${path}: expected ${JSON.stringify(schema.const)}`;
  if (v instanceof Rec) {
    const props = schema.properties;
    if (Array.isArray(schema.required)) {
      for (const r of schema.required) {
        if (typeof r === "string" && !v.map.has(r)) return `${path}: missing required field \`${r}\``;
      }
    }
    if (isObj(props)) {
      for (const k of Object.keys(props)) {
        const fv = v.map.get(k);
        if (fv === undefined) continue;
        const e = validateAgainst(fv, props[k]!, pathKey(path, k));
        if (e) return e;
      }
    }
  } else if (v instanceof List || v instanceof Tuple) {
    const items = schema.items;
    if (isObj(items)) {
      for (let i = 0; i < v.items.length; i++) {
        const e = validateAgainst(v.items[i]!, items, `${path}[${i}]`);
        if (e) return e;
      }
    }
  }
  return null;
}
