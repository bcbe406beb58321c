/**
 * The compaction prompt — the one place it lives. The summariser is asked for a
 * summary in fixed sections, so that what a long session must not lose (the user's
 * goals, decisions, files, open work, the plan, artifacts) survives the cut; a test
 * checks every section is asked for.
 */

/** The sections a summary must have, in order (each one a `## ` heading in the reply). */
export const SUMMARY_SECTIONS = [
  {
    heading: "Goals and constraints",
    ask: "What the user wants overall and for the current task, in their terms; every constraint, preference and requirement they stated (quote exact values: names, versions, limits).",
  },
  {
    heading: "Decisions and reasons",
    ask: "Each decision taken so far (by the user or the assistant) and why; approaches that were tried and rejected, and why they were rejected.",
  },
  {
    heading: "Files created or changed",
    ask: "Every file path created, edited, moved or deleted, one per line, with what changed; paths that were only read and matter for the work.",
  },
  {
    heading: "Open questions and TODOs",
    ask: "Unanswered questions, known bugs, failing checks, and work not done yet, most urgent first.",
  },
  {
    heading: "Plan state",
    ask: "The last state of the plan (the latest `update_plan` call: every step with its status), or the implicit plan if no plan tool was used; the next step.",
  },
  {
    heading: "Artifact references",
    ask: "Every artifact id, URL, commit, session or node id, and tool-output reference the work depends on, each with one line saying what it holds.",
  },
] as const;

/** The system prompt of every summariser request. */
export const COMPACTION_SYSTEM = [
  "You compact the history of a long working session between a user and an AI assistant with tools.",
  "The assistant will continue the work from your summary alone: the transcript you summarise is removed from its context.",
  "Write a summary that is complete where it matters and terse everywhere else. Keep exact identifiers (paths, names, numbers, ids).",
  "Do not continue the work, do not answer questions from the transcript, do not address the user.",
  "Reply with these sections, each a level-2 Markdown heading, in this order (write 'none' under a heading with nothing to say):",
  ...SUMMARY_SECTIONS.map((s) => `## ${s.heading}\n${s.ask}`),
].join("\n\n");

/** Marks a summary in the prompt the model sees after a compaction. */
export const SUMMARY_PREFIX =
  "[Summary of the earlier conversation — the full history was compacted to fit the context window; the detail stays in the session graph]";

/**
 * The user message of one summariser stage: the summary so far (an earlier compaction's, or
 * the previous stage's) merged with the next chunk of the transcript.
 */
export function stagePrompt(o: {
  readonly previous: string | undefined;
  readonly transcript: string;
  readonly stage: number;
  readonly stages: number;
  readonly instructions?: string | undefined;
}): string {
  const parts: string[] = [];
  if (o.previous !== undefined)
    parts.push(
      "The summary of everything before the transcript below (merge it into your summary: keep what still holds, update what changed):",
      `<previous-summary>\n${o.previous}\n</previous-summary>`,
    );
  parts.push(
    o.stages > 1
      ? `The transcript, part ${o.stage} of ${o.stages} (oldest first):`
      : "The transcript to summarise (oldest first):",
    `<transcript>\n${o.transcript}\n</transcript>`,
  );
  if (o.instructions) parts.push(`Instructions from the user for this summary: ${o.instructions}`);
  parts.push("Write the summary now, with every section.");
  return parts.join("\n\n");
}
