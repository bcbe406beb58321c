import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "@effect/vitest";
import { Effect, Exit, Layer } from "effect";
import {
  makeSqliteStore,
  SQLITE_SCHEMA_VERSION,
  SqliteStore,
  sqliteMigrations,
} from "../../src/store/sqlite.ts";
import { SessionStore } from "../../src/store.ts";
import { storeConformance } from "./conformance.ts";
import { chain, ids, node, session, turn } from "./helpers.ts";
import { dumpTables, sha256, siblings, tempDb, tempDir, withRaw } from "./sqlite-helpers.ts";

storeConformance("SqliteStore", () => Effect.flatMap(tempDb, (filename) => makeSqliteStore({ filename })));
// A file opened at the current version builds no SQL client at open: each method written with
// it loads it on first use (sqlite.ts `needSql`). The same contract, on a store opened that way.
storeConformance("SqliteStore, reopened (SQL client on first use)", () =>
  Effect.flatMap(tempDb, (filename) =>
    Effect.zipRight(Effect.scoped(makeSqliteStore({ filename })), makeSqliteStore({ filename })),
  ),
);

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure");
  if (exit.cause._tag !== "Fail")
    throw new Error(`expected a typed failure, got ${exit.cause._tag}: ${exit.cause}`);
  return exit.cause.error;
};

/** A file with a lash session committed into it, closed again. */
const seeded = (filename: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s1", { title: "kept", cwd: "/w", state: { a: 1 } }));
      yield* store.commit(
        turn("s1", "t1", 0, chain("n", "s1", null, 3), {
          usage: [{ turnId: "t1", source: "turn", model: "m", usage: { input: 3 }, costUsd: 0.5 }],
        }),
      );
      yield* store.journalPut({
        key: "k",
        sessionId: "s1",
        turnId: "t2",
        hash: "h",
        status: "started",
        updatedAt: 1,
      });
      yield* store.beginTurn({
        sessionId: "s1",
        turnId: "t2",
        input: { text: "go" },
        expectedRevision: 1,
        startedAt: 2,
      });
    }),
  );

