// MemoryStore: the SessionStore contract held in plain maps. Every operation
// runs synchronously inside one `Effect.suspend`, so each is atomic: it
// validates everything first and mutates only when nothing can fail.
import { sha256BytesHex } from "@lash/sansio";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import {
  type ArtifactInfo,
  type CommitResult,
  fromLastCompaction,
  type GraphNode,
  type JournalEntry,
  type LeaseAttempt,
  type ListOptions,
  type PendingTurn,
  type SessionLease,
  type SessionRecord,
  SessionStore,
  type SessionStoreShape,
  type StoreConflict,
  StoreError,
  type StoreFailure,
  type ToolOutputRecord,
  type TurnCommit,
  type UsageRow,
} from "../store.ts";
import { artifactRefsOf } from "./artifacts.ts";
import {
  duplicateNode,
  foreignNode,
  forkWithoutOrigin,
  nodeNotFound,
  revisionConflict,
  sessionExists,
  sessionNotFound,
  stampKey,
  turnHashConflict,
} from "./errors.ts";
import { decideLease } from "./rows.ts";

interface SessionEntry {
  record: SessionRecord;
  /** Kept only because another session's path runs through its nodes. */
  deleted: boolean;
  /** Creation order, the tie-break of `listSessions`. */
  readonly order: number;
  readonly nodeIds: string[];
}

interface Stamp {
  readonly hash: string;
  readonly headRevision: number;
  readonly leafId: string | null;
}

