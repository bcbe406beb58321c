import type { LlmErrorInfo, LlmEvent, LlmProvider, LlmRequest, StopReason } from "@lash/sansio";
import { callOf, LlmError, withCall } from "@lash/sansio";
import * as Chunk from "effect/Chunk";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Stream from "effect/Stream";
import type { MockReply } from "./reply.ts";
import { argsText, defaultStatus, errorCodeOf, finishOf, reasoningOf, splitText } from "./reply.ts";

/** A step of a scripted provider: explicit events (optionally ending in an error), or an abstract reply. */
export type ScriptStep =
  | { readonly events: readonly LlmEvent[]; readonly error?: LlmError | LlmErrorInfo }
  | MockReply;

export type Script = readonly ScriptStep[] | ((request: LlmRequest, index: number) => ScriptStep);

export interface ScriptedProviderOptions {
  /** Provider name (default `scripted`); also the `replay.provider` of scripted reasoning. */
  readonly name?: string;
  /** Replay the list in a loop instead of failing when it runs out. */
  readonly loop?: boolean;
}

const finishReason: Record<string, StopReason> = {
  stop: "stop",
  toolUse: "toolUse",
  outputLimit: "outputLimit",
  contentFilter: "contentFilter",
};

const kindOf: Record<string, LlmErrorInfo["kind"]> = {
  badRequest: "badRequest",
  auth: "auth",
  permission: "permission",
  notFound: "notFound",
  rateLimit: "rateLimited",
  quota: "rateLimited",
  overloaded: "overloaded",
  server: "server",
  contextOverflow: "contextOverflow",
};

/** The normalized events a real adapter would produce for an abstract reply. */
export function replyEvents(reply: MockReply, provider: string, index: number): LlmEvent[] {
  const out: LlmEvent[] = [];
  const r = reasoningOf(reply.reasoning);
  if (r) {
    if (!r.redacted)
      for (const t of splitText(r.text, r.chunks)) if (t) out.push({ type: "reasoningDelta", text: t });
    out.push({
      type: "reasoningEnd",
      replay: {
        provider,
        ...(r.signature !== undefined ? { signature: r.signature } : {}),
        ...(r.encrypted !== undefined ? { encrypted: r.encrypted } : {}),
        ...(r.redacted ? { redacted: true } : {}),
      },
    });
  }
  if (reply.text !== undefined)
    for (const t of splitText(reply.text, reply.textChunks)) if (t) out.push({ type: "textDelta", text: t });
  (reply.toolCalls ?? []).forEach((c, i) => {
    const id = c.id ?? `call_scripted_${index}_${i}`;
    out.push({ type: "toolCallStart", id, name: c.name });
    for (const d of splitText(argsText(c.arguments), c.chunks))
      if (d) out.push({ type: "toolCallArgsDelta", id, delta: d });
    out.push({ type: "toolCallEnd", id });
  });
  if (reply.usage) out.push({ type: "usage", usage: { ...reply.usage } });
  out.push({ type: "finish", reason: finishReason[finishOf(reply)] ?? "stop" });
  return out;
}

function replyError(reply: MockReply, provider: string): LlmError | undefined {
  const e = reply.error;
  if (!e) return undefined;
  const code = errorCodeOf(e);
  const status = e.status ?? defaultStatus[code];
  const kind = kindOf[code] ?? "unknown";
  const retryable = kind === "rateLimited" ? code !== "quota" : kind === "overloaded" || kind === "server";
  return new LlmError({
    kind,
    message: e.message ?? `scripted ${code} error`,
    status,
    provider,
    retryable,
    ...(e.retryAfter !== undefined ? { retryAfterMs: e.retryAfter * 1000 } : {}),
  });
}

/**
 * An `LlmProvider` without HTTP for unit tests: plays back lists of `LlmEvent`s or
 * abstract `MockReply`s (errors, hangs and mid-stream resets included) and records
 * every request.
 */
export class ScriptedProvider implements LlmProvider {
  readonly name: string;
  /** Every request, in order. */
  readonly requests: LlmRequest[] = [];
  private readonly script: Script;
  private readonly loop: boolean;
  private next = 0;

  constructor(script: Script, options: ScriptedProviderOptions = {}) {
    this.script = script;
    this.name = options.name ?? "scripted";
    this.loop = options.loop ?? false;
  }

  /** Steps not yet played (list scripts only). */
  get remaining(): number {
    return typeof this.script === "function" ? Number.POSITIVE_INFINITY : this.script.length - this.next;
  }

  stream(request: LlmRequest): Stream.Stream<LlmEvent, LlmError> {
    const stream = Stream.suspend(() => this.play(request).stream());
    // the direct call: a plain reply is handed over at once, anything timed runs its stream
    return withCall(stream, (onEvent, options) =>
      Effect.suspend(() => {
        const played = this.play(request);
        if (!played.events) return callOf(played.stream())(onEvent, options);
        for (const e of played.events) onEvent(e);
        return played.error ? Effect.fail(played.error) : Effect.void;
      }),
    );
  }

  /** Takes the next step for `request` (recording it): plain events, or a stream for the timed cases. */
  private play(request: LlmRequest): {
    readonly events?: readonly LlmEvent[];
    readonly error?: LlmError;
    readonly stream: () => Stream.Stream<LlmEvent, LlmError>;
  } {
    const index = this.requests.length;
    this.requests.push(request);
    let step: ScriptStep | undefined;
    if (typeof this.script === "function") step = this.script(request, index);
    else {
      if (this.next >= this.script.length && this.loop && this.script.length > 0) this.next = 0;
      step = this.script[this.next++];
    }
    const plain = (events: readonly LlmEvent[], error?: LlmError) => ({
      events,
      ...(error ? { error } : {}),
      stream: () => {
        const s = Stream.fromChunk(Chunk.unsafeFromArray([...events]));
        return error ? Stream.concat(s, Stream.fail(error)) : s;
      },
    });
    if (!step)
      return plain(
        [],
        new LlmError({
          kind: "badRequest",
          message: `ScriptedProvider: no scripted step for request #${index}`,
          provider: this.name,
          retryable: false,
        }),
      );
    if ("events" in step) {
      const err = step.error;
      return plain(step.events, err ? (err instanceof LlmError ? err : new LlmError(err)) : undefined);
    }
    const reply = step;
    if (reply.hang) return { stream: () => Stream.never };
    const error = replyError(reply, this.name);
    if (error) return plain([], error);
    let events = replyEvents(reply, this.name, index);
    if (reply.truncate) events = events.filter((e) => e.type !== "finish");
    if (reply.hangAfterChunks !== undefined) {
      const first = events.slice(0, reply.hangAfterChunks);
      return { stream: () => Stream.concat(Stream.fromIterable(first), Stream.never) };
    }
    if (reply.resetAfterChunks !== undefined)
      return plain(
        events.slice(0, reply.resetAfterChunks),
        new LlmError({
          kind: "network",
          message: "scripted connection reset",
          provider: this.name,
          retryable: true,
        }),
      );
    const delay = reply.chunkDelayMs;
    if (!delay) return plain(events);
    return {
      stream: () =>
        Stream.fromChunk(Chunk.unsafeFromArray(events)).pipe(
          Stream.tap(() => Effect.sleep(Duration.millis(delay))),
        ),
    };
  }
}
