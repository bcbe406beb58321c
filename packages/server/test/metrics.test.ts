// /metrics from real event sequences: turns run by the runtime (`createLash`) against the mock
// wire server on 127.0.0.1, their activity events wrapped the way the daemon logs them
// (`ServerEvent`: data = the activity without seq/sessionId/at, between runQueued/runStarted and
// runFinished), fed to `record`; the exposition is parsed back (and its grammar checked).
import {
  type ApproverShape,
  createLash,
  defineTool,
  type GovernanceShape,
  MemoryStore,
  type TurnActivity,
  textOutput,
} from "@lash/core";
import { approveAll, rejectAll } from "@lash/policy";
import { createProvider } from "@lash/providers";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { ServerEvent } from "../src/api.ts";
import { escapeLabel, MetricsLive, makeMetrics } from "../src/metrics.ts";
import { Metrics } from "../src/services.ts";

const MODEL = "openai-compatible/mock";

// ---------------------------------------------------------------------------------------
// the text format 0.0.4, parsed strictly

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    const name = text.slice(i, eq);
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw new Error(`bad label name ${JSON.stringify(name)}`);
    if (text[eq + 1] !== '"') throw new Error(`label ${name}: value not quoted`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const next = text[++j];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`label ${name}: bad escape \\${next}`);
      } else if (text[j] === "\n") throw new Error(`label ${name}: raw line feed`);
      else value += text[j];
    }
    if (j >= text.length) throw new Error(`label ${name}: unterminated value`);
    if (name in out) throw new Error(`label ${name} twice`);
    out[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (i < text.length) throw new Error(`after label ${name}: ${JSON.stringify(text.slice(i))}`);
  }
  return out;
}

/** Parse an exposition: every sample's family has HELP and TYPE before it, no series twice. */
function parse(text: string): Sample[] {
  expect(text.endsWith("\n")).toBe(true);
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const series = new Set<string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split("\n")) {
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (kind === "HELP") helps.add(name);
      else {
        expect(["counter", "gauge", "summary", "histogram", "untyped"]).toContain(rest);
        expect(types.has(name), `TYPE ${name} twice`).toBe(false);
        types.set(name, rest);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const family = types.has(name) ? name : name.replace(/_(sum|count)$/, "");
    expect(types.has(family), `${name} before its TYPE`).toBe(true);
    expect(helps.has(family), `${name} without HELP`).toBe(true);
    if (family !== name) expect(types.get(family)).toBe("summary");
    const value = valueText === "NaN" ? Number.NaN : Number(valueText);
    expect(Number.isNaN(value) && valueText !== "NaN", `value ${valueText}`).toBe(false);
    const labels = labelText ? parseLabels(labelText) : {};
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    expect(series.has(key), `series twice: ${key}`).toBe(false);
    series.add(key);
    samples.push({ name, labels, value });
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels` (undefined if none). */
function value(samples: readonly Sample[], name: string, labels: Record<string, string> = {}) {
  const hits = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (hits.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${hits.length} samples`);
  return hits[0]?.value;
}

// ---------------------------------------------------------------------------------------
// real turns, logged as the daemon logs them

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const governance: GovernanceShape = {
  decide: (call) =>
    call.name === "guarded"
      ? { action: "ask", layer: "test policy", reason: "guarded writes" }
      : { action: "allow" },
};

const tool = (name: string, run: () => Promise<ReturnType<typeof textOutput>>) =>
  defineTool<Record<string, never>>({ name, description: name, inputSchema: { type: "object" }, run });

/** One real turn through the runtime; its activity events in order. */
async function realTurn(replies: MockReply[], approver: ApproverShape): Promise<TurnActivity[]> {
  const server = await startMockServer({ replies });
  servers.push(server);
  const lash = createLash({
    store: MemoryStore,
    provider: createProvider(MODEL, { baseUrl: server.baseUrl("openai-chat"), apiKey: "test", retry: false }),
    catalog: [
      {
        id: MODEL,
        contextWindow: 100_000,
        maxOutput: 8000,
        reasoning: false,
        images: false,
        caching: true,
        pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      },
    ],
    plugins: [
      {
        name: "t",
        tools: [
          tool("ok_tool", async () => textOutput("fine")),
          tool("bad_tool", async () => {
            throw new Error("boom");
          }),
          tool("guarded", async () => textOutput("written")),
        ],
      },
    ],
    governance,
    approver,
  });
  const session = await lash.createSession({ model: MODEL });
  const turn = session.turn("go");
  const events: TurnActivity[] = [];
  for await (const e of turn) events.push(e);
  await turn.result;
  await lash.close();
  return events;
}

