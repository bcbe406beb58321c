import type { Usage } from "@lash/sansio";
import * as Context from "effect/Context";
import * as Data from "effect/Data";
import type * as Effect from "effect/Effect";

export type SessionMode = "standard" | "rlm";

/** One session: a graph of nodes plus the metadata every list and resume needs. */
export interface SessionRecord {
  readonly id: string;
  readonly title?: string;
  readonly cwd?: string;
  /** `provider/model` */
  readonly model: string;
  readonly mode: SessionMode;
  readonly systemPrompt?: string;
  /** epoch ms */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The active leaf; null for a session with no nodes yet. */
  readonly leafId: string | null;
  /** Bumped by every commit and leaf move (compare-and-swap token). */
  readonly headRevision: number;
  readonly turnCount: number;
  /** The current agent frame. */
  readonly frameId: string;
  /** Set on a fork: the path continues from this node of another session (null = forked empty). */
  readonly origin?: { readonly sessionId: string; readonly nodeId: string | null };
  /** Set on a subagent child: the parent's tool call that spawned it. */
  readonly parentLink?: { readonly sessionId: string; readonly callId: string; readonly depth: number };
  /** Durable per-session state of plugins and protocols (JSON values), replaced on commit. */
  readonly state: { readonly [key: string]: unknown };
}

export type NodeKind = "message" | "protocol" | "plugin" | "frame";

/** An append-only graph node. `payload` is a `Message` for `message` nodes. */
export interface GraphNode {
  /** Globally unique. */
  readonly id: string;
  readonly sessionId: string;
  /** May belong to another session (the first node of a fork points into its origin). */
  readonly parentId: string | null;
  readonly frameId: string;
  readonly kind: NodeKind;
  readonly turnId: string | null;
  readonly payload: unknown;
  readonly createdAt: number;
  /** Insertion order, assigned by the store (monotonic per database). */
  readonly seq: number;
}

export type NewNode = Omit<GraphNode, "seq">;

/** A session's ledger: every row, the total, and per `(source, model)`. */
export interface UsageSummary {
  readonly rows: readonly UsageRow[];
  readonly total: Usage;
  readonly costUsd?: number;
  /** Per `(source, model)`. */
  readonly bySource: readonly {
    readonly source: string;
    readonly model: string;
    readonly usage: Usage;
    readonly costUsd?: number;
  }[];
}

/** One usage-ledger row: what one source (the turn, `llm.query`, a child agent …) spent on one model. */
export interface UsageRow {
  readonly turnId: string;
  /** `turn`, `llm.query`, `agent:<childSessionId>`, … */
  readonly source: string;
  readonly model: string;
  readonly usage: Usage;
  /** Absent when the model's price is unknown. */
  readonly costUsd?: number;
}

export interface TurnCommit {
  readonly sessionId: string;
  readonly turnId: string;
  /** Hash of the turn's content with volatile fields (ids, timestamps) scrubbed. */
  readonly hash: string;
  /** The `headRevision` the turn started from. */
  readonly expectedRevision: number;
  /** Appended in order; each node's parent is set by the caller. */
  readonly nodes: readonly NewNode[];
  readonly leafId: string | null;
  readonly usage: readonly UsageRow[];
  readonly updatedAt: number;
  readonly title?: string;
  readonly frameId?: string;
  readonly model?: string;
  /** Replaces the whole state map when present. */
  readonly state?: { readonly [key: string]: unknown };
}

export interface CommitResult {
  readonly headRevision: number;
  readonly leafId: string | null;
  /** True when this exact turn had already been committed (idempotent retry). */
  readonly duplicate: boolean;
}

export type JournalStatus = "started" | "completed";

/** One recorded reply-producing effect (or tool attempt) of a turn. */
export interface JournalEntry {
  /** `{session}:{turn}:{iteration}:{kind}:{effectId}[:suffix]` */
  readonly key: string;
  readonly sessionId: string;
  readonly turnId: string;
  /** Hash of the effect envelope (what was asked). */
  readonly hash: string;
  readonly status: JournalStatus;
  /** The recorded outcome (JSON), present when completed. */
  readonly outcome?: unknown;
  readonly updatedAt: number;
}

