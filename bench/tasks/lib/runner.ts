// The task runner: drives lash as a library over a suite's tasks.
//   - one run directory: run.json (manifest), tasks/<id>.json (one result file
//     per finished task, written atomically), workspaces/<id>/ (each task's own
//     directory), sessions.db (every session of the run, SqliteStore),
//     report.json + report.html, and the suite's official output files;
//   - a session per task (CLBench keeps one across a sequence's instances);
//   - parallelism (tasks in flight at once, one runtime);
//   - resume: running again on the same run directory skips tasks whose
//     result file says "done" (errored tasks run again);
//   - token and cost accounting per task (agent and judge apart).
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { createLash, type Lash, type LashOptions, SqliteStore } from "@lash/core";
import type { MockLlmServer } from "@lash/providers/testing";
import type { Usage } from "@lash/sansio";
import { resolveModels } from "./model.ts";
import { writeReport } from "./report.ts";
import type {
  Agent,
  AgentOptions,
  Mode,
  RunManifest,
  SuiteAdapter,
  Task,
  TaskContext,
  TaskResult,
} from "./types.ts";
import { addCost, addUsage, fileExists, readJson, safeName, writeAtomic, zeroUsage } from "./util.ts";

export interface RunOptions {
  readonly suite: SuiteAdapter;
  readonly model: string;
  readonly judgeModel?: string;
  readonly mode?: Mode;
  readonly sample?: boolean;
  readonly data?: string;
  readonly limit?: number;
  readonly parallel?: number;
  /** The run directory; reusing one resumes it. */
  readonly runDir: string;
  readonly options?: Readonly<Record<string, string>>;
  /** Stop after this many tasks finished in this invocation (simulates an interruption). */
  readonly stopAfter?: number;
  /** What stopping does: exit the process at once (CLI, like a kill) or return (tests). */
  readonly onStop?: "exit" | "return";
  /** A mock server to use for `mock:` models (tests inspect its requests). */
  readonly server?: MockLlmServer;
  readonly log?: (line: string) => void;
}

export interface RunOutcome {
  readonly runDir: string;
  readonly manifest: RunManifest;
  readonly results: readonly TaskResult[];
  /** Tasks skipped because a previous invocation finished them. */
  readonly skipped: readonly string[];
  /** Tasks run by this invocation. */
  readonly ran: readonly string[];
  readonly stopped: boolean;
  readonly artifacts: readonly string[];
}

/** Enable the RLM mode if this build of @lash/core has it (issue 8); a clear error otherwise. */
async function rlmOptions(base: LashOptions): Promise<LashOptions> {
  const core = (await import("@lash/core")) as unknown as Record<string, unknown>;
  const withRlm = core.withRlm;
  if (typeof withRlm !== "function")
    throw new Error(
      "--mode rlm: this build of @lash/core has no RLM mode (withRlm is not exported yet; it is built under issue 8). Run with --mode standard.",
    );
  return (withRlm as (o: LashOptions) => LashOptions)(base);
}

