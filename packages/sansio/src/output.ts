import * as Schema from "effect/Schema";

/**
 * Structured output: a model request may ask for a reply that is one JSON value
 * matching a schema (`LlmRequest.output`). The schema is a JSON Schema or the
 * record shorthand `spawn_agent` and `llm.query` accept; `resolveOutputSchema`
 * turns either into a JSON Schema. Providers send it in each vendor's own field
 * and validate the reply (see `@lash/providers`).
 */
export const StructuredOutput = Schema.Struct({
  /** A JSON Schema, or the shorthand record (`{ "answer": "str", "files": "list[str]", "note": "str?" }`). */
  schema: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The schema's name where the vendor wants one (OpenAI `json_schema.name`); default `output`. */
  name: Schema.optional(Schema.String),
  /**
   * OpenAI strict mode: `true` asks for it, `false` never; absent = strict exactly when
   * the schema satisfies OpenAI's strict-mode rules.
   */
  strict: Schema.optional(Schema.Boolean),
});
export type StructuredOutput = typeof StructuredOutput.Type;

export type JsonSchemaObject = { readonly [key: string]: unknown };

/** A schema read from a JSON Schema or a shorthand record, or what is wrong with it. */
export type ResolvedOutputSchema =
  | { readonly ok: true; readonly schema: JsonSchemaObject }
  | { readonly ok: false; readonly error: string };

const SCALARS: { readonly [name: string]: JsonSchemaObject } = {
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
export function shorthandType(text: string): JsonSchemaObject | undefined {
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

/**
 * Normalise an output schema. Accepted forms:
 * - a JSON Schema object (`{ "type": "object", "properties": … }`);
 * - a Lashlang Type literal value (`{ "$lash_type": <schema> }`);
 * - the record shorthand: `{ field: "str" | "int" | "float" | "bool" | "record" | "dict" | "any" | "list[T]" }`,
 *   where a trailing `?` makes a field optional. Every other field is required and
 *   no extra fields are allowed.
 */
export function resolveOutputSchema(output: unknown): ResolvedOutputSchema {
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
    const properties: { [key: string]: JsonSchemaObject } = {};
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
