// Checking and salvaging a damaged SqliteStore file, for `lash doctor` / `lash doctor --repair`.
//
// 1. `checkSqliteFile` runs `PRAGMA quick_check` read-only and returns SQLite's own findings.
// 2. `recoverSqliteFile` copies what is still readable, row by row, into a new file with a fresh
//    schema (the migrations up to the damaged file's version): each table is scanned by its key
//    ascending until the scan hits damage, then past the damage (probing larger rowids), then
//    descending from the end, so the rows on either side of a bad page are kept. Indexes are
//    rebuilt, not copied, and so are the runs (schema 7: built from the nodes recovered). Then the files are swapped: the damaged one is kept beside it as
//    `<name>.damaged-<ts>` (with its -wal), the recovered one takes its name.
// better-sqlite3 has no `.recover` API and the `sqlite3` shell is not guaranteed to be installed.
import { existsSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import { sqliteFileUsers } from "./lock-holders.ts";
import { backfillRuns } from "./sqlite-runs.ts";
import { SQLITE_SCHEMA_VERSION, sqliteMigrations } from "./sqlite-schema.ts";

export interface SqliteCheck {
  readonly ok: boolean;
  /** SQLite's findings (`quick_check` lines, or the error that stopped it). */
  readonly problems: readonly string[];
}

const MAX_PROBLEMS = 20;

/** better-sqlite3, required on first use: importing @lash/core does not load the native driver. */
let driver: typeof Database | undefined;
function openDatabase(filename: string, options?: Database.Options): Database.Database {
  driver ??= createRequire(import.meta.url)("better-sqlite3") as typeof Database;
  return new driver(filename, options);
}

/** `PRAGMA quick_check` on a read-only connection; never writes to the file. */
export function checkSqliteFile(filename: string): SqliteCheck {
  let db: Database.Database | undefined;
  try {
    db = openDatabase(filename, { readonly: true, fileMustExist: true });
    const rows = db.pragma(`quick_check(${MAX_PROBLEMS})`) as { quick_check: string }[];
    const lines = rows.map((r) => r.quick_check);
    return lines.length === 1 && lines[0] === "ok"
      ? { ok: true, problems: [] }
      : { ok: false, problems: lines };
  } catch (e) {
    return { ok: false, problems: [describe(e)] };
  } finally {
    db?.close();
  }
}

export interface TableRecovery {
  readonly table: string;
  /** Rows copied into the new file. */
  readonly rows: number;
  /** Places where reading the table stopped on damage (0: the table read cleanly). */
  readonly damaged: number;
}

export interface SqliteRecovery {
  /** The recovered database, now at the original path. */
  readonly filename: string;
  /** Where the damaged file was moved. */
  readonly damagedCopy: string;
  readonly tables: readonly TableRecovery[];
  /** Live (not deleted) sessions in the recovered file. */
  readonly sessions: number;
  /** Sessions of those that lost nodes of their history (their leaf or a parent was on a damaged page). */
  readonly incomplete: number;
}

export class SqliteRepairError extends Error {
  override readonly name = "SqliteRepairError";
}

const stamp = (now: Date) =>
  now
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");

/**
 * Salvage `filename` into a new file and swap the two. Refuses while another process has the
 * file open (its locks are visible), and when the file is not a lash database at all. `now` (the
 * caller's clock) names the kept files.
 */
export function recoverSqliteFile(filename: string, now: Date): SqliteRecovery {
  if (!existsSync(filename)) throw new SqliteRepairError(`${filename} does not exist`);
  const users = sqliteFileUsers(filename);
  if (users.length)
    throw new SqliteRepairError(
      `${filename} is in use by ${users.map((u) => `process ${u.pid}${u.command ? ` (${u.command})` : ""}`).join(", ")}; stop it, then repair`,
    );
  const ts = stamp(now);
  const recovered = `${filename}.recovered-${ts}`;
  const damagedCopy = `${filename}.damaged-${ts}`;

  let source: Database.Database;
  try {
    source = openDatabase(filename, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new SqliteRepairError(`cannot open ${filename}: ${describe(e)}`);
  }
  const tables: TableRecovery[] = [];
  let sessions = 0;
  let incomplete = 0;
  try {
    let version: number;
    try {
      version = source.pragma("user_version", { simple: true }) as number;
    } catch {
      version = SQLITE_SCHEMA_VERSION; // the header page is readable (the file opened): assume ours
    }
    if (version > SQLITE_SCHEMA_VERSION)
      throw new SqliteRepairError(
        `${filename} was written by a newer lash (schema v${version}); repair it with that version`,
      );
    if (version < 1) throw new SqliteRepairError(`${filename} is not a lash database (no schema version)`);

    rmSync(recovered, { force: true });
    const target = openDatabase(recovered);
    try {
      target.pragma("journal_mode = DELETE");
      target.transaction(() => {
        for (let v = 0; v < version; v++)
          for (const statement of sqliteMigrations[v]!) target.exec(statement);
        target.pragma(`user_version = ${version}`);
      })();
      const names = (
        target
          .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
          .all() as { name: string; sql: string }[]
      ).map((t) => ({ name: t.name, withoutRowid: /WITHOUT\s+ROWID/i.test(t.sql) }));
      // runs are the node rows again (sqlite-runs.ts): built from the rows recovered, not copied —
      // a damaged file's runs may hold nodes whose rows were lost
      for (const t of names)
        if (t.name !== "node_runs") tables.push(copyTable(source, target, t.name, t.withoutRowid));
      if (names.some((t) => t.name === "node_runs")) target.transaction(() => backfillRuns(target))();
      sessions = (
        target.prepare("SELECT count(*) AS n FROM sessions WHERE deleted = 0").get() as { n: number }
      ).n;
      incomplete = (target.prepare(INCOMPLETE).get() as { n: number }).n;
      const check = target.pragma("integrity_check", { simple: true });
      if (check !== "ok")
        throw new SqliteRepairError(`the recovered file failed its own check: ${String(check)}`);
    } finally {
      target.close();
    }
  } catch (e) {
    rmSync(recovered, { force: true });
    throw e instanceof SqliteRepairError
      ? e
      : new SqliteRepairError(`recovering ${filename}: ${describe(e)}`);
  } finally {
    source.close();
  }

  // swap: the damaged file (with its WAL, so it stays readable as it was) is kept beside the new one
  renameSync(filename, damagedCopy);
  for (const suffix of ["-wal", "-shm"])
    if (existsSync(filename + suffix)) renameSync(filename + suffix, damagedCopy + suffix);
  renameSync(recovered, filename);
  return { filename, damagedCopy, tables, sessions, incomplete };
}

const INCOMPLETE = `SELECT count(*) AS n FROM sessions s WHERE s.deleted = 0 AND (
  (s.leaf_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = s.leaf_id))
  OR EXISTS (SELECT 1 FROM nodes n WHERE n.session_id = s.id AND n.parent_id IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM nodes p WHERE p.id = n.parent_id)))`;

/** Copy the readable rows of one table: ascending, past each damaged stretch, then descending. */
function copyTable(
  source: Database.Database,
  target: Database.Database,
  table: string,
  withoutRowid: boolean,
) {
  const columns = (target.pragma(`table_info(${quote(table)})`) as { name: string; pk: number }[]).map(
    (c) => c.name,
  );
  const pk = (target.pragma(`table_info(${quote(table)})`) as { name: string; pk: number }[])
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => quote(c.name));
  // columns the damaged file has (an older schema may lack later ones)
  let have: Set<string>;
  try {
    have = new Set((source.pragma(`table_info(${quote(table)})`) as { name: string }[]).map((c) => c.name));
  } catch {
    return { table, rows: 0, damaged: 1 };
  }
  if (have.size === 0) return { table, rows: 0, damaged: 0 };
  const cols = columns.filter((c) => have.has(c));
  const list = cols.map(quote).join(", ");
  const insert = target.prepare(
    `INSERT OR IGNORE INTO ${quote(table)} (${list}) VALUES (${cols.map(() => "?").join(", ")})`,
  );
  let rows = 0;
  let damaged = 0;
  const add = (values: unknown[]) => {
    rows += insert.run(...values).changes;
  };

  if (withoutRowid) {
    // no rowid to probe past damage: read from both ends
    for (const dir of ["ASC", "DESC"]) {
      try {
        const order = pk.map((k) => `${k} ${dir}`).join(", ");
        for (const r of source
          .prepare(`SELECT ${list} FROM ${quote(table)} ORDER BY ${order}`)
          .raw()
          .iterate())
          add(r as unknown[]);
        break; // read cleanly to the end: nothing more to look for
      } catch {
        if (dir === "ASC") damaged++;
      }
    }
    return { table, rows, damaged };
  }

  const select = source
    .prepare(`SELECT rowid, ${list} FROM ${quote(table)} WHERE rowid > ? ORDER BY rowid`)
    .raw();
  let after = 0;
  let jump = 0; // 0: reading; > 0: inside a damaged stretch, the next jump over the last rowid read
  for (;;) {
    try {
      for (const r of select.iterate(after) as Iterable<unknown[]>) {
        after = Number(r[0]);
        jump = 0;
        add(r.slice(1));
      }
      break; // reached the end of the table
    } catch {
      if (jump === 0) {
        damaged++;
        jump = 1;
      } else jump *= 2;
      if (jump > 2 ** 40) break;
      after += jump;
    }
  }
  if (damaged > 0) {
    try {
      for (const r of source
        .prepare(`SELECT ${list} FROM ${quote(table)} ORDER BY rowid DESC`)
        .raw()
        .iterate())
        add(r as unknown[]);
    } catch {
      // the descending scan stops at the damage from the other side
    }
  }
  return { table, rows, damaged };
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

function describe(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
}
