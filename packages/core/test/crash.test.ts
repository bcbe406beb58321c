// Crash-resume in real child processes: SIGKILL a lash process at four points
// of a turn and reopen the same SQLite file in a new process.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockReply, startMockServer } from "@lash/providers/testing";
import type { Message } from "@lash/sansio";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../src/store/promise.ts";
import { killWorker, startWorker, type WorkerRun } from "./crash/process.ts";

const worker = join(import.meta.dirname, "crash", "worker.ts");
type Server = Awaited<ReturnType<typeof startMockServer>>;
const servers: Server[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of servers.splice(0)) await s.close();
});

type Run = WorkerRun;
/** The worker's tools: Effect tools (dispatch's general path) or promise tools (its short path). */
let tools: "effect" | "promise" = "effect";
const start = (args: string[], env: Record<string, string> = {}): Run =>
  startWorker(worker, args, { env: { CRASH_TOOLS: tools, ...env }, track: children });
const kill = killWorker;

async function finish(run: Run): Promise<string> {
  const line = await run.waitFor("COMMITTED");
  expect((await run.exited).code).toBe(0);
  return line;
}

const toolCall = (name: string, label: string): MockReply => ({
  toolCalls: [{ name, arguments: { label } }],
  usage: { input: 50, output: 10 },
});
const text = (t: string): MockReply => ({ text: t, usage: { input: 60, output: 5 } });

async function setup(replies: MockReply[]) {
  const server = await startMockServer({ replies });
  servers.push(server);
  const dir = mkdtempSync(join(tmpdir(), "lash-crash-"));
  const db = join(dir, "lash.db");
  const counter = join(dir, "counter.txt");
  writeFileSync(counter, "");
  const baseUrl = server.baseUrl("openai-chat");
  return { server, db, counter, baseUrl };
}

async function inspect(db: string, baseUrl: string, counter: string, sessionId: string) {
  const run = start([db, baseUrl, counter, "inspect", "none", sessionId]);
  const line = await run.waitFor("VIEW ");
  await run.exited;
  return JSON.parse(line.slice(5)) as { messages: Message[]; turnCount: number };
}

const counterLines = (counter: string) => readFileSync(counter, "utf8").split("\n").filter(Boolean);

/** A committed first turn, so every scenario also checks committed turns stay intact. */
async function firstTurn(db: string, baseUrl: string, counter: string) {
  const run = start([db, baseUrl, counter, "turn", "none"], { TURN_TEXT: "warm up" });
  const sessionLine = await run.waitFor("SESSION ");
  await finish(run);
  return sessionLine.slice(8);
}

function noDuplicateIds(messages: Message[]) {
  const ids = messages.map((m) => m.id);
  expect(new Set(ids).size).toBe(ids.length);
}

