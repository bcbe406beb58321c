// Server-sent events: `id: <seq>\nevent: <type>\ndata: <json ServerEvent>\n\n`, a keepalive
// comment every 15 s, the cursor from `Last-Event-ID` (wins) or `?after=`.
import { HttpServerResponse } from "@effect/platform";
import { Effect, Schedule, Stream } from "effect";
import type { ServerEvent } from "./api.ts";
import type { MetricsShape } from "./services.ts";

const encoder = new TextEncoder();

/** One event in the SSE wire format. */
export const sseFrame = (e: ServerEvent): string =>
  `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ seq: e.seq, sessionId: e.sessionId, runId: e.runId, type: e.type, at: e.at, data: e.data })}\n\n`;

export const KEEPALIVE_MS = 15_000;

/**
 * The cursor of a stream request: the `Last-Event-ID` header wins over `?after=`; 0 (from
 * the start) without either. `undefined` for a value that is not a non-negative integer.
 */
export function sseCursor(lastEventId: string | undefined, after: number | undefined): number | undefined {
  if (lastEventId !== undefined && lastEventId.trim() !== "") {
    const n = Number(lastEventId.trim());
    return Number.isInteger(n) && n >= 0 ? n : undefined;
  }
  if (after === undefined) return 0;
  return Number.isInteger(after) && after >= 0 ? after : undefined;
}

/**
 * A `text/event-stream` response of `events`, with keepalive comments until it ends.
 * `metrics` (optional) counts the open streams; `dropped` tells whether the stream ended
 * because its reader fell behind.
 */
export function sseResponse(
  events: Stream.Stream<ServerEvent>,
  options: { readonly metrics?: MetricsShape; readonly dropped?: () => boolean } = {},
): HttpServerResponse.HttpServerResponse {
  const frames = events.pipe(Stream.map(sseFrame));
  const keepalive = Stream.repeatEffectWithSchedule(
    Effect.succeed(": keepalive\n\n"),
    Schedule.spaced(KEEPALIVE_MS),
  ).pipe(Stream.drop(1));
  const body = Stream.make(": stream\n\n").pipe(
    Stream.concat(Stream.merge(frames, keepalive, { haltStrategy: "left" })),
    Stream.map((s) => encoder.encode(s)),
    Stream.onStart(Effect.sync(() => options.metrics?.sseOpened())),
    Stream.ensuring(Effect.sync(() => options.metrics?.sseClosed(options.dropped?.() ?? false))),
  );
  return HttpServerResponse.stream(body, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}
