// The daemon's own SQLite file (`ServeSettings.stateDb`): runs and the durable event log
// (this module), approvals and tokens (their modules create their own tables).
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { Effect, Layer } from "effect";
import { StateDb } from "./services.ts";

/** The version of the runs/events schema this build writes. */
export const SCHEMA_VERSION = 1;

export class StateDbError extends Error {
  override readonly name = "StateDbError";
}

/** Open (creating) the state db: WAL, a busy timeout, the runs and events tables. */
export function openStateDb(file: string): Database.Database {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  let db: Database.Database;
  try {
    db = new Database(file);
  } catch (e) {
    throw new StateDbError(
      `lash serve: cannot open the state db ${file}: ${(e as Error).message}; check the path and its permissions, or pass --state <file>`,
    );
  }
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE IF NOT EXISTS serve_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
  const row = db.prepare(`SELECT value FROM serve_meta WHERE key = 'schema_version'`).get() as
    | { value: string }
    | undefined;
  const version = row ? Number(row.value) : undefined;
  if (version !== undefined && version > SCHEMA_VERSION) {
    db.close();
    throw new StateDbError(
      `lash serve: the state db ${file} has schema version ${version}, newer than this lash understands (${SCHEMA_VERSION}); upgrade lash, or pass --state <another file>`,
    );
  }
  db.exec(`
    CREATE TABLE IF NOT EXISTS runs (
      id TEXT PRIMARY KEY,
      ord INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      principal TEXT NOT NULL,
      admin INTEGER NOT NULL DEFAULT 0,
      state TEXT NOT NULL,
      input TEXT NOT NULL,
      turn_id TEXT,
      created_at INTEGER NOT NULL,
      started_at INTEGER,
      finished_at INTEGER,
      outcome TEXT,
      text TEXT,
      value TEXT,
      error TEXT,
      resumes INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS runs_session ON runs (session_id, ord);
    CREATE INDEX IF NOT EXISTS runs_state ON runs (state, ord);
    CREATE TABLE IF NOT EXISTS events (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      run_id TEXT NOT NULL,
      type TEXT NOT NULL,
      at INTEGER NOT NULL,
      data TEXT NOT NULL,
      dkey TEXT,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS events_run ON events (run_id, seq);
  `);
  if (version === undefined)
    db.prepare(`INSERT INTO serve_meta (key, value) VALUES ('schema_version', ?)`).run(
      String(SCHEMA_VERSION),
    );
  return db;
}

/** The state db as a scoped layer (closed with the daemon). */
export const StateDbLive = (file: string) =>
  Layer.scoped(
    StateDb,
    Effect.acquireRelease(
      Effect.try({ try: () => openStateDb(file), catch: (e) => e as StateDbError }),
      (db) => Effect.sync(() => db.close()),
    ),
  );