/** A turn that started but has not committed: what a reopen needs to resume it. */
export interface PendingTurn {
  readonly sessionId: string;
  readonly turnId: string;
  /** The turn's input (JSON: messages and options as the runtime wrote them). */
  readonly input: unknown;
  readonly expectedRevision: number;
  readonly startedAt: number;
  /**
   * How many times a resume of this turn has started (counted durably before
   * each resume runs; 0 or absent for a turn that was never resumed). A
   * resume that crashes the process leaves it raised: the poison-turn guard.
   */
  readonly resumeAttempts?: number;
}

/**
 * The full text of a tool output the model saw cut to the context budget: what
 * `read_output` serves, kept by the store so it outlives the process.
 */
export interface ToolOutputRecord {
  readonly sessionId: string;
  /** lash's id for the call (unique in the session); the provider's id for a call without one. */
  readonly callId: string;
  /** The provider's id for the call, when it differs (providers reuse ids across turns). */
  readonly providerCallId?: string;
  readonly text: string;
  /** epoch ms */
  readonly createdAt: number;
}

/**
 * A content-addressed artifact: bytes stored once, keyed by their sha256 (hex).
 * Nodes refer to one with an attachment part whose `ref` is `artifact:<id>`
 * (see `artifactRef`); the store records those references at commit so that
 * `collectArtifacts` finds the unreferenced ones.
 */
export interface ArtifactInfo {
  /** sha256 of the bytes, 64 hex digits. */
  readonly id: string;
  readonly size: number;
  readonly mediaType: string;
  /** epoch ms of the first put */
  readonly createdAt: number;
}

export interface ArtifactPut {
  readonly bytes: Uint8Array;
  readonly mediaType: string;
  /** epoch ms */
  readonly createdAt: number;
}

export interface ArtifactGcOptions {
  /**
   * Only artifacts first stored at or before this time (epoch ms) are removed: an
   * artifact a running turn has put but not yet committed is not referenced yet.
   */
  readonly storedBefore: number;
}

export interface ArtifactGcResult {
  /** Ids of the removed artifacts. */
  readonly removed: readonly string[];
  /** Their total size in bytes. */
  readonly bytes: number;
}

/** Who writes a session now: one writer per session, across processes. */
export interface SessionLease {
  readonly sessionId: string;
  /** Unique per runtime instance (one process may hold leases of several sessions). */
  readonly holder: string;
  readonly pid: number;
  readonly host: string;
  /** epoch ms */
  readonly acquiredAt: number;
  readonly heartbeatAt: number;
  /** The lease is free once `now >= expiresAt` (a dead holder stops renewing it). */
  readonly expiresAt: number;
}

export interface LeaseRequest {
  readonly sessionId: string;
  readonly holder: string;
  readonly pid: number;
  readonly host: string;
  readonly now: number;
  readonly ttlMs: number;
  /** Also take the lease over from this holder (the caller knows it is dead). */
  readonly replacing?: string;
}

/** `acquired: false` carries the current holder's lease. */
export type LeaseAttempt =
  | { readonly acquired: true; readonly lease: SessionLease }
  | { readonly acquired: false; readonly lease: SessionLease };

export interface ListOptions {
  /** Only sessions whose cwd equals this. */
  readonly cwd?: string;
  readonly limit?: number;
  /** Include subagent children (default false). */
  readonly includeChildren?: boolean;
}

// ---- errors ----

/** Another writer moved the session first, or the same turn was committed with different content. */
export class StoreConflict extends Data.TaggedError("StoreConflict")<{
  readonly sessionId: string;
  readonly reason: "revision" | "turnHash";
  readonly expected?: number;
  readonly actual?: number;
  readonly message: string;
}> {}

export class SessionNotFound extends Data.TaggedError("SessionNotFound")<{
  readonly sessionId: string;
  readonly message: string;
}> {}

