// The durable event log: every event of a session's runs, numbered by a per-session `seq`
// that is monotonic and never reused. Appends are group-committed (one transaction per
// tick, flushed on `setImmediate`) and reach readers only once durable.
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { Effect, Layer, Queue, Stream } from "effect";
import type { ServerEvent } from "./api.ts";
import { EventLog, type EventLogShape, Settings, StateDb } from "./services.ts";

interface Row {
  session_id: string;
  seq: number;
  run_id: string;
  type: string;
  at: number;
  data: string;
}

const toEvent = (r: Row): ServerEvent =>
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

interface Listener {
  readonly sessionId: string;
  readonly runId: string | undefined;
  readonly push: (e: ServerEvent) => void;
}

export class EventLogImpl implements EventLogShape {
  private readonly last = new Map<string, number>();
  private pending: { event: ServerEvent; key: string | undefined }[] = [];
  private scheduled = false;
  private readonly listeners = new Set<Listener>();
  private readonly insert: Database.Statement;
  private readonly maxSeq: Database.Statement;
  private readonly readAll: Database.Statement;
  private readonly readRun: Database.Statement;
  private readonly keysOfRun: Database.Statement;
  private readonly lastOfRun: Database.Statement;
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
    for (const { event } of batch)
      for (const l of this.listeners)
        if (l.sessionId === event.sessionId && (l.runId === undefined || l.runId === event.runId))
          l.push(event);
  };

  read = (sessionId: string, after: number, runId?: string): readonly ServerEvent[] =>
    (runId === undefined
      ? (this.readAll.all(sessionId, after) as Row[])
      : (this.readRun.all(sessionId, after, runId) as Row[])
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
        // what is queued is written first, so the backlog holds every event numbered so far
        // (else a run whose runFinished waits for its flush would read as finished but empty)
        this.flush();
        // backlog and subscription in one synchronous step: a flush cannot fall between them
        const backlog = this.read(sessionId, after, runId);
        // a finished run read from past its end: nothing more will come
        if (
          runId !== undefined &&
          this.keys(runId, true).has("runFinished") &&
          !backlog.some((e) => e.type === "runFinished")
        )
          return Stream.empty;
        const listener: Listener = {
          sessionId,
          runId,
          push: (e) => {
            if (dropped) return;
            if (!queue.unsafeOffer(e)) {
              dropped = true;
              this.listeners.delete(listener);
              Effect.runFork(Queue.shutdown(queue));
            }
          },
        };
        this.listeners.add(listener);
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => this.listeners.delete(listener)).pipe(Effect.zipRight(Queue.shutdown(queue))),
        );
        let cursor = after;
        const fresh = (e: ServerEvent) => {
          if (e.seq <= cursor) return false;
          cursor = e.seq;
          return true;
        };
        const all = Stream.fromIterable(backlog).pipe(
          Stream.concat(Stream.fromQueue(queue)),
          Stream.filter(fresh),
        );
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
