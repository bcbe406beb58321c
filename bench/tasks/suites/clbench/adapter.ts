// CLBench (continual-learning-bench, github.com/pgasawa/continual-learning-bench):
// sequences of task instances where a system should get better from feedback.
// The official framework drives a system through respond(query) → task.step →
// observe(observation, next_query), calls reset() at the start of a run (and
// between instances for the stateless baseline), and scores mean reward;
// the headline metric is the gain of the stateful run over the stateless one.
//
// Here a sequence is one task: ONE lash session is kept across its instances
// (the system's memory is the session); observe() feeds the observation into
// the next turn; reset() opens a new session. Queries use the official Query
// fields (prompt, response_schema as JSON Schema, instance_id, instance_index)
// and the TaskAgentBrief is shown on the first turn, formatted like
// format_task_agent_brief. The bundled samples are static sequences in that
// shape (reward 1 for an exact answer). Live CLBench tasks are Python
// environments: running them needs a ContinualLearningSystem in the official
// framework that forwards respond/observe/reset to this loop — not built yet.
import { join } from "node:path";
import type { MockReply, RecordedRequest } from "@lash/providers/testing";
import type { Agent, MockScript, SuiteAdapter, Task, TaskContext } from "../../lib/types.ts";
import {
  isRlmRequest,
  lashCell,
  lashLiteral,
  lastJsonObject,
  lastUserText,
  readJsonOrJsonl,
  requestText,
} from "../../lib/util.ts";

export interface JsonSchema {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly description?: string;
}

export interface ClBrief {
  readonly objective: string;
  readonly instance_unit: string;
  readonly reward_definition: string;
  readonly completion_definition: string;
  readonly constraints?: readonly string[];
}

export interface ClInstance {
  readonly instance_id: string;
  readonly instance_index: number;
  readonly prompt: string;
  readonly response_schema?: JsonSchema;
  readonly answer: Readonly<Record<string, unknown>>;
  readonly feedback_correct?: string;
  readonly feedback_incorrect?: string;
}

export interface ClSequence {
  readonly task: string;
  readonly schedule?: string;
  readonly brief?: ClBrief;
  readonly response_schema: JsonSchema;
  readonly instances: readonly ClInstance[];
}

/** format_task_agent_brief of the official interface. */
export function formatBrief(b: ClBrief): string {
  return [
    "=== Brief ===",
    `Objective: ${b.objective}`,
    `Task Unit: ${b.instance_unit}`,
    `Reward: ${b.reward_definition}`,
    `Completion: ${b.completion_definition}`,
    ...(b.constraints?.length ? ["Constraints:", ...b.constraints.map((c) => `- ${c}`)] : []),
    "=======================",
  ].join("\n");
}

const typeOk = (v: unknown, t: string | undefined): boolean =>
  t === undefined ||
  (t === "number"
    ? typeof v === "number"
    : t === "integer"
      ? Number.isInteger(v)
      : t === "array"
        ? Array.isArray(v)
        : t === "object"
          ? typeof v === "object" && v !== null && !Array.isArray(v)
          : typeof v === t);

/** The response as an action: the last JSON object, checked against the schema's required keys and types. */
export function parseAction(
  text: string,
  schema: JsonSchema,
): { action?: Record<string, unknown>; error?: string } {
  const v = lastJsonObject(text);
  if (!v || typeof v !== "object" || Array.isArray(v)) return { error: "no JSON object in the response" };
  const action = v as Record<string, unknown>;
  for (const key of schema.required ?? []) if (!(key in action)) return { error: `missing "${key}"` };
  for (const [key, s] of Object.entries(schema.properties ?? {}))
    if (key in action && !typeOk(action[key], s.type)) return { error: `"${key}" is not ${s.type}` };
  return { action };
}

function reward(
  action: Record<string, unknown> | undefined,
  answer: Readonly<Record<string, unknown>>,
): number {
  if (!action) return 0;
  return Object.entries(answer).every(([k, v]) =>
    typeof v === "number"
      ? typeof action[k] === "number" && Math.abs((action[k] as number) - v) < 1e-6
      : JSON.stringify(action[k]) === JSON.stringify(v),
  )
    ? 1
    : 0;
}

function queryText(seq: ClSequence, inst: ClInstance, first: boolean, feedback: string | undefined): string {
  const schema = inst.response_schema ?? seq.response_schema;
  return [
    ...(first && seq.brief ? [formatBrief(seq.brief), ""] : []),
    ...(feedback ? [`Feedback on your previous answer: ${feedback}`, ""] : []),
    `Instance ${inst.instance_index} (${inst.instance_id}):`,
    inst.prompt,
    "",
    `Respond with one JSON object matching this JSON Schema, and nothing after it:\n${JSON.stringify(schema)}`,
  ].join("\n");
}

