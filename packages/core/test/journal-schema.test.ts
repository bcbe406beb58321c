// Journal.once with the schema of what it records, over a real SQLite file: the value
// is encoded before it is written, decoded on replay (a class instance comes back as
// one), and a recorded outcome that does not fit is a StoreError naming the entry.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Exit, Schema } from "effect";
import { Journal } from "../src/journal.ts";
import { makeSqliteStore } from "../src/store/sqlite.ts";
import { session } from "./store/helpers.ts";
import { tempDb, withRaw } from "./store/sqlite-helpers.ts";

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
        const row = yield* withRaw(
          filename,
          (sql) => sql<{ outcome_json: string }>`SELECT outcome_json FROM journal`,
        );
        expect(JSON.parse(row[0]!.outcome_json)).toEqual({ text: "hello", at: 86_400_000 });

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

        yield* withRaw(
          filename,
          (sql) => sql`UPDATE journal SET outcome_json = '{"text":5}' WHERE key = 's1:t1:0:llm:1'`,
        );
        const exit = yield* Effect.exit(journal.once(ids, "s1:t1:0:llm:1", { ask: 1 }, call, Reply));
        expect(Exit.isFailure(exit)).toBe(true);
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
