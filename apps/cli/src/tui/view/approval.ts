// The approval prompt: every call of the request (the selected one with its preview —
// the diff with +/- counts for edits, the command, cwd and sandbox for shell — its risk
// and why it is asked), the answers given so far, the inline reason / JSON editor, and
// the keys. Shown in place of the prompt box while a request waits.
import type { ApprovalItem } from "@lash/core";
import { Box, Text } from "ink";
import type React from "react";
import type { ApprovalPrompt, ItemAnswer } from "../approval.ts";
import { renderDiff } from "../diff.ts";
import type { Line, Seg } from "../markdown.ts";
import { familyOf } from "../model.ts";
import { h, Lines, truncate } from "./text.ts";

const TITLE: Record<string, string> = {
  shell: "Shell",
  edit: "Edit",
  read: "Read",
  search: "Search",
  plan: "Plan",
  mcp: "MCP",
  code: "Code",
  agent: "Agent",
};

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** `+3 −1` of a unified diff (file headers not counted). */
export function diffCounts(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diff.split("\n")) {
    if (l.startsWith("+") && !l.startsWith("+++")) added++;
    else if (l.startsWith("-") && !l.startsWith("---")) removed++;
  }
  return { added, removed };
}

function counts(item: ApprovalItem): { added: number; removed: number } | undefined {
  const p = item.preview;
  if (p?.files?.length)
    return p.files.reduce((a, f) => ({ added: a.added + f.added, removed: a.removed + f.removed }), {
      added: 0,
      removed: 0,
    });
  return p?.diff ? diffCounts(p.diff) : undefined;
}

/** The call's one-line subject: the command, the file(s), or the preview's summary. */
function subject(item: ApprovalItem): string {
  const a = obj(item.args);
  const p = item.preview;
  if (p?.command) return `$ ${p.command.command.split("\n")[0]}`;
  if (typeof a.command === "string") return `$ ${a.command.split("\n")[0]}`;
  if (p?.files?.length) return p.files.map((f) => f.path).join(", ");
  const path = [a.path, a.file_path, a.file].find((v) => typeof v === "string") as string | undefined;
  if (path) return path;
  return p?.summary ?? JSON.stringify(item.args ?? {});
}

/** The display family: by the tool's name, else by what its preview shows. */
function familyOfItem(item: ApprovalItem): string {
  const fam = familyOf(item.tool);
  if (fam !== "generic") return fam;
  if (item.preview?.command) return "shell";
  if (item.preview?.diff || item.preview?.files?.length) return "edit";
  return fam;
}

function answerSegs(a: ItemAnswer | undefined): Seg[] {
  if (!a) return [];
  if (a.decision === "deny") return [{ text: `  ✗ deny${a.reason ? `: ${a.reason}` : ""}`, color: "red" }];
  if (a.args !== undefined) return [{ text: "  ✎ approve with edited arguments", color: "green" }];
  return [
    { text: a.scope === "session" ? "  ✓ approve for the session" : "  ✓ approve once", color: "green" },
  ];
}

function riskColor(level: string): string {
  return level === "high" ? "red" : level === "medium" ? "yellow" : "green";
}

/** The reason names the layer already (the policy's reasons end `… in layer <name>`). */
function mentionsLayer(item: ApprovalItem): boolean {
  const name = item.layer.split(":")[0]!.trim();
  return item.reason.includes(item.layer) || (name !== "" && item.reason.includes(name));
}

