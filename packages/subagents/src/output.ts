import type { JsonSchema } from "@lash/core";
import { validateJson } from "@lash/core/internal";

/**
 * The `output` argument of `spawn_agent`, normalised to a JSON Schema.
 *
 * Accepted forms:
 * - a JSON Schema object (`{ "type": "object", "properties": … }`);
 * - a Lashlang Type literal value (`{ "$lash_type": <schema> }`);
 * - the reference's record shorthand: `{ field: "str" | "int" | "float" | "bool" | "record" | "dict" | "any" | "list[T]" }`,
 *   where a trailing `?` makes a field optional. Every other field is required and
 *   no extra fields are allowed.
 */
export type OutputSpec =
  | { readonly ok: true; readonly schema: JsonSchema }
  | { readonly ok: false; readonly error: string };

const SCALARS: { readonly [name: string]: JsonSchema } = {
  str: { type: "string" },
  int: { type: "integer" },
  float: { type: "number" },
  bool: { type: "boolean" },
  record: { type: "object" },
  dict: { type: "object" },
  any: {},
  null: { type: "null" },
};

/** The schema of one shorthand type (`str`, `list[int]`, `list[list[str]]` …); undefined when not shorthand. */
export function shorthandType(text: string): JsonSchema | undefined {
  const t = text.trim();
  const scalar = SCALARS[t];
  if (scalar) return scalar;
  const list = /^list\s*\[(.*)\]$/.exec(t);
  if (list) {
    const inner = list[1] ?? "";
    if (inner.trim() === "") return { type: "array" };
    const items = shorthandType(inner);
    return items ? { type: "array", items } : undefined;
  }
  return undefined;
}

function isRecord(v: unknown): v is { readonly [key: string]: unknown } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isShorthandRecord(v: { readonly [key: string]: unknown }): boolean {
  const entries = Object.entries(v);
  return (
    entries.length > 0 &&
    entries.every(([, t]) => typeof t === "string" && shorthandType(t.replace(/\?$/, "")) !== undefined)
  );
}

const JSON_TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"];

const SCHEMA_KEYWORDS = [
  "type",
  "properties",
  "items",
  "anyOf",
  "oneOf",
  "allOf",
  "enum",
  "const",
  "$ref",
  "required",
  "additionalProperties",
];

/** Normalise an `output` argument (see {@link OutputSpec}). */
export function outputSchema(output: unknown): OutputSpec {
  if (!isRecord(output))
    return {
      ok: false,
      error: 'malformed output: expected a JSON Schema object or a shorthand record like {"answer": "str"}',
    };
  if ("$lash_type" in output) {
    const inner = output.$lash_type;
    return isRecord(inner)
      ? { ok: true, schema: inner }
      : { ok: false, error: "malformed output: `$lash_type` must hold a JSON Schema object" };
  }
  const t = output.type;
  const looksLikeSchema =
    (typeof t === "string" && JSON_TYPES.includes(t)) || Array.isArray(t) || isRecord(output.properties);
  if (!looksLikeSchema && isShorthandRecord(output)) {
    const properties: { [key: string]: JsonSchema } = {};
    const required: string[] = [];
    for (const [field, t] of Object.entries(output)) {
      const text = String(t);
      const optional = text.endsWith("?");
      properties[field] = shorthandType(optional ? text.slice(0, -1) : text) ?? {};
      if (!optional) required.push(field);
    }
    return { ok: true, schema: { type: "object", properties, required, additionalProperties: false } };
  }
  if (Object.keys(output).some((k) => SCHEMA_KEYWORDS.includes(k))) return { ok: true, schema: output };
  return {
    ok: false,
    error:
      "malformed output: not a JSON Schema (no `type`, `properties`, `anyOf` …) and not a shorthand record " +
      '(field types must be "str", "int", "float", "bool", "record", "any" or "list[T]", optionally ending in "?")',
  };
}

/** True when the schema describes a JSON object (then `submit_result` takes it as its arguments directly). */
export function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === "object";
}

/** Find a JSON value in a prose answer: the whole text, a fenced block, or the outermost `{…}`/`[…]` span. */
export function extractJson(
  text: string,
): { readonly found: true; readonly value: unknown } | { readonly found: false } {
  const attempts: string[] = [text.trim()];
  const fence = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text);
  if (fence?.[1]) attempts.push(fence[1].trim());
  for (const [open, close] of [
    ["{", "}"],
    ["[", "]"],
  ] as const) {
    const a = text.indexOf(open);
    const b = text.lastIndexOf(close);
    if (a >= 0 && b > a) attempts.push(text.slice(a, b + 1));
  }
  for (const attempt of attempts) {
    try {
      return { found: true, value: JSON.parse(attempt) };
    } catch {
      // next candidate
    }
  }
  return { found: false };
}

/** Problems of `value` against `schema` (empty when it matches). */
export function checkOutput(schema: JsonSchema, value: unknown): readonly string[] {
  return validateJson(schema, value);
}
