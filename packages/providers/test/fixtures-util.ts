import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WireFormat } from "../src/testing/index.ts";

/** The recordings, copied into the repository (provenance in its README). */
export const fixturesDir = join(import.meta.dirname, "fixtures", "provider-streams");

export const formatOfDir: Record<string, WireFormat> = {
  anthropic: "anthropic",
  google: "google",
  "openai-chat": "openai-chat",
  "openai-compatible": "openai-chat",
  "openai-responses": "openai-responses",
};

export interface Fixture {
  readonly dir: string;
  readonly file: string;
  readonly format: WireFormat;
  /** One reply per recorded response: `data:` payloads, or raw SSE text. */
  readonly replies: ({ raw: string[] } | { rawSse: string })[];
}

export function loadFixtures(): Fixture[] {
  const out: Fixture[] = [];
  for (const dir of readdirSync(fixturesDir).sort()) {
    const format = formatOfDir[dir];
    if (!format) continue;
    for (const file of readdirSync(join(fixturesDir, dir)).sort()) {
      const text = readFileSync(join(fixturesDir, dir, file), "utf8");
      if (file.endsWith(".sse")) {
        out.push({ dir, file, format, replies: [{ rawSse: text }] });
        continue;
      }
      const lines = text.split("\n").filter((l) => l.trim() !== "");
      // A Responses recording may hold several responses back to back: one reply each.
      const replies: string[][] = [];
      for (const line of lines) {
        if (format === "openai-responses" && line.includes('"type":"response.created"')) replies.push([]);
        if (replies.length === 0) replies.push([]);
        replies[replies.length - 1]!.push(line);
      }
      out.push({ dir, file, format, replies: replies.map((raw) => ({ raw })) });
    }
  }
  return out;
}
