import {
  type JsonSchema,
  type Plugin,
  type PluginHooks,
  type SessionMode,
  type ToolDefinition,
  textOutput,
} from "@lash/core";
import { Effect } from "effect";
import { isObjectSchema } from "./output.ts";

/** The child-only tool that ends a child turn with its typed result. */
export const SUBMIT_RESULT = "submit_result";
/** The child-only tool that ends a child turn with a failure the parent sees as a tool error. */
export const SUBMIT_ERROR = "submit_error";
/** Tools that belong to one child and are never inherited by its own children. */
export const CHILD_ONLY_TOOLS: ReadonlySet<string> = new Set([SUBMIT_RESULT, SUBMIT_ERROR]);

export interface ChildInfo {
  readonly capability: string;
  readonly depth: number;
  readonly maxDepth: number;
  /** The child's protocol mode (RLM children finish with `finish <value>`, not `submit_result`). */
  readonly mode?: SessionMode;
  /** The required output, when the parent asked for one. */
  readonly schema?: JsonSchema;
}

/** The input schema of `submit_result`: the output schema itself when it is an object, else `{ value }`. */
export function submitSchema(schema: JsonSchema): JsonSchema {
  return isObjectSchema(schema)
    ? schema
    : { type: "object", properties: { value: schema }, required: ["value"], additionalProperties: false };
}

/** The child's result from what `submit_result` received. */
export function unwrapSubmitted(schema: JsonSchema | undefined, submitted: unknown): unknown {
  if (schema === undefined || isObjectSchema(schema)) return submitted;
  return typeof submitted === "object" && submitted !== null && "value" in submitted
    ? (submitted as { readonly value: unknown }).value
    : submitted;
}

function submitResultTool(schema: JsonSchema): ToolDefinition {
  return {
    name: SUBMIT_RESULT,
    description:
      "Submit your final result to the agent that gave you this task. The arguments must match the required " +
      "output schema exactly. Calling it ends your work: call it once, last.",
    inputSchema: submitSchema(schema),
    idempotent: true,
    effects: ["read"],
    family: "agent",
    binding: { module: "task", operation: "submit" },
    execute: (args) =>
      Effect.succeed(
        textOutput("Result submitted.", { value: args, control: { type: "finish", value: args } }),
      ),
  };
}

const submitErrorTool: ToolDefinition<{ readonly reason: string }> = {
  name: SUBMIT_ERROR,
  description:
    "Give up on the task and tell the agent that gave it to you why (it receives a tool error with your reason). " +
    "Use it only when the task cannot be done with what you have. Calling it ends your work.",
  inputSchema: {
    type: "object",
    properties: { reason: { type: "string", description: "Why the task cannot be done." } },
    required: ["reason"],
    additionalProperties: false,
  },
  idempotent: true,
  effects: ["read"],
  family: "agent",
  binding: { module: "task", operation: "fail" },
  execute: ({ reason }) =>
    Effect.succeed(
      textOutput(`Failure reported: ${reason}`, {
        value: { reason },
        control: { type: "finish", value: { reason } },
      }),
    ),
};

/** The per-child plugin: `submit_result` (typed output), `submit_error`, and a prompt note. */
export function childPlugin(info: ChildInfo): Plugin {
  const rlm = info.mode === "rlm";
  // RLM cells end with `finish` (enforced by `finishRequired`); the Lashlang executor does not
  // act on a tool's finish control, so RLM children get neither `submit_result` nor `submit_error`.
  const tools: ToolDefinition[] = [];
  if (!rlm) {
    if (info.schema !== undefined) tools.push(submitResultTool(info.schema));
    tools.push(submitErrorTool as ToolDefinition);
  }
  const lines = [
    `Subagent capability: ${info.capability}. Depth: ${info.depth}/${info.maxDepth}.`,
    "You are a subagent: another agent gave you one task. You see only the task (and its seed), not that agent's conversation.",
    rlm
      ? "When you are done, end with `finish <value>`: that value is returned to that agent."
      : info.schema !== undefined
        ? `When you are done, call \`${SUBMIT_RESULT}\` with your result (it must match the required output schema), or answer with that JSON value alone; do not answer in prose.`
        : "When you are done, answer with your final result as plain text: it is returned to that agent as is.",
    ...(rlm ? [] : [`If the task cannot be done, call \`${SUBMIT_ERROR}\` with the reason.`]),
  ];
  const schema = info.schema;
  // Standard children ask the model for their answer with the schema as the request's structured
  // output (the provider enforces and checks it); RLM children answer in Lashlang cells.
  const hooks: PluginHooks | undefined =
    !rlm && schema !== undefined
      ? {
          transformContext: (_ctx, request) =>
            Effect.succeed(
              request.output !== undefined
                ? request
                : { ...request, output: { schema: submitSchema(schema), name: OUTPUT_NAME } },
            ),
        }
      : undefined;
  return { name: "subagents.child", tools, prompt: lines.join("\n"), ...(hooks ? { hooks } : {}) };
}

/** The name of a child's structured output (OpenAI `json_schema.name`, the Anthropic fallback tool). */
export const OUTPUT_NAME = "result";
