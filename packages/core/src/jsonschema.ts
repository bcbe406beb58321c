import { Validator } from "@cfworker/json-schema";
import type { JsonSchema } from "./tool.ts";

/**
 * Validates tool arguments (and structured outputs) against a JSON Schema with
 * `@cfworker/json-schema` — drafts 4/7/2019-09/2020-12 (from `$schema`; 2020-12 when
 * absent): `$ref`/`$defs`,
 * `patternProperties`, `dependentRequired`, `if`/`then`, `unevaluated*` … — and
 * turns its errors into one readable line per problem for the model:
 * `/path: what is wrong` (JSON-pointer path, `/` for the value itself).
 *
 * - Each schema is compiled once (cached by object identity; tool schemas are
 *   long-lived). A private copy is compiled, so the caller's object is never
 *   touched.
 * - `format` is an assertion for the formats the validator knows (`date-time`,
 *   `date`, `time`, `duration`, `uri`, `uri-reference`, `url`, `email`,
 *   `hostname`, `ipv4`, `ipv6`, `uuid`, `regex`, JSON pointers): a tool that
 *   declares `format: "uri"` gets a URI or a clear message, which helps the
 *   model more than 2020-12's annotation-only default. Unknown formats pass.
 * - A schema the validator rejects (an unresolvable `$ref`, a pattern that is
 *   not a valid regular expression, a duplicate `$id` — MCP servers do ship
 *   such schemas) does not fail the call or the catalog: validation falls back
 *   to structural checks (type, properties, required, additionalProperties,
 *   enum/const, bounds, items, anyOf/oneOf/allOf) that skip the broken parts.
 *   The server still validates its own input.
 *
 * Returns the problems (at most `limit`), empty when the value is valid.
 */
export function validateJson(schema: JsonSchema, value: unknown, limit = 10): string[] {
  const compiled = value === undefined ? undefined : compile(schema);
  if (compiled !== undefined) {
    try {
      return explain(compiled, value, limit);
    } catch {
      // a schema problem met only while validating (bad pattern, unresolved $ref)
      if (compiled.problem === undefined) compiled.problem = "schema error";
    }
  }
  const problems: string[] = [];
  check(schema, value, "", problems, limit);
  return problems;
}

interface Compiled {
  readonly validator: Validator;
  readonly lookup: Record<string, unknown>;
  readonly root: Record<string, unknown>;
  problem?: string;
}

const cache = new WeakMap<object, Compiled | null>();

function compile(schema: JsonSchema): Compiled | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const hit = cache.get(schema);
  if (hit !== undefined) return hit === null || hit.problem !== undefined ? undefined : hit;
  let compiled: Compiled | null = null;
  try {
    const root = structuredClone(schema) as Record<string, unknown>;
    const validator = new Validator(root as never, draftOf(root.$schema), false);
    compiled = {
      validator,
      root,
      lookup: (validator as unknown as { lookup: Record<string, unknown> }).lookup,
    };
  } catch {
    compiled = null;
  }
  cache.set(schema, compiled);
  return compiled ?? undefined;
}

/** The draft named by `$schema` (zod-to-json-schema emits draft-07, zod 4 2020-12); 2020-12 when none. */
function draftOf($schema: unknown): "4" | "7" | "2019-09" | "2020-12" {
  if (typeof $schema !== "string") return "2020-12";
  if ($schema.includes("draft-04")) return "4";
  if ($schema.includes("draft-06") || $schema.includes("draft-07")) return "7";
  if ($schema.includes("2019-09")) return "2019-09";
  return "2020-12";
}

interface CfError {
  readonly instanceLocation: string;
  readonly keyword: string;
  readonly keywordLocation: string;
  readonly error: string;
}

/** Errors that only say "a child failed"; the child's own error follows them. */
const cascade = new Set([
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "$ref",
  "$recursiveRef",
  "allOf",
  "if",
  "dependentSchemas",
]);

