import {
  callOf,
  canonicalJson,
  type LlmProvider,
  type LlmRequest,
  type Message,
  type Part,
  ResponseAccumulator,
  sha256Hex,
  Usage,
} from "@lash/sansio";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import type { Journal } from "../journal.ts";
import { type GraphNode, isCompactionNode } from "../store.ts";
import { messageTokens, textTokens } from "./estimate.ts";
import { COMPACTION_SYSTEM, SUMMARY_PREFIX, stagePrompt } from "./prompt.ts";

/**
 * Compaction as a graph node. A `compaction` protocol node records the span of the active
 * path it replaces and its summary; the prompt a turn builds is the summary plus everything
 * after the node (`projectHistory`), while the replaced nodes stay in the graph. Long spans
 * are summarised in stages, each stage's summariser call journaled under the turn, so a
 * crash during a compaction resumes it without asking again for a finished stage.
 */

/** How the host compacts (`RuntimeOptions.compaction`). */
export interface CompactionOptions {
  /** Compact before a turn when its first request's estimate reaches this share of the window (default 0.8). */
  readonly threshold?: number;
  /** Compact automatically at the threshold (default true); `runtime.compact` works either way. */
  readonly auto?: boolean;
  /** The context window of every model, overriding the catalog (local models the catalog cannot know). */
  readonly contextWindow?: number;
  /** The summariser model (default: the session's own). */
  readonly model?: string;
  /** Share of the summariser's window left free in each stage's request (default 0.25). */
  readonly safetyMargin?: number;
  /**
   * What a compaction makes (default "summary"): a summary node on the session's own path, or
   * — "handoff", standard sessions only (an RLM session keeps its summary: its REPL state lives
   * in the session) — a successor session whose first message is the summary, linked both ways.
   */
  readonly strategy?: "summary" | "handoff";
}

export const DEFAULT_THRESHOLD = 0.8;
const DEFAULT_MARGIN = 0.25;

/** The payload of a `compaction` protocol node. */
export const CompactionPayload = Schema.Struct({
  type: Schema.Literal("compaction"),
  /** The first and last node of the active path the summary replaces (messages of the session's frame). */
  firstNodeId: Schema.String,
  lastNodeId: Schema.String,
  /** How many messages it replaces. */
  replaced: Schema.Number,
  /** The compaction node an earlier summary came from (merged into this one). */
  previous: Schema.optional(Schema.String),
  summary: Schema.String,
  /** The summariser model. */
  model: Schema.String,
  /** Estimated tokens of the replaced history, and of the summary that replaces it. */
  tokensBefore: Schema.Number,
  tokensAfter: Schema.Number,
  stages: Schema.Number,
  trigger: Schema.Literal("threshold", "manual"),
  instructions: Schema.optional(Schema.String),
  /** The summariser's usage, all stages. */
  usage: Usage,
});
export type CompactionPayload = typeof CompactionPayload.Type;

export const isCompaction: (node: GraphNode) => boolean = isCompactionNode;

/** The summary as the model sees it: one user message standing for the replaced history. */
export function summaryMessage(nodeId: string, summary: string): Message {
  return {
    id: `${nodeId}.summary`,
    role: "user",
    parts: [{ type: "text", text: `${SUMMARY_PREFIX}\n\n${summary}` }],
  };
}

export interface ProjectedHistory {
  /** What the next request carries: the last summary (if any) and the messages after it. */
  readonly history: Message[];
  /** The last compaction on the path (of this frame). */
  readonly last: { readonly nodeId: string; readonly payload: CompactionPayload } | undefined;
  /** The message nodes after it: what a new compaction would replace. */
  readonly span: GraphNode[];
}

/** The active-path projection: messages of `frameId`, each compaction replacing what came before it. */
export function projectHistory(path: readonly GraphNode[], frameId: string): ProjectedHistory {
  let history: Message[] = [];
  let span: GraphNode[] = [];
  let last: ProjectedHistory["last"];
  for (const n of path) {
    if (n.frameId !== frameId) continue;
    if (n.kind === "message") {
      history.push(n.payload as Message);
      span.push(n);
    } else if (isCompaction(n)) {
      const payload = n.payload as CompactionPayload;
      last = { nodeId: n.id, payload };
      history = [summaryMessage(n.id, payload.summary)];
      span = [];
    }
  }
  return { history, last, span };
}

export class CompactionFailed extends Data.TaggedError("CompactionFailed")<{ readonly message: string }> {}

const CLIP_CALL = 2_000;
const CLIP_RESULT = 4_000;

