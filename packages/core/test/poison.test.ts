// The poison-turn guard with real crashes: a tool that aborts the process is
// idempotent, so each resume runs it again and crashes again. Every resume is
// counted in the pending row before it runs; after three crashed resumes the
// turn is refused (`poisoned`) instead of crashing a fourth time, and
// abandoning it makes the session usable. A crashed holder's lease is taken
// over at once (same host, pid gone), so each resume starts immediately.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "@lash/providers/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openSqliteStore } from "../src/index.ts";
import { startWorker } from "./crash/process.ts";

vi.setConfig({ testTimeout: 120_000 });

const worker = join(import.meta.dirname, "crash", "worker.ts");
const children: ChildProcess[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const close of closers.splice(0)) await close();
});

describe("poison turns (real crashes in child processes)", () => {
  it("three crashed resumes, then the turn is not resumed again; abandon makes the session usable", async () => {
    const server = await startMockServer({
      replies: [
        {
          toolCalls: [{ name: "crash_effect", arguments: { label: "boom" } }],
          usage: { input: 5, output: 5 },
        },
        { text: "after the abandon", usage: { input: 5, output: 5 } },
      ],
    });
    closers.push(() => server.close());
    const dir = mkdtempSync(join(tmpdir(), "lash-poison-"));
    const db = join(dir, "lash.db");
    const counter = join(dir, "counter.txt");
    writeFileSync(counter, "");
    const base = server.baseUrl("openai-chat");
    const run = (mode: string, sessionId?: string) =>
      startWorker(worker, [db, base, counter, mode, "abort", ...(sessionId ? [sessionId] : [])], {
        track: children,
      });

    // the turn itself crashes
    const first = run("turn");
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    expect((await first.exited).signal).toBe("SIGABRT");

    // three resumes, each a real crash; the count rises before each one runs
    for (let attempt = 1; attempt <= 3; attempt++) {
      const r = run("resume", sessionId);
      await r.waitFor("ABORTING");
      expect((await r.exited).signal).toBe("SIGABRT");
      const opened = await openSqliteStore({ filename: db });
      expect((await opened.store.pendingTurn(sessionId))?.resumeAttempts).toBe(attempt);
      await opened.close();
    }
    expect(readFileSync(counter, "utf8").split("\n").filter(Boolean)).toEqual([
      "boom",
      "boom",
      "boom",
      "boom",
    ]);

    // the fourth is refused: nothing runs, the process ends normally
    const refused = run("resume", sessionId);
    const failed = JSON.parse((await refused.waitFor("FAILED ")).slice(7)) as {
      reason: string;
      message: string;
    };
    expect(failed.reason).toBe("poisoned");
    expect(failed.message).toContain(sessionId);
    expect(failed.message).toContain("resumed 3 times");
    expect((await refused.exited).code).toBe(1);
    expect(readFileSync(counter, "utf8").split("\n").filter(Boolean)).toHaveLength(4);
    expect(server.requests).toHaveLength(1); // every resume took the model's answer from the journal

    // the refused process gave its lease back when it ended
    const opened = await openSqliteStore({ filename: db });
    expect(await opened.store.getLease(sessionId)).toBeUndefined();
    expect((await opened.store.pendingTurn(sessionId))?.resumeAttempts).toBe(3);
    await opened.close();

    // abandon it; the next turn runs normally
    const abandon = run("abandon", sessionId);
    const abandoned = JSON.parse((await abandon.waitFor("ABANDONED ")).slice(10)) as Record<string, unknown>;
    expect(abandoned).toMatchObject({ sessionId, resumeAttempts: 3, input: "do the thing" });
    expect((await abandon.exited).code).toBe(0);
    const next = run("turn", sessionId);
    const committed = JSON.parse((await next.waitFor("COMMITTED ")).slice(10)) as { text: string };
    expect(committed.text).toBe("after the abandon");
    expect((await next.exited).code).toBe(0);
  });
});
