// LongCoT (Motwani et al., 2026; github.com/LongHorizonReasoning/longcot): long-horizon
// reasoning problems (logic, cs, chemistry, chess, math; easy/medium/hard) with
// a short prompt and an answer given as a final `solution = ...` line.
// Data: the official layout data/<domain>/<difficulty>.json, each
// {"questions": [{question_id, prompt, problem, answer}]}, or one JSON/JSONL
// file of question records carrying domain and difficulty.
//
// Scoring here: `--scoring exact` (default) extracts the last `solution = ...`
// and compares it with the reference answer by type (integer, JSON object,
// list, text) — the deterministic core of the official verifiers, without the
// programmatic logic/chess/chemistry checkers; `--scoring judge` asks the judge
// model. For leaderboard-comparable numbers, grade responses.jsonl (the
// official run_inference.py output format) with the official run_eval.py.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { MockReply, RecordedRequest } from "@lash/providers/testing";
import type { MockScript, SuiteAdapter, Task } from "../../lib/types.ts";
import {
  isRlmRequest,
  lashCell,
  lashLiteral,
  lastJsonObject,
  readJson,
  readJsonOrJsonl,
  requestText,
  writeAtomic,
} from "../../lib/util.ts";

export interface LongCotQuestion {
  readonly question_id: string;
  readonly domain: string;
  readonly difficulty: string;
  readonly prompt: string;
  readonly problem?: unknown;
  readonly answer?: unknown;
}

const DIFFICULTY_ALIASES: Record<string, readonly string[]> = {
  "longcot-mini": ["easy"],
  longcot: ["medium", "hard"],
};

function loadDir(dir: string): LongCotQuestion[] {
  const out: LongCotQuestion[] = [];
  for (const domain of readdirSync(dir).sort()) {
    const d = join(dir, domain);
    if (!statSync(d).isDirectory()) continue;
    for (const file of readdirSync(d).sort()) {
      if (!file.endsWith(".json")) continue;
      const difficulty = file.slice(0, -".json".length);
      const data = readJson<{ questions?: Omit<LongCotQuestion, "domain" | "difficulty">[] }>(join(d, file));
      for (const q of data.questions ?? [])
        out.push({ ...q, question_id: String(q.question_id), domain, difficulty });
    }
  }
  return out;
}

/** The text after the last `solution =` (as the official extract_solution). */
export function extractSolution(text: string): string | undefined {
  const matches = [...text.matchAll(/solution\s*=\s*/gi)];
  const last = matches.at(-1);
  if (!last || last.index === undefined) return undefined;
  const rest = text.slice(last.index + last[0].length).trim();
  return rest === "" ? undefined : rest;
}

function firstBalancedList(text: string): unknown {
  const start = text.indexOf("[");
  if (start < 0) return undefined;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === "[") depth++;
    else if (text[i] === "]" && --depth === 0) {
      const raw = text.slice(start, i + 1);
      for (const candidate of [raw, raw.replace(/'/g, '"')]) {
        try {
          return JSON.parse(candidate) as unknown;
        } catch {
          // try the next form
        }
      }
      return undefined;
    }
  }
  return undefined;
}

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const normalize = (s: string) =>
  s
    .trim()
    .replace(/\s+/g, " ")
    .replace(/^`+|`+$/g, "")
    .toLowerCase();

/** Exact-match verification by answer type. */
export function exactMatch(response: string, answer: unknown): { correct: boolean; formatted: boolean } {
  const extracted = extractSolution(response);
  const text = extracted ?? response;
  const formatted = extracted !== undefined;
  let correct = false;
  if (typeof answer === "number" || (typeof answer === "string" && /^-?\d+(\.\d+)?$/.test(answer.trim()))) {
    const m = /-?\d+(?:\.\d+)?/.exec(text.replace(/,(?=\d{3})/g, ""));
    correct = m !== null && Number(m[0]) === Number(answer);
  } else if (Array.isArray(answer)) {
    correct = deepEqual(firstBalancedList(text), answer);
  } else if (answer && typeof answer === "object") {
    correct = deepEqual(lastJsonObject(text), answer);
  } else if (typeof answer === "string") {
    correct = normalize(text.split("\n")[0] ?? "") === normalize(answer);
  }
  return { correct, formatted };
}

export function judgePrompt(question: string, answer: unknown, response: string): string {
  return `You are grading the final answer of a long reasoning problem. Compare only the final answer (the value after the last "solution =", or the conclusion if that line is missing) with the reference answer; ignore the reasoning.\n\nProblem: ${question}\n\nReference answer: ${typeof answer === "string" ? answer : JSON.stringify(answer)}\n\nModel response: ${response}\n\nIs the model's final answer equivalent to the reference answer? Answer yes or no only.`;
}

