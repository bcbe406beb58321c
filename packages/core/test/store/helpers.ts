// Builders for store tests: sessions, nodes and commits with sensible defaults.
import type { NewNode, SessionRecord, TurnCommit } from "../../src/store.ts";

export function session(id: string, over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    model: "mock/model",
    mode: "standard",
    createdAt: 1_000,
    updatedAt: 1_000,
    leafId: null,
    headRevision: 0,
    turnCount: 0,
    frameId: "f0",
    state: {},
    ...over,
  };
}

export function node(
  id: string,
  sessionId: string,
  parentId: string | null,
  over: Partial<NewNode> = {},
): NewNode {
  return {
    id,
    sessionId,
    parentId,
    frameId: "f0",
    kind: "message",
    turnId: null,
    payload: { id, role: "user", parts: [{ type: "text", text: `text of ${id}` }] },
    createdAt: 2_000,
    ...over,
  };
}

/** A chain of `count` nodes `${prefix}0..` under `parentId`. */
export function chain(
  prefix: string,
  sessionId: string,
  parentId: string | null,
  count: number,
  turnId: string | null = null,
): NewNode[] {
  const out: NewNode[] = [];
  let parent = parentId;
  for (let i = 0; i < count; i++) {
    const id = `${prefix}${i}`;
    out.push(node(id, sessionId, parent, { turnId }));
    parent = id;
  }
  return out;
}

export function turn(
  sessionId: string,
  turnId: string,
  expectedRevision: number,
  nodes: readonly NewNode[],
  over: Partial<TurnCommit> = {},
): TurnCommit {
  return {
    sessionId,
    turnId,
    hash: `hash-${turnId}`,
    expectedRevision,
    nodes,
    leafId: nodes.length > 0 ? nodes[nodes.length - 1]!.id : null,
    usage: [],
    updatedAt: 3_000,
    ...over,
  };
}

export const ids = (nodes: readonly { readonly id: string }[]): string[] => nodes.map((n) => n.id);
