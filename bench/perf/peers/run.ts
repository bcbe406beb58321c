// Runtime overhead against peer frameworks: one workload on the mock wire
// server (Chat Completions, no added latency), every framework in fresh
// processes, the mock server in this process (its CPU is not counted).
//
//   tools:  100 sessions × a 20-round tool loop (one `add` call per round, then
//           a text answer): 21 model round trips per session, 20 in flight.
//   stream: 20 sessions × one 1,000-chunk text reply (same process, after).
//
// Every run is checked: the mock server must have seen exactly the expected
// requests (per session: tool rounds 0..20, each tool result carried back) and
// the framework must have run every tool call and returned the right final
// text. A framework that does not complete fails the whole benchmark (exit 1).
//
// pnpm exec node bench/perf/peers/run.ts [--json out.json] [--runs 5]
//   [--sessions 100] [--rounds 20] [--stream-sessions 20] [--chunks 1000]
//   [--concurrency 20] [--only lash-memory,ai-sdk] [--sabotage <framework>]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "@lash/providers/testing";
import { argValue, markdownTable, median, report } from "../util.ts";
import {
  expectedRequests,
  FRAMEWORKS,
  type Framework,
  responder,
  verifyRequests,
  type WorkerResult,
  type WorkloadSpec,
} from "./workload.ts";

const RUNS = Number(argValue("--runs") ?? 5);
const CONCURRENCY = Number(argValue("--concurrency") ?? 20);
const only = argValue("--only")?.split(",");
const sabotage = argValue("--sabotage");
const frameworks = FRAMEWORKS.filter((f) => !only || only.includes(f));
const specs: Record<WorkloadSpec["variant"], WorkloadSpec> = {
  tools: {
    variant: "tools",
    sessions: Number(argValue("--sessions") ?? 100),
    rounds: Number(argValue("--rounds") ?? 20),
    chunks: 0,
    concurrency: CONCURRENCY,
  },
  stream: {
    variant: "stream",
    sessions: Number(argValue("--stream-sessions") ?? 20),
    rounds: 0,
    chunks: Number(argValue("--chunks") ?? 1000),
    concurrency: CONCURRENCY,
  },
};

const LABEL: Record<Framework, string> = {
  "lash-memory": "lash (MemoryStore, journal off)",
  "lash-sqlite": "lash (SqliteStore + journal)",
  "ai-sdk": "Vercel AI SDK",
  pi: "pi (pi-agent-core)",
  "openai-agents": "OpenAI Agents SDK",
  mastra: "Mastra",
};
const PACKAGE: Record<Framework, string> = {
  "lash-memory": "@lash/core",
  "lash-sqlite": "@lash/core",
  "ai-sdk": "ai",
  pi: "@mariozechner/pi-agent-core",
  "openai-agents": "@openai/agents",
  mastra: "@mastra/core",
};

function version(pkg: string): string {
  const file = join(import.meta.dirname, "..", "..", "node_modules", pkg, "package.json");
  if (!existsSync(file)) return "?";
  return (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version ?? "?";
}

const workerPath = join(import.meta.dirname, "worker.ts");
const scratch = mkdtempSync(join(tmpdir(), "lash-peers-"));

/** One framework, one fresh process (tool loop, then streaming); returns the results and the problems found. */
async function runOnce(
  framework: Framework,
  run: number,
): Promise<{ results: WorkerResult[]; problems: string[] }> {
  const server = await startMockServer({ responder: responder(specs) });
  const out = join(scratch, `${framework}-${run}.json`);
  const args = [workerPath, framework, server.baseUrl("openai-chat"), JSON.stringify(specs), out];
  if (sabotage === framework) args.push("--sabotage");
  let stderr = "";
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("exit", (c) => resolve(c));
  });
  const requests = server.requests;
  await server.close();
  if (code !== 0 || !existsSync(out))
    return {
      results: [],
      problems: [`worker exited with ${code}: ${stderr.trim().split("\n").slice(-5).join(" | ")}`],
    };
  const results = JSON.parse(readFileSync(out, "utf8")) as WorkerResult[];
  const problems: string[] = [];
  for (const result of results) {
    const spec = specs[result.variant];
    const p: string[] = [...verifyRequests(spec, requests)];
    if (spec.variant === "tools" && result.toolCalls !== spec.sessions * spec.rounds)
      p.push(`the framework ran ${result.toolCalls} tool calls, expected ${spec.sessions * spec.rounds}`);
    if (result.completed !== spec.sessions)
      p.push(`${result.completed} of ${spec.sessions} sessions ended with the expected text`);
    p.push(...result.errors);
    problems.push(...p.map((x) => `${spec.variant}: ${x}`));
  }
  return { results, problems };
}

