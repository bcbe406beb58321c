/**
 * The conformance corpus through the real CLI (issue 15, "Lashlang's CLI takes what the corpus
 * needs"): `lash lashlang run --corpus` in a child process runs all 130 cases; a few cases also run
 * as a user would type them (cells in files, `--globals`, `--host`, `--snapshot-between-cells`,
 * `--check`), and the corpus judge is shown to fail a wrong expectation.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CorpusCase } from "../src/corpus.ts";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..", "..");
const corpusFile = join(here, "fixtures", "conformance", "cases.jsonl");
const cases: CorpusCase[] = readFileSync(corpusFile, "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as CorpusCase);
const byId = new Map(cases.map((c) => [c.id, c]));
const tmp = mkdtempSync(join(tmpdir(), "lashlang-cli-"));

/** The real `lash` CLI from source, in a child process. */
function lash(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [join(repo, "scripts", "lash.ts"), "lashlang", ...args], {
    encoding: "utf8",
    timeout: 120_000,
    ...(input !== undefined ? { input } : {}),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

const jsonLines = (s: string) =>
  s
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

interface CaseReport {
  id: string;
  pass: boolean;
  problems: string[];
  cells: { outcome: string; value: unknown; prints: unknown[]; error?: { message: string } }[];
}

describe("lash lashlang run --corpus", () => {
  const r = lash(["run", "--corpus", corpusFile, "--json"]);
  const reports: CaseReport[] = jsonLines(r.stdout);

  it("runs every case of the in-repo corpus in one CLI process, and every case passes", () => {
    expect(r.stderr).toContain("130 passed, 0 failed (130 cases)");
    expect(r.status).toBe(0);
    expect(reports.map((x) => x.id)).toEqual(cases.map((c) => c.id));
    const failed = reports.filter((x) => !x.pass).map((x) => `${x.id}: ${x.problems.join("; ")}`);
    expect(failed).toEqual([]);
  });

  it("the CLI's output holds what the corpus expects (checked here, not only by the CLI's judge)", () => {
    let finishes = 0;
    let errors = 0;
    for (const rep of reports) {
      const c = byId.get(rep.id)!;
      const expects = Array.isArray(c.expect) ? c.expect : [c.expect];
      expect(rep.cells.length, rep.id).toBe(expects.length);
      expects.forEach((ex, i) => {
        const cell = rep.cells[i]!;
        if ("finish" in ex) {
          finishes++;
          expect(cell.outcome, rep.id).toBe("finished");
          expect(cell.value, rep.id).toEqual(ex.finish);
        }
        if (ex.error_contains !== undefined) {
          errors++;
          expect(cell.outcome, rep.id).toBe("error");
          expect(cell.error!.message, rep.id).toContain(ex.error_contains);
        }
        if (ex.parse_error_contains !== undefined)
          expect(cell.error!.message).toContain(ex.parse_error_contains);
        if (ex.prints) expect(cell.prints, rep.id).toEqual(ex.prints);
        if (ex.continued) expect(cell.outcome, rep.id).toBe("continued");
      });
    }
    expect(finishes).toBeGreaterThan(40);
    expect(errors).toBeGreaterThan(20);
  });

  it("a case whose expectation does not hold fails, with the problem named (exit 1)", () => {
    const good = byId.get("snapshot_round_trip_preserves_repl_like_state")!;
    const bad = { ...good, id: "deliberately_wrong", expect: [{ finish_checks: [] }, { finish: 3 }] };
    const f = file("two.jsonl", `${JSON.stringify(good)}\n${JSON.stringify(bad)}\n`);
    const out = lash(["run", "--corpus", f]);
    expect(out.status).toBe(1);
    expect(out.stdout).toContain("ok   snapshot_round_trip_preserves_repl_like_state");
    expect(out.stdout).toContain("FAIL deliberately_wrong\n       cell 1: expected finish 3, got 2");
    expect(out.stdout).toContain("1 passed, 1 failed (2 cases)");
  });

  it("a corpus file that is not a corpus is a usage error naming the line", () => {
    const f = file(
      "broken.jsonl",
      '{"id": "x", "mode": "linked", "source": "finish 1", "expect": {}}\n{oops\n',
    );
    const out = lash(["run", "--corpus", f]);
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(`error: corpus ${f}: line 2: not JSON`);
  });
});

describe("lash lashlang run: corpus cases as a user runs them", () => {
  it("several cells (--cell) through a snapshot round trip", () => {
    const c = byId.get("snapshot_round_trip_preserves_repl_like_state")!;
    const args = c.cells!.flatMap((src, i) => ["--cell", file(`snap-${i}.lash`, src)]);
    const out = lash(["run", ...args, "--snapshot-between-cells", "--json"]);
    expect(out.status, out.stderr).toBe(0);
    expect(jsonLines(out.stdout).map((x) => [x.outcome, x.value])).toEqual([
      ["finished", 1],
      ["finished", 2],
    ]);
  });

  it("a separator line splits one file into cells; an error in one cell does not stop the next", () => {
    const out = lash(
      ["run", "-"],
      "x = 1\n// --- cell ---\nprint nope\n// --- cell ---\nprint x + 1\nfinish x\n",
    );
    expect(out.status).toBe(1);
    expect(out.stdout).toBe("2\n1\n");
    expect(out.stderr).toContain("unknown name `nope`\n--> line 2, column 1\nprint nope\n^~~~~~~~~~");
  });

  it("--globals and a --host fixture with processes (a benchmark scenario)", () => {
    const c = byId.get("benchmark_scenario__async_await")!;
    const out = lash([
      "run",
      file("async.lash", c.source!),
      "--globals",
      file("async-globals.json", JSON.stringify(c.globals)),
      "--host",
      file("async-host.json", JSON.stringify(c.host)),
      "--json",
    ]);
    expect(out.status, out.stderr).toBe(0);
    const [cell] = jsonLines(out.stdout);
    expect(cell).toMatchObject({ outcome: "finished", value: (c.expect as { finish: unknown }).finish });
  });

  it("a --host fixture's module operations run concurrently in an aggregate await and are reported", () => {
    const c = byId.get("aggregate_await_resource_calls_run_concurrently_and_preserve_record_shape")!;
    const out = lash(
      ["run", "-", "--host", file("sleep-host.json", JSON.stringify(c.host)), "--json"],
      c.source,
    );
    expect(out.status, out.stderr).toBe(0);
    const [cell] = jsonLines(out.stdout);
    expect(cell.value).toEqual({ left: "a", right: "b" });
    expect(cell.max_concurrent).toBe(2);
    expect(cell.calls).toEqual([
      { op: "tools.sleep_echo", payload: { value: "a" } },
      { op: "tools.sleep_echo", payload: { value: "b" } },
    ]);
  });

  it("--check: strict reports the check error, fallback runs a cell without `start` unchecked", () => {
    // the checker rejects a list-vs-string comparison (as the reference's linker does); unchecked,
    // it finishes (false)
    const src = file("mismatch.lash", 'xs = [1]\nfinish xs == "a"\n');
    const strict = lash(["run", src, "--json"]);
    expect(strict.status).toBe(1);
    expect(jsonLines(strict.stdout)[0].error).toMatchObject({
      phase: "check",
      message: "operator `==` does not accept list[int] and str",
    });
    const fallback = lash(["run", src, "--check", "fallback", "--json"]);
    expect(fallback.status, fallback.stderr).toBe(0);
    expect(jsonLines(fallback.stdout)[0].outcome).toBe("finished");
    const parseOnly = lash(["run", src, "--check", "parse-only", "--json"]);
    expect(jsonLines(parseOnly.stdout)[0].outcome).toBe("parsed");
  });

  it("bad flags are usage errors that name the problem (exit 2)", () => {
    for (const [args, message] of [
      [
        ["run", "--check", "sometimes", "-"],
        '--check expects one of strict, fallback, off, parse-only, got "sometimes"',
      ],
      [["run", "--globals", file("list.json", "[1]"), "-"], "must be a JSON object of name → value"],
      [["run", "--host", file("nojson.json", "{"), "-"], "is not JSON"],
      [["run", "--bogus", "-"], "unknown option --bogus"],
      [["run"], "no cell to run"],
      [["run", "--corpus", corpusFile, "-"], "--corpus runs the corpus's own cells"],
    ] as const) {
      const out = lash([...args], "finish 1");
      expect(out.status, args.join(" ")).toBe(2);
      expect(out.stderr).toContain(message);
      expect(out.stderr).toContain("usage: lash lashlang run");
    }
  });

  it("lash lashlang --help documents the options", () => {
    const out = lash(["--help"]);
    expect(out.status).toBe(0);
    for (const flag of [
      "--cell",
      "--globals",
      "--host",
      "--check",
      "--snapshot-between-cells",
      "--memory-budget",
      "--corpus",
    ])
      expect(out.stdout).toContain(flag);
  });
});