const clip = (s: string, max: number) =>
  s.length <= max ? s : `${s.slice(0, max)}… [${s.length - max} more characters cut]`;

function renderPart(p: Part): string | undefined {
  switch (p.type) {
    case "text":
      return p.text;
    case "reasoning":
      return undefined;
    case "toolCall":
      return `[tool call ${p.name}] ${clip(p.argumentsText, CLIP_CALL)}`;
    case "toolResult": {
      const text = p.content
        .map((c) => (c.type === "text" ? c.text : `[attachment ${c.mediaType}]`))
        .join("\n");
      return `[tool result ${p.name}${p.isError ? " (error)" : ""}] ${clip(text, CLIP_RESULT)}`;
    }
    case "attachment":
      return `[attachment ${p.name ?? p.mediaType}${p.ref ? ` ${p.ref}` : ""}]`;
    case "code":
      return `[${p.language} cell]\n${clip(p.source, CLIP_CALL)}`;
    case "output":
      return `[output] ${clip(p.text, CLIP_RESULT)}`;
    case "error":
      return `[error] ${p.message}`;
  }
}

/** One message as transcript text (reasoning left out, long tool text clipped). */
export function renderMessage(m: Message): string {
  const body = m.parts.flatMap((p) => {
    const r = renderPart(p);
    return r === undefined || r === "" ? [] : [r];
  });
  return `[${m.role}] ${body.join("\n")}`;
}

/**
 * The transcript cut into chunks of at most `budget` estimated tokens, in order (a block
 * bigger than a whole chunk is cut to fit).
 */
export function chunkTranscript(messages: readonly Message[], budget: number): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const m of messages) {
    let block = renderMessage(m);
    let t = textTokens(block) + 2;
    if (t > budget) {
      block = clip(block, Math.max(0, budget * 4 - 200));
      t = textTokens(block) + 2;
    }
    if (size + t > budget && current.length > 0) {
      chunks.push(current.join("\n\n"));
      current = [];
      size = 0;
    }
    current.push(block);
    size += t;
  }
  if (current.length > 0) chunks.push(current.join("\n\n"));
  return chunks;
}

/** What one summariser stage records in the journal. */
const StageResult = Schema.Struct({ text: Schema.String, usage: Usage });
type StageResult = typeof StageResult.Type;

/** What a compaction in a turn needs from the host. */
export interface CompactionRun {
  readonly journal: Journal;
  readonly ids: { readonly sessionId: string; readonly turnId: string };
  readonly provider: LlmProvider;
  readonly model: string;
  /** The summariser's context window and output cap. */
  readonly window: number;
  readonly maxOutput: number;
  readonly safetyMargin?: number | undefined;
  readonly signal: AbortSignal;
  readonly trigger: "threshold" | "manual";
  readonly instructions?: string | undefined;
  /** Told when each stage starts (published on the turn's activity stream). */
  readonly onStage?: (stage: number, stages: number, replayed: boolean) => void;
  /** A compaction between model rounds of a turn: the round before whose model call it runs (its journal keys). */
  readonly round?: number | undefined;
}

/** Replay key of stage `n` of the turn's compaction. */
export const stageKey = (ids: { readonly sessionId: string; readonly turnId: string }, n: number) =>
  `${ids.sessionId}:${ids.turnId}:0:compact:${n}`;

/** Replay key of the turn's decision to compact (a resumed turn compacts only when this is recorded). */
export const planKey = (ids: { readonly sessionId: string; readonly turnId: string }) =>
  `${ids.sessionId}:${ids.turnId}:0:compactPlan:0`;

/** Replay key of stage `n` of a compaction between model rounds, before round `round`'s model call. */
export const midStageKey = (
  ids: { readonly sessionId: string; readonly turnId: string },
  round: number,
  n: number,
) => `${ids.sessionId}:${ids.turnId}:${round}:compactMid:${n}`;

/** Replay key of the decision to compact before round `round`'s model call (its outcome: the cut). */
export const midPlanKey = (ids: { readonly sessionId: string; readonly turnId: string }, round: number) =>
  `${ids.sessionId}:${ids.turnId}:${round}:compactMidPlan:0`;

export const CompactionPlan = Schema.Struct({
  trigger: Schema.Literal("threshold", "manual"),
  instructions: Schema.optional(Schema.String),
});
export type CompactionPlan = typeof CompactionPlan.Type;

