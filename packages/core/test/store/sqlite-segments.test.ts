// SqliteStore: the active path read as one aggregate row per line segment (sqlite-nodes.ts
// SEGMENT_SQL / appendSegment). Every envelope field must come back exactly as a row read
// (`sessionNodes`, SELECT *) gives it — including values that hold the decoder's own
// separators, NULL turn ids beside the literal NULL mark, REAL and negative timestamps, and
// rows a damaged file no longer links (those paths are read through the parent ids instead).
import { describe, expect, it } from "@effect/vitest";
import Sqlite from "better-sqlite3";
import { Effect, Exit } from "effect";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import {
  appendSegment,
  NodeCache,
  SEGMENT_SQL,
  type SegmentRow,
  type StoredNode,
} from "../../src/store/sqlite-nodes.ts";
import type { NewNode } from "../../src/store.ts";
import { chain, ids, node, session, turn } from "./helpers.ts";
import { byRows, envelope, tempDb, withRaw } from "./sqlite-helpers.ts";

/** Fields the segment decoder reads itself: NULL and empty turns, every kind, frames, REAL and negative timestamps. */
const PLAIN: Partial<NewNode>[] = [
  { turnId: null },
  { turnId: "" },
  { turnId: "t2" },
  { turnId: "t2", frameId: "f1" },
  { kind: "protocol", payload: { type: "note" } },
  { kind: "plugin", payload: null },
  { kind: "frame", payload: { frameId: "f9" }, frameId: "f9" },
  { createdAt: 1.5 },
  { createdAt: -42 },
  { createdAt: 1_732_700_000_000 },
  { frameId: "\u001e" }, // frames are never NULL: the mark is just a character there
];
/** Fields that hold what a joined column could be confused by: the decoder must refuse them (read by rows). */
const SEPARATED: Partial<NewNode>[] = [
  { turnId: "\u001e" }, // the NULL mark, as a real turn id
  { turnId: "t\u001fsplit" },
  { frameId: "f\u001fsplit" },
];

function awkward(sessionId: string, parentId: string | null, specs = [...PLAIN, ...SEPARATED]): NewNode[] {
  const out: NewNode[] = [];
  let parent = parentId;
  specs.forEach((over, i) => {
    const id = `${sessionId}-${i}`;
    out.push(node(id, sessionId, parent, { turnId: "t1", ...over }));
    parent = id;
  });
  return out;
}

