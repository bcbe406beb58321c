import { Chunk, Effect, Stream } from "effect";
import { describe, expect, it } from "vitest";
import { ActivityHub } from "../src/hub.ts";

describe("ActivityHub retention", () => {
  it("keeps at least the newest `capacity` events, contiguous and in order, as the log is trimmed", async () => {
    const hub = await Effect.runPromise(ActivityHub.make("s", 8));
    for (let i = 1; i <= 37; i++) hub.publishNow("t", { type: "textDelta", text: String(i) }, i);
    expect(hub.lastSeq).toBe(37);
    const backlog = await Effect.runPromise(
      Stream.runCollect(hub.observe(0).pipe(Stream.takeUntil((e) => e.seq === 37))),
    );
    const seqs = Chunk.toReadonlyArray(backlog).map((e) => e.seq);
    expect(seqs.length).toBeGreaterThanOrEqual(8);
    expect(seqs.length).toBeLessThanOrEqual(10);
    expect(seqs).toEqual(seqs.map((_, i) => 37 - seqs.length + 1 + i));
    // a reader with a cursor inside the retained log gets exactly what follows it
    const after = await Effect.runPromise(
      Stream.runCollect(hub.observe(33).pipe(Stream.takeUntil((e) => e.seq === 37))),
    );
    expect(Chunk.toReadonlyArray(after).map((e) => e.seq)).toEqual([34, 35, 36, 37]);
  });
});
