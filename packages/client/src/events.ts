// Event streams as async iterators that survive their connection. A stream follows a
// session's or a run's durable events over SSE; when the connection drops (a network hiccup,
// the daemon dropping a slow reader, a daemon restart) it reconnects by itself with
// `Last-Event-ID` = the last `seq` it yielded, backing off between tries, and gives up with a
// `ClientError` (`stream_gave_up`) after `maxRetries` tries in a row that brought nothing.
// It never yields a `seq` twice (the daemon replays exactly the events after the cursor; a
// repeat is skipped all the same). A run's stream ends after its `runFinished`; a session's
// runs until closed (`return()`, `break`, or the `signal`).
//
// The SSE body is raw text, not part of the HttpApi's typed client: this reads it with
// `fetch` and decodes each event with the API's `ServerEvent` schema.
import { ServerEvent } from "@lash/server/api";
import { Schema } from "effect";
import { ClientError, describe, errorFromResponse } from "./errors.ts";
import { sseMessages } from "./sse.ts";

/** Where the client talks to. */
export interface Connection {
  /** e.g. `http://127.0.0.1:7777` (no `/v1`). */
  readonly baseUrl: string;
  readonly token?: string | undefined;
  readonly fetch?: typeof globalThis.fetch | undefined;
}

/** Which stream to follow. */
export type StreamTarget = { readonly sessionId: string } | { readonly runId: string };

export interface EventsOptions {
  /** Start after this `seq` (default: from the stream's first event). */
  readonly after?: number | undefined;
  /** Closes the stream (the iterator then ends without an error). */
  readonly signal?: AbortSignal | undefined;
  /** Tries in a row without a new event before giving up (default 10). */
  readonly maxRetries?: number | undefined;
  /** The first wait before reconnecting, doubled per failed try up to `maxDelayMs` (default 100). */
  readonly initialDelayMs?: number | undefined;
  /** default 2000 */
  readonly maxDelayMs?: number | undefined;
  /** Called before each reconnect (for logs). */
  readonly onReconnect?:
    | ((info: { attempt: number; after: number | undefined; cause: string }) => void)
    | undefined;
}

const decodeEvent = Schema.decodeUnknownSync(ServerEvent);
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** How one connection of a stream is opened: the first, and every reconnect after it. */
interface Source {
  /** Opens a connection after `cursor`; `runId` is the run once known. */
  open(cursor: number | undefined, runId: string | undefined, signal: AbortSignal): Promise<Response>;
  /** Whether the stream ends with its run's `runFinished`. */
  readonly endsWithRun: boolean;
  readonly runId: string | undefined;
  readonly what: string;
}

export function headers(connection: Connection, extra: Record<string, string> = {}): Record<string, string> {
  return connection.token === undefined ? extra : { ...extra, authorization: `Bearer ${connection.token}` };
}

export const trimBase = (baseUrl: string): string => baseUrl.replace(/\/+$/, "");

function getStream(connection: Connection, path: string, cursor: number | undefined, signal: AbortSignal) {
  const f = connection.fetch ?? globalThis.fetch;
  return f(`${trimBase(connection.baseUrl)}${path}`, {
    headers: headers(connection, {
      accept: "text/event-stream",
      ...(cursor === undefined ? {} : { "last-event-id": String(cursor) }),
    }),
    signal,
  });
}

/** The events of a session (until closed) or of a run (until its `runFinished`). */
export function streamEvents(
  connection: Connection,
  target: StreamTarget,
  options: EventsOptions = {},
): EventStream {
  const source: Source =
    "runId" in target
      ? {
          endsWithRun: true,
          runId: target.runId,
          what: `run ${target.runId}`,
          open: (cursor, _runId, signal) =>
            getStream(connection, `/v1/runs/${encodeURIComponent(target.runId)}/events`, cursor, signal),
        }
      : {
          endsWithRun: false,
          runId: undefined,
          what: `session ${target.sessionId}`,
          open: (cursor, _runId, signal) =>
            getStream(
              connection,
              `/v1/sessions/${encodeURIComponent(target.sessionId)}/events`,
              cursor,
              signal,
            ),
        };
  return follow(connection, source, options);
}

/**
 * `POST /v1/agents/:name/chat/stream`: the new run's events until its `runFinished`. A
 * dropped connection continues on the run's own stream (`/v1/runs/:id/events`) once the
 * run's id is known from its first event.
 */
export function streamAgentChat(
  connection: Connection,
  name: string,
  body: { readonly input: unknown; readonly sessionId?: string | undefined },
  options: EventsOptions = {},
): EventStream {
  const f = connection.fetch ?? globalThis.fetch;
  let posted = false;
  return follow(
    connection,
    {
      endsWithRun: true,
      runId: undefined,
      what: `agent ${name}`,
      open: (cursor, runId, signal) => {
        if (runId !== undefined)
          return getStream(connection, `/v1/runs/${encodeURIComponent(runId)}/events`, cursor, signal);
        if (posted)
          // the chat was sent but no event named its run: resending would start a second run
          return Promise.reject(
            new ClientError({
              code: "stream_gave_up",
              message: `the chat stream of agent ${name} dropped before its first event, so its run is unknown; find it with GET /v1/sessions/:id/runs and follow GET /v1/runs/:id/events.`,
            }),
          );
        posted = true;
        return f(`${trimBase(connection.baseUrl)}/v1/agents/${encodeURIComponent(name)}/chat/stream`, {
          method: "POST",
          headers: headers(connection, { accept: "text/event-stream", "content-type": "application/json" }),
          body: JSON.stringify(body),
          signal,
        });
      },
    },
    options,
  );
}

