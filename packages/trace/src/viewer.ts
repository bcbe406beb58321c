import { type ParsedLine, parseTrace, type TraceRecord } from "./schema.ts";

/** A row of the viewer's timeline: one span (turn, model call, tool call, code cell, subagent) or one point event. */
export interface ViewerRow {
  readonly index: number;
  /** Filter category: `turn`, `llm`, `tool`, `code`, `subagent`, `retry`, `error`, `event`, `unknown`. */
  readonly category: string;
  readonly kind: string;
  readonly title: string;
  readonly summary: string;
  readonly failed: boolean;
  readonly depth: number;
  /** epoch ms; absent for unknown lines without a timestamp */
  readonly start?: number;
  readonly end?: number;
  readonly sessionId?: string;
  readonly turnId?: string;
  readonly spanId?: string;
  /** The records behind the row (raw JSON as read), in order. */
  readonly raw: readonly unknown[];
}

export interface ViewerStats {
  readonly records: number;
  readonly turns: number;
  readonly llmCalls: number;
  readonly toolCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd?: number;
  readonly failures: number;
  readonly unknown: number;
  readonly sessions: number;
}

export interface ViewerModel {
  readonly title: string;
  readonly rows: readonly ViewerRow[];
  readonly stats: ViewerStats;
  readonly start?: number;
  readonly end?: number;
}

const SPAN_CATEGORY: Record<string, string> = {
  turn_started: "turn",
  turn_finished: "turn",
  llm_request: "llm",
  llm_request_body: "llm",
  llm_response: "llm",
  tool_started: "tool",
  tool_progress: "tool",
  tool_completed: "tool",
  code_cell_started: "code",
  code_cell_completed: "code",
  subagent_started: "subagent",
  subagent_finished: "subagent",
};

const POINT_CATEGORY: Record<string, string> = {
  retry: "retry",
  attempt_reset: "retry",
  error: "error",
  frame_switch: "event",
  plugin_event: "event",
  usage: "event",
};

function short(text: string, n = 120): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length <= n ? t : `${t.slice(0, n)}…`;
}

function money(n: number): string {
  return n >= 0.01 ? `$${n.toFixed(3)}` : `$${n.toFixed(5)}`;
}

function json(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return String(v);
  }
}

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

interface MutableRow {
  index: number;
  category: string;
  kind: string;
  title: string;
  summary: string;
  failed: boolean;
  depth: number;
  start?: number;
  end?: number;
  sessionId?: string;
  turnId?: string;
  spanId?: string;
  raw: unknown[];
}

