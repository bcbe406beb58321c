// Temp directories and raw SQLite access for the SqliteStore tests.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as Reactivity from "@effect/experimental/Reactivity";
import type { SqlClient } from "@effect/sql/SqlClient";
import Sqlite from "better-sqlite3";
import { Effect, type Scope } from "effect";
import * as SqliteClient from "../../src/store/sqlite-client.ts";
import type { GraphNode, SessionStoreShape } from "../../src/store.ts";

/** A temp directory removed when the scope closes. */
export const tempDir: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "lash-store-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true })),
);

export const tempDb: Effect.Effect<string, never, Scope.Scope> = Effect.map(tempDir, (dir) =>
  join(dir, "lash.db"),
);

export const sha256 = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");

/** The files next to the database (`-wal`, `-shm` …). */
export const siblings = (path: string): string[] => {
  const dir = join(path, "..");
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

/**
 * A raw connection to `filename` for the duration of `use` (closed after, which
 * checkpoints and removes the WAL when it is the last connection).
 */
export const withRaw = <A, E>(
  filename: string,
  use: (sql: SqlClient) => Effect.Effect<A, E>,
): Effect.Effect<A, E | unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const db = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const db = new Sqlite(filename);
          db.pragma("journal_mode = WAL");
          return db;
        }),
        (db) => Effect.sync(() => db.close()),
      );
      const sql = yield* SqliteClient.make(db).pipe(Effect.provide(Reactivity.layer));
      return yield* use(sql);
    }),
  );

/** Every table's full contents, for "nothing else changed" assertions. */
export const dumpTables = (sql: SqlClient) =>
  Effect.gen(function* () {
    const tables = yield* sql<{
      name: string;
    }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`;
    const out: Record<string, readonly unknown[]> = {};
    for (const { name } of tables) out[name] = yield* sql.unsafe(`SELECT * FROM "${name}"`);
    return out;
  });

/** A node's fields as plain data (a StoredNode's payload is a prototype getter). */
export const envelope = (n: GraphNode) => ({
  id: n.id,
  sessionId: n.sessionId,
  parentId: n.parentId,
  frameId: n.frameId,
  kind: n.kind,
  turnId: n.turnId,
  createdAt: n.createdAt,
  seq: n.seq,
  payload: n.payload,
});

/** The path to `leafId` as rows read one by one: parent ids walked over `sessionNodes` of every session. */
export const byRows = (store: SessionStoreShape, sessionIds: readonly string[], leafId: string) =>
  Effect.gen(function* () {
    const all = new Map<string, GraphNode>();
    for (const s of sessionIds) for (const n of yield* store.sessionNodes(s)) all.set(n.id, n);
    const path: GraphNode[] = [];
    for (let at: string | null = leafId; at !== null; ) {
      const n: GraphNode = all.get(at)!;
      path.unshift(n);
      at = n.parentId;
    }
    return path.map(envelope);
  });
