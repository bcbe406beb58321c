// @lash/export: time to export a session and the size of the result, for
// sessions of 100 and 10,000 graph nodes in a SqliteStore (the store the CLI
// uses). Each turn is four nodes: a user message, an assistant message with
// reasoning, text and a tool call, the tool result (~1.5 KB of file text), and
// a Markdown answer — a typical coding-agent turn.
//
// pnpm exec node bench/perf/export/run.ts [--json out.json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore, type PromiseStore } from "../../../packages/core/src/store/promise.ts";
import type { NewNode } from "../../../packages/core/src/store.ts";
import { type ExportFormat, loadSession, renderExport } from "../../../packages/export/src/index.ts";
import { markdownTable, median, report } from "../util.ts";

const SIZES = [100, 10_000];
const RUNS: Record<number, number> = { 100: 9, 10000: 3 };
const FORMATS: readonly ExportFormat[] = ["html", "json", "md"];
const TURN_NODES = 4;
const CHUNK_TURNS = 250;

const fileText = Array.from(
  { length: 30 },
  (_, i) => `${String(i + 1).padStart(6)}\tconst value${i} = compute(${i}); // ${"x".repeat(20)}`,
).join("\n");

function turnNodes(sessionId: string, t: number, parent: string | null): NewNode[] {
  const turnId = `turn_${t}`;
  const ids = [0, 1, 2, 3].map((k) => `${sessionId}.${t}.${k}`);
  const payloads = [
    {
      role: "user",
      parts: [{ type: "text", text: `Step ${t}: please look at src/file${t}.ts and fix the bug.` }],
    },
    {
      role: "assistant",
      parts: [
        { type: "reasoning", text: `I should read src/file${t}.ts first, then edit it. `.repeat(3) },
        { type: "text", text: "Let me read the file." },
        {
          type: "toolCall",
          id: `call_${t}`,
          name: "read_file",
          argumentsText: JSON.stringify({ path: `src/file${t}.ts` }),
        },
      ],
    },
    {
      role: "tool",
      parts: [
        {
          type: "toolResult",
          callId: `call_${t}`,
          name: "read_file",
          content: [{ type: "text", text: fileText }],
          isError: false,
        },
      ],
    },
    {
      role: "assistant",
      parts: [
        {
          type: "text",
          text: `Fixed **src/file${t}.ts**:\n\n- the off-by-one in \`compute\`\n- a missing \`await\`\n\n\`\`\`ts\nconst value = await compute(${t});\n\`\`\``,
        },
      ],
    },
  ];
  return payloads.map((p, k) => ({
    id: ids[k]!,
    sessionId,
    parentId: k === 0 ? parent : ids[k - 1]!,
    frameId: "f0",
    kind: "message" as const,
    turnId,
    payload: { id: ids[k]!, ...p },
    createdAt: 1_700_000_000_000 + t * 1000 + k,
  }));
}

async function build(store: PromiseStore, sessionId: string, nodes: number): Promise<void> {
  await store.createSession({
    id: sessionId,
    title: `bench ${nodes}`,
    model: "anthropic/claude-sonnet-4-5",
    mode: "standard",
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    leafId: null,
    headRevision: 0,
    turnCount: 0,
    frameId: "f0",
    state: {},
  });
  const turns = nodes / TURN_NODES;
  let parent: string | null = null;
  let revision = 0;
  for (let start = 0; start < turns; start += CHUNK_TURNS) {
    const batch: NewNode[] = [];
    const usage = [];
    for (let t = start; t < Math.min(turns, start + CHUNK_TURNS); t++) {
      const ns = turnNodes(sessionId, t, parent);
      parent = ns[ns.length - 1]!.id;
      batch.push(...ns);
      usage.push({
        turnId: `turn_${t}`,
        source: "turn",
        model: "anthropic/claude-sonnet-4-5",
        usage: { input: 2000 + t, output: 150 },
        costUsd: 0.0083,
      });
    }
    const r = await store.commit({
      sessionId,
      turnId: `chunk_${start}`,
      hash: `h${start}`,
      expectedRevision: revision,
      nodes: batch,
      leafId: parent,
      usage,
      updatedAt: 1_700_000_000_000 + start,
    });
    revision = r.headRevision;
  }
}

const cpuSince = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

/** The rendered file must hold the first and the last turn (and parse, for JSON). */
function check(text: string, format: ExportFormat, nodes: number): void {
  const last = nodes / TURN_NODES - 1;
  for (const t of [0, last])
    if (!text.includes(`src/file${t}.ts`))
      throw new Error(`${format} export of ${nodes} nodes does not contain turn ${t} (src/file${t}.ts)`);
  if (format === "json") JSON.parse(text);
}

const dir = mkdtempSync(join(tmpdir(), "lash-bench-export-"));
const opened = await openSqliteStore({ filename: join(dir, "lash.db") });
const rows: (string | number)[][] = [];
const results: unknown[] = [];
try {
  for (const size of SIZES) {
    const id = `ses_bench_${size}`;
    await build(opened.store, id, size);
    const runs = RUNS[size] ?? 3;
    const loadMs: number[] = [];
    const loadCpuMs: number[] = [];
    let exported = await loadSession(opened.store, id);
    for (let i = 0; i < runs; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      exported = await loadSession(opened.store, id);
      loadMs.push(performance.now() - t0);
      loadCpuMs.push(cpuSince(c0));
    }
    for (const format of FORMATS) {
      // Checked before timing: the file holds the first and the last turn, and the JSON parses.
      check(renderExport(exported, format), format, size);
      const renderMs: number[] = [];
      const renderCpuMs: number[] = [];
      let bytes = 0;
      for (let i = 0; i < runs; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const text = renderExport(exported, format);
        renderMs.push(performance.now() - t0);
        renderCpuMs.push(cpuSince(c0));
        bytes = Buffer.byteLength(text);
      }
      const load = median(loadMs);
      const render = median(renderMs);
      const loadCpu = median(loadCpuMs);
      const renderCpu = median(renderCpuMs);
      rows.push([
        size.toLocaleString("en-US"),
        format,
        loadCpu.toFixed(1),
        renderCpu.toFixed(1),
        (loadCpu + renderCpu).toFixed(1),
        (load + render).toFixed(1),
        (bytes / 1024).toFixed(0),
        (bytes / size).toFixed(0),
      ]);
      results.push({
        nodes: size,
        format,
        loadMs: load,
        renderMs: render,
        totalMs: load + render,
        loadCpuMs: loadCpu,
        renderCpuMs: renderCpu,
        bytes,
        runs,
      });
    }
  }
} finally {
  await opened.close();
  rmSync(dir, { recursive: true, force: true });
}

report({
  name: "export",
  title: "Session export (SqliteStore → html / json / md), median of runs, CPU first",
  table: markdownTable(
    [
      "nodes",
      "format",
      "load CPU ms",
      "render CPU ms",
      "export CPU ms",
      "export wall ms",
      "size KiB",
      "bytes/node",
    ],
    rows,
  ),
  results,
  goals: "No goal is set for export time or size (issue 10 asks for them to be reported).",
  notes: [
    "Checked before timing: every format's file holds the first and the last turn, and the JSON export parses. CPU = this process's user + system time around the same span as the wall figure.",
    "load = reading the session (all branches, usage, children) from the store; render = building the file. Active path and every node are rendered into the HTML page (branch switching is client-side).",
  ],
});
