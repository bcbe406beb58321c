/**
 * History in emission format (reference §2.3): the frame's messages become `history` items and
 * are rendered back to the model exactly as they were emitted — one assistant message per step
 * holding the canonical cell, one user message with its observations (`history[N].output[M]`
 * previews), plain messages verbatim by role.
 */
import type { AttachmentPart, Message, Part } from "../message.ts";
import { canonicalCell } from "./cell.ts";
import type { RlmAttachmentRef, RlmHistoryItem } from "./types.ts";

/** Language of RLM code parts. */
export const LASHLANG = "lashlang";
/** Name of the toolResult part an observation message uses to record a `finish` value. */
export const FINISH_RECORD = "lashlang.finish";
/** Print previews in history: 50 KiB / 2000 lines (reference §1.15). */
export const PRINT_PREVIEW = { maxChars: 50 * 1024, maxLines: 2000 } as const;
/** Plain messages are head/tail truncated to this many characters. */
export const MAX_MESSAGE_CHARS = 10_000;

export interface Preview {
  readonly text: string;
  readonly lossy: boolean;
  /** Length of the full text in Unicode scalar values. */
  readonly chars: number;
}

/** Head/tail preview within a character and line budget; the cut is marked in the text. */
export function previewText(text: string, maxChars: number, maxLines = Number.POSITIVE_INFINITY): Preview {
  const chars = [...text];
  let lineCount = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineCount++;
  if (chars.length <= maxChars && lineCount <= maxLines) return { text, lossy: false, chars: chars.length };
  // Keep about two thirds at the head and one third at the tail, by lines then by characters.
  const ls = text.split("\n");
  const headLines = Math.max(1, Math.floor((Math.min(maxLines, ls.length) * 2) / 3));
  const tailLines = Math.max(0, Math.min(maxLines, ls.length) - headLines - 1);
  let head = ls.slice(0, headLines).join("\n");
  let tail = tailLines > 0 ? ls.slice(ls.length - tailLines).join("\n") : "";
  const headBudget = Math.floor((maxChars * 2) / 3);
  const tailBudget = maxChars - headBudget;
  if ([...head].length > headBudget) head = [...head].slice(0, headBudget).join("");
  if ([...tail].length > tailBudget) tail = [...tail].slice(-tailBudget).join("");
  const omitted = chars.length - [...head].length - [...tail].length;
  return {
    text: `${head}\n... ${omitted} chars truncated ...${tail ? `\n${tail}` : ""}`,
    lossy: true,
    chars: chars.length,
  };
}

function textOf(parts: readonly Part[]): string {
  let out = "";
  for (const p of parts) if (p.type === "text") out += p.text;
  return out;
}

function attachmentRef(p: AttachmentPart, i: number): RlmAttachmentRef {
  return {
    id: p.name ?? p.ref ?? `attachment${i}`,
    media_type: p.mediaType,
    ...(p.name !== undefined ? { label: p.name } : {}),
  };
}

/** An item together with the attachment parts it re-sends. */
interface Entry {
  readonly item: RlmHistoryItem;
  readonly attachments: readonly AttachmentPart[];
  /** Iteration-independent role of a plain message. */
  readonly role?: "user" | "assistant" | "system";
}

function isStep(m: Message): boolean {
  return m.role === "assistant" && m.parts.some((p) => p.type === "code" && p.language === LASHLANG);
}

function isObservation(m: Message | undefined): m is Message {
  return m !== undefined && m.role === "tool";
}

