// @lash/trace against a real runtime: the scripted provider through the retry
// layer, the built-in tools, and a simulated subagent (a real child session
// announced with the `subagents` plugin events; @lash/subagents is not built yet).
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TurnActivity } from "@lash/core";
import {
  createTraceRecorder,
  jsonlSink,
  memorySink,
  otlpSink,
  parseTrace,
  type TraceRecord,
  type TraceSink,
} from "@lash/trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSample, type Sample } from "../../packages/export/test/fixture.ts";

const FAKE_KEY = "sk-ant-FAKEKEY1234567890abcdefSECRET";

describe("trace records of a real session", () => {
  let sample: Sample;
  let records: TraceRecord[];
  let dir: string;
  let fileText: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "lash-trace-"));
    const mem = memorySink();
    const recorder = createTraceRecorder({
      sinks: [mem, jsonlSink(join(dir, "trace.jsonl"))],
      level: "extended",
      redact: { env: { ANTHROPIC_API_KEY: FAKE_KEY, HOME: "/home/someone" } },
      recorderId: "t",
    });
    sample = await buildSample((e: TurnActivity) => recorder.record(e), [recorder.plugin()]);
    // a header with a bearer token and the key as a value reach the recorder through a plugin event
    recorder.record({
      type: "plugin",
      plugin: "http",
      name: "request",
      data: {
        headers: { authorization: "Bearer abcdefghijklmnop1234", "x-api-key": FAKE_KEY },
        note: `key=${FAKE_KEY}`,
      },
      sessionId: sample.sessionId,
      turnId: "turn_extra",
    });
    await recorder.close();
    records = mem.records;
    fileText = readFileSync(join(dir, "trace.jsonl"), "utf8");
  });
  afterAll(() => sample.close());

  it("writes the same records to every sink, all valid under the schema", () => {
    const parsed = parseTrace(fileText);
    expect(parsed.length).toBe(records.length);
    expect(parsed.every((p) => p.type === "record")).toBe(true);
  });

  it("records a turn with tools in order, each nested under its turn", () => {
    const turn1 = records.find((r) => r.kind === "turn_started")!.turnId!;
    const kinds = records
      .filter((r) => r.turnId === turn1 && r.sessionId === sample.sessionId)
      .map((r) => r.kind);
    expect(kinds.filter((k) => k !== "usage" && k !== "llm_request_body")).toEqual([
      "turn_started",
      "llm_request",
      "retry",
      "attempt_reset",
      "llm_response",
      "tool_started",
      "tool_completed",
      "llm_request",
      "llm_response",
      "tool_started",
      "tool_completed",
      "llm_request",
      "llm_response",
      "turn_finished",
    ]);
    const turnSpan = `turn:${sample.sessionId}:${turn1}`;
    for (const r of records.filter((r) => r.turnId === turn1)) {
      // a record is on the turn's span (turn start/end, usage) or on a child span of it
      if (r.spanId !== turnSpan) expect(r.parentSpanId).toBe(turnSpan);
    }
    const response = records.find((r) => r.kind === "llm_response" && r.turnId === turn1)!;
    expect(response).toMatchObject({
      attempts: 2,
      stopReason: "toolUse",
      usage: { input: 1200, output: 60 },
    });
    expect(response.kind === "llm_response" && response.costUsd).toBeGreaterThan(0);
    const done = records.find((r) => r.kind === "turn_finished" && r.turnId === turn1)!;
    expect(done).toMatchObject({
      status: "completed",
      reason: "assistantMessage",
      llmCalls: 3,
      toolCalls: 2,
    });
  });

  it("nests a subagent's records under the parent's tool call span", () => {
    const started = records.find((r) => r.kind === "subagent_started")!;
    const spawn = records.find((r) => r.kind === "tool_started" && r.callId === "call_agent_1")!;
    // the tool span is named by lash's call id (unique in the session), not the provider's
    expect(spawn.kind === "tool_started" && spawn.lashCallId).toMatch(/\.c0$/);
    expect(spawn.spanId).toBe(
      `tool:${sample.sessionId}:${spawn.kind === "tool_started" && spawn.lashCallId}`,
    );
    expect(started).toMatchObject({
      childSessionId: sample.childSessionId,
      callId: "call_agent_1",
      spanId: `session:${sample.childSessionId}`,
      parentSpanId: spawn.spanId,
    });
    const child = records.filter((r) => r.sessionId === sample.childSessionId);
    expect(child.map((r) => r.kind).filter((k) => k !== "usage" && k !== "llm_request_body")).toEqual([
      "turn_started",
      "llm_request",
      "llm_response",
      "tool_started",
      "tool_completed",
      "llm_request",
      "llm_response",
      "turn_finished",
    ]);
    const childTurn = child[0]!;
    expect(childTurn.parentSpanId).toBe(`session:${sample.childSessionId}`);
    // the chain child tool → child turn → child session → parent tool → parent turn
    const spans = new Map(records.map((r) => [r.spanId, r.parentSpanId]));
    const chain: string[] = [];
    let cur: string | undefined = records.find(
      (r) => r.kind === "tool_started" && r.callId === "call_child_read",
    )?.spanId;
    while (cur) {
      chain.push(cur.split(":")[0]!);
      cur = spans.get(cur);
    }
    expect(chain).toEqual(["tool", "turn", "session", "tool", "turn"]);
    // order: the child runs between the parent's tool_started and tool_completed
    const idx = (p: (r: TraceRecord) => boolean) => records.findIndex(p);
    const parentStart = idx((r) => r.kind === "tool_started" && r.callId === "call_agent_1");
    const parentEnd = idx((r) => r.kind === "tool_completed" && r.callId === "call_agent_1");
    const childFirst = idx((r) => r.sessionId === sample.childSessionId);
    expect(parentStart).toBeLessThan(childFirst);
    expect(childFirst).toBeLessThan(parentEnd);
    expect(idx((r) => r.kind === "subagent_finished")).toBeLessThan(parentEnd);
  });

  it("classifies a failing tool call", () => {
    const failed = records.find((r) => r.kind === "tool_completed" && r.callId === "call_read_missing")!;
    expect(failed).toMatchObject({ isError: true, errorClass: expect.any(String) });
  });

  it("keeps request bodies and streamed text at the extended level", () => {
    const body = records.find((r) => r.kind === "llm_request_body");
    expect(body && body.kind === "llm_request_body" && body.body.messages.length).toBeGreaterThan(0);
    const withText = records.find((r) => r.kind === "llm_response" && r.text?.includes("read the file"));
    expect(withText).toBeDefined();
  });

  it("never writes the fake key or the bearer token", () => {
    expect(fileText).not.toContain(FAKE_KEY);
    expect(fileText).not.toContain("abcdefghijklmnop1234");
    expect(fileText).toContain("[REDACTED]");
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), "utf8")).not.toContain(FAKE_KEY);
    expect(JSON.stringify(records)).not.toContain(FAKE_KEY);
  });
});

