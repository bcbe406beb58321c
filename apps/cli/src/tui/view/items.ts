// Views of transcript items: user prompts, streamed markdown, reasoning, tool
// cards per family, code cells, subagents, notices and turn ends.
import { Box, Text } from "ink";
import type React from "react";
import stringWidth from "string-width";
import { renderDiff } from "../diff.ts";
import { fmtCost, fmtTokens } from "../format.ts";
import { highlightCode, type Line, renderMarkdown, type Seg } from "../markdown.ts";
import {
  type AgentItem,
  type AssistantItem,
  type ChildCall,
  type CodeItem,
  childSpent,
  type DecisionItem,
  type Item,
  type NoticeItem,
  type ReasoningItem,
  type ToolItem,
  type TurnEndItem,
  type UserItem,
} from "../model.ts";
import { wrapLine } from "../wrap.ts";
import { fmtDuration, h, Lines, SPINNER, truncate } from "./text.ts";

export interface ItemProps {
  readonly item: Item;
  readonly width: number;
  readonly expanded: boolean;
  /** Live items: spinner frame and clock. */
  readonly frame?: number;
  readonly now?: number;
  /** Live streaming text: show at most this many lines (the tail). */
  readonly maxLines?: number;
}

/** One transcript item, laid out at the terminal width (<Static> output is absolutely positioned). */
export function ItemView(props: ItemProps): React.ReactElement | null {
  const unfold = "unfold" in props.item && props.item.unfold === true;
  const inner = itemBody(unfold ? { ...props, expanded: true } : props);
  return inner ? h(Box, { width: props.width, flexDirection: "column" }, inner) : null;
}

function itemBody(props: ItemProps): React.ReactElement | null {
  const { item } = props;
  switch (item.kind) {
    case "user":
      return h(UserView, { item, width: props.width });
    case "assistant":
      return h(AssistantView, { ...props, item });
    case "reasoning":
      return h(ReasoningView, { ...props, item });
    case "tool":
      return h(ToolCard, { ...props, item });
    case "code":
      return h(CodeView, { ...props, item });
    case "agent":
      return h(AgentView, { ...props, item });
    case "notice":
      return h(NoticeView, { item, width: props.width });
    case "turnEnd":
      return h(TurnEndView, { item });
    case "approval":
      return h(DecisionView, { item });
  }
}

/** Who decided, as the card says it. */
function byWhom(by: string, layer: string | undefined): string {
  if (by === "policy") return `by the policy${layer ? ` (${layer})` : ""}`;
  if (by === "user") return "by you";
  return `by ${by}`;
}

/** An approval decision card: one line per call — approved (once, for the session, edited) or denied, by whom, why. */
function DecisionView(props: { readonly item: DecisionItem }): React.ReactElement {
  const { item } = props;
  return h(
    Box,
    { marginTop: 1, flexDirection: "column" },
    ...item.decisions.map((d, i) => {
      const approved = d.decision === "approve";
      const what = approved
        ? d.edited
          ? "with edited arguments"
          : d.scope === "session"
            ? "for this session"
            : "once"
        : "";
      return h(
        Text,
        { key: i, wrap: "wrap" },
        h(Text, { color: approved ? "green" : "red" }, approved ? (d.edited ? "✎ " : "✓ ") : "✗ "),
        h(Text, { bold: true }, approved ? "Approved " : "Denied "),
        h(Text, null, d.tool),
        what ? h(Text, null, ` ${what}`) : null,
        h(Text, { dimColor: true }, ` · ${byWhom(item.by, d.layer)}`),
        !approved ? h(Text, { color: "red" }, `: ${d.reason?.trim() || "no reason given"}`) : null,
        item.replayed ? h(Text, { dimColor: true }, " · from the journal") : null,
      );
    }),
  );
}

