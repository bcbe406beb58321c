// SWE-bench (Jimenez et al., ICLR 2024; github.com/SWE-bench/SWE-bench): resolve a
// GitHub issue in a repository checkout. Data: the official instance JSONL
// (instance_id, repo, base_commit, problem_statement, hints_text, patch,
// test_patch, FAIL_TO_PASS, PASS_TO_PASS, version, environment_setup_commit, …),
// e.g. an export of princeton-nlp/SWE-bench_Verified, plus local clones of the
// repositories: --repos DIR holding DIR/<owner>__<name> (or DIR/<name>).
//
// Each task: a clone of the repository at base_commit in the task's own
// workspace, a lash session whose tools (@lash/tools: read, edit, patch,
// search, shell) are jailed to it, the problem statement as the prompt; then
// `git diff` of the workspace against base_commit → predictions.jsonl in the
// official format {instance_id, model_name_or_path, model_patch}, the input of
// the official grader (python -m swebench.harness.run_evaluation
// --predictions_path predictions.jsonl …, Docker).
//
// Local grading happens only for repositories with a local test spec (the
// bundled sample repository): test_patch applied, FAIL_TO_PASS and PASS_TO_PASS
// run. Everything else is "not graded here" — the resolve rate comes from the
// official grader.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { MockReply, RecordedRequest } from "@lash/providers/testing";
import { toolsPlugin } from "@lash/tools";
import type { MockScript, SuiteAdapter, Task } from "../../lib/types.ts";
import {
  chatMessages,
  isRlmRequest,
  lashCell,
  lashLiteral,
  readJson,
  readJsonOrJsonl,
  requestText,
  rlmSteps,
  writeAtomic,
} from "../../lib/util.ts";

const run = promisify(execFile);

export interface SweBenchInstance {
  readonly instance_id: string;
  readonly repo: string;
  readonly base_commit: string;
  readonly problem_statement: string;
  readonly hints_text?: string;
  readonly patch?: string;
  readonly test_patch?: string;
  readonly FAIL_TO_PASS?: string | readonly string[];
  readonly PASS_TO_PASS?: string | readonly string[];
  readonly version?: string;
}

/** Repositories with a local test command (the official harness keeps these per repo and version). */
const LOCAL_SPECS: Record<string, { readonly test: (files: readonly string[]) => readonly string[] }> = {
  "lash-samples/calc": { test: (files) => [process.execPath, "--test", ...files] },
};

const GIT_ENV = {
  GIT_AUTHOR_NAME: "lash",
  GIT_AUTHOR_EMAIL: "bench@lash.dev",
  GIT_COMMITTER_NAME: "lash",
  GIT_COMMITTER_EMAIL: "bench@lash.dev",
  GIT_AUTHOR_DATE: "2025-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2025-01-01T00:00:00Z",
};

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("git", ["-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", ...args], {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    maxBuffer: 64 << 20,
  });
  return stdout;
}

const list = (v: string | readonly string[] | undefined): readonly string[] =>
  v === undefined ? [] : typeof v === "string" ? (JSON.parse(v) as string[]) : v;

const sampleDir = join(import.meta.dirname, "sample");
const building = new Map<string, Promise<string>>();

/** The bundled sample repository as a git repository under the run directory (built once per run). */
function sampleRepo(runDir: string, repo: string): Promise<string> {
  const key = `${runDir}:${repo}`;
  let p = building.get(key);
  if (!p) {
    p = (async () => {
      const name = repo.replace("/", "__");
      const dir = join(runDir, "repos", name);
      if (existsSync(join(dir, ".git"))) return dir;
      const spec = readJson<{ message: string; files: Record<string, string> }>(
        join(sampleDir, "repos", `${name}.json`),
      );
      for (const [path, content] of Object.entries(spec.files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), content);
      }
      await git(dir, "init", "-q", "-b", "main");
      await git(dir, "add", "-A");
      await git(dir, "commit", "-q", "-m", spec.message);
      return dir;
    })();
    building.set(key, p);
  }
  return p;
}

