// pnpm bench:tasks --suite <name> (--sample | --data <path>) [--model mock:<script> | provider/model]
//   [--judge-model provider/model] [--mode standard|rlm] [--parallel N] [--limit N]
//   [--run-dir DIR] [--stop-after N] [--<suite option> value …]
//
// Drives lash as a library over a task suite and writes a run directory
// (default bench/tasks/runs/<suite>-<timestamp>): per-task result files,
// report.json, report.html and the suite's official output file. Running
// again with the same --run-dir resumes: finished tasks are skipped.
import { join } from "node:path";
import { runSuite } from "./lib/runner.ts";
import { suites } from "./suites/index.ts";

const USAGE = `usage: pnpm bench:tasks --suite <${Object.keys(suites).join("|")}> (--sample | --data <path>)
  [--model mock:<script> | provider/model]   default mock:oracle with --sample
  [--judge-model provider/model]             default: the --model
  [--mode standard|rlm] [--parallel N] [--limit N] [--run-dir DIR] [--stop-after N]
  suite options: --repos DIR (swebench), --difficulty/--domain/--scoring exact|judge (longcot),
                 --type <question_type> (longmemeval), --baseline true (clbench)`;

function parse(argv: readonly string[]): { flags: Record<string, string>; bools: Set<string> } {
  const flags: Record<string, string> = {};
  const bools = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) throw new Error(`unexpected argument ${a}\n${USAGE}`);
    const name = a.slice(2);
    const value = argv[i + 1];
    if (name === "sample" || name === "help" || value === undefined || value.startsWith("--"))
      bools.add(name);
    else {
      flags[name] = value;
      i++;
    }
  }
  return { flags, bools };
}

async function main(): Promise<number> {
  const { flags, bools } = parse(process.argv.slice(2));
  if (bools.has("help") || !flags.suite) {
    process.stdout.write(`${USAGE}\n`);
    return bools.has("help") ? 0 : 2;
  }
  const suite = suites[flags.suite];
  if (!suite) throw new Error(`unknown suite ${flags.suite} (known: ${Object.keys(suites).join(", ")})`);
  const sample = bools.has("sample");
  const model = flags.model ?? (sample ? "mock:oracle" : undefined);
  if (!model) throw new Error("--model is required with --data (e.g. --model anthropic/claude-sonnet-4-5)");
  const mode = flags.mode ?? "standard";
  if (mode !== "standard" && mode !== "rlm") throw new Error(`--mode must be standard or rlm, got ${mode}`);
  const known = new Set([
    "suite",
    "model",
    "judge-model",
    "mode",
    "parallel",
    "limit",
    "run-dir",
    "stop-after",
    "data",
  ]);
  const options = Object.fromEntries(Object.entries(flags).filter(([k]) => !known.has(k)));
  const runDir =
    flags["run-dir"] ??
    join(import.meta.dirname, "runs", `${suite.name}-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  const outcome = await runSuite({
    suite,
    model,
    ...(flags["judge-model"] ? { judgeModel: flags["judge-model"] } : {}),
    mode,
    sample,
    ...(flags.data ? { data: flags.data } : {}),
    ...(flags.limit ? { limit: Number(flags.limit) } : {}),
    parallel: Number(flags.parallel ?? 1),
    runDir,
    options,
    ...(flags["stop-after"] ? { stopAfter: Number(flags["stop-after"]), onStop: "exit" as const } : {}),
  });
  const done = outcome.results.filter((r) => r.status === "done");
  const graded = done.filter((r) => typeof r.score === "number");
  const mean = graded.length ? graded.reduce((s, r) => s + (r.score ?? 0), 0) / graded.length : undefined;
  process.stdout.write(
    `\n${suite.title}: ${done.length}/${outcome.results.length} done (${outcome.skipped.length} resumed), ` +
      `${mean === undefined ? "not graded here" : `mean score ${(mean * 100).toFixed(1)} %`}\n` +
      `run directory: ${outcome.runDir}\n${outcome.artifacts.map((a) => `  ${a}`).join("\n")}\n`,
  );
  return outcome.results.some((r) => r.status === "error") ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench:tasks: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  },
);
