// Issue 16/21: a tool's model call through `host.llm` is journaled like the turn's own. SIGKILL a
// lash process after the call answered (while the tool still runs), reopen the SQLite file in a
// new process: the re-run tool gets the recorded reply — the mock server sees no second call.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import { afterEach, describe, expect, it } from "vitest";
import { startWorker } from "../../packages/core/test/crash/process.ts";

const worker = join(import.meta.dirname, "llm-capability-worker.ts");
const servers: MockLlmServer[] = [];
const procs: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("host.llm across a crash (SQLite, SIGKILL)", () => {
  it("the tool's model call is not made again after a restart; the re-run tool sees the recorded answer", async () => {
    const server = await startMockServer({
      replies: [
        { toolCalls: [{ name: "ask_then_act", arguments: {} }], usage: { input: 50, output: 5 } },
        { text: "42", usage: { input: 10, output: 1 } },
        { text: "Done.", usage: { input: 70, output: 2 } },
      ],
    });
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), "lash-llm-cap-"));
    dirs.push(dir);
    const db = join(dir, "lash.db");
    const baseUrl = server.baseUrl("openai-chat");

    const first = startWorker(worker, [db, baseUrl, "turn"], { track: procs });
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    expect(await first.waitFor("ANSWER ")).toBe("ANSWER 42");
    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    expect(server.requests).toHaveLength(2);

    const second = startWorker(worker, [db, baseUrl, "resume", sessionId], { track: procs });
    // the same answer, from the journal (a repeated call would have been answered "Done.")
    expect(await second.waitFor("ANSWER ")).toBe("ANSWER 42");
    const committed = JSON.parse((await second.waitFor("COMMITTED ")).slice(10)) as {
      text: string;
      resumed: boolean;
      sources: string[];
    };
    expect((await second.exited).code).toBe(0);
    expect(committed.text).toBe("Done.");
    expect(committed.resumed).toBe(true);
    expect(committed.sources).toContain("ask_then_act");
    // the cut-off turn's model call (recorded) and the sub-call (recorded) are not repeated
    expect(server.requests).toHaveLength(3);
    const last = server.requests[2]!.body as { messages: { role: string; content: unknown }[] };
    expect(JSON.stringify(last.messages.at(-1))).toContain("acted on 42");
  });
});
