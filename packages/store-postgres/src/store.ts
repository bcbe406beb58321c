// PostgresStore: the SessionStore contract on one Postgres database that every
// worker process reaches. Every write is one transaction; the per-session
// writes (commit, setLeaf, lease) lock the session's row (`FOR UPDATE`) or an
// advisory lock on its id first, so concurrent writers from any process queue
// instead of interleaving. The head-revision compare-and-swap and the turn
// stamp then decide, exactly as in SqliteStore: one commit per revision wins,
// the others get `StoreConflict{revision}`.
import * as Reactivity from "@effect/experimental/Reactivity";
import type { SqlError } from "@effect/sql/SqlError";
import * as PgClient from "@effect/sql-pg/PgClient";
import {
  ARTIFACT_CHUNK_BYTES,
  type ArtifactColumns,
  type ArtifactInfo,
  type ArtifactPut,
  artifactRefsInJson,
  type CommitResult,
  CommitStampSchema,
  checkCommitIds,
  chunks,
  commitIds,
  corruptRow,
  decideLease,
  decodePayload,
  decoderFor,
  decodeToolOutput,
  forkWithoutOrigin,
  fromLastCompaction,
  type GraphNode,
  type JournalEntry,
  type JournalRow,
  type LeaseRequest,
  type LeaseRow,
  type ListOptions,
  NODE_KINDS,
  type NodeKind,
  nodeNotFound,
  type PendingRow,
  type PendingTurn,
  revisionConflict,
  SchemaTooNew,
  type SessionColumns,
  type SessionNotFound,
  type SessionRecord,
  SessionStore,
  type SessionStoreShape,
  StoreError,
  sessionExists,
  sessionNotFound,
  type ToolOutputRecord,
  type ToolOutputRow,
  type TurnCommit,
  toArtifact,
  toJournal,
  toJson,
  toLease,
  toPending,
  toRecord,
  toUsage,
  turnHashConflict,
  type UsageDbRow,
} from "@lash/core/internal";
import { sha256BytesHex } from "@lash/sansio";
import { Duration, Effect, Layer, Redacted, type Scope } from "effect";
import { makeTurnEvents, type TurnEvents } from "./events.ts";
import { MIGRATION_LOCK, POSTGRES_SCHEMA_VERSION, postgresMigrations } from "./schema.ts";

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  readonly url: string;
  /** Connections in this process's pool (default 10). */
  readonly maxConnections?: number;
  /** How long to wait for the server at open (default 10 s). */
  readonly connectTimeoutMs?: number;
}

/** The store plus what only Postgres offers: the cross-worker turn-event log. */
export interface PostgresStoreShape extends SessionStoreShape {
  readonly events: TurnEvents;
}

type OpenError = SchemaTooNew | StoreError;

/** The URL with its password replaced: what error messages may show. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://…";
  }
}

// Text-format parsers for the column types this schema uses (no dependency on `pg` itself):
// BIGINT and INTEGER as numbers (epoch ms and counters fit in a double), BOOLEAN, BYTEA.
const TYPE_PARSERS: Record<number, (v: string) => unknown> = {
  16: (v) => v === "t",
  17: (v) =>
    v.startsWith("\\x") ? new Uint8Array(Buffer.from(v.slice(2), "hex")) : new TextEncoder().encode(v),
  20: Number,
  21: Number,
  23: Number,
  700: Number,
  701: Number,
};
const types = {
  getTypeParser: (oid: number) => TYPE_PARSERS[oid] ?? ((v: string) => v),
} as unknown as PgClient.PgClientConfig["types"];

// ---- rows ----

interface SessionRow extends SessionColumns {
  readonly deleted: boolean;
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

const decodeStamp = decoderFor(CommitStampSchema);

function toNode(r: NodeRow): GraphNode {
  if (!NODE_KINDS.has(r.kind))
    throw corruptRow(`session ${r.session_id}, node ${r.id}`, `unknown node kind ${JSON.stringify(r.kind)}`);
  return {
    id: r.id,
    sessionId: r.session_id,
    parentId: r.parent_id,
    frameId: r.frame_id,
    kind: r.kind as NodeKind,
    turnId: r.turn_id,
    payload: decodePayload(r.kind, r.payload_json, r.session_id, r.id),
    createdAt: r.created_at,
    seq: r.seq,
  };
}

const NODE_CHUNK = 500;

// ---- open ----

/**
 * Connect, migrate forward (once, under an advisory lock, however many workers
 * start together) and return the store. A database written by a newer lash is
 * refused with `SchemaTooNew`, nothing written to it.
 */
