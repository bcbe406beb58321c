import { describe, expect, it } from "vitest";
import { SseParser } from "../src/sse.ts";

describe("SseParser", () => {
  it("dispatches on a blank line, joins data lines, keeps the id, ignores comments", () => {
    const parser = new SseParser();
    const out = parser.push(': keep-alive\nid: 7\nevent: textDelta\ndata: {"a":\ndata: 1}\n\n');
    expect(out).toEqual([{ id: "7", event: "textDelta", data: '{"a":\n1}' }]);
  });

  it("accepts \\r\\n and \\r line ends, also split across chunks", () => {
    const parser = new SseParser();
    const text = "id: 1\r\ndata: one\r\n\r\nid: 2\rdata: two\r\r";
    const out = [];
    for (const ch of text) out.push(...parser.push(ch));
    expect(out).toEqual([
      { id: "1", event: "message", data: "one" },
      { id: "2", event: "message", data: "two" },
    ]);
  });

  it("waits for the end of an event that arrives in pieces", () => {
    const parser = new SseParser();
    expect(parser.push("id: 3\nda")).toEqual([]);
    expect(parser.push("ta: x\n")).toEqual([]);
    expect(parser.push("\n")).toEqual([{ id: "3", event: "message", data: "x" }]);
  });

  it("a block of only comments or fields without data dispatches nothing; the id carries over", () => {
    const parser = new SseParser();
    expect(parser.push(": ping\n\nid: 9\n\n")).toEqual([]);
    expect(parser.push("data:no-space\n\n")).toEqual([{ id: "9", event: "message", data: "no-space" }]);
  });
});
