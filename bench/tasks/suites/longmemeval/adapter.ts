// LongMemEval (Wu et al., ICLR 2025; github.com/xiaowu0162/LongMemEval): questions
// over timestamped chat-history haystacks. Data: the official JSON files
// (longmemeval_s.json, longmemeval_m.json, longmemeval_oracle.json — a list of
// instances with question_id, question_type, question, answer, question_date,
// haystack_session_ids, haystack_dates, haystack_sessions, answer_session_ids).
//
// Reading: the official long-context baseline prompt (run_generation.py with
// the full history, session granularity, JSON history format, no CoT).
// Scoring: the official LLM judge prompts of src/evaluation/evaluate_qa.py
// (get_anscheck_prompt, one per question type and for abstention), label = "yes"
// in the judge's answer. Output: hypotheses.jsonl ({question_id, hypothesis}),
// the input of the official evaluate_qa.py.
import { join } from "node:path";
import type { MockReply, RecordedRequest } from "@lash/providers/testing";
import type { MockScript, SuiteAdapter, Task } from "../../lib/types.ts";
import {
  isRlmRequest,
  lashCell,
  lashLiteral,
  readJsonOrJsonl,
  requestText,
  writeAtomic,
} from "../../lib/util.ts";

export interface LongMemEvalTurn {
  readonly role: "user" | "assistant";
  readonly content: string;
  readonly has_answer?: boolean;
}

export interface LongMemEvalInstance {
  readonly question_id: string;
  readonly question_type: string;
  readonly question: string;
  readonly answer: string;
  readonly question_date: string;
  readonly haystack_session_ids: readonly string[];
  readonly haystack_dates: readonly string[];
  readonly haystack_sessions: readonly (readonly LongMemEvalTurn[])[];
  readonly answer_session_ids?: readonly string[];
}

// The answer prompt of run_generation.py (retriever "orig-session", no CoT), verbatim.
const ANSWER_TEMPLATE =
  "I will give you several history chats between you and a user. Please answer the question based on the relevant chat history.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\nQuestion: {}\nAnswer:";

/** The official reading prompt: sessions sorted by date, each as JSON, has_answer removed. */
export function answerPrompt(q: LongMemEvalInstance): string {
  const sessions = q.haystack_sessions
    .map((s, i) => ({
      date: q.haystack_dates[i] ?? "",
      turns: s.map(({ role, content }) => ({ role, content })),
    }))
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  const history = sessions
    .map(
      (s, i) =>
        `\n### Session ${i + 1}:\nSession Date: ${s.date}\nSession Content:\n${`\n${pyJsonDumps(s.turns)}`}\n`,
    )
    .join("");
  return fill(ANSWER_TEMPLATE, [history, q.question_date, q.question]);
}

/** Python's json.dumps with its defaults (", " and ": " separators, ensure_ascii). */
export function pyJsonDumps(v: unknown): string {
  if (typeof v === "string")
    return JSON.stringify(v).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(", ")}]`;
  if (v && typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyJsonDumps(k)}: ${pyJsonDumps(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v);
}

function fill(template: string, values: readonly string[]): string {
  let i = 0;
  return template.replace(/\{\}/g, () => values[i++] ?? "");
}

/** The official judge prompt (evaluate_qa.py get_anscheck_prompt), verbatim. */
export function judgePrompt(
  task: string,
  question: string,
  answer: string,
  response: string,
  abstention: boolean,
): string {
  const judge = "Is the model response correct? Answer yes or no only.";
  const head =
    "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the response only contains a subset of the information required by the answer, answer no.";
  let template: string;
  if (abstention) {
    template =
      "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes if the model correctly identifies the question as unanswerable. The model could say that the information is incomplete, or some other information is given but the asked information is not.\n\nQuestion: {}\n\nExplanation: {}\n\nModel Response: {}\n\nDoes the model correctly identify the question as unanswerable? Answer yes or no only.";
  } else if (
    task === "single-session-user" ||
    task === "single-session-assistant" ||
    task === "multi-session"
  ) {
    template = `${head} \n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\n${judge}`;
  } else if (task === "temporal-reasoning") {
    template = `${head} In addition, do not penalize off-by-one errors for the number of days. If the question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when the answer is 18), the model's response is still correct. \n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\n${judge}`;
  } else if (task === "knowledge-update") {
    template =
      "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response contains some previous information along with an updated answer, the response should be considered as correct as long as the updated answer is the required answer.\n\nQuestion: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\n" +
      judge;
  } else if (task === "single-session-preference") {
    template =
      "I will give you a question, a rubric for desired personalized response, and a response from a model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does not need to reflect all the points in the rubric. The response is correct as long as it recalls and utilizes the user's personal information correctly.\n\nQuestion: {}\n\nRubric: {}\n\nModel Response: {}\n\n" +
      judge;
  } else throw new Error(`LongMemEval: unknown question_type ${task}`);
  return fill(template, [question, answer, response]);
}

