import type { Message, ToolCallPart, ToolResultPart, Usage } from "@lash/sansio";
import type { ExportedNode, ExportedSession } from "./schema.ts";

/** Derived structure shared by the HTML and Markdown renderers. */
export interface SessionView {
  readonly exported: ExportedSession;
  readonly byId: ReadonlyMap<string, ExportedNode>;
  /** Children of each node (key `null` = roots), in insertion order. */
  readonly childrenOf: ReadonlyMap<string | null, readonly ExportedNode[]>;
  /** Root → leaf of the session's leaf. */
  readonly activePath: readonly ExportedNode[];
  /** Nodes without children: one per branch. */
  readonly leaves: readonly ExportedNode[];
  /**
   * A call's result (all branches), paired by lash's call id, or — for calls recorded before lash
   * gave them one — by the provider's id within the same turn, in order (never across turns: providers
   * reuse ids).
   */
  readonly resultOf: (call: ToolCallPart) => ToolResultPart | undefined;
  /** The subagent session a call spawned. */
  readonly childOf: (call: ToolCallPart) => ExportedSession | undefined;
  /** Whether a result's call is in the session (a result without one is shown on its own). */
  readonly hasCall: (result: ToolResultPart) => boolean;
  readonly turnUsage: ReadonlyMap<string, { readonly usage: Usage; readonly costUsd?: number }>;
  /** This session's ledger plus subagents not already rolled up into it. */
  readonly total: { readonly usage: Usage; readonly costUsd?: number };
  readonly models: readonly string[];
  /** Messages a compaction replaced in the model's view (they stay in the graph): node id → the compaction node's id. */
  readonly compactedBy: ReadonlyMap<string, string>;
}

export function addUsage(a: Usage, b: Usage): Usage {
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {};
  for (const k of ["input", "output", "reasoning", "cacheRead", "cacheWrite"] as const) {
    const x = a[k];
    const y = b[k];
    if (x !== undefined || y !== undefined) out[k] = (x ?? 0) + (y ?? 0);
  }
  return out;
}

export function messageOf(node: ExportedNode): Message | undefined {
  if (node.kind !== "message") return undefined;
  const m = node.payload as Partial<Message> | null;
  return m && Array.isArray(m.parts) && typeof m.role === "string" ? (m as Message) : undefined;
}

export function pathTo(byId: ReadonlyMap<string, ExportedNode>, leaf: string | null): ExportedNode[] {
  const out: ExportedNode[] = [];
  const seen = new Set<string>();
  let cur = leaf;
  while (cur !== null && !seen.has(cur)) {
    seen.add(cur);
    const n = byId.get(cur);
    if (!n) break;
    out.push(n);
    cur = n.parentId;
  }
  return out.reverse();
}

function totalOf(s: ExportedSession): { usage: Usage; costUsd?: number } {
  let usage: Usage = {};
  let cost: number | undefined;
  for (const r of s.usage) {
    usage = addUsage(usage, r.usage);
    if (r.costUsd !== undefined) cost = (cost ?? 0) + r.costUsd;
  }
  for (const c of s.children) {
    if (s.usage.some((r) => r.source === `agent:${c.session.id}`)) continue;
    const t = totalOf(c);
    usage = addUsage(usage, t.usage);
    if (t.costUsd !== undefined) cost = (cost ?? 0) + t.costUsd;
  }
  return cost !== undefined ? { usage, costUsd: cost } : { usage };
}

