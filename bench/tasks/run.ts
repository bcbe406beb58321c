// pnpm bench:tasks [--suite <name>[,<name>…]|all] (--sample | --data <path>) [--model mock:<script> | provider/model]
//   [--judge-model provider/model] [--mode standard|rlm|both] [--parallel N] [--limit N]
//   [--run-dir DIR] [--stop-after N] [--<suite option> value …]
//
// Drives lash as a library over a task suite and writes a run directory
// (default bench/tasks/runs/<suite>-<timestamp>): per-task result files,
// report.json, report.html and the suite's official output file. Running
// again with the same --run-dir resumes: finished tasks are skipped.
// Several suites or both modes: one run directory per suite and mode under the
// --run-dir, and modes.md / modes.json there with the modes side by side.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ModeRun, type ReportSummary, writeModesReport } from "./lib/report.ts";
import { runSuite } from "./lib/runner.ts";
import type { Mode } from "./lib/types.ts";
import { suites } from "./suites/index.ts";

const USAGE = `usage: pnpm bench:tasks [--suite <${Object.keys(suites).join("|")}>[,…] | all] (--sample | --data <path>)
  --suite                                    default all with --sample (every suite has a bundled sample)
  [--model mock:<script> | provider/model]   default mock:oracle with --sample
  [--judge-model provider/model]             default: the --model
  [--mode standard|rlm|both]                 both: each suite in both modes, modes.md side by side
  [--parallel N] [--limit N] [--run-dir DIR] [--stop-after N]
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
  const sample = bools.has("sample");
  if (bools.has("help") || (!flags.suite && !sample)) {
    process.stdout.write(`${USAGE}\n`);
    return bools.has("help") ? 0 : 2;
  }
  // --suite a,b or all (the default with --sample: every suite has a bundled sample)
  const names = !flags.suite || flags.suite === "all" ? Object.keys(suites) : flags.suite.split(",");
  const chosen = names.map((n) => {
    const suite = suites[n];
    if (!suite) throw new Error(`unknown suite ${n} (known: ${Object.keys(suites).join(", ")}, or all)`);
    return suite;
  });
  const model = flags.model ?? (sample ? "mock:oracle" : undefined);
  if (!model) throw new Error("--model is required with --data (e.g. --model anthropic/claude-sonnet-4-5)");
  const modeFlag = flags.mode ?? "standard";
  if (modeFlag !== "standard" && modeFlag !== "rlm" && modeFlag !== "both")
    throw new Error(`--mode must be standard, rlm or both, got ${modeFlag}`);
  const modes: Mode[] = modeFlag === "both" ? ["standard", "rlm"] : [modeFlag];
  if (flags.data && chosen.length > 1)
    throw new Error("--data names one suite's file: pass --suite <name> with it");
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
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const single = chosen.length === 1 && modes.length === 1;
  const root =
    flags["run-dir"] ??
    join(import.meta.dirname, "runs", single ? `${chosen[0]!.name}-${stamp}` : `suites-${modeFlag}-${stamp}`);
  const runs: ModeRun[] = [];
  let failed = false;
  for (const suite of chosen)
    for (const mode of modes) {
      const runDir = single ? root : join(root, `${suite.name}-${mode}`);
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
      const summary = (
        JSON.parse(readFileSync(join(outcome.runDir, "report.json"), "utf8")) as { summary: ReportSummary }
      ).summary;
      process.stdout.write(
        `\n${suite.title} (${mode}): ${done.length}/${outcome.results.length} done (${outcome.skipped.length} resumed), ` +
          `${summary.meanScore === null ? "not graded here" : `mean score ${(summary.meanScore * 100).toFixed(1)} %`}\n` +
          `run directory: ${outcome.runDir}\n${outcome.artifacts.map((a) => `  ${a}`).join("\n")}\n`,
      );
      runs.push({
        suite,
        mode,
        runDir: outcome.runDir,
        summary,
        toolCalls: outcome.results.reduce((n, r) => n + (r.toolCalls ?? 0), 0),
      });
      failed ||= outcome.results.some((r) => r.status === "error");
    }
  if (!single) {
    const files = writeModesReport(root, runs);
    process.stdout.write(
      `\n${readFileSync(join(root, "modes.md"), "utf8")}\n${files.map((f) => `  ${join(root, f)}`).join("\n")}\n`,
    );
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench:tasks: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  },
);