export const makeMemoryStore = (): Effect.Effect<SessionStoreShape> =>
  Effect.sync(() => {
    const sessions = new Map<string, SessionEntry>();
    const nodes = new Map<string, GraphNode>();
    const stamps = new Map<string, Stamp>();
    const usage = new Map<string, UsageRow[]>();
    const journal = new Map<string, JournalEntry>();
    const pending = new Map<string, PendingTurn>();
    const leases = new Map<string, SessionLease>();
    /** Per session: kept tool outputs by call id, in insertion order (a replaced one moves last). */
    const outputs = new Map<string, Map<string, ToolOutputRecord>>();
    /** Artifacts by id: metadata and a private copy of the bytes. */
    const artifacts = new Map<string, { readonly info: ArtifactInfo; readonly bytes: Uint8Array }>();
    /** Artifact id → the ids of the nodes that referred to it when committed. */
    const artifactRefs = new Map<string, Set<string>>();
    let nodeSeq = 0;
    let sessionOrder = 0;

    const live = (id: string): SessionEntry | undefined => {
      const e = sessions.get(id);
      return e && !e.deleted ? e : undefined;
    };

    const pathFrom = (leafId: string | null): GraphNode[] | undefined => {
      const out: GraphNode[] = [];
      let cur = leafId;
      while (cur !== null) {
        const n = nodes.get(cur);
        if (!n) return out.length === 0 ? undefined : out.reverse();
        out.push(n);
        cur = n.parentId;
      }
      return out.reverse();
    };

    const hasDependents = (id: string): boolean => {
      for (const [otherId, e] of sessions) {
        if (otherId === id) continue;
        if (e.record.origin?.sessionId === id || e.record.parentLink?.sessionId === id) return true;
      }
      return false;
    };

    /** Remove a session row and its nodes; then purge kept ancestors nothing depends on any more. */
    const purge = (id: string): void => {
      const e = sessions.get(id);
      if (!e) return;
      for (const nid of e.nodeIds) nodes.delete(nid);
      sessions.delete(id);
      outputs.delete(id);
      for (const up of [e.record.origin?.sessionId, e.record.parentLink?.sessionId]) {
        if (up === undefined) continue;
        const u = sessions.get(up);
        if (u?.deleted && !hasDependents(up)) purge(up);
      }
    };

    const dropTurnScratch = (sessionId: string, turnId: string): void => {
      for (const [k, j] of journal) if (j.sessionId === sessionId && j.turnId === turnId) journal.delete(k);
      const p = pending.get(sessionId);
      if (p?.turnId === turnId) pending.delete(sessionId);
    };

    const store: SessionStoreShape = {
      createSession: (record) =>
        Effect.suspend(() => {
          if (sessions.has(record.id)) return Effect.fail(sessionExists(record.id));
          sessions.set(record.id, { record, deleted: false, order: sessionOrder++, nodeIds: [] });
          return Effect.succeed(record);
        }),

      getSession: (id) =>
        Effect.suspend(() => {
          const e = live(id);
          return e ? Effect.succeed(e.record) : Effect.fail(sessionNotFound(id));
        }),

      listSessions: (options: ListOptions = {}) =>
        Effect.sync(() => {
          const out = [...sessions.values()]
            .filter(
              (e) =>
                !e.deleted &&
                (options.includeChildren || e.record.parentLink === undefined) &&
                (options.cwd === undefined || e.record.cwd === options.cwd),
            )
            .sort((a, b) => b.record.updatedAt - a.record.updatedAt || b.order - a.order)
            .map((e) => e.record);
          return options.limit !== undefined ? out.slice(0, Math.max(0, options.limit)) : out;
        }),

      updateSession: (id, patch) =>
        Effect.suspend(() => {
          const e = live(id);
          if (!e) return Effect.fail(sessionNotFound(id));
          e.record = {
            ...e.record,
            ...(patch.title !== undefined ? { title: patch.title } : {}),
            updatedAt: patch.updatedAt,
          };
          return Effect.void;
        }),

      deleteSession: (id) =>
        Effect.suspend(() => {
          const e = live(id);
          if (!e) return Effect.fail(sessionNotFound(id));
          for (const [k, j] of journal) if (j.sessionId === id) journal.delete(k);
          pending.delete(id);
          leases.delete(id);
          usage.delete(id);
          for (const k of [...stamps.keys()]) if (k.startsWith(`${id}\u0000`)) stamps.delete(k);
          if (hasDependents(id)) e.deleted = true;
          else purge(id);
          return Effect.void;
        }),

      activePath: (sessionId, leafId) =>
        Effect.suspend((): Effect.Effect<readonly GraphNode[], StoreFailure> => {
          const e = live(sessionId);
          if (!e) return Effect.fail(sessionNotFound(sessionId));
          const leaf = leafId === undefined ? e.record.leafId : leafId;
          const path = pathFrom(leaf);
          return path ? Effect.succeed(path) : Effect.fail(nodeNotFound(leaf ?? "null"));
        }),

      projectionPath: (sessionId, frameId) =>
        Effect.suspend((): Effect.Effect<readonly GraphNode[], StoreFailure> => {
          const e = live(sessionId);
          if (!e) return Effect.fail(sessionNotFound(sessionId));
          const path = pathFrom(e.record.leafId);
          return path
            ? Effect.succeed(fromLastCompaction(path, frameId))
            : Effect.fail(nodeNotFound(e.record.leafId ?? "null"));
        }),

      sessionNodes: (sessionId) =>
        Effect.suspend(() => {
          const e = live(sessionId);
          if (!e) return Effect.fail(sessionNotFound(sessionId));
          return Effect.succeed(e.nodeIds.map((id) => nodes.get(id)!));
        }),

      getNode: (nodeId) => Effect.sync(() => nodes.get(nodeId)),

      commit: (c: TurnCommit) =>
        Effect.suspend((): Effect.Effect<CommitResult, StoreConflict | StoreFailure> => {
          const e = live(c.sessionId);
          if (!e) return Effect.fail(sessionNotFound(c.sessionId));
          const key = stampKey(c.sessionId, c.turnId);
          const stamp = stamps.get(key);
          if (stamp) {
            return stamp.hash === c.hash
              ? Effect.succeed({ headRevision: stamp.headRevision, leafId: stamp.leafId, duplicate: true })
              : Effect.fail(turnHashConflict(c.sessionId, c.turnId));
          }
          const actual = e.record.headRevision;
          if (actual !== c.expectedRevision)
            return Effect.fail(revisionConflict(c.sessionId, c.expectedRevision, actual));
          const fresh = new Set<string>();
          for (const n of c.nodes) {
            if (n.sessionId !== c.sessionId) return Effect.fail(foreignNode(n.id, n.sessionId, c.sessionId));
            if (nodes.has(n.id) || fresh.has(n.id)) return Effect.fail(duplicateNode(n.id));
            fresh.add(n.id);
          }
          if (c.leafId !== null && !nodes.has(c.leafId) && !fresh.has(c.leafId))
            return Effect.fail(nodeNotFound(c.leafId));
          // Nothing below can fail.
          for (const n of c.nodes) {
            nodes.set(n.id, { ...n, seq: ++nodeSeq });
            e.nodeIds.push(n.id);
            for (const a of artifactRefsOf(n.payload)) {
              const refs = artifactRefs.get(a) ?? new Set<string>();
              artifactRefs.set(a, refs);
              refs.add(n.id);
            }
          }
          const headRevision = actual + 1;
          e.record = {
            ...e.record,
            leafId: c.leafId,
            headRevision,
            turnCount: e.record.turnCount + 1,
            updatedAt: c.updatedAt,
            ...(c.title !== undefined ? { title: c.title } : {}),
            ...(c.frameId !== undefined ? { frameId: c.frameId } : {}),
            ...(c.model !== undefined ? { model: c.model } : {}),
            ...(c.state !== undefined ? { state: c.state } : {}),
          };
          if (c.usage.length > 0) {
            const rows = usage.get(c.sessionId) ?? [];
            rows.push(...c.usage);
            usage.set(c.sessionId, rows);
          }
          stamps.set(key, { hash: c.hash, headRevision, leafId: c.leafId });
          dropTurnScratch(c.sessionId, c.turnId);
          return Effect.succeed({ headRevision, leafId: c.leafId, duplicate: false });
        }),

      setLeaf: (sessionId, leafId, expectedRevision, updatedAt) =>
        Effect.suspend((): Effect.Effect<CommitResult, StoreConflict | StoreFailure> => {
          const e = live(sessionId);
          if (!e) return Effect.fail(sessionNotFound(sessionId));
          const actual = e.record.headRevision;
          if (actual !== expectedRevision)
            return Effect.fail(revisionConflict(sessionId, expectedRevision, actual));
          if (leafId !== null && !nodes.has(leafId)) return Effect.fail(nodeNotFound(leafId));
          const headRevision = actual + 1;
          e.record = { ...e.record, leafId, headRevision, updatedAt };
          return Effect.succeed({ headRevision, leafId, duplicate: false });
        }),

      fork: (session) =>
        Effect.suspend((): Effect.Effect<SessionRecord, StoreFailure> => {
          const origin = session.origin;
          if (!origin) return Effect.fail(forkWithoutOrigin(session.id));
          if (!live(origin.sessionId)) return Effect.fail(sessionNotFound(origin.sessionId));
          if (origin.nodeId !== null && !nodes.has(origin.nodeId))
            return Effect.fail(nodeNotFound(origin.nodeId));
          if (sessions.has(session.id)) return Effect.fail(sessionExists(session.id));
          const record: SessionRecord = { ...session, leafId: origin.nodeId };
          sessions.set(record.id, { record, deleted: false, order: sessionOrder++, nodeIds: [] });
          return Effect.succeed(record);
        }),

      usage: (sessionId) =>
        Effect.suspend(() =>
          live(sessionId)
            ? Effect.succeed([...(usage.get(sessionId) ?? [])])
            : Effect.fail(sessionNotFound(sessionId)),
        ),

      children: (sessionId) =>
        Effect.sync(() =>
          [...sessions.values()]
            .filter((e) => !e.deleted && e.record.parentLink?.sessionId === sessionId)
            .sort((a, b) => a.record.createdAt - b.record.createdAt || a.order - b.order)
            .map((e) => e.record),
        ),

      journalGet: (key) => Effect.sync(() => journal.get(key)),

      journalPut: (entry) =>
        Effect.sync(() => {
          journal.set(entry.key, entry);
        }),

      journalForTurn: (sessionId, turnId) =>
        Effect.sync(() =>
          [...journal.values()].filter((j) => j.sessionId === sessionId && j.turnId === turnId),
        ),

      beginTurn: (turn) =>
        Effect.suspend(() => {
          if (!live(turn.sessionId)) {
            return Effect.fail(
              new StoreError({ message: `cannot begin a turn: session ${turn.sessionId} not found` }),
            );
          }
          pending.set(turn.sessionId, { ...turn, resumeAttempts: turn.resumeAttempts ?? 0 });
          return Effect.void;
        }),

      pendingTurn: (sessionId) => Effect.sync(() => pending.get(sessionId)),

      abandonTurn: (sessionId, turnId) => Effect.sync(() => dropTurnScratch(sessionId, turnId)),

      countResumeAttempt: (sessionId, turnId) =>
        Effect.sync(() => {
          const p = pending.get(sessionId);
          if (p?.turnId !== turnId) return 0;
          const attempts = (p.resumeAttempts ?? 0) + 1;
          pending.set(sessionId, { ...p, resumeAttempts: attempts });
          return attempts;
        }),

      acquireLease: (req) =>
        Effect.suspend((): Effect.Effect<LeaseAttempt, StoreFailure> => {
          if (!live(req.sessionId)) return Effect.fail(sessionNotFound(req.sessionId));
          const attempt = decideLease(leases.get(req.sessionId), req);
          if (attempt.acquired) leases.set(req.sessionId, attempt.lease);
          return Effect.succeed(attempt);
        }),

      renewLease: (sessionId, holder, now, ttlMs) =>
        Effect.sync(() => {
          const current = leases.get(sessionId);
          if (current?.holder !== holder) return undefined;
          const lease = { ...current, heartbeatAt: now, expiresAt: now + ttlMs };
          leases.set(sessionId, lease);
          return lease;
        }),

      putToolOutput: (o) =>
        Effect.suspend(() => {
          if (!live(o.sessionId)) return Effect.fail(sessionNotFound(o.sessionId));
          const own = outputs.get(o.sessionId) ?? new Map<string, ToolOutputRecord>();
          outputs.set(o.sessionId, own);
          own.delete(o.callId);
          own.set(o.callId, o);
          return Effect.void;
        }),

      getToolOutput: (sessionId, callId) =>
        Effect.sync(() => {
          if (!live(sessionId)) return undefined;
          const lineage: string[] = [];
          for (let s: string | undefined = sessionId; s !== undefined && !lineage.includes(s); ) {
            lineage.push(s);
            s = sessions.get(s)?.record.origin?.sessionId;
          }
          for (const s of lineage) {
            const hit = outputs.get(s)?.get(callId);
            if (hit) return hit;
          }
          for (const s of lineage) {
            const own = [...(outputs.get(s)?.values() ?? [])];
            for (let i = own.length - 1; i >= 0; i--) if (own[i]!.providerCallId === callId) return own[i];
          }
          return undefined;
        }),

      putArtifact: (a) =>
        Effect.sync(() => {
          const id = sha256BytesHex(a.bytes);
          const had = artifacts.get(id);
          if (had) return had.info;
          const info: ArtifactInfo = {
            id,
            size: a.bytes.length,
            mediaType: a.mediaType,
            createdAt: a.createdAt,
          };
          artifacts.set(id, { info, bytes: Uint8Array.from(a.bytes) });
          return info;
        }),

      artifactInfo: (id) => Effect.sync(() => artifacts.get(id)?.info),

      readArtifact: (id) =>
        Effect.sync(() => {
          const a = artifacts.get(id);
          return a ? Uint8Array.from(a.bytes) : undefined;
        }),

      collectArtifacts: ({ storedBefore }) =>
        Effect.sync(() => {
          const removed: string[] = [];
          let bytes = 0;
          // a turn not yet committed refers to its artifacts from its journal
          const journaled = new Set<string>();
          for (const j of journal.values())
            if (j.outcome !== undefined) for (const id of artifactRefsOf(j.outcome)) journaled.add(id);
          for (const [id, a] of artifacts) {
            const refs = artifactRefs.get(id);
            if (refs) for (const nid of refs) if (!nodes.has(nid)) refs.delete(nid);
            if ((refs?.size ?? 0) > 0 || journaled.has(id) || a.info.createdAt > storedBefore) continue;
            artifacts.delete(id);
            artifactRefs.delete(id);
            removed.push(id);
            bytes += a.info.size;
          }
          return { removed, bytes };
        }),

      releaseLease: (sessionId, holder) =>
        Effect.sync(() => {
          if (leases.get(sessionId)?.holder === holder) leases.delete(sessionId);
        }),

      getLease: (sessionId) => Effect.sync(() => leases.get(sessionId)),
    };
    return store;
  });

/** A fresh, empty in-memory store per layer build. */
export const MemoryStore: Layer.Layer<SessionStore> = Layer.effect(SessionStore, makeMemoryStore());
