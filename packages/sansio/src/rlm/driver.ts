/**
 * The `rlm` protocol driver (reference §2.6): the model writes one Lashlang cell per response,
 * the host executes it (`startExec`), the observations go back into the next prompt, until the
 * model finishes with prose (natural termination) or with `finish <value>`.
 */
import type { ContextProjector, DriverAction, DriverContext, ProtocolDriver } from "../driver.ts";
import type { LlmResponse } from "../llm.ts";
import type { AttachmentPart, Message, Part, ToolResultPart } from "../message.ts";
import type { ExecResult, TurnEvent, TurnOutcome } from "../turn.ts";
import { type CellExtraction, CLOSE_TAG, extractCell, OPEN_TAG } from "./cell.ts";
import { FINISH_RECORD, historyItems, LASHLANG, renderHistory } from "./history.ts";
import { renderSystemPrompt, renderTail } from "./prompt.ts";
import { StreamMask } from "./stream-mask.ts";
import type { RlmEnvironment, RlmHistoryItem, RlmOperation } from "./types.ts";

export interface RlmDriverOptions {
  /** What the host knows about the session (termination, bound variables, budget). Default: natural, none. */
  readonly environment?: (ctx: DriverContext) => RlmEnvironment;
}

/** What an RLM executor may put in `ExecResult.details`. */
export interface RlmExecDetails {
  /** Records of the module operations the cell ran (kept in the graph, never shown to the model). */
  readonly toolCalls?: readonly ToolResultPart[];
  /** Images the cell printed. */
  readonly images?: readonly AttachmentPart[];
  /** Set when `finish` was called with a value that does not match the required schema. */
  readonly schemaErrors?: readonly string[];
}

/** The driver state carried from `startExec` to `onExecResult`. */
interface ExecState {
  readonly code: string;
}

const DEFAULT_ENVIRONMENT: RlmEnvironment = { termination: { kind: "natural" }, bindings: [] };

export const REPAIR_TEXT: Record<Extract<CellExtraction, { kind: "error" }>["error"], string> = {
  multipleCells: "Your last response contained more than one code block, so nothing was run.",
  trailingText: "Your last response had text after the closing tag, so nothing was run.",
  unclosedCell: `Your last response opened a ${OPEN_TAG} block but never closed it, so nothing was run.`,
};

export function repairMessage(error: Extract<CellExtraction, { kind: "error" }>["error"]): string {
  return `${REPAIR_TEXT[error]} Reply again using exactly one paired \`${OPEN_TAG}...${CLOSE_TAG}\` block, with no text after \`${CLOSE_TAG}\`.`;
}

export const FINISH_REMINDER =
  "This turn requires an explicit final value: prose does not end it. " +
  `Add a paired ${OPEN_TAG} block containing \`finish <value>\` (or continue working in a block).`;

export function schemaRepairMessage(errors: readonly string[]): string {
  return (
    `The \`finish\` value didn't match the required output schema:\n${errors.join("; ")}\n\n` +
    "Fix the value and call `finish <corrected>` from another paired block."
  );
}

export const EMPTY_RESPONSE = "Model returned no assistant text.";

function joinParts(parts: readonly Part[], type: "text" | "reasoning"): string {
  let out = "";
  for (const p of parts) if (p.type === type) out += (out && !out.endsWith("\n") ? "\n\n" : "") + p.text;
  return out;
}

const protocol = (name: string, data: unknown): DriverAction => ({
  type: "emit",
  event: { type: "protocol", name, data } satisfies TurnEvent,
});

function systemMessage(ctx: DriverContext, text: string): Message {
  return { id: ctx.messageId(), role: "system", parts: [{ type: "text", text }] };
}

function continueOrStop(
  ctx: DriverContext,
  env: RlmEnvironment,
  messages: readonly Message[],
): DriverAction[] {
  const actions: DriverAction[] = [{ type: "append", messages }];
  const max = ctx.config.maxTurns;
  if (env.termination.kind === "finishRequired" && max !== undefined && ctx.iteration + 1 >= max) {
    actions.push({
      type: "finish",
      outcome: {
        type: "stopped",
        reason: "maxTurns",
        message: `the turn reached its limit of ${max} model calls without a finish value`,
      },
    });
    return actions;
  }
  actions.push(
    { type: "advance" },
    { type: "startCheckpoint", checkpoint: "afterWork", onEmpty: { type: "prepareIteration" } },
  );
  return actions;
}

function details(result: ExecResult): RlmExecDetails {
  const d = result.details;
  return d !== null && typeof d === "object" ? (d as RlmExecDetails) : {};
}

