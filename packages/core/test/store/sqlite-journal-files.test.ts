// SqliteStore's journal as one append-only file per turn in flight (store/journal-file.ts): what
// is on disk, a write cut off by a crash, a damaged file, leftovers swept at open, the rows an
// older version wrote to the `journal` table, artifact collection, and an in-memory database.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "@effect/vitest";
import { sha256BytesHex } from "@lash/sansio";
import { Effect, Exit } from "effect";
import { turnJournals } from "../../src/store/journal-file.ts";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import type { JournalEntry, SessionStoreShape } from "../../src/store.ts";
import { chain, session, turn } from "./helpers.ts";
import { tempDb, withRaw } from "./sqlite-helpers.ts";

const entry = (key: string, over: Partial<JournalEntry> = {}): JournalEntry => ({
  key,
  sessionId: "s1",
  turnId: "t2",
  hash: `h-${key}`,
  status: "completed",
  outcome: { said: key },
  updatedAt: 1,
  ...over,
});

/** s1 with one committed turn (t1) and t2 begun: the state a journal belongs to. */
const begun = (store: SessionStoreShape, sessionId = "s1") =>
  Effect.gen(function* () {
    yield* store.createSession(session(sessionId));
    yield* store.commit(turn(sessionId, "t1", 0, chain(`${sessionId}-n`, sessionId, null, 2)));
    yield* store.beginTurn({
      sessionId,
      turnId: "t2",
      input: { text: "go" },
      expectedRevision: 1,
      startedAt: 2,
    });
  });

/** A process that began s1's turn t2, journaled "a", and exited. */
const wroteA = (filename: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const store = yield* makeSqliteStore({ filename });
      yield* begun(store);
      yield* store.journalPut(entry("a"));
    }),
  );

const fileOf = (db: string, sessionId = "s1", turnId = "t2") =>
  join(`${db}.turns`, `${sessionId}.${turnId}.jsonl`);
const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "");

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure");
  if (exit.cause._tag !== "Fail") throw new Error(`expected a typed failure, got ${exit.cause._tag}`);
  return exit.cause.error;
};

