import type {
  GraphNode,
  LashRuntimeShape,
  PromiseStore,
  SessionRecord,
  SessionStoreShape,
  UsageRow,
} from "@lash/core";
import { Effect } from "effect";
import { loadArtifacts } from "./artifacts.ts";
import {
  EXPORT_SCHEMA_VERSION,
  type ExportedArtifact,
  type ExportedNode,
  type ExportedSession,
  type ExportedUsageRow,
} from "./schema.ts";

/**
 * Where a session is read from: a store (Effect `SessionStoreShape` or the
 * promise `PromiseStore` of `openSqliteStore`) — every branch — or a
 * `LashRuntimeShape`, which offers the active path only (its branches are not
 * reachable through the runtime's read views; pass the store to get them).
 */
export type ExportSource = SessionStoreShape | PromiseStore | LashRuntimeShape;

const settle = <A>(value: unknown): Promise<A> =>
  Effect.isEffect(value)
    ? Effect.runPromise(value as Effect.Effect<A, unknown>)
    : Promise.resolve(value as Promise<A>);

function isStore(source: ExportSource): source is SessionStoreShape | PromiseStore {
  return "sessionNodes" in source;
}

function nodeOf(n: GraphNode, inherited: boolean): ExportedNode {
  return {
    id: n.id,
    parentId: n.parentId,
    frameId: n.frameId,
    kind: n.kind,
    turnId: n.turnId,
    payload: n.payload,
    createdAt: n.createdAt,
    ...(inherited ? { inherited: true } : {}),
  };
}

function usageOf(r: UsageRow): ExportedUsageRow {
  return {
    turnId: r.turnId,
    source: r.source,
    model: r.model,
    usage: r.usage,
    ...(r.costUsd !== undefined ? { costUsd: r.costUsd } : {}),
  };
}

function infoOf(s: SessionRecord): ExportedSession["session"] {
  return {
    id: s.id,
    ...(s.title !== undefined ? { title: s.title } : {}),
    ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
    model: s.model,
    mode: s.mode,
    ...(s.systemPrompt !== undefined ? { systemPrompt: s.systemPrompt } : {}),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    leafId: s.leafId,
    frameId: s.frameId,
    ...(s.origin ? { origin: s.origin } : {}),
    ...(s.parentLink ? { parentLink: s.parentLink } : {}),
    state: s.state,
  };
}

/** Read a session (all branches when the source is a store) and its subagent children into the export model. */
export async function loadSession(
  source: ExportSource,
  sessionId: string,
  depth = 0,
): Promise<ExportedSession> {
  if (depth > 16) throw new Error(`subagent nesting deeper than 16 below ${sessionId}`);
  let record: SessionRecord;
  let nodes: ExportedNode[];
  let usage: readonly UsageRow[];
  let children: readonly SessionRecord[];
  let artifacts: ExportedArtifact[] = [];
  if (isStore(source)) {
    const s = source as SessionStoreShape;
    record = await settle<SessionRecord>(s.getSession(sessionId));
    const own = await settle<readonly GraphNode[]>(s.sessionNodes(sessionId));
    nodes = [];
    if (record.origin) {
      // the fork's shared prefix: the origin path up to the fork point
      const ownIds = new Set(own.map((n) => n.id));
      const path = await settle<readonly GraphNode[]>(s.activePath(sessionId, record.origin.nodeId));
      for (const n of path) if (!ownIds.has(n.id)) nodes.push(nodeOf(n, true));
    }
    for (const n of own) nodes.push(nodeOf(n, false));
    usage = await settle<readonly UsageRow[]>(s.usage(sessionId));
    children = await settle<readonly SessionRecord[]>(s.children(sessionId));
    artifacts = await loadArtifacts(s, nodes);
  } else {
    const rt = source;
    record = await settle<SessionRecord>(rt.getSession(sessionId));
    const path = await settle<readonly GraphNode[]>(rt.chronological(sessionId));
    nodes = path.map((n) => nodeOf(n, n.sessionId !== sessionId));
    usage = (await settle<{ rows: readonly UsageRow[] }>(rt.usage(sessionId))).rows;
    const all = await settle<readonly SessionRecord[]>(rt.listSessions({ includeChildren: true }));
    children = all
      .filter((c) => c.parentLink?.sessionId === sessionId)
      .sort((a, b) => a.createdAt - b.createdAt);
  }
  const kids: ExportedSession[] = [];
  for (const c of children) kids.push(await loadSession(source, c.id, depth + 1));
  return {
    format: "lash-session",
    version: EXPORT_SCHEMA_VERSION,
    session: infoOf(record),
    nodes,
    usage: usage.map(usageOf),
    children: kids,
    ...(artifacts.length > 0 ? { artifacts } : {}),
  };
}