function UserView(props: { readonly item: UserItem; readonly width: number }): React.ReactElement {
  const lines = props.item.text.replace(/\s+$/, "").split("\n");
  const shown = lines.length > 12 ? [...lines.slice(0, 8), `… (${lines.length - 8} more lines)`] : lines;
  return h(
    Box,
    { marginTop: 1, flexDirection: "row" },
    // a prefix that never shrinks: yoga shrinks every item of a row in proportion to its width,
    // which took a column off a 2-column prefix and gave the text a row one column too wide
    h(Box, { flexShrink: 0 }, h(Text, { color: "cyan", bold: true }, "› ")),
    h(
      Box,
      { flexDirection: "column", flexShrink: 1 },
      ...shown.map((l, i) => h(Text, { key: i, bold: true, wrap: "wrap" }, l || " ")),
    ),
  );
}

function AssistantView(props: ItemProps & { readonly item: AssistantItem }): React.ReactElement | null {
  const { item, width } = props;
  if (!item.text.trim()) return null;
  // wrapped here (hanging indents for lists and quotes), so the tail is counted in rows. Fenced
  // code is drawn at column 0 without a gutter, so that its rows copy as the code alone: its lines
  // wrap at the full width, prose at the width beside the `● ` prefix
  let rows: { code: boolean; line: Line }[] = [];
  for (const l of renderMarkdown(item.text, width - 2)) {
    const code = l[0]?.code === true;
    for (const line of wrapLine(l, code ? width : width - 2)) rows.push({ code, line });
  }
  let hidden = 0;
  if (props.maxLines !== undefined && rows.length > props.maxLines) {
    hidden = rows.length - props.maxLines;
    rows = rows.slice(hidden);
  }
  const runs: { code: boolean; lines: Line[] }[] = [];
  for (const { code, line } of rows) {
    const last = runs[runs.length - 1];
    if (last && last.code === code) last.lines.push(line);
    else runs.push({ code, lines: [line] });
  }
  return h(
    Box,
    { marginTop: item.cont ? 0 : 1, flexDirection: "column" },
    hidden > 0 ? h(Text, { dimColor: true }, `  … ${hidden} lines above`) : null,
    ...runs.map((run, i) =>
      run.code
        ? h(Lines, { key: i, lines: run.lines, wrap: "truncate-end" }) // wrapped above, at the full width
        : h(
            Box,
            { key: i, flexDirection: "row" },
            // a prefix that never shrinks (see UserView)
            h(Box, { flexShrink: 0 }, h(Text, null, i === 0 && !item.cont && hidden === 0 ? "● " : "  ")),
            h(
              Box,
              { flexDirection: "column", flexShrink: 1 },
              h(Lines, { lines: run.lines, wrap: "truncate-end" }), // wrapped above, at width - 2
            ),
          ),
    ),
  );
}

function ReasoningView(props: ItemProps & { readonly item: ReasoningItem }): React.ReactElement {
  const { item, expanded } = props;
  const words = item.text.trim() ? item.text.trim().split(/\s+/).length : 0;
  const secs =
    item.endedAt !== undefined && item.startedAt > 0
      ? ` for ${fmtDuration(item.endedAt - item.startedAt)}`
      : "";
  const head = item.done
    ? `✻ Thought${secs} (${words} words)`
    : `✻ Thinking… ${truncate(
        (
          item.text
            .trim()
            .split("\n")
            .filter((l) => l.trim())
            .pop() ?? ""
        ).trim(),
        Math.max(10, props.width - 20),
      )}`;
  const showBody = expanded && item.text.trim();
  // thinking is markdown: rendered like an answer, dimmed
  let body: Line[] = showBody
    ? renderMarkdown(item.text.trim(), props.width - 4).map((l) =>
        l.map((seg): Seg => ({ ...seg, dim: true, italic: seg.code !== true })),
      )
    : [];
  if (!item.done && body.length > 12) body = body.slice(-12);
  return h(
    Box,
    { marginTop: 1, flexDirection: "column" },
    h(
      Text,
      { dimColor: true, italic: true, wrap: "truncate-end" },
      head,
      !expanded && item.done && words > 0 ? h(Text, { dimColor: true }, "  ctrl+o to expand") : null,
    ),
    showBody ? h(Box, { paddingLeft: 2, flexDirection: "column" }, h(Lines, { lines: body })) : null,
  );
}

