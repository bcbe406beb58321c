import type { JsonSchema } from "./tool.ts";

/**
 * A small JSON-Schema validator for tool arguments: type, properties, required,
 * additionalProperties, enum, const, items, min/max (length, items, value),
 * pattern, anyOf/oneOf/allOf, nullable types. Unknown keywords are ignored.
 * Returns human-readable problems (`/path: what is wrong`), empty when valid.
 */
export function validateJson(schema: JsonSchema, value: unknown, limit = 10): string[] {
  const problems: string[] = [];
  check(schema, value, "", problems, limit);
  return problems;
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function matchesType(expected: string, v: unknown): boolean {
  const t = typeOf(v);
  if (expected === "number") return t === "number" || t === "integer";
  return expected === t;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function check(schema: JsonSchema, v: unknown, path: string, out: string[], limit: number): void {
  if (out.length >= limit || typeof schema !== "object" || schema === null) return;
  const at = path || "/";
  const s = schema as Record<string, unknown>;

  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => matchesType(t, v))) {
      out.push(
        `${at}: expected ${types.join(" or ")}, got ${typeOf(v)}${v === undefined ? "" : ` ${show(v)}`}`,
      );
      return;
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, v))) {
    out.push(`${at}: must be one of ${s.enum.map(show).join(", ")}, got ${show(v)}`);
  }
  if ("const" in s && !deepEqual(s.const, v)) out.push(`${at}: must be ${show(s.const)}`);

  if (Array.isArray(s.allOf)) for (const sub of s.allOf) check(sub as JsonSchema, v, path, out, limit);
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const options = (s.anyOf ?? s.oneOf) as JsonSchema[];
    const ok = options.some((sub) => validateJson(sub, v, 1).length === 0);
    if (!ok) out.push(`${at}: does not match any of the allowed shapes`);
  }

  if (typeof v === "string") {
    if (typeof s.minLength === "number" && [...v].length < s.minLength)
      out.push(`${at}: must be at least ${s.minLength} characters`);
    if (typeof s.maxLength === "number" && [...v].length > s.maxLength)
      out.push(`${at}: must be at most ${s.maxLength} characters`);
    if (typeof s.pattern === "string") {
      try {
        if (!new RegExp(s.pattern, "u").test(v)) out.push(`${at}: must match /${s.pattern}/`);
      } catch {
        // an invalid pattern in a schema is the schema's problem, not the caller's
      }
    }
  }
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) out.push(`${at}: must be ≥ ${s.minimum}`);
    if (typeof s.maximum === "number" && v > s.maximum) out.push(`${at}: must be ≤ ${s.maximum}`);
    if (typeof s.exclusiveMinimum === "number" && v <= s.exclusiveMinimum)
      out.push(`${at}: must be > ${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === "number" && v >= s.exclusiveMaximum)
      out.push(`${at}: must be < ${s.exclusiveMaximum}`);
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems)
      out.push(`${at}: needs at least ${s.minItems} items`);
    if (typeof s.maxItems === "number" && v.length > s.maxItems)
      out.push(`${at}: allows at most ${s.maxItems} items`);
    if (s.items && typeof s.items === "object" && !Array.isArray(s.items)) {
      for (let i = 0; i < v.length && out.length < limit; i++)
        check(s.items as JsonSchema, v[i], `${path}/${i}`, out, limit);
    }
  }
  if (typeOf(v) === "object") {
    const obj = v as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, JsonSchema>;
    if (Array.isArray(s.required)) {
      for (const key of s.required as string[]) {
        if (obj[key] === undefined) out.push(`${path}/${key}: is required`);
      }
    }
    for (const [key, val] of Object.entries(obj)) {
      if (out.length >= limit) return;
      const sub = props[key];
      if (sub) check(sub, val, `${path}/${key}`, out, limit);
      else if (s.additionalProperties === false) {
        const known = Object.keys(props);
        out.push(`${path}/${key}: unknown property${known.length ? ` (allowed: ${known.join(", ")})` : ""}`);
      } else if (s.additionalProperties && typeof s.additionalProperties === "object") {
        check(s.additionalProperties as JsonSchema, val, `${path}/${key}`, out, limit);
      }
    }
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