export const makePostgresStore = (
  options: PostgresStoreOptions,
): Effect.Effect<PostgresStoreShape, OpenError, Scope.Scope> =>
  Effect.gen(function* () {
    const where = redactUrl(options.url);
    const toStoreError = (e: SqlError): StoreError => {
      const cause = e.cause as { message?: unknown } | undefined;
      const detail = typeof cause?.message === "string" ? cause.message : e.message;
      return new StoreError({ message: `${where}: ${detail}`, cause: e });
    };
    const sql = yield* PgClient.make({
      url: Redacted.make(options.url),
      maxConnections: options.maxConnections ?? 10,
      connectTimeout: Duration.millis(options.connectTimeoutMs ?? 10_000),
      applicationName: "lash",
      types,
    }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.mapError(
        (e) =>
          new StoreError({
            message: `cannot connect to the Postgres store ${where}: ${(e.cause as Error | undefined)?.message ?? e.message}. Check that the server runs and the URL (host, port, user, password, database) is right`,
            cause: e,
          }),
      ),
    );
    // quieter server notices (CREATE … IF NOT EXISTS etc.)
    const versionOf = Effect.map(
      sql<{ n: number }>`SELECT value AS n FROM lash_meta WHERE key = 'schema_version'`,
      (rows) => rows[0]?.n ?? 0,
    );
    const tooNew = (found: number) =>
      new SchemaTooNew({
        path: where,
        found,
        supported: POSTGRES_SCHEMA_VERSION,
        message: `${where} holds lash store schema version ${found}, but this lash supports up to ${POSTGRES_SCHEMA_VERSION}; nothing was written. Upgrade lash (every worker on this database must run a version that knows schema ${found})`,
      });
    yield* sql
      .withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
          yield* sql.unsafe(
            "CREATE TABLE IF NOT EXISTS lash_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL)",
          );
          const version = yield* versionOf;
          if (version > POSTGRES_SCHEMA_VERSION) return yield* Effect.fail(tooNew(version));
          for (let v = version; v < POSTGRES_SCHEMA_VERSION; v++) {
            for (const statement of postgresMigrations[v]!) yield* sql.unsafe(statement);
          }
          if (version < POSTGRES_SCHEMA_VERSION)
            yield* sql`INSERT INTO lash_meta (key, value) VALUES ('schema_version', ${POSTGRES_SCHEMA_VERSION})
              ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
        }),
      )
      .pipe(Effect.catchTag("SqlError", (e) => Effect.fail(toStoreError(e))));
    const store = makeShape(sql, where, toStoreError);
    return { ...store, events: makeTurnEvents(sql, toStoreError) };
  }).pipe(Effect.withSpan("PostgresStore.open"));

// ---- the store ----

function makeShape(
  sql: PgClient.PgClient,
  where: string,
  toStoreError: (e: SqlError) => StoreError,
): SessionStoreShape {
  const guard = <A, E>(
    effect: Effect.Effect<A, E | SqlError>,
  ): Effect.Effect<A, Exclude<E, SqlError> | StoreError> =>
    (effect as Effect.Effect<A, Exclude<E, SqlError> | SqlError>).pipe(
      Effect.catchIf(
        (e): e is SqlError => (e as { _tag?: unknown })._tag === "SqlError",
        (e) => Effect.fail(toStoreError(e)),
      ),
      Effect.catchAllDefect((defect) =>
        Effect.fail(
          new StoreError({
            message: `${where}: ${defect instanceof StoreError ? defect.message : String(defect)}`,
            cause: defect,
          }),
        ),
      ),
    );

  const write = <A, E>(effect: Effect.Effect<A, E | SqlError>) => guard(sql.withTransaction(effect));

  const liveRow = (id: string, lock = false) =>
    Effect.map(
      lock
        ? sql<SessionRow>`SELECT * FROM sessions WHERE id = ${id} AND NOT deleted FOR UPDATE`
        : sql<SessionRow>`SELECT * FROM sessions WHERE id = ${id} AND NOT deleted`,
      (rows) => rows[0],
    );

  const requireLive = (id: string, lock = false): Effect.Effect<SessionRow, SessionNotFound | SqlError> =>
    Effect.flatMap(liveRow(id, lock), (row) =>
      row ? Effect.succeed(row) : Effect.fail(sessionNotFound(id)),
    );

  /** Serialise writers of one session's rows that may not exist yet (leases, pending turns). */
  const lockSession = (id: string) => sql`SELECT pg_advisory_xact_lock(hashtext(${id}))`;

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
      deleted: false,
    })}`;

  const existingNodes = (nodeIds: readonly string[]) =>
    Effect.gen(function* () {
      const found = new Set<string>();
      for (const part of chunks([...new Set(nodeIds)], NODE_CHUNK)) {
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

  const purge = (id: string): Effect.Effect<void, SqlError> =>
    Effect.gen(function* () {
      const row = (yield* sql<SessionRow>`SELECT * FROM sessions WHERE id = ${id}`)[0];
      if (!row) return;
      yield* sql`DELETE FROM artifact_refs WHERE node_id IN (SELECT id FROM nodes WHERE session_id = ${id})`;
      yield* sql`DELETE FROM nodes WHERE session_id = ${id}`;
      yield* sql`DELETE FROM tool_outputs WHERE session_id = ${id}`;
      yield* sql`DELETE FROM turn_events WHERE session_id = ${id}`;
      yield* sql`DELETE FROM sessions WHERE id = ${id}`;
      for (const up of [row.origin_session, row.parent_session]) {
        if (up === null) continue;
        const u = (yield* sql<{ deleted: boolean }>`SELECT deleted FROM sessions WHERE id = ${up}`)[0];
        if (u?.deleted === true && !(yield* hasDependents(up))) yield* purge(up);
      }
    });

  /** Root → leaf through the parent chain (one recursive query, crossing fork boundaries). */
  const activePathRows = (leafId: string) =>
    sql<NodeRow>`
      WITH RECURSIVE path(depth, seq, id, session_id, parent_id, frame_id, kind, turn_id, payload_json, created_at) AS (
        SELECT 0, seq, id, session_id, parent_id, frame_id, kind, turn_id, payload_json, created_at
          FROM nodes WHERE id = ${leafId}
        UNION ALL
        SELECT p.depth + 1, n.seq, n.id, n.session_id, n.parent_id, n.frame_id, n.kind, n.turn_id, n.payload_json, n.created_at
          FROM nodes n JOIN path p ON n.id = p.parent_id
      )
      SELECT seq, id, session_id, parent_id, frame_id, kind, turn_id, payload_json, created_at
        FROM path ORDER BY depth DESC`;

  return {
    createSession: (record: SessionRecord) =>
      write(
        Effect.gen(function* () {
          yield* lockSession(record.id);
          const exists = yield* sql`SELECT 1 FROM sessions WHERE id = ${record.id}`;
          if (exists.length > 0) return yield* Effect.fail(sessionExists(record.id));
          yield* insertSession(record);
          return record;
        }),
      ),

    getSession: (id: string) => guard(Effect.map(requireLive(id), toRecord)),

    listSessions: (options: ListOptions = {}) => {
      const conds = [sql`NOT deleted`];
      if (!options.includeChildren) conds.push(sql`parent_session IS NULL`);
      if (options.cwd !== undefined) conds.push(sql`cwd = ${options.cwd}`);
      const limit =
        options.limit !== undefined ? sql`LIMIT ${Math.max(0, Math.floor(options.limit))}` : sql``;
      return guard(
        Effect.map(
          sql<SessionRow>`SELECT * FROM sessions WHERE ${sql.and(conds)} ORDER BY updated_at DESC, seq DESC ${limit}`,
          (rows) => rows.map(toRecord),
        ),
      );
    },

    updateSession: (id: string, patch: { readonly title?: string; readonly updatedAt: number }) =>
      write(
        Effect.gen(function* () {
          yield* requireLive(id, true);
          yield* sql`UPDATE sessions SET updated_at = ${patch.updatedAt},
            title = COALESCE(${patch.title ?? null}::text, title) WHERE id = ${id}`;
        }),
      ),

    deleteSession: (id: string) =>
      write(
        Effect.gen(function* () {
          yield* requireLive(id, true);
          yield* sql`DELETE FROM journal WHERE session_id = ${id}`;
          yield* sql`DELETE FROM pending_turns WHERE session_id = ${id}`;
          yield* sql`DELETE FROM session_leases WHERE session_id = ${id}`;
          yield* sql`DELETE FROM usage WHERE session_id = ${id}`;
          yield* sql`DELETE FROM turn_commits WHERE session_id = ${id}`;
          if (yield* hasDependents(id)) yield* sql`UPDATE sessions SET deleted = TRUE WHERE id = ${id}`;
          else yield* purge(id);
        }),
      ),

    activePath: (sessionId: string, leafId?: string | null) =>
      guard(
        Effect.gen(function* () {
          const row = yield* requireLive(sessionId);
          const leaf = leafId === undefined ? row.leaf_id : leafId;
          if (leaf === null) return [];
          const rows = yield* activePathRows(leaf);
          if (rows.length === 0) return yield* Effect.fail(nodeNotFound(leaf));
          return rows.map(toNode);
        }),
      ),

    // the active path cut at its newest compaction in memory (the SQLite store's indexed probe
    // per line is not ported: this reads the whole path)
    projectionPath: (sessionId: string, frameId: string) =>
      guard(
        Effect.gen(function* () {
          const row = yield* requireLive(sessionId);
          const leaf = row.leaf_id;
          if (leaf === null) return [];
          const rows = yield* activePathRows(leaf);
          if (rows.length === 0) return yield* Effect.fail(nodeNotFound(leaf));
          return fromLastCompaction(rows.map(toNode), frameId);
        }),
      ),

    sessionNodes: (sessionId: string) =>
      guard(
        Effect.gen(function* () {
          yield* requireLive(sessionId);
          const rows = yield* sql<NodeRow>`SELECT * FROM nodes WHERE session_id = ${sessionId} ORDER BY seq`;
          return rows.map(toNode);
        }),
      ),

    getNode: (nodeId: string) =>
      guard(
        Effect.map(sql<NodeRow>`SELECT * FROM nodes WHERE id = ${nodeId}`, (rows) =>
          rows[0] ? toNode(rows[0]) : undefined,
        ),
      ),

    commit: (c: TurnCommit) =>
      write(
        Effect.gen(function* () {
          // the session row locked: concurrent commits to it queue here, from any process
          const row = yield* requireLive(c.sessionId, true);
          // 1. The stamp: a retry of a committed turn is a no-op.
          const stamp = (yield* sql<{ hash: string; head_revision: number; leaf_id: string | null }>`
            SELECT hash, head_revision, leaf_id FROM turn_commits
            WHERE session_id = ${c.sessionId} AND turn_id = ${c.turnId}`)[0];
          if (stamp) {
            if (stamp.hash !== c.hash) return yield* Effect.fail(turnHashConflict(c.sessionId, c.turnId));
            const stored = decodeStamp(
              { headRevision: stamp.head_revision, leafId: stamp.leaf_id },
              `commit stamp of turn ${c.turnId} of session ${c.sessionId}`,
            );
            return {
              headRevision: stored.headRevision,
              leafId: stored.leafId,
              duplicate: true,
            } as CommitResult;
          }
          // 2–3. Compare-and-swap on the head revision; validate the nodes (the checks SqliteStore makes too).
          const ids = commitIds(c, row.head_revision);
          if (!("fresh" in ids)) return yield* Effect.fail(ids);
          const refused = checkCommitIds(ids, yield* existingNodes([...ids.fresh, ...ids.outside]));
          if (refused) return yield* Effect.fail(refused);
          // 4. Append the nodes, record their artifact references, move the leaf, bump.
          const refs: { artifact_id: string; node_id: string }[] = [];
          for (const part of chunks(c.nodes, NODE_CHUNK)) {
            yield* sql`INSERT INTO nodes ${sql.insert(
              part.map((n) => {
                const payloadJson = toJson(n.payload);
                for (const a of artifactRefsInJson(payloadJson)) refs.push({ artifact_id: a, node_id: n.id });
                return {
                  id: n.id,
                  session_id: n.sessionId,
                  parent_id: n.parentId,
                  frame_id: n.frameId,
                  kind: n.kind,
                  turn_id: n.turnId,
                  payload_json: payloadJson,
                  created_at: n.createdAt,
                };
              }),
            )}`;
          }
          for (const part of chunks(refs, NODE_CHUNK))
            yield* sql`INSERT INTO artifact_refs ${sql.insert(part)} ON CONFLICT DO NOTHING`;
          const headRevision = row.head_revision + 1;
          yield* sql`UPDATE sessions SET
              leaf_id = ${c.leafId},
              head_revision = ${headRevision},
              turn_count = turn_count + 1,
              updated_at = ${c.updatedAt},
              title = COALESCE(${c.title ?? null}::text, title),
              frame_id = COALESCE(${c.frameId ?? null}::text, frame_id),
              model = COALESCE(${c.model ?? null}::text, model),
              state_json = COALESCE(${c.state !== undefined ? JSON.stringify(c.state) : null}::text, state_json)
            WHERE id = ${c.sessionId}`;
          // 5. Usage rows.
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
          yield* sql`INSERT INTO turn_commits ${sql.insert({
            session_id: c.sessionId,
            turn_id: c.turnId,
            hash: c.hash,
            head_revision: headRevision,
            leaf_id: c.leafId,
          })}`;
          yield* sql`DELETE FROM journal WHERE session_id = ${c.sessionId} AND turn_id = ${c.turnId}`;
          yield* sql`DELETE FROM pending_turns WHERE session_id = ${c.sessionId} AND turn_id = ${c.turnId}`;
          return { headRevision, leafId: c.leafId, duplicate: false } as CommitResult;
        }),
      ),

    setLeaf: (sessionId: string, leafId: string | null, expectedRevision: number, updatedAt: number) =>
      write(
        Effect.gen(function* () {
          const row = yield* requireLive(sessionId, true);
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
      ),

    fork: (session: SessionRecord) =>
      write(
        Effect.gen(function* () {
          const origin = session.origin;
          if (!origin) return yield* Effect.fail(forkWithoutOrigin(session.id));
          yield* lockSession(session.id);
          yield* Effect.flatMap(
            sql<SessionRow>`SELECT * FROM sessions WHERE id = ${origin.sessionId} AND NOT deleted FOR SHARE`,
            (rows) => (rows[0] ? Effect.void : Effect.fail(sessionNotFound(origin.sessionId))),
          );
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
      ),

    usage: (sessionId: string) =>
      guard(
        Effect.gen(function* () {
          yield* requireLive(sessionId);
          const rows =
            yield* sql<UsageDbRow>`SELECT * FROM usage WHERE session_id = ${sessionId} ORDER BY seq`;
          return rows.map(toUsage);
        }),
      ),

    children: (sessionId: string) =>
      guard(
        Effect.map(
          sql<SessionRow>`SELECT * FROM sessions WHERE parent_session = ${sessionId} AND NOT deleted
            ORDER BY created_at, seq`,
          (rows) => rows.map(toRecord),
        ),
      ),

    journalGet: (key: string) =>
      guard(
        Effect.map(sql<JournalRow>`SELECT * FROM journal WHERE key = ${key}`, (rows) =>
          rows[0] ? toJournal(rows[0]) : undefined,
        ),
      ),

    journalPut: (e: JournalEntry) => guard(putJournal(e)),

    journalPutMany: (entries: readonly JournalEntry[]) =>
      write(Effect.forEach(entries, putJournal, { discard: true })),

    journalForTurn: (sessionId: string, turnId: string) =>
      guard(
        Effect.map(
          sql<JournalRow>`SELECT * FROM journal WHERE session_id = ${sessionId} AND turn_id = ${turnId} ORDER BY seq`,
          (rows) => rows.map(toJournal),
        ),
      ),

    beginTurn: (t: PendingTurn) =>
      write(
        Effect.gen(function* () {
          if (!(yield* liveRow(t.sessionId))) {
            return yield* Effect.fail(
              new StoreError({ message: `cannot begin a turn: session ${t.sessionId} not found` }),
            );
          }
          yield* sql`INSERT INTO pending_turns ${sql.insert({
            session_id: t.sessionId,
            turn_id: t.turnId,
            input_json: toJson(t.input),
            expected_revision: t.expectedRevision,
            started_at: t.startedAt,
            resume_attempts: t.resumeAttempts ?? 0,
          })} ON CONFLICT (session_id) DO UPDATE SET turn_id = EXCLUDED.turn_id, input_json = EXCLUDED.input_json,
            expected_revision = EXCLUDED.expected_revision, started_at = EXCLUDED.started_at,
            resume_attempts = EXCLUDED.resume_attempts`;
        }),
      ),

    pendingTurn: (sessionId: string) =>
      guard(
        Effect.map(sql<PendingRow>`SELECT * FROM pending_turns WHERE session_id = ${sessionId}`, (rows) =>
          rows[0] ? toPending(rows[0]) : undefined,
        ),
      ),

    abandonTurn: (sessionId: string, turnId: string) =>
      write(
        Effect.gen(function* () {
          yield* sql`DELETE FROM journal WHERE session_id = ${sessionId} AND turn_id = ${turnId}`;
          yield* sql`DELETE FROM pending_turns WHERE session_id = ${sessionId} AND turn_id = ${turnId}`;
        }),
      ),

    countResumeAttempt: (sessionId: string, turnId: string) =>
      Effect.map(
        guard(
          sql<{ resume_attempts: number }>`UPDATE pending_turns SET resume_attempts = resume_attempts + 1
            WHERE session_id = ${sessionId} AND turn_id = ${turnId} RETURNING resume_attempts`,
        ),
        (rows) => rows[0]?.resume_attempts ?? 0,
      ),

    acquireLease: (req: LeaseRequest) =>
      write(
        Effect.gen(function* () {
          yield* requireLive(req.sessionId);
          // one lease decision per session at a time, across processes
          yield* lockSession(req.sessionId);
          const row =
            (yield* sql<LeaseRow>`SELECT * FROM session_leases WHERE session_id = ${req.sessionId}`)[0];
          const attempt = decideLease(row && toLease(row), req);
          if (!attempt.acquired) return attempt;
          const lease = attempt.lease;
          yield* sql`INSERT INTO session_leases ${sql.insert({
            session_id: lease.sessionId,
            holder: lease.holder,
            pid: lease.pid,
            host: lease.host,
            acquired_at: lease.acquiredAt,
            heartbeat_at: lease.heartbeatAt,
            expires_at: lease.expiresAt,
          })} ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, pid = EXCLUDED.pid,
            host = EXCLUDED.host, acquired_at = EXCLUDED.acquired_at, heartbeat_at = EXCLUDED.heartbeat_at,
            expires_at = EXCLUDED.expires_at`;
          return attempt;
        }),
      ),

    renewLease: (sessionId: string, holder: string, now: number, ttlMs: number) =>
      Effect.map(
        guard(
          sql<LeaseRow>`UPDATE session_leases SET heartbeat_at = ${now}, expires_at = ${now + ttlMs}
            WHERE session_id = ${sessionId} AND holder = ${holder} RETURNING *`,
        ),
        (rows) => (rows[0] ? toLease(rows[0]) : undefined),
      ),

    putToolOutput: (o: ToolOutputRecord) =>
      write(
        Effect.gen(function* () {
          yield* requireLive(o.sessionId);
          // delete + insert: the replacement is the newest row (a fresh seq), as SQLite's REPLACE
          yield* sql`DELETE FROM tool_outputs WHERE session_id = ${o.sessionId} AND call_id = ${o.callId}`;
          yield* sql`INSERT INTO tool_outputs ${sql.insert({
            session_id: o.sessionId,
            call_id: o.callId,
            provider_call_id: o.providerCallId ?? null,
            text: o.text,
            created_at: o.createdAt,
          })}`;
        }),
      ),

    getToolOutput: (sessionId: string, callId: string) =>
      guard(
        Effect.map(
          sql<ToolOutputRow>`
            WITH RECURSIVE lineage(id, k) AS (
              SELECT id, 0 FROM sessions WHERE id = ${sessionId} AND NOT deleted
              UNION ALL
              SELECT s.origin_session, lineage.k + 1 FROM lineage JOIN sessions s ON s.id = lineage.id
                WHERE s.origin_session IS NOT NULL
            )
            SELECT o.* FROM lineage JOIN tool_outputs o ON o.session_id = lineage.id
              WHERE o.call_id = ${callId} OR o.provider_call_id = ${callId}
              ORDER BY (o.call_id = ${callId}) DESC, lineage.k, o.seq DESC LIMIT 1`,
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
      ),

    putArtifact: (a: ArtifactPut) =>
      write(
        Effect.gen(function* () {
          const id = sha256BytesHex(a.bytes);
          // the first put of these bytes wins; a concurrent second one waits here and finds it
          yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`artifact:${id}`}))`;
          const had = yield* sql<ArtifactColumns>`SELECT * FROM artifacts WHERE id = ${id}`;
          if (had[0]) return toArtifact(had[0]);
          const count = Math.ceil(a.bytes.length / ARTIFACT_CHUNK_BYTES);
          yield* sql`INSERT INTO artifacts ${sql.insert({
            id,
            size: a.bytes.length,
            media_type: a.mediaType,
            chunks: count,
            created_at: a.createdAt,
          })}`;
          for (let i = 0; i < count; i++) {
            const data = a.bytes.subarray(i * ARTIFACT_CHUNK_BYTES, (i + 1) * ARTIFACT_CHUNK_BYTES);
            yield* sql`INSERT INTO artifact_chunks ${sql.insert({ artifact_id: id, idx: i, data: Buffer.from(data) })}`;
          }
          return { id, size: a.bytes.length, mediaType: a.mediaType, createdAt: a.createdAt } as ArtifactInfo;
        }),
      ),

    artifactInfo: (id: string) =>
      guard(
        Effect.map(sql<ArtifactColumns>`SELECT * FROM artifacts WHERE id = ${id}`, (rows) =>
          rows[0] ? toArtifact(rows[0]) : undefined,
        ),
      ),

    readArtifact: (id: string) =>
      guard(
        Effect.gen(function* () {
          const row = (yield* sql<ArtifactColumns>`SELECT * FROM artifacts WHERE id = ${id}`)[0];
          if (!row) return undefined;
          const parts = yield* sql<{
            data: Uint8Array;
          }>`SELECT data FROM artifact_chunks WHERE artifact_id = ${id} ORDER BY idx`;
          const out = new Uint8Array(row.size);
          let at = 0;
          for (const p of parts) {
            out.set(p.data, at);
            at += p.data.length;
          }
          if (at !== row.size || parts.length !== row.chunks)
            return yield* Effect.fail(
              new StoreError({
                message: `artifact ${id} in ${where} is damaged: ${parts.length} of ${row.chunks} chunks, ${at} of ${row.size} bytes`,
              }),
            );
          return out;
        }),
      ),

    collectArtifacts: (options: { readonly storedBefore: number }) =>
      Effect.map(
        write(
          Effect.gen(function* () {
            yield* sql`DELETE FROM artifact_refs r WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = r.node_id)`;
            const rows = yield* sql<ArtifactColumns>`SELECT * FROM artifacts a
              WHERE a.created_at <= ${options.storedBefore}
                AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.artifact_id = a.id)
                AND NOT EXISTS (SELECT 1 FROM journal j WHERE strpos(j.outcome_json, 'artifact:' || a.id) > 0)
              ORDER BY a.id`;
            for (const r of rows) {
              yield* sql`DELETE FROM artifact_chunks WHERE artifact_id = ${r.id}`;
              yield* sql`DELETE FROM artifacts WHERE id = ${r.id}`;
            }
            return rows;
          }),
        ),
        (gone) => ({ removed: gone.map((r) => r.id), bytes: gone.reduce((n, r) => n + r.size, 0) }),
      ),

    releaseLease: (sessionId: string, holder: string) =>
      Effect.asVoid(
        guard(sql`DELETE FROM session_leases WHERE session_id = ${sessionId} AND holder = ${holder}`),
      ),

    getLease: (sessionId: string) =>
      guard(
        Effect.map(sql<LeaseRow>`SELECT * FROM session_leases WHERE session_id = ${sessionId}`, (rows) =>
          rows[0] ? toLease(rows[0]) : undefined,
        ),
      ),
  };

  function putJournal(e: JournalEntry) {
    return sql`INSERT INTO journal ${sql.insert({
      key: e.key,
      session_id: e.sessionId,
      turn_id: e.turnId,
      hash: e.hash,
      status: e.status,
      outcome_json: e.outcome === undefined ? null : JSON.stringify(e.outcome),
      updated_at: e.updatedAt,
    })} ON CONFLICT (key) DO UPDATE SET session_id = EXCLUDED.session_id, turn_id = EXCLUDED.turn_id,
      hash = EXCLUDED.hash, status = EXCLUDED.status, outcome_json = EXCLUDED.outcome_json,
      updated_at = EXCLUDED.updated_at`;
  }
}

/** `PostgresStore.layer({ url })`: the store on one Postgres database, closed with the layer's scope. */
export const PostgresStore = {
  layer: (options: PostgresStoreOptions): Layer.Layer<SessionStore, OpenError> =>
    Layer.scoped(SessionStore, makePostgresStore(options)),
} as const;
