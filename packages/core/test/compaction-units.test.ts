// Units of compaction: the active-path projection, the token estimate and its calibration,
// the transcript chunking, and the one prompt file.
import type { Message } from "@lash/sansio";
import { describe, expect, it } from "vitest";
import { chunkTranscript, projectHistory, renderMessage } from "../src/compaction/compact.ts";
import {
  Calibration,
  messageTokens,
  RunningEstimate,
  requestTokens,
  textTokens,
} from "../src/compaction/estimate.ts";
import {
  COMPACTION_SYSTEM,
  SUMMARY_PREFIX,
  SUMMARY_SECTIONS,
  stagePrompt,
} from "../src/compaction/prompt.ts";
import type { GraphNode } from "../src/store.ts";

let seq = 0;
const msg = (id: string, role: Message["role"], text: string, frameId = "f0"): GraphNode => ({
  id,
  sessionId: "s",
  parentId: null,
  frameId,
  kind: "message",
  turnId: "t",
  payload: { id, role, parts: [{ type: "text", text }] } satisfies Message,
  createdAt: 0,
  seq: ++seq,
});
const compaction = (id: string, summary: string): GraphNode => ({
  id,
  sessionId: "s",
  parentId: null,
  frameId: "f0",
  kind: "protocol",
  turnId: "t",
  payload: { type: "compaction", summary, firstNodeId: "a", lastNodeId: "b", replaced: 2 },
  createdAt: 0,
  seq: ++seq,
});