function explain(c: Compiled, value: unknown, limit: number): string[] {
  let input = value;
  let result: { valid: boolean; errors: CfError[] };
  try {
    result = c.validator.validate(input) as typeof result;
  } catch (e) {
    // values from JS (RLM, subagents) may hold `undefined`; JSON has no such thing
    if (!(e instanceof Error && e.message.startsWith("Instances of"))) throw e;
    input = JSON.parse(JSON.stringify(value));
    result = c.validator.validate(input) as typeof result;
  }
  if (result.valid) return [];
  const out: string[] = [];
  describe(c, input, result.errors, 0, result.errors.length, out, limit);
  return out;
}

/** Appends messages for errors[from, to) to out; returns nothing. */
function describe(
  c: Compiled,
  value: unknown,
  errors: readonly CfError[],
  from: number,
  to: number,
  out: string[],
  limit: number,
): void {
  for (let i = from; i < to && out.length < limit; i++) {
    const e = errors[i]!;
    const at = displayPath(e.instanceLocation);
    if (e.keyword === "anyOf" || e.keyword === "oneOf") {
      // the branches' errors follow, each under keywordLocation/<branch>
      const prefix = `${e.keywordLocation}/`;
      let end = i + 1;
      while (
        end < to &&
        (errors[end]!.keywordLocation.startsWith(prefix) ||
          (errors[end]!.keyword === "false" && errors[end - 1]!.keywordLocation.startsWith(prefix)))
      )
        end++;
      const many = /\((\d+) matches\)/.exec(e.error);
      if (many && Number(many[1]) > 1) {
        out.push(`${at}: matches ${many[1]} of the allowed shapes; must match exactly one`);
      } else {
        const hints: string[] = [];
        let branch = -1;
        for (let j = i + 1; j < end; j++) {
          const m = errors[j]!.keywordLocation.slice(prefix.length).match(/^(\d+)/);
          if (!m || Number(m[1]) === branch || cascade.has(errors[j]!.keyword)) continue;
          branch = Number(m[1]);
          const one: string[] = [];
          describe(c, value, errors, j, end, one, 1);
          if (one[0]) hints.push(`${branch + 1}) ${one[0]}`);
        }
        out.push(
          `${at}: does not match any of the allowed shapes${hints.length ? ` — ${hints.slice(0, 4).join("; ")}` : ""}`,
        );
      }
      i = end - 1;
      continue;
    }
    if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") {
      const next = errors[i + 1];
      if (next?.keyword === "false") {
        const parent = resolve(c, e.keywordLocation.slice(0, e.keywordLocation.lastIndexOf("/")));
        const props =
          parent && typeof parent === "object" ? (parent as { properties?: unknown }).properties : undefined;
        const known = props && typeof props === "object" ? Object.keys(props) : [];
        out.push(
          `${displayPath(next.instanceLocation)}: unknown property${known.length ? ` (allowed: ${known.join(", ")})` : ""}`,
        );
        i++;
      }
      continue;
    }
    if (cascade.has(e.keyword)) continue;
    const message = say(c, e, value);
    if (message !== undefined) out.push(message.startsWith("/") ? message : `${at}: ${message}`);
  }
}

