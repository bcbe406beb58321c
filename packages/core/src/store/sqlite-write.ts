// SqliteStore's write path — sessions, turns, commits, leases (the effect journal is appended to
// files: journal-file.ts; this file reads only the rows an older version wrote) — on the
// better-sqlite3 handle: statements prepared once, each store method one synchronous
// `BEGIN IMMEDIATE … COMMIT` (`db.transaction(…).immediate`) of plain driver calls: no
// statement compiler, no fiber, nothing else between BEGIN and COMMIT. A refused write
// (a conflict, a missing session …) throws a `Refusal` carrying the store's typed error; the
// transaction rolls back and the store turns it back into that failure (sqlite.ts `hot`).
import type Sqlite from "better-sqlite3";
import {
  type CommitResult,
  type JournalEntry,
  type LeaseAttempt,
  type LeaseRequest,
  type PendingTurn,
  type SessionLease,
  type SessionNotFound,
  type SessionRecord,
  type StoreConflict,
  StoreError,
  type TurnCommit,
} from "../store.ts";
import { artifactRefsInJson } from "./artifacts.ts";
import { sessionExists, sessionNotFound, turnHashConflict } from "./errors.ts";
import {
  checkCommitIds,
  commitIds,
  decideLease,
  type JournalRow,
  type LeaseRow,
  type PendingRow,
  toJournal,
  toJson,
  toLease,
  toPending,
} from "./rows.ts";
import { CommitStampSchema, jsonDecoderFor } from "./schema.ts";
import { INSERT_RUN_SQL, nodeRuns, type RunNode } from "./sqlite-runs.ts";
import { assignLines, type LinePlace } from "./sqlite-schema.ts";

/** A write the store refuses: thrown inside a transaction (which rolls it back), failed with `error`. */
export class Refusal {
  readonly error: StoreError | SessionNotFound | StoreConflict;
  constructor(error: StoreError | SessionNotFound | StoreConflict) {
    this.error = error;
  }
}

const refuse = (error: StoreError | SessionNotFound | StoreConflict): never => {
  throw new Refusal(error);
};

const decodeStamp = jsonDecoderFor(CommitStampSchema);

/** A stored node's place, for placing the nodes a commit appends (see migration 4). */
interface Placed {
  readonly id: string;
  readonly session_id: string;
  readonly line: number | null;
  readonly depth: number | null;
  readonly tip: number | null;
}

export interface SqliteWrites {
  readonly createSession: (record: SessionRecord) => SessionRecord;
  readonly beginTurn: (t: PendingTurn) => void;
  /** Read beside the write that makes it (the turn's entry asks it once per turn). */
  readonly pendingTurn: (sessionId: string) => PendingTurn | undefined;
  readonly commit: (c: TurnCommit) => CommitResult;
  /** An entry of the `journal` table (what a version before the turn journal files wrote). */
  readonly journalGet: (key: string) => JournalEntry | undefined;
  /** A turn's rows of the `journal` table (an older lash's), in the order they were written. */
  readonly journalRows: (sessionId: string, turnId: string) => JournalEntry[];
  /** End a turn without committing it: its pending row and journal rows go. */
  readonly abandonTurn: (sessionId: string, turnId: string) => void;
  /** Every turn begun and not yet committed or abandoned. */
  readonly pendingTurns: () => readonly { sessionId: string; turnId: string }[];
  readonly acquireLease: (req: LeaseRequest) => LeaseAttempt;
  readonly renewLease: (
    sessionId: string,
    holder: string,
    now: number,
    ttlMs: number,
  ) => SessionLease | undefined;
  readonly releaseLease: (sessionId: string, holder: string) => void;
  readonly getLease: (sessionId: string) => SessionLease | undefined;
}

