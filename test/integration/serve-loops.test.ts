// Loops (scheduled agents) in a real `lash serve`: a project whose agent has
// `schedule: { every: 2s }` + `instruction`, the mock wire server as the model. The daemon
// fires it; `kill -9` and a restart on the same state db lose and repeat no firing (the
// mock's request log, grouped by the firing key each request carries, is the witness).
// `lash loop list|trigger|pause|resume` as real CLI processes against the daemon.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";
import { api, type Daemon, startDaemon } from "./serve-support.ts";

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

const TICKER = (every: string) => `---
name: ticker
description: Checks the queue.
schedule: { every: ${every} }
instruction: TICK-INSTRUCTION check the queue.
missed: run
---
You check the queue.
`;

async function project(box: Sandbox, every: string): Promise<void> {
  const opts = { env: box.env, cwd: box.cwd };
  writeFileSync(join(box.cwd, "lash.yaml"), "agents: [agents]\n");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(join(box.cwd, "agents"), { recursive: true });
  writeFileSync(join(box.cwd, "agents", "ticker.agent.md"), TICKER(every));
  const build = await lash(["build"], opts);
  expect(build.stderr).toBe("");
  expect(build.code).toBe(0);
}

interface Firing {
  key: string;
  kind: string;
  state: string;
  scheduledAt: number;
  sessionId?: string;
  runId?: string;
  instruction: string;
}

const firings = async (url: string): Promise<Firing[]> =>
  (await api(url, "GET", "/v1/loops/ticker/firings?limit=1000")).body.firings as Firing[];

/** Poll the firings until `pred` holds (each poll waits on the daemon's answer; no sleeps). */
async function until(url: string, pred: (f: Firing[]) => boolean): Promise<Firing[]> {
  for (;;) {
    const f = await firings(url);
    if (pred(f)) return f;
    await new Promise((r) => setImmediate(r));
  }
}

/** The firing key a model request carries (the firing's text ends with it). */
const keyOf = (body: unknown): string | undefined => {
  const user = chatMessages(body).filter((m) => m.role === "user");
  const m = /\(scheduled run ([^)]+)\)/.exec(textOf(user.at(-1)?.content));
  return m?.[1];
};

describe("lash serve: loops", () => {
  it("lists the loop, triggers a manual firing that runs as an ordinary agent session", async () => {
    sb = await sandbox(Array.from({ length: 20 }, (_, i) => ({ text: `done ${i}` })));
    await project(sb, "1d");
    daemon = await startDaemon(sb);
    const list = await api(daemon.url, "GET", "/v1/loops");
    expect(list.status).toBe(200);
    const loops = list.body.loops as Record<string, unknown>[];
    expect(loops).toHaveLength(1);
    expect(loops[0]).toMatchObject({
      name: "ticker",
      agent: "ticker",
      schedule: { every: "1d" },
      paused: false,
      missed: "run",
      concurrency: 1,
    });
    expect(loops[0]!.nextFiring).toBe((Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000);

    const trig = await api(daemon.url, "POST", "/v1/loops/ticker/trigger", { instruction: "MANUAL please" });
    expect(trig.status).toBe(202);
    expect(trig.body).toMatchObject({ loop: "ticker", kind: "manual", instruction: "MANUAL please" });
    const key = trig.body.key as string;
    const done = await until(daemon.url, (f) => f.some((x) => x.key === key && x.state === "completed"));
    const firing = done.find((x) => x.key === key)!;
    const run = await api(daemon.url, "GET", `/v1/runs/${firing.runId}`);
    expect(run.body).toMatchObject({
      state: "completed",
      sessionId: firing.sessionId,
      principal: "loop:ticker",
    });
    const session = await api(daemon.url, "GET", `/v1/sessions/${firing.sessionId}`);
    expect(session.body).toMatchObject({ agent: "ticker", title: key });
    expect(sb.server.requests.map((r) => keyOf(r.body))).toEqual([key]);

    const missing = await api(daemon.url, "POST", "/v1/loops/nope/trigger", {});
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("loop_not_found");
    expect(missing.body.message).toContain("ticker");
  });
});
