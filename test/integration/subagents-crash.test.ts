// Crash-resume of subagents in real processes: a parent (SQLite store) spawns
// two children one after the other; the process is SIGKILLed while the second
// child waits on the model. A new process resumes the parent: the first child is
// not run again, the second child resumes its own pending turn (no new child).
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import type { Message, ToolResultPart } from "@lash/sansio";
import { afterEach, describe, expect, it } from "vitest";
import { startWorker, type WorkerRun } from "../../packages/core/test/crash/process.ts";
import { parse, type Req } from "../../packages/subagents/test/helpers.ts";

const worker = join(import.meta.dirname, "../../packages/subagents/test/fixtures/crash-worker.ts");
const servers: MockLlmServer[] = [];
const procs: ChildProcess[] = [];

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  for (const s of servers.splice(0)) await s.close();
});

const start = (args: readonly string[]): WorkerRun => startWorker(worker, args, { track: procs });

describe("subagents crash-resume (SQLite, SIGKILL)", () => {
  it("a child that finished before the crash is not re-run; the running child resumes from its own journal", async () => {
    const seen: Req[] = [];
    let releaseB = false;
    let bArrived!: () => void;
    const bWaiting = new Promise<void>((r) => {
      bArrived = r;
    });
    const server = await startMockServer({
      responder: (raw) => {
        const req = parse(raw);
        seen.push(req);
        if (req.first.startsWith("PARENT")) {
          if (req.step === 0)
            return {
              toolCalls: [
                { id: "call_a", name: "spawn_agent", arguments: { task: "CHILD-A", capability: "explore" } },
              ],
              usage: { input: 100, output: 10 },
            };
          if (req.step === 1)
            return {
              toolCalls: [
                { id: "call_b", name: "spawn_agent", arguments: { task: "CHILD-B", capability: "peer" } },
              ],
              usage: { input: 120, output: 10 },
            };
          return { text: `both done: ${req.results[0]?.text}`, usage: { input: 140, output: 10 } };
        }
        if (req.first.startsWith("CHILD-A")) return { text: "A-result", usage: { input: 50, output: 5 } };
        if (req.step === 0)
          return {
            toolCalls: [{ id: "b_read", name: "read_notes", arguments: {} }],
            usage: { input: 30, output: 3 },
          };
        if (!releaseB) {
          bArrived();
          return { hang: true };
        }
        return { text: "B-result", usage: { input: 60, output: 6 } };
      },
    });
    servers.push(server);
    const db = join(mkdtempSync(join(tmpdir(), "lash-subagents-crash-")), "lash.db");
    const baseUrl = server.baseUrl("anthropic");

    // 1. run until the second child waits on the model, then kill the process
    const first = start([db, baseUrl, "start"]);
    const parentId = (await first.waitFor("PARENT ")).slice("PARENT ".length);
    await bWaiting;
    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    const before = seen.map((r) => r.first.split("\n")[0]);
    expect(before).toEqual([
      "PARENT two children in a row",
      "CHILD-A",
      "PARENT two children in a row",
      "CHILD-B",
      "CHILD-B",
    ]);
    expect(seen[4]!.step).toBe(1);

    // 2. a new process resumes the parent's turn
    releaseB = true;
    const second = start([db, baseUrl, "resume", parentId]);
    const line = await second.waitFor("RESULT ");
    expect((await second.exited).code).toBe(0);
    const result = JSON.parse(line.slice("RESULT ".length)) as {
      resumed: boolean;
      outcome: unknown;
      text: string;
      children: { id: string; title: string; parentLink: unknown; turnCount: number }[];
      childUsage: { id: string; usage: unknown }[];
      bySource: { source: string; usage: unknown }[];
      transcript: Message[];
    };
    const after = seen.slice(before.length).map((r) => r.first.split("\n")[0]);
    // the first child is not run again; the parent's recorded model calls are not repeated;
    // only the second child's interrupted model call and the parent's final call are made
    expect(after).toEqual(["CHILD-B", "PARENT two children in a row"]);
    expect(seen.filter((r) => r.first.startsWith("CHILD-A"))).toHaveLength(1);
    // child B resumed from its own journal: its first model call and its read_notes call were
    // replayed, only its interrupted second call went to the model again
    expect(seen[5]!.step).toBe(1);
    expect(seen[5]!.results).toEqual([{ id: "b_read", text: "notes: alpha, beta", isError: false }]);

    expect(result.resumed).toBe(true);
    expect(result.outcome).toEqual({
      type: "finished",
      finish: { kind: "assistantMessage", text: "both done: B-result" },
    });
    // still exactly two children: the second was resumed, not spawned again
    expect(result.children).toHaveLength(2);
    const a = result.children.find((c) => c.title === "CHILD-A")!;
    const b = result.children.find((c) => c.title === "CHILD-B")!;
    expect(a.parentLink).toEqual({ sessionId: parentId, callId: "call_a", depth: 1 });
    expect(b.parentLink).toEqual({ sessionId: parentId, callId: "call_b", depth: 1 });
    expect(a.turnCount).toBe(1);
    expect(b.turnCount).toBe(1);

    const results = new Map<string, ToolResultPart>();
    for (const m of result.transcript)
      for (const p of m.parts) if (p.type === "toolResult") results.set(p.callId, p);
    expect(results.get("call_a")).toMatchObject({ isError: false, value: "A-result" });
    expect(results.get("call_b")).toMatchObject({ isError: false, value: "B-result" });

    // both children's usage is in the parent's ledger exactly once
    const agentRows = result.bySource.filter((g) => g.source.startsWith("agent:"));
    expect(agentRows.map((g) => g.source).sort()).toEqual([`agent:${a.id}`, `agent:${b.id}`].sort());
    expect(agentRows.find((g) => g.source === `agent:${a.id}`)!.usage).toEqual({ input: 50, output: 5 });
    expect(agentRows.find((g) => g.source === `agent:${b.id}`)!.usage).toEqual({ input: 90, output: 9 });
  });
});
