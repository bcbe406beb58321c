import type { Message } from "@lash/sansio";
import { inlineArtifacts } from "./artifacts.ts";
import type { ExportedSession } from "./schema.ts";
import {
  approvalOf,
  approvalSummary,
  buildView,
  callStatus,
  compactionOf,
  compactionSummary,
  diffsOf,
  formatCost,
  formatTime,
  formatTokens,
  handoffOf,
  handoffSummary,
  messageOf,
  prettyArgs,
  resultText,
  type SessionView,
} from "./view.ts";

export interface MarkdownOptions {
  /** Longest tool result shown, in characters (default 4,000): an issue wants the gist. */
  readonly maxResultChars?: number;
}

/** A fence longer than any backtick run in `text`. */
function fence(text: string, lang = ""): string {
  let n = 3;
  for (const m of text.matchAll(/`{3,}/g)) n = Math.max(n, m[0].length + 1);
  const f = "`".repeat(n);
  return `${f}${lang}\n${text.replace(/\n$/, "")}\n${f}`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… [${text.length - max} more characters]`;
}

function quote(text: string): string {
  return text
    .split("\n")
    .map((l) => (l ? `> ${l}` : ">"))
    .join("\n");
}

const ROLE: Record<string, string> = { user: "User", assistant: "Assistant", system: "System", tool: "Tool" };

function renderMessage(m: Message, view: SessionView, max: number, depth: number): string {
  const out: string[] = [];
  for (const p of m.parts) {
    switch (p.type) {
      case "text":
        if (p.text.trim()) out.push(p.text.trim());
        break;
      case "reasoning":
        if (p.text.trim())
          out.push(`<details><summary>Reasoning</summary>\n\n${quote(p.text.trim())}\n\n</details>`);
        break;
      case "toolCall": {
        const r = view.resultOf(p);
        const st = callStatus(r);
        const lines = [
          `**Tool call** \`${p.name}\` — ${st.failed ? `❌ failed (${st.label})` : st.label === "ok" ? "✅" : `✅ ${st.label}`}`,
        ];
        lines.push(fence(prettyArgs(p.argumentsText), "json"));
        if (r) {
          const text = resultText(r);
          const diffs = diffsOf(r.details);
          const hasDiff = diffs.some((d) => d.diff.trim() !== "" && text.includes(d.diff.trim()));
          lines.push(
            `<details><summary>${r.isError ? "Error" : "Result"}</summary>\n\n${fence(clip(text, max), hasDiff ? "diff" : "text")}\n\n</details>`,
          );
          for (const d of diffs)
            if (!text.includes(d.diff.trim())) lines.push(fence(clip(d.diff, max), "diff"));
        }
        const child = view.childOf(p);
        if (child && depth < 6) lines.push(quote(renderSession(child, { maxResultChars: max }, depth + 1)));
        out.push(lines.join("\n\n"));
        break;
      }
      case "toolResult":
        if (!view.hasCall(p))
          out.push(
            `**Tool result** \`${p.name}\`${p.isError ? " (error)" : ""}\n\n${fence(clip(resultText(p), max), "text")}`,
          );
        break;
      case "attachment":
        out.push(`📎 ${p.name ?? p.ref ?? "attachment"} (${p.mediaType})`);
        break;
      case "code":
        out.push(fence(p.source, p.language));
        break;
      case "output":
        out.push(`Output:\n\n${fence(clip(p.text, max), "text")}`);
        break;
      case "error":
        out.push(`> **Error${p.code ? ` (${p.code})` : ""}:** ${p.message}`);
        break;
    }
  }
  return out.join("\n\n");
}

function renderSession(exported: ExportedSession, options: MarkdownOptions, depth: number): string {
  const view = buildView(exported);
  const s = exported.session;
  const max = options.maxResultChars ?? 4_000;
  const h = depth === 0 ? "#" : "####";
  const lines: string[] = [];
  lines.push(`${h} ${depth === 0 ? "" : "Subagent: "}${s.title ?? s.id}`);
  lines.push("");
  lines.push(
    [
      `- **Model:** ${s.model} · **Mode:** ${s.mode}`,
      `- **Session:** \`${s.id}\` · created ${formatTime(s.createdAt)}`,
      ...(s.cwd && depth === 0 ? [`- **Directory:** \`${s.cwd}\``] : []),
      `- **Usage:** ${formatTokens(view.total.usage)} · ${formatCost(view.total.costUsd)}`,
      ...(view.leaves.length > 1 && depth === 0
        ? [`- **Branches:** ${view.leaves.length} (this transcript follows the active one)`]
        : []),
    ].join("\n"),
  );
  let turn = 0;
  let currentTurn: string | null = null;
  const seen = new Set<string>();
  const turnFooter = (id: string | null) => {
    if (id === null) return;
    const u = view.turnUsage.get(id);
    if (u) lines.push("", `<sub>Turn ${turn}: ${formatTokens(u.usage)} · ${formatCost(u.costUsd)}</sub>`);
  };
  for (const n of view.activePath) {
    if (n.turnId !== currentTurn) {
      turnFooter(currentTurn);
      currentTurn = n.turnId;
      if (n.turnId !== null && !seen.has(n.turnId)) {
        seen.add(n.turnId);
        turn++;
      }
    }
    const m = messageOf(n);
    if (!m) {
      const a = approvalOf(n);
      if (a)
        lines.push(
          "",
          `> **Approval** ${a.decision === "approve" ? "✅" : "⛔"} ${approvalSummary(a)} (${formatTime(a.at)})`,
        );
      const c = compactionOf(n);
      if (c)
        lines.push(
          "",
          `> **Compaction** ${compactionSummary(c)} — the model sees this summary instead of the messages above:`,
          ">",
          ...c.summary.split("\n").map((l) => `> ${l}`),
        );
      const ho = handoffOf(n);
      if (ho) lines.push("", `> **Handoff** ${handoffSummary(ho)}`);
      if (n.kind === "frame") {
        const task = (n.payload as { task?: unknown } | null)?.task;
        lines.push("", "---", "", `*New agent frame*${typeof task === "string" ? `: ${task}` : ""}`);
      }
      continue;
    }
    const body = renderMessage(m, view, max, depth);
    if (!body) continue;
    const by = view.compactedBy.get(n.id) ? " *(summarised)*" : "";
    lines.push("", `${depth === 0 ? "###" : "#####"} ${ROLE[m.role] ?? m.role}${by}`, "", body);
  }
  turnFooter(currentTurn);
  return lines.join("\n");
}

/** A readable Markdown transcript of the active branch (for pasting into an issue). */
export function renderSessionMarkdown(exported: ExportedSession, options: MarkdownOptions = {}): string {
  return `${renderSession(inlineArtifacts(exported), options, 0)}\n`;
}
