// SqliteStore: the SessionStore contract in ONE SQLite database file for all
// sessions (WAL, synchronous=NORMAL, busy_timeout, foreign keys), with forward
// migrations kept in `PRAGMA user_version`. Every write runs in a
// `BEGIN IMMEDIATE` transaction, so concurrent writers (other connections,
// other processes) queue on the write lock instead of failing mid-transaction.
import * as Reactivity from "@effect/experimental/Reactivity";
import * as SqlClient from "@effect/sql/SqlClient";
import type { Connection } from "@effect/sql/SqlConnection";
import { SqlError } from "@effect/sql/SqlError";
import type { Statement } from "better-sqlite3";
import { Effect, Layer, Scope } from "effect";
import {
  type CommitResult,
  type GraphNode,
  type JournalEntry,
  type LeaseAttempt,
  type LeaseRequest,
  type ListOptions,
  type NodeKind,
  type PendingTurn,
  type SchemaTooNew,
  type SessionLease,
  type SessionMode,
  type SessionNotFound,
  type SessionRecord,
  SessionStore,
  type SessionStoreShape,
  type StoreCorrupt,
  StoreError,
  type TurnCommit,
  type UsageRow,
} from "../store.ts";
import {
  duplicateNode,
  foreignNode,
  forkWithoutOrigin,
  nodeNotFound,
  revisionConflict,
  sessionExists,
  sessionNotFound,
  turnHashConflict,
} from "./errors.ts";
import { describeLockHolders } from "./lock-holders.ts";
import * as SqliteClient from "./sqlite-client.ts";
import {
  corrupt,
  isCorruption,
  preflight,
  SQLITE_SCHEMA_VERSION,
  sqliteMigrations,
  tooNew,
} from "./sqlite-schema.ts";

export { SQLITE_SCHEMA_VERSION, sqliteMigrations } from "./sqlite-schema.ts";

export interface SqliteStoreOptions {
  /** The database file (created when missing). */
  readonly filename: string;
  /** How long a writer waits for another connection's write lock (default 5000 ms). */
  readonly busyTimeoutMs?: number;
}

type OpenError = SchemaTooNew | StoreCorrupt | StoreError;

// ---- rows ----

interface SessionRow {
  readonly id: string;
  readonly title: string | null;
  readonly cwd: string | null;
  readonly model: string;
  readonly mode: string;
  readonly system_prompt: string | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly leaf_id: string | null;
  readonly head_revision: number;
  readonly turn_count: number;
  readonly frame_id: string;
  readonly origin_session: string | null;
  readonly origin_node: string | null;
  readonly parent_session: string | null;
  readonly parent_call: string | null;
  readonly depth: number | null;
  readonly state_json: string;
  readonly deleted: number;
}

interface NodeRow {
  readonly seq: number;
  readonly id: string;
  readonly session_id: string;
  readonly parent_id: string | null;
  readonly frame_id: string;
  readonly kind: string;
  readonly turn_id: string | null;
  readonly payload_json: string | null;
  readonly created_at: number;
}

interface UsageDbRow {
  readonly turn_id: string;
  readonly source: string;
  readonly model: string;
  readonly input: number | null;
  readonly output: number | null;
  readonly reasoning: number | null;
  readonly cache_read: number | null;
  readonly cache_write: number | null;
  readonly cost_usd: number | null;
}

interface JournalRow {
  readonly key: string;
  readonly session_id: string;
  readonly turn_id: string;
  readonly hash: string;
  readonly status: string;
  readonly outcome_json: string | null;
  readonly updated_at: number;
}

interface PendingRow {
  readonly session_id: string;
  readonly turn_id: string;
  readonly input_json: string | null;
  readonly expected_revision: number;
  readonly started_at: number;
  readonly resume_attempts: number;
}

interface LeaseRow {
  readonly session_id: string;
  readonly holder: string;
  readonly pid: number;
  readonly host: string;
  readonly acquired_at: number;
  readonly heartbeat_at: number;
  readonly expires_at: number;
}

const toJson = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const fromJson = (s: string | null): unknown => (s === null ? undefined : JSON.parse(s));

