import type { Message, ToolResultPart, Usage } from "@lash/sansio";
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
  /** Ids of every tool call (all branches). */
  readonly calls: ReadonlySet<string>;
  /** Tool results by call id (all branches). */
  readonly results: ReadonlyMap<string, ToolResultPart>;
  /** Subagent sessions by the call id that spawned them. */
  readonly childByCall: ReadonlyMap<string, ExportedSession>;
  readonly turnUsage: ReadonlyMap<string, { readonly usage: Usage; readonly costUsd?: number }>;
  /** This session's ledger plus subagents not already rolled up into it. */
  readonly total: { readonly usage: Usage; readonly costUsd?: number };
  readonly models: readonly string[];
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
  const results = new Map<string, ToolResultPart>();
  const calls = new Set<string>();
  for (const n of exported.nodes) {
    const m = messageOf(n);
    if (!m) continue;
    for (const p of m.parts) {
      if (p.type === "toolResult") results.set(p.callId, p);
      else if (p.type === "toolCall") calls.add(p.id);
    }
  }
  const childByCall = new Map<string, ExportedSession>();
  for (const c of exported.children)
    if (c.session.parentLink) childByCall.set(c.session.parentLink.callId, c);
  const turnUsage = new Map<string, { usage: Usage; costUsd?: number }>();
  for (const r of exported.usage) {
    const t = turnUsage.get(r.turnId) ?? { usage: {} };
    t.usage = addUsage(t.usage, r.usage);
    if (r.costUsd !== undefined) t.costUsd = (t.costUsd ?? 0) + r.costUsd;
    turnUsage.set(r.turnId, t);
  }
  const models = [...new Set([exported.session.model, ...exported.usage.map((r) => r.model)])];
  return {
    exported,
    byId,
    childrenOf,
    activePath: pathTo(byId, exported.session.leafId),
    leaves,
    calls,
    results,
    childByCall,
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
