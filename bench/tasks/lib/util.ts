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