function toRecord(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    ...(r.title !== null ? { title: r.title } : {}),
    ...(r.cwd !== null ? { cwd: r.cwd } : {}),
    model: r.model,
    mode: r.mode as SessionMode,
    ...(r.system_prompt !== null ? { systemPrompt: r.system_prompt } : {}),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    leafId: r.leaf_id,
    headRevision: r.head_revision,
    turnCount: r.turn_count,
    frameId: r.frame_id,
    ...(r.origin_session !== null ? { origin: { sessionId: r.origin_session, nodeId: r.origin_node } } : {}),
    ...(r.parent_session !== null
      ? { parentLink: { sessionId: r.parent_session, callId: r.parent_call ?? "", depth: r.depth ?? 0 } }
      : {}),
    state: JSON.parse(r.state_json) as SessionRecord["state"],
  };
}

const toNode = (r: NodeRow): GraphNode => ({
  id: r.id,
  sessionId: r.session_id,
  parentId: r.parent_id,
  frameId: r.frame_id,
  kind: r.kind as NodeKind,
  turnId: r.turn_id,
  payload: fromJson(r.payload_json),
  createdAt: r.created_at,
  seq: r.seq,
});

function toUsage(r: UsageDbRow): UsageRow {
  const usage: {
    input?: number;
    output?: number;
    reasoning?: number;
    cacheRead?: number;
    cacheWrite?: number;
  } = {};
  if (r.input !== null) usage.input = r.input;
  if (r.output !== null) usage.output = r.output;
  if (r.reasoning !== null) usage.reasoning = r.reasoning;
  if (r.cache_read !== null) usage.cacheRead = r.cache_read;
  if (r.cache_write !== null) usage.cacheWrite = r.cache_write;
  return {
    turnId: r.turn_id,
    source: r.source,
    model: r.model,
    usage,
    ...(r.cost_usd !== null ? { costUsd: r.cost_usd } : {}),
  };
}

const toJournal = (r: JournalRow): JournalEntry => ({
  key: r.key,
  sessionId: r.session_id,
  turnId: r.turn_id,
  hash: r.hash,
  status: r.status as JournalEntry["status"],
  ...(r.outcome_json !== null ? { outcome: JSON.parse(r.outcome_json) as unknown } : {}),
  updatedAt: r.updated_at,
});

const toPending = (r: PendingRow): PendingTurn => ({
  sessionId: r.session_id,
  turnId: r.turn_id,
  input: fromJson(r.input_json),
  expectedRevision: r.expected_revision,
  startedAt: r.started_at,
  resumeAttempts: r.resume_attempts,
});

const toLease = (r: LeaseRow): SessionLease => ({
  sessionId: r.session_id,
  holder: r.holder,
  pid: r.pid,
  host: r.host,
  acquiredAt: r.acquired_at,
  heartbeatAt: r.heartbeat_at,
  expiresAt: r.expires_at,
});

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

function chunks<A>(xs: readonly A[], size: number): A[][] {
  const out: A[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

// ---- errors ----

const fromSqlError =
  (filename: string) =>
  (e: SqlError): StoreError => {
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
  Effect.fail(new StoreError({ message: `${filename}: ${String(defect)}`, cause: defect }));

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
    const toOpenError = (e: SqlError): StoreCorrupt | StoreError =>
      isCorruption(e.cause) ? corrupt(filename, describe(e)) : fromSqlError(filename)(e);

    // 1. Read-only checks before SQLite touches the file.
    const pre = preflight(filename);
    if ("_tag" in pre) return yield* Effect.fail(pre);
    if (pre.kind === "walPending" || (pre.kind === "checked" && pre.version === 0)) {
      // The header may be stale (a WAL is pending), or the file may be some
      // other program's database: ask SQLite, read-only, before writing anything.
      const [version, objects] = yield* Effect.scoped(
        Effect.gen(function* () {
          const ro = yield* openClient({ filename, readonly: true, disableWAL: true });
          return yield* Effect.all([userVersion(ro), schemaObjects(ro)]);
        }),
      ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(toOpenError(e))));
      if (version > SQLITE_SCHEMA_VERSION) return yield* Effect.fail(tooNew(filename, version));
      if (version === 0 && objects > 0) return yield* Effect.fail(notOurs(filename));
    }

    // 2. Open read-write, set the pragmas, migrate.
    const sql = yield* openClient({ filename, disableWAL: true });
    const immediate = immediateTransaction(sql);
    yield* Effect.gen(function* () {
      yield* sql.unsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5_000))}`);
      yield* sql.unsafe("PRAGMA journal_mode = WAL");
      yield* sql.unsafe("PRAGMA synchronous = NORMAL");
      yield* sql.unsafe("PRAGMA foreign_keys = ON");
      const seen = yield* userVersion(sql);
      if (seen > SQLITE_SCHEMA_VERSION) return yield* Effect.fail(tooNew(filename, seen));
      if (seen === SQLITE_SCHEMA_VERSION) return;
      // Migrate under the write lock, re-reading the version another process may have moved.
      yield* immediate(
        Effect.gen(function* () {
          const version = yield* userVersion(sql);
          if (version > SQLITE_SCHEMA_VERSION) return yield* Effect.fail(tooNew(filename, version));
          if (version === 0 && (yield* schemaObjects(sql)) > 0) return yield* Effect.fail(notOurs(filename));
          for (let v = version; v < SQLITE_SCHEMA_VERSION; v++) {
            for (const statement of sqliteMigrations[v]!) yield* sql.unsafe(statement);
          }
          if (version < SQLITE_SCHEMA_VERSION)
            yield* sql.unsafe(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
        }),
      );
    }).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(toOpenError(e))));

    return makeShape(sql, immediate, filename);
  }).pipe(Effect.withSpan("SqliteStore.open"));

function describe(e: SqlError): string {
  return e.cause instanceof Error ? e.cause.message : e.message;
}

/** A SqliteClient whose construction failures (bad path, permissions …) are typed, not defects. */
function openClient(config: SqliteClient.SqliteClientConfig) {
  return SqliteClient.make(config).pipe(
    Effect.provide(Reactivity.layer),
    Effect.catchAllDefect((defect) =>
      Effect.fail(
        isCorruption(defect)
          ? corrupt(config.filename, String(defect))
          : new StoreError({ message: `cannot open ${config.filename}: ${String(defect)}`, cause: defect }),
      ),
    ),
  );
}

const notOurs = (filename: string) => corrupt(filename, "an SQLite database that lash did not create");

function schemaObjects(sql: SqlClient.SqlClient): Effect.Effect<number, SqlError> {
  return Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master`, (rows) => rows[0]?.n ?? 0);
}

