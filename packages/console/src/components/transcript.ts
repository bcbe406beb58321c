// A run's events folded into what a person reads: the assistant's text (streamed deltas
// joined; a retried attempt's partial text dropped), tool calls as cards (name, arguments,
// result, state), approvals, errors and the run's end — the same projection the TUI makes.
import type { ServerEvent } from "@lash/client";

export interface ToolItem {
  readonly kind: "tool";
  readonly callId: string;
  readonly name: string;
  readonly args: unknown;
  readonly state: "running" | "done" | "error";
  readonly result?: string;
  readonly durationMs?: number;
}

export type Item =
  | { readonly kind: "user"; readonly text: string }
  | { readonly kind: "assistant"; readonly text: string; readonly streaming: boolean }
  | { readonly kind: "reasoning"; readonly text: string }
  | ToolItem
  | {
      readonly kind: "approval";
      readonly requestId: string;
      readonly tools: readonly string[];
      readonly resolved?: string;
    }
  | { readonly kind: "notice"; readonly text: string; readonly error?: boolean };

export interface Transcript {
  readonly items: readonly Item[];
  /** The run's final state once its `runFinished` arrived. */
  readonly finished?: string;
}

type D = Record<string, unknown>;

const textOfContent = (content: unknown): string =>
  Array.isArray(content)
    ? content
        .map((c: D) => (c.type === "text" ? String(c.text ?? "") : c.type === "image" ? "[image]" : ""))
        .join("")
    : typeof content === "string"
      ? content
      : JSON.stringify(content);

/** Add one event to a transcript (returns a new one; the input is not changed). */
export function fold(t: Transcript, event: ServerEvent): Transcript {
  const d = (event.data ?? {}) as D;
  const items = [...t.items];
  const last = items[items.length - 1];
  const replaceLast = (item: Item) => {
    items[items.length - 1] = item;
  };
  switch (event.type) {
    case "turnStarted": {
      const input = (d.input as { role?: string; parts?: unknown }[] | undefined) ?? [];
      for (const m of input)
        if (m.role === "user") items.push({ kind: "user", text: textOfContent(m.parts) });
      break;
    }
    case "textDelta": {
      const text = String(d.text ?? "");
      if (last?.kind === "assistant" && last.streaming) replaceLast({ ...last, text: last.text + text });
      else items.push({ kind: "assistant", text, streaming: true });
      break;
    }
    case "reasoningDelta": {
      const text = String(d.text ?? "");
      if (last?.kind === "reasoning") replaceLast({ ...last, text: last.text + text });
      else items.push({ kind: "reasoning", text });
      break;
    }
    case "attemptReset": {
      // the provider retries: the partial text of the failed attempt is not the answer
      while (items.length > 0) {
        const tail = items[items.length - 1]!;
        if ((tail.kind === "assistant" && tail.streaming) || tail.kind === "reasoning") items.pop();
        else break;
      }
      items.push({ kind: "notice", text: `The model call is retried (attempt ${String(d.attempt)}).` });
      break;
    }
    case "llmResponse":
      if (last?.kind === "assistant" && last.streaming) replaceLast({ ...last, streaming: false });
      break;
    case "toolStarted":
      items.push({
        kind: "tool",
        callId: String(d.callId),
        name: String(d.name),
        args: d.args,
        state: "running",
      });
      break;
    case "toolCompleted": {
      const i = items.findIndex((x) => x.kind === "tool" && x.callId === d.callId);
      const done: ToolItem = {
        kind: "tool",
        callId: String(d.callId),
        name: String(d.name),
        args: i >= 0 ? (items[i] as ToolItem).args : undefined,
        state: d.isError === true ? "error" : "done",
        result: textOfContent(d.content),
        durationMs: Number(d.durationMs ?? 0),
      };
      if (i >= 0) items[i] = done;
      else items.push(done);
      break;
    }
    case "approvalRequested":
      items.push({
        kind: "approval",
        requestId: String(d.requestId),
        tools: ((d.items as D[] | undefined) ?? []).map((x) => String(x.tool)),
      });
      break;
    case "approvalResolved": {
      const i = items.findIndex((x) => x.kind === "approval" && x.requestId === d.requestId);
      const decisions = ((d.decisions as D[] | undefined) ?? []).map((x) => String(x.decision));
      const resolved = `${decisions.join(", ") || "answered"} by ${String(d.by)}`;
      if (i >= 0) items[i] = { ...(items[i] as Item & { kind: "approval" }), resolved };
      break;
    }
    case "error":
      items.push({ kind: "notice", text: String(d.message), error: true });
      break;
    case "plugin": {
      const to = handoffTarget(event);
      if (to !== undefined)
        items.push({
          kind: "notice",
          text: `The history no longer fit the model's context window: the conversation continues in session ${to}, which starts from a summary of it.`,
        });
      break;
    }
    case "runQueued": {
      const moved = d.handoff as { from?: string; to?: string } | undefined;
      if (moved?.to !== undefined)
        items.push({
          kind: "notice",
          text: `Session ${String(moved.from)} handed off: this message runs in its successor ${moved.to}.`,
        });
      break;
    }
    case "runResumed":
      items.push({ kind: "notice", text: "The daemon restarted and resumed this run." });
      break;
    case "runFinished": {
      if (last?.kind === "assistant" && last.streaming) replaceLast({ ...last, streaming: false });
      const state = String(d.state ?? "finished");
      const error = d.error as { message?: string } | undefined;
      if (error?.message) items.push({ kind: "notice", text: error.message, error: true });
      return { items, finished: state };
    }
    default:
      break;
  }
  return { ...t, items };
}

/**
 * The session a conversation continues in after this event: the successor named by a handoff
 * (`compaction.strategy: "handoff"`: the run's turn moved to a new session with a fresh window).
 */
export function handoffTarget(event: ServerEvent): string | undefined {
  const d = (event.data ?? {}) as D;
  if (event.type !== "plugin" || d.plugin !== "compaction" || d.name !== "handoff") return undefined;
  const to = (d.data as { to?: unknown } | undefined)?.to;
  return typeof to === "string" ? to : undefined;
}

export const emptyTranscript: Transcript = { items: [] };