/** The `rlm` driver. `environment` is read every iteration (it must be deterministic for replay). */
export function rlmDriver(options: RlmDriverOptions = {}): ProtocolDriver {
  const environment = options.environment ?? (() => DEFAULT_ENVIRONMENT);
  return {
    name: "rlm",
    streamMask: () => new StreamMask(),

    prepareIteration(ctx) {
      const env = environment(ctx);
      if (env.firing !== undefined && ctx.iteration === 0) {
        // a trigger firing: the host's cell runs at once; no model call
        const message: Message = {
          id: ctx.messageId(),
          role: "assistant",
          parts: [{ type: "code", language: LASHLANG, source: env.firing }],
        };
        return [
          protocol("rlm.diagnostic", { iteration: ctx.iteration, classification: "trigger_firing" }),
          { type: "append", messages: [message] },
          {
            type: "startExec",
            language: LASHLANG,
            code: env.firing,
            state: { code: env.firing } satisfies ExecState,
          },
        ];
      }
      const base = ctx.project(false);
      let size = (base.system ?? "").length;
      for (const m of base.messages) for (const p of m.parts) if (p.type === "text") size += p.text.length;
      const tail = renderTail({
        iteration: ctx.iteration + 1,
        environment: env,
        historyCount: historyItems(ctx.messages).length,
        finalNotice: ctx.finalNotice,
        ...(ctx.config.maxTurns !== undefined ? { maxTurns: ctx.config.maxTurns } : {}),
        tokens: Math.ceil(size / 4),
      });
      const tailMessage: Message = {
        id: `${ctx.config.turnId}.rlm.tail.${ctx.iteration}`,
        role: "user",
        parts: [{ type: "text", text: tail }],
      };
      return [{ type: "startLlm", request: { ...base, messages: [...base.messages, tailMessage] } }];
    },

    onLlmResponse(ctx, response: LlmResponse) {
      const env = environment(ctx);
      const text = joinParts(response.parts, "text");
      const reasoningParts = response.parts.filter((p) => p.type === "reasoning");
      const reasoning = joinParts(response.parts, "reasoning");
      if (text.trim() === "" && reasoning.trim() === "") {
        return [
          protocol("rlm.diagnostic", { iteration: ctx.iteration, classification: "empty_response" }),
          {
            type: "emit",
            event: { type: "error", message: EMPTY_RESPONSE, kind: "emptyResponse", retryable: false },
          },
          { type: "finish", outcome: { type: "stopped", reason: "providerError", message: EMPTY_RESPONSE } },
        ];
      }
      const cell = extractCell(text);
      if (cell.kind === "error") {
        const raw: Message = {
          id: ctx.messageId(),
          role: "assistant",
          parts: [...reasoningParts, { type: "text", text }],
        };
        return [
          protocol("rlm.diagnostic", {
            iteration: ctx.iteration,
            classification: "invalid_lashlang_cell",
            error: cell.error,
          }),
          ...continueOrStop(ctx, env, [raw, systemMessage(ctx, repairMessage(cell.error))]),
        ];
      }
      const proseParts: Part[] = cell.prose ? [{ type: "text", text: cell.prose }] : [];
      if (cell.kind === "none") {
        const message: Message = {
          id: ctx.messageId(),
          role: "assistant",
          parts: [...reasoningParts, ...proseParts],
        };
        if (env.termination.kind === "finishRequired") {
          return [
            protocol("rlm.diagnostic", { iteration: ctx.iteration, classification: "request_finish" }),
            ...continueOrStop(ctx, env, [message, systemMessage(ctx, FINISH_REMINDER)]),
          ];
        }
        return [
          protocol("rlm.diagnostic", { iteration: ctx.iteration, classification: "finish_prose" }),
          {
            type: "startCheckpoint",
            checkpoint: "beforeCompletion",
            onEmpty: {
              type: "finish",
              outcome: { type: "finished", finish: { kind: "assistantMessage", text: cell.prose } },
              messages: message.parts.length > 0 ? [message] : [],
            },
          },
        ];
      }
      const message: Message = {
        id: ctx.messageId(),
        role: "assistant",
        parts: [...reasoningParts, ...proseParts, { type: "code", language: LASHLANG, source: cell.code }],
      };
      return [
        protocol("rlm.diagnostic", { iteration: ctx.iteration, classification: "execute_lashlang" }),
        { type: "append", messages: [message] },
        {
          type: "startExec",
          language: LASHLANG,
          code: cell.code,
          state: { code: cell.code } satisfies ExecState,
        },
      ];
    },

    onToolResults() {
      return [
        {
          type: "finish",
          outcome: {
            type: "stopped",
            reason: "runtimeError",
            message: "the rlm protocol does not run native tool calls",
          },
        },
      ];
    },

    onExecResult(ctx, result: ExecResult, state: unknown) {
      const env = environment(ctx);
      const d = details(result);
      const code = (state as ExecState | undefined)?.code ?? "";
      const schemaErrors =
        result.finished && d.schemaErrors && d.schemaErrors.length > 0 ? d.schemaErrors : undefined;
      const finalValue = result.finished && !schemaErrors ? { value: result.finalValue ?? null } : undefined;
      const error = schemaErrors ? schemaErrors.join("; ") : result.error;
      const parts: Part[] = [...(d.toolCalls ?? [])];
      for (const text of result.output) parts.push({ type: "output", text });
      for (const image of d.images ?? []) parts.push(image);
      if (error !== undefined)
        parts.push({ type: "error", message: error, code: schemaErrors ? "finish_schema" : LASHLANG });
      if (finalValue)
        parts.push({
          type: "toolResult",
          callId: `${ctx.config.turnId}.i${ctx.iteration}.finish`,
          name: FINISH_RECORD,
          content: [{ type: "text", text: JSON.stringify(finalValue.value, null, 2) ?? "null" }],
          isError: false,
          value: finalValue.value,
        });
      const observation: Message = { id: ctx.messageId(), role: "tool", parts };
      const trajectory = protocol("rlm.trajectory", {
        id: `lashlang_step_${ctx.iteration}`,
        iteration: ctx.iteration,
        code,
        output: result.output,
        images: (d.images ?? []).length,
        toolCalls: (d.toolCalls ?? []).length,
        ...(error !== undefined ? { error } : {}),
        ...(finalValue ? { final_output: finalValue.value } : {}),
      });

      const control = result.control;
      if (control) {
        const outcome: TurnOutcome =
          control.type === "frameSwitch"
            ? {
                type: "frameSwitch",
                frameId: control.frameId,
                task: control.task,
                ...(control.seed !== undefined ? { seed: control.seed } : {}),
              }
            : { type: "finished", finish: { kind: "toolValue", toolName: "lashlang", value: control.value } };
        return [trajectory, { type: "append", messages: [observation] }, { type: "finish", outcome }];
      }
      if (finalValue) {
        return [
          trajectory,
          { type: "append", messages: [observation] },
          {
            type: "startCheckpoint",
            checkpoint: "beforeCompletion",
            onEmpty: {
              type: "finish",
              outcome: { type: "finished", finish: { kind: "finalValue", value: finalValue.value } },
            },
          },
        ];
      }
      if (env.firing !== undefined && ctx.iteration === 0)
        // a trigger firing's cell that did not finish: the run ends with its error (no model call)
        return [
          trajectory,
          { type: "append", messages: [observation] },
          {
            type: "finish",
            outcome: {
              type: "stopped",
              reason: "runtimeError",
              message: `the trigger firing's cell did not finish: ${error ?? "no finish value"}`,
            },
          },
        ];
      const messages: Message[] = [observation];
      if (schemaErrors) messages.push(systemMessage(ctx, schemaRepairMessage(schemaErrors)));
      return [trajectory, ...continueOrStop(ctx, env, messages)];
    },
  };
}

