// The durable event log: every event of a session's runs, numbered by a per-session `seq`
// that is monotonic and never reused. Appends are group-committed (one transaction per
// tick, flushed on `setImmediate`) and reach readers only once durable.
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { Effect, Layer, Queue, Stream } from "effect";
import type { ServerEvent } from "./api.ts";
import { type EventRow, sseFrame } from "./frame.ts";
import { EventLog, type EventLogShape, Settings, StateDb } from "./services.ts";

export type { EventRow };

const toEvent = (r: EventRow): ServerEvent =>
  ({
    seq: r.seq,
    sessionId: r.session_id,
    runId: r.run_id,
    type: r.type,
    at: r.at,
    data: JSON.parse(r.data),
  }) as ServerEvent;

/**
 * The identity of an event a resumed turn may publish again from its journal (`replayed`):
 * the same key means the same step. Undefined for events that are never re-published.
 */
export function eventKey(type: string, data: unknown): string | undefined {
  const d = (data ?? {}) as Record<string, unknown>;
  switch (type) {
    case "turnStarted":
    case "runStarted":
    case "runQueued":
    case "runFinished":
      return type;
    case "llmRequest":
    case "llmResponse":
      return `${type}:${String(d.iteration)}`;
    case "toolStarted":
    case "toolCompleted":
      return `${type}:${String(d.callId)}`;
    case "messages":
      // a resumed turn re-publishes the messages of the steps it replays, unchanged
      return `messages:${createHash("sha1")
        .update(JSON.stringify(d.messages ?? null))
        .digest("base64")}`;

    case "approvalRequested":
    case "approvalResolved":
      return `${type}:${String(d.requestId)}`;
    default:
      return undefined;
  }
}

/** A reader of the live log: what it has been sent and whether it fell behind. */
export interface Followed {
  readonly stream: Stream.Stream<ServerEvent>;
  /** True once the reader was ended because it fell `sseBufferEvents` behind. */
  readonly dropped: () => boolean;
}

/** A live reader of one session (or one run of it): handed each event once it is durable. */
export interface Listener {
  readonly runId: string | undefined;
  /** `frame()` is the event in the SSE wire format, encoded once for every reader. */
  readonly push: (e: ServerEvent, frame: () => Buffer) => void;
}

/** What a subscription saw when it began: every event up to `durableSeq` is stored. */
export interface Subscription {
  readonly durableSeq: number;
  /** The seq of the run's `runFinished` when it is stored (run subscriptions only). */
  readonly finishedSeq: number | undefined;
  readonly close: () => void;
}

export class EventLogImpl implements EventLogShape {
  private readonly last = new Map<string, number>();
  private pending: { event: ServerEvent; key: string | undefined }[] = [];
  private scheduled = false;
  /** Live readers by session id. */
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly insert: Database.Statement;
  private readonly maxSeq: Database.Statement;
  private readonly readAll: Database.Statement;
  private readonly readRun: Database.Statement;
  private readonly keysOfRun: Database.Statement;
  private readonly lastOfRun: Database.Statement;
  private readonly pageAll: Database.Statement;
  private readonly pageRun: Database.Statement;
  private readonly finishedOf: Database.Statement;
  private readonly writeBatch: (batch: { event: ServerEvent; key: string | undefined }[]) => void;

  private readonly db: Database.Database;
  private readonly bufferEvents: number;

