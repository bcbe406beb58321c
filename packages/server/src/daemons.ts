// The daemons that share a state db, and which of them owns what. Each daemon registers a row
// (id, pid, host) and keeps a heartbeat; a run or a loop firing records the daemon that executes
// it. At start a daemon adopts only what a dead daemon left (its process gone on this host, or
// its heartbeat stale elsewhere) — never the work of a daemon that still runs — and claims each
// piece with a compare-and-set, so two daemons starting at once cannot both take it.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type Database from "better-sqlite3";
import { Effect, Layer } from "effect";
import { DaemonOwner, type DaemonOwnerShape, StateDb } from "./services.ts";

/** A heartbeat older than this marks a daemon on another host dead. */
export const STALE_MS = 30_000;
export const BEAT_MS = 5_000;

export interface Registration extends DaemonOwnerShape {
  /** Stop the heartbeat and deregister (the next daemon adopts what is left at once). */
  readonly close: () => void;
}

interface DaemonRow {
  id: string;
  pid: number;
  host: string;
  beat_at: number;
}

export function createDaemonTable(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS serve_daemons (
    id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, started_at INTEGER NOT NULL, beat_at INTEGER NOT NULL
  )`);
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Register this process as a daemon of `db`, with a heartbeat every `BEAT_MS`. */
export function registerDaemon(
  db: Database.Database,
  options: { readonly pid?: number; readonly host?: string; readonly now?: () => number } = {},
): Registration {
  createDaemonTable(db);
  const id = randomUUID();
  const pid = options.pid ?? process.pid;
  const host = options.host ?? hostname();
  const now = options.now ?? Date.now;
  const get = db.prepare(`SELECT id, pid, host, beat_at FROM serve_daemons WHERE id = ?`);
  const beat = db.prepare(`UPDATE serve_daemons SET beat_at = ? WHERE id = ?`);
  db.prepare(`INSERT INTO serve_daemons (id, pid, host, started_at, beat_at) VALUES (?, ?, ?, ?, ?)`).run(
    id,
    pid,
    host,
    now(),
    now(),
  );
  // rows of daemons long gone
  db.prepare(`DELETE FROM serve_daemons WHERE beat_at < ?`).run(now() - 10 * STALE_MS);
  const timer = setInterval(() => {
    if (db.open) beat.run(now(), id);
  }, BEAT_MS);
  timer.unref();
  const alive = (owner: string | null): boolean => {
    if (owner === null) return false;
    if (owner === id) return true;
    const row = get.get(owner) as DaemonRow | undefined;
    if (!row) return false;
    if (now() - row.beat_at > STALE_MS) return false;
    // on this host the process tells (a pid equal to ours is a predecessor's, reused)
    if (row.host === host) return row.pid !== pid && pidAlive(row.pid);
    return true;
  };
  return {
    id,
    alive,
    close: () => {
      clearInterval(timer);
      if (db.open) db.prepare(`DELETE FROM serve_daemons WHERE id = ?`).run(id);
    },
  };
}

/** Add an `owner` column to `table` when an older state db lacks it. */
export function ensureOwnerColumn(db: Database.Database, table: string): void {
  const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[];
  if (!cols.some((c) => c.name === "owner")) db.exec(`ALTER TABLE ${table} ADD COLUMN owner TEXT`);
}

/** This daemon, registered in the state db for as long as the layer lives. */
export const DaemonOwnerLive = Layer.scoped(
  DaemonOwner,
  Effect.gen(function* () {
    const db = yield* StateDb;
    return yield* Effect.acquireRelease(
      Effect.sync(() => registerDaemon(db)),
      (r) => Effect.sync(r.close),
    );
  }),
);
