import type { DriverAction, DriverContext, ProtocolDriver } from "./driver.ts";
import type { LlmResponse } from "./llm.ts";
import { responseText } from "./machine.ts";
import type { Message, ToolCallPart, ToolResultPart } from "./message.ts";
import type { CompletedToolCall, PendingToolCall } from "./turn.ts";

/** Parse a tool call's argument text. Empty text means `{}`; anything but a JSON object is an error. */
export function parseToolCall(part: ToolCallPart): PendingToolCall {
  const ids = { callId: part.id, ...(part.lashCallId !== undefined ? { lashCallId: part.lashCallId } : {}) };
  const text = part.argumentsText.trim();
  if (text === "") return { ...ids, name: part.name, args: {} };
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (error) {
    return {
      ...ids,
      name: part.name,
      args: {},
      argsError: `the argument text is not valid JSON (${(error as Error).message})`,
    };
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return { ...ids, name: part.name, args: {}, argsError: "the arguments must be a JSON object" };
  }
  return { ...ids, name: part.name, args };
}

export function toolResultPart(result: CompletedToolCall): ToolResultPart {
  return {
    type: "toolResult",
    callId: result.callId,
    ...(result.lashCallId !== undefined ? { lashCallId: result.lashCallId } : {}),
    name: result.name,
    content: result.content,
    isError: result.isError,
    ...(result.full !== undefined ? { full: result.full } : {}),
    ...(result.value !== undefined ? { value: result.value } : {}),
    ...(result.details !== undefined ? { details: result.details } : {}),
  };
}

function endsWithToolResult(messages: readonly Message[]): boolean {
  const last = messages[messages.length - 1];
  return last?.parts.some((p) => p.type === "toolResult") ?? false;
}

/** The `standard` protocol: native tool calling. */
export const standardDriver: ProtocolDriver = {
  name: "standard",

  prepareIteration(ctx: DriverContext): readonly DriverAction[] {
    return [{ type: "startLlm", request: ctx.project(!ctx.finalNotice) }];
  },

  onLlmResponse(ctx: DriverContext, response: LlmResponse): readonly DriverAction[] {
    if (response.parts.some((p) => p.type === "toolCall")) {
      // every call gets lash's own id, unique in the session whatever ids the provider reuses
      const id = ctx.messageId();
      const calls: ToolCallPart[] = [];
      const parts = response.parts.map((p) => {
        if (p.type !== "toolCall") return p;
        const call: ToolCallPart = { ...p, lashCallId: `${id}.c${calls.length}` };
        calls.push(call);
        return call;
      });
      return [
        { type: "append", messages: [{ id, role: "assistant", parts }] },
        { type: "startTools", calls: calls.map(parseToolCall) },
      ];
    }
    const text = responseText(response);
    const parts = response.parts.filter((p) => p.type === "text" || p.type === "reasoning");
    const draft: Message[] = parts.length > 0 ? [{ id: ctx.messageId(), role: "assistant", parts }] : [];
    if (text.trim() !== "" || endsWithToolResult(ctx.messages)) {
      return [
        {
          type: "startCheckpoint",
          checkpoint: "beforeCompletion",
          onEmpty: {
            type: "finish",
            outcome: { type: "finished", finish: { kind: "assistantMessage", text } },
            messages: draft,
          },
        },
      ];
    }
    const message = "the model returned an empty response";
    return [
      { type: "emit", event: { type: "error", message, kind: "emptyResponse", retryable: false } },
      { type: "finish", outcome: { type: "stopped", reason: "providerError", message } },
    ];
  },

  onToolResults(ctx: DriverContext, _calls, results): readonly DriverAction[] {
    const actions: DriverAction[] = [
      {
        type: "append",
        messages: [{ id: ctx.messageId(), role: "tool", parts: results.map(toolResultPart) }],
      },
    ];
    for (const r of results) {
      if (r.isError || !r.control) continue;
      const c = r.control;
      actions.push({
        type: "finish",
        outcome:
          c.type === "finish"
            ? { type: "finished", finish: { kind: "toolValue", toolName: r.name, value: c.value } }
            : {
                type: "frameSwitch",
                frameId: c.frameId,
                task: c.task,
                ...(c.seed !== undefined ? { seed: c.seed } : {}),
              },
      });
      return actions;
    }
    actions.push(
      { type: "advance" },
      { type: "startCheckpoint", checkpoint: "afterWork", onEmpty: { type: "prepareIteration" } },
    );
    return actions;
  },

  onExecResult(): readonly DriverAction[] {
    return [
      {
        type: "finish",
        outcome: {
          type: "stopped",
          reason: "runtimeError",
          message: "the standard protocol does not execute code cells",
        },
      },
    ];
  },
};
