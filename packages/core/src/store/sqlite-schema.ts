// The SqliteStore schema: an ordered list of forward migrations, the version
// the code writes (`PRAGMA user_version`), and the read-only preflight that
// refuses a damaged file or one written by a newer lash before anything is
// written to it.
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { SchemaTooNew, StoreCorrupt, StoreError } from "../store.ts";

/**
 * Migration `i` takes the database from version `i` to `i + 1`; each is a list
 * of single SQL statements applied, with the version bump, in one transaction.
 * Append only: never edit a migration that has shipped.
 */
export const sqliteMigrations: readonly (readonly string[])[] = [
  // 1: the tables.
  [
    `CREATE TABLE sessions (
      id TEXT PRIMARY KEY,
      title TEXT,
      cwd TEXT,
      model TEXT NOT NULL,
      mode TEXT NOT NULL,
      system_prompt TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      leaf_id TEXT,
      head_revision INTEGER NOT NULL,
      turn_count INTEGER NOT NULL,
      frame_id TEXT NOT NULL,
      origin_session TEXT,
      origin_node TEXT,
      parent_session TEXT,
      parent_call TEXT,
      depth INTEGER,
      state_json TEXT NOT NULL,
      deleted INTEGER NOT NULL DEFAULT 0
    )`,
    `CREATE TABLE nodes (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      session_id TEXT NOT NULL REFERENCES sessions(id),
      parent_id TEXT,
      frame_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      turn_id TEXT,
      payload_json TEXT,
      created_at INTEGER NOT NULL
    )`,
    "CREATE INDEX nodes_session ON nodes(session_id, seq)",
    `CREATE TABLE turn_commits (
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      hash TEXT NOT NULL,
      result_json TEXT NOT NULL,
      PRIMARY KEY (session_id, turn_id)
    ) WITHOUT ROWID`,
    `CREATE TABLE usage (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      source TEXT NOT NULL,
      model TEXT NOT NULL,
      input INTEGER,
      output INTEGER,
      reasoning INTEGER,
      cache_read INTEGER,
      cache_write INTEGER,
      cost_usd REAL
    )`,
    `CREATE TABLE journal (
      key TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      hash TEXT NOT NULL,
      status TEXT NOT NULL,
      outcome_json TEXT,
      updated_at INTEGER NOT NULL
    )`,
    `CREATE TABLE pending_turns (
      session_id TEXT PRIMARY KEY REFERENCES sessions(id),
      turn_id TEXT NOT NULL,
      input_json TEXT,
      expected_revision INTEGER NOT NULL,
      started_at INTEGER NOT NULL
    )`,
  ],
  // 2: secondary indexes for listing, children, fork dependents, usage and the journal.
  [
    "CREATE INDEX sessions_updated ON sessions(updated_at)",
    "CREATE INDEX sessions_parent ON sessions(parent_session) WHERE parent_session IS NOT NULL",
    "CREATE INDEX sessions_origin ON sessions(origin_session) WHERE origin_session IS NOT NULL",
    "CREATE INDEX usage_session ON usage(session_id, seq)",
    "CREATE INDEX journal_turn ON journal(session_id, turn_id)",
  ],
  // 3: one writer per session (the lease), and the resume-attempt count of a pending turn.
  [
    `CREATE TABLE session_leases (
      session_id TEXT PRIMARY KEY,
      holder TEXT NOT NULL,
      pid INTEGER NOT NULL,
      host TEXT NOT NULL,
      acquired_at INTEGER NOT NULL,
      heartbeat_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID`,
    "ALTER TABLE pending_turns ADD COLUMN resume_attempts INTEGER NOT NULL DEFAULT 0",
  ],
  // 4: the active path in one indexed read, and the full outputs `read_output` serves.
  //   A *line* is a chain of nodes of one session in which each node's parent is the one
  //   before it; `depth` counts nodes from the root of the whole path (across forks). A node
  //   joins its parent's line when it is the parent's first child in that session; otherwise
  //   (a branch, a fork, a root) it starts a line, whose row records where it hangs
  //   (`parent_line`, `parent_depth`). The path to a leaf is then a few ranges
  //   `line = ? AND depth <= ?` read in index order. Existing rows get their line and depth
  //   from `backfillLines` in the same transaction.
  [
    `CREATE TABLE node_lines (
      line INTEGER PRIMARY KEY,
      session_id TEXT NOT NULL,
      parent_line INTEGER,
      parent_depth INTEGER
    )`,
    "CREATE INDEX node_lines_session ON node_lines(session_id)",
    "ALTER TABLE nodes ADD COLUMN line INTEGER",
    "ALTER TABLE nodes ADD COLUMN depth INTEGER",
    "CREATE UNIQUE INDEX nodes_line ON nodes(line, depth)",
    `CREATE TABLE tool_outputs (
      session_id TEXT NOT NULL,
      call_id TEXT NOT NULL,
      provider_call_id TEXT,
      text TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (session_id, call_id)
    )`,
    "CREATE INDEX tool_outputs_provider ON tool_outputs(session_id, provider_call_id)",
  ],
  // 5: content-addressed artifacts (issue 20). One row per artifact (sha256 of its bytes);
  //   its bytes in `artifact_chunks` (≤ 256 KiB each), or in a file beside the database when
  //   `on_disk` (large artifacts). `artifact_refs` records which node referred to which
  //   artifact at commit; garbage collection keeps an artifact while one of those nodes exists.
  [
    `CREATE TABLE artifacts (
      id TEXT PRIMARY KEY,
      size INTEGER NOT NULL,
      media_type TEXT NOT NULL,
      chunks INTEGER NOT NULL,
      on_disk INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL
    ) WITHOUT ROWID`,
    `CREATE TABLE artifact_chunks (
      artifact_id TEXT NOT NULL,
      idx INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (artifact_id, idx)
    ) WITHOUT ROWID`,
    `CREATE TABLE artifact_refs (
      artifact_id TEXT NOT NULL,
      node_id TEXT NOT NULL,
      PRIMARY KEY (artifact_id, node_id)
    ) WITHOUT ROWID`,
    "CREATE INDEX artifact_refs_node ON artifact_refs(node_id)",
  ],
  // 6: the newest compaction on a path without reading the path (issue 20): a partial index
  //   of the compaction nodes by place, probed once per line segment (`projectionPath`).
  [
    `CREATE INDEX nodes_compaction ON nodes(line, depth)
      WHERE kind = 'protocol' AND json_extract(payload_json, '$.type') = 'compaction'`,
  ],
  // 7: a path's envelopes in a few rows (issue 16: open a 100,000-node session in <= 100 ms).
  //   A *run* is a chain of one line's nodes as one commit wrote them (each node the child of
  //   the one before, one depth deeper, one seq later): its ends, its first seq and first
  //   parent, and the ids, frames, kinds, turns and times as one text each (sqlite-nodes.ts
  //   `nodeRuns`). A path read takes the runs inside its segments and reads the rest from
  //   `nodes`, which stays the truth: a row of `nodes` changed or deleted by anything (lash
  //   doctor, a hand edit) drops the run that holds it (the two triggers), so its depths are
  //   read — and checked — from the rows again. Existing lines get their runs from
  //   `backfillRuns` in the same transaction.
  [
    `CREATE TABLE node_runs (
      line INTEGER NOT NULL,
      first_depth INTEGER NOT NULL,
      last_depth INTEGER NOT NULL,
      first_seq INTEGER NOT NULL,
      first_parent TEXT,
      ids TEXT NOT NULL,
      frames TEXT NOT NULL,
      kinds TEXT NOT NULL,
      turns TEXT NOT NULL,
      created TEXT NOT NULL,
      PRIMARY KEY (line, first_depth)
    )`,
    `CREATE TRIGGER node_runs_stale_on_update
      AFTER UPDATE OF seq, id, parent_id, frame_id, kind, turn_id, created_at, line, depth ON nodes
    BEGIN
      DELETE FROM node_runs WHERE line = OLD.line AND first_depth =
        (SELECT max(first_depth) FROM node_runs WHERE line = OLD.line AND first_depth <= OLD.depth)
        AND last_depth >= OLD.depth;
      DELETE FROM node_runs WHERE line = NEW.line AND first_depth =
        (SELECT max(first_depth) FROM node_runs WHERE line = NEW.line AND first_depth <= NEW.depth)
        AND last_depth >= NEW.depth;
    END`,
    `CREATE TRIGGER node_runs_stale_on_delete AFTER DELETE ON nodes
    BEGIN
      DELETE FROM node_runs WHERE line = OLD.line AND first_depth =
        (SELECT max(first_depth) FROM node_runs WHERE line = OLD.line AND first_depth <= OLD.depth)
        AND last_depth >= OLD.depth;
    END`,
  ],
];