describe("SqliteStore: the path read per line segment", () => {
  it.scoped(
    "every envelope field as a row read gives it: separators, NULL marks, kinds, REAL timestamps",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s"));
        const first = awkward("s", null);
        yield* store.commit(turn("s", "t1", 0, first));
        // ids with the separators (one id holds U+001F, one is U+001E) after the awkward fields
        const tail = [
          node("id\u001fwith-sep", "s", first.at(-1)!.id),
          node("\u001e", "s", "id\u001fwith-sep"),
          node("plain", "s", "\u001e", { turnId: null }),
        ];
        yield* store.commit(turn("s", "t2", 1, tail));
        const path = yield* store.activePath("s");
        expect(path).toHaveLength(first.length + tail.length);
        expect(path.map(envelope)).toEqual(yield* byRows(store, ["s"], "plain"));
        // and without the separators in the ids: the same through the segment decoder
        yield* store.createSession(session("u"));
        const clean = awkward("u", null);
        yield* store.commit(turn("u", "t1", 0, clean));
        const read = yield* store.activePath("u");
        expect(read.map(envelope)).toEqual(yield* byRows(store, ["u"], clean.at(-1)!.id));
        expect(read[0]!.turnId).toBeNull();
        expect(read[1]!.turnId).toBe("");
        expect(read[7]!.createdAt).toBe(1.5);
        expect(read[8]!.createdAt).toBe(-42);
        expect(read[11]!.turnId).toBe("\u001e");
        // a node's parent id is the string of the node before it, not a copy
        expect(read[5]!.parentId).toBe(read[4]!.id);
      }),
  );

  it.scoped("the decoder reads plain rows itself and refuses rows whose values hold its separators", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      const cases = [
        ["plain", PLAIN, true],
        ...SEPARATED.map((spec, i) => [`sep${i}`, [...PLAIN, spec, ...PLAIN], false] as const),
      ] as const;
      for (const [id, specs] of cases) {
        yield* store.createSession(session(id));
        yield* store.commit(turn(id, "t1", 0, awkward(id, null, [...specs])));
      }
      const db = new Sqlite(filename, { readonly: true });
      yield* Effect.addFinalizer(() => Effect.sync(() => db.close()));
      const segment = db.prepare(SEGMENT_SQL).raw(true);
      const payloads = db
        .prepare("SELECT payload_json FROM nodes WHERE line = ? AND depth >= ? AND depth <= ? ORDER BY depth")
        .pluck(true);
      const end = db.prepare("SELECT seq FROM nodes WHERE line = ? AND depth = ?").pluck(true);
      const source = (line: number, from: number, to: number) =>
        [
          payloads.all(line, from, to) as (string | null)[],
          end.get(line, from) as number | null,
          end.get(line, to) as number | null,
        ] as const;
      for (const [id, specs, decoded] of cases) {
        const leaf = (yield* store.getSession(id)).leafId!;
        const [line, depth] = db
          .prepare("SELECT line, depth FROM nodes WHERE id = ?")
          .raw(true)
          .get(leaf) as [number, number];
        expect(depth).toBe(specs.length - 1);
        const out: StoredNode[] = [];
        const cache = new NodeCache(100);
        const row = segment.get(line, 0, depth) as SegmentRow;
        const target = (out: StoredNode[]) => ({
          line,
          sessionId: id,
          out,
          cachedFrom: 0,
          cache,
          source,
          chunk: undefined,
          made: [],
        });
        const ok = appendSegment(row, 0, depth, target(out), null);
        expect([id, ok]).toEqual([id, decoded]);
        if (decoded) expect(out.map(envelope)).toEqual(yield* byRows(store, [id], leaf));
        else expect(out).toHaveLength(0);
        // a first parent other than the root's NULL: refused
        expect(appendSegment(row, 0, depth, target([]), "elsewhere")).toBe(false);
      }
    }),
  );

  it.scoped("a fork of a fork, a branch and a compaction: each segment from its own depth", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("main"));
      yield* store.commit(turn("main", "t1", 0, chain("a", "main", null, 600, "t1")));
      // a branch under a300 (a new line of the same session), then the fork of its tip
      yield* store.commit(turn("main", "t2", 1, chain("b", "main", "a300", 400, "t2")));
      yield* store.fork(session("fork", { origin: { sessionId: "main", nodeId: "b399" } }));
      yield* store.commit(
        turn("fork", "t1", 0, [
          ...chain("f", "fork", "b399", 300, "t1"),
          node("fc", "fork", "f299", { kind: "protocol", payload: { type: "compaction" }, turnId: "t1" }),
          ...chain("g", "fork", "fc", 200, "t1"),
        ]),
      );
      yield* store.fork(session("fork2", { origin: { sessionId: "fork", nodeId: "g199" } }));
      yield* store.commit(turn("fork2", "t1", 0, chain("h", "fork2", "g199", 50, "t1")));
      const sessions = ["main", "fork", "fork2"];
      const path = yield* store.activePath("fork2");
      expect(path).toHaveLength(301 + 400 + 300 + 1 + 200 + 50);
      expect(path.map(envelope)).toEqual(yield* byRows(store, sessions, "h49"));
      expect(path[301]!.parentId).toBe("a300");
      expect(path[301]!.sessionId).toBe("main");
      expect(path.at(-1)!.sessionId).toBe("fork2");
      // read again: the tail comes from the cache (the same objects), the whole still checks out
      const again = yield* store.activePath("fork2");
      expect(again.at(-1)).toBe(path.at(-1));
      expect(again.map(envelope)).toEqual(path.map(envelope));
      // from the compaction on, across the fork boundary
      const projection = yield* store.projectionPath("fork2", "f0");
      expect(ids(projection)).toEqual(["fc", ...ids(path.slice(-250))]);
      expect(projection.map(envelope)).toEqual(path.slice(-251).map(envelope));
    }),
  );

  it.scoped("rows a damaged file no longer links are read through the parent ids, not trusted", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s"));
      yield* store.commit(turn("s", "t1", 0, chain("n", "s", null, 20, "t1")));
      yield* store.createSession(session("x"));
      yield* store.commit(turn("x", "t1", 0, chain("x", "x", null, 5, "t1")));
      // n10's parent rewritten to a node of another session: the line says n9, the row says x4
      yield* withRaw(filename, (sql) => sql`UPDATE nodes SET parent_id = 'x4' WHERE id = 'n10'`);
      const path = yield* store.activePath("s");
      expect(ids(path)).toEqual([
        ...ids(chain("x", "x", null, 5)),
        ...ids(chain("n", "s", null, 20)).slice(10),
      ]);
      // a depth missing from a line (a row without its place): the parent chain again
      yield* withRaw(filename, (sql) => sql`UPDATE nodes SET depth = NULL, line = NULL WHERE id = 'x2'`);
      expect(ids(yield* store.activePath("x"))).toEqual(["x0", "x1", "x2", "x3", "x4"]);
    }),
  );

  it.scoped("an unknown kind on a long path: the same StoreError naming the row", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s"));
      yield* store.commit(turn("s", "t1", 0, chain("n", "s", null, 1_000, "t1")));
      yield* withRaw(filename, (sql) => sql`UPDATE nodes SET kind = 'mystery' WHERE id = 'n700'`);
      const exit = yield* Effect.exit(store.activePath("s"));
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a typed failure");
      expect(exit.cause.error._tag).toBe("StoreError");
      expect(exit.cause.error.message).toMatch(
        /session s, node n700: .*unknown node kind "mystery".*lash doctor/s,
      );
    }),
  );

  it.scoped(
    "a corrupt payload on a long path: the clear error at first access, its neighbours still read",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s"));
        yield* store.commit(turn("s", "t1", 0, chain("n", "s", null, 1_000, "t1")));
        yield* withRaw(filename, (sql) => sql`UPDATE nodes SET payload_json = '{"id":' WHERE id = 'n600'`);
        const path = yield* store.activePath("s");
        expect(path).toHaveLength(1_000);
        expect(() => path[600]!.payload).toThrow(
          /session s, node n600: the stored row is not valid \(not JSON/,
        );
        expect(path[599]!.payload).toMatchObject({ id: "n599" });
        expect(path[601]!.payload).toMatchObject({ id: "n601" });
        // still failing on the next access: the error is not swallowed
        expect(() => path[600]!.payload).toThrow(/node n600/);
      }),
  );
});