// ---- tool cards ----

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function argsOf(t: ToolItem): Record<string, unknown> {
  if (t.args !== undefined) return obj(t.args);
  if (!t.argsText) return {};
  try {
    return obj(JSON.parse(t.argsText));
  } catch {
    // partial JSON while streaming: pull out simple string fields
    const out: Record<string, unknown> = {};
    for (const m of t.argsText.matchAll(/"(\w+)"\s*:\s*"((?:[^"\\]|\\.)*)/g)) {
      try {
        out[m[1]!] = JSON.parse(`"${m[2]!}"`);
      } catch {
        out[m[1]!] = m[2];
      }
    }
    return out;
  }
}

function compactArgs(a: Record<string, unknown>, max: number): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(a)) {
    const s =
      typeof v === "string" ? JSON.stringify(v.length > 60 ? `${v.slice(0, 59)}…` : v) : JSON.stringify(v);
    parts.push(`${k}: ${s}`);
  }
  return truncate(parts.join(", "), max);
}

function tailLines(text: string, n: number): { lines: string[]; hidden: number } {
  const all = text.replace(/\n+$/, "").split("\n");
  if (all.length === 1 && all[0] === "") return { lines: [], hidden: 0 };
  if (all.length <= n) return { lines: all, hidden: 0 };
  return { lines: all.slice(-n), hidden: all.length - n };
}

function headLines(text: string, n: number): { lines: string[]; hidden: number } {
  const all = text.replace(/\n+$/, "").split("\n");
  if (all.length === 1 && all[0] === "") return { lines: [], hidden: 0 };
  if (all.length <= n) return { lines: all, hidden: 0 };
  return { lines: all.slice(0, n), hidden: all.length - n };
}

const STATUS_ICON: Record<string, { icon: string; color: string }> = {
  ok: { icon: "●", color: "green" },
  error: { icon: "✗", color: "red" },
  cancelled: { icon: "⊘", color: "yellow" },
  pending: { icon: "○", color: "gray" },
};

/**
 * Did the call fail, and how to say so in a few words. The same rules as the
 * export's `callStatus` (packages/export/src/view.ts): a non-zero exit code, a
 * signal or a timeout fails a call even when the tool did not flag an error.
 */
function toolOutcome(t: ToolItem): { readonly failed: boolean; readonly label: string } {
  if (t.status === "running" || t.status === "pending") return { failed: false, label: t.status };
  if (t.status === "cancelled") return { failed: true, label: "cancelled" };
  const d = detailsOf(t);
  if (d.timedOut === true) return { failed: true, label: "timed out" };
  if (typeof d.exitCode === "number" && d.exitCode !== 0)
    return { failed: true, label: `exit ${d.exitCode}` };
  if (typeof d.signal === "string" && d.signal !== "") return { failed: true, label: `killed (${d.signal})` };
  if (t.status === "error") {
    const first = (t.resultText ?? "").trim();
    if (/\binterrupted\b/i.test(first)) return { failed: true, label: "interrupted" };
    return { failed: true, label: "error" };
  }
  return { failed: false, label: typeof d.exitCode === "number" ? "exit 0" : "ok" };
}

function stripShellTrailer(s: string): string {
  return s.replace(/\n?\[(exit code: -?\d+|killed by signal \w+)\]\s*$/, "");
}

interface CardParts {
  title: string;
  subject: string;
  meta: Seg[];
  body: Line[];
}

/** Details, or (Lashlang operations report their value as JSON text) the parsed result. */
function detailsOf(t: ToolItem): Record<string, unknown> {
  if (t.details !== undefined) return obj(t.details);
  const r = t.resultText?.trim();
  if (r?.startsWith("{")) {
    try {
      return obj(JSON.parse(r));
    } catch {
      return {};
    }
  }
  return {};
}

function shellCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean, live: boolean): CardParts {
  const d = detailsOf(t);
  const command = str(a.command) ?? str(d.command) ?? "";
  const meta: Seg[] = [];
  const exit = d.exitCode;
  if (typeof exit === "number") meta.push({ text: `exit ${exit}`, color: exit === 0 ? "green" : "red" });
  else if (typeof d.signal === "string") meta.push({ text: `killed (${d.signal})`, color: "red" });
  if (d.timedOut === true) meta.push({ text: "timed out", color: "red" });
  const fromValue =
    t.details === undefined && (typeof d.stdout === "string" || typeof d.stderr === "string")
      ? `${str(d.stdout) ?? ""}${str(d.stderr) ?? ""}`
      : undefined;
  const output = t.output || (fromValue ?? stripShellTrailer(t.resultText ?? ""));
  const n = expanded ? 200 : live ? 5 : exit !== 0 && exit !== undefined ? 8 : 4;
  const { lines, hidden } = tailLines(output, n);
  const body: Line[] = [];
  if (hidden > 0) body.push([{ text: `… ${hidden} earlier lines`, dim: true }]);
  for (const l of lines) body.push([{ text: l, dim: !(t.status === "error") }]);
  const cmdLines = command.split("\n");
  return {
    title: "Shell",
    subject: `$ ${cmdLines[0]}${cmdLines.length > 1 ? ` … (+${cmdLines.length - 1} lines)` : ""}`,
    meta,
    body,
  };
}

function diffCount(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diff.split("\n")) {
    if (l.startsWith("+") && !l.startsWith("+++")) added++;
    else if (l.startsWith("-") && !l.startsWith("---")) removed++;
  }
  return { added, removed };
}

function editCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean): CardParts {
  const d = detailsOf(t);
  const files = Array.isArray(d.files) ? d.files.map(obj) : [];
  let diff = str(d.diff) ?? files.map((f) => str(f.diff) ?? "").join("\n");
  const paths = files.length
    ? files.map((f) => str(f.path) ?? "?")
    : [str(d.path) ?? str(a.path) ?? str(a.file_path) ?? str(a.file) ?? ""].filter(Boolean);
  if (!diff && t.status === "running" && typeof a.patch === "string") diff = a.patch;
  const isWrite = /write/.test(t.name);
  const title = isWrite ? "Write" : /patch/.test(t.name) ? "Patch" : "Edit";
  const meta: Seg[] = [];
  if (diff) {
    const c = diffCount(diff);
    meta.push({ text: `+${c.added}`, color: "green" }, { text: ` −${c.removed}`, color: "red" });
  }
  if (isWrite && d.created === true) meta.unshift({ text: "new file ", color: "green" });
  const body: Line[] = [];
  if (diff && t.status !== "error") {
    const dl = diff.replace(/\n+$/, "").split("\n");
    const n = expanded ? 400 : 14;
    body.push(...renderDiff(diff).slice(0, n));
    if (dl.length > n)
      body.push([{ text: `… ${dl.length - n} more diff lines (/expand shows this card)`, dim: true }]);
  }
  return {
    title,
    subject: paths.length > 2 ? `${paths.slice(0, 2).join(", ")} +${paths.length - 2}` : paths.join(", "),
    meta,
    body,
  };
}

function readCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean): CardParts {
  const d = detailsOf(t);
  const path = str(d.path) ?? str(a.path) ?? str(a.file_path) ?? "";
  const meta: Seg[] = [];
  const total = d.totalLines;
  const end = d.endLine;
  const offset = typeof d.offset === "number" ? d.offset : typeof a.offset === "number" ? a.offset : 1;
  if (typeof end === "number" && typeof total === "number")
    meta.push({
      text: offset <= 1 && end >= total ? `${total} lines` : `lines ${offset}–${end} of ${total}`,
      dim: true,
    });
  const body: Line[] = [];
  if (expanded && t.resultText)
    for (const l of headLines(t.resultText, 40).lines) body.push([{ text: l, dim: true }]);
  return { title: "Read", subject: path, meta, body };
}

function searchCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean): CardParts {
  const d = detailsOf(t);
  const isGlob = /glob/.test(t.name);
  const pattern = str(a.pattern) ?? str(a.query) ?? str(a.glob) ?? "";
  const where = str(a.path) ?? str(a.dir) ?? str(a.cwd);
  const meta: Seg[] = [];
  if (typeof d.count === "number") {
    const total = typeof d.total === "number" && d.total > d.count ? ` of ${d.total}` : "";
    meta.push({
      text: `${d.count}${total} ${isGlob ? (d.count === 1 && !total ? "file" : "files") : d.count === 1 && !total ? "match" : "matches"}`,
      dim: true,
    });
  }
  const body: Line[] = [];
  if (t.resultText && (expanded || t.status === "ok")) {
    const { lines, hidden } = headLines(t.resultText, expanded ? 60 : 3);
    for (const l of lines) body.push([{ text: l, dim: true }]);
    if (hidden > 0) body.push([{ text: `… ${hidden} more`, dim: true }]);
  }
  return {
    title: isGlob ? "Glob" : "Grep",
    subject: `${isGlob ? pattern : JSON.stringify(pattern)}${where ? ` in ${where}` : ""}`,
    meta,
    body,
  };
}

