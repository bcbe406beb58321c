import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createTraceRecorder,
  fanout,
  IsolatedSink,
  jsonlSink,
  makeRedactor,
  memorySink,
  parseTrace,
  type TraceInput,
  type TraceRecord,
  type TraceSink,
} from "../src/index.ts";

const base = { sessionId: "s1", turnId: "t1" };
const turn: TraceInput[] = [
  {
    ...base,
    type: "turnStarted",
    input: [{ id: "u", role: "user", parts: [{ type: "text", text: "hi" }] }],
    resumed: false,
    model: "openai/gpt-5",
    at: 1000,
  },
  { ...base, type: "llmRequest", iteration: 0, messageCount: 1, tools: ["shell"], at: 1001 },
  { ...base, type: "textDelta", text: "ok", at: 1002 },
  {
    ...base,
    type: "llmResponse",
    iteration: 0,
    stopReason: "toolUse",
    usage: { input: 10, output: 2 },
    durationMs: 5,
    replayed: false,
    at: 1006,
  },
  { ...base, type: "toolStarted", callId: "c1", name: "shell", args: { command: "ls" }, at: 1007 },
  {
    ...base,
    type: "toolCompleted",
    callId: "c1",
    name: "shell",
    isError: true,
    content: [{ type: "text", text: "Invalid arguments for shell: x" }],
    durationMs: 3,
    replayed: false,
    at: 1010,
  },
  {
    ...base,
    type: "turnFinished",
    outcome: { type: "stopped", reason: "toolError", message: "bad" },
    usage: { input: 10, output: 2 },
    at: 1011,
  },
];

describe("recorder", () => {
  it("maps events to records with spans, outcome and error class", async () => {
    const mem = memorySink();
    const r = createTraceRecorder({ sinks: [mem], recorderId: "r", redact: { env: {} } });
    for (const e of turn) r.record(e);
    await r.close();
    expect(mem.records.map((x) => [x.kind, x.spanId, x.parentSpanId])).toEqual([
      ["turn_started", "turn:s1:t1", undefined],
      ["llm_request", "llm:s1:t1:0", "turn:s1:t1"],
      ["llm_response", "llm:s1:t1:0", "turn:s1:t1"],
      ["tool_started", "tool:s1:t1:c1", "turn:s1:t1"],
      ["tool_completed", "tool:s1:t1:c1", "turn:s1:t1"],
      ["turn_finished", "turn:s1:t1", undefined],
    ]);
    expect(mem.records[4]).toMatchObject({
      errorClass: "invalidRequest",
      result: { preview: "Invalid arguments for shell: x" },
    });
    expect(mem.records[5]).toMatchObject({
      status: "stopped",
      reason: "toolError",
      durationMs: 11,
      llmCalls: 1,
      toolCalls: 1,
    });
    expect(mem.records.map((x) => x.id)).toEqual(["r-1", "r-2", "r-3", "r-4", "r-5", "r-6"]);
    // standard level: no bodies, no streamed text
    expect(mem.records[2]).not.toHaveProperty("text");
  });

  it("records RLM code cells from the messages stream, and tools inside a cell nest under it", async () => {
    const mem = memorySink();
    const r = createTraceRecorder({ sinks: [mem], redact: { env: {} } });
    r.record({
      ...base,
      type: "messages",
      messages: [
        { id: "a", role: "assistant", parts: [{ type: "code", language: "lashlang", source: "print(1)" }] },
      ],
    });
    r.record({ ...base, type: "toolStarted", callId: "c9", name: "read_file", args: {} });
    r.record({
      ...base,
      type: "messages",
      messages: [{ id: "o", role: "user", parts: [{ type: "output", text: "1" }] }],
    });
    await r.close();
    expect(mem.records.map((x) => x.kind)).toEqual([
      "code_cell_started",
      "tool_started",
      "code_cell_completed",
    ]);
    expect(mem.records[1]!.parentSpanId).toBe("code:s1:t1:1");
    expect(mem.records[2]).toMatchObject({ ok: true, output: ["1"] });
  });

  it("keeps unknown activity types as plugin events, and survives malformed events", async () => {
    const mem = memorySink();
    const r = createTraceRecorder({ sinks: [mem], redact: { env: {} } });
    r.record({ ...base, type: "somethingNew", value: 1 } as unknown as TraceInput);
    r.record({ ...base, type: "messages" } as unknown as TraceInput);
    await r.close();
    expect(mem.records).toHaveLength(1);
    expect(mem.records[0]).toMatchObject({
      kind: "plugin_event",
      plugin: "activity",
      name: "somethingNew",
      data: { value: 1 },
    });
  });

  it("appends JSONL that parses back under the schema, flushed at turn end", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-trace-unit-"));
    const file = join(dir, "nested", "t.jsonl");
    const r = createTraceRecorder({ sinks: [jsonlSink(file)], redact: { env: {} } });
    for (const e of turn) r.record(e);
    await r.flush();
    const lines = parseTrace(readFileSync(file, "utf8"));
    expect(lines.map((l) => l.type)).toEqual(Array(6).fill("record"));
    // a second recorder appends
    const r2 = createTraceRecorder({ sinks: [jsonlSink(file)], redact: { env: {} } });
    r2.record(turn[0]!);
    await r2.close();
    await r.close();
    expect(parseTrace(readFileSync(file, "utf8"))).toHaveLength(7);
  });
});

