// SSE over the shared event log of a cluster (`lash serve --engine restate`): a session's (or
// one run's) events as every daemon of the cluster sees them, whichever worker runs the turn.
// The ids are the shared log's cursor, so a client reconnects to any daemon with
// `Last-Event-ID` and gets exactly the events after it. The log is read a page at a time as
// the client takes them (pull), so a slow client holds no buffer here.
import { HttpServerResponse } from "@effect/platform";
import { Duration, Effect, Stream } from "effect";
import type { ServerEvent } from "./api.ts";
import { sseFrame } from "./frame.ts";
import type { ClusterEngine, MetricsShape } from "./services.ts";
import { KEEPALIVE_MS } from "./sse.ts";

export interface ClusterSseOptions {
  readonly metrics?: MetricsShape;
  readonly keepaliveMs?: number;
}

/** The events of `sessionId` (of run `runId` when given; it ends after the run's `runFinished`) after `after`. */
export function clusterEvents(
  cluster: ClusterEngine,
  sessionId: string,
  after: number,
  runId: string | undefined,
): Stream.Stream<ServerEvent, unknown> {
  const all = cluster.follow(sessionId, after).pipe(Stream.map((e) => e as unknown as ServerEvent));
  return runId === undefined
    ? all
    : all.pipe(
        Stream.filter((e) => e.runId === runId),
        Stream.takeUntil((e) => e.type === "runFinished"),
      );
}

/** A `text/event-stream` response of `clusterEvents`, with a keepalive comment every 15 s. */
export function clusterSseResponse(
  cluster: ClusterEngine,
  sessionId: string,
  after: number,
  runId: string | undefined,
  options: ClusterSseOptions = {},
): HttpServerResponse.HttpServerResponse {
  const frames = clusterEvents(cluster, sessionId, after, runId).pipe(Stream.map(sseFrame));
  const keepalive = Stream.repeatEffect(
    Effect.as(Effect.sleep(Duration.millis(options.keepaliveMs ?? KEEPALIVE_MS)), ": keepalive\n\n"),
  );
  const body = Stream.make(": stream\n\n").pipe(
    Stream.concat(Stream.merge(frames, keepalive, { haltStrategy: "left" })),
    Stream.encodeText,
    Stream.onStart(Effect.sync(() => options.metrics?.sseOpened())),
    Stream.ensuring(Effect.sync(() => options.metrics?.sseClosed(false))),
  );
  return HttpServerResponse.stream(body, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}
