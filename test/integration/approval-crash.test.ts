// Approvals survive a crash (issue 17, acceptance 1): a real lash process SIGKILLed while an
// approval is pending shows the same request (same id, same preview hash) when the turn is
// resumed in a second process; approving runs the tool once. A process killed after the
// answer was recorded but before the tool ran is not asked again on resume.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApprovalRequest } from "@lash/core";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { afterEach, describe, expect, it } from "vitest";
import { startWorker, type WorkerRun } from "../../packages/core/test/crash/process.ts";

const worker = join(import.meta.dirname, "approval-crash-worker.ts");
const servers: MockLlmServer[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of servers.splice(0)) await s.close();
});

const start = (args: string[], env: Record<string, string> = {}): WorkerRun =>
  startWorker(worker, args, { env, track: children });

async function setup(
  replies: MockReply[] = [
    { toolCalls: [{ name: "append", arguments: { label: "once" } }], usage: { input: 50, output: 10 } },
    { text: "appended", usage: { input: 60, output: 5 } },
  ],
) {
  const server = await startMockServer({ replies });
  servers.push(server);
  const dir = mkdtempSync(join(tmpdir(), "lash-approval-crash-"));
  const db = join(dir, "lash.db");
  const counter = join(dir, "counter.txt");
  writeFileSync(counter, "");
  const counterLines = () => readFileSync(counter, "utf8").split("\n").filter(Boolean);
  return { server, db, counter, baseUrl: server.baseUrl("openai-chat"), counterLines };
}

const asked = (line: string) => JSON.parse(line.slice("ASKED ".length)) as ApprovalRequest;