interface InstanceOutcome {
  readonly instance_id: string;
  readonly instance_index: number;
  readonly reward: number;
  readonly response: string;
  readonly error?: string;
}

/** Run the sequence: stateful (one session) or stateless baseline (reset before every instance). */
async function play(ctx: TaskContext, seq: ClSequence, stateless: boolean): Promise<InstanceOutcome[]> {
  const out: InstanceOutcome[] = [];
  let agent: Agent | undefined;
  let feedback: string | undefined;
  for (const [i, inst] of seq.instances.entries()) {
    if (!agent || stateless) {
      agent = await ctx.newAgent({ title: `${seq.task} ${stateless ? "baseline" : "stateful"}` }); // reset()
      feedback = undefined;
    }
    const first = stateless || i === 0;
    const { text } = await agent.turn(queryText(seq, inst, first, feedback)); // respond(query)
    const { action, error } = parseAction(text, inst.response_schema ?? seq.response_schema);
    const r = reward(action, inst.answer);
    out.push({
      instance_id: inst.instance_id,
      instance_index: inst.instance_index,
      reward: r,
      response: text,
      ...(error ? { error } : {}),
    });
    // observe(observation): the task's feedback goes into the next turn.
    feedback =
      r === 1
        ? (inst.feedback_correct ?? "Correct.")
        : `${error ? `Invalid response (${error}). ` : ""}${inst.feedback_incorrect ?? `Incorrect: expected ${JSON.stringify(inst.answer)}.`}`;
  }
  return out;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const sequenceOf = (t: Task) => t.data as ClSequence;

const mockScripts: Record<string, MockScript> = {
  // A learner: answers right only once the session already holds feedback
  // from an earlier instance of the same sequence; otherwise a wrong guess.
  learner:
    (tasks) =>
    (req: RecordedRequest): MockReply => {
      const all = requestText(req);
      const last = lastUserText(req);
      const usage = { input: Math.ceil(all.length / 4), output: 10 };
      for (const seq of tasks.map(sequenceOf)) {
        const idx = seq.instances.findIndex((x) => last.includes(`(${x.instance_id}):`));
        if (idx < 0) continue;
        const inst = seq.instances[idx]!;
        const learned = seq.instances
          .slice(0, idx)
          .some((x) => x.feedback_incorrect && all.includes(x.feedback_incorrect));
        const [key] = Object.keys(inst.answer);
        const value = learned ? inst.answer[key ?? ""] : 1;
        const answer = { [key ?? "answer"]: value };
        // RLM: the answer is the cell's finish value (the turn's final value, as JSON)
        if (isRlmRequest(req))
          return { text: lashCell(`answer = ${lashLiteral(answer)}\nfinish answer`), usage };
        return { text: `My answer: ${JSON.stringify(answer)}`, usage };
      }
      return { text: "{}", usage };
    },
};
mockScripts.oracle = mockScripts.learner!;

export const clBench: SuiteAdapter = {
  name: "clbench",
  title: "CLBench (continual learning)",
  scoring:
    "Per sequence: mean reward of the stateful run (one lash session across instances); with --baseline (default true) also the stateless run (a new session per instance) and the gain = stateful − stateless, CLBench's headline metric. Live CLBench tasks (Python environments) need a bridge system in the official framework, which is not built yet: --data takes static sequences in the sample's shape.",
  async load({ sample, data, limit }) {
    const path = sample ? join(import.meta.dirname, "sample.json") : data;
    if (!path)
      throw new Error(
        "clbench: pass --sample or --data <sequences.json> (static sequences in the sample's shape; live CLBench tasks need a Python bridge that is not built yet)",
      );
    let seqs = readJsonOrJsonl(path) as ClSequence[];
    if (limit) seqs = seqs.slice(0, limit);
    return seqs.map((s) => ({ id: s.task, data: s }));
  },
  async run(ctx) {
    const seq = sequenceOf(ctx.task);
    const stateful = await play(ctx, seq, false);
    const baseline = (ctx.options.baseline ?? "true") !== "false" ? await play(ctx, seq, true) : undefined;
    const score = mean(stateful.map((o) => o.reward));
    const base = baseline ? mean(baseline.map((o) => o.reward)) : undefined;
    return {
      score,
      correct: score === 1,
      answer: stateful.map((o) => `${o.instance_id}: ${o.reward}`).join(", "),
      details: {
        instances: seq.instances.length,
        stateful,
        ...(baseline ? { baseline, baselineScore: base, gain: score - (base ?? 0) } : {}),
        loss_curve: stateful.map((o) => 1 - o.reward),
      },
    };
  },
  mockScripts,
  summarize(run): Record<string, number> {
    const gains = run.results
      .map((r) => (r.details as { gain?: number } | undefined)?.gain)
      .filter((g): g is number => typeof g === "number");
    return gains.length ? { "mean gain (stateful − stateless)": Number(mean(gains).toFixed(4)) } : {};
  },
};
