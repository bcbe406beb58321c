// SqliteStore: the SessionStore contract in ONE SQLite database file for all
// sessions (WAL, synchronous=NORMAL, busy_timeout, foreign keys), with forward
// migrations kept in `PRAGMA user_version`. Every write runs in a
// `BEGIN IMMEDIATE` transaction, so concurrent writers (other connections,
// other processes) queue on the write lock instead of failing mid-transaction.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// @effect/sql is imported for its types only: its client is loaded with ./sqlite-client.ts
// when a statement written with it first runs (`needSql`), not to open a store or read a path.
import type * as SqlClient from "@effect/sql/SqlClient";
import type { SqlError } from "@effect/sql/SqlError";
import { sha256BytesHex } from "@lash/sansio";
import Sqlite, { type Statement } from "better-sqlite3";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type * as Scope from "effect/Scope";
import {
  type ArtifactInfo,
  type ArtifactPut,
  type CommitResult,
  fromLastCompaction,
  type GraphNode,
  type JournalEntry,
  type LeaseAttempt,
  type LeaseRequest,
  type ListOptions,
  type PendingTurn,
  type SchemaTooNew,
  type SessionNotFound,
  type SessionRecord,
  SessionStore,
  type SessionStoreShape,
  type StoreConflict,
  type StoreCorrupt,
  StoreError,
  type ToolOutputRecord,
  type TurnCommit,
} from "../store.ts";
import { ARTIFACT_CHUNK_BYTES, ARTIFACT_FILE_BYTES } from "./artifacts.ts";
import {
  forkWithoutOrigin,
  nodeNotFound,
  revisionConflict,
  sessionExists,
  sessionNotFound,
} from "./errors.ts";
import { type TurnJournals, turnJournalDir, turnJournals } from "./journal-file.ts";
import { describeLockHolders } from "./lock-holders.ts";
import {
  type ArtifactColumns,
  chunks,
  decodeToolOutput,
  type SessionColumns,
  type ToolOutputRow,
  toArtifact,
  toRecord,
  toUsage,
  type UsageDbRow,
} from "./rows.ts";
import type { SqlParts } from "./sqlite-client.ts";
import {
  appendRun,
  appendSegment,
  type LineTarget,
  NODE_CACHE_LIMIT,
  NodeCache,
  type NodeColumns,
  type PayloadSource,
  RUN_SQL,
  type RunRow,
  SEGMENT_SQL,
  type SegmentRow,
  type StoredNode,
} from "./sqlite-nodes.ts";
import { backfillRuns } from "./sqlite-runs.ts";
import {
  assignLines,
  corrupt,
  isCorruption,
  type NewLine,
  preflight,
  SQLITE_SCHEMA_VERSION,
  sqliteMigrations,
  tooNew,
} from "./sqlite-schema.ts";
import { prepareWrites, Refusal, type SqliteWrites } from "./sqlite-write.ts";

export { SQLITE_SCHEMA_VERSION, sqliteMigrations } from "./sqlite-schema.ts";

export interface SqliteStoreOptions {
  /** The database file (created when missing). */
  readonly filename: string;
  /** How long a writer waits for another connection's write lock (default 5000 ms). */
  readonly busyTimeoutMs?: number;
  /**
   * Artifacts larger than this many bytes are kept as files in `<filename>.artifacts/`
   * (named by their sha256) instead of chunks in the database (default 8 MiB).
   */
  readonly artifactFileBytes?: number;
}

type OpenError = SchemaTooNew | StoreCorrupt | StoreError;

// ---- rows ----

interface SessionRow extends SessionColumns {
  readonly deleted: number;
}

type NodeRow = NodeColumns;

// Decoders compiled once (store/schema.ts). Each throws a StoreError naming the
// row; the store's guard turns the throw into a typed failure.

interface ArtifactRow extends ArtifactColumns {
  readonly on_disk: number;
}

/**
 * The recursive CTE yields leaf → root (SQLite runs it as a FIFO queue), which
 * spares an ORDER BY over the whole path; reverse it, and sort only if the
 * engine ever produced another order.
 */
function rootFirst<R extends { readonly depth: number }>(rows: readonly R[]): R[] {
  const out = [...rows].reverse();
  for (let i = 1; i < out.length; i++) {
    if (out[i - 1]!.depth <= out[i]!.depth) return out.sort((a, b) => b.depth - a.depth);
  }
  return out;
}

const NODE_CHUNK = 500;
const ID_CHUNK = 500;

// ---- errors ----

/** What the mapping reads of an SqlError: the driver's error, or the client's message. */
interface SqlFailure {
  readonly cause?: unknown;
  readonly message: string;
}

const fromSqlError =
  (filename: string) =>
  (e: SqlFailure): StoreError => {
    const cause = e.cause;
    const detail = cause instanceof Error ? cause.message : e.message;
    if (isCorruption(cause)) {
      return new StoreError({
        message: `${filename} is damaged (${detail}). \`lash doctor --repair\` recovers what is readable into a new file and keeps the damaged one (moving it aside instead loses its sessions).`,
        cause,
      });
    }
    const code = (cause as { code?: unknown } | undefined)?.code;
    if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) {
      const holder = describeLockHolders(filename);
      return new StoreError({
        message: holder
          ? `${filename} is locked: ${holder} holds its write lock (${detail}). Wait for it to finish (or stop it), then retry`
          : `${filename} is locked by another writer (${detail}); retry`,
        cause,
      });
    }
    return new StoreError({ message: `${filename}: ${detail}`, cause });
  };

const fromDefect = (filename: string) => (defect: unknown) =>
  Effect.fail(
    defect instanceof StoreError
      ? new StoreError({ message: `${filename}: ${defect.message}`, cause: defect })
      : new StoreError({ message: `${filename}: ${String(defect)}`, cause: defect }),
  );

// ---- open ----

/**
 * Open (or create) the database, migrating it forward. A file written by a
 * newer lash is refused with `SchemaTooNew` and left byte-for-byte unchanged;
 * a file that is not SQLite, or is truncated or damaged, is `StoreCorrupt`.
 */