describe("projectHistory", () => {
  it("without a compaction: every message of the frame, in order", () => {
    const p = projectHistory(
      [msg("1", "user", "a"), msg("x", "user", "other frame", "f1"), msg("2", "assistant", "b")],
      "f0",
    );
    expect(p.history.map((m) => m.id)).toEqual(["1", "2"]);
    expect(p.span.map((n) => n.id)).toEqual(["1", "2"]);
    expect(p.last).toBeUndefined();
  });

  it("the last compaction's summary replaces everything before it; the span starts after it", () => {
    const path = [
      msg("1", "user", "a"),
      msg("2", "assistant", "b"),
      compaction("c1", "first summary"),
      msg("3", "user", "c"),
      compaction("c2", "second summary"),
      msg("4", "user", "d"),
      msg("5", "assistant", "e"),
    ];
    const p = projectHistory(path, "f0");
    expect(p.history.map((m) => m.id)).toEqual(["c2.summary", "4", "5"]);
    expect(p.history[0]!.role).toBe("user");
    const text = (p.history[0]!.parts[0] as { text: string }).text;
    expect(text.startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(text).toContain("second summary");
    expect(text).not.toContain("first summary");
    expect(p.last?.nodeId).toBe("c2");
    expect(p.span.map((n) => n.id)).toEqual(["4", "5"]);
  });

  it("a compaction node that is not on the path (another branch) changes nothing", () => {
    const p = projectHistory([msg("1", "user", "a"), msg("2", "assistant", "b")], "f0");
    expect(p.history).toHaveLength(2);
  });
});

describe("the token estimate", () => {
  it("grows with the text and counts tool calls, results and attachments", () => {
    const short: Message = { id: "a", role: "user", parts: [{ type: "text", text: "x".repeat(40) }] };
    const long: Message = { id: "b", role: "user", parts: [{ type: "text", text: "x".repeat(4000) }] };
    expect(messageTokens(long) - messageTokens(short)).toBe(990);
    const call: Message = {
      id: "c",
      role: "assistant",
      parts: [{ type: "toolCall", id: "1", name: "read_file", argumentsText: "y".repeat(400) }],
    };
    expect(messageTokens(call)).toBeGreaterThan(100);
    const image: Message = {
      id: "d",
      role: "user",
      parts: [{ type: "attachment", mediaType: "image/png", data: "" }],
    };
    expect(messageTokens(image)).toBeGreaterThanOrEqual(1000);
  });

  it("counts the system prompt and the tool specs of a request", () => {
    const messages: Message[] = [{ id: "a", role: "user", parts: [{ type: "text", text: "hello" }] }];
    const bare = requestTokens({ messages });
    const tools = [{ name: "t", description: "d".repeat(400), inputSchema: {} }];
    expect(requestTokens({ messages, system: "s".repeat(400) })).toBe(bare + 100);
    expect(requestTokens({ messages, tools })).toBeGreaterThan(bare + 100);
  });

  it("is at least as strict as characters over four of the text it sends", () => {
    const text = "some words of a prompt ".repeat(50);
    expect(messageTokens({ id: "a", role: "user", parts: [{ type: "text", text }] })).toBeGreaterThanOrEqual(
      text.length / 4,
    );
  });

  it("the running estimate of a growing message log equals the full count at every step, and starts over on another log", () => {
    const log: Message[] = [];
    const running = new RunningEstimate();
    for (let i = 0; i < 20; i++) {
      log.push({
        id: `m${i}`,
        role: i % 2 ? "assistant" : "user",
        parts: [{ type: "text", text: "w".repeat(i * 37) }],
      });
      expect(running.of({ system: "sys", messages: log })).toBe(
        requestTokens({ system: "sys", messages: log }),
      );
    }
    const other: Message[] = [{ id: "o", role: "user", parts: [{ type: "text", text: "short" }] }];
    expect(running.of({ messages: other })).toBe(requestTokens({ messages: other }));
  });

  it("calibration scales up by what the provider reported, never below the raw estimate, clamped", () => {
    const c = new Calibration();
    expect(c.scale("s", 1000)).toBe(1000);
    c.observe("s", 1000, 1500);
    expect(c.scale("s", 2000)).toBe(3000);
    c.observe("s", 1000, 600); // the provider counted fewer: the raw estimate stands
    expect(c.scale("s", 2000)).toBe(2000);
    c.observe("s", 10, 1_000_000); // absurd: clamped to 4×
    expect(c.scale("s", 100)).toBe(400);
    c.observe("s", 1000, undefined); // no report: unchanged
    expect(c.scale("s", 100)).toBe(400);
    expect(c.scale("other", 100)).toBe(100);
  });
});

describe("chunkTranscript", () => {
  it("cuts a long transcript into chunks within the budget, in order, losing no message", () => {
    const messages: Message[] = Array.from({ length: 60 }, (_, i) => ({
      id: `m${i}`,
      role: i % 2 ? "assistant" : "user",
      parts: [{ type: "text", text: `message ${i} ${"z".repeat(200)}` }],
    }));
    const chunks = chunkTranscript(messages, 500);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(textTokens(c)).toBeLessThanOrEqual(500);
    const all = chunks.join("\n\n");
    let at = -1;
    for (let i = 0; i < 60; i++) {
      const next = all.indexOf(`message ${i} `, at + 1);
      expect(next).toBeGreaterThan(at);
      at = next;
    }
  });

  it("a message bigger than a chunk is cut to fit", () => {
    const huge: Message = { id: "h", role: "tool", parts: [{ type: "text", text: "q".repeat(100_000) }] };
    const [chunk] = chunkTranscript([huge], 1000);
    expect(textTokens(chunk!)).toBeLessThanOrEqual(1000);
  });

  it("renders tool calls and results by name, leaves reasoning out", () => {
    const text = renderMessage({
      id: "a",
      role: "assistant",
      parts: [
        { type: "reasoning", text: "secret thoughts" },
        { type: "toolCall", id: "1", name: "write_file", argumentsText: '{"path":"src/a.ts"}' },
      ],
    });
    expect(text).toContain("[tool call write_file]");
    expect(text).toContain("src/a.ts");
    expect(text).not.toContain("secret thoughts");
  });
});

describe("the compaction prompt (one file)", () => {
  it("asks for every section a summary must keep", () => {
    const headings = SUMMARY_SECTIONS.map((s) => s.heading);
    for (const h of headings) expect(COMPACTION_SYSTEM).toContain(`## ${h}`);
    const lower = COMPACTION_SYSTEM.toLowerCase();
    for (const topic of [
      "goals",
      "constraint",
      "decision",
      "why",
      "file path",
      "open questions",
      "todo",
      "update_plan",
      "plan",
      "artifact",
    ])
      expect(lower).toContain(topic.toLowerCase());
  });

  it("a later stage's request carries the summary so far; the user's instructions are passed on", () => {
    const first = stagePrompt({ previous: undefined, transcript: "T1", stage: 1, stages: 2 });
    expect(first).not.toContain("<previous-summary>");
    const second = stagePrompt({
      previous: "S1",
      transcript: "T2",
      stage: 2,
      stages: 2,
      instructions: "keep the API",
    });
    expect(second).toContain("<previous-summary>\nS1\n</previous-summary>");
    expect(second).toContain("part 2 of 2");
    expect(second).toContain("keep the API");
  });
});
