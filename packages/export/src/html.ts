import type { Message, Part, ToolCallPart, ToolResultPart } from "@lash/sansio";
import { inlineArtifacts } from "./artifacts.ts";
import { escapeHtml, highlightCode, highlightDiff, renderMarkdown } from "./markdown.ts";
import type { ExportedNode, ExportedSession } from "./schema.ts";
import {
  approvalOf,
  approvalSummary,
  buildView,
  type CallStatus,
  callStatus,
  compactionOf,
  compactionSummary,
  diffsOf,
  formatCost,
  formatTime,
  formatTokens,
  groupDigits,
  handoffOf,
  handoffSummary,
  messageOf,
  prettyArgs,
  resultText,
  type SessionView,
} from "./view.ts";

export interface HtmlOptions {
  /** Page title (default: the session's title). */
  readonly title?: string;
  /** Longest tool result shown in full, in characters (default 50,000); the rest is cut with a note. */
  readonly maxResultChars?: number;
}

/** The RLM driver's record of a cell's `finish(value)` (a result part, not a tool operation). */
const FINISH_RECORD = "lashlang.finish";

const md = (text: string) =>
  renderMarkdown(text, (code, lang) => (lang ? highlightCode(code, lang) : escapeHtml(code)));

function clip(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n… [${groupDigits(text.length - max)} more characters not shown]`;
}

function argsSummary(argumentsText: string): string {
  try {
    const v = JSON.parse(argumentsText) as unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const entries = Object.entries(v as Record<string, unknown>).slice(0, 3);
      const s = entries
        .map(
          ([k, x]) =>
            `${k}: ${typeof x === "string" ? JSON.stringify(x.length > 60 ? `${x.slice(0, 60)}…` : x) : JSON.stringify(x)?.slice(0, 60)}`,
        )
        .join(", ");
      return s.length > 140 ? `${s.slice(0, 140)}…` : s;
    }
    return JSON.stringify(v).slice(0, 140);
  } catch {
    return argumentsText.slice(0, 140);
  }
}

interface Ctx {
  readonly view: SessionView;
  readonly maxResult: number;
  readonly depth: number;
  readonly turnLabel: ReadonlyMap<string, number>;
}

function renderAttachment(p: Extract<Part, { type: "attachment" }>): string {
  if (p.data && /^image\/(png|jpeg|gif|webp)$/.test(p.mediaType))
    return `<figure class="attachment"><img alt="${escapeHtml(p.name ?? "image")}" src="data:${p.mediaType};base64,${escapeHtml(p.data)}"><figcaption>${escapeHtml(p.name ?? p.mediaType)}</figcaption></figure>`;
  return `<div class="attachment">📎 ${escapeHtml(p.name ?? p.ref ?? "attachment")} <span class="muted">(${escapeHtml(p.mediaType)})</span></div>`;
}

function renderResult(r: ToolResultPart | undefined, ctx: Ctx): string {
  if (!r)
    return `<div class="label">Result</div><div class="muted">No result recorded (the call was interrupted).</div>`;
  const text = resultText(r);
  const diffs = diffsOf(r.details);
  // a result that already contains its diff is coloured in place; other diffs follow it
  const inline = diffs.some((d) => d.diff.trim() !== "" && text.includes(d.diff.trim()));
  const shown = clip(text, ctx.maxResult);
  let out = `<div class="label">${r.isError ? "Error" : "Result"}</div><pre class="result${r.isError ? " err" : ""}">${inline ? highlightDiff(shown) : escapeHtml(shown)}</pre>`;
  for (const c of r.content) if (c.type === "attachment") out += renderAttachment(c);
  for (const d of diffs) {
    if (text.includes(d.diff.trim())) continue;
    out += `<div class="label">Diff${d.path ? ` · ${escapeHtml(d.path)}` : ""}</div><pre class="diff">${highlightDiff(clip(d.diff, ctx.maxResult))}</pre>`;
  }
  return out;
}

/** One line of a result for the card's summary: the first non-blank line, cut. */
function previewOf(r: ToolResultPart | undefined): string {
  if (!r) return "";
  const line =
    resultText(r)
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "";
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

function statusMarks(st: CallStatus): { cls: "ok" | "err"; icon: string; pill: string } {
  return st.failed
    ? {
        cls: "err",
        icon: "✗",
        pill: `<span class="pill status-err" title="this call failed">${escapeHtml(st.label)}</span>`,
      }
    : {
        cls: "ok",
        icon: "✓",
        pill: st.label === "ok" ? "" : `<span class="pill status-ok">${escapeHtml(st.label)}</span>`,
      };
}

function renderToolCall(call: ToolCallPart, ctx: Ctx): string {
  const result = ctx.view.resultOf(call);
  const child = ctx.view.childOf(call);
  const st = statusMarks(callStatus(result));
  const preview = previewOf(result);
  let body = `<div class="label">Arguments</div><pre class="json">${highlightCode(prettyArgs(call.argumentsText), "json")}</pre>`;
  body += renderResult(result, ctx);
  if (child) body += renderSubagent(child, ctx);
  return `<details class="tool ${st.cls}" data-call="${escapeHtml(call.id)}"${call.lashCallId ? ` data-lash-call="${escapeHtml(call.lashCallId)}"` : ""}><summary><span class="tool-icon ${st.cls}">${st.icon}</span><span class="tool-name">${escapeHtml(call.name)}</span><span class="tool-args">${escapeHtml(argsSummary(call.argumentsText))}</span>${st.pill}${child ? `<span class="pill sub">subagent</span>` : ""}${preview ? `<span class="tool-preview"><span class="arrow">→</span> ${escapeHtml(preview)}</span>` : ""}</summary><div class="tool-body">${body}</div></details>`;
}

function renderSubagent(child: ExportedSession, ctx: Ctx): string {
  if (ctx.depth >= 6)
    return `<div class="muted">Subagent ${escapeHtml(child.session.id)} (nested too deep to show)</div>`;
  const view = buildView(child);
  const sub: Ctx = { ...ctx, view, depth: ctx.depth + 1, turnLabel: turnLabels(child) };
  const t = view.total;
  return `<section class="subagent"><div class="sub-head"><span class="pill sub">subagent</span> <b>${escapeHtml(child.session.title ?? child.session.id)}</b> <span class="muted">${escapeHtml(child.session.id)} · ${escapeHtml(child.session.model)} · ${formatTokens(t.usage)} · ${formatCost(t.costUsd)}</span></div>${view.activePath
    .map((n) => renderNode(n, sub, false))
    .join("")}</section>`;
}

/** `ops`: how many tool operations the cell of this message ran (RLM), when it wrote one. */
function renderParts(m: Message, ctx: Ctx, ops?: number): string {
  let out = "";
  for (const p of m.parts) {
    switch (p.type) {
      case "text":
        if (p.text.trim()) out += `<div class="md">${md(p.text)}</div>`;
        break;
      case "reasoning":
        out += `<details class="reasoning"><summary>Reasoning${p.replay?.redacted ? " (redacted by the provider)" : ""}</summary><div class="md">${p.text ? md(p.text) : `<span class="muted">(not shown by the provider)</span>`}</div></details>`;
        break;
      case "toolCall":
        out += renderToolCall(p, ctx);
        break;
      case "toolResult":
        // shown inside its call's card; a result without a call on the page is shown here
        if (!ctx.view.hasCall(p)) {
          const st = statusMarks(callStatus(p));
          const preview = previewOf(p);
          out += `<details class="tool ${st.cls}"><summary><span class="tool-icon ${st.cls}">${st.icon}</span><span class="tool-name">${escapeHtml(p.name)}</span><span class="tool-args">result of ${escapeHtml(p.callId)}</span>${st.pill}${preview ? `<span class="tool-preview"><span class="arrow">→</span> ${escapeHtml(preview)}</span>` : ""}</summary><div class="tool-body">${renderResult(p, ctx)}</div></details>`;
        }
        break;
      case "attachment":
        out += renderAttachment(p);
        break;
      case "code":
        out += `<div class="cell"><div class="cell-head"><span class="pill code">${escapeHtml(p.language)}</span> code cell${ops !== undefined ? ` · <span class="cell-ops">${ops} tool operation${ops === 1 ? "" : "s"}</span>` : ""}</div><pre class="code"><code>${highlightCode(p.source, p.language)}</code></pre></div>`;
        break;
      case "output":
        out += `<div class="cell-output"><div class="label">Printed output</div><pre>${escapeHtml(clip(p.text, ctx.maxResult))}</pre></div>`;
        break;
      case "error":
        // a pre keeps the message's line breaks and columns, so a caret points at its column
        out += `<div class="error-box"><b>Error${p.code ? ` (${escapeHtml(p.code)})` : ""}</b><pre class="error-text">${escapeHtml(p.message)}</pre></div>`;
        break;
    }
  }
  return out;
}

const ROLE_LABEL: Record<string, string> = {
  user: "You",
  assistant: "Assistant",
  system: "System",
  tool: "Tool",
};

function renderNode(n: ExportedNode, ctx: Ctx, top: boolean, footer = ""): string {
  const attrs = top
    ? ` data-node="${escapeHtml(n.id)}"${n.parentId !== null ? ` data-parent="${escapeHtml(n.parentId)}"` : ""}`
    : "";
  const m = messageOf(n);
  const approval = m ? undefined : approvalOf(n);
  const compaction = m || approval ? undefined : compactionOf(n);
  let inner: string;
  let cls: string;
  if (m) {
    const body = renderParts(
      m,
      ctx,
      m.parts.some((p) => p.type === "code") ? cellOps(n, ctx.view) : undefined,
    );
    const by = ctx.view.compactedBy.get(n.id);
    cls = `msg ${m.role}${body === "" ? " empty" : ""}${by ? " compacted" : ""}`;
    const turn = n.turnId !== null ? ctx.turnLabel.get(n.turnId) : undefined;
    inner =
      body === ""
        ? ""
        : `<div class="who">${ROLE_LABEL[m.role] ?? m.role}${m.role === "assistant" ? ` <span class="muted">· ${escapeHtml(ctx.view.exported.session.model)}</span>` : ""}${turn !== undefined && m.role === "user" ? ` <span class="muted">· turn ${turn}</span>` : ""}${by ? ` <span class="pill compacted-pill" title="replaced by the summary of compaction ${escapeHtml(by)}: the model no longer saw it">summarised</span>` : ""}<span class="time">${formatTime(n.createdAt)}</span></div>${body}`;
  } else if (approval) {
    const a = approval;
    cls = `approval ${a.decision}`;
    inner = `<div class="approval-line"><span class="pill ${a.decision === "approve" ? "status-ok" : "status-err"}">${a.decision === "approve" ? "approved" : "denied"}</span> ${escapeHtml(approvalSummary(a))}<span class="time">${formatTime(a.at)}</span>${a.previewHash ? ` <span class="muted" title="preview hash">preview ${escapeHtml(a.previewHash.slice(0, 12))}</span>` : ""}</div>`;
  } else if (compaction) {
    cls = "compaction";
    inner = `<div class="compaction-line"><span class="pill">compaction</span> ${escapeHtml(compactionSummary(compaction))}<span class="time">${formatTime(n.createdAt)}</span></div><details class="compaction-summary"><summary>The summary the model sees instead of the ${compaction.replaced} messages above</summary><div class="md">${md(compaction.summary)}</div></details>`;
  } else if (handoffOf(n)) {
    cls = "compaction handoff";
    inner = `<div class="compaction-line"><span class="pill">handoff</span> ${escapeHtml(handoffSummary(handoffOf(n)!))}<span class="time">${formatTime(n.createdAt)}</span></div>`;
  } else if (n.kind === "frame") {
    const p = (n.payload ?? {}) as { task?: unknown; frameId?: unknown };
    cls = "frame";
    inner = `<div class="frame-line"><span>New agent frame ${escapeHtml(String(p.frameId ?? n.frameId))}</span></div>${typeof p.task === "string" ? `<div class="md">${md(p.task)}</div>` : ""}`;
  } else {
    cls = "event";
    inner = `<details class="event"><summary>${escapeHtml(n.kind)} event</summary><pre class="json">${escapeHtml(JSON.stringify(n.payload, null, 2) ?? "")}</pre></details>`;
  }
  return `<section class="node ${cls}${n.inherited ? " inherited" : ""}"${attrs}>${inner}${footer}</section>`;
}

/**
 * The message index entry of a node: [node id, role, label]. A search matches the label and the
 * node's text on the page (calls with their arguments and results), read from the page itself.
 */
function indexEntry(n: ExportedNode, m: Message, view: SessionView): [string, string, string] | undefined {
  const labels: string[] = [];
  const firstLine = (t: string) =>
    t
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "";
  for (const p of m.parts) {
    switch (p.type) {
      case "toolCall":
        labels.push(
          `${callStatus(view.resultOf(p)).failed ? "✗ " : ""}${p.name} ${argsSummary(p.argumentsText)}`,
        );
        break;
      case "toolResult":
        if (!view.hasCall(p)) labels.push(`${callStatus(p).failed ? "✗ " : ""}${p.name}`);
        break;
      case "code":
        labels.push(`code: ${firstLine(p.source)}`);
        break;
      case "output":
        labels.push(`output: ${firstLine(p.text)}`);
        break;
      case "error":
        labels.push(`✗ ${firstLine(p.message)}`);
        break;
      default:
        break;
    }
  }
  const text = m.parts
    .flatMap((p) => (p.type === "text" ? [p.text] : []))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  if (!text && labels.length === 0) return undefined;
  const raw = text || labels.join(" · ");
  return [n.id, m.role, raw.length > 90 ? `${raw.slice(0, 90)}…` : raw];
}

/** A result of a Lashlang cell's tool operation (RLM): no call part of its own, not the finish record. */
function isCellOp(p: Part, view: SessionView): boolean {
  return p.type === "toolResult" && p.name !== FINISH_RECORD && !view.hasCall(p);
}

/** The tool operations a code cell ran: the results in the observation that follows it. */
function cellOps(n: ExportedNode, view: SessionView): number {
  let count = 0;
  for (const child of view.childrenOf.get(n.id) ?? []) {
    const m = messageOf(child);
    if (m && m.role !== "assistant") for (const p of m.parts) if (isCellOp(p, view)) count++;
  }
  return count;
}

function turnLabels(s: ExportedSession): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of s.nodes) if (n.turnId !== null && !out.has(n.turnId)) out.set(n.turnId, out.size + 1);
  return out;
}

interface Segment {
  readonly nodes: ExportedNode[];
  readonly children: Segment[];
}

function segments(view: SessionView, start: ExportedNode): Segment {
  const nodes: ExportedNode[] = [start];
  let cur = start;
  for (;;) {
    const kids = view.childrenOf.get(cur.id) ?? [];
    if (kids.length !== 1) return { nodes, children: kids.map((k) => segments(view, k)) };
    cur = kids[0]!;
    nodes.push(cur);
  }
}

function segmentLabel(seg: Segment): string {
  for (const n of seg.nodes) {
    const m = messageOf(n);
    if (m?.role === "user") {
      const t = m.parts
        .flatMap((p) => (p.type === "text" ? [p.text] : []))
        .join(" ")
        .replace(/\s+/g, " ")
        .trim();
      if (t) return t.length > 60 ? `${t.slice(0, 60)}…` : t;
    }
  }
  const m = seg.nodes.map(messageOf).find((x) => x);
  const t = m
    ? m.parts
        .flatMap((p) => (p.type === "text" ? [p.text] : []))
        .join(" ")
        .trim()
    : "";
  return t ? (t.length > 60 ? `${t.slice(0, 60)}…` : t) : `${seg.nodes.length} nodes`;
}

function newestLeaf(view: SessionView, seg: Segment): ExportedNode {
  if (seg.children.length === 0) return seg.nodes[seg.nodes.length - 1]!;
  let best: ExportedNode | undefined;
  for (const c of seg.children) {
    const l = newestLeaf(view, c);
    if (!best || l.createdAt >= best.createdAt) best = l;
  }
  return best!;
}

function renderTree(view: SessionView, seg: Segment): string {
  const leaf = newestLeaf(view, seg);
  const turns = new Set(seg.nodes.flatMap((n) => (n.turnId ? [n.turnId] : []))).size;
  const item = `<button class="branch" data-leaf="${escapeHtml(leaf.id)}" data-first="${escapeHtml(seg.nodes[0]!.id)}" title="${escapeHtml(segmentLabel(seg))}"><span class="b-label">${escapeHtml(segmentLabel(seg))}</span><span class="b-meta">${turns} turn${turns === 1 ? "" : "s"}</span></button>`;
  const kids = seg.children.length
    ? `<ul>${seg.children.map((c) => `<li>${renderTree(view, c)}</li>`).join("")}</ul>`
    : "";
  return `${item}${kids}`;
}

const CSS = `
:root{--bg:#f6f7f9;--panel:#fff;--ink:#1f2328;--muted:#667085;--line:#e4e7ec;--accent:#4f46e5;--user:#eef2ff;--ok:#16a34a;--err:#dc2626;--code-bg:#0f172a;--code-ink:#e2e8f0;--add:#dcfce7;--add-ink:#166534;--del:#fee2e2;--del-ink:#991b1b}
@media (prefers-color-scheme: dark){:root{--bg:#0d1117;--panel:#161b22;--ink:#e6edf3;--muted:#8b949e;--line:#30363d;--user:#1c2340;--add:#12261e;--add-ink:#7ee2a8;--del:#2d1417;--del-ink:#ffa198}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",sans-serif}
header.top{background:var(--panel);border-bottom:1px solid var(--line);padding:18px 28px}
header.top h1{margin:0 0 6px;font-size:21px;line-height:1.3}
.meta{display:flex;flex-wrap:wrap;gap:6px 14px;color:var(--muted);font-size:13px}
.meta b{color:var(--ink);font-weight:600}
.totals{display:flex;flex-wrap:wrap;gap:8px;margin-top:12px}
.total{border:1px solid var(--line);border-radius:8px;padding:4px 10px;font-size:13px;background:var(--bg)}
.total b{font-variant-numeric:tabular-nums}
.layout{display:grid;grid-template-columns:280px minmax(0,1fr);gap:24px;max-width:1280px;margin:0 auto;padding:20px 28px 60px}
@media (max-width:900px){.layout{grid-template-columns:1fr}}
aside{position:sticky;top:12px;align-self:start;background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:12px;font-size:13px;max-height:calc(100vh - 24px);overflow:auto}
aside h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:0 0 8px}
aside ul{list-style:none;margin:0 0 0 10px;padding:0 0 0 8px;border-left:2px solid var(--line)}
.tree>ul{margin:0;padding:0;border:0}
.branch{display:flex;flex-direction:column;align-items:flex-start;width:100%;text-align:left;border:1px solid transparent;background:none;color:var(--ink);font:inherit;padding:5px 8px;border-radius:6px;cursor:pointer;margin:2px 0}
.branch:hover{background:var(--bg)}
.branch.on{border-color:var(--accent);background:color-mix(in srgb,var(--accent) 8%,transparent)}
.branch.current .b-label{font-weight:600}
.b-meta{color:var(--muted);font-size:11px}
.branch-note{color:var(--muted);font-size:12px;margin-top:10px}
main{min-width:0}
.node{margin:0 0 14px}
.node.hidden{display:none}
.msg.empty{display:none}
.msg{background:var(--panel);border:1px solid var(--line);border-radius:12px;padding:12px 16px}
.msg.user{background:var(--user);border-color:color-mix(in srgb,var(--accent) 25%,var(--line))}
.inherited{opacity:.75}
.who{font-size:12px;font-weight:600;color:var(--muted);margin-bottom:4px;display:flex;gap:6px;align-items:baseline}
.who .time{margin-left:auto;font-weight:400}
.muted{color:var(--muted);font-weight:400}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}
.md p{margin:.5em 0}
.md h2,.md h3,.md h4{margin:.9em 0 .4em;line-height:1.3}
.md code{background:color-mix(in srgb,var(--muted) 14%,transparent);padding:.1em .35em;border-radius:4px;font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.md blockquote{margin:.5em 0;padding:0 12px;border-left:3px solid var(--line);color:var(--muted)}
.md table{border-collapse:collapse;margin:.6em 0}.md th,.md td{border:1px solid var(--line);padding:4px 8px}
pre{margin:.4em 0;padding:10px 12px;border-radius:8px;overflow:auto;font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
pre.code,.md pre{background:var(--code-bg);color:var(--code-ink)}
.md pre code{background:none;padding:0;color:inherit;font:inherit}
pre.json,pre.result,.cell-output pre{background:var(--bg);border:1px solid var(--line);color:var(--ink);max-height:420px}
pre.result.err{border-color:color-mix(in srgb,var(--err) 50%,var(--line))}
pre.diff{background:var(--bg);border:1px solid var(--line);color:var(--ink)}
.d-add{background:var(--add);color:var(--add-ink);display:inline-block;width:100%}
.d-del{background:var(--del);color:var(--del-ink);display:inline-block;width:100%}
.d-hunk{color:#7c3aed}.d-file{color:var(--muted);font-weight:600}
.h-kw{color:#c084fc}.h-str{color:#86efac}.h-num{color:#fbbf24}.h-com{color:#94a3b8;font-style:italic}.h-fn{color:#7dd3fc}
pre.json .h-kw,pre.json .h-str,pre.json .h-num,pre.json .h-fn{color:inherit}
pre.json .h-str{color:#15803d}pre.json .h-num{color:#b45309}
details.reasoning{margin:6px 0;border-left:3px solid color-mix(in srgb,var(--accent) 40%,var(--line));padding:2px 10px;color:var(--muted)}
details.reasoning summary{cursor:pointer;font-size:13px;font-weight:600}
details.tool{border:1px solid var(--line);border-radius:8px;margin:8px 0;background:var(--bg)}
details.tool>summary{cursor:pointer;display:flex;gap:8px;align-items:center;padding:6px 10px;list-style:none}
details.tool>summary::-webkit-details-marker{display:none}
details.tool>summary::before{content:"▸";color:var(--muted);font-size:11px}
details.tool[open]>summary::before{content:"▾"}
details.tool.err{border-color:color-mix(in srgb,var(--err) 45%,var(--line))}
.tool-icon{font-weight:700}.tool-icon.ok{color:var(--ok)}.tool-icon.err{color:var(--err)}.tool-icon.pending{color:var(--muted)}
.tool-name{font:600 13px ui-monospace,SFMono-Regular,Menlo,monospace}
.tool-args{color:var(--muted);font-size:12.5px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;min-width:0;flex:1}
.tool-body{padding:4px 12px 10px;border-top:1px solid var(--line)}
.label{font-size:11px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin-top:8px;font-weight:600}
.pill{font-size:11px;border-radius:999px;padding:1px 8px;font-weight:600;border:1px solid var(--line);color:var(--muted);white-space:nowrap}
.pill.sub{color:#9333ea;border-color:#e9d5ff}.pill.code{color:#b45309;border-color:#fde68a}
.subagent{margin:10px 0 4px;padding:10px 12px;border:1px dashed #c4b5fd;border-radius:10px;background:color-mix(in srgb,#a78bfa 6%,var(--panel))}
.subagent .msg{border-radius:10px;padding:8px 12px}
.sub-head{font-size:13px;margin-bottom:8px}
.cell{margin:6px 0}.cell-head{font-size:12px;color:var(--muted);margin-bottom:2px}
.cell-output{margin:6px 0}
.error-box{border:1px solid color-mix(in srgb,var(--err) 50%,var(--line));background:color-mix(in srgb,var(--err) 8%,var(--panel));color:var(--err);border-radius:8px;padding:8px 12px;margin:6px 0}
.turn-usage{margin-top:10px;padding-top:6px;border-top:1px dashed var(--line);font-size:12px;color:var(--muted);display:flex;gap:10px;flex-wrap:wrap}
.frame-line{display:flex;align-items:center;gap:10px;color:var(--muted);font-size:12px;margin:18px 0 6px}
.frame-line::before,.frame-line::after{content:"";flex:1;border-top:1px solid var(--line)}
details.event{font-size:12px;color:var(--muted)}
.approval-line{font-size:12px;color:var(--muted);margin:4px 0}
.compaction-line{font-size:12px;color:var(--muted);margin:6px 0}
.node.compaction{border-top:1px dashed var(--muted);border-bottom:1px dashed var(--muted);padding:4px 0}
.msg.compacted{opacity:.75}
.attachment img{max-width:100%;border-radius:8px;border:1px solid var(--line)}
.toolbar{display:flex;gap:8px;justify-content:flex-end;margin:0 0 10px}
.toolbar button{font:inherit;font-size:12px;border:1px solid var(--line);background:var(--panel);color:var(--ink);border-radius:6px;padding:3px 10px;cursor:pointer}
.toolbar button:hover{border-color:var(--accent)}
.total.failed{border-color:color-mix(in srgb,var(--err) 50%,var(--line));color:var(--err)}
.pill.status-err{color:var(--err);border-color:color-mix(in srgb,var(--err) 45%,var(--line));background:color-mix(in srgb,var(--err) 8%,transparent)}
.pill.status-ok{color:var(--ok);border-color:color-mix(in srgb,var(--ok) 40%,var(--line))}
details.tool>summary{flex-wrap:wrap;row-gap:0}
.tool-preview{flex-basis:100%;padding:0 0 0 19px;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
details.tool.err>summary>.tool-preview{color:var(--err)}
details.tool[open]>summary>.tool-preview{display:none}
.tool-preview .arrow{opacity:.7}
.error-box pre.error-text{white-space:pre;overflow-x:auto;background:none;border:0;padding:0;margin:4px 0 0;color:inherit;max-height:none}
.index-head{margin-top:18px!important}
#search{width:100%;font:inherit;font-size:13px;padding:5px 8px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--ink)}
.search-count{color:var(--muted);font-size:11px;margin:4px 0}
ol.msg-index{list-style:none;margin:0;padding:0;border:0}
.msg-index li button{display:flex;gap:6px;width:100%;text-align:left;border:0;background:none;color:var(--ink);font:inherit;font-size:12px;padding:3px 6px;border-radius:5px;cursor:pointer}
.msg-index li button:hover{background:var(--bg)}
.msg-index li.off button{opacity:.5}
.ix-role{color:var(--muted);flex:none;width:62px;font-size:11px;padding-top:1px}
.ix.user .ix-role{color:var(--accent)}
.ix-label{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}
.node.match>.msg,.node.match.msg{outline:2px solid color-mix(in srgb,var(--accent) 45%,transparent)}
.node.flash{animation:flash 1.4s ease-out}
@keyframes flash{0%{box-shadow:0 0 0 4px color-mix(in srgb,var(--accent) 55%,transparent)}100%{box-shadow:0 0 0 0 transparent}}
footer.bottom{color:var(--muted);font-size:12px;text-align:center;padding:0 0 30px}
`;

const SCRIPT = `
(function(){
var data=JSON.parse(document.getElementById('session-data').textContent);
var parent={};data.nodes.forEach(function(n){parent[n[0]]=n[1]});
var els=document.querySelectorAll('[data-node]');
var branches=document.querySelectorAll('.branch');
function pathOf(leaf){var s={};var cur=leaf;var guard=0;while(cur&&guard++<1e6&&!s[cur]){s[cur]=1;cur=parent[cur]}return s}
var current=data.leaf;
var byNode={};for(var i=0;i<els.length;i++)byNode[els[i].getAttribute('data-node')]=els[i];
var items=[];
function show(leaf){
 current=leaf;
 var on=pathOf(leaf);var n=0;
 for(var k=0;k<items.length;k++)items[k].li.classList.toggle('off',!on[items[k].id]);
 for(var i=0;i<els.length;i++){var v=!!on[els[i].getAttribute('data-node')];els[i].classList.toggle('hidden',!v);if(v)n++}
 for(var j=0;j<branches.length;j++){var b=branches[j];b.classList.toggle('on',!!on[b.getAttribute('data-first')]);b.classList.toggle('current',b.getAttribute('data-leaf')===leaf)}
 document.body.setAttribute('data-leaf',leaf||'');
 var note=document.getElementById('branch-note');if(note)note.textContent=(leaf===data.leaf?'Showing the active branch':'Showing another branch')+' · '+n+' nodes';
}
for(var j=0;j<branches.length;j++){branches[j].addEventListener('click',function(){show(this.getAttribute('data-leaf'))})}
function setAll(open){var ds=document.querySelectorAll('main details');for(var i=0;i<ds.length;i++){if(open)ds[i].setAttribute('open','');else ds[i].removeAttribute('open')}}
document.getElementById('expand-all').addEventListener('click',function(){setAll(true)});
document.getElementById('collapse-all').addEventListener('click',function(){setAll(false)});
var ROLE={user:'You',assistant:'Assistant',tool:'Tool',system:'System'};
var list=document.getElementById('msg-index');var search=document.getElementById('search');var count=document.getElementById('search-count');
function leafFor(id){if(pathOf(current)[id])return current;for(var j=0;j<branches.length;j++){var l=branches[j].getAttribute('data-leaf');if(pathOf(l)[id])return l}return current}
function reveal(id){
 var el=byNode[id];if(!el)return;
 if(el.classList.contains('hidden'))show(leafFor(id));
 var q=search.value.trim().toLowerCase();
 if(q){var ds=el.querySelectorAll('details');for(var i=0;i<ds.length;i++)if(ds[i].textContent.toLowerCase().indexOf(q)>=0)ds[i].setAttribute('open','')}
 el.scrollIntoView({block:'center'});
 el.classList.remove('flash');void el.offsetWidth;el.classList.add('flash');
}
data.index.forEach(function(e){
 var li=document.createElement('li');li.className='ix '+e[1];
 var b=document.createElement('button');b.type='button';b.setAttribute('data-target',e[0]);
 var r=document.createElement('span');r.className='ix-role';r.textContent=ROLE[e[1]]||e[1];
 var l=document.createElement('span');l.className='ix-label';l.textContent=e[2];
 b.appendChild(r);b.appendChild(l);li.appendChild(b);list.appendChild(li);
 b.addEventListener('click',function(){reveal(e[0])});
 items.push({li:li,id:e[0],label:e[2],text:null});
});
function filter(){
 var q=search.value.trim().toLowerCase();var n=0;
 for(var k=0;k<items.length;k++){var it=items[k];if(q&&it.text===null){var node=byNode[it.id];it.text=(it.label+' '+(node?node.textContent:'')).toLowerCase()}var hit=!q||it.text.indexOf(q)>=0;items[k].li.hidden=!hit;if(hit)n++;var el=byNode[items[k].id];if(el)el.classList.toggle('match',!!q&&hit)}
 count.textContent=q?(n+' of '+items.length+' messages match'):(items.length+' messages');
}
search.addEventListener('input',filter);
search.addEventListener('keydown',function(ev){if(ev.key==='Enter'){for(var k=0;k<items.length;k++)if(!items[k].li.hidden){reveal(items[k].id);break}}});
filter();
show(data.leaf);
})();
`;

/** The session as one self-contained HTML page (inline CSS and JS; no network access, enforced by a CSP). */
export function renderSessionHtml(given: ExportedSession, options: HtmlOptions = {}): string {
  const exported = inlineArtifacts(given);
  const view = buildView(exported);
  const s = exported.session;
  const title = options.title ?? s.title ?? s.id;
  const ctx: Ctx = {
    view,
    maxResult: options.maxResultChars ?? 50_000,
    depth: 0,
    turnLabel: turnLabels(exported),
  };
  // the last node of each turn carries the turn's usage footer
  const lastOfTurn = new Map<string, string>();
  for (const n of exported.nodes) if (n.turnId !== null) lastOfTurn.set(n.turnId, n.id);
  const footerFor = (n: ExportedNode): string => {
    if (n.turnId === null || lastOfTurn.get(n.turnId) !== n.id) return "";
    const u = view.turnUsage.get(n.turnId);
    if (!u) return "";
    return `<div class="turn-usage"><span>Turn ${ctx.turnLabel.get(n.turnId)}</span><span>${formatTokens(u.usage)}</span><span>${formatCost(u.costUsd)}</span></div>`;
  };
  const body = exported.nodes
    .map((n) => {
      const footer = footerFor(n);
      const html = renderNode(n, ctx, true, footer);
      // a footer must stay visible even when its node renders nothing (a tool-result message)
      return footer && html.includes(" empty") ? html.replace(" empty", "") : html;
    })
    .join("\n");
  const roots = view.childrenOf.get(null) ?? [];
  const tree = roots.length
    ? `<div class="tree"><ul>${roots.map((r) => `<li>${renderTree(view, segments(view, r))}</li>`).join("")}</ul></div>`
    : `<div class="muted">Empty session.</div>`;
  // tool calls the model made, plus the tool operations of Lashlang cells (RLM)
  let toolCalls = 0;
  let failedCalls = 0;
  const index: [string, string, string][] = [];
  for (const n of exported.nodes) {
    const m = messageOf(n);
    if (!m) continue;
    for (const p of m.parts) {
      if (p.type === "toolCall") {
        toolCalls++;
        if (callStatus(view.resultOf(p)).failed) failedCalls++;
      } else if (isCellOp(p, view)) {
        toolCalls++;
        if (p.type === "toolResult" && callStatus(p).failed) failedCalls++;
      }
    }
    const entry = indexEntry(n, m, view);
    if (entry) index.push(entry);
  }
  const countAll = (x: ExportedSession): number => x.children.reduce((a, c) => a + 1 + countAll(c), 0);
  const subagents = countAll(exported);
  const data = {
    leaf: s.leafId,
    nodes: exported.nodes.map((n) => [n.id, n.parentId]),
    /** The message index: [node id, role, label]. */
    index,
  };
  const json = JSON.stringify(data)
    .replace(/</g, "\\u003c")
    .replace(/\u2028|\u2029/g, "");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="generator" content="lash export">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style></head>
<body>
<header class="top"><h1>${escapeHtml(title)}</h1>
<div class="meta"><span>model <b>${escapeHtml(s.model)}</b></span><span>mode <b>${escapeHtml(s.mode)}</b></span><span>created <b>${formatTime(s.createdAt)}</b></span><span>updated <b>${formatTime(s.updatedAt)}</b></span><span>session <b>${escapeHtml(s.id)}</b></span>${s.cwd ? `<span>cwd <b>${escapeHtml(s.cwd)}</b></span>` : ""}${s.origin ? `<span>forked from <b>${escapeHtml(s.origin.sessionId)}</b></span>` : ""}${view.models.length > 1 ? `<span>models used <b>${escapeHtml(view.models.join(", "))}</b></span>` : ""}</div>
<div class="totals"><span class="total">turns <b>${ctx.turnLabel.size}</b></span><span class="total">tool calls <b>${toolCalls}</b></span>${failedCalls ? `<span class="total failed">failed <b>${failedCalls}</b></span>` : ""}<span class="total">branches <b>${view.leaves.length}</b></span>${subagents ? `<span class="total">subagents <b>${subagents}</b></span>` : ""}<span class="total">tokens <b>${formatTokens(view.total.usage)}</b></span><span class="total">total cost <b>${formatCost(view.total.costUsd)}</b></span></div>
</header>
<div class="layout">
<aside><h2>Branches</h2>${tree}<div class="branch-note" id="branch-note"></div>
<h2 class="index-head">Messages</h2><input id="search" type="search" placeholder="Search messages…" autocomplete="off" aria-label="Search messages"><div class="search-count" id="search-count"></div><ol class="msg-index" id="msg-index"></ol></aside>
<main id="transcript"><div class="toolbar"><button type="button" id="expand-all">Expand all</button><button type="button" id="collapse-all">Collapse all</button></div>${body}</main>
</div>
<footer class="bottom">Exported by lash · ${exported.nodes.length} nodes</footer>
<script type="application/json" id="session-data">${json}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