describe("SqliteStore: the journal of a turn in flight is a file beside the database", () => {
  it.scoped("each write is one line; a rewrite of a key keeps its place; the commit removes the file", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* begun(store);
      yield* store.journalPut(entry("a", { status: "started", outcome: undefined }));
      yield* store.journalPutMany!([entry("b"), entry("c")]);
      yield* store.journalPut(entry("a"));
      const file = fileOf(filename);
      expect(
        lines(file).map((l) => (JSON.parse(l) as JournalEntry[]).map((e) => `${e.key}/${e.status}`)),
      ).toEqual([["a/started"], ["b/completed", "c/completed"], ["a/completed"]]);
      // the journal table is not written any more
      const rows = yield* withRaw(filename, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM journal`);
      expect(rows[0]!.n).toBe(0);
      expect((yield* store.journalForTurn("s1", "t2")).map((e) => `${e.key}/${e.status}`)).toEqual([
        "a/completed",
        "b/completed",
        "c/completed",
      ]);
      yield* store.commit(turn("s1", "t2", 1, chain("m", "s1", "s1-n1", 1)));
      expect(existsSync(file)).toBe(false);
      expect(readdirSync(`${filename}.turns`)).toEqual([]); // the directory itself goes when the store closes
      expect(yield* store.journalGet("a")).toBeUndefined();
      expect(yield* store.journalForTurn("s1", "t2")).toEqual([]);
    }),
  );

  it.scoped(
    "another process (a new store on the file) reads a pending turn's journal and appends to it",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        yield* wroteA(filename);
        const store = yield* makeSqliteStore({ filename });
        expect((yield* store.journalGet("a"))?.outcome).toEqual({ said: "a" });
        expect(yield* store.journalGet("nope")).toBeUndefined();
        yield* store.journalPut(entry("b"));
        expect((yield* store.journalForTurn("s1", "t2")).map((e) => e.key)).toEqual(["a", "b"]);
      }),
  );

  it.scoped("a write cut off by a crash is skipped, and the next process's writes after it are read", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* wroteA(filename);
      // the process died in the middle of its second write: half a line, no newline
      const file = fileOf(filename);
      appendFileSync(file, JSON.stringify([entry("b")]).slice(0, 25));
      const store = yield* makeSqliteStore({ filename });
      expect(yield* store.journalGet("b")).toBeUndefined();
      yield* store.journalPut(entry("c"));
      expect((yield* store.journalForTurn("s1", "t2")).map((e) => e.key)).toEqual(["a", "c"]);
      // the torn line was ended before the new one: three lines, the middle one unreadable
      expect(lines(file)).toHaveLength(3);
      const again = yield* makeSqliteStore({ filename });
      expect((yield* again.journalGet("c"))?.status).toBe("completed");
    }),
  );

  it.scoped("a damaged entry is a StoreError naming the file and the line", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* begun(store);
      yield* store.journalPut(entry("a"));
      appendFileSync(fileOf(filename), `${JSON.stringify([{ ...entry("b"), status: "half-done" }])}\n`);
      const err = failureOf(yield* Effect.exit(store.journalForTurn("s1", "t2")));
      expect(err._tag).toBe("StoreError");
      expect(err.message).toContain(fileOf(filename));
      expect(err.message).toMatch(/line 2/);
      appendFileSync(fileOf(filename), '{"not":"a batch"}\n');
      const other = yield* makeSqliteStore({ filename });
      const bad = failureOf(yield* Effect.exit(other.journalForTurn("s1", "t2")));
      expect(bad.message).toMatch(/line 2|line 3/);
    }),
  );

  it.scoped("opening the store sweeps the files of turns no longer pending, and keeps the pending ones", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ filename });
          yield* begun(store, "s1");
          yield* begun(store, "s2");
          yield* store.journalPut(entry("a"));
          yield* store.journalPut(entry("b", { sessionId: "s2" }));
        }),
      );
      // a crash between s2's commit and the deletion of its file would leave this: the commit is in, the file too
      const leftover = fileOf(filename, "s2");
      const kept = readFileSync(leftover, "utf8");
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ filename });
          yield* store.commit(turn("s2", "t2", 1, chain("m", "s2", "s2-n1", 1)));
        }),
      );
      mkdirSync(join(leftover, ".."), { recursive: true });
      writeFileSync(leftover, kept);
      const store = yield* makeSqliteStore({ filename });
      expect(existsSync(leftover)).toBe(false);
      expect(existsSync(fileOf(filename, "s1"))).toBe(true);
      expect((yield* store.journalGet("a"))?.status).toBe("completed");
      expect(yield* store.journalGet("b")).toBeUndefined();
    }),
  );

  it.scoped("deleting a session removes its turn files; abandoning a turn removes that turn's", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* begun(store, "s1");
      yield* begun(store, "s2");
      yield* store.journalPut(entry("a"));
      yield* store.journalPut(entry("b", { sessionId: "s2" }));
      yield* store.abandonTurn("s1", "t2");
      expect(existsSync(fileOf(filename, "s1"))).toBe(false);
      expect(yield* store.journalGet("a")).toBeUndefined();
      yield* store.deleteSession("s2");
      expect(readdirSync(`${filename}.turns`).filter((f) => f.startsWith("s2."))).toEqual([]);
      expect(yield* store.journalGet("b")).toBeUndefined();
    }),
  );

  it.scoped("ids that are not file-name safe are named by their hash", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("../odd session"));
      yield* store.beginTurn({
        sessionId: "../odd session",
        turnId: "t/1",
        input: { text: "go" },
        expectedRevision: 0,
        startedAt: 2,
      });
      yield* store.journalPut(entry("a", { sessionId: "../odd session", turnId: "t/1" }));
      expect(readdirSync(`${filename}.turns`)).toEqual([
        expect.stringMatching(/^h-[0-9a-f]{40}\.h-[0-9a-f]{40}\.jsonl$/),
      ]);
      expect((yield* store.journalForTurn("../odd session", "t/1")).map((e) => e.key)).toEqual(["a"]);
    }),
  );

  it.scoped(
    "rows an older version wrote to the journal table are still read (merged, file last) and go with the commit",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* begun(store);
        yield* withRaw(
          filename,
          (sql) => sql`INSERT INTO journal (key, session_id, turn_id, hash, status, outcome_json, updated_at)
            VALUES ('old', 's1', 't2', 'h-old', 'started', NULL, 1), ('a', 's1', 't2', 'h-a', 'started', NULL, 1)`,
        );
        expect((yield* store.journalGet("old"))?.status).toBe("started");
        yield* store.journalPut(entry("a"));
        expect((yield* store.journalForTurn("s1", "t2")).map((e) => `${e.key}/${e.status}`)).toEqual([
          "old/started",
          "a/completed",
        ]);
        yield* store.commit(turn("s1", "t2", 1, chain("m", "s1", "s1-n1", 1)));
        const rows = yield* withRaw(filename, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM journal`);
        expect(rows[0]!.n).toBe(0);
      }),
  );

  it.scoped("artifact collection keeps an artifact that only a pending turn's journal file refers to", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* begun(store);
      const kept = new Uint8Array([1, 2, 3]);
      const gone = new Uint8Array([4, 5, 6]);
      const [keptId, goneId] = [sha256BytesHex(kept), sha256BytesHex(gone)];
      yield* store.putArtifact({ bytes: kept, mediaType: "application/octet-stream", createdAt: 1 });
      yield* store.putArtifact({ bytes: gone, mediaType: "application/octet-stream", createdAt: 1 });
      yield* store.journalPut(
        entry("tool", { outcome: { parts: [{ type: "attachment", ref: `artifact:${keptId}` }] } }),
      );
      const gc = yield* store.collectArtifacts({ storedBefore: 10 });
      expect(gc.removed).toEqual([goneId]);
      expect(yield* store.readArtifact(keptId)).toBeDefined();
    }),
  );

  it.scoped("an in-memory database keeps its journal in memory", () =>
    Effect.gen(function* () {
      const store = yield* makeSqliteStore({ filename: ":memory:" });
      yield* begun(store);
      yield* store.journalPut(entry("a", { status: "started", outcome: undefined }));
      yield* store.journalPutMany!([entry("b"), entry("a")]);
      expect((yield* store.journalGet("a"))?.status).toBe("completed");
      expect((yield* store.journalForTurn("s1", "t2")).map((e) => e.key)).toEqual(["a", "b"]);
      yield* store.commit(turn("s1", "t2", 1, chain("m", "s1", "s1-n1", 1)));
      expect(yield* store.journalGet("a")).toBeUndefined();
    }),
  );

  it.scoped("a store with more turns in flight than it keeps files open reopens them as they write", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const journals = turnJournals(`${filename}.turns`);
      const fds = () => readdirSync("/proc/self/fd").length;
      const before = fds();
      for (let i = 0; i < 100; i++) journals.put([entry("a", { sessionId: `s${i}`, turnId: "t" })]);
      expect(fds() - before).toBeLessThanOrEqual(64);
      expect(readdirSync(`${filename}.turns`)).toHaveLength(100);
      // the first turns' files were closed; writing again reopens and appends
      journals.put([entry("b", { sessionId: "s0", turnId: "t" })]);
      expect(journals.forTurn("s0", "t").map((e) => e.key)).toEqual(["a", "b"]);
      expect(journals.get("b")?.sessionId).toBe("s0");
      journals.close();
      expect(fds()).toBe(before);
    }),
  );
});
