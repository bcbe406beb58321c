// `/metrics`: the Prometheus text exposition (format 0.0.4) of the daemon, derived from the
// events it appends to its log (`record`, called once per appended event) and its SSE
// clients. No dependency: a few maps updated in `record` (a switch on the type; most
// events — text deltas — fall through at once), the text built in `render`.
//
// Counters start at zero with the process (Prometheus handles the reset). Events a resumed
// turn replays from its journal (`replayed: true`) are not counted again: no model call and
// no tool ran for them.
import { Layer } from "effect";
import { AgentMetrics } from "./api.ts";
import { Metrics, type MetricsShape } from "./services.ts";

/** Durations kept per tool for its quantiles: the most recent calls. */
export const TOOL_WINDOW = 1024;

/** Token kinds of `lash_tokens_total` (the `Usage` buckets; `input` includes the cached shares). */
const TOKEN_KINDS = [
  ["input", "input"],
  ["output", "output"],
  ["reasoning", "reasoning"],
  ["cacheRead", "cache_read"],
  ["cacheWrite", "cache_write"],
] as const;

const RUN_STATES = ["completed", "failed", "cancelled"] as const;

interface ToolStats {
  calls: number;
  errors: number;
  sumSeconds: number;
  /** Ring buffer of the last TOOL_WINDOW durations (seconds). */
  readonly window: number[];
  next: number;
}

/** Finished runs kept per agent for `AgentMetrics.recentRuns`. */
export const RECENT_RUNS = 60;

/** A ring buffer of the last TOOL_WINDOW samples. */
interface Window {
  readonly values: number[];
  next: number;
}

const pushWindow = (w: Window, v: number): void => {
  if (w.values.length < TOOL_WINDOW) w.values.push(v);
  else w.values[w.next] = v;
  w.next = (w.next + 1) % TOOL_WINDOW;
};

/** Per-agent figures (`GET /v1/metrics/agents`). */
interface AgentStats {
  readonly runs: { completed: number; failed: number; cancelled: number };
  readonly runMs: Window;
  llmCalls: number;
  llmErrors: number;
  llmRetries: number;
  readonly llmMs: Window;
  toolCalls: number;
  toolErrors: number;
  readonly tokens: {
    input: number;
    output: number;
    reasoning: number;
    cacheRead: number;
    cacheWrite: number;
  };
  costUsd: number;
  readonly recent: { at: number; ms: number; state: string }[];
}

/** Escape a label value (text format 0.0.4: backslash, double quote, line feed). */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Number.POSITIVE_INFINITY) return "+Inf";
  if (n === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(n);
}

