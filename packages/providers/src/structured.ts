import { Validator } from "@cfworker/json-schema";
import type { JsonSchemaObject, LlmEvent, LlmProvider, LlmRequest, Message } from "@lash/sansio";
import { LlmError, resolveOutputSchema } from "@lash/sansio";
import * as Chunk from "effect/Chunk";
import * as Stream from "effect/Stream";

/**
 * Structured output (`LlmRequest.output`): what each adapter sends, and the layer that
 * checks the reply.
 *
 * 1. `outputFormat(request)` resolves the schema (JSON Schema or the record shorthand), wraps
 *    a non-object root as `{ "value": … }` (vendors want an object at the root), names it and
 *    decides OpenAI strict mode (`strictProblems`).
 * 2. Adapters put it in the vendor's field: Responses `text.format`, Chat Completions
 *    `response_format`, Anthropic `output_config.format` (or a forced tool on models without it),
 *    Gemini `responseMimeType` + `responseJsonSchema`.
 * 3. `withOutputCheck` validates a finished reply that has no tool calls: its text must hold one
 *    JSON value (`parseReply`) that matches the schema. A mismatch is retried once, with the bad reply and the
 *    validation problems appended for the model (`retry` + `attemptReset` first, so readers drop
 *    the bad reply); a second mismatch fails with `LlmError{kind: "outputMismatch"}`.
 */

/** Problems of `value` against `schema` (empty when it matches); hosts pass core's `validateJson`. */
export type OutputValidator = (schema: JsonSchemaObject, value: unknown) => readonly string[];

/** The output request an adapter sends. */
export interface OutputFormat {
  /** The JSON Schema sent to the vendor (an object at the root). */
  readonly schema: JsonSchemaObject;
  /** `[a-zA-Z0-9_-]{1,64}`, default `output`. */
  readonly name: string;
  /** OpenAI strict mode for this schema. */
  readonly strict: boolean;
  /** True when a non-object root was wrapped as `{ "value": … }` (the reply is that object). */
  readonly wrapped: boolean;
}

function isRecord(v: unknown): v is { readonly [key: string]: unknown } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The request's output schema as the vendor gets it, undefined when the request asks for none. Throws a `badRequest` `LlmError` for a malformed schema. */
export function outputFormat(request: LlmRequest, provider = "provider"): OutputFormat | undefined {
  const out = request.output;
  if (out === undefined) return undefined;
  const resolved = resolveOutputSchema(out.schema);
  if (!resolved.ok)
    throw new LlmError({
      kind: "badRequest",
      message: `${provider}: the request's output schema is unusable: ${resolved.error}`,
      provider,
      retryable: false,
    });
  const wrapped = resolved.schema.type !== "object";
  const schema: JsonSchemaObject = wrapped
    ? {
        type: "object",
        properties: { value: resolved.schema },
        required: ["value"],
        additionalProperties: false,
      }
    : resolved.schema;
  const name = (out.name ?? "output").replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "output";
  const strict = out.strict ?? strictProblems(schema).length === 0;
  return { schema, name, strict, wrapped };
}

/** Keywords OpenAI's strict mode rejects. */
const STRICT_UNSUPPORTED = [
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "dependentRequired",
  "dependentSchemas",
  "patternProperties",
  "unevaluatedProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "uniqueItems",
  "contains",
  "minContains",
  "maxContains",
  "unevaluatedItems",
];

/**
 * Why `schema` cannot be sent with OpenAI `strict: true` (empty = it can): the root is an
 * object (not `anyOf`); every object lists all its properties in `required` and has
 * `additionalProperties: false`; every subschema says what it is (`type`, `anyOf`, `enum`,
 * `const` or `$ref`); none of the keywords strict mode rejects (`allOf`, `minLength`,
 * `patternProperties`, …); at most 10 levels of nesting.
 */
