// The daemon on a Restate cluster (issue 23, acceptance 4), run inside a private network
// namespace (`unshare -n`, lo up) by serve-restate.test.ts: Postgres, restate-server, the mock
// wire server, a failover proxy (the one deployment URL) and two real `lash serve --engine
// restate --store postgres://…` processes A and B all live in it, so restate-server's start-up
// version check cannot leave the machine. Prints one line `REPORT <json>`; the test asserts.
//   node serve-restate-scenario.ts <tmpdir>
//
// The turn is posted to daemon A and runs on A's worker (the proxy prefers A) until its shell
// tool is running; then A is killed (SIGKILL) and Restate retries the invocation on B's worker.
// Client 1 follows the session's stream on daemon B the whole time; client 2 follows it on
// daemon A, is cut off by the kill and reconnects to B with `Last-Event-ID`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, startRestateServer } from "@lash/restate";
// (the store-postgres tests' helper, where it is at HEAD 6832af8)
import { startPostgres } from "@lash/store-postgres/testing";
import { startProxy } from "../../packages/restate/test/cluster/proxy.ts";
import { type Sandbox, type Spawned, sandbox, start } from "./cli-support.ts";
import { readSse, type SseEvent } from "./sse-support.ts";

const dir = process.argv[2]!;
const cleanups: (() => Promise<unknown> | unknown)[] = [];
/** Where the scenario is (named when it fails or overruns). */
let step = "start";

async function cleanup(): Promise<void> {
  for (const f of cleanups.splice(0).reverse()) await Promise.resolve(f()).catch(() => undefined);
}

// a bound on the whole scenario (below the test's timeout): whatever hangs, everything it started is stopped
setTimeout(() => {
  process.stderr.write(`scenario overran its bound at step: ${step}\n`);
  void cleanup().finally(() => process.exit(1));
}, 150_000).unref();

/** Resolves once `file` has a line (the shell tool's signal that it runs). */
async function fileLine(file: string): Promise<string> {
  while (!existsSync(file) || readFileSync(file, "utf8").trim() === "")
    await new Promise((r) => setTimeout(r, 20));
  return readFileSync(file, "utf8").trim();
}

async function daemon(
  sb: Sandbox,
  name: string,
  args: readonly string[],
): Promise<{ url: string; proc: Spawned }> {
  const proc = start(["serve", "--port", "0", "--no-auth", "--state", join(dir, `${name}.db`), ...args], {
    env: sb.env,
    cwd: sb.cwd,
  });
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill("SIGKILL");
    await proc.done;
  });
  const line = await proc.waitForLine(
    (l) => l.startsWith("lash serve: listening on") || l.startsWith("__exited__"),
  );
  const m = /listening on (http:\/\/\S+)/.exec(line);
  if (!m) throw new Error(`daemon ${name} did not start: ${line}\n${(await proc.done).stderr}`);
  return { url: m[1]!, proc };
}

const summary = (events: readonly SseEvent[]) =>
  events.map((e) => ({ id: e.id, type: e.event, runId: e.data.runId, data: e.data.data }));

