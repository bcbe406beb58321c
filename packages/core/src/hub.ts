import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as PubSub from "effect/PubSub";
import type * as Queue from "effect/Queue";
import * as Stream from "effect/Stream";
import type { TurnActivity, TurnActivityBody } from "./activity.ts";

/**
 * Per-session activity hub: numbers events (`seq`), keeps a bounded log for
 * reconnecting readers and publishes live. `observe(cursor)` yields every
 * event after `cursor` exactly once, then follows live.
 */
export class ActivityHub {
  private seq = 0;
  private readonly log: TurnActivity[] = [];
  readonly pubsub: PubSub.PubSub<TurnActivity>;
  private readonly capacity: number;
  readonly sessionId: string;

  private constructor(sessionId: string, pubsub: PubSub.PubSub<TurnActivity>, capacity: number) {
    this.sessionId = sessionId;
    this.pubsub = pubsub;
    this.capacity = capacity;
  }

  static make(sessionId: string, capacity = 20_000): Effect.Effect<ActivityHub> {
    return Effect.map(PubSub.unbounded<TurnActivity>(), (p) => new ActivityHub(sessionId, p, capacity));
  }

  get lastSeq(): number {
    return this.seq;
  }

  publish(turnId: string, body: TurnActivityBody): Effect.Effect<TurnActivity> {
    return Effect.map(Clock.currentTimeMillis, (at) => this.publishNow(turnId, body, at));
  }

  /** `publish` without an effect: numbers, logs and offers the event at once (the turn's hot path). */
  publishNow(turnId: string, body: TurnActivityBody, at: number): TurnActivity {
    const event = { ...body, sessionId: this.sessionId, turnId, seq: ++this.seq, at } as TurnActivity;
    this.log.push(event);
    // trimmed in steps of a quarter of the capacity: dropping one event per publish shifted
    // the whole log each time (74 µs an event at 20,000 retained)
    if (this.log.length > this.capacity + (this.capacity >> 2))
      this.log.splice(0, this.log.length - this.capacity);
    this.pubsub.unsafeOffer(event);
    return event;
  }

  /** Every event with `seq > cursor` (from the retained log), then live events, each exactly once. */
  observe(cursor = 0): Stream.Stream<TurnActivity> {
    return Stream.unwrapScoped(
      Effect.gen(this, function* () {
        const subscription = yield* PubSub.subscribe(this.pubsub);
        const backlog = this.log.filter((e) => e.seq > cursor);
        let last = backlog.length ? backlog[backlog.length - 1]!.seq : cursor;
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
