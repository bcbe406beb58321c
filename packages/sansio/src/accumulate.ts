import type { LlmEvent, LlmResponse, StopReason } from "./llm.ts";
import type { Part, ProviderReplay } from "./message.ts";
import type { Usage } from "./usage.ts";

type MutablePart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; replay?: ProviderReplay; closed: boolean }
  | { type: "toolCall"; id: string; name: string; argumentsText: string; replay?: ProviderReplay };

/**
 * Folds a stream of `LlmEvent`s into an `LlmResponse`. Pure; `attemptReset`
 * discards the failed attempt's parts and usage.
 */
export class ResponseAccumulator {
  private parts: MutablePart[] = [];
  private calls = new Map<string, Extract<MutablePart, { type: "toolCall" }>>();
  private usage: Usage = {};
  private stop: StopReason | undefined;
  private message: string | undefined;
  private responseId: string | undefined;
  private providerReason: string | undefined;

  push(event: LlmEvent): void {
    switch (event.type) {
      case "textDelta": {
        const last = this.parts[this.parts.length - 1];
        if (last?.type === "text") last.text += event.text;
        else this.parts.push({ type: "text", text: event.text });
        return;
      }
      case "reasoningDelta": {
        const last = this.parts[this.parts.length - 1];
        if (last?.type === "reasoning" && !last.closed) last.text += event.text;
        else this.parts.push({ type: "reasoning", text: event.text, closed: false });
        return;
      }
      case "reasoningEnd": {
        const last = this.parts[this.parts.length - 1];
        if (last?.type === "reasoning" && !last.closed) {
          last.closed = true;
          if (event.replay) last.replay = event.replay;
        } else {
          // A reasoning block with replay data but no visible text (redacted / encrypted-only).
          this.parts.push({
            type: "reasoning",
            text: "",
            closed: true,
            ...(event.replay ? { replay: event.replay } : {}),
          });
        }
        return;
      }
      case "toolCallStart": {
        const call = { type: "toolCall" as const, id: event.id, name: event.name, argumentsText: "" };
        this.calls.set(event.id, call);
        this.parts.push(call);
        return;
      }
      case "toolCallArgsDelta": {
        const call = this.calls.get(event.id);
        if (call) call.argumentsText += event.delta;
        return;
      }
      case "toolCallEnd": {
        const call = this.calls.get(event.id);
        if (call && event.replay) call.replay = event.replay;
        return;
      }
      case "usage":
        this.usage = event.usage;
        return;
      case "finish":
        this.stop = event.reason;
        this.message = event.message;
        this.responseId = event.responseId;
        this.providerReason = event.providerReason;
        return;
      case "attemptReset":
        this.parts = [];
        this.calls.clear();
        this.usage = {};
        this.stop = undefined;
        this.message = undefined;
        this.responseId = undefined;
        this.providerReason = undefined;
        return;
      case "retry":
        return;
    }
  }

  get finished(): boolean {
    return this.stop !== undefined;
  }

  result(): LlmResponse {
    const parts: Part[] = this.parts.map((p) => {
      if (p.type === "reasoning")
        return p.replay
          ? { type: "reasoning", text: p.text, replay: p.replay }
          : { type: "reasoning", text: p.text };
      if (p.type === "toolCall") {
        const { type, id, name, argumentsText, replay } = p;
        return replay ? { type, id, name, argumentsText, replay } : { type, id, name, argumentsText };
      }
      return { type: "text", text: p.text };
    });
    return {
      parts,
      usage: this.usage,
      stopReason: this.stop ?? "error",
      ...(this.responseId !== undefined ? { responseId: this.responseId } : {}),
      ...(this.providerReason !== undefined ? { providerReason: this.providerReason } : {}),
      ...(this.message !== undefined
        ? { errorMessage: this.message }
        : this.stop === undefined
          ? { errorMessage: "stream ended without a finish event" }
          : {}),
    };
  }
}

export function accumulate(events: Iterable<LlmEvent>): LlmResponse {
  const acc = new ResponseAccumulator();
  for (const e of events) acc.push(e);
  return acc.result();
}