describe("SqliteStore: file", () => {
  it.scoped("data survives closing and reopening the file; the WAL is folded back on close", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* seeded(filename);
      // no -wal or -shm left; the journal of the turn still pending (t2) is its file beside the database
      expect(siblings(filename)).toEqual(["lash.db", "lash.db.turns"]);
      const store = yield* makeSqliteStore({ filename });
      const s = yield* store.getSession("s1");
      expect(s).toMatchObject({
        title: "kept",
        cwd: "/w",
        state: { a: 1 },
        headRevision: 1,
        turnCount: 1,
        leafId: "n2",
      });
      expect(ids(yield* store.activePath("s1"))).toEqual(["n0", "n1", "n2"]);
      expect(yield* store.usage("s1")).toEqual([
        { turnId: "t1", source: "turn", model: "m", usage: { input: 3 }, costUsd: 0.5 },
      ]);
      expect((yield* store.journalGet("k"))?.status).toBe("started");
      expect((yield* store.pendingTurn("s1"))?.input).toEqual({ text: "go" });
      // The stamp survived too: a retry of t1 is still a duplicate.
      expect((yield* store.commit(turn("s1", "t1", 0, []))).duplicate).toBe(true);
    }),
  );

  it.scoped("a new file gets WAL, the current schema version and the pragmas", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* Effect.scoped(makeSqliteStore({ filename }));
      const [mode, version] = yield* withRaw(filename, (sql) =>
        Effect.all([
          sql<{ journal_mode: string }>`PRAGMA journal_mode`,
          sql<{ user_version: number }>`PRAGMA user_version`,
        ]),
      );
      expect(mode[0]?.journal_mode).toBe("wal");
      expect(version[0]?.user_version).toBe(SQLITE_SCHEMA_VERSION);
      expect(SQLITE_SCHEMA_VERSION).toBe(sqliteMigrations.length);
    }),
  );

  it.scoped("the layer provides the store and closes it with the scope", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const program = Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* store.createSession(session("via-layer"));
      });
      yield* Effect.provide(program, SqliteStore.layer({ filename }));
      const store = yield* makeSqliteStore({ filename });
      expect((yield* store.getSession("via-layer")).id).toBe("via-layer");
    }),
  );

  it.scoped("a version-1 database is migrated forward with its data intact", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      // Build a v1 file by hand: the first migration only, and a row in it.
      yield* withRaw(filename, (sql) =>
        Effect.gen(function* () {
          for (const s of sqliteMigrations[0]!) yield* sql.unsafe(s);
          yield* sql.unsafe("PRAGMA user_version = 1");
          yield* sql`INSERT INTO sessions (id, model, mode, created_at, updated_at, leaf_id, head_revision,
            turn_count, frame_id, state_json) VALUES ('old', 'p/m', 'standard', 1, 2, NULL, 0, 0, 'f0', '{"x":1}')`;
        }),
      );
      const store = yield* makeSqliteStore({ filename });
      expect(yield* store.getSession("old")).toMatchObject({ id: "old", model: "p/m", state: { x: 1 } });
      yield* store.commit(turn("old", "t1", 0, [node("a", "old", null)]));
      expect(ids(yield* store.activePath("old"))).toEqual(["a"]);
      const indexes = yield* withRaw(filename, (sql) =>
        Effect.all([
          sql<{ user_version: number }>`PRAGMA user_version`,
          sql<{
            name: string;
          }>`SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'journal_turn'`,
        ]),
      );
      expect(indexes[0][0]?.user_version).toBe(SQLITE_SCHEMA_VERSION);
      expect(indexes[1]).toHaveLength(1);
    }),
  );

  it.scoped("a database from a newer lash is refused and left byte-for-byte untouched", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* seeded(filename);
      yield* withRaw(filename, (sql) => sql.unsafe(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 7}`));
      const before = sha256(filename);
      const files = siblings(filename);
      const err = failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))));
      expect(err._tag).toBe("SchemaTooNew");
      if (err._tag !== "SchemaTooNew") return;
      expect(err).toMatchObject({
        path: filename,
        found: SQLITE_SCHEMA_VERSION + 7,
        supported: SQLITE_SCHEMA_VERSION,
      });
      expect(err.message).toContain(filename);
      expect(err.message).toContain(String(SQLITE_SCHEMA_VERSION + 7));
      expect(err.message).toMatch(/upgrade lash/i);
      expect(sha256(filename)).toBe(before);
      expect(siblings(filename)).toEqual(files); // no -wal / -shm created either
      // Through the layer: the same typed failure.
      const viaLayer = yield* Effect.exit(Layer.build(SqliteStore.layer({ filename })));
      expect(failureOf(viaLayer)._tag).toBe("SchemaTooNew");
      expect(sha256(filename)).toBe(before);
    }),
  );

  it.scoped("a newer database whose version still sits in the WAL is refused too (read-only check)", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* seeded(filename);
      // Keep a writer open so the version bump stays in the -wal file, not in the header.
      yield* withRaw(filename, (sql) =>
        Effect.gen(function* () {
          yield* sql.unsafe("PRAGMA wal_autocheckpoint = 0");
          yield* sql.unsafe(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
          expect(statSync(`${filename}-wal`).size).toBeGreaterThan(0);
          expect(readFileSync(filename).readInt32BE(60)).toBe(SQLITE_SCHEMA_VERSION);
          const before = sha256(filename);
          const err = failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))));
          expect(err).toMatchObject({ _tag: "SchemaTooNew", found: SQLITE_SCHEMA_VERSION + 1 });
          expect(sha256(filename)).toBe(before);
        }),
      );
    }),
  );

  it.scoped("random bytes: StoreCorrupt naming the file and the fix; the file is untouched", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      writeFileSync(filename, randomBytes(64 * 1024));
      const before = sha256(filename);
      const err = failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))));
      expect(err._tag).toBe("StoreCorrupt");
      if (err._tag !== "StoreCorrupt") return;
      expect(err.path).toBe(filename);
      expect(err.message).toContain(filename);
      expect(err.message).toMatch(/move it aside/i);
      expect(sha256(filename)).toBe(before);
      expect(siblings(filename)).toEqual(["lash.db"]);
    }),
  );

  it.scoped("a short garbage file and a text file are StoreCorrupt", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      writeFileSync(filename, "hello, I am not a database\n");
      expect(failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))))._tag).toBe(
        "StoreCorrupt",
      );
      writeFileSync(filename, `SQLite format 3\u0000${"x".repeat(200)}`);
      expect(failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))))._tag).toBe(
        "StoreCorrupt",
      );
    }),
  );

  it.scoped("a valid database truncated to half is StoreCorrupt, not a crash", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ filename });
          yield* store.createSession(session("big"));
          yield* store.commit(turn("big", "t1", 0, chain("b", "big", null, 2_000)));
        }),
      );
      const size = statSync(filename).size;
      expect(size).toBeGreaterThan(64 * 1024);
      truncateSync(filename, Math.floor(size / 2));
      const err = failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))));
      expect(err._tag).toBe("StoreCorrupt");
      expect(err.message).toMatch(/truncated/);
      expect(err.message).toMatch(/move it aside/i);
      // Truncated to a length that is not a whole page.
      truncateSync(filename, 5_000);
      expect(failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))))._tag).toBe(
        "StoreCorrupt",
      );
    }),
  );

  it.scoped("damage inside a page that the header does not reveal is a StoreError on read, not a crash", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ filename });
          yield* store.createSession(session("big"));
          yield* store.commit(turn("big", "t1", 0, chain("b", "big", null, 2_000)));
        }),
      );
      // Overwrite every page after the first few with garbage, keeping the length.
      const bytes = readFileSync(filename);
      const pageSize = bytes.readUInt16BE(16);
      randomBytes(bytes.length - 8 * pageSize).copy(bytes, 8 * pageSize);
      writeFileSync(filename, bytes);
      const opened = yield* Effect.exit(makeSqliteStore({ filename }));
      if (Exit.isFailure(opened)) {
        expect(failureOf(opened)._tag).toBe("StoreCorrupt");
        return;
      }
      const read = yield* Effect.exit(
        Effect.flatMap(Effect.succeed(opened.value), (s) => s.activePath("big")),
      );
      const err = failureOf(read);
      expect(["StoreError", "SessionNotFound"]).toContain(err._tag);
    }),
  );

  it.scoped("an SQLite file that lash did not create is refused", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* withRaw(filename, (sql) => sql`CREATE TABLE theirs (x)`);
      const before = sha256(filename);
      const err = failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename }))));
      expect(err._tag).toBe("StoreCorrupt");
      expect(err.message).toMatch(/did not create/);
      expect(yield* withRaw(filename, (sql) => sql`SELECT name FROM sqlite_master`)).toEqual([
        { name: "theirs" },
      ]);
      expect(sha256(filename)).toBe(before);
      expect(siblings(filename)).toEqual(["lash.db"]);
    }),
  );

  it.scoped("a path that cannot be opened is a typed StoreError", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir;
      const err = failureOf(
        yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename: join(dir, "no/such/dir/x.db") }))),
      );
      expect(err._tag).toBe("StoreError");
      const isDir = failureOf(yield* Effect.exit(Effect.scoped(makeSqliteStore({ filename: dir }))));
      expect(isDir._tag).toBe("StoreError");
    }),
  );

  it.scoped("a row that does not decode, read by the listing or a node read: a StoreError naming it", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* makeSqliteStore({ filename });
          yield* store.createSession(session("s"));
          yield* store.createSession(
            session("kid", { parentLink: { sessionId: "s", callId: "c1", depth: 1 } }),
          );
          yield* store.commit(turn("s", "t1", 0, chain("n", "s", null, 3)));
        }),
      );
      yield* withRaw(filename, (sql) =>
        Effect.all([
          sql`UPDATE sessions SET state_json = '{not json' WHERE id = 'kid'`,
          sql`UPDATE nodes SET kind = 'mystery' WHERE id = 'n1'`,
        ]),
      );
      // reopened: these reads run on plain statements, before any SQL client is loaded
      const store = yield* makeSqliteStore({ filename });
      const reads: Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>[] = [
        store.listSessions({ includeChildren: true }),
        store.children("s"),
        store.getNode("n1"),
        store.sessionNodes("s"),
      ];
      for (const read of reads) {
        const err = failureOf(yield* Effect.exit(read));
        expect(err._tag).toBe("StoreError");
        expect(err.message).toContain(filename);
        expect(err.message).toMatch(/(session kid|node n1).*the stored row is not valid.*lash doctor/s);
      }
      expect((yield* store.listSessions()).map((r) => r.id)).toEqual(["s"]); // the damaged child is not listed
      expect(failureOf(yield* Effect.exit(store.usage("nobody")))._tag).toBe("SessionNotFound");
    }),
  );
});

describe("SqliteStore: fork cost", () => {
  it.scoped(
    "a fork of a 10,000-node session writes one session row and no nodes; it reads the whole history",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("big"));
        yield* store.commit(
          turn("big", "t1", 0, chain("b", "big", null, 10_000, "t1"), {
            usage: [{ turnId: "t1", source: "turn", model: "m", usage: { input: 1 } }],
          }),
        );
        const before = yield* withRaw(filename, dumpTables);
        expect(before.nodes).toHaveLength(10_000);
        const fork = yield* store.fork(session("fork", { origin: { sessionId: "big", nodeId: "b9999" } }));
        const after = yield* withRaw(filename, dumpTables);
        // Exactly one row was written: the fork's session row. Every other table is identical.
        const { sessions: sBefore, ...restBefore } = before;
        const { sessions: sAfter, ...restAfter } = after;
        expect(restAfter).toEqual(restBefore);
        expect(sAfter).toHaveLength(sBefore!.length + 1);
        expect(sAfter!.slice(0, sBefore!.length)).toEqual(sBefore);
        expect(sAfter![sBefore!.length]).toMatchObject({
          id: "fork",
          origin_session: "big",
          origin_node: "b9999",
        });
        // The fork reads its full history across the boundary, and continues it.
        expect(fork.leafId).toBe("b9999");
        const path = yield* store.activePath("fork");
        expect(path).toHaveLength(10_000);
        expect(path[0]!.id).toBe("b0");
        expect(path[9_999]!.id).toBe("b9999");
        yield* store.commit(turn("fork", "t1", 0, [node("f0", "fork", "b9999")]));
        const extended = yield* store.activePath("fork");
        expect(extended).toHaveLength(10_001);
        expect(extended[10_000]!.sessionId).toBe("fork");
        // A fork in the middle reads only the prefix.
        yield* store.fork(session("mid", { origin: { sessionId: "big", nodeId: "b4999" } }));
        expect(yield* store.activePath("mid")).toHaveLength(5_000);
      }),
  );
});

describe("SqliteStore: concurrent writers", () => {
  it.scoped(
    "two connections in one process commit on the same revision: one wins, one conflicts, nothing lost",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const a = yield* makeSqliteStore({ filename });
        const b = yield* makeSqliteStore({ filename });
        yield* a.createSession(session("s"));
        yield* a.commit(turn("s", "t0", 0, [node("root", "s", null)]));
        const results = yield* Effect.all(
          [
            Effect.either(a.commit(turn("s", "ta", 1, chain("a", "s", "root", 4)))),
            Effect.either(b.commit(turn("s", "tb", 1, chain("b", "s", "root", 4)))),
          ],
          { concurrency: "unbounded" },
        );
        const wins = results.filter((r) => r._tag === "Right");
        const losses = results.flatMap((r) => (r._tag === "Left" ? [r.left] : []));
        expect(wins).toHaveLength(1);
        expect(losses).toHaveLength(1);
        expect(losses[0]).toMatchObject({
          _tag: "StoreConflict",
          reason: "revision",
          expected: 1,
          actual: 2,
        });
        // The loser re-reads and commits on top.
        const loser =
          results[0]!._tag === "Left" ? { store: a, p: "a", t: "ta" } : { store: b, p: "b", t: "tb" };
        const fresh = yield* loser.store.getSession("s");
        yield* loser.store.commit(
          turn("s", loser.t, fresh.headRevision, chain(loser.p, "s", fresh.leafId, 4)),
        );
        const all = ids(yield* a.sessionNodes("s"));
        expect(all).toHaveLength(9);
        for (const id of ["a0", "a3", "b0", "b3"]) expect(all).toContain(id);
        expect((yield* b.getSession("s")).turnCount).toBe(3);
        // The retry built on the winner's leaf: one chain through both turns.
        expect(yield* b.activePath("s")).toHaveLength(9);
      }),
  );

  it.scoped("a writer in another process: the race has one winner and a typed conflict", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("s"));
      yield* store.commit(turn("s", "t0", 0, [node("root", "s", null)]));
      const child = yield* startChild([filename, "s", "race", "child", "1", "root"]);
      child.go();
      const mine = yield* Effect.either(store.commit(turn("s", "parent", 1, chain("p", "s", "root", 2))));
      const theirs = (yield* child.result) as { ok: boolean; _tag?: string; reason?: string };
      const outcomes = [mine._tag === "Right", theirs.ok];
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const conflict = mine._tag === "Left" ? mine.left : theirs;
      expect(conflict).toMatchObject({ _tag: "StoreConflict", reason: "revision" });
      // The loser re-reads and commits its turn on top.
      const s = yield* store.getSession("s");
      if (mine._tag === "Left") {
        yield* store.commit(turn("s", "parent", s.headRevision, chain("p", "s", s.leafId, 2)));
      } else {
        yield* store.commit(turn("s", "child", s.headRevision, chain("child-", "s", s.leafId, 2)));
      }
      const all = ids(yield* store.sessionNodes("s"));
      for (const id of ["root", "p0", "p1", "child-0"]) expect(all).toContain(id);
      expect(all).toContain("child-1");
    }),
  );

  it.scoped(
    "two processes hammering one session: every turn lands exactly once, no busy errors",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s"));
        const N = 150;
        const child = yield* startChild([filename, "s", "stress", "c", String(N)]);
        child.go();
        let conflicts = 0;
        for (let i = 0; i < N; ) {
          const s = yield* store.getSession("s");
          const r = yield* Effect.either(
            store.commit(
              turn(
                "s",
                `p${i}`,
                s.headRevision,
                [node(`p${i}-0`, "s", s.leafId), node(`p${i}-1`, "s", `p${i}-0`)],
                {
                  usage: [{ turnId: `p${i}`, source: "turn", model: "m", usage: { input: 1 } }],
                },
              ),
            ),
          );
          if (r._tag === "Right") i++;
          else {
            expect(r.left).toMatchObject({ _tag: "StoreConflict", reason: "revision" });
            conflicts++;
          }
        }
        const theirs = (yield* child.result) as { ok: boolean; conflicts: number; errors: string[] };
        expect(theirs.errors).toEqual([]);
        expect(theirs.ok).toBe(true);
        const s = yield* store.getSession("s");
        expect(s.turnCount).toBe(2 * N);
        expect(s.headRevision).toBe(2 * N);
        expect(yield* store.sessionNodes("s")).toHaveLength(4 * N);
        expect(yield* store.usage("s")).toHaveLength(2 * N);
        // Every commit built on the previous leaf: the active path is one chain through all of them.
        expect(yield* store.activePath("s")).toHaveLength(4 * N);
        process.stderr.write(`stress: ${conflicts} + ${theirs.conflicts} revision conflicts\n`);
      }),
    60_000,
  );
});

interface Child {
  readonly go: () => void;
  readonly result: Effect.Effect<unknown>;
}

/** Spawn commit-child.ts; resolves once it has opened the store and printed "ready". */
function startChild(args: readonly string[]) {
  return Effect.acquireRelease(
    Effect.async<{ proc: ChildProcessWithoutNullStreams; lines: AsyncIterator<string> }>((resume) => {
      const proc = spawn(process.execPath, [join(import.meta.dirname, "commit-child.ts"), ...args], {
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stderr = "";
      proc.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
      lines.next().then((first) => {
        if (first.value === "ready") resume(Effect.succeed({ proc, lines }));
        else resume(Effect.dieMessage(`child did not start: ${String(first.value)} ${stderr}`));
      });
    }),
    ({ proc }) => Effect.sync(() => proc.exitCode === null && proc.kill()),
  ).pipe(
    Effect.map(
      ({ proc, lines }): Child => ({
        go: () => proc.stdin.write("go\n"),
        result: Effect.promise(async () => {
          const next = await lines.next();
          return JSON.parse(String(next.value)) as unknown;
        }),
      }),
    ),
  );
}

describe("SqliteStore: nodes read again", () => {
  it.scoped(
    "the same path read twice is the same node and payload objects; a deleted session's are not served again",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s1"));
        yield* store.commit(turn("s1", "t1", 0, chain("n", "s1", null, 4)));
        const first = yield* store.activePath("s1");
        const again = yield* store.activePath("s1");
        expect(again.map((n) => n.id)).toEqual(["n0", "n1", "n2", "n3"]);
        // identity: what is memoized per message downstream is not redone every turn
        for (let i = 0; i < first.length; i++) {
          expect(again[i]).toBe(first[i]);
          expect(again[i]!.payload).toBe(first[i]!.payload);
        }
        expect(yield* store.getNode("n1")).toBe(first[1]);
        // the same ids in a new session after the old one is deleted: read from the new rows (keyed by row)
        yield* store.deleteSession("s1");
        yield* store.createSession(session("s1"));
        const renamed = chain("n", "s1", null, 4).map((n) => ({
          ...n,
          payload: { id: n.id, role: "user", parts: [{ type: "text", text: `new ${n.id}` }] },
        }));
        yield* store.commit(turn("s1", "t1", 0, renamed));
        const fresh = yield* store.activePath("s1");
        expect(fresh.map((n) => n.payload)).toEqual(renamed.map((n) => n.payload));
        expect(fresh[0]).not.toBe(first[0]);
      }),
  );
});
