// The serve benchmark's checks (the benchmark itself runs under `pnpm bench`): the chunk stamps
// read back, the SSE reader against a real HTTP server, and the whole benchmark at a small size —
// a real `lash serve`, the mock in its own process — passing, and failing when one subscriber
// misses an event.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chunksOf, chunkText, follow, isReplyText, type SseEvent } from "../perf/serve/shape.ts";

const RUN = join(import.meta.dirname, "..", "perf", "serve", "run.ts");

describe("serve benchmark: the reply's chunks", () => {
  it("stamps read back in order; a reply is exactly its chunks", () => {
    const at = 1_764_000_000_123.456;
    const text = [0, 1, 2].map((k) => chunkText(k, at)).join("");
    expect(chunksOf(text)).toEqual([0, 1, 2].map((k) => ({ k, sentAt: at })));
    expect(isReplyText(text, 3)).toBe(true);
    expect(isReplyText(text, 4)).toBe(false);
    expect(isReplyText(`${text}x`, 3)).toBe(false);
    expect(isReplyText([0, 2, 1].map((k) => chunkText(k, at)).join(""), 3)).toBe(false);
    // a paced reply: each chunk stamped as it is written, never earlier than the one before
    expect(isReplyText([0, 1, 2].map((k) => chunkText(k, at + k * 20)).join(""), 3)).toBe(true);
    expect(isReplyText([0, 1, 2].map((k) => chunkText(k, at - k)).join(""), 3)).toBe(false);
  });
});

describe("serve benchmark: the SSE reader", () => {
  it("parses events across TCP writes, skips comments, sends Last-Event-ID, reports the end", async () => {
    let lastEventId: string | undefined;
    const server = createServer((req, res) => {
      lastEventId = req.headers["last-event-id"] as string | undefined;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": keepalive\n\nid: 8\nevent: textDelta\nda");
      setImmediate(() => res.end('ta: {"a":1}\n\nid: 9\nevent: runFinished\ndata: {}\n\n'));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const got: SseEvent[] = [];
    const why = await new Promise<string>((resolve) => {
      follow(`http://127.0.0.1:${port}/x`, 7, { onEvent: (e) => got.push(e), onEnd: resolve });
    });
    server.close();
    expect(lastEventId).toBe("7");
    expect(got).toEqual([
      { id: 8, event: "textDelta", data: '{"a":1}' },
      { id: 9, event: "runFinished", data: "{}" },
    ]);
    expect(why).toBe("ended by the server");
  });
});

/** Run the benchmark small; its exit code, stderr and report. */
function bench(extra: readonly string[]) {
  const dir = mkdtempSync(join(tmpdir(), "lash-serve-bench-test-"));
  const out = join(dir, "report.json");
  const args = ["--sessions", "2", "--subscribers", "4", "--turns", "2", "--chunks", "3", "--workers", "1"];
  const child = spawn(process.execPath, [RUN, ...args, "--json", out, ...extra], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdout.resume();
  return new Promise<{ code: number | null; stderr: string; report?: { results: Record<string, unknown> } }>(
    (resolve) =>
      child.on("exit", (code) => {
        let report: { results: Record<string, unknown> } | undefined;
        try {
          report = JSON.parse(readFileSync(out, "utf8"));
        } catch {
          report = undefined;
        }
        rmSync(dir, { recursive: true, force: true });
        resolve({ code, stderr, report });
      }),
  );
}

describe("serve benchmark: end to end, small", () => {
  it("passes its checks: every subscriber got every event; figures reported", async () => {
    const r = await bench([]);
    expect(r.stderr).not.toContain("SERVE BENCHMARK FAILED");
    expect(r.code).toBe(0);
    // two phases (paced, burst) × 2 sessions × 2 turns
    expect(r.report?.results).toMatchObject({ runs: 8, lost: 0, subscribers: 4 });
    for (const phase of ["paced", "burst"]) {
      const { runs, latencyMs } = (r.report?.results[phase] ?? {}) as {
        runs: number;
        latencyMs: { samples: number; p95: number };
      };
      expect(runs).toBe(4);
      // 4 runs × 2 subscribers per session × 3 chunks
      expect(latencyMs.samples).toBe(24);
      expect(latencyMs.p95).toBeGreaterThan(0);
    }
  }, 120_000);

  it("fails (exit 1, no report) when a subscriber misses an event", async () => {
    const r = await bench(["--sabotage"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("SERVE BENCHMARK FAILED");
    expect(r.stderr).toMatch(/seq \d+ after \d+/);
    expect(r.report).toBeUndefined();
  }, 120_000);
});
