// Runtime overhead against peer frameworks and the floor — the raw `openai` SDK
// in a hand-written tool loop: one workload on the mock wire server (Chat
// Completions, no added latency), every framework in fresh processes, the mock
// server in this process (its CPU is not counted). Ratios are to the raw loop;
// issue 16's goals (lash CPU per round trip and peak RSS) are stated per row.
//
//   tools:      100 sessions × a 20-round tool loop over SSE (one `add` call per
//               round, then a text answer): 21 model round trips per session, 20 in flight.
//   tools-json: the same loop with non-streamed responses, for frameworks that offer it.
//   stream:     20 sessions × one 1,000-chunk text reply (same process, after).
//
// Every run is checked before it is timed (the worker's probe session per
// variant must return the right text after the right tool calls) and after: the
// mock server must have seen exactly the expected requests (per session: tool
// rounds 0..20, each tool result carried back, in the variant's wire mode) and
// the framework must have run every tool call and returned the right final
// text. A framework that does not complete fails the whole benchmark (exit 1).
//
// pnpm exec node bench/perf/peers/run.ts [--json out.json] [--runs 5]
//   [--sessions 100] [--rounds 20] [--stream-sessions 20] [--chunks 1000]
//   [--concurrency 20] [--only raw,lash-memory,ai-sdk] [--sabotage <framework>]
//   [--sabotage-probe <framework>] [--profile <dir>]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "@lash/providers/testing";
import { argValue, markdownTable, median, report } from "../util.ts";
import {
  classify,
  expectedRequests,
  FRAMEWORKS,
  type Framework,
  responder,
  VARIANTS,
  type Variant,
  verifyRequests,
  type WorkerOutput,
  type WorkerResult,
  type WorkloadSpec,
  wireOf,
} from "./workload.ts";

const RUNS = Number(argValue("--runs") ?? 5);
const CONCURRENCY = Number(argValue("--concurrency") ?? 20);
const only = argValue("--only")?.split(",");
const sabotage = argValue("--sabotage");
const sabotageProbe = argValue("--sabotage-probe");
/** `--profile <dir>`: every worker runs under `--cpu-prof`, one .cpuprofile per process in <dir> (open in Chrome DevTools or speedscope). */
const profileDir = argValue("--profile");
for (const name of only ?? [])
  if (!(FRAMEWORKS as readonly string[]).includes(name))
    throw new Error(`--only: unknown framework "${name}" (known: ${FRAMEWORKS.join(", ")})`);
const frameworks = FRAMEWORKS.filter((f) => !only || only.includes(f));
const toolSpec = (variant: Variant): WorkloadSpec => ({
  variant,
  sessions: Number(argValue("--sessions") ?? 100),
  rounds: Number(argValue("--rounds") ?? 20),
  chunks: 0,
  concurrency: CONCURRENCY,
});
const specs: Record<Variant, WorkloadSpec> = {
  tools: toolSpec("tools"),
  "tools-json": toolSpec("tools-json"),
  stream: {
    variant: "stream",
    sessions: Number(argValue("--stream-sessions") ?? 20),
    rounds: 0,
    chunks: Number(argValue("--chunks") ?? 1000),
    concurrency: CONCURRENCY,
  },
};

const LABEL: Record<Framework, string> = {
  raw: "raw `openai` SDK loop (the floor)",
  "lash-memory": "lash (MemoryStore, journal off)",
  "lash-sqlite": "lash (SqliteStore + journal)",
  "ai-sdk": "Vercel AI SDK",
  pi: "pi (pi-agent-core)",
  "openai-agents": "OpenAI Agents SDK",
  mastra: "Mastra",
};
const PACKAGE: Record<Framework, string> = {
  raw: "openai",
  "lash-memory": "@lash/core",
  "lash-sqlite": "@lash/core",
  "ai-sdk": "ai",
  pi: "@mariozechner/pi-agent-core",
  "openai-agents": "@openai/agents",
  mastra: "@mastra/core",
};
/** Issue 16's goals, as ratios to the raw SDK loop (CPU per round trip over SSE; peak RSS). Peers have none. */
const CPU_GOAL: Partial<Record<Framework, number>> = { "lash-memory": 1.05, "lash-sqlite": 1.15 };
const RSS_GOAL: Partial<Record<Framework, number>> = { "lash-memory": 1.2, "lash-sqlite": 1.2 };

