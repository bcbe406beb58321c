// report.json and report.html of a run.
import { join } from "node:path";
import type { Usage } from "@lash/sansio";
import type { RunSummary, SuiteAdapter, TaskResult } from "./types.ts";
import { addCost, addUsage, escapeHtml, writeAtomic, zeroUsage } from "./util.ts";

export interface ReportSummary {
  readonly tasks: number;
  readonly done: number;
  readonly errors: number;
  readonly missing: number;
  readonly graded: number;
  readonly correct: number;
  /** Mean score over graded tasks (null when none were graded). */
  readonly meanScore: number | null;
  readonly usage: { readonly agent: Usage; readonly judge: Usage };
  readonly costUsd: { readonly agent?: number; readonly judge?: number; readonly total?: number };
  readonly durationMs: number;
  readonly metrics: Readonly<Record<string, number | string>>;
}

export function summarize(suite: SuiteAdapter, run: RunSummary): ReportSummary {
  const rs = run.results;
  const graded = rs.filter(
    (r): r is TaskResult & { score: number } => r.status === "done" && typeof r.score === "number",
  );
  let agent = zeroUsage;
  let judge = zeroUsage;
  let agentCost: number | undefined;
  let judgeCost: number | undefined;
  for (const r of rs) {
    agent = addUsage(agent, r.usage.agent);
    judge = addUsage(judge, r.usage.judge);
    agentCost = addCost(agentCost, r.costUsd.agent);
    judgeCost = addCost(judgeCost, r.costUsd.judge);
  }
  const total = addCost(agentCost, judgeCost);
  return {
    tasks: run.tasks.length,
    done: rs.filter((r) => r.status === "done").length,
    errors: rs.filter((r) => r.status === "error").length,
    missing: run.tasks.length - rs.length,
    graded: graded.length,
    correct: graded.filter((r) => r.correct === true).length,
    meanScore: graded.length ? graded.reduce((s, r) => s + r.score, 0) / graded.length : null,
    usage: { agent, judge },
    costUsd: {
      ...(agentCost !== undefined ? { agent: agentCost } : {}),
      ...(judgeCost !== undefined ? { judge: judgeCost } : {}),
      ...(total !== undefined ? { total } : {}),
    },
    durationMs: rs.reduce((s, r) => s + r.durationMs, 0),
    metrics: suite.summarize?.(run) ?? {},
  };
}

const usd = (x: number | undefined) => (x === undefined ? "n/a" : `$${x.toFixed(4)}`);
const tokens = (u: Usage) =>
  `${(u.input ?? 0).toLocaleString("en-US")} in / ${(u.output ?? 0).toLocaleString("en-US")} out`;