export function buildView(exported: ExportedSession): SessionView {
  const byId = new Map<string, ExportedNode>();
  const childrenOf = new Map<string | null, ExportedNode[]>();
  for (const n of exported.nodes) byId.set(n.id, n);
  for (const n of exported.nodes) {
    const key = n.parentId !== null && byId.has(n.parentId) ? n.parentId : null;
    const list = childrenOf.get(key) ?? [];
    list.push(n);
    childrenOf.set(key, list);
  }
  const leaves = exported.nodes.filter((n) => !childrenOf.has(n.id));
  // pairing keys: lash's id, else `{turn}|{provider id}|{k}` for the k-th use of that id in the turn
  const keyOf = new WeakMap<object, string>();
  const results = new Map<string, ToolResultPart>();
  const calls = new Set<string>();
  const seen = new Map<string, number>();
  const nth = (kind: string, turn: string, id: string): string => {
    const base = `${turn}|${id}`;
    const k = seen.get(`${kind}|${base}`) ?? 0;
    seen.set(`${kind}|${base}`, k + 1);
    return `${base}|${k}`;
  };
  for (const n of exported.nodes) {
    const m = messageOf(n);
    if (!m) continue;
    const turn = n.turnId ?? "";
    for (const p of m.parts) {
      if (p.type === "toolResult") {
        const key = p.lashCallId ?? nth("result", turn, p.callId);
        keyOf.set(p, key);
        results.set(key, p);
      } else if (p.type === "toolCall") {
        const key = p.lashCallId ?? nth("call", turn, p.id);
        keyOf.set(p, key);
        calls.add(key);
      }
    }
  }
  const childByCall = new Map<string, ExportedSession>();
  const childByProviderId = new Map<string, ExportedSession>();
  for (const c of exported.children) {
    const link = c.session.parentLink;
    if (!link) continue;
    const spawn = c.session.state["subagents.spawn"] as
      | { parentTurnId?: unknown; lashCallId?: unknown }
      | undefined;
    if (typeof spawn?.lashCallId === "string") childByCall.set(spawn.lashCallId, c);
    if (typeof spawn?.parentTurnId === "string") childByCall.set(`${spawn.parentTurnId}|${link.callId}|0`, c);
    childByProviderId.set(link.callId, c);
  }
  const turnUsage = new Map<string, { usage: Usage; costUsd?: number }>();
  for (const r of exported.usage) {
    const t = turnUsage.get(r.turnId) ?? { usage: {} };
    t.usage = addUsage(t.usage, r.usage);
    if (r.costUsd !== undefined) t.costUsd = (t.costUsd ?? 0) + r.costUsd;
    turnUsage.set(r.turnId, t);
  }
  const models = [...new Set([exported.session.model, ...exported.usage.map((r) => r.model)])];
  // each compaction's span: from its last replaced node back to its first, through parents
  const compactedBy = new Map<string, string>();
  for (const n of exported.nodes) {
    const c = compactionOf(n);
    if (!c) continue;
    let cur: string | null = c.lastNodeId;
    for (let guard = 0; cur !== null && guard < exported.nodes.length; guard++) {
      const node = byId.get(cur);
      if (!node) break;
      if (node.kind === "message" && !compactedBy.has(node.id)) compactedBy.set(node.id, n.id);
      if (node.id === c.firstNodeId) break;
      cur = node.parentId;
    }
  }
  return {
    compactedBy,
    exported,
    byId,
    childrenOf,
    activePath: pathTo(byId, exported.session.leafId),
    leaves,
    resultOf: (call) => {
      const key = keyOf.get(call);
      return key !== undefined ? results.get(key) : undefined;
    },
    childOf: (call) => {
      const key = keyOf.get(call);
      const byKey = key !== undefined ? childByCall.get(key) : undefined;
      if (byKey) return byKey;
      // a child recorded with neither lash's id nor its parent's turn: the provider's id alone
      const c = childByProviderId.get(call.id);
      const spawn = c?.session.state["subagents.spawn"] as { parentTurnId?: unknown } | undefined;
      return c && typeof spawn?.parentTurnId !== "string" ? c : undefined;
    },
    hasCall: (result) => {
      const key = keyOf.get(result);
      return key !== undefined && calls.has(key);
    },
    turnUsage,
    total: totalOf(exported),
    models,
  };
}

/** `12345` → `12,345` (toLocaleString is slow enough to matter on 10,000-node exports). */
export function groupDigits(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function formatTokens(u: Usage): string {
  const parts = [`${groupDigits(u.input ?? 0)} in`, `${groupDigits(u.output ?? 0)} out`];
  if (u.cacheRead) parts.push(`${groupDigits(u.cacheRead)} cached`);
  if (u.reasoning) parts.push(`${groupDigits(u.reasoning)} reasoning`);
  return parts.join(" · ");
}

export function formatCost(c: number | undefined): string {
  if (c === undefined) return "cost unknown";
  return c >= 0.01 ? `$${c.toFixed(2)}` : `$${c.toFixed(4)}`;
}

export function formatTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
}

/** Diffs a tool left in its details (`details.diff`, `details.files[].diff`). */
export function diffsOf(details: unknown): { path?: string; diff: string }[] {
  if (typeof details !== "object" || details === null) return [];
  const d = details as { diff?: unknown; path?: unknown; files?: unknown };
  const out: { path?: string; diff: string }[] = [];
  if (Array.isArray(d.files)) {
    for (const f of d.files) {
      const file = f as { diff?: unknown; path?: unknown };
      if (typeof file?.diff === "string")
        out.push({ diff: file.diff, ...(typeof file.path === "string" ? { path: file.path } : {}) });
    }
  }
  if (out.length === 0 && typeof d.diff === "string")
    out.push({ diff: d.diff, ...(typeof d.path === "string" ? { path: d.path } : {}) });
  return out;
}

/** How a call ended, as a reviewer reads it: a non-zero exit, a tool error, a cancelled or lost call are failures. */
export interface CallStatus {
  readonly failed: boolean;
  /** `ok`, `exit 3`, `error`, `cancelled`, `interrupted`, `timed out`, `killed by SIGTERM`, `no result`. */
  readonly label: string;
}