function entries(messages: readonly Message[]): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (isStep(m)) {
      const codePart = m.parts.find((p) => p.type === "code");
      const code = codePart?.type === "code" ? codePart.source : "";
      const obs = isObservation(messages[i + 1]) ? messages[i + 1] : undefined;
      if (obs) i++;
      const output: string[] = [];
      const images: AttachmentPart[] = [];
      let error: string | undefined;
      let final: { value: unknown } | undefined;
      for (const p of obs?.parts ?? []) {
        if (p.type === "output") output.push(p.text);
        else if (p.type === "attachment") images.push(p);
        else if (p.type === "error") error = p.message;
        else if (p.type === "toolResult" && p.name === FINISH_RECORD) final = { value: p.value ?? null };
      }
      if (final && error === undefined) {
        // Completed-turn precedence: a terminal step followed by an assistant transcript message
        // (before the next user input) is superseded by that message.
        let j = i + 1;
        while (j < messages.length && messages[j]!.role === "system") j++;
        const next = messages[j];
        if (next && next.role === "assistant" && !isStep(next)) continue;
      }
      out.push({
        item: {
          kind: "lashlang_step",
          id: m.id,
          prose: textOf(m.parts).trimEnd(),
          code,
          output,
          images: images.map(attachmentRef),
          ...(error !== undefined ? { error } : {}),
          ...(final ? { final_output: final.value } : {}),
        },
        attachments: images,
      });
      continue;
    }
    const attachments = m.parts.filter((p): p is AttachmentPart => p.type === "attachment");
    let content = textOf(m.parts);
    if (m.role === "tool") {
      // A tool message outside a step (not produced by RLM): its result texts, as an event.
      content = m.parts
        .flatMap((p) => (p.type === "toolResult" ? [textOf(p.content)] : p.type === "output" ? [p.text] : []))
        .join("\n");
    }
    if (content.trim() === "" && attachments.length === 0) continue;
    const role = m.role === "tool" ? "event" : m.role;
    out.push({
      item: { kind: "message", id: m.id, role, content, attachments: attachments.map(attachmentRef) },
      attachments,
      role: m.role === "tool" ? "user" : m.role,
    });
  }
  return out;
}

/** The `history` binding: one item per step or plain message of the frame, in order. */
export function historyItems(messages: readonly Message[]): RlmHistoryItem[] {
  return entries(messages).map((e) => e.item);
}

function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

function observationText(n: number, item: Extract<RlmHistoryItem, { kind: "lashlang_step" }>): string {
  const blocks: string[] = [];
  item.output.forEach((text, m) => {
    const p = previewText(text, PRINT_PREVIEW.maxChars, PRINT_PREVIEW.maxLines);
    const handle = `history[${n}].output[${m}]`;
    const note = p.lossy ? ` — preview only, full value retained; re-print ${handle} for the rest` : "";
    blocks.push(`${handle} (${p.chars} chars${note}):\n${p.text}`);
  });
  if (item.images.length > 0)
    blocks.push(
      `Images:\n${item.images.map((img, i) => `- history[${n}].images[${i}]: ${JSON.stringify(img)}`).join("\n")}`,
    );
  if (item.error !== undefined) blocks.push(`Error:\n${item.error}`);
  if ("final_output" in item) blocks.push(`Final output:\n${prettyJson(item.final_output)}`);
  return blocks.length > 0 ? blocks.join("\n\n") : "(no printed output)";
}

/** Render the frame's messages in emission format, for the model. */
export function renderHistory(messages: readonly Message[], idPrefix = "rlm.h"): Message[] {
  const list = entries(messages);
  if (list.length === 0)
    return [
      {
        id: `${idPrefix}.empty`,
        role: "user",
        parts: [{ type: "text", text: "=== HISTORY ===\n\nNo chronological history is available." }],
      },
    ];
  const out: Message[] = [];
  list.forEach((entry, n) => {
    const item = entry.item;
    if (item.kind === "lashlang_step") {
      out.push({
        id: `${idPrefix}.${n}.cell`,
        role: "assistant",
        parts: [{ type: "text", text: canonicalCell(item.prose, item.code) }],
      });
      out.push({
        id: `${idPrefix}.${n}.obs`,
        role: "user",
        parts: [{ type: "text", text: observationText(n, item) }, ...entry.attachments],
      });
      return;
    }
    let text = item.content;
    if (item.role === "user" || item.role === "event") {
      const p = previewText(text, MAX_MESSAGE_CHARS);
      if (p.lossy)
        text = `${p.text}\n(preview only — full value retained; re-print history[${n}].content for the rest)`;
    }
    if (item.attachments.length > 0)
      text += `${text ? "\n\n" : ""}Attachments:\n${item.attachments
        .map((a, i) => `- history[${n}].attachments[${i}]: ${JSON.stringify(a)}`)
        .join("\n")}`;
    out.push({
      id: `${idPrefix}.${n}`,
      role: entry.role ?? "user",
      parts: [{ type: "text", text }, ...(entry.role === "assistant" ? [] : entry.attachments)],
    });
  });
  return out;
}
