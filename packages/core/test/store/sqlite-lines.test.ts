// SqliteStore schema v4: the active path read from lines (migration 4), the
// forward migration of a v3 database, and rows that do not decode.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Exit } from "effect";
import { makeSqliteStore, SQLITE_SCHEMA_VERSION, sqliteMigrations } from "../../src/store/sqlite.ts";
import type { SessionStoreShape } from "../../src/store.ts";
import { chain, ids, node, session, turn } from "./helpers.ts";
import { tempDb, withRaw } from "./sqlite-helpers.ts";

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure");
  if (exit.cause._tag !== "Fail") throw new Error(`expected a typed failure, got ${exit.cause}`);
  return exit.cause.error;
};

/**
 * A history with a branch and two forks:
 *   main:  a0 a1 a2 a3 a4 (leaf)      branch b0 b1 under a2
 *   fork1: from a3, then f0 f1        fork2: from b1, then g0
 *   fork3: from f0 (a fork of a fork), then h0
 */
const build = (store: SessionStoreShape) =>
  Effect.gen(function* () {
    yield* store.createSession(session("main"));
    yield* store.commit(turn("main", "t1", 0, chain("a", "main", null, 3)));
    yield* store.commit(turn("main", "t2", 1, chain("b", "main", "a2", 2)));
    yield* store.setLeaf("main", "a2", 2, 3_000);
    yield* store.commit(turn("main", "t3", 3, [node("a3", "main", "a2"), node("a4", "main", "a3")]));
    yield* store.fork(session("fork1", { origin: { sessionId: "main", nodeId: "a3" } }));
    yield* store.commit(turn("fork1", "t1", 0, chain("f", "fork1", "a3", 2)));
    yield* store.fork(session("fork2", { origin: { sessionId: "main", nodeId: "b1" } }));
    yield* store.commit(turn("fork2", "t1", 0, [node("g0", "fork2", "b1")]));
    yield* store.fork(session("fork3", { origin: { sessionId: "fork1", nodeId: "f0" } }));
    yield* store.commit(turn("fork3", "t1", 0, [node("h0", "fork3", "f0")]));
  });

/** What `build` must read back, whichever way the store reads it. */
const expectPaths = (store: SessionStoreShape) =>
  Effect.gen(function* () {
    expect(ids(yield* store.activePath("main"))).toEqual(["a0", "a1", "a2", "a3", "a4"]);
    expect(ids(yield* store.activePath("main", "b1"))).toEqual(["a0", "a1", "a2", "b0", "b1"]);
    expect(ids(yield* store.activePath("main", "a1"))).toEqual(["a0", "a1"]);
    expect(ids(yield* store.activePath("fork1"))).toEqual(["a0", "a1", "a2", "a3", "f0", "f1"]);
    expect(ids(yield* store.activePath("fork2"))).toEqual(["a0", "a1", "a2", "b0", "b1", "g0"]);
    expect(ids(yield* store.activePath("fork3"))).toEqual(["a0", "a1", "a2", "a3", "f0", "h0"]);
    const path = yield* store.activePath("fork3");
    expect(path[5]).toMatchObject({ id: "h0", sessionId: "fork3", parentId: "f0", kind: "message" });
    expect(path[5]!.payload).toEqual({
      id: "h0",
      role: "user",
      parts: [{ type: "text", text: "text of h0" }],
    });
  });

