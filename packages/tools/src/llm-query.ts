// `llm_query`: a focused, tool-less sub-query to the model, with an optional output type for a
// structured result — the standard-mode face of RLM's `llm.query` and the same code path: the
// request, the reply's checking and the graph record come from core's `llm.query`
// (`llmQueryRequest`, `parseQueryReply`, `llmQueryDetails`); the call goes through the host's
// `llm` capability, journaled under the tool attempt. With this tool in the catalog, an RLM
// cell's `llm.query` runs through it too (one implementation).
import { type ToolContext, type ToolDefinition, ToolFailure, type ToolOutput } from "@lash/core";
import { LLM_QUERY, llmQueryDetails, llmQueryToolRequest, readLlmQueryReply } from "@lash/core/internal";
import { Effect } from "effect";

export interface LlmQueryArgs {
  readonly task: string;
  readonly inputs?: unknown;
  /** A JSON Schema, a shorthand record (`{"score": "int"}`) or a shorthand type (`"list[str]"`). */
  readonly output?: unknown;
}

export interface LlmQueryOptions {
  /** The model that answers (`provider/model`; default: the session's). */
  readonly model?: string;
  /** Per-call timeout (default 300 s). */
  readonly timeoutMs?: number;
}

/** The standard-mode `llm_query` tool (opt-in: `toolsPlugin({ llmQuery: true })`). */
export function llmQueryTool(options: LlmQueryOptions = {}): ToolDefinition<LlmQueryArgs> {
  return {
    name: LLM_QUERY,
    description: [
      "Ask the model one focused sub-question in a fresh, tool-less call: it sees only `task` and `inputs` (nothing of this conversation) and answers with a value of the `output` type.",
      'Use it to classify, extract, summarise or judge a piece of data without filling this conversation with it. Give `output` as a JSON Schema or a shorthand record such as {"score": "int", "reasons": "list[str]"} for a structured result (default: a concise string).',
      "Returns the value as JSON text; when the model cannot answer from what it was given, the result is an error naming why.",
    ].join("\n"),
    inputSchema: {
      type: "object",
      properties: {
        task: { type: "string", minLength: 1, description: "The focused sub-question to answer." },
        inputs: { description: "Any JSON value the answer must be based on (sent as JSON)." },
        output: {
          type: ["object", "string"],
          description:
            'The result type: a JSON Schema, a shorthand record like {"claims": "list[str]", "score": "float"}, or a shorthand type like "list[str]". Default: a concise string.',
        },
      },
      required: ["task"],
      additionalProperties: false,
    },
    // the model call is journaled under the attempt: a re-run after a crash replays its reply
    readOnly: true,
    idempotent: true,
    effects: ["read"],
    family: "llm",
    timeoutMs: options.timeoutMs ?? 300_000,
    execute: (args, ctx) => runQuery(args, ctx, options),
  };
}

function runQuery(
  args: LlmQueryArgs,
  ctx: ToolContext,
  options: LlmQueryOptions,
): Effect.Effect<ToolOutput, ToolFailure> {
  return Effect.gen(function* () {
    // a cell's `llm.query` (no lash call id) keeps its own name in messages
    const name = ctx.lashCallId === undefined ? "llm.query" : LLM_QUERY;
    const renamed = (message: string) => message.replace(/^llm\.query: /, `${name}: `);
    const host = ctx.host;
    if (!host)
      return yield* Effect.fail(
        new ToolFailure({
          class: "unavailable",
          message: `${name} is unavailable here: it needs the lash runtime as its host (a session's turn)`,
        }),
      );
    const q = llmQueryToolRequest(args, ctx.lashCallId ?? ctx.callId);
    if ("error" in q)
      return yield* Effect.fail(new ToolFailure({ class: "invalidRequest", message: `${name}: ${q.error}` }));
    const r = yield* host.llm
      .complete(
        { ...q.request, ...(options.model !== undefined ? { model: options.model } : {}) },
        {
          source: "llm.query",
        },
      )
      .pipe(Effect.mapError((e) => new ToolFailure({ ...e, message: `${name}: ${e.message}` })));
    const result = readLlmQueryReply(r.response, q.schema);
    const details = llmQueryDetails(q, r.model, r.response.usage);
    const usage = r.usage ? [r.usage] : [];
    if (!result.ok)
      return { content: [{ type: "text", text: renamed(result.error) }], isError: true, details, usage };
    const value = result.value;
    return {
      content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }],
      value,
      details,
      usage,
    };
  });
}