/** The database was written by a newer lash; nothing was written to it. */
export class SchemaTooNew extends Data.TaggedError("SchemaTooNew")<{
  readonly path: string;
  readonly found: number;
  readonly supported: number;
  readonly message: string;
}> {}

/** The file is not a lash database, or is damaged. */
export class StoreCorrupt extends Data.TaggedError("StoreCorrupt")<{
  readonly path: string;
  readonly message: string;
}> {}

/** Any other backend failure. */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly message: string;
  readonly cause?: unknown;
}> {}

export type StoreFailure = StoreError | SessionNotFound;

/**
 * Durable session storage. `MemoryStore` and `SqliteStore` implement it and
 * pass one conformance suite.
 */
export interface SessionStoreShape {
  createSession(record: SessionRecord): Effect.Effect<SessionRecord, StoreError>;
  getSession(id: string): Effect.Effect<SessionRecord, StoreFailure>;
  /** Newest first (by updatedAt). Deleted sessions and (by default) subagent children are not listed. */
  listSessions(options?: ListOptions): Effect.Effect<readonly SessionRecord[], StoreError>;
  /** Rename etc.: metadata only, no revision bump. */
  updateSession(
    id: string,
    patch: { readonly title?: string; readonly updatedAt: number },
  ): Effect.Effect<void, StoreFailure>;
  /**
   * Remove a session, its journal, pending turn and usage. Nodes that another
   * session's path still runs through (forks) are kept; the session disappears from lists.
   */
  deleteSession(id: string): Effect.Effect<void, StoreFailure>;

  /** Root → leaf of the given leaf (default: the session's leaf), crossing fork boundaries. */
  activePath(sessionId: string, leafId?: string | null): Effect.Effect<readonly GraphNode[], StoreFailure>;
  /**
   * The active path from the newest `compaction` node of `frameId` on it (inclusive) to the
   * session's leaf; the whole path when it holds none. What a turn's request is built from
   * (the summary plus what follows it), read without the span the summary replaces; forks,
   * exports and history views use `activePath`.
   */
  projectionPath(sessionId: string, frameId: string): Effect.Effect<readonly GraphNode[], StoreFailure>;
  /** Every node this session owns, all branches, in insertion order. */
  sessionNodes(sessionId: string): Effect.Effect<readonly GraphNode[], StoreFailure>;
  getNode(nodeId: string): Effect.Effect<GraphNode | undefined, StoreError>;

  /**
   * One transaction: stamp check (same turn + same hash → `duplicate: true`, no
   * writes; different hash → `StoreConflict{turnHash}`), revision CAS
   * (`StoreConflict{revision}`), append nodes, move the leaf, bump the
   * revision and turn count, add usage rows, write the stamp, and delete the
   * turn's journal rows and pending-turn row.
   */
  commit(commit: TurnCommit): Effect.Effect<CommitResult, StoreConflict | StoreFailure>;
  /** Branch: move the leaf (CAS on the revision). */
  setLeaf(
    sessionId: string,
    leafId: string | null,
    expectedRevision: number,
    updatedAt: number,
  ): Effect.Effect<CommitResult, StoreConflict | StoreFailure>;
  /**
   * Create `session` as a fork whose path continues from `origin` (`session.origin`
   * must be set). Writes a number of rows independent of the history length.
   */
  fork(session: SessionRecord): Effect.Effect<SessionRecord, StoreFailure>;

  /** Usage rows of a session (oldest first). */
  usage(sessionId: string): Effect.Effect<readonly UsageRow[], StoreFailure>;
  /** Sessions whose `parentLink.sessionId` is this one. */
  children(sessionId: string): Effect.Effect<readonly SessionRecord[], StoreError>;

  journalGet(key: string): Effect.Effect<JournalEntry | undefined, StoreError>;
  journalPut(entry: JournalEntry): Effect.Effect<void, StoreError>;
  /** Several entries in one transaction (optional: the journal falls back to `journalPut` each). */
  journalPutMany?(entries: readonly JournalEntry[]): Effect.Effect<void, StoreError>;
  journalForTurn(sessionId: string, turnId: string): Effect.Effect<readonly JournalEntry[], StoreError>;

