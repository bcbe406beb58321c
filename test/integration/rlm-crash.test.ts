// Crash-resume of an RLM cell in real child processes: SIGKILL the process while a cell waits on
// its second tool call (the first completed), reopen the same SQLite file in a new process.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import { afterEach, describe, expect, it } from "vitest";
import { startWorker, type WorkerRun } from "../../packages/core/test/crash/process.ts";
import { cell } from "./rlm-support.ts";

const worker = join(import.meta.dirname, "rlm-crash-worker.ts");
const servers: MockLlmServer[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of servers.splice(0)) await s.close();
});

const start = (args: string[], env: Record<string, string> = {}): WorkerRun =>
  startWorker(worker, args, { env, track: children });

describe("rlm crash-resume (SIGKILL in a child process, same SQLite file)", () => {
  it("a cell killed after its first of two tool calls: on resume the first is not re-run, no model call is repeated", async () => {
    const server = await startMockServer({
      replies: [
        cell("x = 41\nprint x"),
        cell(
          'a = await side.bump({ label: "first" })?\nb = await side.hang({ label: "second" })?\nfinish { a: a, b: b, x: x + 1 }',
        ),
      ],
    });
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), "lash-rlm-crash-"));
    const db = join(dir, "lash.db");
    const counter = join(dir, "counter.txt");
    writeFileSync(counter, "");
    const baseUrl = server.baseUrl("openai-chat");
    const counterLines = () => readFileSync(counter, "utf8").split("\n").filter(Boolean);

    const first = start([db, baseUrl, counter, "turn"], { HANG: "1" });
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    await first.waitFor("HANG_RUNNING");
    first.child.kill("SIGKILL");
    await first.exited;
    expect(counterLines()).toEqual(["first", "second"]);
    expect(server.requests).toHaveLength(2);

    const resumed = start([db, baseUrl, counter, "resume", sessionId]);
    const line = await resumed.waitFor("COMMITTED ");
    expect((await resumed.exited).code).toBe(0);
    const result = JSON.parse(line.slice(10)) as {
      outcome: unknown;
      resumed: boolean;
      turnCount: number;
      state: { frames: Record<string, { globals: Record<string, unknown> }> };
    };
    // the cell finished with the first call's recorded result and the variable of the replayed cell
    expect(result.outcome).toEqual({
      type: "finished",
      finish: { kind: "finalValue", value: { a: "bumped first", b: "waited second", x: 42 } },
    });
    expect(result.resumed).toBe(true);
    expect(result.turnCount).toBe(1);
    // `bump` (completed before the kill) ran once; `hang` (idempotent, cut off) ran again
    expect(counterLines()).toEqual(["first", "second", "second"]);
    // both model calls came from the journal: nothing was re-requested
    expect(server.requests).toHaveLength(2);
    expect(Object.values(result.state.frames)[0]!.globals).toMatchObject({ x: 41, a: "bumped first" });
  });
});