export const makeSqliteStore = (
  options: SqliteStoreOptions,
): Effect.Effect<SessionStoreShape, OpenError, Scope.Scope> =>
  Effect.gen(function* () {
    const filename = options.filename;
    const toOpenError = (e: SqlFailure): StoreCorrupt | StoreError =>
      isCorruption(e.cause) ? corrupt(filename, describe(e)) : fromSqlError(filename)(e);
    /** Plain better-sqlite3 statements, their failures mapped as the client's SqlErrors were. */
    const statements = <A>(f: () => A): Effect.Effect<A, StoreCorrupt | StoreError> =>
      Effect.try({
        try: f,
        catch: (cause) => toOpenError({ cause, message: "Failed to execute statement" }),
      });

    // 1. Read-only checks before SQLite touches the file.
    const pre = preflight(filename);
    if ("_tag" in pre) return yield* Effect.fail(pre);
    if (pre.kind === "walPending" || (pre.kind === "checked" && pre.version === 0)) {
      // The header may be stale (a WAL is pending), or the file may be some
      // other program's database: ask SQLite, read-only, before writing anything.
      const ro = yield* openDatabase(filename, true);
      const [version, objects] = yield* statements(
        () => [userVersionOf(ro), schemaObjectsOf(ro)] as const,
      ).pipe(Effect.ensuring(Effect.sync(() => ro.close())));
      if (version > SQLITE_SCHEMA_VERSION) return yield* Effect.fail(tooNew(filename, version));
      if (version === 0 && objects > 0) return yield* Effect.fail(notOurs(filename));
    }

    // 2. Open read-write, set the pragmas (plain statements), migrate when the file is older.
    const db = yield* Effect.acquireRelease(openDatabase(filename, false), (db) =>
      Effect.sync(() => db.close()),
    );
    const seen = yield* statements(() => {
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5_000))}`);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("foreign_keys = ON");
      // Reads map the file instead of copying each page into SQLite's cache (a 100,000-node
      // path read is ~30 MiB of pages; issue 16). Writes still go through the WAL.
      db.pragma(`mmap_size = ${MMAP_BYTES}`);
      return userVersionOf(db);
    });
    if (seen > SQLITE_SCHEMA_VERSION) return yield* Effect.fail(tooNew(filename, seen));
    // the journals of turns in flight: files beside the database (store/journal-file.ts)
    const journals = turnJournals(turnJournalDir(filename));
    yield* Effect.addFinalizer(() => Effect.sync(() => journals.close()));
    if (seen === SQLITE_SCHEMA_VERSION)
      return makeShape(db, filename, options.artifactFileBytes ?? ARTIFACT_FILE_BYTES, undefined, journals);

    // Migrate under the write lock, re-reading the version another process may have moved
    // (the @effect/sql client is loaded for it, and kept by the store).
    const parts = yield* loadSql(db, filename);
    const { sql, immediate } = parts;
    yield* immediate(
      Effect.gen(function* () {
        const version = yield* userVersion(sql);
        if (version > SQLITE_SCHEMA_VERSION) return yield* Effect.fail(tooNew(filename, version));
        if (version === 0 && (yield* schemaObjects(sql)) > 0) return yield* Effect.fail(notOurs(filename));
        for (let v = version; v < SQLITE_SCHEMA_VERSION; v++) {
          for (const statement of sqliteMigrations[v]!) yield* sql.unsafe(statement);
          if (v + 1 === LINES_VERSION) yield* backfillLines(sql);
          if (v + 1 === RUNS_VERSION) backfillRuns(db);
        }
        if (version < SQLITE_SCHEMA_VERSION)
          yield* sql.unsafe(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
      }),
    ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(toOpenError(e))));

    return makeShape(db, filename, options.artifactFileBytes ?? ARTIFACT_FILE_BYTES, parts, journals);
  }).pipe(Effect.withSpan("SqliteStore.open"));

/** The module of the @effect/sql client (./sqlite-client.ts), imported once. */
let sqlModule: Promise<typeof import("./sqlite-client.ts")> | undefined;

/** An @effect/sql client over the store's handle, loading its module on first use. */
function loadSql(db: Sqlite.Database, filename: string): Effect.Effect<SqlParts, StoreError> {
  return Effect.flatMap(
    Effect.tryPromise({
      try: () => {
        sqlModule ??= import("./sqlite-client.ts");
        return sqlModule;
      },
      catch: (cause) => {
        sqlModule = undefined;
        return new StoreError({
          message: `${filename}: could not load the SQL client (@effect/sql): ${cause instanceof Error ? cause.message : String(cause)} — reinstall lash`,
          cause,
        });
      },
    }),
    (m) => m.sqlParts(db),
  );
}

/** Open the database file with better-sqlite3; failures (bad path, permissions …) are typed, not defects. */
function openDatabase(
  filename: string,
  readonly: boolean,
): Effect.Effect<Sqlite.Database, StoreCorrupt | StoreError> {
  return Effect.try({
    try: () => new Sqlite(filename, { readonly }),
    catch: (defect) =>
      isCorruption(defect)
        ? corrupt(filename, String(defect))
        : new StoreError({ message: `cannot open ${filename}: ${String(defect)}`, cause: defect }),
  });
}

function userVersionOf(db: Sqlite.Database): number {
  return Number(db.pragma("user_version", { simple: true }) ?? 0);
}

function schemaObjectsOf(db: Sqlite.Database): number {
  return Number(db.prepare("SELECT count(*) FROM sqlite_master").pluck(true).get() ?? 0);
}

/** How much of the database file reads map into memory (address space, not resident memory). */
const MMAP_BYTES = 256 * 2 ** 20;

/** The schema version that introduced lines (migration 4). */
const LINES_VERSION = 4;
/** The schema version that introduced runs (migration 7). */
const RUNS_VERSION = 7;

/**
 * Migration 4's data step: give every existing node its line and depth, in
 * insertion order (parents come first), in the migration's transaction.
 */
function backfillLines(sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> {
  return Effect.gen(function* () {
    const rows = yield* sql<{ seq: number; id: string; session_id: string; parent_id: string | null }>`
      SELECT seq, id, session_id, parent_id FROM nodes ORDER BY seq`;
    if (rows.length === 0) return;
    let next = 0;
    const { places, lines } = assignLines(
      rows.map((r) => ({ id: r.id, sessionId: r.session_id, parentId: r.parent_id })),
      () => undefined,
      () => undefined,
      () => ++next,
    );
    yield* insertLines(sql, lines);
    yield* sql.unsafe("CREATE TEMP TABLE lash_places (seq INTEGER PRIMARY KEY, line INTEGER, depth INTEGER)");
    const all = rows.map((r, i) => ({ seq: r.seq, line: places[i]!.line, depth: places[i]!.depth }));
    for (const part of chunks(all, NODE_CHUNK)) yield* sql`INSERT INTO lash_places ${sql.insert(part)}`;
    yield* sql.unsafe(
      "UPDATE nodes SET line = p.line, depth = p.depth FROM lash_places p WHERE p.seq = nodes.seq",
    );
    yield* sql.unsafe("DROP TABLE lash_places");
  });
}

function insertLines(sql: SqlClient.SqlClient, lines: readonly NewLine[]): Effect.Effect<void, SqlError> {
  return Effect.gen(function* () {
    for (const part of chunks(lines, NODE_CHUNK)) {
      yield* sql`INSERT INTO node_lines ${sql.insert(
        part.map((l) => ({
          line: l.line,
          session_id: l.sessionId,
          parent_line: l.parent?.line ?? null,
          parent_depth: l.parent?.depth ?? null,
        })),
      )}`;
    }
  });
}

function describe(e: SqlFailure): string {
  return e.cause instanceof Error ? e.cause.message : e.message;
}

const notOurs = (filename: string) => corrupt(filename, "an SQLite database that lash did not create");

function schemaObjects(sql: SqlClient.SqlClient): Effect.Effect<number, SqlError> {
  return Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master`, (rows) => rows[0]?.n ?? 0);
}

