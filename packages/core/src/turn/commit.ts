import {
  costOf,
  hashValue,
  type Message,
  type ModelInfo,
  messageText,
  type TurnOutcome,
  type Usage,
} from "@lash/sansio";
import { type ApprovalRecord, approvalNodes } from "../approval.ts";
import type { NewNode, SessionRecord, TurnCommit, UsageRow } from "../store.ts";
import type { ToolUsage } from "../tool.ts";

export interface CommitInput {
  readonly session: SessionRecord;
  readonly turnId: string;
  /** The user's input of the turn (the title is taken from it when the session has none). */
  readonly input: readonly Message[];
  readonly messages: readonly Message[];
  readonly outcome: TurnOutcome;
  readonly usage: Usage;
  readonly extraUsage: readonly ToolUsage[];
  readonly info: ModelInfo | undefined;
  /** Plugins' snapshots by plugin name (absent: unchanged). */
  readonly snapshots: { readonly [plugin: string]: unknown };
  readonly expectedRevision: number;
  readonly now: number;
  /** The turn's approval decisions (each becomes a `protocol` node after the message that made the call). */
  readonly approvals?: readonly ApprovalRecord[];
  /** A compaction node made at the start of the turn: committed first, on the session's leaf. */
  readonly compaction?: NewNode;
  /** Compactions made between the turn's model rounds, each committed after the message `afterMessageId`. */
  readonly midCompactions?: readonly { readonly afterMessageId: string; readonly node: NewNode }[];
}

/**
 * The atomic unit of a finished turn, built without effects: its messages as nodes on
 * the session's leaf, its approval decisions, a frame node after a frame switch, the usage rows (the turn's own
 * and what tools reported), plugin state, the title, and the idempotency hash.
 */
export function buildCommit(c: CommitInput): {
  readonly commit: TurnCommit;
  readonly costUsd: number | undefined;
} {
  const { session, turnId, outcome } = c;
  const sessionId = session.id;
  let parent = session.leafId;
  const nodes: NewNode[] = [];
  const approvals = c.approvals?.length ? approvalNodes(c.approvals, c.messages) : undefined;
  let approvalCount = 0;
  if (c.compaction) {
    nodes.push({ ...c.compaction, parentId: parent });
    parent = c.compaction.id;
  }
  const pushApprovals = (records: readonly ApprovalRecord[] | undefined) => {
    for (const rec of records ?? []) {
      const id = `${turnId}.approval${++approvalCount}`;
      nodes.push({
        id,
        sessionId,
        parentId: parent,
        frameId: session.frameId,
        kind: "protocol",
        turnId,
        payload: rec,
        createdAt: rec.at,
      });
      parent = id;
    }
  };
  // compactions between this turn's model rounds: each after the last message it replaced
  const mid = c.midCompactions ?? [];
  const ids = new Set(c.messages.map((m) => m.id));
  const pushMid = (after: string | undefined) => {
    for (const m of mid) {
      if (after === undefined ? ids.has(m.afterMessageId) : m.afterMessageId !== after) continue;
      nodes.push({ ...m.node, parentId: parent });
      parent = m.node.id;
    }
  };
  pushMid(undefined);
  for (const message of c.messages) {
    nodes.push({
      id: message.id,
      sessionId,
      parentId: parent,
      frameId: session.frameId,
      kind: "message",
      turnId,
      payload: message,
      createdAt: c.now,
    });
    parent = message.id;
    if (approvals) pushApprovals(approvals.after.get(message.id));
    pushMid(message.id);
  }
  if (approvals) pushApprovals(approvals.rest);
  let frameId: string | undefined;
  if (outcome.type === "frameSwitch") {
    frameId = outcome.frameId;
    nodes.push({
      id: `${turnId}.frame`,
      sessionId,
      parentId: parent,
      frameId: outcome.frameId,
      kind: "frame",
      turnId,
      payload: {
        frameId: outcome.frameId,
        previous: session.frameId,
        task: outcome.task,
        seed: outcome.seed ?? null,
        reason: "continue_as",
      },
      createdAt: c.now,
    });
    parent = `${turnId}.frame`;
  }
  const costUsd = costOf(c.usage, c.info?.pricing);
  const usage: UsageRow[] =
    Object.keys(c.usage).length > 0
      ? [
          {
            turnId,
            source: "turn",
            model: session.model,
            usage: c.usage,
            ...(costUsd !== undefined ? { costUsd } : {}),
          },
        ]
      : [];
  for (const u of c.extraUsage) usage.push({ turnId, ...u });
  const state = Object.keys(c.snapshots).length > 0 ? { ...session.state, ...c.snapshots } : undefined;
  const firstText = c.input.map(messageText).join(" ").trim();
  const title = session.title ?? (firstText ? firstText.replace(/\s+/g, " ").slice(0, 80) : undefined);
  return {
    costUsd,
    commit: {
      sessionId,
      turnId,
      hash: hashValue({
        turnId,
        messages: c.messages,
        outcome,
        ...(c.compaction ? { compaction: c.compaction.payload } : {}),
      }),
      expectedRevision: c.expectedRevision,
      nodes,
      leafId: parent,
      usage,
      updatedAt: c.now,
      ...(title !== undefined ? { title } : {}),
      ...(frameId !== undefined ? { frameId } : {}),
      ...(state !== undefined ? { state } : {}),
    },
  };
}