describe("redaction", () => {
  it("redacts env secrets, header values, bearer tokens, key shapes and host patterns", () => {
    const redact = makeRedactor({
      env: {
        MY_SERVICE_TOKEN: "tok-abcdef-123",
        DB_PASSWORD: "hunter2hunter2",
        PATH: "/usr/bin",
        SHORT_KEY: "abc",
      },
      patterns: [/acct-\d{6}/, "internal.example.com"],
    });
    const out = redact({
      headers: { Authorization: "Bearer xyz", "x-api-key": "whatever", accept: "json" },
      text: "use tok-abcdef-123 and hunter2hunter2 at internal.example.com for acct-123456; Bearer abcdefghijkl; sk-proj-ABCDEFGHIJKLMNOPQRST",
      path: "/usr/bin",
      n: 3,
      short: "abc",
    });
    expect(out.headers).toEqual({ Authorization: "[REDACTED]", "x-api-key": "[REDACTED]", accept: "json" });
    expect(out.text).toBe(
      "use [REDACTED] and [REDACTED] at [REDACTED] for [REDACTED]; Bearer [REDACTED]; [REDACTED]",
    );
    expect(out.path).toBe("/usr/bin");
    expect(out.short).toBe("abc");
    expect(out.n).toBe(3);
  });
});

describe("sink isolation", () => {
  const rec = (i: number) =>
    ({
      v: 1,
      id: `x-${i}`,
      ts: i,
      kind: "error",
      sessionId: "s",
      spanId: "s",
      errorKind: "k",
      message: "m",
    }) as TraceRecord;

  it("drops records beyond the queue bound instead of waiting, and counts them", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const seen: TraceRecord[] = [];
    const slow: TraceSink = {
      name: "slow",
      write: async (b) => {
        await gate;
        seen.push(...b);
      },
    };
    const s = new IsolatedSink(slow, { queueLimit: 3, writeTimeoutMs: 10_000, flushTimeoutMs: 10_000 });
    for (let i = 0; i < 10; i++) s.push([rec(i)]);
    expect(s.stats().dropped).toBe(7);
    release();
    await s.close();
    expect(seen.map((r) => r.id)).toEqual(["x-0", "x-1", "x-2"]);
    expect(s.stats()).toMatchObject({ written: 3, dropped: 7, failed: 0 });
  });

  it("a write that never answers times out; flush and close return within their bound", async () => {
    const s = new IsolatedSink(
      {
        name: "stuck",
        write: () => new Promise(() => {}),
        flush: () => new Promise(() => {}),
        close: () => new Promise(() => {}),
      },
      { writeTimeoutMs: 20, flushTimeoutMs: 20 },
    );
    s.push([rec(1)]);
    await s.flush();
    await s.close();
    expect(s.stats()).toMatchObject({ written: 0, failed: 1 });
    expect(s.stats().flushFailures).toBeGreaterThan(0);
  });

  it("fanout writes to every child even when one fails", async () => {
    const a = memorySink("a");
    const b = memorySink("b");
    const bad: TraceSink = { name: "bad", write: () => Promise.reject(new Error("nope")) };
    const f = fanout(a, bad, b);
    await expect(f.write([rec(1)])).rejects.toThrow("nope");
    expect(a.records).toHaveLength(1);
    expect(b.records).toHaveLength(1);
  });
});