function say(c: Compiled, e: CfError, root: unknown): string | undefined {
  const v = at(root, e.instanceLocation);
  const rule = resolve(c, e.keywordLocation);
  const n = (re: RegExp) => re.exec(e.error)?.[1];
  switch (e.keyword) {
    case "type": {
      const types = Array.isArray(rule) ? (rule as string[]) : typeof rule === "string" ? [rule] : undefined;
      const expected = types?.join(" or ") ?? n(/Expected (.*)\.$/)?.replaceAll('"', "");
      return `expected ${expected}, got ${typeOf(v)}${v === undefined ? "" : ` ${show(v)}`}`;
    }
    case "enum":
      return Array.isArray(rule)
        ? `must be one of ${rule.map(show).join(", ")}, got ${show(v)}`
        : `must be one of the allowed values, got ${show(v)}`;
    case "const":
      return `must be ${show(rule)}`;
    case "required": {
      const key = n(/required property "(.*)"\.$/) ?? "?";
      return `${join(e.instanceLocation, key)}: is required`;
    }
    case "dependentRequired":
    case "dependencies": {
      const m = /^Instance has "(.*)" but does not have "(.*)"\.$/.exec(e.error);
      if (m) return `${join(e.instanceLocation, m[2]!)}: is required when "${m[1]}" is present`;
      return lower(e.error);
    }
    case "minLength":
      return `must be at least ${rule} characters`;
    case "maxLength":
      return `must be at most ${rule} characters`;
    case "pattern":
      return `must match /${rule}/`;
    case "format":
      return `must be a valid ${rule} (got ${show(v)})`;
    case "minimum":
      return /or equal/.test(e.error) ? `must be > ${rule}` : `must be ≥ ${n(/ than (\S+)\.$/) ?? rule}`;
    case "maximum":
      return /or equal/.test(e.error) ? `must be < ${rule}` : `must be ≤ ${n(/ than (\S+)\.$/) ?? rule}`;
    case "exclusiveMinimum":
      return `must be > ${rule}`;
    case "exclusiveMaximum":
      return `must be < ${rule}`;
    case "multipleOf":
      return `must be a multiple of ${rule}`;
    case "minItems":
      return `needs at least ${rule} items`;
    case "maxItems":
      return `allows at most ${rule} items`;
    case "uniqueItems":
      return `items must be unique (${lower(e.error)})`;
    case "minProperties":
      return `needs at least ${rule} properties`;
    case "maxProperties":
      return `allows at most ${rule} properties`;
    case "not":
      return "must not match the excluded shape";
    case "false":
      return "is not allowed here";
    case "propertyNames":
      return lower(e.error);
    default:
      return lower(e.error);
  }
}

function lower(s: string): string {
  const t = s.endsWith(".") ? s.slice(0, -1) : s;
  return t.charAt(0).toLowerCase() + t.slice(1);
}

/** cfworker's `#/a%20b/0` → `/a b/0` (JSON pointer, `~0`/`~1` kept), `#` → `/`. */
function displayPath(location: string): string {
  const rest = location.startsWith("#") ? location.slice(1) : location;
  if (rest === "") return "/";
  return rest.split("/").map(decode).join("/");
}

function join(location: string, key: string): string {
  const base = displayPath(location);
  return `${base === "/" ? "" : base}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function pointerKey(segment: string): string {
  return decode(segment).replaceAll("~1", "/").replaceAll("~0", "~");
}

/** The value at a cfworker instance location. */
function at(root: unknown, location: string): unknown {
  const rest = location.startsWith("#") ? location.slice(1) : location;
  if (rest === "") return root;
  let v: unknown = root;
  for (const seg of rest.slice(1).split("/")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[pointerKey(seg)];
  }
  return v;
}

/** The schema value at a cfworker keyword location, following `$ref`s through the lookup. */
function resolve(c: Compiled, location: string): unknown {
  const rest = location.startsWith("#") ? location.slice(1) : location;
  let node: unknown = c.root;
  if (rest === "") return node;
  for (const seg of rest.slice(1).split("/")) {
    if (node === null || typeof node !== "object") return undefined;
    if (seg === "$ref" || seg === "$recursiveRef") {
      const abs = (node as { __absolute_ref__?: string; __absolute_recursive_ref__?: string })[
        seg === "$ref" ? "__absolute_ref__" : "__absolute_recursive_ref__"
      ];
      node = abs === undefined ? undefined : c.lookup[abs];
      continue;
    }
    node = (node as Record<string, unknown>)[pointerKey(seg)];
  }
  return node;
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

/** Structural checks, used when the validator rejects a schema (see validateJson). */
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
    const ok = options.some((sub) => {
      const probe: string[] = [];
      check(sub, v, path, probe, 1);
      return probe.length === 0;
    });
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