export function strictProblems(schema: JsonSchemaObject): string[] {
  const problems: string[] = [];
  if (schema.type !== "object") problems.push("/: the root is not an object");
  const visit = (s: unknown, path: string, depth: number): void => {
    if (problems.length >= 10) return;
    if (!isRecord(s)) {
      problems.push(`${path || "/"}: not a schema object`);
      return;
    }
    if (depth > 10) {
      problems.push(`${path}: nested deeper than 10 levels`);
      return;
    }
    for (const k of STRICT_UNSUPPORTED)
      if (k in s) problems.push(`${path || "/"}: \`${k}\` is not supported`);
    if (!("type" in s || "anyOf" in s || "enum" in s || "const" in s || "$ref" in s))
      problems.push(`${path || "/"}: no \`type\``);
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes("object")) {
      const props = isRecord(s.properties) ? s.properties : {};
      if (s.additionalProperties !== false)
        problems.push(`${path || "/"}: additionalProperties is not false`);
      const required = Array.isArray(s.required) ? s.required : [];
      for (const key of Object.keys(props))
        if (!required.includes(key)) problems.push(`${path}/${key}: not in \`required\``);
      for (const [key, sub] of Object.entries(props)) visit(sub, `${path}/${key}`, depth + 1);
    }
    if (s.items !== undefined) visit(s.items, `${path}/items`, depth + 1);
    if (Array.isArray(s.prefixItems))
      for (const [i, x] of s.prefixItems.entries()) visit(x, `${path}/prefixItems/${i}`, depth + 1);
    if (Array.isArray(s.anyOf))
      for (const [i, x] of s.anyOf.entries()) visit(x, `${path}/anyOf/${i}`, depth + 1);
    for (const defs of ["$defs", "definitions"])
      if (isRecord(s[defs]))
        for (const [k, x] of Object.entries(s[defs])) visit(x, `${path}/${defs}/${k}`, depth);
  };
  visit(schema, "", 0);
  return problems;
}

/** What the model is told when the vendor cannot enforce the schema itself. */
export function outputInstruction(format: OutputFormat): string {
  return `Your final answer must be one JSON value and nothing else (no prose, no code fence) matching this JSON Schema:\n${JSON.stringify(format.schema)}`;
}

/**
 * The default validator (`@cfworker/json-schema`, draft 2020-12 unless `$schema` says
 * otherwise); one line per problem, `/path: what is wrong`. Hosts that have core's
 * `validateJson` pass it instead (`createProvider({ validateOutput })`) for the same wording as
 * tool-argument errors.
 */
