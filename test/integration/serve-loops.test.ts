// Loops (scheduled agents) in a real `lash serve`: a project whose agent has
// `schedule: { every: 2s }` + `instruction`, the mock wire server as the model. The daemon
// fires it; `kill -9` and a restart on the same state db lose and repeat no firing (the
// mock's request log, grouped by the firing key each request carries, is the witness).
// `lash loop list|trigger|pause|resume` as real CLI processes against the daemon.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@lash/client";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";
import { as, createToken } from "./serve-auth-support.ts";
import { api, type Daemon, startDaemon } from "./serve-support.ts";

let sb: Sandbox | undefined;
let daemon: Daemon | undefined;
let second: Daemon | undefined;

afterEach(async () => {
  if (second && second.proc.child.exitCode === null) {
    second.proc.child.kill("SIGKILL");
    await second.proc.done;
  }
  second = undefined;
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

/** Poll the firings until `pred` holds (the daemon's answer is the signal; 20 ms between polls spares the CPU). */
async function until(url: string, pred: (f: Firing[]) => boolean): Promise<Firing[]> {
  for (;;) {
    const f = await firings(url);
    if (pred(f)) return f;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The firing key a model request carries (the firing's text ends with it). */
const keyOf = (body: unknown): string | undefined => {
  const user = chatMessages(body).filter((m) => m.role === "user");
  const m = /\(scheduled run ([^)]+)\)/.exec(textOf(user.at(-1)?.content));
  return m?.[1];
};

const README = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");

/** The README's example loop spec (the block after `<!-- serve-loops:spec -->`). */
function readmeSpec(): string {
  const marker = "<!-- serve-loops:spec -->";
  const at = README.indexOf(marker);
  expect(at).toBeGreaterThan(0);
  const m = /^\s*```markdown\n([\s\S]*?)\n```/.exec(README.slice(at + marker.length));
  expect(m).not.toBeNull();
  return `${m![1]!}\n`;
}

describe("lash serve: loops", () => {
  it("the README's example loop builds and is listed with its settings", async () => {
    sb = await sandbox([]);
    const opts = { env: sb.env, cwd: sb.cwd };
    mkdirSync(join(sb.cwd, "agents"));
    writeFileSync(join(sb.cwd, "agents", "triage.agent.md"), readmeSpec());
    const build = await lash(["build"], opts);
    expect(build.stderr).toBe("");
    expect(build.code).toBe(0);
    daemon = await startDaemon(sb);
    const loops = (await api(daemon.url, "GET", "/v1/loops")).body.loops as Record<string, unknown>[];
    expect(loops).toEqual([
      {
        name: "triage",
        agent: "triage",
        schedule: { cron: "0 9 * * 1-5", tz: "Europe/Berlin" },
        instruction: "Triage the issues opened since your last run and write triage.md.",
        missed: "run",
        concurrency: 1,
        timeout: "10m",
        retry: { attempts: 3, backoff: "30s" },
        paused: false,
        nextFiring: expect.any(Number),
      },
    ]);
    // 09:00 in Berlin is 07:00 or 08:00 UTC, on a weekday
    const next = new Date(loops[0]!.nextFiring as number);
    expect([7, 8]).toContain(next.getUTCHours());
    expect(next.getUTCMinutes()).toBe(0);
    expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
    expect(next.getTime()).toBeGreaterThan(Date.now());

    // the same through @lash/client (what the web console uses)
    const client = createClient({ baseUrl: daemon.url });
    expect((await client.loops.list()).map((l) => l.name)).toEqual(["triage"]);
    expect((await client.loops.pause("triage")).paused).toBe(true);
    expect((await client.loops.list())[0]!.nextFiring).toBeUndefined();
    const firing = await client.loops.trigger("triage", { instruction: "Only the security label." });
    expect(firing).toMatchObject({ loop: "triage", kind: "manual", instruction: "Only the security label." });
    expect((await client.loops.firings("triage", { limit: 5 }))[0]!.key).toBe(firing.key);
    expect((await client.loops.resume("triage")).paused).toBe(false);
    const err = await client.loops.trigger("triag").catch((e: unknown) => e);
    expect(err).toMatchObject({ _tag: "NotFound", code: "loop_not_found" });
    const bad = await client.loops.firings("triage", { limit: 0 }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ _tag: "BadRequest", code: "invalid_limit" });
  });

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
    // a manual firing's session is the caller's (here the --no-auth principal "local")
    expect(run.body).toMatchObject({ state: "completed", sessionId: firing.sessionId, principal: "local" });
    expect(firing).toMatchObject({ triggeredBy: "local" });
    const session = await api(daemon.url, "GET", `/v1/sessions/${firing.sessionId}`);
    expect(session.body).toMatchObject({ agent: "ticker", title: key });
    expect(sb.server.requests.map((r) => keyOf(r.body))).toEqual([key]);

    // no body at all: the loop's own instruction
    const bare = await api(daemon.url, "POST", "/v1/loops/ticker/trigger");
    expect(bare.status).toBe(202);
    expect(bare.body.instruction).toBe("TICK-INSTRUCTION check the queue.");
    const empty = await api(daemon.url, "POST", "/v1/loops/ticker/trigger", { instruction: " " });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe("empty_instruction");
    await until(daemon.url, (f) => f.some((x) => x.key === bare.body.key && x.state === "completed"));

    const help = await lash(["loop", "--help"], { env: sb.env, cwd: sb.cwd });
    expect(help.code).toBe(0);
    for (const usage of [
      "lash loop list",
      "lash loop firings <name>",
      "lash loop trigger <name>",
      "--instruction",
      "lash loop pause <name> | resume <name>",
      "--server",
      "--token",
      "missed: run|skip",
    ])
      expect(help.stdout).toContain(usage);
    expect((await lash(["help", "loop"], { env: sb.env, cwd: sb.cwd })).stdout).toBe(help.stdout);
    const bogus = await lash(["loop", "over", "the", "files"], { env: sb.env, cwd: sb.cwd });
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain(
      "lash loop over: unknown; use one of list, firings, trigger, pause, resume",
    );
    expect(bogus.stderr).toContain('lash -p "loop over the files"');

    const missing = await api(daemon.url, "POST", "/v1/loops/nope/trigger", {});
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("loop_not_found");
    expect(missing.body.message).toContain("ticker");
  });

  it("every 2s: kill -9 and a restart on the same state db lose and repeat no firing; lash loop pause/list/trigger/resume", async () => {
    sb = await sandbox(Array.from({ length: 200 }, (_, i) => ({ text: `tick ${i}` })));
    await project(sb, "2s");
    daemon = await startDaemon(sb);
    const first = daemon.url;
    await until(first, (f) => f.filter((x) => x.state === "completed").length >= 2);
    // kill -9 between firings (none in flight: a run cut off mid-call is resumed, not re-fired)
    await until(first, (f) => f.length > 0 && f.every((x) => x.state === "completed"));
    const due = ((await api(first, "GET", "/v1/loops")).body.loops as { nextFiring: number }[])[0]!
      .nextFiring;
    daemon.proc.child.kill("SIGKILL");
    await daemon.proc.done;
    const killedAt = Date.now();
    // the scenario needs a firing time to pass with no daemon: wait for the wall clock to pass it
    while (Date.now() <= due) await new Promise((r) => setTimeout(r, due - Date.now() + 1));

    daemon = await startDaemon(sb);
    const url = daemon.url;
    await until(url, (f) => f.filter((x) => x.scheduledAt > killedAt && x.state === "completed").length >= 2);

    const env = { ...sb.env, LASH_SERVER_URL: url };
    const opts = { env, cwd: sb.cwd };
    const paused = await lash(["loop", "pause", "ticker"], opts);
    expect(paused.stderr).toBe("");
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/^ticker {2}every 2s {2}paused {2}next - {2}last ticker@\S+ \w+\n$/);
    // paused: no new firing is claimed; wait for the claimed ones to end
    const all = await until(url, (f) => f.every((x) => x.state !== "queued" && x.state !== "running"));

    // every scheduled time from the first to the last firing, 2 s apart, each claimed once and completed
    const times = all.map((x) => x.scheduledAt).sort((a, b) => a - b);
    expect(times.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(2000);
    expect(all.every((x) => x.state === "completed" && x.kind !== "manual")).toBe(true);
    expect(all.map((x) => x.key).sort()).toEqual(times.map((t) => `ticker@${new Date(t).toISOString()}`));
    // the mock saw each firing's key, and only those; once each, or twice for a run the
    // restart resumed mid-call (the unfinished call is repeated; the firing is not)
    const perKey = new Map<string, number>();
    for (const r of sb.server.requests) {
      const key = keyOf(r.body);
      expect(key).toBeDefined();
      perKey.set(key!, (perKey.get(key!) ?? 0) + 1);
    }
    expect([...perKey.keys()].sort()).toEqual(all.map((x) => x.key).sort());
    for (const f of all) {
      const run = await api(url, "GET", `/v1/runs/${f.runId}`);
      expect(run.body).toMatchObject({ sessionId: f.sessionId, principal: "loop:ticker" });
      const runs = await api(url, "GET", `/v1/sessions/${f.sessionId}/runs`);
      expect((runs.body.runs as unknown[]).length).toBe(1);
      expect(perKey.get(f.key)).toBe((run.body.resumes as number) > 0 ? perKey.get(f.key) : 1);
      expect(perKey.get(f.key)).toBeLessThanOrEqual(2);
    }
    // the firing due while no daemon ran was run at start (missed: run), once
    expect(all.find((x) => x.scheduledAt === due)).toMatchObject({ kind: "missed", state: "completed" });
    // firings came on both sides of the kill
    expect(times.some((t) => t < killedAt)).toBe(true);
    expect(times.some((t) => t > killedAt)).toBe(true);

    const list = await lash(["loop", "list"], opts);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("ticker  every 2s  paused");
    const json = JSON.parse((await lash(["loop", "list", "--json"], opts)).stdout) as {
      loops: { name: string; paused: boolean }[];
    };
    expect(json.loops).toMatchObject([{ name: "ticker", paused: true }]);

    const before = sb.server.requests.length;
    const trig = await lash(["loop", "trigger", "ticker", "--instruction", "CLI-TRIGGER now"], opts);
    expect(trig.stderr).toBe("");
    expect(trig.code).toBe(0);
    const key = /^triggered (ticker@manual:\S+) \(queued\)\n$/.exec(trig.stdout)?.[1];
    expect(key).toBeDefined();
    await until(url, (f) => f.some((x) => x.key === key && x.state === "completed"));
    expect(sb.server.requests).toHaveLength(before + 1);
    expect(textOf(chatMessages(sb.server.requests.at(-1)!.body).at(-1)!.content)).toBe(
      `CLI-TRIGGER now\n\n(scheduled run ${key})`,
    );
    const firingsOut = await lash(["loop", "firings", "ticker", "--limit", "1"], opts);
    expect(firingsOut.stdout.startsWith(`${key}  manual  completed  attempts 1  session `)).toBe(true);

    const resumed = await lash(["loop", "resume", "ticker"], opts);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/^ticker {2}every 2s {2}active {2}next \d{4}-/);
    expect((await api(url, "GET", "/v1/loops")).body.loops).toMatchObject([{ paused: false }]);

    const unknown = await lash(["loop", "trigger", "tocker"], opts);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no loop named");
    expect(unknown.stderr).toContain("[NotFound loop_not_found]");
    const noServer = await lash(["loop", "list"], { env: sb.env, cwd: sb.cwd });
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toContain("--server");
  }, 120_000);

  it("two daemon processes on one state db: every firing is claimed and run once", async () => {
    sb = await sandbox(Array.from({ length: 200 }, (_, i) => ({ text: `tick ${i}` })));
    await project(sb, "2s");
    daemon = await startDaemon(sb);
    const a = daemon.url;
    // the second daemon starts with no run in flight (a starting daemon takes over unfinished runs)
    expect((await lash(["loop", "pause", "ticker", "--server", a], { env: sb.env, cwd: sb.cwd })).code).toBe(
      0,
    );
    await until(a, (f) => f.every((x) => x.state !== "queued" && x.state !== "running"));
    const before = new Set((await firings(a)).map((x) => x.key));
    second = await startDaemon(sb);
    const b = second.url;
    expect(b).not.toBe(a);
    const resumed = await api(b, "POST", "/v1/loops/ticker/resume");
    expect(resumed.body.paused).toBe(false);
    const resumedAt = Date.now();
    // both daemons' schedulers now race for each firing
    await until(a, (f) => f.filter((x) => x.scheduledAt > resumedAt && x.state === "completed").length >= 4);
    await api(a, "POST", "/v1/loops/ticker/pause");
    const all = await until(b, (f) => f.every((x) => x.state !== "queued" && x.state !== "running"));
    const raced = all.filter((x) => !before.has(x.key));
    expect(raced.length).toBeGreaterThanOrEqual(4);
    const times = raced.map((x) => x.scheduledAt).sort((p, q) => p - q);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(2000);
    const perKey = new Map<string, number>();
    for (const r of sb.server.requests) perKey.set(keyOf(r.body)!, (perKey.get(keyOf(r.body)!) ?? 0) + 1);
    for (const f of raced) {
      expect(f.state).toBe("completed");
      expect(perKey.get(f.key)).toBe(1);
      const runs = await api(a, "GET", `/v1/sessions/${f.sessionId}/runs`);
      expect((runs.body.runs as unknown[]).length).toBe(1);
    }
  }, 120_000);

  it("access as for a chat: read lists a loop and its firings, execute triggers/pauses; a manual firing's session is the caller's", async () => {
    sb = await sandbox([{ text: "triaged" }]);
    const opts = { env: sb.env, cwd: sb.cwd };
    mkdirSync(join(sb.cwd, "agents"));
    writeFileSync(
      join(sb.cwd, "agents", "ticker.agent.md"),
      TICKER("1d").replace("missed: run", "missed: run\nacl: { alice: execute, bob: read }"),
    );
    expect((await lash(["build"], opts)).code).toBe(0);
    const alice = await createToken(sb, "alice");
    const bob = await createToken(sb, "bob");
    const carol = await createToken(sb, "carol");
    const admin = await createToken(sb, "root", true);
    daemon = await startDaemon(sb, [], { auth: true });

    expect((await as(daemon, undefined, "GET", "/v1/loops")).status).toBe(401);
    expect((await as(daemon, carol, "GET", "/v1/loops")).body).toEqual({ loops: [] });
    const hidden = await as(daemon, carol, "GET", "/v1/loops/ticker/firings");
    expect(hidden.status).toBe(403);
    expect(hidden.body.message).toContain("acl");
    expect(((await as(daemon, bob, "GET", "/v1/loops")).body.loops as { name: string }[])[0]!.name).toBe(
      "ticker",
    );
    expect((await as(daemon, bob, "GET", "/v1/loops/ticker/firings")).status).toBe(200);
    for (const path of ["/v1/loops/ticker/trigger", "/v1/loops/ticker/pause", "/v1/loops/ticker/resume"]) {
      const r = await as(daemon, bob, "POST", path, path.endsWith("trigger") ? {} : undefined);
      expect(r.status).toBe(403);
      expect(r.body.message).toContain('grants it only "read"');
    }
    const paused = await as(daemon, alice, "POST", "/v1/loops/ticker/pause");
    expect(paused.body).toMatchObject({ name: "ticker", paused: true });
    const trig = await as(daemon, alice, "POST", "/v1/loops/ticker/trigger", {});
    expect(trig.status).toBe(202);
    expect(trig.body.triggeredBy).toBe("alice");
    let firing: Record<string, unknown> | undefined;
    while (firing?.state !== "completed")
      firing = (
        (await as(daemon, alice, "GET", "/v1/loops/ticker/firings")).body.firings as Record<string, unknown>[]
      )[0];
    // alice follows her firing's session; bob (read only) does not see it, an admin does
    expect((await as(daemon, alice, "GET", `/v1/sessions/${firing.sessionId}`)).body).toMatchObject({
      owner: "alice",
    });
    expect((await as(daemon, bob, "GET", `/v1/sessions/${firing.sessionId}`)).status).toBe(403);
    expect((await as(daemon, admin, "GET", `/v1/sessions/${firing.sessionId}`)).status).toBe(200);
  });
});