function userVersion(sql: SqlClient.SqlClient): Effect.Effect<number, SqlError> {
  return Effect.map(sql<{ user_version: number }>`PRAGMA user_version`, (rows) => rows[0]?.user_version ?? 0);
}

// ---- the store ----

function makeShape(
  db: Sqlite.Database,
  filename: string,
  artifactFileBytes: number,
  loaded: SqlParts | undefined,
  journals: TurnJournals,
): SessionStoreShape {
  const toStoreError = fromSqlError(filename);
  /**
   * The @effect/sql client and its transaction combinator, set by `needSql` (or by the open's
   * migration): the methods written with them run after it (`withSql` below); opening the store,
   * reading a session and its paths, and the write path (sqlite-write.ts) do not need them.
   */
  let sql: SqlClient.SqlClient;
  let immediate: SqlParts["immediate"];
  const useSql = (parts: SqlParts) => {
    loaded ??= parts;
    sql = loaded.sql;
    immediate = loaded.immediate;
  };
  if (loaded !== undefined) useSql(loaded);
  const needSql: Effect.Effect<void, StoreError> = Effect.suspend(() =>
    loaded !== undefined ? Effect.void : Effect.map(loadSql(db, filename), useSql),
  );
  const nodeCache = new NodeCache(NODE_CACHE_LIMIT);
  const toNode = (r: NodeRow): GraphNode => nodeCache.node(r);
  /** Where large artifacts live: a directory beside the database, one file per artifact. */
  const artifactDir = `${filename}.artifacts`;
  const artifactFile = (id: string) => join(artifactDir, id.slice(0, 2), id);
  const artifactsOnDisk = filename !== ":memory:" && filename !== "";

  /** Map SQL failures and defects (bad JSON …) to StoreError; keep the typed failures. */
  const guard = <A, E>(
    effect: Effect.Effect<A, E | SqlError>,
  ): Effect.Effect<A, Exclude<E, SqlError> | StoreError> =>
    (effect as Effect.Effect<A, Exclude<E, SqlError> | SqlError>).pipe(
      Effect.catchIf(
        (e): e is SqlError => (e as { _tag?: unknown })._tag === "SqlError",
        (e) => Effect.fail(toStoreError(e)),
      ),
      Effect.catchAllDefect(fromDefect(filename)),
    );

  /**
   * A write transaction that does not yield to other fibers between BEGIN and
   * COMMIT: better-sqlite3 is synchronous, so a second connection in this
   * process waiting on the lock would block the thread that holds it.
   */
  const write = <A, E>(effect: Effect.Effect<A, E | SqlError>) =>
    guard(immediate(effect).pipe(Effect.withMaxOpsBeforeYield(Number.MAX_SAFE_INTEGER)));

  let writes: SqliteWrites | undefined;
  /** What a plain statement path threw, as a StoreError: SQLite's errors as `guard` makes them, a row that does not decode (a thrown StoreError) naming the file. */
  const thrown = (cause: unknown): StoreError => {
    const code = (cause as { code?: unknown } | null)?.code;
    if (typeof code === "string" && code.startsWith("SQLITE_"))
      return toStoreError({ cause, message: "Failed to execute statement" });
    return cause instanceof StoreError
      ? new StoreError({ message: `${filename}: ${cause.message}`, cause })
      : new StoreError({ message: `${filename}: ${String(cause)}`, cause });
  };
  /**
   * The write path (store/sqlite-write.ts: statements prepared once, on first use — after the
   * migrations made their tables — each method one synchronous transaction): a refusal keeps its
   * typed failure, SQLite's errors and defects become StoreErrors as `guard` makes them.
   */
  const hot = <A, E extends SessionNotFound | StoreConflict = never>(
    f: (w: SqliteWrites) => A,
  ): Effect.Effect<A, NoInfer<E> | StoreError> =>
    Effect.try<A, E | StoreError>({
      try: () => {
        writes ??= prepareWrites(db);
        return f(writes);
      },
      catch: (cause) => (cause instanceof Refusal ? (cause.error as E | StoreError) : thrown(cause)),
    });

  let liveStatement: Statement | undefined;
  /** The live session row: a plain statement (opening a session does not load the SQL client). */
  const liveRow = (id: string) =>
    Effect.try({
      try: () => {
        liveStatement ??= db.prepare("SELECT * FROM sessions WHERE id = ? AND deleted = 0");
        return liveStatement.get(id) as SessionRow | undefined;
      },
      catch: (cause) => toStoreError({ cause, message: "Failed to execute statement" }),
    });

  const requireLive = (id: string): Effect.Effect<SessionRow, SessionNotFound | StoreError> =>
    Effect.flatMap(liveRow(id), (row) => (row ? Effect.succeed(row) : Effect.fail(sessionNotFound(id))));

  /** The reads a resume makes (listing, usage, nodes), prepared once on the handle, by text. */
  const reads = new Map<string, Statement>();
  /**
   * `f` over `read(text)` statements: SQLite's errors become StoreErrors as `guard` makes
   * them, and a row that does not decode (a thrown StoreError) the same StoreError as before.
   */
  const plain = <A>(f: (read: (text: string) => Statement) => A): Effect.Effect<A, StoreError> =>
    Effect.try({
      try: () =>
        f((text) => {
          let statement = reads.get(text);
          if (statement === undefined) {
            statement = db.prepare(text);
            reads.set(text, statement);
          }
          return statement;
        }),
      catch: thrown,
    });

  const insertSession = (r: SessionRecord) =>
    sql`INSERT INTO sessions ${sql.insert({
      id: r.id,
      title: r.title ?? null,
      cwd: r.cwd ?? null,
      model: r.model,
      mode: r.mode,
      system_prompt: r.systemPrompt ?? null,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      leaf_id: r.leafId,
      head_revision: r.headRevision,
      turn_count: r.turnCount,
      frame_id: r.frameId,
      origin_session: r.origin?.sessionId ?? null,
      origin_node: r.origin?.nodeId ?? null,
      parent_session: r.parentLink?.sessionId ?? null,
      parent_call: r.parentLink?.callId ?? null,
      depth: r.parentLink?.depth ?? null,
      state_json: JSON.stringify(r.state ?? {}),
      deleted: 0,
    })}`;

  /** Which of these node ids exist. */
  const existingNodes = (nodeIds: readonly string[]) =>
    Effect.gen(function* () {
      const found = new Set<string>();
      for (const part of chunks([...new Set(nodeIds)], ID_CHUNK)) {
        const rows = yield* sql<{ id: string }>`SELECT id FROM nodes WHERE ${sql.in("id", part)}`;
        for (const r of rows) found.add(r.id);
      }
      return found;
    });

  const hasDependents = (id: string) =>
    Effect.map(
      sql<{ one: number }>`SELECT 1 AS one FROM sessions
        WHERE (origin_session = ${id} OR parent_session = ${id}) AND id <> ${id} LIMIT 1`,
      (rows) => rows.length > 0,
    );

  /** Remove a session row and its nodes; then purge kept ancestors nothing depends on any more. */
  const purge = (id: string): Effect.Effect<void, SqlError> =>
    Effect.gen(function* () {
      const row = (yield* sql<SessionRow>`SELECT * FROM sessions WHERE id = ${id}`)[0];
      if (!row) return;
      yield* sql`DELETE FROM nodes WHERE session_id = ${id}`;
      nodeCache.dropSession(id);
      yield* sql`DELETE FROM node_lines WHERE session_id = ${id}`;
      yield* sql`DELETE FROM tool_outputs WHERE session_id = ${id}`;
      yield* sql`DELETE FROM sessions WHERE id = ${id}`;
      for (const up of [row.origin_session, row.parent_session]) {
        if (up === null) continue;
        const u = (yield* sql<{ deleted: number }>`SELECT deleted FROM sessions WHERE id = ${up}`)[0];
        if (u?.deleted === 1 && !(yield* hasDependents(up))) yield* purge(up);
      }
    });

  const activePathFrom = (leafId: string) =>
    sql<NodeRow & { depth: number }>`
      WITH RECURSIVE path(depth, seq, id, session_id, parent_id, frame_id, kind, turn_id, payload_json, created_at) AS (
        SELECT 0, seq, id, session_id, parent_id, frame_id, kind, turn_id, payload_json, created_at
          FROM nodes WHERE id = ${leafId}
        UNION ALL
        SELECT p.depth + 1, n.seq, n.id, n.session_id, n.parent_id, n.frame_id, n.kind, n.turn_id, n.payload_json, n.created_at
          FROM nodes n JOIN path p ON n.id = p.parent_id
      )
      SELECT * FROM path`;

  /**
   * The path reads, prepared once on the better-sqlite3 handle and run with `raw` rows
   * (arrays, not objects): opening a long session costs one small recursive query over
   * `node_lines` (one row per branch point or fork on the path) and one aggregate row per
   * line segment (SEGMENT_SQL, sqlite-nodes.ts), turned straight into nodes — no statement
   * compiler, no row per node. A node's session is its line's (a line is one session's
   * chain), so it is not read per row.
   */
  interface PathSql {
    /** [line, depth] of a node. */
    readonly head: Statement;
    /** [line, upto, session_id] per line segment of the path, leaf first. */
    readonly segments: Statement;
    /** A line between two depths as one SegmentRow. */
    readonly segment: Statement;
    /** The runs wholly inside a line's depths (RunRows, RUN_SQL). */
    readonly runs: Statement;
    /** [depth, id] of the deepest compaction of a frame on a line segment. */
    readonly compaction: Statement;
    /** The payload_json of a line between two depths (a PayloadChunk), plucked. */
    readonly payloads: Statement;
    /** [seq, seq] of the rows of a line at two depths (the chunk's ends). */
    readonly payloadEnds: Statement;
  }
  let pathSql: PathSql | undefined;
  const pathStatements = (): PathSql => {
    if (!db) throw new Error("the SQLite handle is not available");
    if (!pathSql) {
      pathSql = {
        head: db.prepare("SELECT line, depth FROM nodes WHERE id = ?").raw(true),
        segments: db
          .prepare(
            `WITH RECURSIVE seg(n, line, upto) AS (
               SELECT 0, ?, ?
               UNION ALL
               SELECT seg.n + 1, l.parent_line, l.parent_depth FROM seg JOIN node_lines l ON l.line = seg.line
                 WHERE l.parent_line IS NOT NULL AND seg.n < 1000000
             )
             SELECT seg.line, seg.upto, (SELECT session_id FROM node_lines WHERE line = seg.line)
               FROM seg ORDER BY seg.n`,
          )
          .raw(true),
        segment: db.prepare(SEGMENT_SQL).raw(true),
        runs: db.prepare(RUN_SQL).raw(true),
        compaction: db
          .prepare(
            `SELECT depth, id FROM nodes INDEXED BY nodes_compaction
               WHERE line = ? AND depth <= ?
                 AND kind = 'protocol' AND json_extract(payload_json, '$.type') = 'compaction'
                 AND frame_id = ?
               ORDER BY depth DESC LIMIT 1`,
          )
          .raw(true),
        payloads: db
          .prepare(
            "SELECT payload_json FROM nodes WHERE line = ? AND depth >= ? AND depth <= ? ORDER BY depth",
          )
          .pluck(true),
        payloadEnds: db
          .prepare(
            `SELECT (SELECT seq FROM nodes WHERE line = ? AND depth = ?),
                    (SELECT seq FROM nodes WHERE line = ? AND depth = ?)`,
          )
          .raw(true),
      };
    }
    return pathSql;
  };
  const payloadSource: PayloadSource = (line, from, to) => {
    if (!db?.open)
      throw new StoreError({
        message: `${filename} was closed before the payloads of a path read from it were read; read them (node.payload) before closing the store`,
      });
    // read on a node's first `payload` access, outside any Effect: SQLite's errors are thrown as
    // the StoreErrors a read returns (a damaged page names the file and `lash doctor --repair`)
    try {
      const st = pathStatements();
      const texts = st.payloads.all(line, from, to) as (string | null)[];
      const [first, last] = st.payloadEnds.get(line, from, line, to) as [number | null, number | null];
      return [texts, first, last];
    } catch (cause) {
      throw thrown(cause);
    }
  };
  /**
   * Append segments `segments[last..0]` (leaf first, so root first here) to `out`, the first
   * from depth `from`; the first node's parent must be `firstParent` (undefined: unchecked).
   * False when a segment does not check out (the caller reads the path through parent ids).
   */
  const appendSegments = (
    st: PathSql,
    segments: readonly Segment[],
    last: number,
    from: number,
    firstParent: string | null | undefined,
    out: StoredNode[],
  ): boolean => {
    const cachedFrom = nodeCache.cachedFrom(segments[0]![1]);
    let depth = from;
    for (let i = last; i >= 0; i--) {
      const [line, upto, sessionId] = segments[i]!;
      if (sessionId === null || upto < depth) return false;
      if (!appendLine(st, line, depth, upto, sessionId, cachedFrom, firstParent, out)) return false;
      depth = upto + 1;
    }
    return true;
  };
  /**
   * Append depths `from`..`upto` of `line`: the runs wholly inside them (one row per commit),
   * and what no run covers — or a run that does not check out — as SegmentRows of its rows.
   * False when a piece does not check out, or runs overlap (a damaged file).
   */
  const appendLine = (
    st: PathSql,
    line: number,
    from: number,
    upto: number,
    sessionId: string,
    cachedFrom: number,
    firstParent: string | null | undefined,
    out: StoredNode[],
  ): boolean => {
    const into: LineTarget = {
      line,
      sessionId,
      out,
      cachedFrom,
      cache: nodeCache,
      source: payloadSource,
      chunk: undefined,
      made: [],
    };
    const parent = () => (out.length === 0 ? firstParent : out[out.length - 1]!.id);
    const rows = (a: number, b: number) =>
      appendSegment(st.segment.get(line, a, b) as SegmentRow, a, b, into, parent());
    let depth = from;
    for (const run of st.runs.all(line, from, upto, upto) as RunRow[]) {
      const [first, last] = run;
      if (first < depth) return false;
      if (first > depth && !rows(depth, first - 1)) return false;
      if (!appendRun(run, into, parent()) && !rows(first, last)) return false;
      depth = last + 1;
    }
    return depth > upto || rows(depth, upto);
  };
  type Segment = readonly [line: number, upto: number, sessionId: string | null];
  /** The line segments of the path to `leafId`, leaf first; [] when there is no such node, null when it has no line. */
  const segmentsOf = (st: PathSql, leafId: string): readonly Segment[] | null => {
    const head = st.head.get(leafId) as readonly [number | null, number | null] | undefined;
    if (head === undefined) return [];
    if (head[0] === null || head[1] === null) return null;
    return st.segments.all(head[0], head[1]) as Segment[];
  };
  const pathTry = <A>(f: () => A): Effect.Effect<A, StoreError> =>
    Effect.try({ try: f, catch: (cause) => toStoreError({ cause, message: "Failed to read a path" }) });

  /**
   * The path root → leaf from lines (migration 4), through `PathSql`. The result is checked
   * link by link against the parent ids; a path that does not check out (a row without its
   * line, e.g. salvaged from a damaged file) is read again through the parent chain.
   */
  const activePathNodes = (leafId: string): Effect.Effect<readonly GraphNode[], StoreError | SqlError> =>
    Effect.flatMap(
      pathTry((): readonly StoredNode[] | null => {
        const st = pathStatements();
        const segments = segmentsOf(st, leafId);
        if (segments === null) return null;
        const out: StoredNode[] = [];
        if (segments.length === 0) return out;
        // linked node by node from the root (appendSegment checks each parent): it must end at the leaf
        return appendSegments(st, segments, segments.length - 1, 0, null, out) && out.at(-1)!.id === leafId
          ? out
          : null;
      }),
      (nodes): Effect.Effect<readonly GraphNode[], StoreError | SqlError> =>
        nodes !== null
          ? Effect.succeed(nodes)
          : Effect.flatMap(needSql, () =>
              Effect.map(activePathFrom(leafId), (rows) => rootFirst(rows).map(toNode)),
            ),
    );

  /**
   * The path from the newest compaction node of `frameId` to the leaf, read through lines
   * like `activePathNodes`: per line segment, leaf first, one probe of the partial index
   * `nodes_compaction` (migration 6) for the deepest compaction at or above the segment's
   * end; then the ranges from that node down. No compaction, or a path that does not check
   * out: the whole path, cut in memory. `undefined`: no such leaf.
   */
  const projectionNodes = (leafId: string, frameId: string) =>
    Effect.flatMap(
      pathTry((): readonly StoredNode[] | null | undefined => {
        const st = pathStatements();
        const segments = segmentsOf(st, leafId);
        if (segments === null) return null;
        if (segments.length === 0) return undefined;
        for (let i = 0; i < segments.length; i++) {
          const [line, upto] = segments[i]!;
          const hit = st.compaction.get(line, upto, frameId) as readonly [number, string] | undefined;
          if (hit === undefined) continue;
          const out: StoredNode[] = [];
          if (!appendSegments(st, segments, i, hit[0], undefined, out)) return null;
          // linked node by node (appendSegment checks each parent) from the compaction to the leaf
          return out[0]!.id === hit[1] && out.at(-1)!.id === leafId ? out : null;
        }
        return null;
      }),
      (found) => {
        if (found === undefined) return Effect.succeed(undefined);
        if (found !== null) return Effect.succeed(found);
        return Effect.map(activePathNodes(leafId), (path) =>
          path.length === 0 ? undefined : fromLastCompaction(path, frameId),
        );
      },
    );

  // a turn file whose turn is no longer pending is a leftover of a crash between a commit and the
  // file's deletion (store/journal-file.ts): housekeeping, so a failure here waits for the next open
  try {
    journals.sweep(() => {
      writes ??= prepareWrites(db);
      return writes.pendingTurns();
    });
  } catch {
    // the next open sweeps again
  }

  const store: SessionStoreShape = {
    createSession: (record: SessionRecord) => hot((w) => w.createSession(record)),

    getSession: Effect.fn("SqliteStore.getSession")(function* (id: string) {
      return yield* guard(Effect.map(requireLive(id), toRecord));
    }),

    listSessions: Effect.fn("SqliteStore.listSessions")(function* (options: ListOptions = {}) {
      const where = ["deleted = 0"];
      const params: unknown[] = [];
      if (!options.includeChildren) where.push("parent_session IS NULL");
      if (options.cwd !== undefined) {
        where.push("cwd = ?");
        params.push(options.cwd);
      }
      let limit = "";
      if (options.limit !== undefined) {
        limit = " LIMIT ?";
        params.push(Math.max(0, Math.floor(options.limit)));
      }
      const text = `SELECT * FROM sessions WHERE ${where.join(" AND ")} ORDER BY updated_at DESC, rowid DESC${limit}`;
      return yield* plain((read) => (read(text).all(...params) as SessionRow[]).map(toRecord));
    }),

    updateSession: Effect.fn("SqliteStore.updateSession")(function* (
      id: string,
      patch: { readonly title?: string; readonly updatedAt: number },
    ) {
      yield* write(
        Effect.gen(function* () {
          yield* requireLive(id);
          yield* sql`UPDATE sessions SET updated_at = ${patch.updatedAt},
            title = COALESCE(${patch.title ?? null}, title) WHERE id = ${id}`;
        }),
      );
    }),

    deleteSession: Effect.fn("SqliteStore.deleteSession")(function* (id: string) {
      yield* write(
        Effect.gen(function* () {
          yield* requireLive(id);
          yield* sql`DELETE FROM journal WHERE session_id = ${id}`;
          yield* sql`DELETE FROM pending_turns WHERE session_id = ${id}`;
          yield* sql`DELETE FROM session_leases WHERE session_id = ${id}`;
          yield* sql`DELETE FROM usage WHERE session_id = ${id}`;
          yield* sql`DELETE FROM turn_commits WHERE session_id = ${id}`;
          if (yield* hasDependents(id)) yield* sql`UPDATE sessions SET deleted = 1 WHERE id = ${id}`;
          else yield* purge(id);
        }),
      );
      yield* hot(() => journals.dropSession(id));
    }),

    activePath: Effect.fn("SqliteStore.activePath")(function* (sessionId: string, leafId?: string | null) {
      return yield* guard(
        Effect.gen(function* () {
          const row = yield* requireLive(sessionId);
          const leaf = leafId === undefined ? row.leaf_id : leafId;
          if (leaf === null) return [];
          const nodes = yield* activePathNodes(leaf);
          if (nodes.length === 0) return yield* Effect.fail(nodeNotFound(leaf));
          return nodes;
        }),
      );
    }),

    projectionPath: Effect.fn("SqliteStore.projectionPath")(function* (sessionId: string, frameId: string) {
      return yield* guard(
        Effect.gen(function* () {
          const row = yield* requireLive(sessionId);
          if (row.leaf_id === null) return [];
          const nodes = yield* projectionNodes(row.leaf_id, frameId);
          if (nodes === undefined) return yield* Effect.fail(nodeNotFound(row.leaf_id));
          return nodes;
        }),
      );
    }),

    sessionNodes: Effect.fn("SqliteStore.sessionNodes")(function* (sessionId: string) {
      yield* requireLive(sessionId);
      return yield* plain((read) =>
        (read("SELECT * FROM nodes WHERE session_id = ? ORDER BY seq").all(sessionId) as NodeRow[]).map(
          toNode,
        ),
      );
    }),

    getNode: Effect.fn("SqliteStore.getNode")(function* (nodeId: string) {
      return yield* plain((read) => {
        const row = read("SELECT * FROM nodes WHERE id = ?").get(nodeId) as NodeRow | undefined;
        return row ? toNode(row) : undefined;
      });
    }),

    // the turn's journal file goes once the commit (which ends the turn's pending row) is in
    commit: (c: TurnCommit) =>
      hot<CommitResult, SessionNotFound | StoreConflict>((w) => {
        const result = w.commit(c);
        journals.dropTurn(c.sessionId, c.turnId);
        return result;
      }),

    setLeaf: Effect.fn("SqliteStore.setLeaf")(function* (
      sessionId: string,
      leafId: string | null,
      expectedRevision: number,
      updatedAt: number,
    ) {
      return yield* write(
        Effect.gen(function* () {
          const row = yield* requireLive(sessionId);
          if (row.head_revision !== expectedRevision) {
            return yield* Effect.fail(revisionConflict(sessionId, expectedRevision, row.head_revision));
          }
          if (leafId !== null && !(yield* existingNodes([leafId])).has(leafId)) {
            return yield* Effect.fail(nodeNotFound(leafId));
          }
          const headRevision = row.head_revision + 1;
          yield* sql`UPDATE sessions SET leaf_id = ${leafId}, head_revision = ${headRevision},
            updated_at = ${updatedAt} WHERE id = ${sessionId}`;
          return { headRevision, leafId, duplicate: false } as CommitResult;
        }),
      );
    }),

    fork: Effect.fn("SqliteStore.fork")(function* (session: SessionRecord) {
      return yield* write(
        Effect.gen(function* () {
          const origin = session.origin;
          if (!origin) return yield* Effect.fail(forkWithoutOrigin(session.id));
          yield* requireLive(origin.sessionId);
          if (origin.nodeId !== null && !(yield* existingNodes([origin.nodeId])).has(origin.nodeId)) {
            return yield* Effect.fail(nodeNotFound(origin.nodeId));
          }
          const exists = yield* sql`SELECT 1 FROM sessions WHERE id = ${session.id}`;
          if (exists.length > 0) return yield* Effect.fail(sessionExists(session.id));
          // One row: the fork's path continues through the origin's nodes.
          const record: SessionRecord = { ...session, leafId: origin.nodeId };
          yield* insertSession(record);
          return record;
        }),
      );
    }),

    usage: Effect.fn("SqliteStore.usage")(function* (sessionId: string) {
      yield* requireLive(sessionId);
      return yield* plain((read) =>
        (read("SELECT * FROM usage WHERE session_id = ? ORDER BY seq").all(sessionId) as UsageDbRow[]).map(
          toUsage,
        ),
      );
    }),

    children: Effect.fn("SqliteStore.children")(function* (sessionId: string) {
      return yield* plain((read) =>
        (
          read(
            "SELECT * FROM sessions WHERE parent_session = ? AND deleted = 0 ORDER BY created_at, rowid",
          ).all(sessionId) as SessionRow[]
        ).map(toRecord),
      );
    }),

    // The journal is written at every step of a turn: one append to the turn's file (store/
    // journal-file.ts); the `journal` table holds only what a version before it wrote.
    journalGet: (key: string) => hot((w) => journals.get(key) ?? w.journalGet(key)),

    journalPut: (e: JournalEntry) => hot(() => journals.put([e])),

    journalPutMany: (entries: readonly JournalEntry[]) => hot(() => journals.put(entries)),

    journalForTurn: (sessionId: string, turnId: string) =>
      hot((w) => journals.forTurn(sessionId, turnId, w.journalRows(sessionId, turnId))),

    beginTurn: (t: PendingTurn) => hot((w) => w.beginTurn(t)),

    pendingTurn: (sessionId: string) => hot((w) => w.pendingTurn(sessionId)),

    // the pending row (and any journal rows of an older lash) in one transaction, then the file
    abandonTurn: (sessionId: string, turnId: string) =>
      hot((w) => {
        w.abandonTurn(sessionId, turnId);
        journals.dropTurn(sessionId, turnId);
      }),

    countResumeAttempt: Effect.fn("SqliteStore.countResumeAttempt")(function* (
      sessionId: string,
      turnId: string,
    ) {
      const rows = yield* write(
        sql<{ resume_attempts: number }>`UPDATE pending_turns SET resume_attempts = resume_attempts + 1
          WHERE session_id = ${sessionId} AND turn_id = ${turnId} RETURNING resume_attempts`,
      );
      return rows[0]?.resume_attempts ?? 0;
    }),

    acquireLease: (req: LeaseRequest) => hot<LeaseAttempt, SessionNotFound>((w) => w.acquireLease(req)),

    renewLease: (sessionId: string, holder: string, now: number, ttlMs: number) =>
      hot((w) => w.renewLease(sessionId, holder, now, ttlMs)),

    putToolOutput: Effect.fn("SqliteStore.putToolOutput")(function* (o: ToolOutputRecord) {
      yield* write(
        Effect.gen(function* () {
          yield* requireLive(o.sessionId);
          yield* sql`INSERT OR REPLACE INTO tool_outputs ${sql.insert({
            session_id: o.sessionId,
            call_id: o.callId,
            provider_call_id: o.providerCallId ?? null,
            text: o.text,
            created_at: o.createdAt,
          })}`;
        }),
      );
    }),

    getToolOutput: Effect.fn("SqliteStore.getToolOutput")(function* (sessionId: string, callId: string) {
      return yield* guard(
        Effect.map(
          // the session, then the origins its fork path runs through, nearest first
          sql<ToolOutputRow>`
            WITH RECURSIVE lineage(id, k) AS (
              SELECT id, 0 FROM sessions WHERE id = ${sessionId} AND deleted = 0
              UNION ALL
              SELECT s.origin_session, lineage.k + 1 FROM lineage JOIN sessions s ON s.id = lineage.id
                WHERE s.origin_session IS NOT NULL
            )
            SELECT o.* FROM lineage JOIN tool_outputs o ON o.session_id = lineage.id
              WHERE o.call_id = ${callId} OR o.provider_call_id = ${callId}
              ORDER BY o.call_id = ${callId} DESC, lineage.k, o.rowid DESC LIMIT 1`,
          (rows) => {
            const r = rows[0];
            if (!r) return undefined;
            return decodeToolOutput(
              {
                sessionId: r.session_id,
                callId: r.call_id,
                ...(r.provider_call_id !== null ? { providerCallId: r.provider_call_id } : {}),
                text: r.text,
                createdAt: r.created_at,
              },
              `tool output ${r.call_id} of session ${r.session_id}`,
            );
          },
        ),
      );
    }),

    putArtifact: Effect.fn("SqliteStore.putArtifact")(function* (a: ArtifactPut) {
      const id = sha256BytesHex(a.bytes);
      const had = yield* guard(sql<ArtifactRow>`SELECT * FROM artifacts WHERE id = ${id}`);
      if (had[0]) return toArtifact(had[0]);
      const onDisk = artifactsOnDisk && a.bytes.length > artifactFileBytes;
      if (onDisk) {
        // the file first (written whole, then renamed into place): a row never names a missing file
        yield* guard(
          Effect.try({
            try: () => {
              const file = artifactFile(id);
              mkdirSync(join(artifactDir, id.slice(0, 2)), { recursive: true });
              const tmp = `${file}.${process.pid}.tmp`;
              writeFileSync(tmp, a.bytes);
              renameSync(tmp, file);
            },
            catch: (cause) =>
              new StoreError({
                message: `could not write artifact ${id} under ${artifactDir}: ${cause}`,
                cause,
              }),
          }),
        );
      }
      const count = onDisk ? 0 : Math.ceil(a.bytes.length / ARTIFACT_CHUNK_BYTES);
      return yield* write(
        Effect.gen(function* () {
          const again = yield* sql<ArtifactRow>`SELECT * FROM artifacts WHERE id = ${id}`;
          if (again[0]) return toArtifact(again[0]);
          yield* sql`INSERT INTO artifacts ${sql.insert({
            id,
            size: a.bytes.length,
            media_type: a.mediaType,
            chunks: count,
            on_disk: onDisk ? 1 : 0,
            created_at: a.createdAt,
          })}`;
          for (let i = 0; i < count; i++) {
            const data = a.bytes.subarray(i * ARTIFACT_CHUNK_BYTES, (i + 1) * ARTIFACT_CHUNK_BYTES);
            yield* sql`INSERT INTO artifact_chunks ${sql.insert({ artifact_id: id, idx: i, data })}`;
          }
          return { id, size: a.bytes.length, mediaType: a.mediaType, createdAt: a.createdAt } as ArtifactInfo;
        }),
      );
    }),

    artifactInfo: Effect.fn("SqliteStore.artifactInfo")(function* (id: string) {
      const rows = yield* guard(sql<ArtifactRow>`SELECT * FROM artifacts WHERE id = ${id}`);
      return rows[0] ? toArtifact(rows[0]) : undefined;
    }),

    readArtifact: Effect.fn("SqliteStore.readArtifact")(function* (id: string) {
      const row = (yield* guard(sql<ArtifactRow>`SELECT * FROM artifacts WHERE id = ${id}`))[0];
      if (!row) return undefined;
      if (row.on_disk === 1) {
        return yield* guard(
          Effect.try({
            try: () => new Uint8Array(readFileSync(artifactFile(id))),
            catch: (cause) =>
              new StoreError({
                message: `artifact ${id} is recorded in ${filename} but its file ${artifactFile(id)} cannot be read: ${cause}`,
                cause,
              }),
          }),
        );
      }
      const parts = yield* guard(
        sql<{ data: Uint8Array }>`SELECT data FROM artifact_chunks WHERE artifact_id = ${id} ORDER BY idx`,
      );
      const out = new Uint8Array(row.size);
      let at = 0;
      for (const p of parts) {
        out.set(p.data, at);
        at += p.data.length;
      }
      if (at !== row.size || parts.length !== row.chunks)
        return yield* Effect.fail(
          new StoreError({
            message: `artifact ${id} in ${filename} is damaged: ${parts.length} of ${row.chunks} chunks, ${at} of ${row.size} bytes`,
          }),
        );
      return out;
    }),

    collectArtifacts: Effect.fn("SqliteStore.collectArtifacts")(function* (options: {
      readonly storedBefore: number;
    }) {
      const gone = yield* write(
        Effect.gen(function* () {
          // references from nodes that no longer exist (their session was deleted) no longer count;
          // a turn not yet committed refers to its artifacts from its journal (its file, or the
          // `journal` table a version before the files wrote)
          yield* sql`DELETE FROM artifact_refs WHERE NOT EXISTS
            (SELECT 1 FROM nodes n WHERE n.id = artifact_refs.node_id)`;
          const candidates = yield* sql<ArtifactRow>`SELECT * FROM artifacts a
            WHERE a.created_at <= ${options.storedBefore}
              AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.artifact_id = a.id)
              AND NOT EXISTS (SELECT 1 FROM journal j WHERE instr(j.outcome_json, 'artifact:' || a.id) > 0)`;
          const texts = candidates.length > 0 ? journals.texts() : [];
          const rows = candidates.filter((r) => !texts.some((t) => t.includes(`artifact:${r.id}`)));
          for (const r of rows) {
            yield* sql`DELETE FROM artifact_chunks WHERE artifact_id = ${r.id}`;
            yield* sql`DELETE FROM artifacts WHERE id = ${r.id}`;
          }
          return rows;
        }),
      );
      // files after the rows are gone (a crash in between leaves a stray file, never a dangling row)
      for (const r of gone) if (r.on_disk === 1) rmSync(artifactFile(r.id), { force: true });
      return { removed: gone.map((r) => r.id), bytes: gone.reduce((n, r) => n + r.size, 0) };
    }),

    releaseLease: (sessionId: string, holder: string) => hot((w) => w.releaseLease(sessionId, holder)),

    getLease: (sessionId: string) => hot((w) => w.getLease(sessionId)),
  };
  return withSql(store, needSql);
}

