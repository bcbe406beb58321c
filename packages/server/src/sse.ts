// Server-sent events: `id: <seq>\nevent: <type>\ndata: <json ServerEvent>\n\n`, a keepalive
// comment every 15 s, the cursor from `Last-Event-ID` (wins) or `?after=`.
//
// Delivery is plain Node, not an Effect stream: a stream is a `Readable` the HTTP response
// pipes, fed from the log's table (the backlog, a page at a time as the client reads) and then
// by the log's listener (each event encoded once for all its readers). A reader whose buffer
// holds `limit` events it has not taken is ended — it reconnects with its cursor — so a slow
// client costs a bounded buffer and never slows a run.
import { Readable } from "node:stream";
import { HttpServerResponse } from "@effect/platform";
import type { ServerEvent } from "./api.ts";
import type { EventLogImpl, Subscription } from "./events.ts";
import { rowFrame, sseFrame } from "./frame.ts";
import type { MetricsShape } from "./services.ts";

export { sseFrame };

export const KEEPALIVE_MS = 15_000;
/** Stored events read per page while a reader catches up. */
const PAGE = 256;

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

export interface SseOptions {
  /** Events a reader may hold unread before it is ended (`sseBufferEvents`). */
  readonly limit: number;
  readonly metrics?: MetricsShape;
  readonly keepaliveMs?: number;
}

/**
 * The events of a session (of one run when `runId` is given) after `after`, as SSE frames:
 * the stored ones, then live ones, each exactly once and in order. A run's stream ends after
 * its `runFinished`; a session's stream does not end.
 */
export class SseReader extends Readable {
  private cursor: number;
  private readonly sub: Subscription;
  /** Live frames that arrived while the backlog was still being read. */
  private held: { readonly seq: number; readonly last: boolean; readonly frame: Buffer }[] = [];
  private catchingUp = true;
  private done = false;
  private released = false;
  private dropped = false;
  private readonly keepalive: NodeJS.Timeout;

  private readonly log: EventLogImpl;
  private readonly sessionId: string;
  private readonly runId: string | undefined;
  private readonly options: SseOptions;

  constructor(
    log: EventLogImpl,
    sessionId: string,
    after: number,
    runId: string | undefined,
    options: SseOptions,
  ) {
    super({ objectMode: true, highWaterMark: 64 });
    this.log = log;
    this.sessionId = sessionId;
    this.runId = runId;
    this.options = options;
    this.cursor = after;
    this.sub = log.subscribe(sessionId, { runId, push: this.live });
    options.metrics?.sseOpened();
    this.keepalive = setInterval(
      () => this.done || this.push(Buffer.from(": keepalive\n\n")),
      options.keepaliveMs ?? KEEPALIVE_MS,
    );
    this.keepalive.unref();
    this.push(Buffer.from(": stream\n\n"));
    // a finished run read from past its end: nothing more will come
    if (this.sub.finishedSeq !== undefined && this.sub.finishedSeq <= after) this.finish();
  }

  /** True once the reader was ended because it fell `limit` events behind. */
  wasDropped = (): boolean => this.dropped;

  private live = (e: ServerEvent, frame: () => Buffer): void => {
    if (this.done || e.seq <= this.cursor) return;
    if (this.catchingUp) {
      this.held.push({
        seq: e.seq,
        last: this.runId !== undefined && e.type === "runFinished",
        frame: frame(),
      });
      if (this.held.length > this.options.limit) this.fellBehind();
      return;
    }
    this.cursor = e.seq;
    this.push(frame());
    if (this.runId !== undefined && e.type === "runFinished") this.finish();
    else if (this.readableLength > this.options.limit) this.fellBehind();
  };

  override _read(): void {
    if (!this.catchingUp || this.done) return;
    const upTo = this.sub.durableSeq;
    while (this.cursor < upTo) {
      const rows = this.log.page(this.sessionId, this.cursor, upTo, PAGE, this.runId);
      if (rows.length === 0) {
        this.cursor = upTo;
        break;
      }
      let more = true;
      for (const r of rows) {
        this.cursor = r.seq;
        more = this.push(rowFrame(r));
        if (this.runId !== undefined && r.type === "runFinished") {
          this.finish();
          return;
        }
      }
      if (rows.length < PAGE) this.cursor = upTo;
      if (!more) return;
    }
    // caught up: what arrived meanwhile, then live
    this.catchingUp = false;
    const held = this.held;
    this.held = [];
    for (const h of held) {
      this.cursor = h.seq;
      this.push(h.frame);
      if (h.last) {
        this.finish();
        return;
      }
    }
    if (this.readableLength > this.options.limit) this.fellBehind();
  }

  /** The stream is complete: what is buffered is still delivered, then EOF. */
  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.release();
    this.push(null);
  }

  /** Fell behind: end it (the client reconnects with its cursor); a client that stopped reading is cut. */
  private fellBehind(): void {
    this.dropped = true;
    this.finish();
    setTimeout(() => this.destroy(), this.options.keepaliveMs ?? KEEPALIVE_MS).unref();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.keepalive);
    this.sub.close();
    this.held = [];
    this.options.metrics?.sseClosed(this.dropped);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.done = true;
    this.release();
    callback(error);
  }
}

/** A `text/event-stream` response of a reader. */
export function sseResponse(reader: SseReader): HttpServerResponse.HttpServerResponse {
  return HttpServerResponse.raw(reader, {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}