const started = performance.now();
const results = new Map<string, WorkerResult[]>();
const failures: string[] = [];
const failed = new Set<string>();
for (let run = 0; run < RUNS; run++) {
  // Rotate the order every run so machine noise does not favour one framework.
  const order = frameworks.map((_, i) => frameworks[(i + run) % frameworks.length]!);
  for (const framework of order) {
    if (failed.has(framework)) continue;
    const { results: rs, problems } = await runOnce(framework, run);
    if (problems.length > 0) {
      failed.add(framework);
      failures.push(`${framework} (run ${run + 1}): ${problems.join("; ")}`);
      process.stderr.write(`✗ ${framework} run ${run + 1}: ${problems.join("; ")}\n`);
      continue;
    }
    for (const result of rs) {
      const key = `${framework}/${result.variant}`;
      const list = results.get(key) ?? [];
      list.push(result);
      results.set(key, list);
      const cpu = result.cpuUserMs + result.cpuSystemMs;
      process.stdout.write(
        `  run ${run + 1}/${RUNS} ${key.padEnd(22)} cpu ${cpu.toFixed(0).padStart(6)} ms  wall ${result.wallMs.toFixed(0).padStart(6)} ms  ✓ ${expectedRequests(specs[result.variant])} requests\n`,
      );
    }
  }
}
rmSync(scratch, { recursive: true, force: true });
const totalSeconds = (performance.now() - started) / 1000;

if (failures.length > 0) {
  process.stderr.write(
    `\nPEER BENCHMARK FAILED: ${failures.length} framework(s) did not complete the workload:\n${failures.map((f) => `  - ${f}`).join("\n")}\n`,
  );
  process.exit(1);
}

const cpuOf = (r: WorkerResult) => r.cpuUserMs + r.cpuSystemMs;
interface Row {
  readonly framework: Framework;
  readonly version: string;
  readonly cpuMsPerRoundTrip: number;
  readonly cpuMsPerRoundTripRuns: readonly number[];
  readonly wallMs: number;
  readonly maxRssMiB: number;
  readonly streamUsPerChunk: number;
  readonly streamUsPerChunkRuns: readonly number[];
  readonly streamWallMs: number;
}
const roundTrips = expectedRequests(specs.tools);
const chunks = specs.stream.sessions * specs.stream.chunks;
const rows: Row[] = frameworks.map((framework) => {
  const tools = results.get(`${framework}/tools`) ?? [];
  const stream = results.get(`${framework}/stream`) ?? [];
  const perTrip = tools.map((r) => cpuOf(r) / roundTrips);
  const perChunk = stream.map((r) => (cpuOf(r) * 1000) / chunks);
  return {
    framework,
    version: version(PACKAGE[framework]),
    cpuMsPerRoundTrip: median(perTrip),
    cpuMsPerRoundTripRuns: perTrip,
    wallMs: median(tools.map((r) => r.wallMs)),
    maxRssMiB: median(tools.map((r) => r.maxRssBytes / 2 ** 20)),
    streamUsPerChunk: median(perChunk),
    streamUsPerChunkRuns: perChunk,
    streamWallMs: median(stream.map((r) => r.wallMs)),
  };
});
const base = rows.find((r) => r.framework === "lash-memory");
const ratio = (x: number, b: number | undefined) => (b ? `${(x / b).toFixed(2)}×` : "-");
const spread = (xs: readonly number[]) =>
  xs.length > 1 ? `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}` : "-";

const table = markdownTable(
  [
    "framework",
    "version",
    "CPU ms / round trip",
    "min–max",
    "vs lash in-memory",
    "wall (s)",
    "peak RSS (MiB)",
    "stream µs / chunk",
    "vs lash in-memory",
  ],
  rows.map((r) => [
    LABEL[r.framework],
    r.version,
    r.cpuMsPerRoundTrip.toFixed(2),
    spread(r.cpuMsPerRoundTripRuns),
    ratio(r.cpuMsPerRoundTrip, base?.cpuMsPerRoundTrip),
    (r.wallMs / 1000).toFixed(1),
    r.maxRssMiB.toFixed(0),
    r.streamUsPerChunk.toFixed(1),
    ratio(r.streamUsPerChunk, base?.streamUsPerChunk),
  ]),
);

report({
  name: "peers",
  title: "Runtime overhead against peer frameworks (mock Chat Completions server)",
  table,
  results: { runs: RUNS, specs, rows, raw: Object.fromEntries(results), totalSeconds },
  notes: [
    `Tool loop: ${specs.tools.sessions} sessions × ${specs.tools.rounds} rounds (one \`add\` tool call per round, then a text answer) = ${roundTrips.toLocaleString("en-US")} model round trips per run, ${specs.tools.concurrency} sessions in flight. ` +
      `Streaming: ${specs.stream.sessions} sessions × one ${specs.stream.chunks.toLocaleString("en-US")}-chunk text reply. ` +
      `CPU = user + system time of the framework's process (process.cpuUsage) around the workload only — start-up, imports and global set-up excluded; the mock server runs in the parent process. ` +
      `Medians of ${RUNS} runs, each in a fresh process (the tool loop, then the streaming variant, measured apart), framework order rotated per run; peak RSS is the worker's maxRSS at the end of the tool loop (imports included). Total ${totalSeconds.toFixed(0)} s.`,
    `Request-count check passed for every framework and run: the mock server saw exactly ${roundTrips.toLocaleString("en-US")} tool-loop requests (rounds 0..${specs.tools.rounds} of every session, each carrying the previous tool result) and ${specs.stream.sessions} streaming requests, ` +
      `every framework ran ${(specs.tools.sessions * specs.tools.rounds).toLocaleString("en-US")} tool calls and returned the expected final text in every session.`,
    "Wire modes differ by design: lash, pi, Mastra and every streaming run use SSE; the AI SDK's generateText and the OpenAI Agents SDK's non-streamed run() request non-streamed JSON in the tool loop.",
  ],
});