const callSummariser = (provider: LlmProvider, request: LlmRequest, signal: AbortSignal) =>
  Effect.gen(function* () {
    const acc = new ResponseAccumulator();
    const r = yield* Effect.either(callOf(provider.stream(request))((e) => acc.push(e), { signal }));
    if (r._tag === "Left")
      return yield* Effect.fail(
        new CompactionFailed({ message: `the summariser call failed: ${r.left.message}` }),
      );
    if (signal.aborted) return yield* Effect.fail(new CompactionFailed({ message: "cancelled by the user" }));
    const res = acc.result();
    const text = res.parts
      .flatMap((p) => (p.type === "text" ? [p.text] : []))
      .join("")
      .trim();
    if (res.stopReason !== "stop" && res.stopReason !== "outputLimit")
      return yield* Effect.fail(
        new CompactionFailed({
          message: `the summariser stopped with ${res.stopReason}${res.errorMessage ? `: ${res.errorMessage}` : ""}`,
        }),
      );
    if (!text)
      return yield* Effect.fail(new CompactionFailed({ message: "the summariser returned no text" }));
    return { text, usage: res.usage } satisfies StageResult;
  });

/**
 * Summarise `projected.span` (merged with the previous summary) in stages sized to the
 * summariser's window, each stage journaled; returns the compaction node's payload.
 */
export const compactSpan = (run: CompactionRun, projected: ProjectedHistory) =>
  Effect.gen(function* () {
    const span = projected.span;
    const first = span[0];
    const lastNode = span[span.length - 1];
    if (!first || !lastNode)
      return yield* Effect.fail(
        new CompactionFailed({ message: "there is nothing to compact since the last summary" }),
      );
    const messages = span.map((n) => n.payload as Message);
    const previous = projected.last?.payload.summary;
    const margin = run.safetyMargin ?? DEFAULT_MARGIN;
    const outputCap = Math.max(256, Math.min(run.maxOutput, Math.floor(run.window * 0.15)));
    const budget =
      Math.floor(run.window * (1 - margin)) -
      textTokens(COMPACTION_SYSTEM) -
      200 -
      outputCap -
      Math.max(outputCap, previous ? textTokens(previous) : 0);
    if (budget < 200)
      return yield* Effect.fail(
        new CompactionFailed({
          message: `the summariser's context window (${run.window} tokens) is too small to summarise in stages: give it at least ${Math.ceil((textTokens(COMPACTION_SYSTEM) + 400 + 2 * outputCap) / (1 - margin)) + 1} tokens (--context-window, or a summariser model with a larger window: compaction.model)`,
        }),
      );
    const chunks = chunkTranscript(messages, budget);
    let summary = previous;
    const usage: { input?: number; output?: number } = {};
    for (let i = 0; i < chunks.length; i++) {
      const stage = i + 1;
      const request: LlmRequest = {
        model: run.model,
        system: COMPACTION_SYSTEM,
        messages: [
          {
            id: `compact.${stage}`,
            role: "user",
            parts: [
              {
                type: "text",
                text: stagePrompt({
                  previous: summary,
                  transcript: chunks[i]!,
                  stage,
                  stages: chunks.length,
                  instructions: run.instructions,
                }),
              },
            ],
          },
        ],
        tools: [],
        maxOutput: outputCap,
      };
      const envelope = { kind: "compact", stage, request: sha256Hex(canonicalJson(request)) };
      const done = yield* run.journal.once(
        run.ids,
        run.round === undefined ? stageKey(run.ids, stage) : midStageKey(run.ids, run.round, stage),
        envelope,
        Effect.suspend(() => {
          run.onStage?.(stage, chunks.length, false);
          return callSummariser(run.provider, request, run.signal);
        }),
        StageResult,
      );
      if (done.replayed) run.onStage?.(stage, chunks.length, true);
      summary = done.value.text;
      if (done.value.usage.input !== undefined) usage.input = (usage.input ?? 0) + done.value.usage.input;
      if (done.value.usage.output !== undefined) usage.output = (usage.output ?? 0) + done.value.usage.output;
    }
    let tokensBefore = 0;
    for (const m of projected.history) tokensBefore += messageTokens(m);
    const final = summary ?? "";
    return {
      type: "compaction",
      firstNodeId: first.id,
      lastNodeId: lastNode.id,
      replaced: span.length,
      ...(projected.last ? { previous: projected.last.nodeId } : {}),
      summary: final,
      model: run.model,
      tokensBefore,
      tokensAfter: messageTokens(summaryMessage("x", final)),
      stages: chunks.length,
      trigger: run.trigger,
      ...(run.instructions ? { instructions: run.instructions } : {}),
      usage,
    } satisfies CompactionPayload;
  });