const threeTools: MockReply[] = [
  {
    toolCalls: [
      { name: "ok_tool", arguments: {} },
      { name: "bad_tool", arguments: {} },
      { name: "guarded", arguments: {} },
    ],
    usage: { input: 1000, output: 50, cacheRead: 400, cacheWrite: 100 },
  },
  { text: "done", usage: { input: 1200, output: 10 } },
];

/** The daemon's log of one run: lifecycle events around the turn's activity. */
function logged(
  activity: readonly TurnActivity[],
  opts: { runId?: string; state?: string; sessionId?: string } = {},
): ServerEvent[] {
  const sessionId = opts.sessionId ?? "s1";
  const runId = opts.runId ?? "r1";
  let seq = 0;
  const ev = (type: string, data: unknown) =>
    new ServerEvent({ seq: ++seq, sessionId, runId, type, at: Date.now(), data });
  const out = [ev("runQueued", { text: "go", principal: "local" }), ev("runStarted", {})];
  for (const a of activity) {
    const { seq: _s, sessionId: _id, at: _at, ...data } = a;
    out.push(ev(a.type, data));
  }
  if (opts.state) out.push(ev("runFinished", { state: opts.state }));
  return out;
}

describe("metrics from a real turn", () => {
  it("runs, tools (calls, errors, p50/p95), tokens and cost per agent and model, approvals, events", async () => {
    const activity = await realTurn(threeTools, approveAll());
    const log = logged(activity, { state: "completed" });
    const m = makeMetrics();
    const session = { model: MODEL, agent: "helper" };

    // while the approval is pending: one run active, one approval pending
    const asked = log.findIndex((e) => e.type === "approvalRequested");
    expect(asked).toBeGreaterThan(0);
    for (const e of log.slice(0, asked + 1)) m.record(e, session);
    let s = parse(m.render());
    expect(value(s, "lash_runs_active")).toBe(1);
    expect(value(s, "lash_approvals_pending")).toBe(1);
    expect(value(s, "lash_runs_total", { state: "completed" })).toBe(0);

    for (const e of log.slice(asked + 1)) m.record(e, session);
    s = parse(m.render());
    expect(value(s, "lash_runs_total", { state: "completed" })).toBe(1);
    expect(value(s, "lash_runs_total", { state: "failed" })).toBe(0);
    expect(value(s, "lash_runs_active")).toBe(0);
    expect(value(s, "lash_runs_queued")).toBe(0);
    expect(value(s, "lash_approvals_pending")).toBe(0);
    expect(value(s, "lash_approvals_decided_total", { decision: "approved" })).toBe(1);
    expect(value(s, "lash_approvals_decided_total", { decision: "denied" })).toBe(0);

    for (const t of ["ok_tool", "bad_tool", "guarded"])
      expect(value(s, "lash_tool_calls_total", { tool: t }), t).toBe(1);
    expect(value(s, "lash_tool_errors_total", { tool: "bad_tool" })).toBe(1);
    expect(value(s, "lash_tool_errors_total", { tool: "ok_tool" })).toBe(0);
    const completed = activity.filter((e) => e.type === "toolCompleted");
    for (const c of completed) {
      const secs = c.durationMs / 1000;
      // one call per tool: both quantiles, the sum are its duration
      expect(value(s, "lash_tool_duration_seconds", { tool: c.name, quantile: "0.5" })).toBe(secs);
      expect(value(s, "lash_tool_duration_seconds", { tool: c.name, quantile: "0.95" })).toBe(secs);
      expect(value(s, "lash_tool_duration_seconds_sum", { tool: c.name })).toBe(secs);
      expect(value(s, "lash_tool_duration_seconds_count", { tool: c.name })).toBe(1);
    }

    const labels = { agent: "helper", model: MODEL };
    expect(value(s, "lash_tokens_total", { ...labels, kind: "input" })).toBe(2200);
    expect(value(s, "lash_tokens_total", { ...labels, kind: "output" })).toBe(60);
    expect(value(s, "lash_tokens_total", { ...labels, kind: "cache_read" })).toBe(400);
    expect(value(s, "lash_tokens_total", { ...labels, kind: "cache_write" })).toBe(100);
    const costs = activity.flatMap((e) => (e.type === "llmResponse" ? [e.costUsd ?? 0] : []));
    expect(costs.every((c) => c > 0)).toBe(true);
    expect(value(s, "lash_cost_usd_total", labels)).toBeCloseTo(
      costs.reduce((a, b) => a + b, 0),
      12,
    );
    expect(value(s, "lash_events_total")).toBe(log.length);
  });

  it("per-agent JSON (GET /v1/metrics/agents): runs, latencies from the run's own times, calls, tokens, cost", async () => {
    const activity = await realTurn(threeTools, approveAll());
    const m = makeMetrics();
    // two runs of `helper` with set times (500 ms and 1500 ms), one failed run of a plain session
    const timed = (runId: string, startAt: number, endAt: number, state: string) =>
      logged(activity, { runId, state }).map((e) =>
        e.type === "runStarted"
          ? new ServerEvent({ ...e, at: startAt })
          : e.type === "runFinished"
            ? new ServerEvent({ ...e, at: endAt })
            : e,
      );
    for (const e of timed("r1", 1_000, 1_500, "completed")) m.record(e, { model: MODEL, agent: "helper" });
    for (const e of timed("r2", 2_000, 3_500, "completed")) m.record(e, { model: MODEL, agent: "helper" });
    for (const e of timed("r3", 4_000, 4_100, "failed")) m.record(e, { model: MODEL });
    const { agents } = m.agents();
    expect(agents.map((a) => a.agent)).toEqual(["", "helper"]);
    const helper = agents[1]!;
    expect(helper.runs).toEqual({ completed: 2, failed: 0, cancelled: 0 });
    expect(helper.runLatencyMs).toEqual({ p50: 500, p95: 1500 });
    expect(helper.recentRuns).toEqual([
      { at: 1_500, ms: 500, state: "completed" },
      { at: 3_500, ms: 1500, state: "completed" },
    ]);
    const responses = activity.filter((e) => e.type === "llmResponse");
    expect(helper.llm.calls).toBe(2 * responses.length);
    expect(helper.llm.latencyMs.p50).not.toBeNull();
    expect(helper.tools).toEqual({ calls: 6, errors: 2 });
    expect(helper.tokens).toEqual({
      input: 4400,
      output: 120,
      reasoning: 0,
      cacheRead: 800,
      cacheWrite: 200,
    });
    const cost = responses.reduce((a, e) => a + (e.costUsd ?? 0), 0);
    expect(helper.costUsd).toBeCloseTo(2 * cost, 12);
    expect(agents[0]!.runs).toEqual({ completed: 0, failed: 1, cancelled: 0 });
    expect(agents[0]!.runLatencyMs).toEqual({ p50: 100, p95: 100 });
  });

  it('a denied approval counts as denied; a session without an agent has agent=""', async () => {
    const activity = await realTurn(threeTools, rejectAll("no"));
    const m = makeMetrics();
    for (const e of logged(activity, { state: "completed" })) m.record(e, { model: MODEL });
    const s = parse(m.render());
    expect(value(s, "lash_approvals_decided_total", { decision: "denied" })).toBe(1);
    expect(value(s, "lash_approvals_decided_total", { decision: "approved" })).toBe(0);
    // the denied call did not run: core settles it with an error result, counted as an error
    expect(value(s, "lash_tool_calls_total", { tool: "guarded" })).toBe(1);
    expect(value(s, "lash_tool_errors_total", { tool: "guarded" })).toBe(1);
    expect(value(s, "lash_tokens_total", { agent: "", model: MODEL, kind: "input" })).toBe(2200);
  });

  it("a run cancelled while it waits for an approval leaves nothing pending", async () => {
    const activity = await realTurn(threeTools, approveAll());
    const cut = activity.findIndex((e) => e.type === "approvalRequested");
    const m = makeMetrics();
    for (const e of logged(activity.slice(0, cut + 1), { state: "cancelled" })) m.record(e, { model: MODEL });
    const s = parse(m.render());
    expect(value(s, "lash_approvals_pending")).toBe(0);
    expect(value(s, "lash_runs_total", { state: "cancelled" })).toBe(1);
    expect(value(s, "lash_runs_active")).toBe(0);
  });

  it("events a resumed turn replays from its journal are not counted again", async () => {
    const activity = await realTurn(threeTools, approveAll());
    const replayed = activity.map((e) =>
      e.type === "llmResponse" || e.type === "toolCompleted" || e.type === "approvalResolved"
        ? { ...e, replayed: true }
        : e,
    );
    const m = makeMetrics();
    for (const e of logged(replayed, { state: "completed" })) m.record(e, { model: MODEL });
    const s = parse(m.render());
    expect(s.filter((x) => x.name === "lash_tool_calls_total")).toEqual([]);
    expect(s.filter((x) => x.name === "lash_tokens_total")).toEqual([]);
    expect(value(s, "lash_approvals_decided_total", { decision: "approved" })).toBe(0);
    expect(value(s, "lash_approvals_pending")).toBe(0);
    expect(value(s, "lash_runs_total", { state: "completed" })).toBe(1);
  });

  it("queued and running runs across sessions; a failed run", async () => {
    const activity = await realTurn([{ text: "hi", usage: { input: 5, output: 1 } }], approveAll());
    const m = makeMetrics();
    const a = logged(activity, { runId: "ra", sessionId: "sa", state: "failed" });
    const b = logged(activity, { runId: "rb", sessionId: "sb" });
    m.record(a[0]!, { model: MODEL }); // ra queued
    m.record(b[0]!, { model: MODEL }); // rb queued
    m.record(b[1]!, { model: MODEL }); // rb started
    let s = parse(m.render());
    expect([value(s, "lash_runs_queued"), value(s, "lash_runs_active")]).toEqual([1, 1]);
    for (const e of a.slice(1)) m.record(e, { model: MODEL });
    s = parse(m.render());
    expect([value(s, "lash_runs_queued"), value(s, "lash_runs_active")]).toEqual([0, 1]);
    expect(value(s, "lash_runs_total", { state: "failed" })).toBe(1);
  });
});

