// The standard-mode side of `llm.query` (the `llm_query` tool of @lash/tools): the RLM
// built-in's request and reply reading (rlm/executor.ts), with `output` also accepted as a
// plain JSON Schema, the form a model calling a tool writes.
import { type LlmResponse, resolveOutputSchema, responseText } from "@lash/sansio";
import { llmQueryRequest, parseQueryReply } from "./rlm/executor.ts";

/** `output` as `llm.query` reads it: a JSON Schema (or flat shorthand record) goes in as a Type literal. */
function normalizeOutput(output: unknown): unknown {
  if (output === undefined || output === null || typeof output !== "object" || Array.isArray(output))
    return output;
  const resolved = resolveOutputSchema(output);
  // nested shorthand records (`{a: {b: "int"}}`) are left to llm.query's own reading
  return resolved.ok ? { $lash_type: resolved.schema } : output;
}

/** The request of one `llm_query` call (`id` names its task message), or what is wrong with the arguments. */
export function llmQueryToolRequest(args: unknown, id: string): ReturnType<typeof llmQueryRequest> {
  const a = typeof args === "object" && args !== null && !Array.isArray(args) ? args : {};
  return llmQueryRequest({ ...a, output: normalizeOutput((a as { output?: unknown }).output) }, id);
}

/** A reply read against the output type: the value, or the problem (`llm.query: …`). */
export function readLlmQueryReply(
  response: LlmResponse,
  schema: Parameters<typeof parseQueryReply>[1],
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string } {
  return parseQueryReply(responseText(response), schema);
}