describe("approval crash-resume (SIGKILL in a child process, same SQLite file)", () => {
  it("killed while the approval is pending: the resume shows the same request; approving runs the tool once", async () => {
    const { server, db, counter, baseUrl, counterLines } = await setup();
    const first = start([db, baseUrl, counter, "turn", "wait"]);
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    const before = asked(await first.waitFor("ASKED "));
    first.child.kill("SIGKILL");
    await first.exited;
    expect(before.items.map((i) => [i.tool, i.args, i.preview?.summary])).toEqual([
      ["append", { label: "once" }, "append once to the counter file"],
    ]);
    expect(counterLines()).toEqual([]);
    expect(server.requests).toHaveLength(1);

    const second = start([db, baseUrl, counter, "resume", "approve", sessionId]);
    const after = asked(await second.waitFor("ASKED "));
    const committed = await second.waitFor("COMMITTED ");
    expect((await second.exited).code).toBe(0);
    // the same request: same id, same items, same preview hash
    expect(after.id).toBe(before.id);
    expect(after.items[0]!.previewHash).toBe(before.items[0]!.previewHash);
    expect(after).toEqual(before);
    expect(counterLines()).toEqual(["once"]);
    // the model was not asked again for the call it had already made
    expect(server.requests).toHaveLength(2);
    const result = JSON.parse(committed.slice("COMMITTED ".length));
    expect(result).toMatchObject({ text: "appended", resumed: true });
    expect(result.approvals).toEqual([
      expect.objectContaining({
        requestId: before.id,
        tool: "append",
        decision: "approve",
        by: "approve-all",
        layer: "test policy",
        previewHash: before.items[0]!.previewHash,
      }),
    ]);
  });

  it("killed after the answer was recorded, before the tool ran: the resume does not ask again and runs it once", async () => {
    const { server, db, counter, baseUrl, counterLines } = await setup();
    const first = start([db, baseUrl, counter, "turn", "approve"], { BLOCK_AFTER_APPROVAL: "1" });
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    const request = asked(await first.waitFor("ASKED "));
    await first.waitFor("APPROVED");
    first.child.kill("SIGKILL");
    await first.exited;
    expect(counterLines()).toEqual([]);

    // an approver that fails if asked: the recorded answer must be used
    const second = start([db, baseUrl, counter, "resume", "fail", sessionId]);
    const committed = await second.waitFor("COMMITTED ");
    expect((await second.exited).code).toBe(0);
    expect(second.lines.some((l) => l.startsWith("ASKED "))).toBe(false);
    const resolved = JSON.parse((await second.waitFor("RESOLVED ")).slice("RESOLVED ".length));
    expect(resolved).toMatchObject({ requestId: request.id, by: "approve-all", replayed: true });
    expect(counterLines()).toEqual(["once"]);
    expect(server.requests).toHaveLength(2);
    const result = JSON.parse(committed.slice("COMMITTED ".length));
    expect(result.approvals).toEqual([
      expect.objectContaining({ requestId: request.id, decision: "approve" }),
    ]);
  });

  it("a tool approved for the session earlier in the cut-off turn is not asked about again on resume", async () => {
    const { server, db, counter, baseUrl, counterLines } = await setup([
      { toolCalls: [{ name: "append", arguments: { label: "first" } }] },
      { toolCalls: [{ name: "append", arguments: { label: "second" } }] },
      { text: "both" },
    ]);
    const first = start([db, baseUrl, counter, "turn", "session"], { HANG_LABEL: "second" });
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    await first.waitFor("TOOL_RUNNING");
    first.child.kill("SIGKILL");
    await first.exited;
    // asked once: the second call ran on the session grant
    expect(first.lines.filter((l) => l.startsWith("ASKED "))).toHaveLength(1);
    expect(counterLines()).toEqual(["first", "second"]);

    // the first batch is replayed whole from the journal; its grant still holds for the second
    const second = start([db, baseUrl, counter, "resume", "fail", sessionId]);
    await second.waitFor("COMMITTED ");
    expect((await second.exited).code).toBe(0);
    expect(second.lines.some((l) => l.startsWith("ASKED "))).toBe(false);
    // the interrupted call is not run again (not idempotent): no line added
    expect(counterLines()).toEqual(["first", "second"]);
    expect(server.requests).toHaveLength(3);
  });

  it("killed mid-batch after one call was approved for the session and one once: the resume replays the answer", async () => {
    const { server, db, counter, baseUrl, counterLines } = await setup([
      {
        toolCalls: [
          { name: "append", arguments: { label: "a" } },
          { name: "note", arguments: { label: "b" } },
        ],
      },
      { text: "both" },
    ]);
    const first = start([db, baseUrl, counter, "turn", "mixed"], { HANG_LABEL: "b" });
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    const request = asked(await first.waitFor("ASKED "));
    expect(request.items.map((i) => i.tool)).toEqual(["append", "note"]);
    await first.waitFor("TOOL_RUNNING");
    first.child.kill("SIGKILL");
    await first.exited;
    const atKill = counterLines();
    expect(atKill).toContain("note:b");

    // the cut-off turn's session grant (append) is rebuilt before the batch runs again; the
    // batch's recorded request still holds both calls, so its recorded answer is used as is
    const second = start([db, baseUrl, counter, "resume", "fail", sessionId]);
    const committed = await second.waitFor("COMMITTED ");
    expect((await second.exited).code).toBe(0);
    expect(second.lines.some((l) => l.startsWith("ASKED ") || l.startsWith("FAILED "))).toBe(false);
    const resolved = JSON.parse((await second.waitFor("RESOLVED ")).slice("RESOLVED ".length));
    expect(resolved).toMatchObject({ requestId: request.id, replayed: true });
    // nothing ran twice (neither tool is idempotent)
    expect(counterLines()).toEqual(atKill);
    expect(server.requests).toHaveLength(2);
    expect(JSON.parse(committed.slice("COMMITTED ".length)).approvals).toEqual([
      expect.objectContaining({ tool: "append", decision: "approve", scope: "session", level: "high" }),
      expect.objectContaining({ tool: "note", decision: "approve", scope: "once" }),
    ]);
  });

  it("no answer to be had: the turn fails with reason approval, and the request stays pending for a later resume", async () => {
    const { db, counter, baseUrl, counterLines } = await setup();
    const first = start([db, baseUrl, counter, "turn", "fail"]);
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    const request = asked(await first.waitFor("ASKED "));
    const failed = JSON.parse((await first.waitFor("FAILED ")).slice("FAILED ".length));
    await first.exited;
    expect(failed.reason).toBe("approval");
    expect(failed.message).toContain("append needs an approval, and none could be had: no approver here.");
    expect(counterLines()).toEqual([]);

    const second = start([db, baseUrl, counter, "resume", "approve", sessionId]);
    expect(asked(await second.waitFor("ASKED ")).id).toBe(request.id);
    await second.waitFor("COMMITTED ");
    expect((await second.exited).code).toBe(0);
    expect(counterLines()).toEqual(["once"]);
  });
});