describe("metrics: SSE clients, escaping, one set per daemon", () => {
  it("counts SSE clients now and the ones dropped for falling behind", () => {
    const m = makeMetrics();
    m.sseOpened();
    m.sseOpened();
    m.sseOpened();
    m.sseClosed(false);
    m.sseClosed(true);
    const s = parse(m.render());
    expect(value(s, "lash_sse_clients")).toBe(1);
    expect(value(s, "lash_sse_dropped_total")).toBe(1);
  });

  it("escapes label values (backslash, quote, line feed) so they parse back unchanged", () => {
    const nasty = 'we"ird\\tool\nname';
    expect(escapeLabel(nasty)).toBe('we\\"ird\\\\tool\\nname');
    const m = makeMetrics();
    const ev = (seq: number, type: string, data: unknown) =>
      new ServerEvent({ seq, sessionId: "s", runId: "r", type, at: 0, data });
    const agent = 'a "b"\\c';
    m.record(
      ev(1, "toolCompleted", { name: nasty, isError: true, durationMs: 1500, replayed: false, content: [] }),
      { model: MODEL, agent },
    );
    m.record(
      ev(2, "llmResponse", { usage: { input: 7, output: 3 }, costUsd: 0.5, replayed: false, iteration: 0 }),
      { model: "x/y\nz", agent },
    );
    const s = parse(m.render());
    expect(value(s, "lash_tool_errors_total", { tool: nasty })).toBe(1);
    expect(value(s, "lash_tool_duration_seconds", { tool: nasty, quantile: "0.95" })).toBe(1.5);
    expect(value(s, "lash_tokens_total", { agent, model: "x/y\nz", kind: "output" })).toBe(3);
    expect(value(s, "lash_cost_usd_total", { agent, model: "x/y\nz" })).toBe(0.5);
  });

  it("quantiles: p50 and p95 of the calls, nearest rank", () => {
    const m = makeMetrics();
    for (let i = 1; i <= 100; i++)
      m.record(
        new ServerEvent({
          seq: i,
          sessionId: "s",
          runId: "r",
          type: "toolCompleted",
          at: 0,
          data: { name: "t", isError: false, durationMs: (101 - i) * 10, replayed: false, content: [] },
        }),
        { model: MODEL },
      );
    const s = parse(m.render());
    expect(value(s, "lash_tool_duration_seconds", { tool: "t", quantile: "0.5" })).toBe(0.5);
    expect(value(s, "lash_tool_duration_seconds", { tool: "t", quantile: "0.95" })).toBe(0.95);
    expect(value(s, "lash_tool_duration_seconds_count", { tool: "t" })).toBe(100);
    expect(value(s, "lash_tool_duration_seconds_sum", { tool: "t" })).toBeCloseTo(50.5, 9);
  });

  it("MetricsLive builds a fresh set per daemon", async () => {
    const build = () => Effect.runPromise(Effect.provide(Metrics, MetricsLive));
    const [a, b] = await Promise.all([build(), build()]);
    a.sseOpened();
    expect(value(parse(a.render()), "lash_sse_clients")).toBe(1);
    expect(value(parse(b.render()), "lash_sse_clients")).toBe(0);
  });
});
