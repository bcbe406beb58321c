import type { JsonSchema, SessionMode } from "@lash/core";
import { SUBMIT_RESULT } from "./child.ts";
import { isObjectSchema } from "./output.ts";

/** The default system prompt of a child session (capabilities may replace it). */
export const DEFAULT_CHILD_SYSTEM_PROMPT =
  "You are a focused subagent. Work on the task you are given with the tools you have, " +
  "then report the result concisely and precisely: your result is all the other agent will see.";

/**
 * The child's first message: the task, then the seed (the only context the child
 * inherits) as a fenced JSON block, then — when an output schema is required —
 * a "## Required output" section with the pretty-printed schema.
 */
export function renderTask(
  task: string,
  seed: unknown,
  schema: JsonSchema | undefined,
  mode: SessionMode = "standard",
): string {
  const sections = [task.trim()];
  if (seed !== undefined) {
    sections.push(
      [
        "## Seed",
        "Context from the agent that gave you this task (you see nothing else of its work):",
        "```json",
        JSON.stringify(seed, null, 2),
        "```",
      ].join("\n"),
    );
  }
  if (schema !== undefined) {
    sections.push(
      [
        "## Required output",
        mode === "rlm"
          ? "End with `finish <value>` where the value matches this JSON Schema exactly:"
          : isObjectSchema(schema)
            ? `End by calling \`${SUBMIT_RESULT}\` with arguments that match this JSON Schema exactly:`
            : `End by calling \`${SUBMIT_RESULT}\` with \`value\` set to a value that matches this JSON Schema exactly:`,
        "```json",
        JSON.stringify(schema, null, 2),
        "```",
      ].join("\n"),
    );
  }
  return sections.join("\n\n");
}
