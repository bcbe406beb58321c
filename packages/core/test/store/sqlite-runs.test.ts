// SqliteStore: a path's envelopes read from `node_runs` (migration 7; sqlite-runs.ts `nodeRuns`,
// sqlite-nodes.ts RUN_SQL / appendRun): one row per chain a commit wrote, instead of the
// envelope columns of every node row. `nodes` stays the truth: every read must give exactly
// what the rows give — with the runs, without them, with some of them, with runs a damaged
// file no longer trusts — and a row changed or deleted by anything drops the run that holds it.
import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import type { NewNode, SessionStoreShape } from "../../src/store.ts";
import { chain, ids, node, session, turn } from "./helpers.ts";
import { byRows, envelope, tempDb, withRaw } from "./sqlite-helpers.ts";

interface RunSummary {
  readonly line: number;
  readonly first_depth: number;
  readonly last_depth: number;
  readonly first_parent: string | null;
}

const runsOf = (filename: string) =>
  withRaw(
    filename,
    (sql) =>
      sql<RunSummary>`SELECT line, first_depth, last_depth, first_parent FROM node_runs ORDER BY line, first_depth`,
  ) as Effect.Effect<readonly RunSummary[]>;

const nodeCount = (filename: string) =>
  Effect.map(
    withRaw(filename, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM nodes`) as Effect.Effect<
      readonly { n: number }[]
    >,
    (rows) => rows[0]!.n,
  );

const covered = (runs: readonly RunSummary[]) =>
  runs.reduce((sum, r) => sum + r.last_depth - r.first_depth + 1, 0);

/**
 * A session "s" of several commits (1, 5, 40 and 300 nodes), a branch from the middle of the
 * 300 with a compaction on it, and a fork "f" from inside the 40 that goes on for 30 nodes.
 */
const history = (store: SessionStoreShape) =>
  Effect.gen(function* () {
    yield* store.createSession(session("s"));
    let revision = 0;
    let leaf: string | null = null;
    const commit = (turnId: string, nodes: readonly NewNode[]) =>
      Effect.gen(function* () {
        const r = yield* store.commit(turn("s", turnId, revision, nodes));
        revision = r.headRevision;
        leaf = nodes.at(-1)!.id;
      });
    yield* commit("t1", chain("a", "s", null, 1, "t1"));
    yield* commit("t2", chain("b", "s", leaf, 5, "t2"));
    yield* commit("t3", chain("c", "s", leaf, 40, "t3"));
    yield* commit("t4", chain("d", "s", leaf, 300, "t4"));
    // a branch from d150 (a new line), then a compaction and more on it
    yield* commit("t5", chain("e", "s", "d150", 20, "t5"));
    yield* commit("t6", [
      node("k", "s", leaf, { kind: "protocol", payload: { type: "compaction", summary: "so far" } }),
      ...chain("g", "s", "k", 12, "t6"),
    ]);
    yield* store.fork(session("f", { origin: { sessionId: "s", nodeId: "c20" } }));
    yield* store.commit(turn("f", "t1", 0, chain("h", "f", "c20", 30, "t1")));
  });

/** Every path of the history, as read, against the rows walked one by one. */
const expectRowsAgree = (store: SessionStoreShape) =>
  Effect.gen(function* () {
    for (const [sessionId, leaf] of [
      ["s", "g11"],
      ["s", "d299"],
      ["s", "c39"],
      ["f", "h29"],
    ] as const) {
      const path = yield* store.activePath(sessionId, leaf);
      expect(path.map(envelope)).toEqual(yield* byRows(store, ["s", "f"], leaf));
    }
    // from the compaction on: a read that starts inside a line
    expect(ids(yield* store.projectionPath("s", "f0"))).toEqual(["k", ...ids(chain("g", "s", "k", 12))]);
  });

describe("SqliteStore: a path's envelopes from runs", () => {
  it.scoped("a commit writes each chain it appends as one run; the read gives what the rows give", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* history(store);
      const runs = yield* runsOf(filename);
      // one run per commit and line: s's six commits (the fifth on the branch's new line, the
      // sixth going on from it) and the fork's one
      expect(runs).toHaveLength(7);
      expect(covered(runs)).toBe(yield* nodeCount(filename));
      const first = runs[0]!;
      expect([first.first_depth, first.last_depth, first.first_parent]).toEqual([0, 0, null]);
      expect(runs.map((r) => r.first_parent)).toContain("d150");
      expect(runs.map((r) => r.first_parent)).toContain("c20");
      yield* expectRowsAgree(store);
      // a second store over the file (nothing cached): the same
      yield* expectRowsAgree(yield* makeSqliteStore({ filename }));
    }),
  );

  it.scoped("with some runs, or none (a file from before them): the same paths, from the rows", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* history(yield* makeSqliteStore({ filename }));
      const all = (yield* runsOf(filename)).length;
      yield* withRaw(filename, (sql) => sql`DELETE FROM node_runs WHERE first_depth % 2 = 1`);
      const some = (yield* runsOf(filename)).length;
      expect(some).toBeGreaterThan(0);
      expect(some).toBeLessThan(all);
      yield* expectRowsAgree(yield* makeSqliteStore({ filename }));
      yield* withRaw(filename, (sql) => sql`DELETE FROM node_runs`);
      yield* expectRowsAgree(yield* makeSqliteStore({ filename }));
    }),
  );

  it.scoped("a version-6 file gets the runs of its lines when it is opened (migration 7)", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* history(yield* makeSqliteStore({ filename }));
      const runs = yield* runsOf(filename);
      yield* withRaw(filename, (sql) =>
        Effect.gen(function* () {
          yield* sql.unsafe("DROP TRIGGER node_runs_stale_on_update");
          yield* sql.unsafe("DROP TRIGGER node_runs_stale_on_delete");
          yield* sql.unsafe("DROP TABLE node_runs");
          yield* sql.unsafe("PRAGMA user_version = 6");
        }),
      );
      const store = yield* makeSqliteStore({ filename });
      // the backfill finds the chains the commits wrote; commits that went on from the one before
      // (consecutive rows, each node the child of the last) join into one run
      const backfilled = yield* runsOf(filename);
      expect(covered(backfilled)).toBe(yield* nodeCount(filename));
      expect(backfilled.length).toBeLessThan(runs.length);
      expect(new Set(backfilled.map((r) => r.line))).toEqual(new Set(runs.map((r) => r.line)));
      yield* expectRowsAgree(store);
      // and the triggers are back
      yield* withRaw(filename, (sql) => sql`UPDATE nodes SET frame_id = 'f7' WHERE id = 'd10'`);
      expect((yield* runsOf(filename)).length).toBe(backfilled.length - 1);
    }),
  );

  it.scoped("a row changed or deleted by anything drops its run: the read gives the rows' values", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* history(store);
      const before = yield* runsOf(filename);
      // a hand edit of one envelope field: the run holding d10 goes, the others stay
      yield* withRaw(
        filename,
        (sql) => sql`UPDATE nodes SET turn_id = 'edited', created_at = 7 WHERE id = 'd10'`,
      );
      const after = yield* runsOf(filename);
      expect(after).toHaveLength(before.length - 1);
      expect(after.some((r) => r.first_parent === "c39")).toBe(false); // the run of d0..d299
      const fresh = yield* makeSqliteStore({ filename });
      const path = yield* fresh.activePath("s", "d299");
      expect(path.find((n) => n.id === "d10")).toMatchObject({ turnId: "edited", createdAt: 7 });
      yield* expectRowsAgree(fresh);
      // a payload edit is not an envelope edit: the runs stay
      yield* withRaw(filename, (sql) => sql`UPDATE nodes SET payload_json = '{"x":1}' WHERE id = 'c3'`);
      expect(yield* runsOf(filename)).toHaveLength(after.length);
      // deleting the fork removes its own nodes and, with them, its run (its path runs through s's)
      const forkLine = (yield* runsOf(filename)).find((r) => r.first_parent === "c20")!.line;
      yield* fresh.deleteSession("f");
      expect((yield* runsOf(filename)).some((r) => r.line === forkLine)).toBe(false);
      expect(covered(yield* runsOf(filename))).toBe((yield* nodeCount(filename)) - 300); // d10 was in the run of d0..d299, gone with the edit
    }),
  );

  it.scoped("a run that does not check out, or runs that overlap, are not trusted: the rows are read", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* history(yield* makeSqliteStore({ filename }));
      // a run whose first parent is not the node before it (the runs are edited directly: no trigger)
      yield* withRaw(
        filename,
        (sql) => sql`UPDATE node_runs SET first_parent = 'elsewhere' WHERE first_parent = 'c39'`,
      );
      yield* expectRowsAgree(yield* makeSqliteStore({ filename }));
      // a run with a kind letter no node has, and one whose ids column is short of a node
      yield* withRaw(filename, (sql) =>
        Effect.gen(function* () {
          yield* sql`UPDATE node_runs SET kinds = replace(kinds, 'm', 'z') WHERE first_parent = 'b4'`;
          yield* sql`UPDATE node_runs SET ids = substr(ids, 1, instr(ids, char(31)) - 1) WHERE first_parent = 'a0'`;
        }),
      );
      yield* expectRowsAgree(yield* makeSqliteStore({ filename }));
      // a run overlapping the next one: the path is read through the parent ids
      yield* withRaw(
        filename,
        (
          sql,
        ) => sql`INSERT INTO node_runs (line, first_depth, last_depth, first_seq, first_parent, ids, frames, kinds, turns, created)
          SELECT line, first_depth + 1, last_depth + 1, first_seq + 1, 'a0', ids, frames, kinds, turns, created
          FROM node_runs WHERE first_parent = 'b4'`,
      );
      yield* expectRowsAgree(yield* makeSqliteStore({ filename }));
    }),
  );

  it.scoped("values a run cannot hold keep their nodes out of runs, read from their rows", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s"));
      const nodes = [
        ...chain("a", "s", null, 4, "t1"),
        node("b\u001fsep", "s", "a3", { turnId: "t1" }),
        node("c", "s", "b\u001fsep", { turnId: "t\u001e" }),
        node("d", "s", "c", { createdAt: 1.5 }),
        node("e", "s", "d", { frameId: "f\u001fx" }),
        ...chain("g", "s", "e", 4, null),
      ];
      yield* store.commit(turn("s", "t1", 0, nodes));
      const runs = yield* runsOf(filename);
      // a0..a3 and g0..g3: the four nodes in between are in no run
      expect(runs.map((r) => [r.first_depth, r.last_depth])).toEqual([
        [0, 3],
        [8, 11],
      ]);
      expect(runs[1]!.first_parent).toBe("e");
      const path = yield* store.activePath("s");
      expect(path.map(envelope)).toEqual(yield* byRows(store, ["s"], "g3"));
      expect(path[6]!.createdAt).toBe(1.5);
    }),
  );

  it.scoped(
    "a run writes a shared frame and turn once and times as differences; mixed ones read back exactly",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s"));
        // one turn, one frame, real timestamps
        const same = chain("a", "s", null, 5, "turn_1").map((n, i) => ({
          ...n,
          createdAt: 1_732_700_000_000 + i * 7,
        }));
        yield* store.commit(turn("s", "t1", 0, same));
        // turns and frames that change inside one chain (NULL and empty turns among them), times going back
        const mixed = [
          node("b0", "s", "a4", { turnId: null, createdAt: 1_732_700_001_000 }),
          node("b1", "s", "b0", { turnId: "", createdAt: 1_732_700_000_500 }),
          node("b2", "s", "b1", { turnId: "turn_2", frameId: "f1", createdAt: -3 }),
          node("b3", "s", "b2", { turnId: "turn_2", frameId: "f1", createdAt: 2 ** 51 }),
          node("b4", "s", "b3", { turnId: null, createdAt: 0 }),
        ];
        yield* store.commit(turn("s", "t2", 1, mixed));
        const rows = (yield* withRaw(
          filename,
          (sql) =>
            sql<{
              frames: string;
              turns: string;
              created: string;
            }>`SELECT frames, turns, created FROM node_runs ORDER BY first_depth`,
        )) as readonly { frames: string; turns: string; created: string }[];
        expect(rows).toHaveLength(2); // every node fits: one run per commit
        expect(rows[0]).toEqual({ frames: "f0", turns: "turn_1", created: "1732700000000,7,7,7,7" });
        expect(rows[1]!.frames.split("\u001f")).toHaveLength(5);
        expect(rows[1]!.turns.split("\u001f")).toEqual(["\u001e", "", "turn_2", "turn_2", "\u001e"]);
        for (const fresh of [store, yield* makeSqliteStore({ filename })]) {
          const path = yield* fresh.activePath("s");
          expect(path.map(envelope)).toEqual(yield* byRows(fresh, ["s"], "b4"));
          expect(path.map((n) => n.createdAt).slice(5)).toEqual([
            1_732_700_001_000,
            1_732_700_000_500,
            -3,
            2 ** 51,
            0,
          ]);
          expect(path.map((n) => n.turnId).slice(5)).toEqual([null, "", "turn_2", "turn_2", null]);
        }
      }),
  );

  it.scoped("a line is not numbered again while a run of it is left", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s"));
      yield* store.commit(turn("s", "t1", 0, chain("a", "s", null, 3)));
      // a run of a line no node or line row holds (left by a damaged file)
      yield* withRaw(
        filename,
        (
          sql,
        ) => sql`INSERT INTO node_runs (line, first_depth, last_depth, first_seq, first_parent, ids, frames, kinds, turns, created)
          VALUES (40, 0, 0, 1, NULL, 'ghost', 'f0', 'm', char(30), '1')`,
      );
      yield* store.createSession(session("u"));
      yield* store.commit(turn("u", "t1", 0, chain("u", "u", null, 3)));
      const lines = (yield* runsOf(filename)).map((r) => r.line);
      expect(Math.max(...lines)).toBeGreaterThan(40);
      expect(ids(yield* store.activePath("u"))).toEqual(["u0", "u1", "u2"]);
      // and with no run left at all (or no line row), new lines still go above every node's
      yield* withRaw(filename, (sql) => sql`DELETE FROM node_runs`);
      yield* withRaw(filename, (sql) => sql`DELETE FROM node_lines WHERE session_id = 'u'`);
      yield* store.commit(turn("u", "t2", 1, [node("w0", "u", "u0")])); // a branch: a new line
      yield* store.createSession(session("v"));
      yield* store.commit(turn("v", "t1", 0, chain("v", "v", null, 2)));
      expect(ids(yield* store.activePath("u"))).toEqual(["u0", "w0"]);
      expect(ids(yield* store.activePath("v"))).toEqual(["v0", "v1"]);
      const used = (yield* withRaw(
        filename,
        (sql) =>
          sql<{
            line: number;
            n: number;
          }>`SELECT line, count(DISTINCT session_id) AS n FROM nodes GROUP BY line`,
      )) as readonly { line: number; n: number }[];
      expect(used.every((l) => l.n === 1)).toBe(true); // no line shared by two sessions
    }),
  );

  it.scoped("payloads of a path of many small runs are read in chunks that span runs", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s"));
      let leaf: string | null = null;
      for (let t = 0; t < 100; t++) {
        const nodes = chain(`t${t}-`, "s", leaf, 7, `t${t}`);
        yield* store.commit(turn("s", `t${t}`, t, nodes));
        leaf = nodes.at(-1)!.id;
      }
      expect(yield* runsOf(filename)).toHaveLength(100);
      const path = yield* store.activePath("s");
      expect(path).toHaveLength(700);
      // every payload is its own node's (the chunks' rows line up with the nodes across runs)
      for (const n of path) expect((n.payload as { id: string }).id).toBe(n.id);
    }),
  );
});