/** Prepare the write path on `db` (after the migrations made its tables). */
export function prepareWrites(db: Sqlite.Database): SqliteWrites {
  const st = {
    head: db.prepare("SELECT head_revision FROM sessions WHERE id = ? AND deleted = 0").pluck(),
    exists: db.prepare("SELECT 1 FROM sessions WHERE id = ?").pluck(),
    insertSession: db.prepare(
      `INSERT INTO sessions (id, title, cwd, model, mode, system_prompt, created_at, updated_at, leaf_id,
         head_revision, turn_count, frame_id, origin_session, origin_node, parent_session, parent_call, depth,
         state_json, deleted)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
    ),
    insertPending: db.prepare(
      `INSERT OR REPLACE INTO pending_turns
         (session_id, turn_id, input_json, expected_revision, started_at, resume_attempts)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    pending: db.prepare("SELECT * FROM pending_turns WHERE session_id = ?"),
    stamp: db.prepare("SELECT hash, result_json FROM turn_commits WHERE session_id = ? AND turn_id = ?"),
    // the stored ones among a commit's ids (a JSON array), with their places: one statement for any number
    places: db.prepare(
      `SELECT n.id, n.session_id, n.line, n.depth, (SELECT max(t.depth) FROM nodes t WHERE t.line = n.line) AS tip
         FROM nodes n WHERE n.id IN (SELECT value FROM json_each(?))`,
    ),
    // the highest line any node, line row or run carries (a repaired file may hold nodes whose
    // line row was lost; a line is never numbered again while a run of it is left); each 0 when
    // its table has none (a multi-argument max() is NULL when any argument is)
    maxLine: db
      .prepare(
        `SELECT max(ifnull((SELECT max(line) FROM node_lines), 0), ifnull((SELECT max(line) FROM nodes), 0),
           ifnull((SELECT max(line) FROM node_runs), 0))`,
      )
      .pluck(),
    insertLine: db.prepare(
      "INSERT INTO node_lines (line, session_id, parent_line, parent_depth) VALUES (?, ?, ?, ?)",
    ),
    insertNode: db.prepare(
      `INSERT INTO nodes (line, depth, id, session_id, parent_id, frame_id, kind, turn_id, payload_json, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertRun: db.prepare(INSERT_RUN_SQL),
    insertRef: db.prepare("INSERT OR IGNORE INTO artifact_refs (artifact_id, node_id) VALUES (?, ?)"),
    commitSession: db.prepare(
      `UPDATE sessions SET leaf_id = ?, head_revision = ?, turn_count = turn_count + 1, updated_at = ?,
         title = COALESCE(?, title), frame_id = COALESCE(?, frame_id), model = COALESCE(?, model),
         state_json = COALESCE(?, state_json)
       WHERE id = ?`,
    ),
    insertUsage: db.prepare(
      `INSERT INTO usage (session_id, turn_id, source, model, input, output, reasoning, cache_read, cache_write, cost_usd)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertStamp: db.prepare(
      "INSERT INTO turn_commits (session_id, turn_id, hash, result_json) VALUES (?, ?, ?, ?)",
    ),
    deleteJournal: db.prepare("DELETE FROM journal WHERE session_id = ? AND turn_id = ?"),
    deletePending: db.prepare("DELETE FROM pending_turns WHERE session_id = ? AND turn_id = ?"),
    journalGet: db.prepare("SELECT * FROM journal WHERE key = ?"),
    journalRows: db.prepare("SELECT * FROM journal WHERE session_id = ? AND turn_id = ? ORDER BY rowid"),
    pendingTurns: db.prepare("SELECT session_id AS sessionId, turn_id AS turnId FROM pending_turns"),
    leaseGet: db.prepare("SELECT * FROM session_leases WHERE session_id = ?"),
    leasePut: db.prepare(
      `INSERT OR REPLACE INTO session_leases (session_id, holder, pid, host, acquired_at, heartbeat_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    leaseRenew: db.prepare(
      `UPDATE session_leases SET heartbeat_at = ?, expires_at = ?
       WHERE session_id = ? AND holder = ? RETURNING *`,
    ),
    leaseDelete: db.prepare("DELETE FROM session_leases WHERE session_id = ? AND holder = ?"),
  };

  const headOf = (sessionId: string): number => {
    const head = st.head.get(sessionId) as number | undefined;
    return head === undefined ? refuse(sessionNotFound(sessionId)) : head;
  };

  /**
   * Lines and depths for a commit's nodes (parents first), from the places of their stored
   * parents; new lines (a root, a branch, a fork's first node) are numbered after the highest
   * one, read only when the commit starts one.
   */
  const placeNodes = (nodes: TurnCommit["nodes"], stored: ReadonlyMap<string, Placed>): LinePlace[] => {
    if (nodes.length === 0) return [];
    let provisional = 0;
    const { places, lines } = assignLines(
      nodes,
      (id) => {
        const p = stored.get(id);
        return p && p.line !== null && p.depth !== null
          ? { line: p.line, depth: p.depth, sessionId: p.session_id }
          : undefined;
      },
      (line) => {
        for (const p of stored.values()) if (p.line === line && p.tip !== null) return p.tip;
        return undefined;
      },
      () => --provisional,
    );
    if (lines.length === 0) return places;
    const base = (st.maxLine.get() as number | null) ?? 0;
    const number = (line: number) => (line < 0 ? base - line : line);
    for (const l of lines)
      st.insertLine.run(
        number(l.line),
        l.sessionId,
        l.parent ? number(l.parent.line) : null,
        l.parent?.depth ?? null,
      );
    return places.map((p) => ({ line: number(p.line), depth: p.depth }));
  };

  const createSession = db.transaction((r: SessionRecord): SessionRecord => {
    if (st.exists.get(r.id) !== undefined) refuse(sessionExists(r.id));
    st.insertSession.run(
      r.id,
      r.title ?? null,
      r.cwd ?? null,
      r.model,
      r.mode,
      r.systemPrompt ?? null,
      r.createdAt,
      r.updatedAt,
      r.leafId,
      r.headRevision,
      r.turnCount,
      r.frameId,
      r.origin?.sessionId ?? null,
      r.origin?.nodeId ?? null,
      r.parentLink?.sessionId ?? null,
      r.parentLink?.callId ?? null,
      r.parentLink?.depth ?? null,
      JSON.stringify(r.state ?? {}),
    );
    return r;
  });

  const beginTurn = db.transaction((t: PendingTurn) => {
    if (st.head.get(t.sessionId) === undefined)
      refuse(new StoreError({ message: `cannot begin a turn: session ${t.sessionId} not found` }));
    st.insertPending.run(
      t.sessionId,
      t.turnId,
      toJson(t.input),
      t.expectedRevision,
      t.startedAt,
      t.resumeAttempts ?? 0,
    );
  });

  const commit = db.transaction((c: TurnCommit): CommitResult => {
    const head = headOf(c.sessionId);
    // 1. The stamp: a retry of a committed turn is a no-op.
    const stamp = st.stamp.get(c.sessionId, c.turnId) as { hash: string; result_json: string } | undefined;
    if (stamp) {
      if (stamp.hash !== c.hash) refuse(turnHashConflict(c.sessionId, c.turnId));
      const stored = decodeStamp(
        stamp.result_json,
        `commit stamp of turn ${c.turnId} of session ${c.sessionId}`,
      )!;
      return { headRevision: stored.headRevision, leafId: stored.leafId, duplicate: true };
    }
    // 2–3. Compare-and-swap on the head revision; validate the nodes (rows.ts, shared with Postgres).
    const ids = commitIds(c, head);
    if (!("fresh" in ids)) return refuse(ids);
    const found = new Map<string, Placed>();
    for (const p of st.places.all(JSON.stringify([...ids.fresh, ...ids.outside])) as Placed[])
      found.set(p.id, p);
    const refused = checkCommitIds(ids, found);
    if (refused) refuse(refused);
    // 4. Place the nodes on lines, append them (each payload encoded once), move the leaf, bump.
    const places = placeNodes(c.nodes, found);
    const placed: RunNode[] = [];
    for (let i = 0; i < c.nodes.length; i++) {
      const n = c.nodes[i]!;
      const payloadJson = toJson(n.payload);
      const { lastInsertRowid } = st.insertNode.run(
        places[i]!.line,
        places[i]!.depth,
        n.id,
        n.sessionId,
        n.parentId,
        n.frameId,
        n.kind,
        n.turnId,
        payloadJson,
        n.createdAt,
      );
      const { line, depth } = places[i]!;
      placed.push({
        id: n.id,
        parentId: n.parentId,
        frameId: n.frameId,
        kind: n.kind,
        turnId: n.turnId,
        createdAt: n.createdAt,
        line,
        depth,
        seq: Number(lastInsertRowid),
      });
      // the artifacts the nodes refer to (garbage collection keeps them while a node does)
      for (const a of artifactRefsInJson(payloadJson)) st.insertRef.run(a, n.id);
    }
    // the envelopes again, one row per run of a line (what a path read takes: sqlite-nodes.ts)
    for (const run of nodeRuns(placed)) st.insertRun.run(...run);
    const headRevision = head + 1;
    st.commitSession.run(
      c.leafId,
      headRevision,
      c.updatedAt,
      c.title ?? null,
      c.frameId ?? null,
      c.model ?? null,
      c.state !== undefined ? JSON.stringify(c.state) : null,
      c.sessionId,
    );
    // 5. Usage rows; absent buckets stay NULL.
    for (const u of c.usage)
      st.insertUsage.run(
        c.sessionId,
        u.turnId,
        u.source,
        u.model,
        u.usage.input ?? null,
        u.usage.output ?? null,
        u.usage.reasoning ?? null,
        u.usage.cacheRead ?? null,
        u.usage.cacheWrite ?? null,
        u.costUsd ?? null,
      );
    // 6. The stamp; the turn's pending row and its journal rows (written by a version before the
    // journal files; the file itself goes after this transaction) are done with.
    const result = { headRevision, leafId: c.leafId };
    st.insertStamp.run(c.sessionId, c.turnId, c.hash, JSON.stringify(result));
    st.deleteJournal.run(c.sessionId, c.turnId);
    st.deletePending.run(c.sessionId, c.turnId);
    return { ...result, duplicate: false };
  });

  const abandonTurn = db.transaction((sessionId: string, turnId: string) => {
    st.deleteJournal.run(sessionId, turnId);
    st.deletePending.run(sessionId, turnId);
  });

  const acquireLease = db.transaction((req: LeaseRequest): LeaseAttempt => {
    headOf(req.sessionId);
    const row = st.leaseGet.get(req.sessionId) as LeaseRow | undefined;
    const attempt = decideLease(row && toLease(row), req);
    if (!attempt.acquired) return attempt;
    const lease = attempt.lease;
    st.leasePut.run(
      lease.sessionId,
      lease.holder,
      lease.pid,
      lease.host,
      lease.acquiredAt,
      lease.heartbeatAt,
      lease.expiresAt,
    );
    return attempt;
  });

  return {
    createSession: (r) => createSession.immediate(r),
    beginTurn: (t) => beginTurn.immediate(t),
    pendingTurn: (sessionId) => {
      const row = st.pending.get(sessionId) as PendingRow | undefined;
      return row ? toPending(row) : undefined;
    },
    commit: (c) => commit.immediate(c),
    journalGet: (key) => {
      const row = st.journalGet.get(key) as JournalRow | undefined;
      return row ? toJournal(row) : undefined;
    },
    pendingTurns: () => st.pendingTurns.all() as { sessionId: string; turnId: string }[],
    journalRows: (sessionId, turnId) =>
      (st.journalRows.all(sessionId, turnId) as JournalRow[]).map(toJournal),
    abandonTurn: (sessionId, turnId) => abandonTurn.immediate(sessionId, turnId),
    acquireLease: (req) => acquireLease.immediate(req),
    renewLease: (sessionId, holder, now, ttlMs) => {
      const row = st.leaseRenew.get(now, now + ttlMs, sessionId, holder) as LeaseRow | undefined;
      return row ? toLease(row) : undefined;
    },
    releaseLease: (sessionId, holder) => {
      st.leaseDelete.run(sessionId, holder);
    },
    getLease: (sessionId) => {
      const row = st.leaseGet.get(sessionId) as LeaseRow | undefined;
      return row ? toLease(row) : undefined;
    },
  };
}