function labels(pairs: readonly (readonly [string, string])[]): string {
  if (pairs.length === 0) return "";
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`;
}

/** Nearest-rank quantile of an ascending array. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** A fresh set of metrics (one per daemon). */
export function makeMetrics(): MetricsShape {
  const runsTotal = new Map<string, number>(RUN_STATES.map((s) => [s, 0]));
  /** runId → state: `queued`, or `running` once started or resumed. */
  const live = new Map<string, "queued" | "running">();
  const tools = new Map<string, ToolStats>();
  /** `agent\0model\0kind` → tokens */
  const tokens = new Map<string, number>();
  /** `agent\0model` → USD */
  const cost = new Map<string, number>();
  /** requestId → runId of approvals asked and not answered yet. */
  const pending = new Map<string, string>();
  const decided = new Map<string, number>([
    ["approved", 0],
    ["denied", 0],
    ["mixed", 0],
  ]);
  const agents = new Map<string, AgentStats>();
  /** runId → when it started (or resumed) here, for its latency. */
  const started = new Map<string, number>();
  const since = Date.now();
  let events = 0;
  let sseClients = 0;
  let sseDropped = 0;

  const toolOf = (name: string): ToolStats => {
    let t = tools.get(name);
    if (!t) {
      t = { calls: 0, errors: 0, sumSeconds: 0, window: [], next: 0 };
      tools.set(name, t);
    }
    return t;
  };
  const add = (m: Map<string, number>, key: string, by: number) => m.set(key, (m.get(key) ?? 0) + by);
  const agentOf = (name: string): AgentStats => {
    let a = agents.get(name);
    if (!a) {
      a = {
        runs: { completed: 0, failed: 0, cancelled: 0 },
        runMs: { values: [], next: 0 },
        llmCalls: 0,
        llmErrors: 0,
        llmRetries: 0,
        llmMs: { values: [], next: 0 },
        toolCalls: 0,
        toolErrors: 0,
        tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
        costUsd: 0,
        recent: [],
      };
      agents.set(name, a);
    }
    return a;
  };

  /** The per-agent side of `record` (every event type it counts, nothing else). */
  const recordAgent = (
    event: Parameters<MetricsShape["record"]>[0],
    d: Record<string, unknown> | null,
    agentName: string,
  ): void => {
    switch (event.type) {
      case "runStarted":
      case "runResumed":
        if (!started.has(event.runId)) started.set(event.runId, event.at);
        return;
      case "runFinished": {
        const a = agentOf(agentName);
        const state = typeof d?.state === "string" ? d.state : "unknown";
        if (state === "completed" || state === "failed" || state === "cancelled") a.runs[state]++;
        const from = started.get(event.runId);
        started.delete(event.runId);
        if (from === undefined) return;
        const ms = Math.max(0, event.at - from);
        pushWindow(a.runMs, ms);
        a.recent.push({ at: event.at, ms, state });
        if (a.recent.length > RECENT_RUNS) a.recent.shift();
        return;
      }
      case "llmResponse": {
        if (!d || d.replayed === true) return;
        const a = agentOf(agentName);
        a.llmCalls++;
        pushWindow(a.llmMs, num(d.durationMs));
        const usage = (d.usage ?? {}) as Record<string, unknown>;
        for (const [field] of TOKEN_KINDS) a.tokens[field] += num(usage[field]);
        a.costUsd += num(d.costUsd);
        return;
      }
      case "error":
        agentOf(agentName).llmErrors++;
        return;
      case "retry":
        agentOf(agentName).llmRetries++;
        return;
      case "toolCompleted": {
        if (!d || d.replayed === true) return;
        const a = agentOf(agentName);
        a.toolCalls++;
        if (d.isError === true) a.toolErrors++;
        return;
      }
      default:
        return;
    }
  };

  const quantiles = (w: Window) => {
    const sorted = [...w.values].sort((x, y) => x - y);
    return sorted.length === 0
      ? { p50: null, p95: null }
      : { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) };
  };

  const agentsSnapshot: MetricsShape["agents"] = () => ({
    since,
    agents: [...agents.keys()].sort().map((name) => {
      const a = agents.get(name)!;
      return new AgentMetrics({
        agent: name,
        runs: { ...a.runs },
        runLatencyMs: quantiles(a.runMs),
        llm: { calls: a.llmCalls, errors: a.llmErrors, retries: a.llmRetries, latencyMs: quantiles(a.llmMs) },
        tools: { calls: a.toolCalls, errors: a.toolErrors },
        tokens: { ...a.tokens },
        costUsd: a.costUsd,
        recentRuns: a.recent.map((r) => ({ ...r })),
      });
    }),
  });

  const record: MetricsShape["record"] = (event, session) => {
    events++;
    const d = event.data as Record<string, unknown> | null;
    if (event.type !== "textDelta" && event.type !== "reasoningDelta" && event.type !== "toolCallDelta")
      recordAgent(event, d, session.agent ?? "");
    switch (event.type) {
      case "runQueued":
        live.set(event.runId, "queued");
        return;
      case "runStarted":
      case "runResumed":
        live.set(event.runId, "running");
        return;
      case "runFinished": {
        live.delete(event.runId);
        const state = typeof d?.state === "string" ? d.state : "unknown";
        add(runsTotal, state, 1);
        // an approval left unanswered by a cancelled or failed run is no longer pending
        if (pending.size > 0) for (const [id, run] of pending) if (run === event.runId) pending.delete(id);
        return;
      }
      case "toolCompleted": {
        if (!d || d.replayed === true) return;
        const t = toolOf(typeof d.name === "string" ? d.name : "unknown");
        t.calls++;
        if (d.isError === true) t.errors++;
        const s = num(d.durationMs) / 1000;
        t.sumSeconds += s;
        if (t.window.length < TOOL_WINDOW) t.window.push(s);
        else t.window[t.next] = s;
        t.next = (t.next + 1) % TOOL_WINDOW;
        return;
      }
      case "llmResponse": {
        if (!d || d.replayed === true) return;
        const agent = session.agent ?? "";
        const usage = (d.usage ?? {}) as Record<string, unknown>;
        for (const [field, kind] of TOKEN_KINDS) {
          const n = num(usage[field]);
          if (n > 0) add(tokens, `${agent}\0${session.model}\0${kind}`, n);
        }
        const usd = num(d.costUsd);
        if (usd > 0) add(cost, `${agent}\0${session.model}`, usd);
        return;
      }
      case "approvalRequested":
        if (d && typeof d.requestId === "string") pending.set(d.requestId, event.runId);
        return;
      case "approvalResolved": {
        if (!d || typeof d.requestId !== "string") return;
        pending.delete(d.requestId);
        // a policy's denial is settled without asking anyone; a replayed answer was counted before
        if (d.by === "policy" || d.replayed === true) return;
        const decisions = Array.isArray(d.decisions) ? (d.decisions as { decision?: unknown }[]) : [];
        const approved = decisions.filter((x) => x.decision === "approve").length;
        const state = approved === decisions.length ? "approved" : approved === 0 ? "denied" : "mixed";
        add(decided, state, 1);
        return;
      }
      default:
        return;
    }
  };

  const render = (): string => {
    const out: string[] = [];
    const family = (name: string, type: "counter" | "gauge" | "summary", help: string) => {
      out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
    };
    const sample = (name: string, pairs: readonly (readonly [string, string])[], value: number) => {
      out.push(`${name}${labels(pairs)} ${formatValue(value)}`);
    };

    family("lash_runs_total", "counter", "Runs finished, by final state.");
    for (const [state, n] of runsTotal) sample("lash_runs_total", [["state", state]], n);

    let running = 0;
    let queued = 0;
    for (const s of live.values()) s === "running" ? running++ : queued++;
    family("lash_runs_active", "gauge", "Runs executing now (waiting for an approval included).");
    sample("lash_runs_active", [], running);
    family("lash_runs_queued", "gauge", "Runs waiting for their session's earlier runs or a free slot.");
    sample("lash_runs_queued", [], queued);

    const toolNames = [...tools.keys()].sort();
    family(
      "lash_tool_calls_total",
      "counter",
      "Tool calls completed, by tool (a denied or cancelled call counts, as an error).",
    );
    for (const n of toolNames) sample("lash_tool_calls_total", [["tool", n]], tools.get(n)!.calls);
    family(
      "lash_tool_errors_total",
      "counter",
      "Tool calls whose result is an error, by tool (denials and cancellations included).",
    );
    for (const n of toolNames) sample("lash_tool_errors_total", [["tool", n]], tools.get(n)!.errors);
    family(
      "lash_tool_duration_seconds",
      "summary",
      `Tool call duration; quantiles over the last ${TOOL_WINDOW} calls of each tool.`,
    );
    for (const n of toolNames) {
      const t = tools.get(n)!;
      const sorted = [...t.window].sort((a, b) => a - b);
      for (const q of ["0.5", "0.95"])
        sample(
          "lash_tool_duration_seconds",
          [
            ["tool", n],
            ["quantile", q],
          ],
          quantile(sorted, Number(q)),
        );
      sample("lash_tool_duration_seconds_sum", [["tool", n]], t.sumSeconds);
      sample("lash_tool_duration_seconds_count", [["tool", n]], t.calls);
    }

    family(
      "lash_tokens_total",
      "counter",
      "Model tokens by agent, model and kind (input includes its cached shares cache_read and cache_write).",
    );
    for (const key of [...tokens.keys()].sort()) {
      const [agent, model, kind] = key.split("\0") as [string, string, string];
      sample(
        "lash_tokens_total",
        [
          ["agent", agent],
          ["model", model],
          ["kind", kind],
        ],
        tokens.get(key)!,
      );
    }
    family(
      "lash_cost_usd_total",
      "counter",
      "Model cost in US dollars by agent and model (priced models only).",
    );
    for (const key of [...cost.keys()].sort()) {
      const [agent, model] = key.split("\0") as [string, string];
      sample(
        "lash_cost_usd_total",
        [
          ["agent", agent],
          ["model", model],
        ],
        cost.get(key)!,
      );
    }

    family("lash_approvals_pending", "gauge", "Approval requests waiting for an answer.");
    sample("lash_approvals_pending", [], pending.size);
    family(
      "lash_approvals_decided_total",
      "counter",
      "Approval requests answered, by outcome (mixed: some calls approved, some denied).",
    );
    for (const [decision, n] of decided) sample("lash_approvals_decided_total", [["decision", decision]], n);

    family("lash_events_total", "counter", "Events appended to the daemon's event log.");
    sample("lash_events_total", [], events);
    family("lash_sse_clients", "gauge", "Event stream (SSE) clients connected now.");
    sample("lash_sse_clients", [], sseClients);
    family(
      "lash_sse_dropped_total",
      "counter",
      "Event stream clients dropped because they fell too far behind (they reconnect with their cursor).",
    );
    sample("lash_sse_dropped_total", [], sseDropped);
    return `${out.join("\n")}\n`;
  };

  return {
    record,
    sseOpened: () => {
      sseClients++;
    },
    sseClosed: (dropped) => {
      sseClients = Math.max(0, sseClients - 1);
      if (dropped) sseDropped++;
    },
    render,
    agents: agentsSnapshot,
  };
}

/** One set of metrics per daemon (a layer built per server, not shared between them). */
export const MetricsLive = Layer.sync(Metrics, () => Metrics.of(makeMetrics()));
