// The durable event log over a real SQLite file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { Chunk, Effect, Option, Stream } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { openStateDb, SCHEMA_VERSION } from "../src/db.ts";
import { EventLogImpl } from "../src/events.ts";

const dirs: string[] = [];
const dbs: Database.Database[] = [];
afterEach(() => {
  for (const d of dbs.splice(0)) if (d.open) d.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fresh(): string {
  const dir = mkdtempSync(join(tmpdir(), "lash-serve-events-"));
  dirs.push(dir);
  return join(dir, "serve.db");
}

function open(file: string): Database.Database {
  const db = openStateDb(file);
  dbs.push(db);
  return db;
}

/** Resolves after the log's group commit of this tick ran. */
const nextTick = () => new Promise((r) => setImmediate(r));

describe("EventLog", () => {
  it("numbers events per session, makes them durable before readers see them, and continues after a reopen", async () => {
    const file = fresh();
    const log = new EventLogImpl(open(file), 100);
    const a1 = log.append("s1", "r1", "runQueued", { text: "hi" });
    log.append("s2", "r2", "runQueued", { text: "other" });
    const a2 = log.append("s1", "r1", "textDelta", { text: "x" });
    expect([a1.seq, a2.seq]).toEqual([1, 2]);
    expect(log.read("s1", 0)).toEqual([]); // queued, not yet committed
    await nextTick();
    expect(log.read("s1", 0).map((e) => [e.seq, e.type])).toEqual([
      [1, "runQueued"],
      [2, "textDelta"],
    ]);
    expect(log.read("s1", 1).map((e) => e.data)).toEqual([{ text: "x" }]);
    dbs[0]!.close();
    const again = new EventLogImpl(open(file), 100);
    expect(again.lastSeq("s1")).toBe(2);
    expect(again.append("s1", "r1", "runFinished", { state: "completed" }).seq).toBe(3);
    await nextTick();
    expect(again.read("s1", 0, "r1").map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it("follows the backlog, then live events exactly once, and a run's stream ends after its runFinished", async () => {
    const log = new EventLogImpl(open(fresh()), 100);
    log.append("s", "r", "runQueued", {});
    log.append("s", "r", "runStarted", {});
    await nextTick();
    const collected = Effect.runPromise(Stream.runCollect(log.follow("s", 1, "r")));
    await nextTick();
    log.append("s", "other", "runQueued", {});
    log.append("s", "r", "textDelta", { text: "a" });
    log.append("s", "r", "runFinished", { state: "completed" });
    log.append("s", "r", "late", {});
    const events = Chunk.toArray(await collected);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [2, "runStarted"],
      [4, "textDelta"],
      [5, "runFinished"],
    ]);
    // reading a finished run past its end ends at once
    expect(Chunk.toArray(await Effect.runPromise(Stream.runCollect(log.follow("s", 5, "r"))))).toEqual([]);
  });

  it("ends a reader that falls behind its buffer without slowing the writer; it catches up by reconnecting", async () => {
    const log = new EventLogImpl(open(fresh()), 3);
    const followed = log.followTracked("s", 0);
    const got: number[] = [];
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const pull = yield* Stream.toPull(followed.stream);
          log.append("s", "r", "one", {});
          yield* Effect.promise(nextTick);
          for (const e of yield* pull) got.push(e.seq);
          // the reader stops pulling; the writer goes on
          for (let i = 0; i < 20; i++) log.append("s", "r", "many", { i });
          yield* Effect.promise(nextTick);
          for (;;) {
            const chunk = yield* Effect.option(pull);
            if (Option.isNone(chunk)) break;
            for (const e of chunk.value) got.push(e.seq);
          }
        }),
      ),
    );
    expect(followed.dropped()).toBe(true);
    expect(got.length).toBeLessThan(21);
    expect(got).toEqual(got.map((_, i) => i + 1));
    expect(log.read("s", 0)).toHaveLength(21);
    // reconnecting with its cursor: exactly the rest
    const rest = Chunk.toArray(
      await Effect.runPromise(
        Stream.runCollect(log.follow("s", got.at(-1)!).pipe(Stream.take(21 - got.length))),
      ),
    );
    expect([...got, ...rest.map((e) => e.seq)]).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });

  it("refuses a state db written by a newer lash, naming the fix", () => {
    const file = fresh();
    const db = open(file);
    db.prepare(`UPDATE serve_meta SET value = ? WHERE key = 'schema_version'`).run(
      String(SCHEMA_VERSION + 1),
    );
    db.close();
    expect(() => openStateDb(file)).toThrow(
      /newer than this lash understands.*upgrade lash, or pass --state/,
    );
  });
});
