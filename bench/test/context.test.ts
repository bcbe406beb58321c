// The context benchmark (bench/perf/context) at a tiny size: a real SqliteStore file, the real
// compaction path with the mock wire server as summariser, fresh worker processes. It reports
// both sessions' figures, and fails (exit 1, no report) when the copy was not compacted.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const RUN = join(import.meta.dirname, "..", "perf", "context", "run.ts");

interface Report {
  readonly name: string;
  readonly table: string;
  readonly goals: string;
  readonly results: {
    readonly nodes: number;
    readonly compaction?: { readonly replaced: number; readonly stages: number };
    readonly summariserCalls: number;
    readonly figures: Record<string, Record<string, number>>;
    readonly turns: Record<string, readonly unknown[]>;
  };
}

function bench(extra: readonly string[]) {
  const dir = mkdtempSync(join(tmpdir(), "lash-context-bench-test-"));
  const out = join(dir, "report.json");
  const child = spawn(
    process.execPath,
    [RUN, "--nodes", "200", "--tail", "10", "--runs", "1", "--json", out, ...extra],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdout.resume();
  return new Promise<{ code: number | null; stderr: string; report?: Report }>((resolve) =>
    child.on("exit", (code) => {
      let report: Report | undefined;
      try {
        report = JSON.parse(readFileSync(out, "utf8")) as Report;
      } catch {
        report = undefined;
      }
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stderr, report });
    }),
  );
}

describe("context benchmark, tiny", () => {
  it("reports open and first-request figures for the compacted and the uncompacted session", async () => {
    const r = await bench([]);
    expect(r.stderr).not.toContain("CONTEXT BENCHMARK FAILED");
    expect(r.code).toBe(0);
    const report = r.report!;
    expect(report.name).toBe("context");
    expect(report.goals).toContain("none set");
    expect(report.results.nodes).toBe(200);
    // the real compaction replaced everything before the tail, one summariser call per stage
    expect(report.results.compaction?.replaced).toBe(190);
    expect(report.results.compaction?.stages).toBe(report.results.summariserCalls);
    const { uncompacted, compacted } = report.results.figures;
    // every message plus the prompt, vs the summary + the tail + the prompt
    expect(uncompacted?.requestMessages).toBe(201);
    expect(compacted?.requestMessages).toBe(12);
    expect(uncompacted!.requestBytes!).toBeGreaterThan(10 * compacted!.requestBytes!);
    for (const f of [uncompacted!, compacted!])
      for (const k of ["openCpuMs", "openMs", "builtCpuMs", "receivedMs", "firstEventCpuMs", "turnMs"])
        expect(f[k], k).toBeGreaterThan(0);
    expect(report.results.turns.compacted).toHaveLength(1);
    expect(report.table).toContain("200 nodes, compacted");
  }, 120_000);

  it("fails (exit 1, no report) when the copy's first request does not hold the summary", async () => {
    const r = await bench(["--sabotage"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("CONTEXT BENCHMARK FAILED");
    expect(r.stderr).toContain("compacted, probe: the summary is missing");
    expect(r.report).toBeUndefined();
  }, 120_000);
});