const questionOf = (t: Task) => t.data as LongCotQuestion;

const mockScripts: Record<string, MockScript> = {
  // Reasons briefly, then states the reference answer in the official format.
  oracle:
    (tasks) =>
    (req: RecordedRequest): MockReply => {
      const text = requestText(req);
      const q = tasks.map(questionOf).find((x) => text.includes(x.prompt));
      const answer =
        q?.answer === undefined
          ? "unknown"
          : typeof q.answer === "string"
            ? q.answer
            : JSON.stringify(q.answer);
      const reply = `Let me work through this step by step.\n\n… (reasoning) …\n\nsolution = ${answer}`;
      // RLM: the reply is the cell's finish value
      if (isRlmRequest(req))
        return {
          text: lashCell(`reply = ${lashLiteral(reply)}\nfinish reply`),
          usage: { input: Math.ceil(text.length / 4), output: 40 },
        };
      return {
        text: reply,
        textChunks: 8,
        usage: { input: Math.ceil(text.length / 4), output: 40 },
      };
    },
  // Answers without the `solution =` line and with a wrong value.
  sloppy: () => (req) => ({
    text: "I think the answer is 7.",
    usage: { input: Math.ceil(requestText(req).length / 4), output: 8 },
  }),
};

export const longCot: SuiteAdapter = {
  name: "longcot",
  title: "LongCoT",
  scoring:
    "Exact match on the final `solution = ...` by answer type (--scoring exact, default), or an LLM judge (--scoring judge). Not the official programmatic verifiers for logic/chess/chemistry: grade responses.jsonl with the official run_eval.py for leaderboard numbers.",
  async load({ sample, data, limit, options }) {
    const path = sample ? join(import.meta.dirname, "sample") : data;
    if (!path)
      throw new Error(
        "longcot: pass --sample or --data <data dir with <domain>/<difficulty>.json | questions.jsonl>",
      );
    if (!existsSync(path)) throw new Error(`longcot: ${path} does not exist`);
    let qs = statSync(path).isDirectory() ? loadDir(path) : (readJsonOrJsonl(path) as LongCotQuestion[]);
    if (options.domain) qs = qs.filter((q) => q.domain === options.domain);
    if (options.difficulty) {
      const wanted = DIFFICULTY_ALIASES[options.difficulty] ?? [options.difficulty];
      qs = qs.filter((q) => wanted.includes(q.difficulty));
    }
    if (options["question-id"]) qs = qs.filter((q) => q.question_id === options["question-id"]);
    if (limit) qs = qs.slice(0, limit);
    return qs.map((q) => ({ id: q.question_id, data: q }));
  },
  async run(ctx) {
    const q = questionOf(ctx.task);
    const agent = await ctx.newAgent();
    const { text } = await agent.turn(q.prompt);
    const scoring = ctx.options.scoring ?? "exact";
    if (scoring === "judge") {
      const verdict = await ctx.judge(judgePrompt(q.prompt, q.answer, text));
      const correct = verdict.toLowerCase().includes("yes");
      return {
        score: correct ? 1 : 0,
        correct,
        answer: text,
        expected: q.answer,
        details: {
          domain: q.domain,
          difficulty: q.difficulty,
          judge: verdict,
          formatted: extractSolution(text) !== undefined,
        },
      };
    }
    if (scoring !== "exact") throw new Error(`longcot: --scoring must be exact or judge, got ${scoring}`);
    const { correct, formatted } = exactMatch(text, q.answer);
    return {
      score: correct ? 1 : 0,
      correct,
      answer: text,
      expected: q.answer,
      details: { domain: q.domain, difficulty: q.difficulty, formatted },
    };
  },
  mockScripts,
  async finalize(run) {
    const byId = new Map(run.results.map((r) => [r.id, r]));
    const lines = run.tasks.flatMap((t) => {
      const r = byId.get(t.id);
      if (!r) return [];
      return [
        JSON.stringify({
          question_id: t.id,
          successful: r.status === "done",
          response_text: r.answer ?? "",
          model: run.manifest.model,
          usage: { input_tokens: r.usage.agent.input ?? 0, output_tokens: r.usage.agent.output ?? 0 },
        }),
      ];
    });
    writeAtomic(join(run.runDir, "responses.jsonl"), `${lines.join("\n")}\n`);
    return ["responses.jsonl"];
  },
  summarize(run) {
    const done = run.results.filter((r) => r.status === "done");
    const unformatted = done.filter(
      (r) => (r.details as { formatted?: boolean } | undefined)?.formatted === false,
    );
    return { wrong_formatting: unformatted.length, failed: run.results.length - done.length };
  },
};