async function main() {
  step = "postgres";
  const pg = await startPostgres();
  cleanups.push(() => pg.stop());
  const store = pg.createDatabase("lash");
  step = "restate-server";
  const restate = await startRestateServer({ dir: join(dir, "restate") });
  cleanups.push(() => restate.stop());
  // the model: the shell tool (it says it runs, then hangs until the test kills it), then the answer
  const sb = await sandbox(
    [
      {
        toolCalls: [
          { id: "c1", name: "shell", arguments: { command: "echo $$ > tool.pid && exec sleep 600" } },
        ],
      },
      { text: "taken over" },
      { text: "second turn" },
      { text: "third turn" },
    ],
    { shellSandbox: "off" },
  );
  cleanups.push(() => sb.cleanup());
  const [portA, portB] = [await freePort(), await freePort()];
  // one deployment URL for both workers: new invocation attempts go to A while it is up, else to B
  const proxy = await startProxy([`http://127.0.0.1:${portA}`, `http://127.0.0.1:${portB}`]);
  cleanups.push(() => proxy.close());
  const engine = (port: number) => [
    "--engine",
    "restate",
    "--store",
    store,
    "--restate-ingress",
    restate.ingressUrl,
    "--restate-admin",
    restate.adminUrl,
    "--restate-worker-port",
    String(port),
    "--restate-deployment",
    proxy.url,
  ];
  step = "daemons";
  const a = await daemon(sb, "a", engine(portA));
  const b = await daemon(sb, "b", engine(portB));
  const created = await fetch(`${a.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  const sessionId = ((await created.json()) as { id: string }).id;
  const stream = (d: { url: string }) => `${d.url}/v1/sessions/${sessionId}/events`;

  let runId = "";
  const isEnd = (e: SseEvent) => e.event === "runFinished" && e.data.runId === runId;
  let toolOnB!: () => void;
  let toolOnA!: () => void;
  const seenOnB = new Promise<void>((r) => {
    toolOnB = r;
  });
  const seenOnA = new Promise<void>((r) => {
    toolOnA = r;
  });
  // client 1: on daemon B from before the turn to its end
  const client1 = readSse(stream(b), {
    onEvent: (e) => {
      if (e.event === "toolStarted") toolOnB();
      return !isEnd(e);
    },
  });
  // client 2: on daemon A, until A dies
  const client2 = readSse(stream(a), {
    onEvent: (e) => {
      if (e.event === "toolStarted") toolOnA();
      return !isEnd(e);
    },
  });
  const posted = await fetch(`${a.url}/v1/sessions/${sessionId}/turns`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "go" }),
  });
  const run = (await posted.json()) as { id: string; state: string };
  runId = run.id;
  step = "the tool runs on A's worker (toolStarted on both streams)";
  await Promise.all([seenOnA, seenOnB]);
  const toolPid = Number(await fileLine(join(sb.cwd, "tool.pid")));
  const requestsAtKill = sb.server.requests.length;
  // the worker running the turn dies with its daemon (and its tool with it)
  a.proc.child.kill("SIGKILL");
  await a.proc.done;
  try {
    process.kill(toolPid, "SIGKILL");
  } catch {}
  step = "client 2 cut off with A";
  const cut = await client2;
  // reconnect to the surviving daemon with the last id client 2 received
  const lastId = cut.events.at(-1)!.id;
  step = "reconnect to B with Last-Event-ID";
  const resumed = await readSse(stream(b), { lastEventId: lastId, onEvent: (e) => !isEnd(e) });
  step = "client 1 on B to the run's end";
  const followed = await client1;
  // the whole stream read again on B from the start
  const full = await readSse(stream(b), { onEvent: (e) => !isEnd(e) });
  const requestsAfterFirst = sb.server.requests.length;
  // the next turn of the session, posted to B (whose worker runs it now): the API as without a cluster
  step = "the second turn on B";
  const second = (await fetch(`${b.url}/v1/sessions/${sessionId}/turns?wait=true`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "again" }),
  }).then((r) => r.json())) as { id: string; state: string; text?: string };
  const secondStream = await readSse(`${b.url}/v1/runs/${second.id}/events`);
  const secondRun = await fetch(`${b.url}/v1/runs/${second.id}`).then((r) => r.json());
  const requestsAfterSecond = sb.server.requests.length;
  // daemon A restarts on its state file: it attaches to its cut-off run again (the same idempotency
  // key: Restate answers with the turn B finished; nothing runs again) and records the result. A
  // turn posted to A after that waits for it (one run at a time per session): the signal it is done.
  step = "daemon A restarts";
  const a2 = await daemon(sb, "a", engine(portA));
  const third = (await fetch(`${a2.url}/v1/sessions/${sessionId}/turns?wait=true`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "once more" }),
  }).then((r) => r.json())) as { id: string; state: string; text?: string };
  const firstOnA = await fetch(`${a2.url}/v1/runs/${runId}`).then((r) => r.json());
  const session = await fetch(`${b.url}/v1/sessions/${sessionId}`).then((r) => r.json());
  // the shared log itself: every event it holds (a duplicate past a stream's end shows here)
  const logged = pg.psql("SELECT type FROM turn_events ORDER BY seq", "lash").split("\n").filter(Boolean);
  const report = {
    runId,
    runState: run.state,
    requestsAtKill,
    requests: requestsAfterFirst,
    requestsAfterSecond,
    followed: { ended: followed.ended, events: summary(followed.events) },
    cut: { ended: cut.ended, events: summary(cut.events) },
    resumed: { lastId, events: summary(resumed.events) },
    full: summary(full.events),
    restarted: { firstRun: firstOnA, third, requests: sb.server.requests.length },
    second: {
      posted: second,
      run: secondRun,
      stream: { ended: secondStream.ended, events: summary(secondStream.events) },
    },
    session,
    logged,
  };
  process.stdout.write(`REPORT ${JSON.stringify(report)}\n`);
}

main()
  .catch((e: unknown) => {
    process.stderr.write(`scenario failed at step ${step}: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await cleanup();
    process.exit();
  });