/**
 * An event stream: iterate it with `for await`; `break`, `return()`, `close()` or the
 * options' `signal` end it at once (also while it waits for the next event).
 */
export interface EventStream extends AsyncIterableIterator<ServerEvent, void, undefined> {
  /** Ends the stream; a pending `next()` resolves as done. */
  close(): void;
  return(): Promise<IteratorResult<ServerEvent, void>>;
}

function follow(connection: Connection, source: Source, options: EventsOptions): EventStream {
  const controller = new AbortController();
  const generator = run(connection, source, options, controller);
  return {
    next: () => generator.next(),
    return: () => {
      controller.abort();
      return generator.return(undefined);
    },
    throw: (error: unknown) => {
      controller.abort();
      return generator.throw(error);
    },
    close: () => controller.abort(),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

async function* run(
  connection: Connection,
  source: Source,
  options: EventsOptions,
  controller: AbortController,
): AsyncGenerator<ServerEvent, void, undefined> {
  const maxRetries = options.maxRetries ?? 10;
  const initialDelay = options.initialDelayMs ?? 100;
  const maxDelay = options.maxDelayMs ?? 2000;
  const onAbort = () => controller.abort();
  if (options.signal?.aborted) return;
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let cursor = options.after;
  let runId = source.runId;
  let failures = 0;
  let lastCause = "";
  try {
    for (;;) {
      if (failures > 0) {
        if (failures > maxRetries)
          throw new ClientError({
            code: "stream_gave_up",
            message: `the event stream of ${source.what} at ${connection.baseUrl} gave up after ${maxRetries} reconnects (last: ${lastCause}); the last event read was seq ${cursor ?? "none"}. Check that lash serve is running, then read on with Last-Event-ID: ${cursor ?? 0}.`,
          });
        options.onReconnect?.({ attempt: failures, after: cursor, cause: lastCause });
        await wait(Math.min(maxDelay, initialDelay * 2 ** (failures - 1)), controller.signal);
      }
      if (controller.signal.aborted) return;

      let response: Response;
      try {
        response = await source.open(cursor, runId, controller.signal);
      } catch (cause) {
        if (controller.signal.aborted) return;
        if (cause instanceof ClientError) throw cause;
        lastCause = describe(cause);
        failures++;
        continue;
      }
      if (!response.ok || response.body === null) {
        const error = await errorFromResponse(response, `the event stream of ${source.what}`);
        // a daemon starting up, draining or at its subscriber limit: try again
        if (response.status === 503 || response.status === 429 || response.status === 502) {
          lastCause = `HTTP ${response.status}: ${error.message}`;
          failures++;
          continue;
        }
        throw error;
      }

      let progressed = false;
      let cleanEnd = false;
      try {
        for await (const message of sseMessages(response.body)) {
          let event: ServerEvent;
          try {
            event = decodeEvent(JSON.parse(message.data));
          } catch (cause) {
            throw new ClientError({
              code: "bad_event",
              message: `the event stream of ${source.what} sent an event that is not a ServerEvent (${describe(cause).slice(0, 300)}); client and daemon versions may differ.`,
            });
          }
          if (cursor !== undefined && event.seq <= cursor) continue;
          cursor = event.seq;
          runId ??= event.runId;
          progressed = true;
          failures = 0;
          yield event;
          if (source.endsWithRun && event.type === "runFinished") return;
        }
        lastCause = "the daemon closed the stream";
        cleanEnd = true;
      } catch (cause) {
        if (controller.signal.aborted) return;
        if (cause instanceof ClientError) throw cause;
        lastCause = describe(cause);
      }
      if (controller.signal.aborted) return;
      // A run stream the daemon closed before `runFinished`: done if the run is over and
      // nothing is left after the cursor (a cursor given at or past the run's end).
      if (
        cleanEnd &&
        source.endsWithRun &&
        runId !== undefined &&
        (await finishedBefore(connection, runId, cursor))
      )
        return;
      if (!progressed) failures++;
      else failures = 1;
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    controller.abort();
  }
}

/** Whether the run is over and its last event is at or before `cursor`. */
async function finishedBefore(
  connection: Connection,
  runId: string,
  cursor: number | undefined,
): Promise<boolean> {
  try {
    const f = connection.fetch ?? globalThis.fetch;
    const response = await f(`${trimBase(connection.baseUrl)}/v1/runs/${encodeURIComponent(runId)}`, {
      headers: headers(connection, { accept: "application/json" }),
    });
    if (!response.ok) return false;
    const run = (await response.json()) as { state?: string; lastSeq?: number };
    return TERMINAL.has(run.state ?? "") && (run.lastSeq ?? 0) <= (cursor ?? 0);
  } catch {
    return false;
  }
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