export async function runSuite(opts: RunOptions): Promise<RunOutcome> {
  const { suite } = opts;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const mode: Mode = opts.mode ?? "standard";
  const runDir = resolve(opts.runDir);
  const tasksDir = join(runDir, "tasks");
  mkdirSync(tasksDir, { recursive: true });
  const manifestPath = join(runDir, "run.json");
  const suiteOptions = opts.options ?? {};

  const tasks = await suite.load({
    sample: opts.sample ?? false,
    ...(opts.data ? { data: opts.data } : {}),
    ...(opts.limit ? { limit: opts.limit } : {}),
    options: suiteOptions,
  });
  if (tasks.length === 0) throw new Error(`suite ${suite.name}: no tasks loaded`);
  const ids = new Set<string>();
  for (const t of tasks) {
    if (ids.has(t.id)) throw new Error(`suite ${suite.name}: duplicate task id ${t.id}`);
    ids.add(t.id);
  }

  const models = await resolveModels({
    model: opts.model,
    ...(opts.judgeModel ? { judgeModel: opts.judgeModel } : {}),
    tasks,
    mockScripts: suite.mockScripts,
    ...(opts.server ? { server: opts.server } : {}),
  });

  let manifest: RunManifest;
  if (fileExists(manifestPath)) {
    manifest = readJson<RunManifest>(manifestPath);
    const mismatch = [
      ...(manifest.suite !== suite.name ? ["suite"] : []),
      ...(manifest.mode !== mode ? ["mode"] : []),
      ...(manifest.model !== models.model ? ["model"] : []),
    ];
    if (mismatch.length > 0)
      throw new Error(
        `${runDir} holds a run of ${manifest.suite} / ${manifest.model} / ${manifest.mode}; this invocation differs in ${mismatch.join(", ")} — use another --run-dir`,
      );
  } else {
    manifest = {
      suite: suite.name,
      model: models.model,
      judgeModel: models.judgeModel,
      mode,
      sample: opts.sample ?? false,
      ...(opts.data ? { data: resolve(opts.data) } : {}),
      createdAt: new Date().toISOString(),
      taskIds: tasks.map((t) => t.id),
      options: suiteOptions,
    };
    writeAtomic(manifestPath, JSON.stringify(manifest, null, 2));
  }

  const resultPath = (t: Task) => join(tasksDir, `${safeName(t.id)}.json`);
  const finished = (t: Task): boolean =>
    fileExists(resultPath(t)) && readJson<TaskResult>(resultPath(t)).status === "done";
  const skipped = tasks.filter(finished).map((t) => t.id);
  const pending = tasks.filter((t) => !finished(t));
  if (skipped.length > 0) log(`resuming ${runDir}: ${skipped.length} finished task(s) skipped`);

  const base: LashOptions = {
    store: SqliteStore.layer({ filename: join(runDir, "sessions.db") }),
    provider: models.provider,
    catalog: models.catalog,
    journal: true,
  };
  let lash: Lash | undefined;
  const ran: string[] = [];
  let stopped = false;
  try {
    lash = createLash(mode === "rlm" ? await rlmOptions(base) : base);
    const runtime = lash;

    const runTask = async (task: Task): Promise<TaskResult> => {
      const startedAt = new Date();
      const workspace = join(runDir, "workspaces", safeName(task.id));
      rmSync(workspace, { recursive: true, force: true }); // a fresh attempt starts clean
      mkdirSync(workspace, { recursive: true });
      let agentUsage: Usage = zeroUsage;
      let judgeUsage: Usage = zeroUsage;
      let agentCost: number | undefined;
      let judgeCost: number | undefined;
      let turns = 0;
      let toolCalls = 0;
      const sessionIds: string[] = [];
      const open = async (model: string, sessionMode: Mode, o: AgentOptions, charge: "agent" | "judge") => {
        const session = await runtime.createSession({
          model,
          mode: sessionMode,
          cwd: workspace,
          title: o.title ?? `${suite.name} ${task.id}`,
          ...(o.systemPrompt ? { systemPrompt: o.systemPrompt } : {}),
          ...(o.plugins ? { plugins: o.plugins } : {}),
        });
        sessionIds.push(session.id);
        const agent: Agent = {
          sessionId: session.id,
          async turn(text) {
            const r = await session.turn(text).result;
            const finalText =
              r.text ||
              (r.finalValue === undefined
                ? ""
                : typeof r.finalValue === "string"
                  ? r.finalValue
                  : JSON.stringify(r.finalValue));
            if (charge === "agent") {
              agentUsage = addUsage(agentUsage, r.usage);
              agentCost = addCost(agentCost, r.costUsd);
              turns++;
              toolCalls += r.toolCalls;
            } else {
              judgeUsage = addUsage(judgeUsage, r.usage);
              judgeCost = addCost(judgeCost, r.costUsd);
            }
            return {
              text: finalText,
              usage: r.usage,
              ...(r.costUsd !== undefined ? { costUsd: r.costUsd } : {}),
              toolCalls: r.toolCalls,
              outcome: r.outcome.type,
            };
          },
        };
        return agent;
      };
      const ctx: TaskContext = {
        task,
        workspace,
        runDir,
        model: models.model,
        mode,
        options: suiteOptions,
        newAgent: (o = {}) => open(models.model, mode, o, "agent"),
        judge: async (prompt) =>
          (
            await (
              await open(models.judgeModel, "standard", { title: `judge ${task.id}` }, "judge")
            ).turn(prompt)
          ).text,
      };
      const common = () => ({
        id: task.id,
        sessionIds,
        usage: { agent: agentUsage, judge: judgeUsage },
        costUsd: {
          ...(agentCost !== undefined ? { agent: agentCost } : {}),
          ...(judgeCost !== undefined ? { judge: judgeCost } : {}),
        },
        turns,
        toolCalls,
        durationMs: Date.now() - startedAt.getTime(),
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
      });
      try {
        const score = await suite.run(ctx);
        return { ...common(), status: "done", ...score };
      } catch (e) {
        return { ...common(), status: "error", error: e instanceof Error ? e.message : String(e) };
      }
    };

    const parallel = Math.max(1, opts.parallel ?? 1);
    let next = 0;
    let done = 0;
    const lane = async () => {
      while (!stopped && next < pending.length) {
        const task = pending[next++]!;
        const result = await runTask(task);
        if (stopped) return; // interrupted meanwhile: this result is lost, as after a kill
        writeAtomic(resultPath(task), JSON.stringify(result, null, 2));
        ran.push(task.id);
        done++;
        const score =
          result.status === "done"
            ? result.score === null
              ? "not graded"
              : `score ${result.score}`
            : `error: ${result.error}`;
        log(`[${skipped.length + done}/${tasks.length}] ${task.id}: ${score}`);
        if (opts.stopAfter !== undefined && done >= opts.stopAfter) {
          stopped = true;
          if ((opts.onStop ?? "exit") === "exit") {
            log(`stopping after ${done} task(s) (--stop-after): resume with the same --run-dir`);
            process.exit(3);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, Math.max(1, pending.length)) }, lane));
  } finally {
    await lash?.close();
    await models.close();
  }

  const results = tasks
    .filter((t) => fileExists(resultPath(t)))
    .map((t) => readJson<TaskResult>(resultPath(t)));
  const summary = { runDir, manifest, tasks, results };
  const artifacts = stopped
    ? []
    : [...((await suite.finalize?.(summary)) ?? []), ...writeReport(suite, summary)];
  return { runDir, manifest, results, skipped, ran, stopped, artifacts };
}

/** Result files present in a run directory (for tests and tools). */
export function resultFiles(runDir: string): string[] {
  const dir = join(runDir, "tasks");
  return fileExists(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
}