function userVersion(sql: SqlClient.SqlClient): Effect.Effect<number, SqlError> {
  return Effect.map(sql<{ user_version: number }>`PRAGMA user_version`, (rows) => rows[0]?.user_version ?? 0);
}

/**
 * `sql.withTransaction` issues a plain (deferred) `BEGIN`: a transaction that
 * reads, then writes, fails with SQLITE_BUSY when another connection wrote in
 * between. This is the same transaction combinator, from @effect/sql's public
 * `makeWithTransaction`, issuing `BEGIN IMMEDIATE` instead, so the write lock is
 * taken (waiting up to busy_timeout) before the first read. Statements inside
 * run on the reserved connection through the client's `TransactionConnection`.
 */
function immediateTransaction(sql: SqlClient.SqlClient) {
  const run = (conn: Connection, statement: string) => conn.executeUnprepared(statement, [], undefined);
  return SqlClient.makeWithTransaction({
    transactionTag: SqlClient.TransactionConnection,
    spanAttributes: [["db.system.name", "sqlite"]],
    acquireConnection: Effect.flatMap(Scope.make(), (scope) =>
      Effect.map(Scope.extend(sql.reserve, scope), (conn) => [scope, conn] as const),
    ),
    begin: (conn) => run(conn, "BEGIN IMMEDIATE"),
    savepoint: (conn, id) => run(conn, `SAVEPOINT effect_sql_${id}`),
    commit: (conn) => run(conn, "COMMIT"),
    // a BEGIN that failed (SQLITE_BUSY) left no transaction: its ROLLBACK error must not hide the BEGIN's
    rollback: (conn) => Effect.ignore(run(conn, "ROLLBACK")),
    rollbackSavepoint: (conn, id) => run(conn, `ROLLBACK TO SAVEPOINT effect_sql_${id}`),
  });
}

// ---- the store ----

