import type { TurnActivityBody } from "@lash/sansio";
import { Chunk, Effect, Either, Stream } from "effect";
import { describe, expect, it } from "vitest";
import { ActivityExpired, ActivityHub, ActivityRetention } from "../src/hub.ts";

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e);
const collect = (hub: ActivityHub, cursor: number | undefined, untilSeq: number) =>
  run(Stream.runCollect(hub.observe(cursor).pipe(Stream.takeUntil((e) => e.seq === untilSeq)))).then((c) =>
    Chunk.toReadonlyArray(c).map((e) => e.seq),
  );
const expired = (hub: ActivityHub, cursor: number) =>
  run(Effect.either(Stream.runCollect(hub.observe(cursor)))).then((r) => {
    if (Either.isRight(r)) throw new Error("expected the stream to fail");
    return r.left;
  });

const started: TurnActivityBody = { type: "turnStarted", input: [], resumed: false, model: "m" };
const finished: TurnActivityBody = {
  type: "turnFinished",
  outcome: { type: "completed", text: "" } as never,
  usage: {},
};
const text = (t: string): TurnActivityBody => ({ type: "textDelta", text: t });
/** One turn of `n` events in all (turnStarted, n - 2 deltas, turnFinished); returns its last seq. */
const turn = (hub: ActivityHub, n: number): number => {
  hub.publishNow("t", started, 0);
  for (let i = 0; i < n - 2; i++) hub.publishNow("t", text(String(i)), 0);
  return hub.publishNow("t", finished, 0).seq;
};

describe("ActivityHub retention", () => {
  it("keeps at least the newest `capacity` events of a long turn, contiguous and in order", async () => {
    const hub = await run(ActivityHub.make("s", { capacity: 8 }));
    for (let i = 1; i <= 37; i++) hub.publishNow("t", text(String(i)), i);
    expect(hub.lastSeq).toBe(37);
    const seqs = await collect(hub, undefined, 37);
    expect(seqs.length).toBeGreaterThanOrEqual(8);
    expect(seqs.length).toBeLessThanOrEqual(10);
    expect(seqs).toEqual(seqs.map((_, i) => 37 - seqs.length + 1 + i));
    // a reader with a cursor inside the kept log gets exactly what follows it
    expect(await collect(hub, 33, 37)).toEqual([34, 35, 36, 37]);
    // one before the oldest kept is still whole; older is refused, not skipped
    expect((await collect(hub, hub.oldestSeq - 1, 37))[0]).toBe(hub.oldestSeq);
    const e = await expired(hub, 0);
    expect(e).toBeInstanceOf(ActivityExpired);
    expect(e.oldest).toBe(hub.oldestSeq);
    expect(e.message).toContain("no longer kept");
    expect(e.message).toContain("readView");
  });

  it("a new turn drops the earlier turns' events; a cursor into them fails with ActivityExpired", async () => {
    const hub = await run(ActivityHub.make("s"));
    const end1 = turn(hub, 10);
    // the finished turn is still kept: read whole from 0
    expect(await collect(hub, 0, end1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const end2 = turn(hub, 5);
    expect(hub.oldestSeq).toBe(end1 + 1);
    expect(await collect(hub, end1, end2)).toEqual([11, 12, 13, 14, 15]);
    expect(await collect(hub, undefined, end2)).toEqual([11, 12, 13, 14, 15]);
    const e = await expired(hub, 3);
    expect(e.cursor).toBe(3);
    expect(e.oldest).toBe(11);
  });

  it("a finished turn is kept only while its session is among the most recently finished", async () => {
    const retention = new ActivityRetention(2);
    const hubs = await run(Effect.all([1, 2, 3].map((i) => ActivityHub.make(`s${i}`, { retention }))));
    for (const hub of hubs) turn(hub, 6);
    // s1 finished first: released when s3 finished; s2 and s3 keep theirs
    expect(hubs.map((h) => h.oldestSeq)).toEqual([7, 1, 1]);
    expect((await expired(hubs[0]!, 0)).oldest).toBe(7);
    // without a cursor, an emptied hub still follows live events
    const reader = Effect.runPromise(
      Stream.runCollect(hubs[0]!.observe().pipe(Stream.take(1))).pipe(Effect.map(Chunk.toReadonlyArray)),
    );
    await new Promise((r) => setImmediate(r));
    hubs[0]!.publishNow("t", started, 0);
    expect((await reader).map((e) => e.seq)).toEqual([7]);
  });

  it("a turn in flight keeps its events however many other sessions finish; a pin keeps what follows it", async () => {
    const retention = new ActivityRetention(1);
    const [a, b, c] = await run(Effect.all(["a", "b", "c"].map((id) => ActivityHub.make(id, { retention }))));
    a!.publishNow("t", started, 0);
    a!.publishNow("t", text("x"), 0);
    turn(b!, 4);
    turn(c!, 4);
    expect(a!.oldestSeq).toBe(1);
    expect(b!.oldestSeq).toBe(5); // released when c finished
    // pinned at 2: a's next turn keeps events 3 on
    const unpin = a!.pin(2);
    a!.publishNow("t", finished, 0);
    const end = turn(a!, 3);
    expect(await collect(a!, 2, end)).toEqual([3, 4, 5, 6]);
    unpin();
    turn(a!, 3);
    expect(a!.oldestSeq).toBe(7);
  });
});