  beginTurn(turn: PendingTurn): Effect.Effect<void, StoreError>;
  pendingTurn(sessionId: string): Effect.Effect<PendingTurn | undefined, StoreError>;
  /** Drop a pending turn and its journal rows without committing (e.g. the caller abandons it). */
  abandonTurn(sessionId: string, turnId: string): Effect.Effect<void, StoreError>;
  /**
   * Count one more resume attempt of the pending turn `turnId` and return the
   * new count (0 when that turn is not pending). One write, before the resume runs.
   */
  countResumeAttempt(sessionId: string, turnId: string): Effect.Effect<number, StoreError>;

  /**
   * Compare-and-set in one transaction: take the session's lease when it is
   * free, expired (`now >= expiresAt`), already ours (`holder`: renewed, its
   * `acquiredAt` kept) or held by `replacing`; otherwise report the holder.
   */
  acquireLease(request: LeaseRequest): Effect.Effect<LeaseAttempt, StoreFailure>;
  /** Heartbeat: extend our lease to `now + ttlMs`. `undefined` when it is no longer ours. */
  renewLease(
    sessionId: string,
    holder: string,
    now: number,
    ttlMs: number,
  ): Effect.Effect<SessionLease | undefined, StoreError>;
  /**
   * Keep the full text of a cut tool output (replacing one under the same
   * session and call id). Removed with the session by `deleteSession`, kept
   * while a fork's path still runs through the session.
   */
  putToolOutput(output: ToolOutputRecord): Effect.Effect<void, StoreFailure>;
  /**
   * A kept output by lash call id, else by provider call id (the latest), of
   * this session or of the sessions its fork origins run through (nearest
   * first). `undefined` when there is none or the session is gone.
   */
  getToolOutput(sessionId: string, callId: string): Effect.Effect<ToolOutputRecord | undefined, StoreError>;

  /**
   * Store bytes as an artifact under their sha256 (stored once: a second put of
   * the same bytes writes nothing and returns the first put's info).
   */
  putArtifact(artifact: ArtifactPut): Effect.Effect<ArtifactInfo, StoreError>;
  /** An artifact's metadata; `undefined` when there is none with this id. */
  artifactInfo(id: string): Effect.Effect<ArtifactInfo | undefined, StoreError>;
  /** An artifact's bytes; `undefined` when there is none with this id. */
  readArtifact(id: string): Effect.Effect<Uint8Array | undefined, StoreError>;
  /**
   * Remove the artifacts that no node of any session (any branch, deleted
   * sessions' kept nodes included) refers to, stored at or before `storedBefore`.
   */
  collectArtifacts(options: ArtifactGcOptions): Effect.Effect<ArtifactGcResult, StoreError>;

  /** Give the lease up (a no-op when another holder has it). */
  releaseLease(sessionId: string, holder: string): Effect.Effect<void, StoreError>;
  /** The session's lease row, expired or not. */
  getLease(sessionId: string): Effect.Effect<SessionLease | undefined, StoreError>;
}

export class SessionStore extends Context.Tag("@lash/core/SessionStore")<SessionStore, SessionStoreShape>() {}

/** A `compaction` protocol node (issue 20): a summary standing for the span before it. */
export const isCompactionNode = (node: GraphNode): boolean =>
  node.kind === "protocol" && (node.payload as { type?: unknown } | null)?.type === "compaction";

/** `path` from its newest compaction node of `frameId` on (the whole path when there is none). */
export function fromLastCompaction(path: readonly GraphNode[], frameId: string): readonly GraphNode[] {
  for (let i = path.length - 1; i >= 0; i--) {
    const n = path[i]!;
    if (n.frameId === frameId && isCompactionNode(n)) return i === 0 ? path : path.slice(i);
  }
  return path;
}
