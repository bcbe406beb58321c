// The SSE reader over a real SQLite event log: backlog in pages, then live events, each once
// and in order; a run's stream ends at its runFinished; a reader that falls behind is ended.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStateDb } from "../src/db.ts";
import { EventLogImpl } from "../src/events.ts";
import type { MetricsShape } from "../src/services.ts";
import { SseReader, sseFrame } from "../src/sse.ts";

const dirs: string[] = [];
const dbs: Database.Database[] = [];
const readers: SseReader[] = [];
afterEach(() => {
  for (const r of readers.splice(0)) r.destroy();
  for (const d of dbs.splice(0)) if (d.open) d.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function freshLog(limit = 10_000): EventLogImpl {
  const dir = mkdtempSync(join(tmpdir(), "lash-serve-sse-"));
  dirs.push(dir);
  const db = openStateDb(join(dir, "serve.db"));
  dbs.push(db);
  return new EventLogImpl(db, limit);
}

/** Resolves after the log's group commit of this tick ran. */
const nextTick = () => new Promise((r) => setImmediate(r));

interface Frame {
  readonly id: number;
  readonly event: string;
  readonly data: { seq: number; type: string; runId: string; data: unknown };
}

/** Reads `reader` (flowing) and parses its frames; `ended` resolves at its EOF. */
function consume(reader: SseReader) {
  readers.push(reader);
  let text = "";
  const frames: Frame[] = [];
  const comments: string[] = [];
  reader.on("data", (b: Buffer) => {
    text += b.toString("utf8");
    for (let i = text.indexOf("\n\n"); i >= 0; i = text.indexOf("\n\n")) {
      const block = text.slice(0, i);
      text = text.slice(i + 2);
      if (block.startsWith(":")) {
        comments.push(block);
        continue;
      }
      const f = Object.fromEntries(
        block.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
      );
      frames.push({ id: Number(f.id), event: f.event!, data: JSON.parse(f.data!) });
    }
  });
  const ended = new Promise<void>((resolve) => reader.once("end", () => resolve()));
  return { frames, comments, ended };
}

/** Polls the event loop until `cond` holds (bounded by the test's own timeout). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await nextTick();
}

describe("SseReader", () => {
  it("sends a backlog longer than a page, then live events, each exactly once and in order", async () => {
    const log = freshLog();
    for (let i = 0; i < 600; i++) log.append("s", "r", "textDelta", { i });
    log.append("other", "x", "textDelta", {});
    await nextTick();
    const reader = new SseReader(log, "s", 100, undefined, { limit: 10_000 });
    // durable before the reader read its backlog: held, then sent after the backlog
    log.append("s", "r", "textDelta", { i: 600 });
    log.flush();
    const { frames, comments } = consume(reader);
    await until(() => frames.length === 501);
    for (let i = 601; i < 610; i++) log.append("s", "r2", "textDelta", { i });
    await until(() => frames.length === 510);
    expect(comments[0]).toBe(": stream");
    expect(frames.map((f) => f.id)).toEqual(Array.from({ length: 510 }, (_, k) => 101 + k));
    expect(frames.map((f) => (f.data.data as { i: number }).i)).toEqual(
      Array.from({ length: 510 }, (_, k) => 100 + k),
    );
    expect(frames.every((f) => f.event === "textDelta" && f.data.seq === f.id)).toBe(true);
  });

  it("a stored event and the same event live are the same bytes", async () => {
    const log = freshLog();
    const live = consume(new SseReader(log, "s", 0, undefined, { limit: 100 }));
    const e = log.append("s", "r", "toolCompleted", { callId: "c1", result: { ok: true, text: 'é "q"' } });
    const empty = log.append("s", "r", "runStarted", undefined);
    await until(() => live.frames.length === 2);
    const stored = consume(new SseReader(log, "s", 0, undefined, { limit: 100 }));
    await until(() => stored.frames.length === 2);
    expect(stored.frames).toEqual(live.frames);
    expect(live.frames[0]!.data.data).toEqual({ callId: "c1", result: { ok: true, text: 'é "q"' } });
    expect(live.frames[1]!.data.data).toBeNull();
    expect(sseFrame(e)).toMatch(/^id: 1\nevent: toolCompleted\ndata: \{"seq":1,/);
    expect(sseFrame(empty)).toContain('"data":null}');
  });

  it("a run's stream ends after its runFinished, from the backlog or live; past its end it ends at once", async () => {
    const log = freshLog();
    log.append("s", "r", "runQueued", {});
    log.append("s", "other", "runQueued", {});
    await nextTick();
    const live = consume(new SseReader(log, "s", 0, "r", { limit: 100 }));
    log.append("s", "r", "textDelta", { text: "a" });
    log.append("s", "r", "runFinished", { state: "completed" });
    log.append("s", "r", "late", {});
    await live.ended;
    expect(live.frames.map((f) => [f.id, f.event])).toEqual([
      [1, "runQueued"],
      [3, "textDelta"],
      [4, "runFinished"],
    ]);
    const stored = consume(new SseReader(log, "s", 1, "r", { limit: 100 }));
    await stored.ended;
    expect(stored.frames.map((f) => f.id)).toEqual([3, 4]);
    const past = consume(new SseReader(log, "s", 4, "r", { limit: 100 }));
    await past.ended;
    expect(past.frames).toEqual([]);
    expect(past.comments).toEqual([": stream"]);
  });

  it("ends a reader that falls `limit` events behind, without slowing the writer, and counts it dropped", async () => {
    const log = freshLog();
    const closed: boolean[] = [];
    let opened = 0;
    const metrics = {
      sseOpened: () => opened++,
      sseClosed: (dropped: boolean) => closed.push(dropped),
    } as unknown as MetricsShape;
    const reader = new SseReader(log, "s", 0, undefined, { limit: 5, metrics });
    readers.push(reader);
    reader.read(); // starts it, then never reads again
    await nextTick();
    for (let i = 0; i < 20; i++) log.append("s", "r", "textDelta", { i });
    await nextTick();
    expect(reader.wasDropped()).toBe(true);
    expect(opened).toBe(1);
    expect(closed).toEqual([true]);
    // unsubscribed: later events do not reach it
    const buffered = reader.readableLength;
    log.append("s", "r", "textDelta", { i: 20 });
    await nextTick();
    expect(reader.readableLength).toBe(buffered);
    // what it got is a prefix; reconnecting from its last seq gives exactly the rest
    const { frames, ended } = consume(reader);
    await ended;
    const last = frames.at(-1)!.id;
    expect(frames.map((f) => f.id)).toEqual(Array.from({ length: last }, (_, k) => k + 1));
    const rest = consume(new SseReader(log, "s", last, undefined, { limit: 100 }));
    await until(() => rest.frames.length === 21 - last);
    expect(rest.frames.map((f) => f.id)).toEqual(Array.from({ length: 21 - last }, (_, k) => last + 1 + k));
  });

  it("a reader that is closed leaves the log's listeners and is counted closed, not dropped", async () => {
    const log = freshLog();
    const closed: boolean[] = [];
    const metrics = {
      sseOpened: () => undefined,
      sseClosed: (d: boolean) => closed.push(d),
    } as unknown as MetricsShape;
    const { frames } = consume(new SseReader(log, "s", 0, undefined, { limit: 100, metrics }));
    log.append("s", "r", "textDelta", {});
    await until(() => frames.length === 1);
    readers[0]!.destroy();
    expect(closed).toEqual([false]);
    log.append("s", "r", "textDelta", {});
    await nextTick();
    expect(frames).toHaveLength(1);
  });
});