describe("a failing sink", () => {
  it("does not change the turn's outcome, and the other sinks get every record", async () => {
    const reference = await buildSample();
    const expected = await reference.run(reference.runtime.readView(reference.sessionId));
    await reference.close();

    const mem = memorySink();
    let calls = 0;
    const broken: TraceSink = {
      name: "broken",
      write: () => {
        calls++;
        throw new Error("disk on fire");
      },
      flush: () => Promise.reject(new Error("still on fire")),
    };
    const hanging: TraceSink = { name: "hanging", write: () => new Promise<void>(() => {}) };
    const recorder = createTraceRecorder({
      sinks: [broken, hanging, mem],
      writeTimeoutMs: 50,
      flushTimeoutMs: 50,
      // room for the whole turn: the turn publishes its events without waiting for the sinks'
      // drain fibers, so a tiny limit would make the healthy sink drop records too
      queueLimit: 100,
      redact: { env: {} },
    });
    const sample = await buildSample((e) => recorder.record(e));
    const view = await sample.run(sample.runtime.readView(sample.sessionId));
    await recorder.close();
    await sample.close();
    expect(view.map((m) => m.parts)).toEqual(expected.map((m) => m.parts));
    const stats = recorder.stats();
    const byName = new Map(stats.sinks.map((s) => [s.name, s]));
    expect(calls).toBeGreaterThan(0);
    expect(byName.get("broken")!.failed).toBeGreaterThan(0);
    expect(byName.get("broken")!.written).toBe(0);
    expect(byName.get("hanging")!.dropped + byName.get("hanging")!.failed).toBeGreaterThan(0);
    expect(byName.get("memory")!.written).toBe(stats.records);
    expect(mem.records.length).toBe(stats.records);
  });
});

