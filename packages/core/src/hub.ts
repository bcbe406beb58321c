import * as Clock from "effect/Clock";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as PubSub from "effect/PubSub";
import type * as Queue from "effect/Queue";
import * as Stream from "effect/Stream";
import type { TurnActivity, TurnActivityBody } from "./activity.ts";

/**
 * `observe` was given a cursor older than what the session's hub still keeps: the events
 * right after it are gone from memory, and a stream that went on from the oldest kept one
 * would skip them silently.
 */
export class ActivityExpired extends Data.TaggedError("ActivityExpired")<{
  readonly sessionId: string;
  readonly cursor: number;
  /** The oldest event still kept (`lastSeq + 1` when none is). */
  readonly oldest: number;
  readonly message: string;
}> {}

/**
 * Which sessions of a runtime keep their last finished turn's events: the `sessions` that
 * finished one most recently. Another session finishing a turn releases the least recent.
 */
export class ActivityRetention {
  private readonly kept = new Set<ActivityHub>();
  readonly sessions: number;
  constructor(sessions = 64) {
    this.sessions = sessions;
  }

  /** `hub` finished a turn: it is now the most recent. */
  keep(hub: ActivityHub): void {
    this.kept.delete(hub);
    this.kept.add(hub);
    if (this.kept.size <= this.sessions) return;
    const oldest = this.kept.values().next().value as ActivityHub;
    this.kept.delete(oldest);
    oldest.release();
  }

  /** `hub` started a turn (its events are the turn in flight's) or its session is gone. */
  forget(hub: ActivityHub): void {
    this.kept.delete(hub);
  }
}

/**
 * Per-session activity hub: numbers events (`seq`), publishes them live, and keeps in
 * memory only what a reader that joins late can still ask for:
 *  - the events of the turn in flight (a new turn's `turnStarted` drops the earlier turns');
 *  - after a turn, its events while the session is among the runtime's most recently
 *    finished (`ActivityRetention`);
 *  - whatever follows a pinned cursor (`pin`: `startTurn` pins the turn it starts until its
 *    caller's scope closes, so its event stream is whole however late it is read);
 *  - never more than `capacity` (plus a quarter) events.
 * The daemon keeps its own durable event table; the transcript is in the store.
 */
export class ActivityHub {
  private seq = 0;
  /** Contiguous: the events `lastSeq - log.length + 1 … lastSeq`. */
  private log: TurnActivity[] = [];
  private inTurn = false;
  private readonly pins = new Map<number, number>();
  readonly pubsub: PubSub.PubSub<TurnActivity>;
  private readonly capacity: number;
  private readonly retention: ActivityRetention | undefined;
  readonly sessionId: string;

  private constructor(
    sessionId: string,
    pubsub: PubSub.PubSub<TurnActivity>,
    capacity: number,
    retention: ActivityRetention | undefined,
  ) {
    this.sessionId = sessionId;
    this.pubsub = pubsub;
    this.capacity = capacity;
    this.retention = retention;
  }

  static make(
    sessionId: string,
    options: { readonly capacity?: number; readonly retention?: ActivityRetention } = {},
  ): Effect.Effect<ActivityHub> {
    return Effect.map(
      PubSub.unbounded<TurnActivity>(),
      (p) => new ActivityHub(sessionId, p, options.capacity ?? 20_000, options.retention),
    );
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** The oldest event still kept (`lastSeq + 1` when none is). */
  get oldestSeq(): number {
    return this.seq - this.log.length + 1;
  }

  publish(turnId: string, body: TurnActivityBody): Effect.Effect<TurnActivity> {
    return Effect.map(Clock.currentTimeMillis, (at) => this.publishNow(turnId, body, at));
  }

  /** `publish` without an effect: numbers, keeps and offers the event at once (the turn's hot path). */
  publishNow(turnId: string, body: TurnActivityBody, at: number): TurnActivity {
    if (body.type === "turnStarted") {
      // a new turn: the earlier turns' events are not kept (live readers have them)
      this.inTurn = true;
      this.retention?.forget(this);
      this.dropThrough(this.seq);
    }
    const event = { ...body, sessionId: this.sessionId, turnId, seq: ++this.seq, at } as TurnActivity;
    this.log.push(event);
    // trimmed in steps of a quarter of the capacity: dropping one event per publish shifted
    // the whole log each time (74 µs an event at 20,000 retained)
    if (this.log.length > this.capacity + (this.capacity >> 2))
      this.log.splice(0, this.log.length - this.capacity);
    this.pubsub.unsafeOffer(event);
    if (body.type === "turnFinished" || (body.type === "error" && body.kind === "turnFailed")) {
      this.inTurn = false;
      this.retention?.keep(this);
    }
    return event;
  }

  /** Drop the finished turn's events (the retention chose another session's); a turn in flight keeps its own. */
  release(): void {
    if (!this.inTurn) this.dropThrough(this.seq);
  }

  /** Keep every event after `cursor` until the returned function is called. */
  pin(cursor: number): () => void {
    this.pins.set(cursor, (this.pins.get(cursor) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.pins.get(cursor) ?? 1) - 1;
      if (n > 0) this.pins.set(cursor, n);
      else this.pins.delete(cursor);
    };
  }

  /** Drop the kept events up to `seq`, but none after a pinned cursor. */
  private dropThrough(seq: number): void {
    let through = seq;
    for (const cursor of this.pins.keys()) if (cursor < through) through = cursor;
    const n = through - this.oldestSeq + 1;
    if (n <= 0) return;
    this.log = n >= this.log.length ? [] : this.log.slice(n);
  }

  /**
   * Every event with `seq > cursor`, each exactly once, then live events; without a cursor,
   * every event still kept, then live. A cursor older than what is kept (`cursor <
   * oldestSeq - 1`) fails the stream with `ActivityExpired` instead of skipping what is gone.
   */
  observe(cursor?: number): Stream.Stream<TurnActivity, ActivityExpired> {
    return Stream.unwrapScoped(
      Effect.gen(this, function* () {
        const subscription = yield* PubSub.subscribe(this.pubsub);
        const oldest = this.oldestSeq;
        if (cursor !== undefined && cursor < oldest - 1)
          return yield* Effect.fail(
            new ActivityExpired({
              sessionId: this.sessionId,
              cursor,
              oldest,
              message:
                `session ${this.sessionId}: the events after ${cursor} are no longer kept in memory (the oldest kept is ` +
                `${oldest}; a session keeps the turn in flight, and its last finished turn while it is among the most ` +
                "recently active). Observe without a cursor to follow what is kept and what comes next, or read the " +
                "session's history from the store (`readView`; a daemon serves its durable event log).",
            }),
          );
        const from = cursor === undefined ? 0 : Math.max(0, cursor - oldest + 1);
        const backlog = from === 0 ? this.log.slice() : this.log.slice(from);
        let last = backlog.length ? backlog[backlog.length - 1]!.seq : (cursor ?? this.seq);
        const live = Stream.fromQueue(subscription as Queue.Dequeue<TurnActivity>).pipe(
          Stream.filter((e) => {
            if (e.seq <= last) return false;
            last = e.seq;
            return true;
          }),
        );
        return Stream.concat(Stream.fromIterable(backlog), live);
      }),
    );
  }
}
