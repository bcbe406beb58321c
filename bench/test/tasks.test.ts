// The task harness end to end, offline: every adapter's sample suite against
// the mock wire server, reports and official output files, and resume after
// an interruption (in-process stop and a killed CLI process).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultFiles, runSuite } from "../tasks/lib/runner.ts";
import type { TaskResult } from "../tasks/lib/types.ts";
import { isRlmRequest, requestText } from "../tasks/lib/util.ts";
import { suites } from "../tasks/suites/index.ts";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "lash-bench-tasks-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const quiet = () => {};
const jsonl = (path: string) =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function withServer<T>(body: (server: MockLlmServer) => Promise<T>): Promise<T> {
  const server = await startMockServer();
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

describe("sample suites run offline against the mock server", () => {
  it("longmemeval: official prompts, judge, hypotheses.jsonl", async () => {
    await withServer(async (server) => {
      const runDir = join(root, "lme");
      const out = await runSuite({
        suite: suites.longmemeval!,
        model: "mock:oracle",
        sample: true,
        runDir,
        server,
        parallel: 2,
        log: quiet,
      });
      expect(out.results.map((r) => r.status)).toEqual(["done", "done", "done", "done"]);
      expect(out.results.every((r) => r.score === 1)).toBe(true);
      // Agent call + judge call per question, all over HTTP.
      expect(server.requests).toHaveLength(8);
      const judged = server.requests.filter((r) => requestText(r).includes("Answer yes or no only."));
      expect(judged).toHaveLength(4);
      expect(requestText(server.requests.find((r) => !judged.includes(r))!)).toContain(
        "History Chats:\n\n\n### Session 1:",
      );
      const hyp = jsonl(join(runDir, "hypotheses.jsonl"));
      expect(hyp.map((h) => Object.keys(h).sort())).toEqual(Array(4).fill(["hypothesis", "question_id"]));
      const report = JSON.parse(readFileSync(join(runDir, "report.json"), "utf8")) as {
        summary: { meanScore: number; usage: { agent: { input: number } }; costUsd: { total?: number } };
      };
      expect(report.summary.meanScore).toBe(1);
      expect(report.summary.usage.agent.input).toBeGreaterThan(0);
      expect(report.summary.costUsd.total).toBeGreaterThan(0);
      expect(readFileSync(join(runDir, "report.html"), "utf8")).toContain("mean score 100.0 %");
    });
  });

  it("longmemeval: a model that declines fails every answerable question", async () => {
    await withServer(async (server) => {
      const out = await runSuite({
        suite: suites.longmemeval!,
        model: "mock:decline",
        sample: true,
        runDir: join(root, "lme-decline"),
        server,
        log: quiet,
      });
      expect(out.results.map((r) => [r.id, r.score])).toEqual([
        ["lash_sample_ssu_01", 0],
        ["lash_sample_ku_01", 0],
        ["lash_sample_ssa_01", 0],
        ["lash_sample_ssu_02_abs", 1],
      ]);
    });
  });

  it("longcot: exact match on `solution =`, responses.jsonl for run_eval.py", async () => {
    await withServer(async (server) => {
      const runDir = join(root, "longcot");
      const out = await runSuite({
        suite: suites.longcot!,
        model: "mock:oracle",
        sample: true,
        runDir,
        server,
        log: quiet,
      });
      expect(out.results).toHaveLength(4);
      expect(out.results.every((r) => r.status === "done" && r.score === 1)).toBe(true);
      const lines = jsonl(join(runDir, "responses.jsonl"));
      expect(lines[0]).toMatchObject({ successful: true, model: "openai-compatible/mock-oracle" });
      expect(String(lines[0]!.response_text)).toMatch(/solution = /);
      const sloppy = await runSuite({
        suite: suites.longcot!,
        model: "mock:sloppy",
        sample: true,
        runDir: join(root, "longcot-sloppy"),
        server,
        log: quiet,
      });
      expect(sloppy.results.every((r) => r.score === 0)).toBe(true);
    });
  });

  it("swebench: real file tools in a clone at base_commit, git diff → predictions.jsonl, local grading", async () => {
    await withServer(async (server) => {
      const runDir = join(root, "swe");
      const out = await runSuite({
        suite: suites.swebench!,
        model: "mock:oracle",
        sample: true,
        runDir,
        server,
        parallel: 2,
        log: quiet,
      });
      expect(out.results.map((r) => [r.id, r.status, r.score])).toEqual([
        ["lash-samples__calc-1", "done", 1],
        ["lash-samples__calc-2", "done", 1],
      ]);
      expect(out.results.every((r) => r.toolCalls === 2)).toBe(true); // read_file + edit
      const preds = jsonl(join(runDir, "predictions.jsonl"));
      expect(preds.map((p) => Object.keys(p).sort())).toEqual(
        Array(2).fill(["instance_id", "model_name_or_path", "model_patch"]),
      );
      expect(String(preds[0]!.model_patch)).toContain("+  if (x > hi) return hi;");
      const idle = await runSuite({
        suite: suites.swebench!,
        model: "mock:idle",
        sample: true,
        runDir: join(root, "swe-idle"),
        server,
        log: quiet,
      });
      expect(idle.results.map((r) => [r.answer, r.score])).toEqual([
        ["", 0],
        ["", 0],
      ]);
    });
  });

  it("clbench: one session across a sequence learns from feedback; the stateless baseline does not", async () => {
    await withServer(async (server) => {
      const out = await runSuite({
        suite: suites.clbench!,
        model: "mock:learner",
        sample: true,
        runDir: join(root, "cl"),
        server,
        log: quiet,
      });
      const d = out.results.map(
        (r) => r.details as { stateful: { reward: number }[]; baselineScore: number; gain: number },
      );
      expect(d[0]!.stateful.map((o) => o.reward)).toEqual([0, 1, 1, 1]);
      expect(d[0]!.baselineScore).toBe(0);
      expect(d[1]!.gain).toBeCloseTo(2 / 3);
      // Stateful run: one session per sequence; baseline: one per instance.
      expect(out.results[0]!.sessionIds).toHaveLength(1 + 4);
    });
  });

  it("--mode rlm: every suite's offline script answers in Lashlang cells and scores above 0", async () => {
    await withServer(async (server) => {
      for (const suite of Object.values(suites)) {
        const from = server.requests.length;
        const out = await runSuite({
          suite,
          model: "mock:oracle",
          mode: "rlm",
          sample: true,
          runDir: join(root, `rlm-${suite.name}`),
          server,
          log: quiet,
        });
        const scores = out.results.map((r) => r.score ?? 0);
        expect(
          out.results.every((r) => r.status === "done"),
          suite.name,
        ).toBe(true);
        expect(scores.reduce((a, b) => a + b, 0) / scores.length, suite.name).toBeGreaterThan(0);
        // the agent's requests are RLM requests (no native tools) and the script answered with cells
        const agent = server.requests
          .slice(from)
          .filter((r) => !requestText(r).includes("Answer yes or no only."));
        expect(agent.length, suite.name).toBeGreaterThan(0);
        expect(agent.every(isRlmRequest), suite.name).toBe(true);
        if (suite.name === "swebench") {
          // files.read then files.edit through the tools' bindings; the patch is the gold fix
          expect(out.results.every((r) => r.toolCalls === 2)).toBe(true);
          expect(out.results.map((r) => r.score)).toEqual([1, 1]);
          expect(String(out.results[0]!.answer)).toContain("+  if (x > hi) return hi;");
        }
        if (suite.name === "clbench") {
          // the answer is the cell's `finish` value; the session learns from feedback as in standard mode
          const d = out.results[0]!.details as { stateful: { reward: number; response: string }[] };
          expect(d.stateful.map((o) => o.reward)).toEqual([0, 1, 1, 1]);
          expect(JSON.parse(d.stateful[1]!.response)).toEqual({ total: expect.any(Number) });
        }
      }
    });
  }, 120_000);
});

describe("several suites and modes", () => {
  it("--mode both writes each run and modes.md with the modes side by side", () => {
    const runDir = join(root, "both");
    const r = spawnSync(
      process.execPath,
      [
        join(import.meta.dirname, "..", "tasks", "run.ts"),
        "--sample",
        "--suite",
        "longcot,swebench",
        "--mode",
        "both",
        "--limit",
        "1",
        "--run-dir",
        runDir,
      ],
      { encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const md = readFileSync(join(runDir, "modes.md"), "utf8");
    expect(md).toContain("| suite | standard: mean score |");
    expect(md).toContain("rlm: mean score");
    expect(md).toMatch(/\| LongCoT \| 100\.0 % \| 1\/1 \| 0 \| [^|]+ \| 100\.0 % \| 1\/1 \| 0 \|/);
    expect(md).toMatch(/\| SWE-bench \| 100\.0 % \| 1\/1 \| 2 \| [^|]+ \| 100\.0 % \| 1\/1 \| 2 \|/);
    const runs = JSON.parse(readFileSync(join(runDir, "modes.json"), "utf8")) as {
      suite: string;
      mode: string;
    }[];
    expect(runs.map((x) => `${x.suite}/${x.mode}`)).toEqual([
      "longcot/standard",
      "longcot/rlm",
      "swebench/standard",
      "swebench/rlm",
    ]);
    const rlm = JSON.parse(readFileSync(join(runDir, "swebench-rlm", "report.json"), "utf8")) as {
      manifest: { mode: string };
    };
    expect(rlm.manifest.mode).toBe("rlm");
  }, 120_000);
});

describe("resume", () => {
  const snapshot = (runDir: string) =>
    new Map(
      resultFiles(runDir).map((f) => [
        f,
        {
          mtime: statSync(join(runDir, "tasks", f)).mtimeMs,
          text: readFileSync(join(runDir, "tasks", f), "utf8"),
        },
      ]),
    );

  it("an interrupted run resumes without redoing finished tasks", async () => {
    const runDir = join(root, "resume");
    const first = await withServer((server) =>
      runSuite({
        suite: suites.longmemeval!,
        model: "mock:oracle",
        sample: true,
        runDir,
        server,
        stopAfter: 2,
        onStop: "return",
        log: quiet,
      }),
    );
    expect(first.stopped).toBe(true);
    expect(first.ran).toHaveLength(2);
    const before = snapshot(runDir);
    expect(before.size).toBe(2);

    await withServer(async (server) => {
      const second = await runSuite({
        suite: suites.longmemeval!,
        model: "mock:oracle",
        sample: true,
        runDir,
        server,
        log: quiet,
      });
      expect(second.skipped).toEqual(first.ran);
      expect(second.ran).toHaveLength(2);
      expect(second.results.every((r: TaskResult) => r.status === "done")).toBe(true);
      // Finished tasks' result files were not rewritten …
      const after = snapshot(runDir);
      for (const [f, s] of before) expect(after.get(f)).toEqual(s);
      // … and the model never saw their questions again.
      const asked = server.requests.map(requestText).join("\n");
      for (const id of first.ran) expect(asked).not.toContain(`Question: ${questionOf(id)}\nAnswer:`);
      for (const id of second.ran) expect(asked).toContain(`Question: ${questionOf(id)}\nAnswer:`);
      expect(server.requests).toHaveLength(4); // 2 tasks × (answer + judge)
    });
  });

  it("a killed CLI run (--stop-after exits mid-run) resumes from its result files", async () => {
    const runDir = join(root, "killed");
    const killed = spawnSync(
      process.execPath,
      [
        join(import.meta.dirname, "..", "tasks", "run.ts"),
        "--suite",
        "longcot",
        "--sample",
        "--run-dir",
        runDir,
        "--stop-after",
        "2",
        "--parallel",
        "2",
      ],
      { encoding: "utf8" },
    );
    expect(killed.status).toBe(3);
    const before = snapshot(runDir);
    expect(before.size).toBe(2);
    await withServer(async (server) => {
      const resumed = await runSuite({
        suite: suites.longcot!,
        model: "mock:oracle",
        sample: true,
        runDir,
        server,
        log: quiet,
      });
      expect(resumed.skipped).toHaveLength(2);
      expect(resumed.ran).toHaveLength(2);
      const after = snapshot(runDir);
      for (const [f, s] of before) expect(after.get(f)).toEqual(s);
      const tasks = await suites.longcot!.load({ sample: true, options: {} });
      const prompts = resumed.skipped.map(
        (id) => (tasks.find((t) => t.id === id)!.data as { prompt: string }).prompt,
      );
      for (const p of prompts) expect(server.requests.some((r) => requestText(r).includes(p))).toBe(false);
      expect(server.requests).toHaveLength(2);
      expect(JSON.parse(readFileSync(join(runDir, "report.json"), "utf8")).summary.done).toBe(4);
    });
  });
});

function questionOf(id: string): string {
  const q = (
    JSON.parse(
      readFileSync(join(import.meta.dirname, "..", "tasks", "suites", "longmemeval", "sample.json"), "utf8"),
    ) as { question_id: string; question: string }[]
  ).find((x) => x.question_id === id);
  return q?.question ?? id;
}
