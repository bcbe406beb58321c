import type { JsonSchema } from "@lash/core";
import { validateJson } from "@lash/core/internal";
import { resolveOutputSchema, shorthandType as sansioShorthandType } from "@lash/sansio";

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

/** The schema of one shorthand type (`str`, `list[int]`, `list[list[str]]` …); undefined when not shorthand. */
export function shorthandType(text: string): JsonSchema | undefined {
  return sansioShorthandType(text);
}

/** Normalise an `output` argument (see {@link OutputSpec}; the one implementation is `resolveOutputSchema` in `@lash/sansio`). */
export function outputSchema(output: unknown): OutputSpec {
  return resolveOutputSchema(output);
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
