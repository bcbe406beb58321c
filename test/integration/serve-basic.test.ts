// `lash serve` end to end: a real daemon child process, the mock wire server as the model.
import { describe, expect, it } from "vitest";
import { api, readSse, serveTests } from "./serve-support.ts";

const t = serveTests();

describe("lash serve", () => {
  it("creates a session, runs a turn and streams its events to the end", async () => {
    const sb = await t.sandbox([{ text: "Hello from the daemon", textChunks: 3 }]);
    const daemon = await t.daemon(sb);
    expect((await api(daemon.url, "GET", "/health")).body).toEqual({ ok: true });
    const created = await api(daemon.url, "POST", "/v1/sessions", { title: "t" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body.owner).toBe("local");
    const started = await api(daemon.url, "POST", `/v1/sessions/${id}/turns`, { text: "hi" });
    expect(started.status).toBe(202);
    const runId = started.body.id as string;
    const { events, ended } = await readSse(`${daemon.url}/v1/runs/${runId}/events`);
    expect(ended).toBe(true);
    const types = events.map((e) => e.event);
    expect(types[0]).toBe("runQueued");
    expect(types).toContain("runStarted");
    expect(types).toContain("turnStarted");
    expect(types.at(-1)).toBe("runFinished");
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const text = events
      .filter((e) => e.event === "textDelta")
      .map((e) => e.data.data.text)
      .join("");
    expect(text).toBe("Hello from the daemon");
    const finished = events.at(-1)!.data.data;
    expect(finished.state).toBe("completed");
    expect(finished.text).toBe("Hello from the daemon");
    const run = await api(daemon.url, "GET", `/v1/runs/${runId}`);
    expect(run.body.state).toBe("completed");
    expect(run.body.lastSeq).toBe(events.at(-1)!.id);
    const messages = await api(daemon.url, "GET", `/v1/sessions/${id}/messages`);
    expect((messages.body.messages as unknown[]).length).toBe(2);
    // SIGTERM with nothing running: a clean stop
    daemon.proc.child.kill("SIGTERM");
    const stopped = await daemon.proc.done;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain("lash serve: stopped");
  });

  it("a reader that reconnects mid-stream with Last-Event-ID gets exactly the rest", async () => {
    const sb = await t.sandbox([{ text: "abcdefghijklmnopqrst", textChunks: 20, chunkDelayMs: 20 }]);
    const daemon = await t.daemon(sb);
    const url = daemon.url;
    const id = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    const runId = (await api(url, "POST", `/v1/sessions/${id}/turns`, { text: "go" })).body.id as string;
    let deltas = 0;
    const part = await readSse(`${url}/v1/sessions/${id}/events`, {
      onEvent: (e) => !(e.event === "textDelta" && ++deltas === 3),
    });
    expect(part.ended).toBe(false);
    const rest = await readSse(`${url}/v1/runs/${runId}/events`, { lastEventId: part.events.at(-1)!.id });
    expect(rest.ended).toBe(true);
    const union = [...part.events, ...rest.events];
    expect(union.map((e) => e.id)).toEqual(union.map((_, i) => i + 1));
    const stored = await readSse(`${url}/v1/runs/${runId}/events?after=0`);
    expect(union.map((e) => [e.id, e.event])).toEqual(stored.events.map((e) => [e.id, e.event]));
    const text = union
      .filter((e) => e.event === "textDelta")
      .map((e) => e.data.data.text)
      .join("");
    expect(text).toBe("abcdefghijklmnopqrst");
  });

  it("cancels a running turn: what finished is kept, the run ends cancelled", async () => {
    const sb = await t.sandbox([
      {
        toolCalls: [{ id: "w", name: "shell", arguments: { command: "echo 1 >> started.txt; sleep 60" } }],
      },
    ]);
    const daemon = await t.daemon(sb);
    const url = daemon.url;
    const id = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    const runId = (await api(url, "POST", `/v1/sessions/${id}/turns`, { text: "go" })).body.id as string;
    await readSse(`${url}/v1/runs/${runId}/events`, { onEvent: (e) => e.event !== "toolStarted" });
    const cancelled = await api(url, "POST", `/v1/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.state).toBe("cancelled");
    const events = await readSse(`${url}/v1/runs/${runId}/events`);
    expect(events.events.at(-1)!.data.data.state).toBe("cancelled");
    expect((await api(url, "GET", `/v1/sessions/${id}`)).body.activeRunId).toBeUndefined();
  });

  it("drops an event-stream reader that cannot keep up, without slowing the run; it catches up by reconnecting", async () => {
    const chunk = "y".repeat(64 * 1024);
    const chunks = 160; // ~10 MB of text: more than the sockets in between can hold
    const sb = await t.sandbox([{ text: chunk.repeat(chunks), textChunks: chunks }]);
    const daemon = await t.daemon(sb, ["--sse-buffer", "20"]);
    const url = daemon.url;
    const id = (await api(url, "POST", "/v1/sessions", {})).body.id as string;
    let finished!: () => void;
    const runDone = new Promise<void>((r) => {
      finished = r;
    });
    const slowP = readSse(`${url}/v1/sessions/${id}/events`, { stallUntil: runDone });
    const run = await api(url, "POST", `/v1/sessions/${id}/turns?wait=true`, { text: "go" });
    expect(run.body.state).toBe("completed");
    finished();
    const slow = await slowP;
    // ended by the server before the run's end
    expect(slow.ended).toBe(true);
    expect(slow.events.some((e) => e.event === "runFinished")).toBe(false);
    const rest = await readSse(`${url}/v1/runs/${run.body.id}/events`, {
      lastEventId: slow.events.at(-1)!.id,
    });
    const union = [...slow.events, ...rest.events];
    expect(union.map((e) => e.id)).toEqual(union.map((_, i) => i + 1));
    expect(union.at(-1)!.event).toBe("runFinished");
    expect(union.filter((e) => e.event === "textDelta")).toHaveLength(chunks);
  }, 120_000);
});
