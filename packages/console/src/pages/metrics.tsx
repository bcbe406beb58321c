// Per-agent metrics (`GET /v1/metrics/agents`) as charts: runs by state, run and model-call
// latency (p50/p95), model calls with errors and retries, tool calls, tokens by kind, cost,
// and the duration of the last runs. The figures count since the daemon started.
import type { AgentMetrics } from "@lash/client";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { BarChart, LineChart } from "./charts.tsx";
import { ErrorNote, fmtDuration, fmtTime, fmtUsd, useLoad } from "./kit.tsx";

const POLL_MS = 5000;
const nameOf = (a: AgentMetrics) => (a.agent === "" ? "(no agent)" : a.agent);

export function MetricsPage(_props: PageProps) {
  const client = useClient();
  const metrics = useLoad(() => client.metrics.agents(), [client], POLL_MS);
  const agents = metrics.data?.agents ?? [];
  return (
    <section class="page metrics" aria-label="Per-agent metrics">
      <ErrorNote error={metrics.error} />
      {metrics.data && <p class="meta">Since the daemon started at {fmtTime(metrics.data.since)}.</p>}
      {metrics.data && agents.length === 0 && <p class="empty">No runs yet.</p>}
      {agents.length > 1 && (
        <div class="charts">
          <BarChart
            title="Model calls per agent"
            bars={agents.map((a) => ({ label: nameOf(a), value: a.llm.calls }))}
          />
          <BarChart
            title="Cost per agent"
            bars={agents.map((a) => ({ label: nameOf(a), value: a.costUsd }))}
            format={fmtUsd}
          />
        </div>
      )}
      {agents.map((a) => (
        <AgentCard key={a.agent} agent={a} />
      ))}
    </section>
  );
}

function AgentCard(props: { readonly agent: AgentMetrics }) {
  const a = props.agent;
  const id = `agent-${a.agent || "none"}`;
  const runs = a.runs.completed + a.runs.failed + a.runs.cancelled;
  return (
    <section class="agent-metrics card" aria-labelledby={id} data-agent={a.agent}>
      <h2 id={id}>{nameOf(a)}</h2>
      <table class="figures">
        <caption class="sr-only">Figures of {nameOf(a)}</caption>
        <tbody>
          <tr>
            <th scope="row">Runs</th>
            <td data-figure="runs">
              {runs} ({a.runs.completed} completed, {a.runs.failed} failed, {a.runs.cancelled} cancelled)
            </td>
          </tr>
          <tr>
            <th scope="row">Run latency p50 / p95</th>
            <td>
              {fmtDuration(a.runLatencyMs.p50)} / {fmtDuration(a.runLatencyMs.p95)}
            </td>
          </tr>
          <tr>
            <th scope="row">Model calls</th>
            <td data-figure="calls">
              {a.llm.calls} ({a.llm.errors} errors, {a.llm.retries} retries)
            </td>
          </tr>
          <tr>
            <th scope="row">Model latency p50 / p95</th>
            <td>
              {fmtDuration(a.llm.latencyMs.p50)} / {fmtDuration(a.llm.latencyMs.p95)}
            </td>
          </tr>
          <tr>
            <th scope="row">Tool calls</th>
            <td>
              {a.tools.calls} ({a.tools.errors} errors)
            </td>
          </tr>
          <tr>
            <th scope="row">Tokens</th>
            <td data-figure="tokens">
              {a.tokens.input} in, {a.tokens.output} out
            </td>
          </tr>
          <tr>
            <th scope="row">Cost</th>
            <td>{fmtUsd(a.costUsd)}</td>
          </tr>
        </tbody>
      </table>
      <div class="charts">
        <BarChart
          title={`Runs of ${nameOf(a)} by state`}
          bars={[
            { label: "completed", value: a.runs.completed, tone: "ok" },
            { label: "failed", value: a.runs.failed, tone: "bad" },
            { label: "cancelled", value: a.runs.cancelled, tone: "muted" },
          ]}
        />
        <BarChart
          title={`Latency of ${nameOf(a)}`}
          bars={[
            { label: "run p50", value: a.runLatencyMs.p50 ?? 0 },
            { label: "run p95", value: a.runLatencyMs.p95 ?? 0 },
            { label: "model p50", value: a.llm.latencyMs.p50 ?? 0 },
            { label: "model p95", value: a.llm.latencyMs.p95 ?? 0 },
          ]}
          format={fmtDuration}
        />
        <BarChart
          title={`Calls and errors of ${nameOf(a)}`}
          bars={[
            { label: "model calls", value: a.llm.calls },
            { label: "model errors", value: a.llm.errors, tone: "bad" },
            { label: "tool calls", value: a.tools.calls },
            { label: "tool errors", value: a.tools.errors, tone: "bad" },
          ]}
        />
        <BarChart
          title={`Tokens of ${nameOf(a)}`}
          bars={[
            { label: "input", value: a.tokens.input },
            { label: "output", value: a.tokens.output },
            { label: "reasoning", value: a.tokens.reasoning },
            { label: "cache read", value: a.tokens.cacheRead },
            { label: "cache write", value: a.tokens.cacheWrite },
          ]}
        />
        <LineChart
          title={`Duration of the last ${a.recentRuns.length} runs of ${nameOf(a)}`}
          points={a.recentRuns.map((r) => ({ x: r.at, y: r.ms, bad: r.state !== "completed" }))}
          format={fmtDuration}
        />
      </div>
    </section>
  );
}