/** Interpret a parsed trace into the viewer's rows and totals (all interpretation happens here, not in the page). */
export function buildViewerModel(lines: readonly ParsedLine[], title = "lash trace"): ViewerModel {
  const parents = new Map<string, string | undefined>();
  for (const l of lines) if (l.type === "record") parents.set(l.record.spanId, l.record.parentSpanId);
  const depthCache = new Map<string, number>();
  const depthOf = (span: string): number => {
    const cached = depthCache.get(span);
    if (cached !== undefined) return cached;
    let d = 0;
    let cur = parents.get(span);
    const seen = new Set([span]);
    while (cur !== undefined && !seen.has(cur)) {
      seen.add(cur);
      d++;
      cur = parents.get(cur);
    }
    depthCache.set(span, d);
    return d;
  };

  const rows: MutableRow[] = [];
  const bySpan = new Map<string, MutableRow>();
  const sessions = new Set<string>();
  let turns = 0;
  let llmCalls = 0;
  let toolCalls = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let cost: number | undefined;
  let failures = 0;
  let unknown = 0;
  let first: number | undefined;
  let last: number | undefined;

  const push = (row: Omit<MutableRow, "index">) => {
    const r = { ...row, index: rows.length };
    rows.push(r);
    return r;
  };

  for (const line of lines) {
    if (line.type !== "record") {
      unknown++;
      const raw = line.type === "unknown" ? line.raw : line.text;
      const obj = (typeof raw === "object" && raw !== null ? raw : {}) as {
        kind?: unknown;
        ts?: unknown;
        sessionId?: unknown;
      };
      const ts = typeof obj.ts === "number" && Number.isFinite(obj.ts) ? obj.ts : undefined;
      if (ts !== undefined) {
        first = first === undefined ? ts : Math.min(first, ts);
        last = last === undefined ? ts : Math.max(last, ts);
      }
      push({
        category: "unknown",
        kind: typeof obj.kind === "string" ? obj.kind : line.type === "invalid" ? "(not JSON)" : "(no kind)",
        title: typeof obj.kind === "string" ? obj.kind : `line ${line.line}`,
        summary: `${line.reason} — shown raw`,
        failed: false,
        depth: 0,
        ...(ts !== undefined ? { start: ts, end: ts } : {}),
        ...(typeof obj.sessionId === "string" ? { sessionId: obj.sessionId } : {}),
        raw: [raw],
      });
      continue;
    }
    const r: TraceRecord = line.record;
    sessions.add(r.sessionId);
    first = first === undefined ? r.ts : Math.min(first, r.ts);
    last = last === undefined ? r.ts : Math.max(last, r.ts);
    const spanCategory = SPAN_CATEGORY[r.kind];
    if (spanCategory) {
      // tool spans of older traces were named by the provider's call id, which providers reuse:
      // a tool row belongs to its turn, and a second start of the same span is a second call
      const key = r.kind.startsWith("tool_") ? `${r.turnId ?? ""}\u0000${r.spanId}` : r.spanId;
      let row =
        r.kind === "tool_started" && bySpan.get(key)?.kind === "tool_started" ? undefined : bySpan.get(key);
      if (!row) {
        row = push({
          category: spanCategory,
          kind: r.kind,
          title: r.kind,
          summary: "",
          failed: false,
          depth: depthOf(r.spanId),
          start: r.ts,
          end: r.ts,
          sessionId: r.sessionId,
          ...(r.turnId ? { turnId: r.turnId } : {}),
          spanId: r.spanId,
          raw: [],
        });
        bySpan.set(key, row);
      }
      row.raw.push(line.raw);
      row.end = Math.max(row.end ?? r.ts, r.ts);
      switch (r.kind) {
        case "turn_started":
          turns++;
          row.title = `Turn ${r.turnId ?? ""}`.trim();
          row.summary = `${r.model ?? ""}${r.resumed ? " · resumed" : ""}${r.inputPreview ? ` · “${short(r.inputPreview, 90)}”` : ""}`;
          break;
        case "turn_finished":
          if (row.title === r.kind) {
            turns++;
            row.title = `Turn ${r.turnId ?? ""}`.trim();
          }
          if (r.durationMs !== undefined) row.start = Math.min(row.start ?? r.ts, r.ts - r.durationMs);
          row.failed = r.status === "stopped" && r.reason !== "cancelled";
          if (row.failed) failures++;
          row.summary = `${row.summary ? `${row.summary} → ` : ""}${r.status}: ${r.reason}${r.message ? ` (${short(r.message, 80)})` : ""} · ${r.llmCalls} LLM, ${r.toolCalls} tools${r.costUsd !== undefined ? ` · ${money(r.costUsd)}` : ""}`;
          break;
        case "llm_request":
          llmCalls++;
          row.title = `LLM call ${r.iteration + 1}${r.model ? ` · ${r.model}` : ""}`;
          row.summary = `${r.messageCount} messages · ${r.tools.length} tools`;
          break;
        case "llm_request_body":
          break;
        case "llm_response": {
          if (row.title === r.kind) {
            llmCalls++;
            row.title = `LLM call ${r.iteration + 1}${r.model ? ` · ${r.model}` : ""}`;
          }
          row.start = Math.min(row.start ?? r.ts, r.ts - r.durationMs);
          inputTokens += r.usage.input ?? 0;
          outputTokens += r.usage.output ?? 0;
          if (r.costUsd !== undefined) cost = (cost ?? 0) + r.costUsd;
          row.failed = r.stopReason === "error";
          if (row.failed) failures++;
          const u = r.usage;
          row.summary = `${r.stopReason} · in ${u.input ?? "?"} / out ${u.output ?? "?"}${u.cacheRead ? ` (cache ${u.cacheRead})` : ""} · ${fmtMs(r.durationMs)}${r.costUsd !== undefined ? ` · ${money(r.costUsd)}` : ""}${r.attempts > 1 ? ` · ${r.attempts} attempts` : ""}${r.replayed ? " · replayed" : ""}`;
          break;
        }
        case "tool_started":
          toolCalls++;
          row.title = `${r.name}`;
          row.summary = short(json(r.args), 140);
          break;
        case "tool_progress":
          break;
        case "tool_completed":
          if (row.title === r.kind) {
            toolCalls++;
            row.title = r.name;
          }
          row.start = Math.min(row.start ?? r.ts, r.ts - r.durationMs);
          row.failed = r.isError;
          if (r.isError) failures++;
          row.summary = `${row.summary ? `${row.summary} → ` : ""}${r.isError ? `error (${r.errorClass ?? "error"}): ` : ""}${short(r.result.preview, 120)} · ${fmtMs(r.durationMs)}`;
          break;
        case "code_cell_started":
          row.title = `${r.language} cell #${r.index}`;
          row.summary = short(r.source, 140);
          break;
        case "code_cell_completed":
          row.failed = !r.ok;
          if (!r.ok) failures++;
          row.summary = `${row.summary} → ${r.ok ? short(r.output.join(" "), 100) || "ok" : `error: ${short(r.error ?? "", 100)}`}`;
          break;
        case "subagent_started":
          row.title = `Subagent ${r.childSessionId}`;
          row.summary = `spawned by tool call ${r.callId}`;
          break;
        case "subagent_finished":
          row.title = `Subagent ${r.childSessionId}`;
          row.summary = `${row.summary} · finished`;
          break;
      }
      continue;
    }
    const category = POINT_CATEGORY[r.kind] ?? "event";
    let title: string = r.kind;
    let summary = "";
    let failed = false;
    switch (r.kind) {
      case "retry":
        title = `retry #${r.attempt}`;
        summary = `${r.error.kind}${r.error.status ? ` ${r.error.status}` : ""}: ${short(r.error.message, 100)} · waits ${fmtMs(r.delayMs)}`;
        break;
      case "attempt_reset":
        title = `attempt reset #${r.attempt}`;
        break;
      case "error":
        title = `error: ${r.errorKind}`;
        summary = short(r.message, 160);
        failed = true;
        failures++;
        break;
      case "frame_switch":
        title = `frame switch → ${r.frameId}`;
        summary = short(r.task, 140);
        break;
      case "plugin_event":
        title = `${r.plugin}.${r.name}`;
        summary = short(json(r.data), 140);
        break;
      case "approval":
        if (r.phase === "requested") {
          title = `approval asked: ${(r.items ?? []).map((i) => i.tool).join(", ")}`;
          summary = short((r.items ?? []).map((i) => `${i.tool}: ${i.reason} (${i.layer})`).join(" · "), 160);
        } else {
          title = `approval by ${r.by ?? "?"}${r.replayed ? " (from journal)" : ""}`;
          summary = short(
            (r.decisions ?? [])
              .map(
                (d) =>
                  `${d.tool ?? d.callId} ${d.decision === "approve" ? "approved" : "denied"}${d.reason ? `: ${d.reason}` : ""}`,
              )
              .join(" · "),
            160,
          );
        }
        break;
      case "usage":
        title = "usage";
        summary = `in ${r.cumulative.input ?? "?"} / out ${r.cumulative.output ?? "?"} (cumulative)`;
        break;
    }
    push({
      category,
      kind: r.kind,
      title,
      summary,
      failed,
      depth: depthOf(r.spanId) + 1,
      start: r.ts,
      end: r.ts,
      sessionId: r.sessionId,
      ...(r.turnId ? { turnId: r.turnId } : {}),
      spanId: r.spanId,
      raw: [line.raw],
    });
  }
  return {
    title,
    rows,
    stats: {
      records: lines.length,
      turns,
      llmCalls,
      toolCalls,
      inputTokens,
      outputTokens,
      ...(cost !== undefined ? { costUsd: cost } : {}),
      failures,
      unknown,
      sessions: sessions.size,
    },
    ...(first !== undefined ? { start: first } : {}),
    ...(last !== undefined ? { end: last } : {}),
  };
}

