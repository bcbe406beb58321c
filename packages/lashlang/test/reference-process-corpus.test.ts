/**
 * Conformance cases for processes, sleep, signals and triggers that mirror the reference's own
 * tests (fixtures/conformance/reference-processes.jsonl; each case's `notes` names the Rust test
 * of SamGalanakis/lash it follows — the programs are our own text, the expectations the same):
 * in process, and through the real CLI (`lash lashlang run --corpus`).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { judgeCase, parseCorpus, runCase } from "../src/corpus.ts";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..", "..");
const corpusFile = join(here, "fixtures", "conformance", "reference-processes.jsonl");
const cases = parseCorpus(readFileSync(corpusFile, "utf8"));

describe("reference process cases in process", () => {
  it("every case names the reference test it follows", () => {
    const notes = readFileSync(corpusFile, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => (JSON.parse(l) as { notes: string }).notes);
    expect(notes).toHaveLength(cases.length);
    for (const n of notes)
      expect(n).toMatch(/follows SamGalanakis\/lash@0cc0d922 crates\/lashlang\/\S+\.rs::\w+/);
  });

  it.each(cases.map((c) => [c.id, c] as const))("%s", async (_id, c) => {
    expect(judgeCase(c, await runCase(c))).toEqual([]);
  });
});

describe("reference process cases through the real CLI", () => {
  it("lash lashlang run --corpus reference-processes.jsonl: every case passes", () => {
    const r = spawnSync(
      process.execPath,
      [join(repo, "scripts", "lash.ts"), "lashlang", "run", "--corpus", corpusFile, "--json"],
      { encoding: "utf8", timeout: 120_000 },
    );
    const reports = r.stdout
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { id: string; pass: boolean; problems: string[] });
    expect(reports.map((x) => x.id)).toEqual(cases.map((c) => c.id));
    expect(reports.filter((x) => !x.pass).map((x) => `${x.id}: ${x.problems.join("; ")}`)).toEqual([]);
    expect(r.status).toBe(0);
  });
});