function version(pkg: string): string {
  const file = join(import.meta.dirname, "..", "..", "node_modules", pkg, "package.json");
  if (!existsSync(file)) return "?";
  return (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version ?? "?";
}

const workerPath = join(import.meta.dirname, "worker.ts");
const scratch = mkdtempSync(join(tmpdir(), "lash-peers-"));

/** One framework, one fresh process (probes, tool loops, streaming); returns the results and the problems found. */
async function runOnce(
  framework: Framework,
  run: number,
): Promise<{ output: WorkerOutput | undefined; problems: string[] }> {
  // idle connections kept for a minute: on a loaded machine a 1 s keep-alive races the clients' reuse
  const server = await startMockServer({ responder: responder(specs), keepAliveTimeoutMs: 60_000 });
  const out = join(scratch, `${framework}-${run}.json`);
  const args = [workerPath, framework, server.baseUrl("openai-chat"), JSON.stringify(specs), out];
  if (sabotage === framework) args.push("--sabotage");
  if (sabotageProbe === framework) args.push("--sabotage-probe");
  let stderr = "";
  const code = await new Promise<number | null>((resolve) => {
    const flags = profileDir
      ? [
          "--cpu-prof",
          "--cpu-prof-dir",
          profileDir,
          "--cpu-prof-name",
          `${framework}-run${run + 1}.cpuprofile`,
        ]
      : [];
    const child = spawn(process.execPath, [...flags, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("exit", (c) => resolve(c));
  });
  const requests = server.requests;
  await server.close();
  if (code !== 0 || !existsSync(out))
    return {
      output: undefined,
      problems: [`worker exited with ${code}: ${stderr.trim().split("\n").slice(-5).join(" | ")}`],
    };
  const output = JSON.parse(readFileSync(out, "utf8")) as WorkerOutput;
  const problems: string[] = [];
  for (const variant of VARIANTS) {
    const result = output.results.find((r) => r.variant === variant);
    const offered = variant === "stream" || output.wires.includes(wireOf(variant));
    if (!result) {
      if (offered) problems.push(`${variant}: no result`);
      else if (requests.some((r) => classify(r).variant === variant))
        problems.push(`${variant}: requests seen for a variant the framework does not offer`);
      continue;
    }
    const spec = specs[variant];
    const p: string[] = [...verifyRequests(spec, requests, true)];
    if (spec.variant !== "stream" && result.toolCalls !== spec.sessions * spec.rounds)
      p.push(`the framework ran ${result.toolCalls} tool calls, expected ${spec.sessions * spec.rounds}`);
    if (result.completed !== spec.sessions)
      p.push(`${result.completed} of ${spec.sessions} sessions ended with the expected text`);
    p.push(...result.errors);
    problems.push(...p.map((x) => `${variant}: ${x}`));
  }
  return { output, problems };
}

const started = performance.now();
const results = new Map<string, WorkerResult[]>();
const wires = new Map<Framework, readonly string[]>();
const failures: string[] = [];
const failed = new Set<string>();
for (let run = 0; run < RUNS; run++) {
  // Rotate the order every run so machine noise does not favour one framework.
  const order = frameworks.map((_, i) => frameworks[(i + run) % frameworks.length]!);
  for (const framework of order) {
    if (failed.has(framework)) continue;
    const { output, problems } = await runOnce(framework, run);
    if (problems.length > 0 || !output) {
      failed.add(framework);
      failures.push(`${framework} (run ${run + 1}): ${problems.join("; ")}`);
      process.stderr.write(`✗ ${framework} run ${run + 1}: ${problems.join("; ")}\n`);
      continue;
    }
    wires.set(framework, output.wires);
    for (const result of output.results) {
      const key = `${framework}/${result.variant}`;
      const list = results.get(key) ?? [];
      list.push(result);
      results.set(key, list);
      const cpu = result.cpuUserMs + result.cpuSystemMs;
      process.stdout.write(
        `  run ${run + 1}/${RUNS} ${key.padEnd(25)} cpu ${cpu.toFixed(0).padStart(6)} ms  wall ${result.wallMs.toFixed(0).padStart(6)} ms  ✓ ${expectedRequests(specs[result.variant])} requests + probe\n`,
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
interface LoopFigures {
  readonly cpuMsPerRoundTrip: number;
  readonly cpuMsPerRoundTripRuns: readonly number[];
  readonly wallMs: number;
}
interface Row {
  readonly framework: Framework;
  readonly version: string;
  /** The tool loop over SSE, and non-streamed (undefined: the framework has no such mode). */
  readonly sse: LoopFigures | undefined;
  readonly json: LoopFigures | undefined;
  readonly maxRssMiB: number;
  readonly streamUsPerChunk: number;
  readonly streamUsPerChunkRuns: readonly number[];
  readonly streamWallMs: number;
}
const roundTrips = expectedRequests(specs.tools);
const chunks = specs.stream.sessions * specs.stream.chunks;
const loop = (framework: Framework, variant: Variant): LoopFigures | undefined => {
  const rs = results.get(`${framework}/${variant}`) ?? [];
  if (rs.length === 0) return undefined;
  const perTrip = rs.map((r) => cpuOf(r) / roundTrips);
  return {
    cpuMsPerRoundTrip: median(perTrip),
    cpuMsPerRoundTripRuns: perTrip,
    wallMs: median(rs.map((r) => r.wallMs)),
  };
};
const rows: Row[] = frameworks.map((framework) => {
  const stream = results.get(`${framework}/stream`) ?? [];
  const perChunk = stream.map((r) => (cpuOf(r) * 1000) / chunks);
  return {
    framework,
    version: version(PACKAGE[framework]),
    sse: loop(framework, "tools"),
    json: loop(framework, "tools-json"),
    maxRssMiB: median((results.get(`${framework}/tools`) ?? []).map((r) => r.maxRssBytes / 2 ** 20)),
    streamUsPerChunk: median(perChunk),
    streamUsPerChunkRuns: perChunk,
    streamWallMs: median(stream.map((r) => r.wallMs)),
  };
});
const raw = rows.find((r) => r.framework === "raw");
const ratioOf = (x: number | undefined, b: number | undefined) => (x !== undefined && b ? x / b : undefined);
const times = (r: number | undefined) => (r === undefined ? "-" : `${r.toFixed(2)}×`);
const spread = (xs: readonly number[]) =>
  xs.length > 1 ? `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}` : "-";
const goalCell = (goal: number | undefined) =>
  goal === undefined ? "— (none set)" : `≤ ${goal.toFixed(2)}×`;
const met = (r: number | undefined, goal: number | undefined) =>
  goal === undefined ? "—" : r === undefined ? "no raw baseline" : r <= goal ? "met" : "**missed**";
const cpuRatio = (r: Row) => ratioOf(r.sse?.cpuMsPerRoundTrip, raw?.sse?.cpuMsPerRoundTrip);
const rssRatio = (r: Row) => ratioOf(r.maxRssMiB, raw?.maxRssMiB);

const loopTable = markdownTable(
  [
    "framework",
    "version",
    "CPU ms / round trip, SSE",
    "min–max",
    "vs raw",
    "goal",
    "met?",
    "wall (s), SSE",
    "CPU ms / round trip, JSON",
    "vs raw, JSON",
    "wall (s), JSON",
  ],
  rows.map((r) => [
    LABEL[r.framework],
    r.version,
    r.sse ? r.sse.cpuMsPerRoundTrip.toFixed(2) : "n/a",
    r.sse ? spread(r.sse.cpuMsPerRoundTripRuns) : "-",
    times(cpuRatio(r)),
    goalCell(CPU_GOAL[r.framework]),
    met(cpuRatio(r), CPU_GOAL[r.framework]),
    r.sse ? (r.sse.wallMs / 1000).toFixed(1) : "-",
    r.json ? r.json.cpuMsPerRoundTrip.toFixed(2) : "n/a",
    times(ratioOf(r.json?.cpuMsPerRoundTrip, raw?.json?.cpuMsPerRoundTrip)),
    r.json ? (r.json.wallMs / 1000).toFixed(1) : "-",
  ]),
);
const memoryTable = markdownTable(
  [
    "framework",
    "peak RSS (MiB)",
    "vs raw",
    "goal",
    "met?",
    "stream CPU µs / chunk",
    "min–max",
    "vs raw",
    "stream wall (ms)",
  ],
  rows.map((r) => [
    LABEL[r.framework],
    r.maxRssMiB.toFixed(0),
    times(rssRatio(r)),
    goalCell(RSS_GOAL[r.framework]),
    met(rssRatio(r), RSS_GOAL[r.framework]),
    r.streamUsPerChunk.toFixed(1),
    spread(r.streamUsPerChunkRuns),
    times(ratioOf(r.streamUsPerChunk, raw?.streamUsPerChunk)),
    r.streamWallMs.toFixed(0),
  ]),
);

/** One sentence per goal, worded from the same numbers as the table. */
const verdicts = rows.flatMap((r) => {
  const out: string[] = [];
  const cpuGoal = CPU_GOAL[r.framework];
  const rssGoal = RSS_GOAL[r.framework];
  if (cpuGoal !== undefined)
    out.push(
      `${LABEL[r.framework]}: CPU per round trip ${times(cpuRatio(r))} raw (goal ≤ ${cpuGoal}×, ${met(cpuRatio(r), cpuGoal).replaceAll("*", "")})`,
    );
  if (rssGoal !== undefined)
    out.push(
      `${LABEL[r.framework]}: peak RSS ${times(rssRatio(r))} raw (goal ≤ ${rssGoal}×, ${met(rssRatio(r), rssGoal).replaceAll("*", "")})`,
    );
  return out;
});
const lashMemory = rows.find((r) => r.framework === "lash-memory");
const lashSqlite = rows.find((r) => r.framework === "lash-sqlite");
const durability = ratioOf(lashSqlite?.sse?.cpuMsPerRoundTrip, lashMemory?.sse?.cpuMsPerRoundTrip);
const noJson = rows.filter((r) => !r.json).map((r) => LABEL[r.framework]);

report({
  name: "peers",
  title: "Runtime overhead against peer frameworks and the raw SDK loop (mock Chat Completions server)",
  table: `${loopTable}\n\n${memoryTable}`,
  results: {
    runs: RUNS,
    specs,
    goals: { cpu: CPU_GOAL, rss: RSS_GOAL },
    rows,
    wires: Object.fromEntries(wires),
    raw: Object.fromEntries(results),
    totalSeconds,
  },
  goals:
    `Goals (issue 16), all against the raw \`openai\` SDK loop: ${verdicts.length ? `${verdicts.join("; ")}.` : "(no lash row in this run)."}` +
    (durability !== undefined
      ? ` SqliteStore + journal costs ${durability.toFixed(2)}× MemoryStore per round trip.`
      : "") +
    " No goal is set for the peers, for the non-streamed (JSON) loop or for streaming CPU per chunk: reported, not judged. " +
    "The profile that explains the remainder: bench/results/notes/peers-profile.md.",
  notes: [
    `Tool loop: ${specs.tools.sessions} sessions × ${specs.tools.rounds} rounds (one \`add\` tool call per round, then a text answer) = ${roundTrips.toLocaleString("en-US")} model round trips per run and wire mode, ${Math.min(specs.tools.concurrency, specs.tools.sessions)} sessions in flight; SSE = streamed responses, JSON = non-streamed. ` +
      `Streaming: ${specs.stream.sessions} sessions × one ${specs.stream.chunks.toLocaleString("en-US")}-chunk text reply. ` +
      `CPU = user + system time of the framework's process (process.cpuUsage) around the workload only — start-up, imports, global set-up and the probe sessions excluded; the mock server runs in the parent process. ` +
      `Medians of ${RUNS} runs, each in a fresh process (SSE tool loop, JSON tool loop, streaming, measured apart), framework order rotated per run; peak RSS is the worker's maxRSS at the end of the SSE tool loop (imports and probes included). Total ${totalSeconds.toFixed(0)} s.`,
    `Checked before timing: each worker first runs one probe session per variant and stops (failing the benchmark) unless it returned the expected final text after exactly ${specs.tools.rounds} tool calls. ` +
      `Checked after: the mock server saw exactly ${roundTrips.toLocaleString("en-US")} requests per tool-loop variant (rounds 0..${specs.tools.rounds} of every session and of the probe, each carrying the previous tool result, each in the variant's wire mode) and ${specs.stream.sessions} streaming requests; ` +
      `every framework ran ${(specs.tools.sessions * specs.tools.rounds).toLocaleString("en-US")} tool calls per tool loop and returned the expected final text in every session.`,
    noJson.length
      ? `No non-streamed tool loop (n/a, not emulated): ${noJson.join(", ")} — each always streams its model calls (lash's openai-compatible provider sends \`stream: true\` on every request).`
      : "Every framework ran both wire modes.",
  ],
});
