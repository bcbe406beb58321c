/**
 * lash's own conformance cases for processes, sleep, signals and the removed `trigger` syntax
 * (fixtures/conformance/processes.jsonl, in the corpus format; the host runs the declared process
 * bodies: `"processes": {"style": "run"}`): in process, and through the real CLI
 * (`lash lashlang run --corpus`, and a program file run as a user would).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { judgeCase, parseCorpus, runCase } from "../src/corpus.ts";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..", "..");
const corpusFile = join(here, "fixtures", "conformance", "processes.jsonl");
const cases = parseCorpus(readFileSync(corpusFile, "utf8"));
const tmp = mkdtempSync(join(tmpdir(), "lashlang-proc-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function lash(args: string[]) {
  const r = spawnSync(process.execPath, [join(repo, "scripts", "lash.ts"), "lashlang", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("process cases in process", () => {
  it.each(cases.map((c) => [c.id, c] as const))("%s", async (_id, c) => {
    expect(judgeCase(c, await runCase(c))).toEqual([]);
  });
});

describe("processes through the real CLI", () => {
  it("lash lashlang run --corpus processes.jsonl: every case passes", () => {
    const r = lash(["run", "--corpus", corpusFile, "--json"]);
    const reports = r.stdout
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { id: string; pass: boolean; problems: string[] });
    expect(reports.map((x) => x.id)).toEqual(cases.map((c) => c.id));
    expect(reports.filter((x) => !x.pass)).toEqual([]);
    expect(r.status).toBe(0);
  });

  it("a program that starts and awaits processes runs from the command line", () => {
    const file = join(tmp, "fanout.lash");
    writeFileSync(
      file,
      `process square(n: int) -> int {
  yield n
  sleep for "1ms"
  finish n * n
}
handles = [start square(n: 3), start square(n: 4)]
results = await handles
finish [r? for r in results]
`,
    );
    const r = lash(["run", file, "--json"]);
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout.trim()) as { outcome: string; value: unknown; yields: unknown[] };
    expect(out.outcome).toBe("finished");
    expect(out.value).toEqual([9, 16]);
    expect(out.yields).toEqual([3, 4]);
    expect(r.status).toBe(0);
  });
});
