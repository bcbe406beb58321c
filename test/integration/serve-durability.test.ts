// `lash serve` durability: kill -9 during a tool call and restart on the same state; kill -9
// right after a commit; SIGTERM drain.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { api, fileLine, readSse, type SseEvent, serveTests } from "./serve-support.ts";

const t = serveTests();
const daemon = t.daemon;

const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);

/** The ids are exactly 1…n, each once. */
function expectFullSequence(events: readonly SseEvent[]): void {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
}

describe("lash serve durability", () => {
  it("kill -9 during a tool call: the restarted daemon resumes the run, runs no tool and no model call twice, and the stream continues", async () => {
    const sb = await t.sandbox([
      {
        toolCalls: [
          { id: "c1", name: "shell", arguments: { command: "echo ran >> counter.txt && sleep 60" } },
        ],
      },
      { text: "recovered" },
      { text: "queued one" },
    ]);
    const first = await daemon(sb);
    const { body: session } = await api(first.url, "POST", "/v1/sessions", {});
    const sessionId = session.id as string;
    const { body: run } = await api(first.url, "POST", `/v1/sessions/${sessionId}/turns`, { text: "go" });
    const runId = run.id as string;
    const seen = await readSse(`${first.url}/v1/sessions/${sessionId}/events`, {
      onEvent: (e) => e.event !== "toolStarted",
    });
    await fileLine(join(sb.cwd, "counter.txt"));
    const queued = await api(first.url, "POST", `/v1/sessions/${sessionId}/turns`, { text: "next" });
    expect(queued.body.state).toBe("queued");
    first.proc.child.kill("SIGKILL");
    await first.proc.done;
    expect(seen.events.at(-1)?.event).toBe("toolStarted");
    expect(sb.server.requests).toHaveLength(1);

    const second = await daemon(sb);
    const rest = await readSse(`${second.url}/v1/sessions/${sessionId}/events`, {
      lastEventId: seen.events.at(-1)!.id,
      onEvent: (e) => !(e.event === "runFinished" && e.data.runId === runId),
    });
    const all = [...seen.events, ...rest.events];
    expectFullSequence(all);
    const types = rest.events.map((e) => e.event);
    expect(types[0]).toBe("runQueued"); // the second turn, queued before the crash
    expect(types).toContain("runResumed");
    expect(types.at(-1)).toBe("runFinished");
    expect(rest.events.at(-1)!.data.data.state).toBe("completed");
    expect(rest.events.at(-1)!.data.data.text).toBe("recovered");
    // one tool call logged once, one model response per model call
    expect(all.filter((e) => e.event === "toolCompleted")).toHaveLength(1);
    expect(all.filter((e) => e.event === "runStarted")).toHaveLength(1);
    expect(all.filter((e) => e.event === "llmResponse").map((e) => e.data.data.iteration)).toEqual([0, 1]);
    expect(all.filter((e) => e.event === "llmRequest").map((e) => e.data.data.iteration)).toEqual([0, 1]);
    expect(all.filter((e) => e.event === "toolStarted")).toHaveLength(1);
    expect(all.filter((e) => e.event === "usage")).toHaveLength(2);
    // each message is published once: the user's, the tool call, the tool result, the answer
    expect(
      all
        .filter((e) => e.event === "messages")
        .flatMap((e) => e.data.data.messages as { role: string }[])
        .map((m) => m.role),
    ).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(lines(join(sb.cwd, "counter.txt"))).toEqual(["ran"]);
    const nextEvents = await readSse(`${second.url}/v1/runs/${queued.body.id}/events`);
    expect(nextEvents.events.at(-1)!.data.data).toMatchObject({ state: "completed", text: "queued one" });
    expect(sb.server.requests).toHaveLength(3);
    const { body: after } = await api(second.url, "GET", `/v1/runs/${runId}`);
    expect(after.state).toBe("completed");
    expect(after.resumes).toBe(1);
    // the whole session log read again: the same events, nothing duplicated
    const full = await readSse(`${second.url}/v1/sessions/${sessionId}/events`, {
      onEvent: (e) => !(e.event === "runFinished" && e.data.runId === queued.body.id),
    });
    expect(full.events.map((e) => e.id)).toEqual(full.events.map((_, i) => i + 1));
    const ofRun = full.events.filter((e) => e.data.runId === runId);
    expect(ofRun.map((e) => [e.id, e.event])).toEqual(
      all.filter((e) => e.data.runId === runId).map((e) => [e.id, e.event]),
    );
  });

  it("SIGTERM drains: new turns get 503, a run that finishes in time completes, one that does not is resumed by the next daemon", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ id: "b1", name: "shell", arguments: { command: "echo b >> b.txt && sleep 60" } }] },
      {
        toolCalls: [
          {
            id: "a1",
            name: "shell",
            arguments: { command: "echo a >> a.txt; while [ ! -f go ]; do sleep 0.05; done" },
          },
        ],
      },
      { text: "A done" },
      { text: "B done" },
    ]);
    const first = await daemon(sb, ["--drain-timeout", "5000"]);
    const mk = async () => (await api(first.url, "POST", "/v1/sessions", {})).body.id as string;
    const [sa, sbId] = [await mk(), await mk()];
    const runB = (await api(first.url, "POST", `/v1/sessions/${sbId}/turns`, { text: "b" })).body
      .id as string;
    await fileLine(join(sb.cwd, "b.txt"));
    const runA = (await api(first.url, "POST", `/v1/sessions/${sa}/turns`, { text: "a" })).body.id as string;
    await fileLine(join(sb.cwd, "a.txt"));
    first.proc.child.kill("SIGTERM");
    await first.proc.waitForLine((l) => l.includes("draining"));
    const refused = await api(first.url, "POST", `/v1/sessions/${sa}/turns`, { text: "late" });
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe("draining");
    writeFileSync(join(sb.cwd, "go"), "");
    const exited = await first.proc.done;
    expect(exited.code).toBe(0);

    const second = await daemon(sb);
    const a = (await api(second.url, "GET", `/v1/runs/${runA}`)).body;
    expect(a.state).toBe("completed");
    expect(a.text).toBe("A done");
    expect(a.resumes).toBe(0);
    const rest = await readSse(`${second.url}/v1/runs/${runB}/events`);
    expect(rest.events.at(-1)!.data.data).toMatchObject({ state: "completed", text: "B done" });
    expectFullSequence(rest.events);
    const b = (await api(second.url, "GET", `/v1/runs/${runB}`)).body;
    expect(b.resumes).toBe(1);
    expect(lines(join(sb.cwd, "b.txt"))).toEqual(["b"]);
    expect(sb.server.requests).toHaveLength(4);
  });

  it("kill -9 right after the commit, before the run recorded it: the next daemon finishes the run from the commit, with its text, and asks the model nothing", async () => {
    const sb = await t.sandbox([{ text: "the committed answer" }, { text: "asked again" }]);
    // the test hook: the daemon kills itself (SIGKILL) once the turn is committed
    const first = await daemon(sb, [], { env: { LASH_TEST_KILL_AFTER_COMMIT: "1" } });
    const sessionId = (await api(first.url, "POST", "/v1/sessions", {})).body.id as string;
    const runId = (await api(first.url, "POST", `/v1/sessions/${sessionId}/turns`, { text: "answer" })).body
      .id as string;
    const died = await first.proc.done;
    expect(died.signal).toBe("SIGKILL");
    expect(sb.server.requests).toHaveLength(1);

    const second = await daemon(sb);
    const rest = await readSse(`${second.url}/v1/runs/${runId}/events`);
    expect(rest.events.at(-1)!.data.data).toMatchObject({
      state: "completed",
      text: "the committed answer",
      outcome: { type: "finished", finish: { kind: "assistantMessage", text: "the committed answer" } },
    });
    expectFullSequence(rest.events);
    const run = (await api(second.url, "GET", `/v1/runs/${runId}`)).body;
    expect(run).toMatchObject({ state: "completed", text: "the committed answer", resumes: 1 });
    // not run again: one model call in all, and the session holds the turn once
    expect(sb.server.requests).toHaveLength(1);
    const messages = (await api(second.url, "GET", `/v1/sessions/${sessionId}/messages`)).body.messages as {
      role: string;
    }[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("two daemons on one state db: the second leaves the first's running run alone; after the first is killed, the next daemon to start adopts it, once", async () => {
    const sb = await t.sandbox([
      {
        toolCalls: [
          {
            id: "c1",
            name: "shell",
            arguments: { command: "echo ran >> counter.txt; while [ ! -f release ]; do sleep 0.05; done" },
          },
        ],
      },
      { text: "adopted" },
    ]);
    const first = await daemon(sb);
    const { body: session } = await api(first.url, "POST", "/v1/sessions", {});
    const { body: run } = await api(first.url, "POST", `/v1/sessions/${session.id}/turns`, { text: "go" });
    await fileLine(join(sb.cwd, "counter.txt"));
    // a second daemon on the same state db while the first executes the run: not its to resume
    const second = await daemon(sb);
    expect((await api(second.url, "GET", "/ready")).body).toEqual({ ready: true, resumed: 0 });
    first.proc.child.kill("SIGKILL");
    await first.proc.done;
    // the first is gone: the next daemon that starts adopts its run (the second, already up, does not)
    const third = await daemon(sb);
    expect((await api(third.url, "GET", "/ready")).body).toEqual({ ready: true, resumed: 1 });
    writeFileSync(join(sb.cwd, "release"), "");
    const events = await readSse(`${third.url}/v1/runs/${run.id}/events`);
    expect(events.events.at(-1)!.data.data).toMatchObject({ state: "completed", text: "adopted" });
    expect((await api(second.url, "GET", `/v1/runs/${run.id}`)).body).toMatchObject({
      state: "completed",
      resumes: 1,
    });
    // the cut-off tool was not run again; the model was asked once more, after it
    expect(lines(join(sb.cwd, "counter.txt"))).toEqual(["ran"]);
    expect(sb.server.requests).toHaveLength(2);
  });
});