export function callStatus(r: ToolResultPart | undefined): CallStatus {
  if (!r) return { failed: true, label: "no result" };
  const v = (typeof r.value === "object" && r.value !== null ? r.value : {}) as {
    exitCode?: unknown;
    signal?: unknown;
    timedOut?: unknown;
  };
  const first = r.content[0]?.type === "text" ? r.content[0].text : "";
  if (v.timedOut === true) return { failed: true, label: "timed out" };
  if (typeof v.exitCode === "number" && v.exitCode !== 0)
    return { failed: true, label: `exit ${v.exitCode}` };
  if (typeof v.signal === "string" && v.signal !== "")
    return { failed: true, label: `killed by ${v.signal}` };
  if (r.isError) {
    if (/^Cancelled\b/.test(first) || /\bwas cancelled\b/.test(first))
      return { failed: true, label: "cancelled" };
    if (/\binterrupted\b/.test(first)) return { failed: true, label: "interrupted" };
    return { failed: true, label: "error" };
  }
  return { failed: false, label: typeof v.exitCode === "number" ? "exit 0" : "ok" };
}

export function resultText(r: ToolResultPart): string {
  return (r.full ?? r.content)
    .map((c) => (c.type === "text" ? c.text : `[${c.mediaType} attachment]`))
    .join("");
}

export function prettyArgs(argumentsText: string): string {
  try {
    return JSON.stringify(JSON.parse(argumentsText), null, 2);
  } catch {
    return argumentsText;
  }
}

/** A compaction as the graph keeps it (core's `CompactionPayload`, a `protocol` node). */
export interface CompactionView {
  readonly firstNodeId: string;
  readonly lastNodeId: string;
  readonly replaced: number;
  readonly summary: string;
  readonly model: string;
  readonly stages: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly trigger: "threshold" | "manual";
}

/** The compaction a node records, if it is one. */
export function compactionOf(node: ExportedNode): CompactionView | undefined {
  if (node.kind !== "protocol") return undefined;
  const p = node.payload as Partial<CompactionView> & { type?: unknown };
  if (p?.type !== "compaction" || typeof p.summary !== "string" || typeof p.lastNodeId !== "string")
    return undefined;
  return p as CompactionView;
}

/** `12 messages summarised in 3 stages by openai/gpt-5 · ~9,800 → ~700 tokens` — one line. */
export function compactionSummary(c: CompactionView): string {
  return (
    `${c.replaced} messages summarised in ${c.stages} stage${c.stages === 1 ? "" : "s"} by ${c.model}` +
    `${c.trigger === "manual" ? " (asked for)" : " (context threshold)"} · ~${c.tokensBefore} → ~${c.tokensAfter} tokens`
  );
}

/** A handoff link (core's `HandoffPayload`, a `protocol` node): to the successor session, or from the predecessor. */
export interface HandoffView {
  readonly to?: string;
  readonly from?: string;
  readonly compactionNodeId: string;
}

/** The handoff link a node records, if it is one. */
export function handoffOf(node: ExportedNode): HandoffView | undefined {
  if (node.kind !== "protocol") return undefined;
  const p = node.payload as Partial<HandoffView> & { type?: unknown };
  if (p?.type !== "handoff" || (typeof p.to !== "string" && typeof p.from !== "string")) return undefined;
  return p as HandoffView;
}

/** `the session continues in ses_… (handoff)` or `this session continues ses_… (handoff)` — one line. */
export function handoffSummary(h: HandoffView): string {
  return h.to !== undefined
    ? `the session continues in ${h.to}, opened by the summary above`
    : `this session continues ${h.from}; its summary is the first message`;
}

/** One approval decision as the graph keeps it (core's `ApprovalRecord`, a `protocol` node). */
export interface ApprovalView {
  readonly requestId: string;
  readonly callId: string;
  readonly tool: string;
  readonly decision: "approve" | "deny";
  readonly by: string;
  readonly scope?: "once" | "session";
  readonly edited?: boolean;
  readonly reason?: string;
  readonly layer?: string;
  readonly argsHash?: string;
  readonly previewHash?: string;
  readonly at: number;
}

/** The approval decision a node holds, if it is one. */
export function approvalOf(node: ExportedNode): ApprovalView | undefined {
  if (node.kind !== "protocol") return undefined;
  const p = node.payload as Partial<ApprovalView> & { type?: unknown };
  if (
    p?.type !== "approval" ||
    typeof p.tool !== "string" ||
    (p.decision !== "approve" && p.decision !== "deny")
  )
    return undefined;
  return p as ApprovalView;
}

/** `write approved by user for the session (edited) · layer: global config · why` — one line. */
export function approvalSummary(a: ApprovalView): string {
  const verb = a.decision === "approve" ? "approved" : "denied";
  const scope = a.decision === "approve" && a.scope === "session" ? " for the session" : "";
  const bits = [`${a.tool} ${verb} by ${a.by}${scope}${a.edited ? " (arguments edited)" : ""}`];
  if (a.layer) bits.push(`policy: ${a.layer}`);
  if (a.reason) bits.push(a.reason);
  return bits.join(" · ");
}