/**
 * The methods that run without the @effect/sql client: opening a session (its record and
 * paths), the reads a resume makes (listing, usage, nodes, children: plain statements) and the
 * write path (sqlite-write.ts). Every other method loads the
 * client first (`needSql`), so one written with it can never run before it is there.
 */
const WITHOUT_SQL: ReadonlySet<keyof SessionStoreShape> = new Set<keyof SessionStoreShape>([
  "createSession",
  "getSession",
  "activePath",
  "projectionPath",
  "listSessions",
  "sessionNodes",
  "getNode",
  "usage",
  "children",
  "commit",
  "journalGet",
  "journalPut",
  "journalPutMany",
  "journalForTurn",
  "abandonTurn",
  "beginTurn",
  "pendingTurn",
  "acquireLease",
  "renewLease",
  "releaseLease",
  "getLease",
]);

function withSql(store: SessionStoreShape, needSql: Effect.Effect<void, StoreError>): SessionStoreShape {
  const out: Record<string, unknown> = { ...store };
  for (const [name, method] of Object.entries(store)) {
    if (WITHOUT_SQL.has(name as keyof SessionStoreShape) || typeof method !== "function") continue;
    const f = method as (...args: unknown[]) => Effect.Effect<unknown, unknown>;
    out[name] = (...args: unknown[]) => Effect.flatMap(needSql, () => f(...args));
  }
  return out as unknown as SessionStoreShape;
}

/** `SqliteStore.layer({ filename })`: the store over one database file, closed with the layer's scope. */
export const SqliteStore = {
  layer: (options: SqliteStoreOptions): Layer.Layer<SessionStore, OpenError> =>
    Layer.scoped(SessionStore, makeSqliteStore(options)),
} as const;