/** Where a node sits: its line and depth (see migration 4). */
export interface LinePlace {
  readonly line: number;
  readonly depth: number;
}

/** A new line: where it hangs (null for a root). */
export interface NewLine {
  readonly line: number;
  readonly sessionId: string;
  readonly parent: LinePlace | null;
}

/**
 * Assign lines and depths to nodes given in insertion order (parents first).
 * `place` finds an earlier node's place and session, `hasChildAt` tells whether
 * a line already continues past a depth; `nextLine` numbers new lines. Pure
 * bookkeeping shared by the migration's backfill and by commit.
 */
export function assignLines<
  N extends { readonly id: string; readonly sessionId: string; readonly parentId: string | null },
>(
  nodes: readonly N[],
  lookup: (id: string) => (LinePlace & { readonly sessionId: string }) | undefined,
  tipOf: (line: number) => number | undefined,
  nextLine: () => number,
): { readonly places: LinePlace[]; readonly lines: NewLine[] } {
  const fresh = new Map<string, LinePlace & { readonly sessionId: string }>();
  const tips = new Map<number, number>();
  const places: LinePlace[] = [];
  const lines: NewLine[] = [];
  for (const n of nodes) {
    const parent = n.parentId === null ? undefined : (fresh.get(n.parentId) ?? lookup(n.parentId));
    let place: LinePlace;
    if (parent === undefined) {
      // a root (or a parent that is missing: the path check falls back to the parent chain)
      const line = nextLine();
      lines.push({ line, sessionId: n.sessionId, parent: null });
      place = { line, depth: 0 };
    } else {
      const tip = tips.get(parent.line) ?? tipOf(parent.line) ?? parent.depth;
      if (parent.sessionId === n.sessionId && tip === parent.depth) {
        place = { line: parent.line, depth: parent.depth + 1 };
      } else {
        const line = nextLine();
        lines.push({ line, sessionId: n.sessionId, parent: { line: parent.line, depth: parent.depth } });
        place = { line, depth: parent.depth + 1 };
      }
    }
    tips.set(place.line, place.depth);
    fresh.set(n.id, { ...place, sessionId: n.sessionId });
    places.push(place);
  }
  return { places, lines };
}