const instanceOf = (t: Task) => t.data as LongMemEvalInstance;

/** Scripted models for offline runs. */
const mockScripts: Record<string, MockScript> = {
  // Answers from the haystack: for the question in the prompt, the answer is
  // given only when the evidence turn is really in the history it was sent.
  oracle:
    (tasks) =>
    (req: RecordedRequest): MockReply => {
      const text = requestText(req);
      const q = tasks.map(instanceOf).find((i) => text.includes(`Question: ${i.question}\nAnswer:`));
      if (!q) return { text: "I don't know.", usage: { input: Math.ceil(text.length / 4), output: 3 } };
      const evidence = q.haystack_sessions.flat().filter((t) => t.has_answer);
      const found =
        evidence.length > 0 && evidence.every((t) => text.includes(pyJsonDumps(t.content).slice(1, -1)));
      const reply =
        q.question_id.endsWith("_abs") || !found
          ? "I don't know: that was never mentioned in our chats."
          : `Based on our chats, the answer is ${q.answer}.`;
      const usage = { input: Math.ceil(text.length / 4), output: 12 };
      // RLM: the answer is the cell's finish value
      if (isRlmRequest(req)) return { text: lashCell(`finish ${lashLiteral(reply)}`), usage };
      return { text: reply, usage };
    },
  // Always declines: the judge must mark every answerable question wrong.
  decline: () => (req) => ({
    text: "I don't know.",
    usage: { input: Math.ceil(requestText(req).length / 4), output: 3 },
  }),
};

export const longMemEval: SuiteAdapter = {
  name: "longmemeval",
  title: "LongMemEval",
  scoring:
    "Accuracy by the official LLM judge prompt (evaluate_qa.py; the paper's judge is gpt-4o — pass --judge-model openai/gpt-4o). Offline (--model mock:…) the judge is a scripted containment check, so sample scores only prove the pipeline. hypotheses.jsonl is the input of the official evaluate_qa.py.",
  async load({ sample, data, limit, options }) {
    const path = sample ? join(import.meta.dirname, "sample.json") : data;
    if (!path)
      throw new Error("longmemeval: pass --sample or --data <longmemeval_s.json|longmemeval_oracle.json|…>");
    let items = readJsonOrJsonl(path) as LongMemEvalInstance[];
    if (options.type) items = items.filter((i) => i.question_type === options.type);
    if (limit) items = items.slice(0, limit);
    return items.map((i) => ({ id: i.question_id, data: i }));
  },
  async run(ctx) {
    const q = instanceOf(ctx.task);
    const agent = await ctx.newAgent();
    const { text } = await agent.turn(answerPrompt(q));
    const abstention = q.question_id.includes("_abs");
    const verdict = await ctx.judge(judgePrompt(q.question_type, q.question, q.answer, text, abstention));
    const correct = verdict.toLowerCase().includes("yes");
    return {
      score: correct ? 1 : 0,
      correct,
      answer: text,
      expected: q.answer,
      details: { question_type: q.question_type, abstention, judge: verdict },
    };
  },
  mockScripts,
  async finalize(run) {
    const lines = run.results
      .filter((r) => r.status === "done")
      .map((r) => JSON.stringify({ question_id: r.id, hypothesis: r.answer ?? "" }));
    writeAtomic(join(run.runDir, "hypotheses.jsonl"), `${lines.join("\n")}\n`);
    return ["hypotheses.jsonl"];
  },
  summarize(run) {
    const byType: Record<string, { n: number; ok: number }> = {};
    for (const r of run.results) {
      const d = r.details as { question_type?: string } | undefined;
      if (r.status !== "done" || !d?.question_type) continue;
      const e = byType[d.question_type] ?? { n: 0, ok: 0 };
      byType[d.question_type] = e;
      e.n++;
      if (r.correct) e.ok++;
    }
    return Object.fromEntries(Object.entries(byType).map(([k, v]) => [`accuracy ${k}`, `${v.ok}/${v.n}`]));
  },
};
