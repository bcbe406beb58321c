// Small file and text helpers shared by the runner and the suites.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { RecordedRequest } from "@lash/providers/testing";
import type { Usage } from "@lash/sansio";

/** Write a file atomically (temp file + rename): a killed run never leaves half a result. */
export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

/** JSON or JSON Lines, by content. */
export function readJsonOrJsonl(path: string): unknown[] {
  const text = readFileSync(path, "utf8").trim();
  if (text.startsWith("[")) return JSON.parse(text) as unknown[];
  if (text.startsWith("{") && !text.includes("\n{")) {
    const one = JSON.parse(text) as unknown;
    return [one];
  }
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as unknown);
}

export const fileExists = existsSync;

/** A task id as a file name. */
export function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, "_");
}

export const zeroUsage: Usage = { input: 0, output: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    out[k] =
      ((a as Record<string, number | undefined>)[k] ?? 0) +
      ((b as Record<string, number | undefined>)[k] ?? 0);
  }
  return out as unknown as Usage;
}

export function addCost(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
}

interface ChatMessage {
  readonly role?: string;
  readonly content?: unknown;
}

/** The text of a Chat Completions message (string or parts). */
export function messageText(m: ChatMessage | undefined): string {
  const c = m?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c))
    return c
      .map((p) => (typeof p === "object" && p && "text" in p ? String((p as { text: unknown }).text) : ""))
      .join("");
  return "";
}

export function chatMessages(req: RecordedRequest): readonly ChatMessage[] {
  return (req.body as { messages?: ChatMessage[] } | undefined)?.messages ?? [];
}

/** All user-visible text of a request (every message), for scripted models that look things up. */
export function requestText(req: RecordedRequest): string {
  return chatMessages(req)
    .map((m) => messageText(m))
    .join("\n");
}

/** The last JSON object in a text, parsed (or undefined). */
export function lastJsonObject(text: string): unknown {
  let best: { end: number; value: unknown } | undefined;
  for (let i = text.indexOf("{"); i >= 0; i = text.indexOf("{", i + 1)) {
    let depth = 0;
    let inString = false;
    for (let j = i; j < text.length; j++) {
      const ch = text[j];
      if (inString) {
        if (ch === "\\") j++;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) {
        try {
          const value = JSON.parse(text.slice(i, j + 1)) as unknown;
          if (!best || j >= best.end) best = { end: j, value };
        } catch {
          // not JSON
        }
        break;
      }
    }
  }
  return best?.value;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * True for a request from an RLM-mode session: no native tools, and the system prompt holds
 * the Lashlang execution contract. Scripted models answer those with Lashlang cells.
 */
export function isRlmRequest(req: RecordedRequest): boolean {
  const body = req.body as { tools?: unknown[] } | undefined;
  if (body?.tools && body.tools.length > 0) return false;
  return chatMessages(req).some((m) => m.role === "system" && messageText(m).includes("<lashlang>"));
}

/** The RLM cells the model already wrote in this request's history (one per step). */
export function rlmSteps(req: RecordedRequest): number {
  return chatMessages(req).filter((m) => m.role === "assistant" && messageText(m).includes("<lashlang>"))
    .length;
}

/** The last user message that is the user's own (not the RLM mode's per-iteration context). */
export function lastUserText(req: RecordedRequest): string {
  const users = chatMessages(req).filter((m) => m.role === "user");
  for (let i = users.length - 1; i >= 0; i--) {
    const t = messageText(users[i]);
    if (!t.startsWith("=== CURRENT ITERATION")) return t;
  }
  return "";
}

/** A Lashlang literal for a JSON value (strings double-quoted with `\\ " \n \r \t` escaped). */
export function lashLiteral(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string")
    return `"${v.replace(/[\\"\n\r\t]/g, (c) => ({ "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t" })[c]!)}"`;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(lashLiteral).join(", ")}]`;
  const entries = Object.entries(v as Record<string, unknown>).map(
    ([k, x]) => `${/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : lashLiteral(k)}: ${lashLiteral(x)}`,
  );
  return `{${entries.join(", ")}}`;
}

/** An RLM response: optional prose, then one Lashlang cell (each tag on its own line). */
export function lashCell(code: string, prose = ""): string {
  return `${prose ? `${prose}\n` : ""}<lashlang>\n${code}\n</lashlang>`;
}