  constructor(db: Database.Database, bufferEvents: number) {
    this.db = db;
    this.bufferEvents = bufferEvents;
    this.insert = db.prepare(
      `INSERT INTO events (session_id, seq, run_id, type, at, data, dkey) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.maxSeq = db.prepare(`SELECT MAX(seq) AS m FROM events WHERE session_id = ?`);
    this.readAll = db.prepare(`SELECT * FROM events WHERE session_id = ? AND seq > ? ORDER BY seq`);
    this.readRun = db.prepare(
      `SELECT * FROM events WHERE session_id = ? AND seq > ? AND run_id = ? ORDER BY seq`,
    );
    this.keysOfRun = db.prepare(`SELECT dkey FROM events WHERE run_id = ? AND dkey IS NOT NULL`);
    this.lastOfRun = db.prepare(`SELECT MAX(seq) AS m FROM events WHERE run_id = ?`);
    this.pageAll = db.prepare(
      `SELECT * FROM events WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
    );
    this.pageRun = db.prepare(
      `SELECT * FROM events WHERE run_id = ? AND session_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
    );
    this.finishedOf = db.prepare(`SELECT seq FROM events WHERE run_id = ? AND type = 'runFinished'`);
    this.writeBatch = db.transaction((batch: { event: ServerEvent; key: string | undefined }[]) => {
      for (const { event: e, key } of batch)
        this.insert.run(
          e.sessionId,
          e.seq,
          e.runId,
          e.type,
          e.at,
          JSON.stringify(e.data ?? null),
          key ?? null,
        );
    });
  }

  lastSeq = (sessionId: string): number => {
    const known = this.last.get(sessionId);
    if (known !== undefined) return known;
    const m = (this.maxSeq.get(sessionId) as { m: number | null }).m ?? 0;
    this.last.set(sessionId, m);
    return m;
  };

  append = (sessionId: string, runId: string, type: string, data: unknown): ServerEvent => {
    const seq = this.lastSeq(sessionId) + 1;
    this.last.set(sessionId, seq);
    const event = { seq, sessionId, runId, type, at: Date.now(), data } as ServerEvent;
    this.pending.push({ event, key: eventKey(type, data) });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return event;
  };

  /** Write what is queued (one transaction), then hand it to the readers. */
  flush = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    if (!this.db.open) return;
    this.writeBatch(batch);
    if (this.listeners.size === 0) return;
    for (const { event } of batch) {
      const readers = this.listeners.get(event.sessionId);
      if (readers === undefined) continue;
      let encoded: Buffer | undefined;
      const frame = () => {
        encoded ??= Buffer.from(sseFrame(event));
        return encoded;
      };
      for (const l of readers) if (l.runId === undefined || l.runId === event.runId) l.push(event, frame);
    }
  };

  /**
   * Hand `listener` every event of `sessionId` (of one run when it has a `runId`) appended
   * from now on, once durable. What is queued is written first, so every event up to the
   * returned `durableSeq` can be read from the table: a reader reads its backlog up to there
   * (`page`) and takes the rest from the listener, and no event falls between the two.
   */
  subscribe = (sessionId: string, listener: Listener): Subscription => {
    this.flush();
    const readers = this.listeners.get(sessionId) ?? new Set<Listener>();
    this.listeners.set(sessionId, readers);
    readers.add(listener);
    const finished =
      listener.runId === undefined
        ? undefined
        : (this.finishedOf.get(listener.runId) as { seq: number } | undefined)?.seq;
    return {
      durableSeq: this.lastSeq(sessionId),
      finishedSeq: finished,
      close: () => {
        const set = this.listeners.get(sessionId);
        if (set?.delete(listener) && set.size === 0) this.listeners.delete(sessionId);
      },
    };
  };

  /** Up to `limit` stored events with `after < seq <= upTo`, in order, as rows (`rowFrame`). */
  page = (
    sessionId: string,
    after: number,
    upTo: number,
    limit: number,
    runId?: string,
  ): readonly EventRow[] =>
    (runId === undefined
      ? this.pageAll.all(sessionId, after, upTo, limit)
      : this.pageRun.all(runId, sessionId, after, upTo, limit)) as EventRow[];

  read = (sessionId: string, after: number, runId?: string): readonly ServerEvent[] =>
    (runId === undefined
      ? (this.readAll.all(sessionId, after) as EventRow[])
      : (this.readRun.all(sessionId, after, runId) as EventRow[])
    ).map(toEvent);

  /** Dedupe keys of a run's stored (and queued) events. */
  keys = (runId: string, storedOnly = false): Set<string> => {
    const keys = new Set((this.keysOfRun.all(runId) as { dkey: string }[]).map((r) => r.dkey));
    if (!storedOnly) for (const p of this.pending) if (p.event.runId === runId && p.key) keys.add(p.key);
    return keys;
  };

  runLastSeq = (runId: string): number => {
    let m = (this.lastOfRun.get(runId) as { m: number | null }).m ?? 0;
    for (const p of this.pending) if (p.event.runId === runId) m = Math.max(m, p.event.seq);
    return m;
  };

  followTracked = (sessionId: string, after: number, runId?: string): Followed => {
    let dropped = false;
    const stream = Stream.unwrapScoped(
      Effect.gen(this, function* () {
        const queue = yield* Queue.dropping<ServerEvent>(Math.max(1, this.bufferEvents));
        // subscription and backlog bound in one synchronous step: no event falls between them
        const sub = this.subscribe(sessionId, {
          runId,
          push: (e) => {
            if (dropped || e.seq <= after) return;
            if (!queue.unsafeOffer(e)) {
              dropped = true;
              sub.close();
              Effect.runFork(Queue.shutdown(queue));
            }
          },
        });
        yield* Effect.addFinalizer(() => Effect.sync(sub.close).pipe(Effect.zipRight(Queue.shutdown(queue))));
        // a finished run read from past its end: nothing more will come
        if (sub.finishedSeq !== undefined && sub.finishedSeq <= after) return Stream.empty;
        const backlog = this.page(sessionId, after, sub.durableSeq, Number.MAX_SAFE_INTEGER, runId).map(
          toEvent,
        );
        const all = Stream.fromIterable(backlog).pipe(Stream.concat(Stream.fromQueue(queue)));
        return runId === undefined ? all : all.pipe(Stream.takeUntil((e) => e.type === "runFinished"));
      }),
    );
    return { stream, dropped: () => dropped };
  };

  follow = (sessionId: string, after: number, runId?: string): Stream.Stream<ServerEvent> =>
    Stream.suspend(() => this.followTracked(sessionId, after, runId).stream);
}

/** The live EventLog over the state db; flushes what is queued when the daemon closes. */
export const EventLogLive = Layer.scoped(
  EventLog,
  Effect.gen(function* () {
    const db = yield* StateDb;
    const settings = yield* Settings;
    const log = new EventLogImpl(db, settings.sseBufferEvents);
    yield* Effect.addFinalizer(() => Effect.sync(() => log.flush()));
    return log;
  }),
);