for (const kind of ["effect", "promise"] as const)
  describe(`crash-resume (SIGKILL in a child process, reopen the same database; ${kind} tools)`, () => {
    beforeEach(() => {
      tools = kind;
    });

    it("(a) during an LLM stream: the completed call and tool are not repeated; the cut call is re-made", async () => {
      const { server, db, counter, baseUrl } = await setup([
        text("ready"),
        toolCall("side_effect", "one"),
        { text: "never finished", hangAfterChunks: 1 },
      ]);
      const sessionId = await firstTurn(db, baseUrl, counter);
      const run = start([db, baseUrl, counter, "turn", "none", sessionId]);
      await server.waitForRequests(3);
      await kill(run);
      expect(counterLines(counter)).toEqual(["one"]);
      server.enqueue(text("all done"));
      const resumed = start([db, baseUrl, counter, "resume", "none", sessionId]);
      const line = await finish(resumed);
      expect(JSON.parse(line.slice(10))).toMatchObject({ text: "all done", resumed: true });
      expect(server.requests).toHaveLength(4); // warm-up, call 1, cut call 2, call 2 again — call 1 not re-requested
      expect(server.requests[3]!.body).toEqual(server.requests[2]!.body);
      expect(counterLines(counter)).toEqual(["one"]);
      const view = await inspect(db, baseUrl, counter, sessionId);
      expect(view.turnCount).toBe(2);
      expect(view.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
      noDuplicateIds(view.messages);
    });

    it('(a\') during the LLM stream after an idempotent tool completed (no "started" row, bookkeeping not yet written): the tool is not run again', async () => {
      const { server, db, counter, baseUrl } = await setup([
        text("ready"),
        toolCall("idem_effect", "read"),
        { text: "never finished", hangAfterChunks: 1 },
      ]);
      const sessionId = await firstTurn(db, baseUrl, counter);
      const run = start([db, baseUrl, counter, "turn", "none", sessionId]);
      await server.waitForRequests(3);
      await kill(run);
      expect(counterLines(counter)).toEqual(["read"]);
      // on disk at the kill: the first answer and the attempt's completion; the batch has no record of its own
      const opened = await openSqliteStore({ filename: db });
      const pending = await opened.store.pendingTurn(sessionId);
      const journal = await opened.store.journalForTurn(sessionId, pending!.turnId);
      await opened.close();
      const statusOf = (re: RegExp) => journal.filter((e) => re.test(e.key)).map((e) => e.status);
      expect(statusOf(/:callLlm:\d+$/)).toEqual(["completed"]);
      expect(statusOf(/:runTools:\d+:child:.*:attempt:1$/)).toEqual(["completed"]);
      expect(statusOf(/:runTools:\d+$/)).toEqual([]);
      server.enqueue(text("all done"));
      const line = await finish(start([db, baseUrl, counter, "resume", "none", sessionId]));
      expect(JSON.parse(line.slice(10))).toMatchObject({ text: "all done", resumed: true });
      // the completed call and tool replay from the journal; the bookkeeping re-run in process asks the same
      expect(server.requests).toHaveLength(4);
      expect(server.requests[3]!.body).toEqual(server.requests[2]!.body);
      expect(counterLines(counter)).toEqual(["read"]);
      const view = await inspect(db, baseUrl, counter, sessionId);
      expect(view.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
      expect(view.messages[4]!.parts[0]).toMatchObject({ type: "toolResult", isError: false });
      noDuplicateIds(view.messages);
    });

    it("(a'') during the third LLM stream: the unrecorded environment syncs replay as before; nothing completed is repeated", async () => {
      // an unchanged environment is recorded once per turn (syncEnvironment): the resumed turn answers
      // the later rounds' syncs with it, so its replayed model calls match their records
      const { server, db, counter, baseUrl } = await setup([
        text("ready"),
        toolCall("side_effect", "one"),
        toolCall("side_effect", "two"),
        { text: "never finished", hangAfterChunks: 1 },
      ]);
      const sessionId = await firstTurn(db, baseUrl, counter);
      const run = start([db, baseUrl, counter, "turn", "none", sessionId]);
      await server.waitForRequests(4);
      await kill(run);
      expect(counterLines(counter)).toEqual(["one", "two"]);
      // on disk: both answers and both attempts; no batch record (a batch is derived from its attempts')
      const opened = await openSqliteStore({ filename: db });
      const pending = await opened.store.pendingTurn(sessionId);
      const journal = await opened.store.journalForTurn(sessionId, pending!.turnId);
      await opened.close();
      const statusOf = (re: RegExp) => journal.filter((e) => re.test(e.key)).map((e) => e.status);
      expect(statusOf(/:callLlm:\d+$/)).toEqual(["completed", "completed"]);
      expect(statusOf(/:runTools:\d+:child:.*:attempt:1$/)).toEqual(["completed", "completed"]);
      expect(statusOf(/:runTools:\d+$/)).toEqual([]);
      server.enqueue(text("all done"));
      const line = await finish(start([db, baseUrl, counter, "resume", "none", sessionId]));
      expect(JSON.parse(line.slice(10))).toMatchObject({ text: "all done", resumed: true });
      // warm-up, calls 1–2, the cut call 3, call 3 again: calls 1 and 2 replayed, not re-requested
      expect(server.requests).toHaveLength(5);
      expect(server.requests[4]!.body).toEqual(server.requests[3]!.body);
      expect(counterLines(counter)).toEqual(["one", "two"]);
      const view = await inspect(db, baseUrl, counter, sessionId);
      expect(view.turnCount).toBe(2);
      expect(view.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
      ]);
      noDuplicateIds(view.messages);
    });

    it("(b) while a non-idempotent tool runs: it is not re-run; the model gets an interrupted result", async () => {
      const { server, db, counter, baseUrl } = await setup([text("ready"), toolCall("side_effect", "once")]);
      const sessionId = await firstTurn(db, baseUrl, counter);
      const run = start([db, baseUrl, counter, "turn", "tool", sessionId]);
      await run.waitFor("TOOL_RUNNING");
      await kill(run);
      server.enqueue(text("understood"));
      await finish(start([db, baseUrl, counter, "resume", "none", sessionId]));
      expect(counterLines(counter)).toEqual(["once"]);
      expect(server.requests).toHaveLength(3);
      const view = await inspect(db, baseUrl, counter, sessionId);
      const toolResult = view.messages[4]!.parts[0]!;
      expect(toolResult).toMatchObject({ type: "toolResult", isError: true });
      expect(JSON.stringify(toolResult)).toContain("interrupted");
      expect(view.messages.at(-1)).toMatchObject({
        role: "assistant",
        parts: [{ type: "text", text: "understood" }],
      });
      noDuplicateIds(view.messages);
    });

    it("(b') while an idempotent tool runs: it is run again", async () => {
      const { server, db, counter, baseUrl } = await setup([text("ready"), toolCall("idem_effect", "again")]);
      const sessionId = await firstTurn(db, baseUrl, counter);
      const run = start([db, baseUrl, counter, "turn", "tool", sessionId]);
      await run.waitFor("TOOL_RUNNING");
      await kill(run);
      server.enqueue(text("ok"));
      await finish(start([db, baseUrl, counter, "resume", "none", sessionId]));
      expect(counterLines(counter)).toEqual(["again", "again"]);
      const view = await inspect(db, baseUrl, counter, sessionId);
      expect(view.messages[4]!.parts[0]).toMatchObject({ type: "toolResult", isError: false });
    });

    it("(c) after tools completed, before the commit: nothing is re-requested or re-run", async () => {
      const { server, db, counter, baseUrl } = await setup([
        text("ready"),
        toolCall("side_effect", "x"),
        text("final answer"),
      ]);
      const sessionId = await firstTurn(db, baseUrl, counter);
      const run = start([db, baseUrl, counter, "turn", "beforeCommit", sessionId]);
      await run.waitFor("BEFORE_COMMIT");
      await kill(run);
      const before = await inspect(db, baseUrl, counter, sessionId);
      expect(before.turnCount).toBe(1); // the cut turn is not committed yet
      const line = await finish(start([db, baseUrl, counter, "resume", "none", sessionId]));
      expect(JSON.parse(line.slice(10))).toMatchObject({ text: "final answer", resumed: true });
      expect(server.requests).toHaveLength(3);
      expect(counterLines(counter)).toEqual(["x"]);
      const view = await inspect(db, baseUrl, counter, sessionId);
      expect(view.turnCount).toBe(2);
      expect(view.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
      noDuplicateIds(view.messages);
    });

    it("(d) right after the commit: reopening re-runs nothing", async () => {
      const { server, db, counter, baseUrl } = await setup([
        text("ready"),
        toolCall("side_effect", "y"),
        text("done"),
      ]);
      const sessionId = await firstTurn(db, baseUrl, counter);
      const run = start([db, baseUrl, counter, "turn", "afterCommit", sessionId]);
      await run.waitFor("COMMITTED");
      await kill(run);
      const line = await finish(start([db, baseUrl, counter, "resume", "none", sessionId]));
      expect(line).toBe("COMMITTED null");
      expect(server.requests).toHaveLength(3);
      expect(counterLines(counter)).toEqual(["y"]);
      const view = await inspect(db, baseUrl, counter, sessionId);
      expect(view.turnCount).toBe(2);
      expect(view.messages).toHaveLength(6);
      noDuplicateIds(view.messages);
    });
  });