export function writeReport(suite: SuiteAdapter, run: RunSummary): string[] {
  const summary = summarize(suite, run);
  writeAtomic(
    join(run.runDir, "report.json"),
    JSON.stringify(
      { suite: suite.name, scoring: suite.scoring, manifest: run.manifest, summary, results: run.results },
      null,
      2,
    ),
  );
  const rows = run.results
    .map((r) => {
      const answer = (r.answer ?? r.error ?? "").slice(0, 400);
      return `<tr class="${r.status}"><td>${escapeHtml(r.id)}</td><td>${r.status}</td><td>${r.score === null || r.score === undefined ? "–" : r.score.toFixed(2)}</td><td><pre>${escapeHtml(answer)}</pre></td><td>${escapeHtml(tokens(r.usage.agent))}</td><td>${usd(addCost(r.costUsd.agent, r.costUsd.judge))}</td><td>${r.turns}</td><td>${r.toolCalls}</td><td>${(r.durationMs / 1000).toFixed(1)} s</td></tr>`;
    })
    .join("\n");
  const metrics = Object.entries(summary.metrics)
    .map(([k, v]) => `<li>${escapeHtml(k)}: ${escapeHtml(String(v))}</li>`)
    .join("");
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lash · ${escapeHtml(suite.title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.3rem .5rem;vertical-align:top;text-align:left}
th{background:#f4f4f4}tr.error td{background:#fff0f0}pre{margin:0;white-space:pre-wrap;max-width:40rem}
.k{color:#666}
</style></head><body>
<h1>${escapeHtml(suite.title)}</h1>
<p><span class="k">model</span> ${escapeHtml(run.manifest.model)} · <span class="k">judge</span> ${escapeHtml(run.manifest.judgeModel)} · <span class="k">mode</span> ${run.manifest.mode} · <span class="k">data</span> ${run.manifest.sample ? "bundled sample" : escapeHtml(run.manifest.data ?? "")} · <span class="k">started</span> ${escapeHtml(run.manifest.createdAt)}</p>
<p><b>${summary.meanScore === null ? "not graded here" : `mean score ${(summary.meanScore * 100).toFixed(1)} %`}</b> (${summary.correct}/${summary.graded} graded correct) · ${summary.done} done, ${summary.errors} errors, ${summary.missing} not run · agent ${escapeHtml(tokens(summary.usage.agent))} · judge ${escapeHtml(tokens(summary.usage.judge))} · cost ${usd(summary.costUsd.total)}</p>
${metrics ? `<ul>${metrics}</ul>` : ""}
<p class="k">${escapeHtml(suite.scoring)}</p>
<table><thead><tr><th>task</th><th>status</th><th>score</th><th>answer</th><th>agent tokens</th><th>cost</th><th>turns</th><th>tool calls</th><th>time</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`;
  writeAtomic(join(run.runDir, "report.html"), html);
  return ["report.json", "report.html"];
}

/** One suite run in one mode, for the side-by-side report of a multi-run invocation. */
export interface ModeRun {
  readonly suite: SuiteAdapter;
  readonly mode: "standard" | "rlm";
  readonly runDir: string;
  readonly summary: ReportSummary;
  /** Tool calls (standard) or operations (rlm) over all tasks. */
  readonly toolCalls: number;
}

const pct = (x: number | null | undefined) =>
  x === null || x === undefined ? "–" : `${(x * 100).toFixed(1)} %`;

/**
 * modes.md and modes.json: every suite as a row, each mode's mean score, graded-correct count,
 * tool calls and agent tokens side by side (a mode that was not run shows "not run").
 */
export function writeModesReport(runDir: string, runs: readonly ModeRun[]): string[] {
  const modes = (["standard", "rlm"] as const).filter((m) => runs.some((r) => r.mode === m));
  const suites = [...new Set(runs.map((r) => r.suite.name))];
  const cell = (suite: string, mode: string) => runs.find((r) => r.suite.name === suite && r.mode === mode);
  const head = `| suite | ${modes.map((m) => `${m}: mean score | ${m}: correct | ${m}: tool calls | ${m}: agent tokens`).join(" | ")} |`;
  const sep = `| --- | ${modes.map(() => "--- | --- | --- | ---").join(" | ")} |`;
  const rows = suites.map((s) => {
    const title = runs.find((r) => r.suite.name === s)!.suite.title;
    const cols = modes.map((m) => {
      const r = cell(s, m);
      if (!r) return "not run | | |";
      const u = r.summary.usage.agent;
      return `${pct(r.summary.meanScore)} | ${r.summary.correct}/${r.summary.graded} | ${r.toolCalls} | ${tokens(u)}`;
    });
    return `| ${title} | ${cols.join(" | ")} |`;
  });
  const md = `# Task suites by mode\n\n${head}\n${sep}\n${rows.join("\n")}\n\nRun directories: ${runs.map((r) => `${r.suite.name}/${r.mode} → ${r.runDir}`).join("; ")}.\n`;
  writeAtomic(join(runDir, "modes.md"), md);
  writeAtomic(
    join(runDir, "modes.json"),
    JSON.stringify(
      runs.map((r) => ({
        suite: r.suite.name,
        mode: r.mode,
        runDir: r.runDir,
        toolCalls: r.toolCalls,
        summary: r.summary,
      })),
      null,
      2,
    ),
  );
  return ["modes.md", "modes.json"];
}