function makeShape(
  sql: SqlClient.SqlClient,
  immediate: ReturnType<typeof immediateTransaction>,
  filename: string,
): SessionStoreShape {
  const toStoreError = fromSqlError(filename);

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

  const db = SqliteClient.databaseOf(sql);
  let prepared: { readonly journalGet: Statement; readonly journalPut: Statement } | undefined;
  /** A hot statement, prepared on first use (after the migrations made its table). */
  const hot = <A>(f: (st: NonNullable<typeof prepared>) => A): Effect.Effect<A, SqlError> =>
    Effect.try({
      try: () => {
        if (!db) throw new Error("the SQLite handle is not available");
        prepared ??= {
          journalGet: db.prepare("SELECT * FROM journal WHERE key = ?"),
          journalPut: db.prepare(
            `INSERT INTO journal (key, session_id, turn_id, hash, status, outcome_json, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, turn_id = excluded.turn_id,
               hash = excluded.hash, status = excluded.status, outcome_json = excluded.outcome_json,
               updated_at = excluded.updated_at`,
          ),
        };
        return f(prepared);
      },
      catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" }),
    });

  const liveRow = (id: string) =>
    Effect.map(sql<SessionRow>`SELECT * FROM sessions WHERE id = ${id} AND deleted = 0`, (rows) => rows[0]);

  const requireLive = (id: string): Effect.Effect<SessionRow, SessionNotFound | SqlError> =>
    Effect.flatMap(liveRow(id), (row) => (row ? Effect.succeed(row) : Effect.fail(sessionNotFound(id))));

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

  const store: SessionStoreShape = {
    createSession: Effect.fn("SqliteStore.createSession")(function* (record: SessionRecord) {
      return yield* write(
        Effect.gen(function* () {
          const exists = yield* sql`SELECT 1 FROM sessions WHERE id = ${record.id}`;
          if (exists.length > 0) return yield* Effect.fail(sessionExists(record.id));
          yield* insertSession(record);
          return record;
        }),
      );
    }),

    getSession: Effect.fn("SqliteStore.getSession")(function* (id: string) {
      return toRecord(yield* guard(requireLive(id)));
    }),

    listSessions: Effect.fn("SqliteStore.listSessions")(function* (options: ListOptions = {}) {
      const where = [sql`deleted = 0`];
      if (!options.includeChildren) where.push(sql`parent_session IS NULL`);
      if (options.cwd !== undefined) where.push(sql`cwd = ${options.cwd}`);
      const limit =
        options.limit !== undefined ? sql`LIMIT ${Math.max(0, Math.floor(options.limit))}` : sql``;
      const rows = yield* guard(
        sql<SessionRow>`SELECT * FROM sessions WHERE ${sql.and(where)} ORDER BY updated_at DESC, rowid DESC ${limit}`,
      );
      return rows.map(toRecord);
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
    }),

    activePath: Effect.fn("SqliteStore.activePath")(function* (sessionId: string, leafId?: string | null) {
      return yield* guard(
        Effect.gen(function* () {
          const row = yield* requireLive(sessionId);
          const leaf = leafId === undefined ? row.leaf_id : leafId;
          if (leaf === null) return [];
          const rows = yield* activePathFrom(leaf);
          if (rows.length === 0) return yield* Effect.fail(nodeNotFound(leaf));
          return rootFirst(rows).map(toNode);
        }),
      );
    }),

    sessionNodes: Effect.fn("SqliteStore.sessionNodes")(function* (sessionId: string) {
      return yield* guard(
        Effect.gen(function* () {
          yield* requireLive(sessionId);
          const rows = yield* sql<NodeRow>`SELECT * FROM nodes WHERE session_id = ${sessionId} ORDER BY seq`;
          return rows.map(toNode);
        }),
      );
    }),

    getNode: Effect.fn("SqliteStore.getNode")(function* (nodeId: string) {
      const rows = yield* guard(sql<NodeRow>`SELECT * FROM nodes WHERE id = ${nodeId}`);
      return rows[0] ? toNode(rows[0]) : undefined;
    }),

    commit: Effect.fn("SqliteStore.commit")(function* (c: TurnCommit) {
      return yield* write(
        Effect.gen(function* () {
          const row = yield* requireLive(c.sessionId);
          // 1. The stamp: a retry of a committed turn is a no-op.
          const stamp = (yield* sql<{ hash: string; result_json: string }>`
            SELECT hash, result_json FROM turn_commits WHERE session_id = ${c.sessionId} AND turn_id = ${c.turnId}`)[0];
          if (stamp) {
            if (stamp.hash !== c.hash) return yield* Effect.fail(turnHashConflict(c.sessionId, c.turnId));
            const stored = JSON.parse(stamp.result_json) as { headRevision: number; leafId: string | null };
            return {
              headRevision: stored.headRevision,
              leafId: stored.leafId,
              duplicate: true,
            } as CommitResult;
          }
          // 2. Compare-and-swap on the head revision.
          if (row.head_revision !== c.expectedRevision) {
            return yield* Effect.fail(revisionConflict(c.sessionId, c.expectedRevision, row.head_revision));
          }
          // 3. Validate the nodes: own session, fresh ids, parents and leaf that exist.
          const fresh = new Set<string>();
          const outside: string[] = [];
          for (const n of c.nodes) {
            if (n.sessionId !== c.sessionId)
              return yield* Effect.fail(foreignNode(n.id, n.sessionId, c.sessionId));
            if (fresh.has(n.id)) return yield* Effect.fail(duplicateNode(n.id));
            if (n.parentId !== null && !fresh.has(n.parentId)) outside.push(n.parentId);
            fresh.add(n.id);
          }
          if (c.leafId !== null && !fresh.has(c.leafId)) outside.push(c.leafId);
          const found = yield* existingNodes([...fresh, ...outside]);
          for (const id of fresh) if (found.has(id)) return yield* Effect.fail(duplicateNode(id));
          for (const id of outside) if (!found.has(id)) return yield* Effect.fail(nodeNotFound(id));
          // 4. Append, move the leaf, bump.
          for (const part of chunks(c.nodes, NODE_CHUNK)) {
            yield* sql`INSERT INTO nodes ${sql.insert(
              part.map((n) => ({
                id: n.id,
                session_id: n.sessionId,
                parent_id: n.parentId,
                frame_id: n.frameId,
                kind: n.kind,
                turn_id: n.turnId,
                payload_json: toJson(n.payload),
                created_at: n.createdAt,
              })),
            )}`;
          }
          const headRevision = row.head_revision + 1;
          yield* sql`UPDATE sessions SET
              leaf_id = ${c.leafId},
              head_revision = ${headRevision},
              turn_count = turn_count + 1,
              updated_at = ${c.updatedAt},
              title = COALESCE(${c.title ?? null}, title),
              frame_id = COALESCE(${c.frameId ?? null}, frame_id),
              model = COALESCE(${c.model ?? null}, model),
              state_json = COALESCE(${c.state !== undefined ? JSON.stringify(c.state) : null}, state_json)
            WHERE id = ${c.sessionId}`;
          // 5. Usage rows; absent buckets stay NULL.
          if (c.usage.length > 0) {
            yield* sql`INSERT INTO usage ${sql.insert(
              c.usage.map((u) => ({
                session_id: c.sessionId,
                turn_id: u.turnId,
                source: u.source,
                model: u.model,
                input: u.usage.input ?? null,
                output: u.usage.output ?? null,
                reasoning: u.usage.reasoning ?? null,
                cache_read: u.usage.cacheRead ?? null,
                cache_write: u.usage.cacheWrite ?? null,
                cost_usd: u.costUsd ?? null,
              })),
            )}`;
          }
          // 6. The stamp; the turn's journal and pending row are done with.
          const result = { headRevision, leafId: c.leafId };
          yield* sql`INSERT INTO turn_commits ${sql.insert({
            session_id: c.sessionId,
            turn_id: c.turnId,
            hash: c.hash,
            result_json: JSON.stringify(result),
          })}`;
          yield* sql`DELETE FROM journal WHERE session_id = ${c.sessionId} AND turn_id = ${c.turnId}`;
          yield* sql`DELETE FROM pending_turns WHERE session_id = ${c.sessionId} AND turn_id = ${c.turnId}`;
          return { ...result, duplicate: false } as CommitResult;
        }),
      );
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
      return yield* guard(
        Effect.gen(function* () {
          yield* requireLive(sessionId);
          const rows =
            yield* sql<UsageDbRow>`SELECT * FROM usage WHERE session_id = ${sessionId} ORDER BY seq`;
          return rows.map(toUsage);
        }),
      );
    }),

    children: Effect.fn("SqliteStore.children")(function* (sessionId: string) {
      const rows = yield* guard(
        sql<SessionRow>`SELECT * FROM sessions WHERE parent_session = ${sessionId} AND deleted = 0
          ORDER BY created_at, rowid`,
      );
      return rows.map(toRecord);
    }),

    // The journal is written at every step of a turn: its two statements are prepared once
    // and run directly (one autocommit statement each, on disk before the next step starts).
    journalGet: (key: string) =>
      guard(
        hot((st) => {
          const row = st.journalGet.get(key) as JournalRow | undefined;
          return row ? toJournal(row) : undefined;
        }),
      ),

    journalPut: (e: JournalEntry) =>
      guard(
        hot((st) => {
          const outcome = e.outcome === undefined ? null : JSON.stringify(e.outcome);
          st.journalPut.run(e.key, e.sessionId, e.turnId, e.hash, e.status, outcome, e.updatedAt);
        }),
      ),

    journalForTurn: Effect.fn("SqliteStore.journalForTurn")(function* (sessionId: string, turnId: string) {
      const rows = yield* guard(
        sql<JournalRow>`SELECT * FROM journal WHERE session_id = ${sessionId} AND turn_id = ${turnId} ORDER BY rowid`,
      );
      return rows.map(toJournal);
    }),

    beginTurn: Effect.fn("SqliteStore.beginTurn")(function* (t: PendingTurn) {
      yield* write(
        Effect.gen(function* () {
          if (!(yield* liveRow(t.sessionId))) {
            return yield* Effect.fail(
              new StoreError({ message: `cannot begin a turn: session ${t.sessionId} not found` }),
            );
          }
          yield* sql`INSERT OR REPLACE INTO pending_turns ${sql.insert({
            session_id: t.sessionId,
            turn_id: t.turnId,
            input_json: toJson(t.input),
            expected_revision: t.expectedRevision,
            started_at: t.startedAt,
            resume_attempts: t.resumeAttempts ?? 0,
          })}`;
        }),
      );
    }),

    pendingTurn: Effect.fn("SqliteStore.pendingTurn")(function* (sessionId: string) {
      const rows = yield* guard(sql<PendingRow>`SELECT * FROM pending_turns WHERE session_id = ${sessionId}`);
      return rows[0] ? toPending(rows[0]) : undefined;
    }),

    abandonTurn: Effect.fn("SqliteStore.abandonTurn")(function* (sessionId: string, turnId: string) {
      yield* write(
        Effect.gen(function* () {
          yield* sql`DELETE FROM journal WHERE session_id = ${sessionId} AND turn_id = ${turnId}`;
          yield* sql`DELETE FROM pending_turns WHERE session_id = ${sessionId} AND turn_id = ${turnId}`;
        }),
      );
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

    acquireLease: Effect.fn("SqliteStore.acquireLease")(function* (req: LeaseRequest) {
      return yield* write(
        Effect.gen(function* () {
          yield* requireLive(req.sessionId);
          const row =
            (yield* sql<LeaseRow>`SELECT * FROM session_leases WHERE session_id = ${req.sessionId}`)[0];
          const ours = row?.holder === req.holder;
          if (row && !ours && row.holder !== req.replacing && req.now < row.expires_at)
            return { acquired: false, lease: toLease(row) } as LeaseAttempt;
          const lease: SessionLease = {
            sessionId: req.sessionId,
            holder: req.holder,
            pid: req.pid,
            host: req.host,
            acquiredAt: ours && row ? row.acquired_at : req.now,
            heartbeatAt: req.now,
            expiresAt: req.now + req.ttlMs,
          };
          yield* sql`INSERT OR REPLACE INTO session_leases ${sql.insert({
            session_id: lease.sessionId,
            holder: lease.holder,
            pid: lease.pid,
            host: lease.host,
            acquired_at: lease.acquiredAt,
            heartbeat_at: lease.heartbeatAt,
            expires_at: lease.expiresAt,
          })}`;
          return { acquired: true, lease } as LeaseAttempt;
        }),
      );
    }),

    renewLease: Effect.fn("SqliteStore.renewLease")(function* (
      sessionId: string,
      holder: string,
      now: number,
      ttlMs: number,
    ) {
      const rows = yield* write(
        sql<LeaseRow>`UPDATE session_leases SET heartbeat_at = ${now}, expires_at = ${now + ttlMs}
          WHERE session_id = ${sessionId} AND holder = ${holder} RETURNING *`,
      );
      return rows[0] ? toLease(rows[0]) : undefined;
    }),

    releaseLease: Effect.fn("SqliteStore.releaseLease")(function* (sessionId: string, holder: string) {
      yield* write(sql`DELETE FROM session_leases WHERE session_id = ${sessionId} AND holder = ${holder}`);
    }),

    getLease: Effect.fn("SqliteStore.getLease")(function* (sessionId: string) {
      const rows = yield* guard(sql<LeaseRow>`SELECT * FROM session_leases WHERE session_id = ${sessionId}`);
      return rows[0] ? toLease(rows[0]) : undefined;
    }),
  };
  return store;
}

/** `SqliteStore.layer({ filename })`: the store over one database file, closed with the layer's scope. */
export const SqliteStore = {
  layer: (options: SqliteStoreOptions): Layer.Layer<SessionStore, OpenError> =>
    Layer.scoped(SessionStore, makeSqliteStore(options)),
} as const;