export const defaultOutputValidator: OutputValidator = (schema, value) => {
  let validator: Validator;
  try {
    validator = new Validator(structuredClone(schema) as never, "2020-12", false);
  } catch (e) {
    return [`the output schema cannot be compiled: ${(e as Error).message}`];
  }
  const result = validator.validate(value);
  if (result.valid) return [];
  const wrappers = new Set(["properties", "items", "$ref", "allOf", "prefixItems", "additionalProperties"]);
  const leaves = result.errors.filter((e) => !wrappers.has(e.keyword));
  const out: string[] = [];
  for (const e of leaves.length > 0 ? leaves : result.errors) {
    const path = e.instanceLocation.replace(/^#/, "") || "/";
    const line = `${path}: ${e.error}`;
    if (!out.includes(line)) out.push(line);
    if (out.length >= 10) break;
  }
  return out;
};

/**
 * Reads a reply as one JSON value: the whole text, else a fenced block, else the outermost
 * `{…}` / `[…]` span (a model outside strict decoding may put words around its JSON; readers such
 * as `llm.query` and subagents take the value out the same way). The problem when there is none.
 */
export function parseReply(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const t = text.trim();
  if (t === "") return { ok: false, problem: "/: the reply is empty, expected a JSON value" };
  const attempts = [t];
  const fence = /```(?:json)?\s*\n([\s\S]*?)```/.exec(t);
  if (fence?.[1] !== undefined) attempts.push(fence[1].trim());
  for (const [open, close] of [
    ["{", "}"],
    ["[", "]"],
  ] as const) {
    const a = t.indexOf(open);
    const b = t.lastIndexOf(close);
    if (a >= 0 && b > a) attempts.push(t.slice(a, b + 1));
  }
  let first: Error | undefined;
  for (const attempt of attempts) {
    try {
      return { ok: true, value: JSON.parse(attempt) };
    } catch (e) {
      first ??= e as Error;
    }
  }
  return { ok: false, problem: `/: the reply is not JSON (${first?.message ?? "no JSON value found"})` };
}

/** The request for the second try: the bad reply and what is wrong with it, for the model. */
export function correctionRequest(
  request: LlmRequest,
  reply: string,
  problems: readonly string[],
): LlmRequest {
  const base = request.messages.at(-1)?.id ?? "output";
  const messages: Message[] = [
    ...request.messages,
    { id: `${base}.output-reply`, role: "assistant", parts: [{ type: "text", text: reply }] },
    {
      id: `${base}.output-correction`,
      role: "user",
      parts: [
        {
          type: "text",
          text: `Your reply does not match the required output schema:\n${problems.map((p) => `- ${p}`).join("\n")}\nReply again with only the corrected JSON value.`,
        },
      ],
    },
  ];
  return { ...request, messages };
}

/**
 * Checks structured-output replies (see the file comment). Requests without `output` pass
 * through untouched. The reply's `finish` is held back until the reply is checked, so a reader
 * never sees a finished reply that does not match.
 */
export function withOutputCheck(
  provider: LlmProvider,
  validate: OutputValidator = defaultOutputValidator,
): LlmProvider {
  const stream = (request: LlmRequest): Stream.Stream<LlmEvent, LlmError> => {
    if (request.output === undefined) return provider.stream(request);
    return Stream.suspend(() => {
      let format: OutputFormat | undefined;
      try {
        format = outputFormat(request, provider.name);
      } catch (e) {
        return Stream.fail(e as LlmError);
      }
      if (format === undefined) return provider.stream(request);
      const schema = format.schema;
      const attempt = (req: LlmRequest, n: number): Stream.Stream<LlmEvent, LlmError> =>
        Stream.suspend(() => {
          let text = "";
          let calls = false;
          let finish: LlmEvent | undefined;
          const body = provider.stream(req).pipe(
            Stream.mapChunks((chunk) => {
              const out: LlmEvent[] = [];
              for (const e of chunk) {
                if (e.type === "textDelta") text += e.text;
                else if (e.type === "toolCallStart") calls = true;
                else if (e.type === "attemptReset") {
                  text = "";
                  calls = false;
                  finish = undefined;
                } else if (e.type === "finish") {
                  finish = e;
                  continue;
                }
                out.push(e);
              }
              return Chunk.unsafeFromArray(out);
            }),
          );
          const settle = Stream.suspend((): Stream.Stream<LlmEvent, LlmError> => {
            if (finish === undefined) return Stream.empty;
            const done = Stream.make(finish);
            if (finish.type !== "finish" || finish.reason !== "stop" || calls) return done;
            const parsed = parseReply(text);
            const problems = parsed.ok ? validate(schema, parsed.value) : [parsed.problem];
            if (problems.length === 0) return done;
            const list = problems.map((p) => `- ${p}`).join("\n");
            if (n >= 2)
              return Stream.fail(
                new LlmError({
                  kind: "outputMismatch",
                  message: `${provider.name}: the reply does not match the required output schema (after ${n} tries):\n${list}`,
                  provider: provider.name,
                  retryable: false,
                }),
              );
            const events: LlmEvent[] = [
              {
                type: "retry",
                attempt: n + 1,
                delayMs: 0,
                reason: "output mismatch",
                maxAttempts: 2,
                error: {
                  kind: "outputMismatch",
                  message: `${provider.name}: the reply does not match the required output schema:\n${list}`,
                  provider: provider.name,
                  retryable: true,
                },
              },
              { type: "attemptReset", attempt: n + 1 },
            ];
            return Stream.fromChunk(Chunk.unsafeFromArray(events)).pipe(
              Stream.concat(attempt(correctionRequest(req, text, problems), n + 1)),
            );
          });
          return body.pipe(Stream.concat(settle));
        });
      return attempt(request, 1);
    });
  };
  return { name: provider.name, stream };
}
