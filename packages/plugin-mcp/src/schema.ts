import type { JsonSchema } from "@lash/core";

type Obj = { [key: string]: unknown };
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Normalize an MCP tool's `inputSchema` into what every provider accepts at the root:
 * `type: "object"` with a `properties` object; `$schema` / `$id` dropped; a root-level
 * `anyOf` / `oneOf` / `allOf` of object shapes (rejected by OpenAI and Anthropic at the root)
 * folded into one object (properties merged; `required` = what every alternative requires).
 * Everything below the root passes through unchanged.
 */
export function normalizeInputSchema(schema: unknown): JsonSchema {
  if (!isObj(schema)) return { type: "object", properties: {} };
  const { $schema: _s, $id: _i, ...rest } = schema;
  let out: Obj = { ...rest };

  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const alts = out[key];
    if (!Array.isArray(alts)) continue;
    const objects = alts.filter(isObj);
    if (objects.length !== alts.length || !objects.every(isObjectShape)) continue;
    delete out[key];
    const props: Obj = { ...(isObj(out.properties) ? out.properties : {}) };
    for (const alt of objects) if (isObj(alt.properties)) Object.assign(props, alt.properties);
    const reqLists = objects.map((a) => (Array.isArray(a.required) ? (a.required as unknown[]) : []));
    const base = Array.isArray(out.required) ? (out.required as unknown[]) : [];
    const required =
      key === "allOf"
        ? [...base, ...reqLists.flat()]
        : [...base, ...(reqLists[0] ?? []).filter((r) => reqLists.every((l) => l.includes(r)))];
    out = { ...out, properties: props };
    const unique = [...new Set(required.filter((r): r is string => typeof r === "string"))];
    if (unique.length > 0) out.required = unique;
    else delete out.required;
  }

  if (out.type !== "object") out.type = "object";
  if (!isObj(out.properties)) out.properties = {};
  if (out.required !== undefined && !Array.isArray(out.required)) delete out.required;
  return out;
}

function isObjectShape(s: Obj): boolean {
  return (s.type === undefined || s.type === "object") && (s.properties === undefined || isObj(s.properties));
}