describe("OTLP export", () => {
  it("sends spans with gen_ai.* attributes to a collector", async () => {
    const bodies: { path: string; headers: IncomingMessage["headers"]; body: unknown }[] = [];
    const server = createServer((req, res) => {
      let data = "";
      req.on("data", (c) => {
        data += c;
      });
      req.on("end", () => {
        bodies.push({ path: req.url ?? "", headers: req.headers, body: JSON.parse(data) });
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const recorder = createTraceRecorder({
      sinks: [otlpSink({ url: `http://127.0.0.1:${port}`, headers: { "x-collector-key": "abc" } })],
      redact: { env: {} },
    });
    const sample = await buildSample((e) => recorder.record(e));
    await recorder.close();
    await sample.close();
    await new Promise<void>((r) => server.close(() => r()));

    expect(bodies.length).toBeGreaterThan(0);
    expect(bodies.every((b) => b.path === "/v1/traces")).toBe(true);
    expect(bodies[0]!.headers["x-collector-key"]).toBe("abc");
    type Attr = { key: string; value: Record<string, unknown> };
    type Span = { name: string; spanId: string; parentSpanId?: string; traceId: string; attributes: Attr[] };
    const spans: Span[] = bodies.flatMap((b) =>
      (b.body as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }).resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) => ss.spans),
      ),
    );
    const attr = (s: Span, k: string) => {
      const v = s.attributes.find((a) => a.key === k)?.value;
      return v ? (v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue ?? v.arrayValue) : undefined;
    };
    const chat = spans.find((s) => s.name === "chat claude-sonnet-4-5")!;
    expect(chat).toBeDefined();
    expect(attr(chat, "gen_ai.operation.name")).toBe("chat");
    expect(attr(chat, "gen_ai.provider.name")).toBe("anthropic");
    expect(attr(chat, "gen_ai.request.model")).toBe("claude-sonnet-4-5");
    expect(Number(attr(chat, "gen_ai.usage.input_tokens"))).toBeGreaterThan(0);
    expect(Number(attr(chat, "gen_ai.usage.output_tokens"))).toBeGreaterThan(0);
    expect(JSON.stringify(attr(chat, "gen_ai.response.finish_reasons"))).toContain("tool_use");
    const tool = spans.find((s) => s.name === "execute_tool read_file")!;
    expect(attr(tool, "gen_ai.tool.name")).toBe("read_file");
    expect(attr(tool, "gen_ai.tool.call.id")).toBeDefined();
    const agent = spans.find((s) => s.name === "invoke_agent lash")!;
    expect(attr(agent, "gen_ai.operation.name")).toBe("invoke_agent");
    // nesting: the chat span's parent is a turn span; the subagent span sits under the spawn_agent tool span
    expect(spans.find((s) => s.spanId === chat.parentSpanId)?.name).toMatch(/^invoke_agent/);
    const spawn = spans.find((s) => s.name === "execute_tool spawn_agent")!;
    const sub = spans.find((s) => s.name === "invoke_agent subagent" && s.parentSpanId === spawn.spanId);
    expect(sub).toBeDefined();
    expect(sub!.traceId).toBe(spawn.traceId);
  });
});
