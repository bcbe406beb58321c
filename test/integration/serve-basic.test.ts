// `lash serve` end to end: a real daemon child process, the mock wire server as the model.
import { afterEach, describe, expect, it } from "vitest";
import { type Sandbox, sandbox } from "./cli-support.ts";
import { api, type Daemon, readSse, startDaemon } from "./serve-support.ts";

let sb: Sandbox | undefined;
let daemon: Daemon | undefined;

afterEach(async () => {
  if (daemon && daemon.proc.child.exitCode === null) {
    daemon.proc.child.kill("SIGKILL");
    await daemon.proc.done;
  }
  daemon = undefined;
  await sb?.cleanup();
  sb = undefined;
});

describe("lash serve", () => {
  it("creates a session, runs a turn and streams its events to the end", async () => {
    sb = await sandbox([{ text: "Hello from the daemon", textChunks: 3 }]);
    daemon = await startDaemon(sb);
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
  });
});
