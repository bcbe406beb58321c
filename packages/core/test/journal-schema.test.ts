// Journal.once with the schema of what it records, over a real SQLite file: the value
// is encoded before it is written, decoded on replay (a class instance comes back as
// one), and a recorded outcome that does not fit is a StoreError naming the entry.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Exit, Schema } from "effect";
import { Journal } from "../src/journal.ts";
import { makeSqliteStore } from "../src/store/sqlite.ts";
import { session } from "./store/helpers.ts";
import { tempDb } from "./store/sqlite-helpers.ts";

class Reply extends Schema.Class<Reply>("Reply")({
  text: Schema.String,
  at: Schema.DateFromNumber,
}) {
  shout(): string {
    return this.text.toUpperCase();
  }
}

const ids = { sessionId: "s1", turnId: "t1" };

describe("Journal.once with a schema", () => {
  it.scoped(
    "records the encoded value, replays the decoded one, and refuses an outcome that does not fit",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s1"));
        const journal = new Journal(store);
        let runs = 0;
        const call = Effect.sync(() => {
          runs++;
          return new Reply({ text: "hello", at: new Date(86_400_000) });
        });

        const first = yield* journal.once(ids, "s1:t1:0:llm:1", { ask: 1 }, call, Reply);
        expect(first.replayed).toBe(false);
        const recorded = yield* store.journalGet("s1:t1:0:llm:1");
        expect(recorded?.outcome).toEqual({ text: "hello", at: 86_400_000 });

        const again = yield* journal.once(ids, "s1:t1:0:llm:1", { ask: 1 }, call, Reply);
        expect(again.replayed).toBe(true);
        expect(runs).toBe(1);
        expect(again.value).toBeInstanceOf(Reply);
        expect(again.value.shout()).toBe("HELLO");
        expect(again.value.at.getTime()).toBe(86_400_000);

        // the old call shape still works (JSON values, no schema)
        const plain = yield* journal.once(ids, "s1:t1:0:tool:2", { ask: 2 }, Effect.succeed({ n: 1 }));
        expect(
          (yield* journal.once(ids, "s1:t1:0:tool:2", { ask: 2 }, Effect.succeed({ n: 2 }))).value,
        ).toEqual(plain.value);

        // a record whose outcome no longer fits the schema (same key and envelope hash)
        yield* store.journalPut({ ...recorded!, outcome: { text: 5 } });
        const exit = yield* Effect.exit(journal.once(ids, "s1:t1:0:llm:1", { ask: 1 }, call, Reply));
        expect(Exit.isFailure(exit)).toBe(true);
        // a typed failure, not a defect
        expect(Exit.isFailure(exit) && exit.cause._tag).toBe("Fail");
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          expect(exit.cause.error._tag).toBe("StoreError");
          expect(exit.cause.error.message).toMatch(
            /journal entry s1:t1:0:llm:1: the recorded outcome does not fit/,
          );
          expect(exit.cause.error.message).toContain("abandon the interrupted turn");
        } else {
          throw new Error(`expected a typed failure, got ${exit}`);
        }
        expect(runs).toBe(1);
      }),
  );
});

describe("Journal.onceDeferred", () => {
  it.scoped(
    "waits for the next write, writes its records in one go, and checks a replayed outcome against its schema",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s1"));
        const journal = new Journal(store);
        const Answer = Schema.Struct({ n: Schema.Number });
        const a = yield* journal.onceDeferred(ids, "s1:t1:0:a:1", { q: 1 }, Effect.succeed({ n: 1 }), Answer);
        expect(a.replayed).toBe(false);
        // nothing on disk yet: the record waits for the turn's next write
        expect(yield* store.journalGet("s1:t1:0:a:1")).toBeUndefined();
        yield* journal.record(ids, "s1:t1:0:tool:2", "h", "started");
        expect((yield* store.journalGet("s1:t1:0:a:1"))?.status).toBe("completed");
        expect((yield* store.journalGet("s1:t1:0:tool:2"))?.status).toBe("started");

        // replay in another journal (a new process): the recorded value comes back, nothing runs
        const again = new Journal(store);
        const replayed = yield* again.onceDeferred(ids, "s1:t1:0:a:1", { q: 1 }, Effect.die("ran"), Answer);
        expect(replayed).toEqual({ value: { n: 1 }, replayed: true });

        // an outcome that does not fit the schema is a StoreError naming the entry
        const fits = (yield* store.journalGet("s1:t1:0:a:1"))!;
        yield* store.journalPut({ ...fits, outcome: { n: "one" } });
        const bad = yield* Effect.exit(
          again.onceDeferred(ids, "s1:t1:0:a:1", { q: 1 }, Effect.die("ran"), Answer),
        );
        expect(Exit.isFailure(bad)).toBe(true);
        if (Exit.isFailure(bad)) {
          const text = JSON.stringify(bad.cause);
          expect(text).toContain("StoreError");
          expect(text).toContain("s1:t1:0:a:1");
        }

        // a flush writes what waits; discard drops it (the turn committed)
        yield* journal.onceDeferred(ids, "s1:t1:1:a:3", { q: 2 }, Effect.succeed({ n: 3 }), Answer);
        journal.discard("t1");
        yield* journal.flush("t1");
        expect(yield* store.journalGet("s1:t1:1:a:3")).toBeUndefined();
        yield* journal.onceDeferred(ids, "s1:t1:1:a:4", { q: 3 }, Effect.succeed({ n: 4 }), Answer);
        yield* journal.flush("t1");
        expect((yield* store.journalGet("s1:t1:1:a:4"))?.outcome).toEqual({ n: 4 });
      }),
  );
});
