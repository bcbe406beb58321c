import type { LlmError, LlmEvent, LlmProvider, LlmRequest, Message } from "@lash/sansio";
import { Chunk, Effect, Either, Stream } from "effect";

export interface Outcome {
  readonly events: LlmEvent[];
  readonly error?: LlmError;
}

/** Runs a provider stream to the end, keeping the events and the failure. */
export function run(provider: LlmProvider, request: LlmRequest): Promise<Outcome> {
  return Effect.runPromise(
    Effect.gen(function* () {
      const events: LlmEvent[] = [];
      const r = yield* Stream.runForEach(provider.stream(request), (e) =>
        Effect.sync(() => events.push(e)),
      ).pipe(Effect.either);
      return Either.isLeft(r) ? { events, error: r.left } : { events };
    }),
  );
}

export function collect(provider: LlmProvider, request: LlmRequest): Promise<LlmEvent[]> {
  return Effect.runPromise(Stream.runCollect(provider.stream(request)).pipe(Effect.map(Chunk.toArray)));
}

export type NormEvent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "reasoningEnd" }
  | { type: "toolCallStart"; id: string; name: string }
  | { type: "args"; id: string; text: string }
  | { type: "toolCallEnd"; id: string }
  | { type: "usage"; usage: unknown }
  | { type: "finish"; reason: string }
  | { type: "retry"; kind: string }
  | { type: "attemptReset" };

/**
 * Normalized view of an event stream: consecutive deltas coalesced, vendor replay
 * data dropped, and (reader semantics) everything a failed attempt streamed removed
 * at its `attemptReset`.
 */
export function normalize(events: readonly LlmEvent[]): NormEvent[] {
  const out: NormEvent[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    switch (e.type) {
      case "textDelta":
        if (last?.type === "text") last.text += e.text;
        else out.push({ type: "text", text: e.text });
        break;
      case "reasoningDelta":
        if (last?.type === "reasoning") last.text += e.text;
        else out.push({ type: "reasoning", text: e.text });
        break;
      case "reasoningEnd":
        out.push({ type: "reasoningEnd" });
        break;
      case "toolCallStart":
        out.push({ type: "toolCallStart", id: e.id, name: e.name });
        break;
      case "toolCallArgsDelta":
        if (last?.type === "args" && last.id === e.id) last.text += e.delta;
        else out.push({ type: "args", id: e.id, text: e.delta });
        break;
      case "toolCallEnd":
        out.push({ type: "toolCallEnd", id: e.id });
        break;
      case "usage":
        out.push({ type: "usage", usage: e.usage });
        break;
      case "finish":
        out.push({ type: "finish", reason: e.reason });
        break;
      case "retry":
        out.push({ type: "retry", kind: e.error.kind });
        break;
      case "attemptReset": {
        const keep = out.filter((x) => x.type === "retry" || x.type === "attemptReset");
        out.length = 0;
        out.push(...keep, { type: "attemptReset" });
        break;
      }
    }
  }
  return out;
}

export function userText(text: string, id = "u1"): Message {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

export function request(
  model: string,
  messages: Message[] = [userText("hi")],
  extra: Partial<LlmRequest> = {},
): LlmRequest {
  return {
    model,
    messages,
    tools: [
      {
        name: "read_file",
        description: "Read a file",
        inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      },
    ],
    ...extra,
  };
}