/** The selected call's details: risk, why asked, the preview (bounded to `maxLines` rows of diff). */
function details(item: ApprovalItem, maxLines: number): Line[] {
  const out: Line[] = [];
  const p = item.preview;
  const a = obj(item.args);
  if (item.risk)
    out.push([
      { text: "risk ", dim: true },
      { text: item.risk.level, color: riskColor(item.risk.level), bold: true },
      {
        text: ` · ${item.risk.category}${item.risk.reasons.length ? ` · ${item.risk.reasons.join("; ")}` : ""}`,
      },
    ]);
  out.push([
    { text: "why  ", dim: true },
    { text: mentionsLayer(item) ? item.reason : `${item.reason} (${item.layer})`, dim: true },
  ]);
  if (p?.command) {
    out.push([{ text: "$ ", color: "cyan" }, { text: p.command.command }]);
    out.push([{ text: "cwd  ", dim: true }, { text: p.command.cwd }]);
    out.push([
      { text: "sandbox  ", dim: true },
      { text: p.command.sandbox ?? "none (runs with your permissions)" },
    ]);
  } else if (typeof a.command === "string") out.push([{ text: "$ ", color: "cyan" }, { text: a.command }]);
  if (p?.files?.length && p.files.length > 1)
    for (const f of p.files)
      out.push([
        { text: `${f.action} `, dim: true },
        { text: f.path },
        { text: ` +${f.added}`, color: "green" },
        { text: ` −${f.removed}`, color: "red" },
      ]);
  if (p?.diff) {
    // the file header lines only repeat the subject when one file changes
    const diff =
      (p.files?.length ?? 1) <= 1
        ? p.diff
            .split("\n")
            .filter((l) => !/^(--- |\+\+\+ |diff |index )/.test(l))
            .join("\n")
        : p.diff;
    const rows = renderDiff(diff);
    const n = Math.max(3, maxLines);
    out.push(...rows.slice(0, n));
    if (rows.length > n) out.push([{ text: `… ${rows.length - n} more diff lines`, dim: true }]);
  } else if (!p?.command && typeof a.command !== "string") {
    const json = JSON.stringify(item.args ?? {});
    out.push([{ text: "args ", dim: true }, { text: json.length > 600 ? `${json.slice(0, 599)}…` : json }]);
  }
  return out;
}

/** The reason or JSON being typed, with a block cursor. */
function EditorLine(props: { readonly prompt: ApprovalPrompt; readonly width: number }): React.ReactElement {
  const ed = props.prompt.editor;
  const lines = ed.text.split("\n");
  const { line: cl, col } = ed.position();
  return h(
    Box,
    { flexDirection: "column" },
    ...lines.map((l, i) =>
      h(
        Box,
        { key: i, flexDirection: "row" },
        h(Box, { flexShrink: 0, width: 2 }, h(Text, { color: "yellow", bold: true }, i === 0 ? "› " : "  ")),
        h(
          Box,
          { flexShrink: 1, flexGrow: 1 },
          i === cl
            ? h(
                Text,
                { wrap: "wrap" },
                l.slice(0, col),
                h(Text, { inverse: true }, l.slice(col, col + 1) || " "),
                l.slice(col + 1),
              )
            : h(Text, { wrap: "wrap" }, l || " "),
        ),
      ),
    ),
  );
}

function keysLine(prompt: ApprovalPrompt): string {
  const item = prompt.current;
  if (prompt.mode === "reason")
    return `enter deny${prompt.all ? " every call left" : ` ${item.tool}`} (the reason goes to the model; may be empty) · esc back`;
  if (prompt.mode === "edit")
    return "enter run it with these arguments · alt+enter new line · esc back (the draft is kept) · ctrl+c cancel the turn";
  // a tool the policy always asks about gets no session grant: `a` approves this call only
  const a = item.always
    ? `a also once (${item.tool} is always asked)`
    : `a approve ${item.tool} for this session`;
  const one = `y approve once · ${a} · n deny with a reason · e edit arguments`;
  if (prompt.items.length === 1) return `${one} · esc cancel the turn`;
  const left = prompt.items.filter((i) => !prompt.answers.has(i.callId));
  const always = [...new Set(left.filter((i) => i.always).map((i) => i.tool))];
  const all =
    always.length === 0
      ? "A approve for the session"
      : left.every((i) => i.always)
        ? "A approve each once (always asked)"
        : `A approve for the session (${always.join(", ")} once: always asked)`;
  return `${one} · ↑/↓ choose a call · all calls left: Y approve · ${all} · N deny · esc cancel the turn`;
}

