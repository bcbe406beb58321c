// Sessions recorded before lash gave tool calls their own ids (no `lashCallId`), from a provider
// that reused `call_1` in every turn and `x` twice in one batch: the export pairs each result with
// its call within the same turn, in order — never across the session.
import type { Message, Part } from "@lash/sansio";
import { describe, expect, it } from "vitest";
import { renderSessionHtml } from "../src/html.ts";
import { renderSessionMarkdown } from "../src/md.ts";
import type { ExportedNode, ExportedSession } from "../src/schema.ts";

function oldSession(): ExportedSession {
  const nodes: ExportedNode[] = [];
  let parent: string | null = null;
  const add = (turn: string, role: Message["role"], parts: Part[]) => {
    const id = `${turn}.m${nodes.length}`;
    nodes.push({
      id,
      parentId: parent,
      frameId: "f",
      kind: "message",
      turnId: turn,
      payload: { id, role, parts },
      createdAt: 1_700_000_000_000 + nodes.length,
    });
    parent = id;
  };
  const call = (id: string, n: number): Part => ({
    type: "toolCall",
    id,
    name: "note",
    argumentsText: JSON.stringify({ n }),
  });
  const result = (id: string, text: string, isError = false): Part => ({
    type: "toolResult",
    callId: id,
    name: "note",
    content: [{ type: "text", text }],
    isError,
  });
  for (let k = 1; k <= 3; k++) {
    add(`t${k}`, "user", [{ type: "text", text: `note ${k}` }]);
    add(`t${k}`, "assistant", [call("call_1", k)]);
    add(`t${k}`, "tool", [result("call_1", `result ${k}`, k === 2)]);
    add(`t${k}`, "assistant", [{ type: "text", text: `done ${k}` }]);
  }
  add("t4", "user", [{ type: "text", text: "two at once" }]);
  add("t4", "assistant", [call("x", 41), call("x", 42)]);
  add("t4", "tool", [result("x", "result 41"), result("x", "result 42")]);
  add("t5", "user", [{ type: "text", text: "one lost" }]);
  add("t5", "assistant", [call("call_1", 5)]);
  return {
    format: "lash-session",
    version: 1,
    session: {
      id: "s1",
      model: "m",
      mode: "standard",
      createdAt: 0,
      updatedAt: 0,
      leafId: parent,
      frameId: "f",
      state: {},
    },
    nodes,
    usage: [],
    children: [],
  };
}

describe("pairing results of sessions recorded without lash's call ids", () => {
  it("Markdown: each card shows the result of its own turn (and batch position)", () => {
    const md = renderSessionMarkdown(oldSession());
    const cards = md.split("**Tool call** `note`").slice(1);
    expect(cards.map((c) => /"n": (\d+)/.exec(c)?.[1])).toEqual(["1", "2", "3", "41", "42", "5"]);
    expect(cards.map((c) => /result \d+/.exec(c)?.[0] ?? "none")).toEqual([
      "result 1",
      "result 2",
      "result 3",
      "result 41",
      "result 42",
      "none",
    ]);
    expect(cards[1]).toMatch(/^ — ❌ failed \(error\)/);
    expect(cards[5]).toMatch(/^ — ❌ failed \(no result\)/);
  });

  it("HTML: each card shows its own result; no result is shown twice or on its own", () => {
    const html = renderSessionHtml(oldSession());
    const cards = html.split('<details class="tool ').slice(1);
    expect(cards).toHaveLength(6);
    expect(cards.map((c) => /result (\d+)<\/pre>/.exec(c)?.[1] ?? "none")).toEqual([
      "1",
      "2",
      "3",
      "41",
      "42",
      "none",
    ]);
    expect(html).not.toContain("result of call_1");
  });
});
