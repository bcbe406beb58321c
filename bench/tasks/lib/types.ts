// The contract between the task runner and a suite adapter.
import type { Plugin } from "@lash/core";
import type { MockReply, RecordedRequest } from "@lash/providers/testing";
import type { Usage } from "@lash/sansio";

export type Mode = "standard" | "rlm";

/** One unit of work: its result file is what makes a run resumable. */
export interface Task {
  readonly id: string;
  /** The suite's record, in the suite's official format. */
  readonly data: unknown;
}

export interface LoadOptions {
  /** Use the suite's bundled sample tasks. */
  readonly sample: boolean;
  /** A user-supplied data set (file or directory, in the suite's official format). */
  readonly data?: string;
  readonly limit?: number;
  /** Suite-specific options (`--repos`, `--difficulty`, …). */
  readonly options: Readonly<Record<string, string>>;
}

export interface AgentTurn {
  readonly text: string;
  readonly usage: Usage;
  readonly costUsd?: number;
  readonly toolCalls: number;
  /** `finished`, `stopped`, … (the kernel's TurnOutcome type). */
  readonly outcome: string;
}

/** A lash session driven by a task (one per task unless the suite keeps one across instances). */
export interface Agent {
  readonly sessionId: string;
  turn(text: string): Promise<AgentTurn>;
}

export interface AgentOptions {
  readonly systemPrompt?: string;
  readonly plugins?: readonly Plugin[];
  readonly title?: string;
}

export interface TaskContext {
  readonly task: Task;
  /** An empty directory of this task's own (the session's cwd). */
  readonly workspace: string;
  readonly runDir: string;
  /** `provider/model` the agent runs on. */
  readonly model: string;
  readonly mode: Mode;
  readonly options: Readonly<Record<string, string>>;
  /** A new lash session on the run's runtime; its usage is added to this task's ledger. */
  newAgent(options?: AgentOptions): Promise<Agent>;
  /** One judge call (a tool-less lash session on the judge model); usage kept apart. */
  judge(prompt: string): Promise<string>;
}

export interface TaskScore {
  /** 0..1, or null when this run cannot grade the task (e.g. SWE-bench without the official grader). */
  readonly score: number | null;
  readonly correct: boolean | null;
  /** What the agent produced (final text, patch …). */
  readonly answer: string;
  readonly expected?: unknown;
  readonly details?: unknown;
}

export interface TaskResult extends Partial<TaskScore> {
  readonly id: string;
  readonly status: "done" | "error";
  readonly error?: string;
  readonly sessionIds: readonly string[];
  readonly usage: { readonly agent: Usage; readonly judge: Usage };
  /** USD; absent when the model's price is unknown (mock models, unknown models). */
  readonly costUsd: { readonly agent?: number; readonly judge?: number };
  readonly turns: number;
  readonly toolCalls: number;
  readonly durationMs: number;
  readonly startedAt: string;
  readonly finishedAt: string;
}

export interface RunManifest {
  readonly suite: string;
  readonly model: string;
  readonly judgeModel: string;
  readonly mode: Mode;
  readonly sample: boolean;
  readonly data?: string;
  readonly createdAt: string;
  readonly taskIds: readonly string[];
  readonly options: Readonly<Record<string, string>>;
}

export interface RunSummary {
  readonly runDir: string;
  readonly manifest: RunManifest;
  readonly tasks: readonly Task[];
  readonly results: readonly TaskResult[];
}

/** A scripted model for `--model mock:<script>`: a function of each request (Chat Completions body). */
export type MockScript = (tasks: readonly Task[]) => (request: RecordedRequest) => MockReply;

export interface SuiteAdapter {
  readonly name: string;
  readonly title: string;
  /** How this suite is scored here, and what needs the official grader or keys. */
  readonly scoring: string;
  load(options: LoadOptions): Promise<readonly Task[]>;
  run(ctx: TaskContext): Promise<TaskScore>;
  readonly mockScripts: Readonly<Record<string, MockScript>>;
  /** Suite artifacts in the official output format (predictions.jsonl …); returns their file names. */
  finalize?(run: RunSummary): Promise<readonly string[]>;
  /** One-line summary metrics beyond mean score (e.g. CLBench mean gain). */
  summarize?(run: RunSummary): Readonly<Record<string, number | string>>;
}