describe("SqliteStore: the active path from lines", () => {
  it.scoped("branches and forks (of forks) read back root → leaf; each branch point is one line", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* build(store);
      yield* expectPaths(store);
      const lines = yield* withRaw(
        filename,
        (sql) =>
          sql<{ session_id: string; n: number }>`SELECT session_id, count(*) AS n FROM node_lines
          GROUP BY session_id ORDER BY session_id`,
      );
      // main: a-line, b-branch, a3 continues the a-line; forks: one line each
      expect(lines).toEqual([
        { session_id: "fork1", n: 1 },
        { session_id: "fork2", n: 1 },
        { session_id: "fork3", n: 1 },
        { session_id: "main", n: 2 },
      ]);
    }),
  );

  it.scoped("rows without their line (salvaged from a damaged file) are read through the parent chain", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* build(store);
      yield* withRaw(filename, (sql) =>
        Effect.all([
          sql`UPDATE nodes SET line = NULL, depth = NULL WHERE id IN ('a4', 'g0')`,
          sql`DELETE FROM node_lines WHERE session_id = 'fork3'`,
        ]),
      );
      yield* expectPaths(store);
      // and a commit on top of a node without a line still reads back whole
      yield* store.commit(turn("fork2", "t2", 1, [node("g1", "fork2", "g0")]));
      expect(ids(yield* store.activePath("fork2"))).toEqual(["a0", "a1", "a2", "b0", "b1", "g0", "g1"]);
      // projectionPath: a leaf without its line reads the whole path; after a compaction, from it on
      expect(ids(yield* store.projectionPath("main", "f0"))).toEqual(ids(yield* store.activePath("main")));
      yield* store.commit(
        turn("fork2", "t3", 2, [
          node("gc", "fork2", "g1", { kind: "protocol", payload: { type: "compaction", summary: "s" } }),
          node("g2", "fork2", "gc"),
        ]),
      );
      expect(ids(yield* store.projectionPath("fork2", "f0"))).toEqual(["gc", "g2"]);
    }),
  );

  it.scoped(
    "a version-3 database written by the previous lash migrates forward and reads the same transcripts",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        // Written by the store, then taken back to exactly the v3 schema (what lash wrote before lines).
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* makeSqliteStore({ filename });
            yield* build(store);
            yield* store.createSession(session("big"));
            yield* store.commit(turn("big", "t1", 0, chain("x", "big", null, 3_000)));
          }),
        );
        yield* withRaw(filename, (sql) =>
          Effect.gen(function* () {
            // migration 7 (runs), 6 (the compaction index), 5 (artifacts), then 4
            yield* sql.unsafe("DROP TRIGGER node_runs_stale_on_update");
            yield* sql.unsafe("DROP TRIGGER node_runs_stale_on_delete");
            yield* sql.unsafe("DROP TABLE node_runs");
            yield* sql.unsafe("DROP INDEX nodes_compaction");
            yield* sql.unsafe("DROP INDEX artifact_refs_node");
            yield* sql.unsafe("DROP TABLE artifact_refs");
            yield* sql.unsafe("DROP TABLE artifact_chunks");
            yield* sql.unsafe("DROP TABLE artifacts");
            yield* sql.unsafe("DROP INDEX nodes_line");
            yield* sql.unsafe("DROP INDEX node_lines_session");
            yield* sql.unsafe("DROP INDEX tool_outputs_provider");
            yield* sql.unsafe("DROP TABLE node_lines");
            yield* sql.unsafe("DROP TABLE tool_outputs");
            yield* sql.unsafe("ALTER TABLE nodes DROP COLUMN line");
            yield* sql.unsafe("ALTER TABLE nodes DROP COLUMN depth");
            yield* sql.unsafe("PRAGMA user_version = 3");
            // a journal row as the previous lash wrote it (the `journal` table; now a file per turn)
            yield* sql`INSERT INTO journal (key, session_id, turn_id, hash, status, outcome_json, updated_at)
              VALUES ('k', 'main', 't9', 'h', 'completed', '{"text":"recorded"}', 1)`;
          }),
        );
        // The downgraded file has exactly the schema migrations 1–3 create.
        const schemaOf = (file: string) =>
          withRaw(
            file,
            (sql) =>
              sql<{ type: string; name: string }>`SELECT type, name FROM sqlite_master
            WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`,
          );
        const reference = `${filename}.v3`;
        yield* withRaw(reference, (sql) =>
          Effect.gen(function* () {
            for (const migration of sqliteMigrations.slice(0, 3))
              for (const s of migration) yield* sql.unsafe(s);
          }),
        );
        expect(yield* schemaOf(filename)).toEqual(yield* schemaOf(reference));
        const columns = (file: string) =>
          withRaw(
            file,
            (sql) => sql<{ name: string }>`SELECT name FROM pragma_table_info('nodes') ORDER BY cid`,
          );
        expect(yield* columns(filename)).toEqual(yield* columns(reference));

        // Open with this lash: migrated in place, same transcripts.
        const store = yield* makeSqliteStore({ filename });
        const version = yield* withRaw(filename, (sql) => sql<{ user_version: number }>`PRAGMA user_version`);
        expect(version[0]?.user_version).toBe(SQLITE_SCHEMA_VERSION);
        const unplaced = yield* withRaw(
          filename,
          (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM nodes WHERE line IS NULL OR depth IS NULL`,
        );
        expect(unplaced[0]?.n).toBe(0);
        // migration 7 gave every chain its runs: each node is in exactly one
        const runs = yield* withRaw(
          filename,
          (sql) => sql<{ runs: number; covered: number; nodes: number }>`SELECT count(*) AS runs,
            sum(last_depth - first_depth + 1) AS covered, (SELECT count(*) FROM nodes) AS nodes FROM node_runs`,
        );
        expect(runs[0]!.runs).toBeGreaterThan(0);
        expect(runs[0]!.covered).toBe(runs[0]!.nodes);
        yield* expectPaths(store);
        const big = yield* store.activePath("big");
        expect(big).toHaveLength(3_000);
        expect(big[2_999]!.id).toBe("x2999");
        expect((yield* store.journalGet("k"))?.outcome).toEqual({ text: "recorded" });
        // and it keeps working: a new turn on the migrated session, a new branch, a new fork
        yield* store.commit(turn("big", "t2", 1, [node("y0", "big", "x2999")]));
        yield* store.commit(turn("big", "t3", 2, [node("z0", "big", "x10")]));
        expect(ids(yield* store.activePath("big")).slice(-3)).toEqual(["x9", "x10", "z0"]);
        expect(yield* store.activePath("big", "y0")).toHaveLength(3_001);
        yield* store.fork(session("fork4", { origin: { sessionId: "main", nodeId: "b0" } }));
        yield* store.commit(turn("fork4", "t1", 0, [node("k0", "fork4", "b0")]));
        expect(ids(yield* store.activePath("fork4"))).toEqual(["a0", "a1", "a2", "b0", "k0"]);
      }),
  );
});

describe("SqliteStore: rows that do not decode", () => {
  it.scoped("a node payload that is not JSON, or not a message, names the session and node and the fix", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s1"));
      yield* store.commit(turn("s1", "t1", 0, chain("n", "s1", null, 3)));
      yield* withRaw(filename, (sql) =>
        Effect.all([
          sql`UPDATE nodes SET payload_json = '{"id":' WHERE id = 'n1'`,
          sql`UPDATE nodes SET payload_json = '{"id":"n2","role":"user"}' WHERE id = 'n2'`,
        ]),
      );
      const path = yield* store.activePath("s1");
      expect(path[0]!.payload).toMatchObject({ id: "n0" });
      expect(() => path[1]!.payload).toThrow(/session s1, node n1: the stored row is not valid \(not JSON/);
      expect(() => path[2]!.payload).toThrow(/session s1, node n2: .*parts.*lash doctor/s);
    }),
  );

  it.scoped(
    "an unknown node kind, a bad journal outcome, a bad session state: typed StoreErrors naming the row",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s1"));
        yield* store.createSession(session("s2"));
        yield* store.commit(turn("s1", "t1", 0, chain("n", "s1", null, 2)));
        yield* withRaw(filename, (sql) =>
          Effect.all([
            sql`UPDATE nodes SET kind = 'mystery' WHERE id = 'n1'`,
            // a journal row of the `journal` table (what a version before the turn files wrote)
            sql`INSERT INTO journal (key, session_id, turn_id, hash, status, outcome_json, updated_at)
              VALUES ('j1', 's1', 't2', 'h', 'completed', 'nope', 1)`,
            sql`UPDATE sessions SET state_json = '[1,2]' WHERE id = 's2'`,
          ]),
        );
        const path = failureOf(yield* Effect.exit(store.activePath("s1")));
        expect(path._tag).toBe("StoreError");
        expect(path.message).toMatch(/session s1, node n1: .*unknown node kind "mystery"/);
        const journal = failureOf(yield* Effect.exit(store.journalGet("j1")));
        expect(journal._tag).toBe("StoreError");
        expect(journal.message).toMatch(/journal entry j1: the stored row is not valid \(not JSON/);
        const state = failureOf(yield* Effect.exit(store.getSession("s2")));
        expect(state._tag).toBe("StoreError");
        expect(state.message).toMatch(/session s2: the stored row is not valid/);
        expect(state.message).toContain("lash doctor");
      }),
  );
});