/** JSON safe to embed in a `<script>` element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const CSS = `
:root{--bg:#f7f7f8;--panel:#fff;--ink:#1d1f23;--muted:#6b7280;--line:#e5e7eb;--llm:#6366f1;--tool:#0d9488;--turn:#334155;--code:#b45309;--sub:#9333ea;--err:#dc2626;--retry:#d97706;--ev:#64748b}
@media (prefers-color-scheme: dark){:root{--bg:#111317;--panel:#181b20;--ink:#e5e7eb;--muted:#9ca3af;--line:#2a2f37}}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--panel);position:sticky;top:0;z-index:2}
h1{font-size:18px;margin:0 0 10px}
.stats{display:flex;flex-wrap:wrap;gap:8px;margin-bottom:10px}
.stat{border:1px solid var(--line);border-radius:8px;padding:4px 10px;background:var(--bg)}.stat b{font-variant-numeric:tabular-nums}
.stat.fail b{color:var(--err)}
.controls{display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.chip{border:1px solid var(--line);border-radius:999px;padding:2px 10px;background:var(--panel);color:var(--ink);cursor:pointer;font:inherit;font-size:12px}
.chip[aria-pressed=false]{opacity:.45;text-decoration:line-through}
.chip .dot{display:inline-block;width:8px;height:8px;border-radius:50%;margin-right:5px;vertical-align:middle}
input[type=search]{border:1px solid var(--line);border-radius:6px;padding:4px 8px;min-width:220px;background:var(--panel);color:var(--ink)}
main{padding:12px 24px 40px}
.row{border-bottom:1px solid var(--line);background:var(--panel)}
.row>.head{display:grid;grid-template-columns:minmax(0,1fr) 220px;gap:12px;padding:6px 10px;cursor:pointer;align-items:center}
.row>.head:hover{background:color-mix(in srgb,var(--llm) 6%,transparent)}
.label{display:flex;gap:8px;align-items:baseline;min-width:0}
.badge{font-size:11px;font-weight:600;text-transform:uppercase;letter-spacing:.04em;border-radius:4px;padding:1px 6px;color:#fff;flex:none}
.title{font-weight:600;white-space:nowrap}
.summary{color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis;min-width:0}
.row.failed .title{color:var(--err)}
.bar{position:relative;height:10px;background:var(--bg);border-radius:3px;overflow:hidden}
.bar>span{position:absolute;top:0;height:10px;border-radius:3px;min-width:2px}
.raw{display:none;margin:0;padding:10px 14px;background:var(--bg);border-top:1px dashed var(--line);overflow:auto;max-height:420px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;word-break:break-word}
.row.open>.raw{display:block}
.empty{color:var(--muted);padding:20px}
`;

const SCRIPT = `
(function(){
var model=JSON.parse(document.getElementById('trace-data').textContent);
var colors={turn:'var(--turn)',llm:'var(--llm)',tool:'var(--tool)',code:'var(--code)',subagent:'var(--sub)',retry:'var(--retry)',error:'var(--err)',event:'var(--ev)',unknown:'#7c2d12'};
var names={turn:'turns',llm:'LLM calls',tool:'tools',code:'code cells',subagent:'subagents',retry:'retries',error:'errors',event:'events',unknown:'unknown'};
var on={};var q='';
var s=model.stats;
function stat(label,value,fail){var d=document.createElement('span');d.className='stat'+(fail?' fail':'');d.innerHTML='';d.appendChild(document.createTextNode(label+' '));var b=document.createElement('b');b.textContent=value;d.appendChild(b);return d}
var st=document.getElementById('stats');
st.appendChild(stat('turns',s.turns));st.appendChild(stat('LLM calls',s.llmCalls));st.appendChild(stat('tool calls',s.toolCalls));
st.appendChild(stat('tokens',s.inputTokens.toLocaleString()+' in / '+s.outputTokens.toLocaleString()+' out'));
st.appendChild(stat('cost',s.costUsd===undefined?'unknown':'$'+s.costUsd.toFixed(4)));
st.appendChild(stat('failures',s.failures,s.failures>0));st.appendChild(stat('records',s.records));
if(s.unknown)st.appendChild(stat('unknown',s.unknown));
var cats=[];model.rows.forEach(function(r){if(cats.indexOf(r.category)<0)cats.push(r.category)});
var ctl=document.getElementById('filters');
cats.forEach(function(c){on[c]=true;var b=document.createElement('button');b.className='chip';b.setAttribute('aria-pressed','true');b.dataset.cat=c;var dot=document.createElement('span');dot.className='dot';dot.style.background=colors[c]||'var(--ev)';b.appendChild(dot);b.appendChild(document.createTextNode(names[c]||c));b.onclick=function(){on[c]=!on[c];b.setAttribute('aria-pressed',String(on[c]));apply()};ctl.appendChild(b)});
var search=document.getElementById('search');search.oninput=function(){q=search.value.toLowerCase();apply()};
var t0=model.start||0,t1=model.end||t0,span=Math.max(1,t1-t0);
var list=document.getElementById('rows');var els=[];
model.rows.forEach(function(r){
 var row=document.createElement('div');row.className='row'+(r.failed?' failed':'');row.dataset.category=r.category;row.dataset.kind=r.kind;
 var head=document.createElement('div');head.className='head';head.style.paddingLeft=(10+r.depth*22)+'px';
 var label=document.createElement('div');label.className='label';
 var badge=document.createElement('span');badge.className='badge';badge.style.background=colors[r.category]||'var(--ev)';badge.textContent=r.category;
 var title=document.createElement('span');title.className='title';title.textContent=r.title;
 var sum=document.createElement('span');sum.className='summary';sum.textContent=r.summary;sum.title=r.summary;
 label.appendChild(badge);label.appendChild(title);label.appendChild(sum);
 var bar=document.createElement('div');bar.className='bar';
 if(r.start!==undefined){var b=document.createElement('span');var cl=function(x){return Math.max(0,Math.min(1,x))};var a=cl((r.start-t0)/span),e=cl(((r.end===undefined?r.start:r.end)-t0)/span);b.style.left=(a*100)+'%';b.style.width=Math.max(0.4,(e-a)*100)+'%';b.style.background=colors[r.category]||'var(--ev)';b.title=new Date(r.start).toISOString()+(r.end>r.start?' · '+(r.end-r.start)+' ms':'');bar.appendChild(b)}
 head.appendChild(label);head.appendChild(bar);
 var pre=document.createElement('pre');pre.className='raw';
 head.onclick=function(){if(!pre.textContent){pre.textContent=r.raw.map(function(x){return typeof x==='string'?x:JSON.stringify(x,null,2)}).join('\\n\\n')}row.classList.toggle('open')};
 row.appendChild(head);row.appendChild(pre);list.appendChild(row);
 els.push({el:row,r:r,text:(r.title+' '+r.summary+' '+r.kind).toLowerCase()});
});
function apply(){var shown=0;els.forEach(function(x){var v=on[x.r.category]&&(!q||x.text.indexOf(q)>=0||JSON.stringify(x.r.raw).toLowerCase().indexOf(q)>=0);x.el.style.display=v?'':'none';if(v)shown++});document.getElementById('empty').style.display=shown?'none':''}
apply();
})();
`;

/** One self-contained HTML page (inline CSS and JS, no network) for a trace's records. */
export function renderTraceViewer(
  input: string | readonly ParsedLine[] | readonly TraceRecord[],
  options: { readonly title?: string } = {},
): string {
  const lines: readonly ParsedLine[] =
    typeof input === "string"
      ? parseTrace(input)
      : input.length > 0 && "type" in input[0]! && "line" in input[0]!
        ? (input as readonly ParsedLine[])
        : (input as readonly TraceRecord[]).map((record, i) => ({
            type: "record" as const,
            line: i + 1,
            record,
            raw: record,
          }));
  const title = options.title ?? "lash trace";
  const model = buildViewerModel(lines, title);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style></head>
<body>
<header><h1>${escapeHtml(title)}</h1><div class="stats" id="stats"></div>
<div class="controls"><span id="filters" class="controls"></span><input type="search" id="search" placeholder="Search records…" aria-label="Search records"></div></header>
<main><div id="rows"></div><div id="empty" class="empty" style="display:none">No records match.</div></main>
<script type="application/json" id="trace-data">${scriptJson(model)}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
