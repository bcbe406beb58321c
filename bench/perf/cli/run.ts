// The `lash` process: how long `lash --version` takes, and how long `lash -p` takes from spawn to its
// first model request (measured at the mock wire server, the moment the request arrives), with
// `node -e 0` and a trivial TypeScript file as floors. Each figure is the median over --runs spawns,
// with the on-disk compile cache warm (the default) and disabled (NODE_DISABLE_COMPILE_CACHE=1).
//
// pnpm exec node bench/perf/cli/run.ts [--json out.json] [--runs N]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../../packages/providers/src/testing/index.ts";
import { argValue, markdownTable, median, percentile, report } from "../util.ts";

const RUNS = Number(argValue("--runs") ?? 11);
const MAIN = join(import.meta.dirname, "..", "..", "..", "apps", "cli", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "lash-bench-cli-"));
const trivialTs = join(dir, "trivial.ts");
writeFileSync(trivialTs, "const x: number = 1;\nif (x !== 1) process.exit(1);\n");

let firstRequestAt = 0;
const server = await startMockServer({
  responder: () => {
    firstRequestAt ||= performance.now();
    return { text: "ok", usage: { input: 10, output: 1 } };
  },
});

const baseEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: dir,
  LASH_HOME: join(dir, "home"),
  LASH_MODEL: "openai-compatible/bench",
  OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
};

interface Timing {
  readonly exitMs: number;
  readonly firstRequestMs?: number;
}

function once(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Timing> {
  firstRequestAt = 0;
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const exitMs = performance.now() - t0;
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${stderr}`));
      else resolve({ exitMs, ...(firstRequestAt ? { firstRequestMs: firstRequestAt - t0 } : {}) });
    });
  });
}

async function measure(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Timing[]> {
  await once(args, env); // warm-up (fills the compile cache, creates the database)
  const out: Timing[] = [];
  for (let i = 0; i < RUNS; i++) out.push(await once(args, env));
  return out;
}

const noCache = { ...baseEnv, NODE_DISABLE_COMPILE_CACHE: "1" };
const cases: { name: string; args: readonly string[]; env: NodeJS.ProcessEnv; metric: "exit" | "request" }[] =
  [
    { name: "node -e 0 (floor)", args: ["-e", "0"], env: baseEnv, metric: "exit" },
    { name: "node trivial.ts (type-stripping floor)", args: [trivialTs], env: baseEnv, metric: "exit" },
    { name: "lash --version", args: [MAIN, "--version"], env: baseEnv, metric: "exit" },
    { name: "lash --version, no compile cache", args: [MAIN, "--version"], env: noCache, metric: "exit" },
    {
      name: "lash -p: spawn → first model request",
      args: [MAIN, "-p", "hi"],
      env: baseEnv,
      metric: "request",
    },
    { name: "lash -p: spawn → exit", args: [MAIN, "-p", "hi"], env: baseEnv, metric: "exit" },
    {
      name: "lash -p: spawn → first model request, no compile cache",
      args: [MAIN, "-p", "hi"],
      env: noCache,
      metric: "request",
    },
  ];

const results: { name: string; medianMs: number; p90Ms: number; runs: number }[] = [];
try {
  for (const c of cases) {
    const timings = await measure(c.args, c.env);
    const xs = timings.map((t) => (c.metric === "exit" ? t.exitMs : (t.firstRequestMs ?? Number.NaN)));
    results.push({ name: c.name, medianMs: median(xs), p90Ms: percentile(xs, 90), runs: xs.length });
    process.stdout.write(`${c.name}: ${median(xs).toFixed(0)} ms\n`);
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

report({
  name: "cli",
  title: "CLI startup (`lash --version`, `lash -p` to first model request)",
  table: markdownTable(
    ["what", "median ms", "p90 ms", "runs"],
    results.map((r) => [r.name, r.medianMs.toFixed(0), r.p90Ms.toFixed(0), r.runs]),
  ),
  results,
  notes: [
    "Spawned with the same Node as the benchmark; first-request time is taken at the mock wire server when the request arrives. `lash -p` opens (and on the warm-up run creates) `$LASH_HOME/lash.db`.",
  ],
});
