// The rows of lash's SQL stores (SqliteStore, @lash/store-postgres: the same tables and columns)
// and how a row becomes the store's record, in one place so that both stores read a row alike.
// Each decoder throws a StoreError naming the row; a store's guard turns it into a typed failure.
import * as Schema from "effect/Schema";
import type {
  ArtifactInfo,
  JournalEntry,
  LeaseAttempt,
  LeaseRequest,
  NodeKind,
  PendingTurn,
  SessionLease,
  SessionMode,
  SessionRecord,
  StoreConflict,
  StoreError,
  TurnCommit,
  UsageRow,
} from "../store.ts";
import { duplicateNode, foreignNode, nodeNotFound, revisionConflict } from "./errors.ts";
import {
  decoderFor,
  JournalEntrySchema,
  jsonDecoderFor,
  PendingTurnSchema,
  SessionModeSchema,
  SessionStateSchema,
  ToolOutputRecordSchema,
  UsageRowSchema,
} from "./schema.ts";

/** A session row's columns (each store adds its own `deleted`). */
export interface SessionColumns {
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
}

export interface UsageDbRow {
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

export interface JournalRow {
  readonly key: string;
  readonly session_id: string;
  readonly turn_id: string;
  readonly hash: string;
  readonly status: string;
  readonly outcome_json: string | null;
  readonly updated_at: number;
}

export interface PendingRow {
  readonly session_id: string;
  readonly turn_id: string;
  readonly input_json: string | null;
  readonly expected_revision: number;
  readonly started_at: number;
  readonly resume_attempts: number;
}

export interface ToolOutputRow {
  readonly session_id: string;
  readonly call_id: string;
  readonly provider_call_id: string | null;
  readonly text: string;
  readonly created_at: number;
}

export interface LeaseRow {
  readonly session_id: string;
  readonly holder: string;
  readonly pid: number;
  readonly host: string;
  readonly acquired_at: number;
  readonly heartbeat_at: number;
  readonly expires_at: number;
}

/** An artifact row's columns (SQLite adds `on_disk`). */
export interface ArtifactColumns {
  readonly id: string;
  readonly size: number;
  readonly media_type: string;
  readonly chunks: number;
  readonly created_at: number;
}

export const toJson = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

export const decodeJson = jsonDecoderFor(Schema.Unknown);
export const decodeState = jsonDecoderFor(SessionStateSchema);
const decodeMode = decoderFor(SessionModeSchema);
const decodeUsage = decoderFor(UsageRowSchema);
const decodeJournal = decoderFor(JournalEntrySchema);
const decodePending = decoderFor(PendingTurnSchema);
export const decodeToolOutput = decoderFor(ToolOutputRecordSchema);
export const NODE_KINDS: ReadonlySet<string> = new Set<NodeKind>(["message", "protocol", "plugin", "frame"]);

export function toRecord(r: SessionColumns): SessionRecord {
  const where = `session ${r.id}`;
  return {
    id: r.id,
    ...(r.title !== null ? { title: r.title } : {}),
    ...(r.cwd !== null ? { cwd: r.cwd } : {}),
    model: r.model,
    mode: decodeMode(r.mode, where) as SessionMode,
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
    state: decodeState(r.state_json, where) ?? {},
  };
}

export function toUsage(r: UsageDbRow): UsageRow {
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
  return decodeUsage(
    {
      turnId: r.turn_id,
      source: r.source,
      model: r.model,
      usage,
      ...(r.cost_usd !== null ? { costUsd: r.cost_usd } : {}),
    },
    `usage row of turn ${r.turn_id}`,
  );
}

export function toJournal(r: JournalRow): JournalEntry {
  const where = `journal entry ${r.key}`;
  const outcome = decodeJson(r.outcome_json, where);
  return decodeJournal(
    {
      key: r.key,
      sessionId: r.session_id,
      turnId: r.turn_id,
      hash: r.hash,
      status: r.status,
      ...(r.outcome_json !== null ? { outcome } : {}),
      updatedAt: r.updated_at,
    },
    where,
  );
}

export function toPending(r: PendingRow): PendingTurn {
  const where = `pending turn ${r.turn_id} of session ${r.session_id}`;
  return decodePending(
    {
      sessionId: r.session_id,
      turnId: r.turn_id,
      input: decodeJson(r.input_json, where),
      expectedRevision: r.expected_revision,
      startedAt: r.started_at,
      resumeAttempts: r.resume_attempts,
    },
    where,
  );
}

export const toArtifact = (r: ArtifactColumns): ArtifactInfo => ({
  id: r.id,
  size: r.size,
  mediaType: r.media_type,
  createdAt: r.created_at,
});

export const toLease = (r: LeaseRow): SessionLease => ({
  sessionId: r.session_id,
  holder: r.holder,
  pid: r.pid,
  host: r.host,
  acquiredAt: r.acquired_at,
  heartbeatAt: r.heartbeat_at,
  expiresAt: r.expires_at,
});

/**
 * Whether `req` may take the session's lease, given the one held now (`current`): a live lease
 * of another holder (not the one `req` replaces) refuses it; otherwise the new lease to write
 * (the holder's own acquisition time kept when it renews its own).
 */
export function decideLease(current: SessionLease | undefined, req: LeaseRequest): LeaseAttempt {
  const ours = current?.holder === req.holder;
  if (current && !ours && current.holder !== req.replacing && req.now < current.expiresAt)
    return { acquired: false, lease: current };
  return {
    acquired: true,
    lease: {
      sessionId: req.sessionId,
      holder: req.holder,
      pid: req.pid,
      host: req.host,
      acquiredAt: ours && current ? current.acquiredAt : req.now,
      heartbeatAt: req.now,
      expiresAt: req.now + req.ttlMs,
    },
  };
}

/** What a commit brings (`fresh`: its node ids) and points at outside itself (`outside`: parents, the leaf). */
export interface CommitIds {
  readonly fresh: ReadonlySet<string>;
  readonly outside: readonly string[];
}

/**
 * A turn commit's checks before the store is read (shared by SqliteStore and
 * @lash/store-postgres): the compare-and-swap on the head revision, then every node of
 * the committing session and no id twice. Returns the ids to look up (`fresh` and
 * `outside`), or why the commit is refused; `checkCommitIds` takes what the lookup found.
 */
export function commitIds(
  c: Pick<TurnCommit, "sessionId" | "expectedRevision" | "nodes" | "leafId">,
  headRevision: number,
): CommitIds | StoreError | StoreConflict {
  if (headRevision !== c.expectedRevision)
    return revisionConflict(c.sessionId, c.expectedRevision, headRevision);
  const fresh = new Set<string>();
  const outside: string[] = [];
  for (const n of c.nodes) {
    if (n.sessionId !== c.sessionId) return foreignNode(n.id, n.sessionId, c.sessionId);
    if (fresh.has(n.id)) return duplicateNode(n.id);
    if (n.parentId !== null && !fresh.has(n.parentId)) outside.push(n.parentId);
    fresh.add(n.id);
  }
  if (c.leafId !== null && !fresh.has(c.leafId)) outside.push(c.leafId);
  return { fresh, outside };
}

/** The second half of the commit checks: no fresh id is stored already (ids are global), every outside id is. */
export function checkCommitIds(ids: CommitIds, found: { has(id: string): boolean }): StoreError | undefined {
  for (const id of ids.fresh) if (found.has(id)) return duplicateNode(id);
  for (const id of ids.outside) if (!found.has(id)) return nodeNotFound(id);
  return undefined;
}

export function chunks<A>(xs: readonly A[], size: number): A[][] {
  const out: A[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}