function planCard(t: ToolItem, a: Record<string, unknown>): CardParts {
  const d = obj(t.details ?? t.args);
  const items = (Array.isArray(d.items) ? d.items : Array.isArray(a.items) ? a.items : []).map(obj);
  const done = items.filter((i) => i.status === "completed").length;
  const body: Line[] = items.map((i) => {
    const s = i.status;
    const text = str(i.text) ?? str(i.step) ?? "";
    if (s === "completed")
      return [
        { text: "☑ ", color: "green" },
        { text, dim: true, strikethrough: true },
      ];
    if (s === "in_progress")
      return [
        { text: "◐ ", color: "yellow" },
        { text, bold: true },
      ];
    return [{ text: "☐ ", dim: true }, { text }];
  });
  const expl = str(d.explanation);
  if (expl) body.unshift([{ text: expl, italic: true, dim: true }]);
  return { title: "Plan", subject: "", meta: [{ text: `${done}/${items.length} done`, dim: true }], body };
}

function resultBody(t: ToolItem, expanded: boolean, n: number): Line[] {
  const body: Line[] = [];
  if (!t.resultText) return body;
  const { lines, hidden } = headLines(t.resultText, expanded ? 80 : n);
  for (const l of lines) body.push([{ text: l, dim: t.status !== "error" }]);
  if (hidden > 0) body.push([{ text: `… ${hidden} more lines`, dim: true }]);
  return body;
}

function mcpCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean, width: number): CardParts {
  const [, server = "?", ...rest] = t.name.split("__");
  return {
    title: `${server} › ${rest.join("__") || "?"}`,
    subject: compactArgs(a, Math.max(20, width - 30)),
    meta: [],
    body: resultBody(t, expanded, 3),
  };
}

function codeToolCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean): CardParts {
  const source = str(a.code) ?? str(a.source) ?? "";
  const lang = str(a.language) ?? "lashlang";
  const src = source.split("\n");
  const n = expanded ? 200 : 10;
  const body: Line[] = src.slice(0, n).map((l) => highlightCode(l, lang));
  if (src.length > n) body.push([{ text: `… ${src.length - n} more lines`, dim: true }]);
  body.push(...resultBody(t, expanded, 6));
  return { title: "Code", subject: lang, meta: [], body };
}

function childCallLine(c: ChildCall, width: number): Line {
  const a = obj(c.args);
  const subject =
    c.family === "shell"
      ? `$ ${(str(a.command) ?? "").split("\n")[0]}`
      : (str(a.path) ?? str(a.file_path) ?? str(a.pattern) ?? compactArgs(a, Math.max(10, width - 30)));
  const icon =
    c.status === "running" || c.status === "pending"
      ? { text: "◌ ", color: "cyan" }
      : c.status === "ok"
        ? { text: "● ", color: "green" }
        : { text: "✗ ", color: c.status === "cancelled" ? "yellow" : "red" };
  return [
    icon,
    { text: c.name, bold: true },
    { text: ` ${truncate(subject, Math.max(10, width - c.name.length - 12))}` },
    ...(c.note ? [{ text: `  ${truncate(c.note, 60)}`, color: "red" }] : []),
  ];
}

/** Newest child calls shown under a subagent card (all of them with Ctrl+O). */
const CHILD_CALLS_SHOWN = 3;

function agentToolCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean, width: number): CardParts {
  const task = str(a.task) ?? str(a.prompt) ?? str(a.description) ?? "";
  const c = t.child;
  const meta: Seg[] = [];
  const capability = c?.capability ?? str(a.capability);
  if (capability) meta.push({ text: capability, color: "magenta" });
  if (c?.model && width >= 100) meta.push({ text: c.model, dim: true });
  if (c?.outcome && c.outcome !== "finished")
    meta.push({ text: c.outcome, color: c.outcome === "cancelled" ? "yellow" : "red" });
  const calls = c?.calls ?? [];
  const spent = c ? childSpent(c) : { tokens: 0 };
  if (calls.length > 0)
    meta.push({ text: `${calls.length} tool call${calls.length === 1 ? "" : "s"}`, dim: true });
  if (spent.tokens > 0) meta.push({ text: `${fmtTokens(spent.tokens)} tokens`, dim: true });
  const cost = c?.costUsd ?? spent.costUsd;
  if (cost !== undefined) meta.push({ text: fmtCost(cost), dim: true });
  const body: Line[] = [];
  const running = live(t);
  if (calls.length > 0 && (running || expanded)) {
    const shown = expanded ? calls : calls.slice(-CHILD_CALLS_SHOWN);
    if (shown.length < calls.length)
      body.push([
        { text: `… ${calls.length - shown.length} earlier tool calls (ctrl+o shows all)`, dim: true },
      ]);
    for (const call of shown) body.push(childCallLine(call, width - 6));
  }
  if (running && c)
    body.push([
      {
        text: `working in ${c.sessionId} · /stop cancels just this subagent`,
        dim: true,
      },
    ]);
  else if (!running) body.push(...resultBody(t, expanded, 3));
  return {
    title: "Subagent",
    subject: truncate(task.split("\n")[0] ?? "", Math.max(20, width - 50)),
    meta,
    body,
  };
}

function live(t: ToolItem): boolean {
  return t.status === "running" || t.status === "pending";
}

function genericCard(t: ToolItem, a: Record<string, unknown>, expanded: boolean, width: number): CardParts {
  return {
    title: t.name,
    subject: compactArgs(a, Math.max(20, width - t.name.length - 20)),
    meta: [],
    body: resultBody(t, expanded, 3),
  };
}

export function ToolCard(props: ItemProps & { readonly item: ToolItem }): React.ReactElement {
  const { item: t, width, expanded } = props;
  const live = t.status === "running" || t.status === "pending";
  const a = argsOf(t);
  let parts: CardParts;
  switch (t.family) {
    case "shell":
      parts = shellCard(t, a, expanded, live);
      break;
    case "edit":
      parts = editCard(t, a, expanded);
      break;
    case "read":
      parts = readCard(t, a, expanded);
      break;
    case "search":
      parts = searchCard(t, a, expanded);
      break;
    case "plan":
      parts = planCard(t, a);
      break;
    case "mcp":
      parts = mcpCard(t, a, expanded, width);
      break;
    case "code":
      parts = codeToolCard(t, a, expanded);
      break;
    case "agent":
      parts = agentToolCard(t, a, expanded, width);
      break;
    default:
      parts = genericCard(t, a, expanded, width);
  }
  // errors: show the message (and drop the family body unless it is output)
  if (t.status === "error" || t.status === "cancelled") {
    const msg = (t.family === "shell" ? "" : (t.resultText ?? "")).trim();
    if (msg) {
      const { lines, hidden } = headLines(msg, expanded ? 40 : 6);
      parts.body = [
        ...parts.body,
        ...lines.map((l): Line => [{ text: l, color: t.status === "error" ? "red" : "yellow" }]),
        ...(hidden > 0 ? [[{ text: `… ${hidden} more lines`, dim: true }] as Line] : []),
      ];
    }
  }
  const now = props.now ?? Date.now();
  const elapsed = live
    ? now - t.startedAt
    : t.endedAt !== undefined && t.startedAt > 0
      ? t.endedAt - t.startedAt
      : undefined;
  // A failed call (error, non-zero exit, signal, timeout, cancel, interrupt) is a
  // red ✗ whatever the tool reported, and its reason is in the header's part that
  // is never cut (the title and arguments are truncated instead).
  const outcome = toolOutcome(t);
  const icon =
    t.status === "running"
      ? { icon: SPINNER[(props.frame ?? 0) % SPINNER.length]!, color: "cyan" }
      : outcome.failed
        ? STATUS_ICON.error!
        : STATUS_ICON[t.status]!;
  const meta: Seg[] = [...parts.meta];
  if (outcome.failed && !meta.some((m) => m.text === outcome.label))
    meta.unshift({ text: outcome.label, color: "red" });
  if (t.status === "pending")
    meta.push(
      t.awaiting ? { text: "waiting for approval", color: "yellow" } : { text: "preparing…", dim: true },
    );
  if (elapsed !== undefined && t.status !== "pending") meta.push({ text: fmtDuration(elapsed), dim: true });
  const metaEls: React.ReactNode[] = [];
  meta.forEach((m, i) => {
    metaEls.push(
      h(
        Text,
        {
          key: i,
          ...(m.color ? { color: m.color } : {}),
          ...(m.dim ? { dimColor: true } : {}),
        },
        i === 0 ? `  ${m.text}` : m.text.startsWith(" ") ? m.text : ` · ${m.text}`,
      ),
    );
  });
  return h(
    Box,
    { marginTop: 1, flexDirection: "column" },
    h(
      Box,
      { flexDirection: "row" },
      h(Box, { flexShrink: 0 }, h(Text, { color: icon.color }, `${icon.icon} `)),
      h(
        Text,
        { wrap: "truncate-end" },
        h(Text, { bold: true }, parts.title),
        parts.subject ? h(Text, null, ` ${parts.subject}`) : null,
      ),
      metaEls.length > 0 ? h(Box, { flexShrink: 0 }, h(Text, null, ...metaEls)) : null,
    ),
    parts.body.length > 0
      ? h(
          Box,
          { flexDirection: "column", paddingLeft: 2 },
          h(Lines, {
            lines: parts.body.map((l): Line => [{ text: "⎿ ", dim: true, hang: "indent" }, ...l]).slice(0, 1),
            width: width - 2,
          }),
          parts.body.length > 1
            ? h(Lines, {
                lines: parts.body.slice(1).map((l): Line => [{ text: "  ", hang: "indent" }, ...l]),
                width: width - 2,
              })
            : null,
        )
      : null,
  );
}