export interface RlmProjectorOptions {
  /** The operations Lashlang can call (tool catalog + executor built-ins). */
  readonly operations: () => readonly RlmOperation[];
  /** Read-only projected names (default `history`). */
  readonly readOnly?: () => readonly string[];
  /** The value of a host-projected name (shown in the prompt as a preview), undefined for `history`. */
  readonly describeReadOnly?: (name: string) => unknown;
  /** Called with the `history` items each time a request is projected (the executor binds them). */
  readonly onHistory?: (items: readonly RlmHistoryItem[]) => void;
}

/**
 * The RLM projection: system prompt = host text + execution section + tool catalog + read-only
 * variables; messages = the frame's history in emission format; no native tools. The driver
 * appends the per-iteration tail.
 */
export function rlmProjector(options: RlmProjectorOptions): ContextProjector {
  return (view) => {
    const { config } = view;
    options.onHistory?.(historyItems(view.messages));
    return {
      model: config.model,
      system: renderSystemPrompt(
        view.system,
        options.operations(),
        options.readOnly?.() ?? ["history"],
        options.describeReadOnly,
      ),
      messages: renderHistory(view.messages),
      tools: [],
      ...(config.maxOutput !== undefined ? { maxOutput: config.maxOutput } : {}),
      ...(config.reasoning !== undefined ? { reasoning: config.reasoning } : {}),
      ...(config.cache !== undefined ? { cache: config.cache } : {}),
    };
  };
}