export function ApprovalView(props: {
  readonly prompt: ApprovalPrompt;
  /** Requests waiting behind this one. */
  readonly waiting: number;
  readonly width: number;
  /** Terminal rows: the diff is cut to fit. */
  readonly rows: number;
  /** The TUI's session: a request of another session comes from a subagent. */
  readonly sessionId?: string | undefined;
}): React.ReactElement {
  const { prompt, width } = props;
  const items = prompt.items;
  const inner = Math.max(10, width - 2);
  const extra = prompt.mode === "choose" ? 0 : 4 + prompt.editor.text.split("\n").length;
  // only the selected call is unfolded: its diff gets the rows the frame has left (the spinner,
  // status bar, keys and the call's other lines take about 17), so the frame stays inside the terminal
  const diffRows = Math.max(3, props.rows - 17 - items.length - extra);
  const n = items.length;
  const head = `${n === 1 ? "Allow this tool call?" : `Allow these ${n} tool calls?`}${n > 1 ? ` (${prompt.answers.size} of ${n} answered)` : ""}${props.waiting ? ` · ${props.waiting} more request${props.waiting === 1 ? "" : "s"} waiting` : ""}${props.sessionId !== undefined && prompt.request.sessionId !== props.sessionId ? ` · asked by the subagent ${prompt.request.sessionId}` : ""}`;
  const rows: React.ReactElement[] = [];
  items.forEach((item, i) => {
    const sel = i === prompt.selected;
    const fam = familyOfItem(item);
    const c = counts(item);
    const line: Line = [
      { text: sel && n > 1 ? "❯ " : "  ", color: "yellow", bold: true },
      { text: n > 1 ? `${i + 1}. ` : "", dim: true },
      { text: `${TITLE[fam] ?? item.tool} `, bold: true },
      { text: truncate(subject(item), Math.max(10, inner - 40)) },
      ...(c
        ? ([
            { text: `  +${c.added}`, color: "green" },
            { text: ` −${c.removed}`, color: "red" },
          ] as Seg[])
        : []),
      ...(TITLE[fam] && fam !== "mcp" ? [{ text: `  ${item.tool}`, dim: true }] : []),
      ...answerSegs(prompt.answers.get(item.callId)),
    ];
    rows.push(h(Lines, { key: `i${i}`, lines: [line], width: inner }));
    if (sel)
      rows.push(
        h(
          Box,
          { key: `d${i}`, paddingLeft: 4, flexDirection: "column" },
          h(Lines, {
            lines: details(item, diffRows),
            width: inner - 4,
          }),
        ),
      );
  });
  return h(
    Box,
    {
      flexDirection: "column",
      borderStyle: "round",
      borderColor: "yellow",
      borderLeft: false,
      borderRight: false,
    },
    h(
      Text,
      { wrap: "truncate-end" },
      h(Text, { color: "yellow", bold: true }, "⚠ "),
      h(Text, { bold: true }, head),
    ),
    ...rows,
    prompt.mode !== "choose"
      ? h(
          Box,
          { flexDirection: "column", marginTop: 1 },
          h(
            Text,
            { bold: true },
            prompt.mode === "reason"
              ? `Why deny ${prompt.all ? "the calls left" : prompt.current.tool}?`
              : `Arguments of ${prompt.current.tool} (JSON):`,
          ),
          h(EditorLine, { prompt, width: inner }),
          prompt.error ? h(Text, { color: "red", wrap: "wrap" }, prompt.error) : null,
        )
      : null,
    h(Box, { marginTop: 1 }, h(Text, { dimColor: true, wrap: "wrap" }, keysLine(prompt))),
  );
}