function CodeView(props: ItemProps & { readonly item: CodeItem }): React.ReactElement {
  const { item, expanded } = props;
  const src = item.source.replace(/\n+$/, "").split("\n");
  const n = expanded ? 400 : 12;
  // no gutter: the rows copy as the code (indented)
  const lines: Line[] = src.slice(0, n).map((l) => highlightCode(l, item.language));
  if (src.length > n) lines.push([{ text: `… ${src.length - n} more lines (ctrl+o to expand)`, dim: true }]);
  const out = tailLines(item.output, expanded ? 200 : 8);
  const outLines: Line[] = [];
  if (out.hidden > 0) outLines.push([{ text: `… ${out.hidden} earlier lines`, dim: true }]);
  for (const l of out.lines) outLines.push([{ text: l }]);
  if (item.error) outLines.push([{ text: item.error, color: "red" }]);
  const live = !item.done;
  return h(
    Box,
    { marginTop: 1, flexDirection: "column" },
    h(
      Text,
      null,
      h(
        Text,
        { color: live ? "cyan" : item.error ? "red" : "green" },
        live ? `${SPINNER[(props.frame ?? 0) % SPINNER.length]} ` : item.error ? "✗ " : "● ",
      ),
      h(Text, { bold: true }, "Code"),
      h(Text, { dimColor: true }, ` ${item.language}`),
    ),
    h(Box, { paddingLeft: 2, flexDirection: "column" }, h(Lines, { lines, width: props.width - 2 })),
    outLines.length
      ? h(
          Box,
          { paddingLeft: 2, flexDirection: "column" },
          h(Text, { dimColor: true }, "⎿ output"),
          h(
            Box,
            { paddingLeft: 2, flexDirection: "column" },
            h(Lines, { lines: outLines, width: props.width - 4 }),
          ),
        )
      : null,
  );
}

