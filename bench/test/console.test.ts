// The console benchmark at its smallest (one timed load): a real project, a real `lash serve`,
// headless Chromium — it passes its checks and reports every figure with its goal.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BenchReport } from "../perf/util.ts";

const RUN = join(import.meta.dirname, "..", "perf", "console", "run.ts");

describe("console benchmark", () => {
  it("measures the bundle and the page loads, and states each goal", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-console-bench-test-"));
    try {
      const out = join(dir, "report.json");
      const child = spawn(process.execPath, [RUN, "--loads", "1", "--json", out], { stdio: "pipe" });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
      });
      child.stdout.resume();
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(stderr).not.toContain("CONSOLE BENCHMARK FAILED");
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(out, "utf8")) as BenchReport & {
        results: { sizes: { file: string; raw: number; gzip: number }[]; cold: { fcp: number }[] };
      };
      expect(report.name).toBe("console");
      expect(report.results.sizes.map((s) => s.file)).toEqual([
        "index.html",
        expect.stringMatching(/^main-\w+\.css$/),
        expect.stringMatching(/^main-\w+\.js$/),
      ]);
      for (const s of report.results.sizes) expect(s.gzip).toBeLessThan(s.raw);
      expect(report.results.cold).toHaveLength(1);
      expect(report.goals).toMatch(/≤ 250 KB gzip — [\d.]+ KB, (met|NOT met)/);
      expect(report.goals).toMatch(/first contentful paint ≤ 1000 ms \(median\) — \d+ ms, (met|NOT met)/);
      expect(report.table).toContain("agent list shown ms");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