/** The schema version this code writes and reads. */
export const SQLITE_SCHEMA_VERSION = sqliteMigrations.length;

const MAGIC = "SQLite format 3\u0000";

export const corrupt = (path: string, what: string): StoreCorrupt =>
  new StoreCorrupt({
    path,
    message: `${path} is not a usable lash database: ${what}. Move it aside (e.g. rename it to ${path}.broken); lash will create a new one.`,
  });

export const tooNew = (path: string, found: number): SchemaTooNew =>
  new SchemaTooNew({
    path,
    found,
    supported: SQLITE_SCHEMA_VERSION,
    message: `${path} was written by a newer lash (schema version ${found}; this lash supports up to ${SQLITE_SCHEMA_VERSION}). Upgrade lash to open it; the file was not modified.`,
  });

export type Preflight =
  /** No file or an empty one: a new database. */
  | { readonly kind: "new" }
  /** The header's version is current (no WAL content could override it). */
  | { readonly kind: "checked"; readonly version: number }
  /** A non-empty WAL exists, so the header may be stale: ask SQLite, read-only. */
  | { readonly kind: "walPending" };

/**
 * Inspect the file's header without opening it with SQLite (opening would
 * create `-wal`/`-shm` files): the magic string, truncation against the page
 * count the header records, and the schema version.
 */
export function preflight(path: string): Preflight | StoreCorrupt | SchemaTooNew | StoreError {
  try {
    if (!existsSync(path)) return { kind: "new" };
    const st = statSync(path);
    if (!st.isFile()) return new StoreError({ message: `${path} is not a file` });
    if (st.size === 0) return { kind: "new" };
    const header = Buffer.alloc(100);
    const fd = openSync(path, "r");
    let read: number;
    try {
      read = readSync(fd, header, 0, 100, 0);
    } finally {
      closeSync(fd);
    }
    if (read < 100 || header.toString("latin1", 0, 16) !== MAGIC)
      return corrupt(path, "not an SQLite database");
    const rawPageSize = header.readUInt16BE(16);
    const pageSize = rawPageSize === 1 ? 65_536 : rawPageSize;
    if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0)
      return corrupt(path, "damaged header (page size)");
    const wal = `${path}-wal`;
    if (existsSync(wal) && statSync(wal).size > 0) return { kind: "walPending" };
    if (st.size % pageSize !== 0)
      return corrupt(path, `truncated (${st.size} bytes is not a whole number of pages)`);
    const changeCounter = header.readUInt32BE(24);
    const pages = header.readUInt32BE(28);
    const validFor = header.readUInt32BE(92);
    if (changeCounter === validFor && pages > 0 && st.size < pages * pageSize) {
      return corrupt(
        path,
        `truncated (the header records ${pages * pageSize} bytes, the file has ${st.size})`,
      );
    }
    const version = header.readInt32BE(60);
    if (version > SQLITE_SCHEMA_VERSION) return tooNew(path, version);
    return { kind: "checked", version };
  } catch (cause) {
    return new StoreError({ message: `cannot read ${path}: ${String(cause)}`, cause });
  }
}

/** SQLite result codes (primary) that mean the file itself is damaged. */
export function isCorruption(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB"));
}