function AgentView(props: ItemProps & { readonly item: AgentItem }): React.ReactElement {
  const { item } = props;
  const live = item.status === "running";
  const icon = live
    ? { icon: SPINNER[(props.frame ?? 0) % SPINNER.length]!, color: "cyan" }
    : STATUS_ICON[item.status]!;
  const now = props.now ?? Date.now();
  const elapsed = live
    ? now - item.startedAt
    : item.endedAt !== undefined
      ? item.endedAt - item.startedAt
      : 0;
  return h(
    Box,
    { marginTop: 1, flexDirection: "column" },
    h(
      Text,
      { wrap: "truncate-end" },
      h(Text, { color: icon.color }, `${icon.icon} `),
      h(Text, { bold: true }, "Subagent"),
      ` ${truncate(item.task.split("\n")[0] ?? "", Math.max(20, props.width - 30))}`,
      h(Text, { dimColor: true }, `  ${live ? "running" : item.status} · ${fmtDuration(elapsed)}`),
    ),
    item.summary
      ? h(
          Box,
          { paddingLeft: 2 },
          h(
            Text,
            { dimColor: true, wrap: "wrap" },
            `⎿ ${truncate(item.summary.trim(), props.expanded ? 4000 : 300)}`,
          ),
        )
      : null,
  );
}

const NOTICE: Record<NoticeItem["level"], { icon: string; color: string }> = {
  info: { icon: "ℹ", color: "blue" },
  warn: { icon: "⚠", color: "yellow" },
  error: { icon: "✗", color: "red" },
  success: { icon: "✓", color: "green" },
};

function NoticeView(props: { readonly item: NoticeItem; readonly width: number }): React.ReactElement {
  const { item } = props;
  const s = NOTICE[item.level];
  if (item.rule)
    return h(
      Box,
      { marginTop: 1, width: props.width },
      h(
        Text,
        { dimColor: true, wrap: "truncate-end" },
        `── ${item.text} ${"─".repeat(Math.max(0, props.width - stringWidth(item.text) - 4))}`,
      ),
    );
  return h(
    Box,
    { marginTop: 1, flexDirection: "column" },
    h(
      Text,
      { wrap: "wrap" },
      h(Text, { color: s.color }, `${s.icon} `),
      h(Text, item.level === "info" ? { bold: !!item.body } : { color: s.color }, item.text),
    ),
    item.body
      ? h(
          Box,
          { paddingLeft: 2, flexDirection: "column" },
          ...item.body.map((l, i) => {
            // "label   value" lines wrap with a hanging indent
            const m = /^(.*?\S)(\s{2,})(\S.*)$/.exec(l);
            if (m && m[1]!.length + m[2]!.length <= 40)
              return h(
                Box,
                { key: i, flexDirection: "row" },
                h(Box, { flexShrink: 0 }, h(Text, null, m[1]! + m[2]!)),
                h(Box, { flexShrink: 1, flexGrow: 1 }, h(Text, { wrap: "wrap" }, m[3]!)),
              );
            return h(
              Text,
              { key: i, wrap: "wrap", ...(/^\S.*:$|^[A-Z][a-z]+$/.test(l) ? { bold: true } : {}) },
              l || " ",
            );
          }),
        )
      : null,
  );
}

function TurnEndView(props: { readonly item: TurnEndItem }): React.ReactElement {
  const { item } = props;
  const stats = [fmtDuration(item.durationMs)];
  if (item.toolCalls > 0) stats.push(`${item.toolCalls} tool call${item.toolCalls === 1 ? "" : "s"}`);
  if (item.costUsd !== undefined) stats.push(fmtCost(item.costUsd));
  if (item.outcome === "stopped" && item.reason === "cancelled")
    return h(
      Box,
      { marginTop: 1 },
      h(
        Text,
        { wrap: "wrap" },
        h(Text, { color: "yellow", bold: true }, "⊘ cancelled"),
        h(Text, { dimColor: true }, ` — the work finished before the cancel is kept · ${stats.join(" · ")}`),
      ),
    );
  if (item.outcome === "stopped")
    return h(
      Box,
      { marginTop: 1 },
      h(
        Text,
        { wrap: "wrap" },
        h(Text, { color: "red", bold: true }, `■ stopped (${item.reason ?? "?"})`),
        item.message ? h(Text, { color: "red" }, `: ${item.message}`) : null,
        h(Text, { dimColor: true }, ` · ${stats.join(" · ")}`),
      ),
    );
  return h(Box, null, h(Text, { dimColor: true }, `  ⎯ ${stats.join(" · ")}`));
}