function localRepo(reposDir: string, repo: string): string {
  const [owner, name] = repo.split("/");
  for (const candidate of [
    join(reposDir, `${owner}__${name}`),
    join(reposDir, name ?? repo),
    join(reposDir, repo),
  ])
    if (existsSync(join(candidate, ".git")) || existsSync(join(candidate, "HEAD"))) return candidate;
  throw new Error(`swebench: no local clone of ${repo} under ${reposDir} (expected ${owner}__${name}/)`);
}

export function taskPrompt(i: SweBenchInstance): string {
  return [
    `You are working in a checkout of the ${i.repo} repository (the current directory). Resolve the following issue by editing the source files.`,
    "Do not modify or add tests; do not commit. When you are done, reply with a short summary of the change.",
    "",
    "<issue>",
    i.problem_statement.trim(),
    "</issue>",
  ].join("\n");
}

/** The edits a unified diff makes to its first file: one {oldText, newText} per hunk. */
export function hunkEdits(patch: string): { path: string; edits: { oldText: string; newText: string }[] } {
  const lines = patch.split("\n");
  let path = "";
  const edits: { oldText: string; newText: string }[] = [];
  let current: { old: string[]; new: string[] } | undefined;
  const flush = () => {
    if (current) edits.push({ oldText: current.old.join("\n"), newText: current.new.join("\n") });
    current = undefined;
  };
  for (const line of lines) {
    if (line.startsWith("diff --git")) {
      if (path) break;
      continue;
    }
    if (line.startsWith("+++ ")) {
      path = line.slice(4).replace(/^b\//, "");
      continue;
    }
    if (line.startsWith("--- ") || line.startsWith("index ")) continue;
    if (line.startsWith("@@")) {
      flush();
      current = { old: [], new: [] };
      continue;
    }
    if (!current) continue;
    if (line.startsWith(" ") || line === "") {
      current.old.push(line.slice(1));
      current.new.push(line.slice(1));
    } else if (line.startsWith("-")) current.old.push(line.slice(1));
    else if (line.startsWith("+")) current.new.push(line.slice(1));
  }
  flush();
  // Drop the trailing empty context line a diff ends with (the split's last piece).
  for (const e of edits) {
    while (e.oldText.endsWith("\n") && e.newText.endsWith("\n")) {
      e.oldText = e.oldText.slice(0, -1);
      e.newText = e.newText.slice(0, -1);
    }
  }
  return { path, edits };
}

const instanceOf = (t: Task) => t.data as SweBenchInstance;

const mockScripts: Record<string, MockScript> = {
  // Reads the file the gold patch touches, edits it with the gold hunks through
  // the real `edit` tool, then summarizes: a patch written with the real tools.
  oracle:
    (tasks) =>
    (req: RecordedRequest): MockReply => {
      const text = requestText(req);
      const i = tasks.map(instanceOf).find((x) => text.includes(x.problem_statement.trim()));
      const usage = { input: Math.ceil(text.length / 4), output: 30 };
      if (!i?.patch) return { text: "I could not find the issue.", usage };
      const { path, edits } = hunkEdits(i.patch);
      if (isRlmRequest(req)) {
        // the same steps as Lashlang cells through the tools' bindings (files.read, files.edit)
        const step = rlmSteps(req);
        if (step === 0)
          return {
            text: lashCell(`src = files.read({path: ${lashLiteral(path)}})\nprint(src.content)`),
            usage,
          };
        if (step === 1)
          return {
            text: lashCell(`r = files.edit(${lashLiteral({ path, edits })})\nprint(r.diff)`, "Now the fix."),
            usage,
          };
        return {
          text: `Fixed ${path}: the issue described is resolved by correcting the logic there.`,
          usage,
        };
      }
      const round = chatMessages(req).filter((m) => m.role === "tool").length;
      if (round === 0) return { toolCalls: [{ name: "read_file", arguments: { path } }], usage };
      if (round === 1) return { toolCalls: [{ name: "edit", arguments: { path, edits } }], usage };
      return { text: `Fixed ${path}: the issue described is resolved by correcting the logic there.`, usage };
    },
  // Ends without touching anything: an empty patch.
  idle: () => (req) => ({
    text: "Nothing to change.",
    usage: { input: Math.ceil(requestText(req).length / 4), output: 4 },
  }),
};

export const sweBench: SuiteAdapter = {
  name: "swebench",
  title: "SWE-bench",
  scoring:
    "Resolve rate comes from the official SWE-bench grader (Docker) run on predictions.jsonl. Here only repositories with a local test spec (the bundled sample) are graded: test_patch applied, FAIL_TO_PASS and PASS_TO_PASS run with the agent's patch.",
  async load({ sample, data, limit, options }) {
    const path = sample ? join(sampleDir, "sample.jsonl") : data;
    if (!path)
      throw new Error("swebench: pass --sample or --data <instances.jsonl> --repos <dir of local clones>");
    let items = readJsonOrJsonl(path) as SweBenchInstance[];
    if (!sample && !options.repos)
      throw new Error("swebench: --repos <dir> is required with --data (local clones named <owner>__<name>)");
    if (options["instance-id"]) items = items.filter((i) => i.instance_id === options["instance-id"]);
    if (limit) items = items.slice(0, limit);
    return items.map((i) => ({ id: i.instance_id, data: i }));
  },
  async run(ctx) {
    const i = instanceOf(ctx.task);
    const source = ctx.options.repos
      ? localRepo(ctx.options.repos, i.repo)
      : await sampleRepo(ctx.runDir, i.repo);
    const ws = ctx.workspace;
    await git(ws, "clone", "-q", "--shared", "--no-checkout", source, ".");
    await git(ws, "checkout", "-q", "--detach", i.base_commit);
    const agent = await ctx.newAgent({ plugins: [toolsPlugin({ root: ws, deny: [".git/"] })] });
    const turn = await agent.turn(taskPrompt(i));
    await git(ws, "add", "-A");
    const patch = await git(ws, "diff", "--cached", "--binary", i.base_commit);
    writeFileSync(join(ctx.runDir, "tasks", `${ctx.task.id.replace(/[^A-Za-z0-9._-]/g, "_")}.patch`), patch);
    const spec = LOCAL_SPECS[i.repo];
    const files = { changed: [...patch.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]) };
    if (!spec || !i.test_patch)
      return {
        score: null,
        correct: null,
        answer: patch,
        details: { ...files, summary: turn.text, graded: false },
      };
    // Local grading: the official procedure in miniature.
    writeFileSync(join(ws, ".lash-test.patch"), i.test_patch);
    await git(ws, "apply", ".lash-test.patch");
    const tests = [...list(i.FAIL_TO_PASS), ...list(i.PASS_TO_PASS)];
    const [cmd, ...args] = spec.test(tests);
    let passed = true;
    let output = "";
    try {
      const r = await run(cmd!, args, { cwd: ws, maxBuffer: 16 << 20 });
      output = r.stdout;
    } catch (e) {
      passed = false;
      output = String((e as { stdout?: string }).stdout ?? e);
    }
    return {
      score: passed ? 1 : 0,
      correct: passed,
      answer: patch,
      expected: i.patch,
      details: { ...files, summary: turn.text, graded: true, tests, testOutput: output.slice(-2000) },
    };
  },
  mockScripts,
  async finalize(r) {
    const lines = r.results
      .filter((x) => x.status === "done")
      .map((x) =>
        JSON.stringify({
          instance_id: x.id,
          model_name_or_path: `lash/${r.manifest.model}`,
          model_patch: x.answer ?? "",
        }),
      );
    writeAtomic(join(r.runDir, "predictions.jsonl"), `${lines.join("\n")}\n`);
    return ["predictions.jsonl"];
  },
  summarize(r) {
    const done = r.results.filter((x) => x.status === "done");
    return {
      "empty patches": done.filter((x) => !x.answer).length,
      "graded locally": done.filter((x) => (x.details as { graded?: boolean } | undefined)?.graded).length,
    };
  },
};
