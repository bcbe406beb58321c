// `lash serve` under load (issue 19, acceptance 6). Three kinds of process on this machine, over
// loopback: the daemon — a real `lash serve` (`node apps/cli/src/main.ts serve --port 0 --no-auth`,
// a fresh LASH_HOME and state db); the model — the project's mock wire server in its own process
// (mock.ts), every reply `--chunks` text chunks stamped with the time they leave it; the clients —
// `--subscribers` SSE readers spread over `--workers` processes (subscribers.ts), `--subscribers /
// --sessions` per session, each following its session's stream from the start.
//
// Load: `--sessions` sessions (default 50) run `--turns` turns each (default 4), one after the
// other per session (`POST /v1/sessions/:id/turns?wait=true`), all sessions at once: 50 runs in
// flight (the daemon is started with `--max-runs <sessions>`). Reported: event latency p50 / p95 /
// p99 / max — from the model's chunk leaving the mock to a subscriber receiving the `textDelta` that
// carries it (one machine, one clock), over every chunk every subscriber got, split at the
// event's append to the log (its `at`); throughput — events delivered to subscribers per
// second, events appended to the log per second, runs per second;
// the daemon's CPU (user + system, /proc) over the load and its RSS (idle with the subscribers
// connected, at the end, peak). Goals: p95 latency ≤ 50 ms; no event lost; RSS reported.
//
// Checked before timing: a probe session runs one turn; its run's stream (`/v1/runs/:id/events`)
// must be runQueued, runStarted, …, every chunk in order, …, runFinished `completed`; the run's text
// must be the reply; the mock must have seen exactly one request. Checked after: every subscriber
// got every event of its session exactly once and in order (seq contiguous from 1 up to the
// session's last seq, reconnects included), the same (seq, type) sequence as the session's other
// subscribers, every run's chunks complete and in order and every run `completed`; every turn
// answered `completed` with the reply as its text; the mock saw one request per run; /metrics
// counted the subscribers and the runs. A failed check prints `SERVE BENCHMARK FAILED: …` and
// exits 1 (no report).
//
// `--soak <minutes>` (off in `pnpm bench`): the same set-up, each session running turns back to
// back until the time is up; the same checks (no event lost) and figures.
//
// pnpm exec node bench/perf/serve/run.ts [--json out.json] [--sessions 50] [--subscribers 500]
//   [--turns 4] [--chunks 20] [--workers 2] [--soak <minutes>] [--sabotage] [--cpu-prof-dir <dir>]
// (`--cpu-prof-dir`: the daemon writes a V8 CPU profile there when it exits; `--heap-snapshot-dir`:
// a heap snapshot at the end of the load.)
// (`--sabotage`: one subscriber skips one event, to see the check fail.)
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { argValue, markdownTable, report } from "../util.ts";
import { cpuMsOf, follow, isReplyText, merged, nowMs, rssOf, type SseEvent, startServe } from "./shape.ts";
import type { WorkerResult } from "./subscribers.ts";

const SESSIONS = Number(argValue("--sessions") ?? 50);
const SUBSCRIBERS = Number(argValue("--subscribers") ?? 500);
const TURNS = Number(argValue("--turns") ?? 4);
const CHUNKS = Number(argValue("--chunks") ?? 20);
const WORKERS = Number(argValue("--workers") ?? 2);
const PACE_MS = Number(argValue("--pace-ms") ?? 20);
const SOAK_MIN = argValue("--soak") === undefined ? undefined : Number(argValue("--soak"));
const SABOTAGE = process.argv.includes("--sabotage");
const PROFILE = argValue("--cpu-prof-dir");
const HEAP_DIR = argValue("--heap-snapshot-dir");
const STAGGER = !process.argv.includes("--no-stagger");
const GOAL_P95_MS = 50;
const loadBefore = loadavg()[0] ?? 0;
const PER_SESSION = Math.floor(SUBSCRIBERS / SESSIONS);
if (PER_SESSION * SESSIONS !== SUBSCRIBERS || PER_SESSION < 1)
  throw new Error(`--subscribers (${SUBSCRIBERS}) must be a multiple of --sessions (${SESSIONS})`);
if (SOAK_MIN !== undefined && !(SOAK_MIN > 0)) throw new Error("--soak takes a number of minutes > 0");

const root = join(import.meta.dirname, "..", "..", "..");
const MAIN = join(root, "apps", "cli", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "lash-bench-serve-"));
const children: ChildProcess[] = [];
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function fail(problems: readonly string[]): never {
  process.stderr.write(`SERVE BENCHMARK FAILED:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}

/** The next IPC message of `child` that satisfies `pred`. */
function nextMessage<T>(child: ChildProcess, pred: (m: T) => boolean): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: T) => {
      if (!pred(m)) return;
      child.off("message", onMessage);
      child.off("exit", onExit);
      resolve(m);
    };
    const onExit = (code: number | null) => reject(new Error(`child ${child.pid} exited (${code})`));
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

// ---------------------------------------------------------------------------------------
// the model and the daemon

const mock = fork(join(import.meta.dirname, "mock.ts"), ["--chunks", String(CHUNKS)], { stdio: "inherit" });
children.push(mock);
const { url: mockUrl } = await nextMessage<{ type: string; url: string }>(mock, (m) => m.type === "ready");
const mockCount = async () => {
  mock.send({ type: "count" });
  return nextMessage<{ type: string; requests: number; streamed: number }>(mock, (m) => m.type === "count");
};

const home = join(dir, "home");
const work = join(dir, "work");
mkdirSync(work, { recursive: true });
const { daemon, base } = await startServe(
  [
    ...(PROFILE ? ["--cpu-prof", "--cpu-prof-dir", PROFILE] : []),
    ...(HEAP_DIR ? ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${HEAP_DIR}`] : []),
    MAIN,
    "serve",
    "--port",
    "0",
    "--no-auth",
    "--max-runs",
    String(SESSIONS),
    "--max-queued",
    "100000",
  ],
  {
    cwd: work,
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      LASH_HOME: home,
      LASH_MODEL: "openai-compatible/mock",
      OPENAI_COMPATIBLE_BASE_URL: mockUrl,
    },
  },
);
children.push(daemon);
const pid = daemon.pid!;

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

interface Run {
  readonly id: string;
  readonly outcome?: unknown;
  readonly error?: unknown;
  readonly state: string;
  readonly text?: string;
  readonly lastSeq: number;
}
const metric = async (name: string): Promise<number | undefined> => {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};

// ---------------------------------------------------------------------------------------
// the probe: one turn, its run's whole stream checked

{
  const problems: string[] = [];
  const session = await api<{ id: string }>("POST", "/v1/sessions", { title: "probe" });
  const run = await api<Run>("POST", `/v1/sessions/${session.id}/turns?wait=true`, { text: "probe" });
  if (run.state !== "completed") problems.push(`probe run ended ${run.state}`);
  if (!isReplyText(run.text ?? "", CHUNKS)) problems.push(`probe run's text is not the reply: ${run.text}`);
  const events = await new Promise<SseEvent[]>((resolve, reject) => {
    const got: SseEvent[] = [];
    follow(`${base}/v1/runs/${run.id}/events`, 0, {
      onEvent: (e) => got.push(e),
      onEnd: (why) => (why === "ended by the server" ? resolve(got) : reject(new Error(why))),
    });
  });
  const types = events.map((e) => e.event);
  if (types[0] !== "runQueued" || types[1] !== "runStarted" || types.at(-1) !== "runFinished")
    problems.push(`probe stream: ${types.join(", ")}`);
  const finished = JSON.parse(events.at(-1)?.data ?? "{}") as { data?: { state?: string } };
  if (finished.data?.state !== "completed") problems.push(`probe runFinished: ${events.at(-1)?.data}`);
  const text = events
    .filter((e) => e.event === "textDelta")
    .map((e) => (JSON.parse(e.data) as { data: { text: string } }).data.text)
    .join("");
  if (text !== run.text) problems.push(`probe stream's text differs from the run's: ${text}`);
  if (events.some((e, i) => i > 0 && e.id <= events[i - 1]!.id)) problems.push("probe seqs not increasing");
  if (events.at(-1)?.id !== run.lastSeq)
    problems.push(`probe last seq ${events.at(-1)?.id} ≠ run.lastSeq ${run.lastSeq}`);
  const seen = await mockCount();
  if (seen.requests !== 1 || seen.streamed !== 1)
    problems.push(`mock saw ${seen.requests} requests after the probe`);
  if (problems.length) fail(problems);
}

// ---------------------------------------------------------------------------------------
// sessions, subscribers

const sessions: string[] = [];
for (let i = 0; i < SESSIONS; i++)
  sessions.push((await api<{ id: string }>("POST", "/v1/sessions", { title: `bench ${i}` })).id);

const workers: ChildProcess[] = [];
for (let w = 0; w < WORKERS; w++) {
  const child = fork(join(import.meta.dirname, "subscribers.ts"), [], { stdio: "inherit" });
  children.push(child);
  workers.push(child);
}
// subscriber j of session i goes to worker (i * PER_SESSION + j) % WORKERS
const assign: Map<string, number>[] = workers.map(() => new Map());
sessions.forEach((id, i) => {
  for (let j = 0; j < PER_SESSION; j++) {
    const m = assign[(i * PER_SESSION + j) % WORKERS]!;
    m.set(id, (m.get(id) ?? 0) + 1);
  }
});
const ready = workers.map((w) => nextMessage<{ type: string }>(w, (m) => m.type === "ready"));
const results = workers.map((w) => nextMessage<WorkerResult>(w, (m) => m.type === "result"));
workers.forEach((w, i) => {
  w.send({
    type: "start",
    url: base,
    chunks: CHUNKS,
    sabotage: SABOTAGE && i === 0,
    assign: [...assign[i]!].map(([sessionId, count]) => ({ sessionId, count })),
  });
});
await Promise.all(ready);
const sseClients = await metric("lash_sse_clients");
const idle = rssOf(pid);

// ---------------------------------------------------------------------------------------
// the load: a paced phase (the model streams, PACE_MS between events), then a burst (every
// reply in one write, as fast as the daemon takes them); a soak is one long burst

const problems: string[] = [];
let runs = 0;
const runsOf = new Map<string, number>();
let peakRss = idle?.rss ?? 0;
const sampler = setInterval(() => {
  const r = rssOf(pid);
  if (r && r.rss > peakRss) peakRss = r.rss;
}, 250);

interface Phase {
  readonly runs: number;
  readonly seconds: number;
  readonly cpuMs: number | undefined;
}
const lastSeqs = async (): Promise<Record<string, number>> => {
  const seqs: Record<string, number> = {};
  for (const id of sessions) {
    const { runs: list } = await api<{ runs: Run[] }>("GET", `/v1/sessions/${id}/runs`);
    seqs[id] = Math.max(0, ...list.map((r) => r.lastSeq));
  }
  return seqs;
};

async function phase(paceMs: number, turns: number, deadline?: number): Promise<Phase> {
  mock.send({ type: "pace", ms: paceMs });
  await nextMessage<{ type: string }>(mock, (m) => m.type === "paced");
  const before = runs;
  const cpu0 = cpuMsOf(pid);
  const t0 = nowMs();
  let progressAt = Date.now();
  await Promise.all(
    sessions.map(async (id, i) => {
      // paced: the sessions start spread over one reply's length, as independent users do (in
      // step, all 50 would finish and start their next turns in the same few milliseconds)
      if (paceMs > 0 && STAGGER)
        await new Promise((r) => setTimeout(r, (i * paceMs * (CHUNKS + 1)) / SESSIONS));
      for (let t = 0; deadline === undefined ? t < turns : Date.now() < deadline; t++) {
        const run = await api<Run>("POST", `/v1/sessions/${id}/turns?wait=true`, { text: `turn ${t}` });
        runs++;
        runsOf.set(id, (runsOf.get(id) ?? 0) + 1);
        if (run.state !== "completed" || !isReplyText(run.text ?? "", CHUNKS)) {
          // what the daemon says of the run and its events, while it still runs
          const types = await new Promise<string>((resolve) => {
            const got: string[] = [];
            follow(`${base}/v1/runs/${run.id}/events`, 0, {
              onEvent: (e) => got.push(`${e.id}:${e.event}`),
              onEnd: (why) => resolve(`${got.join(" ")} (${why})`),
            });
          });
          const detail = JSON.stringify({ ...run, text: run.text?.slice(0, 200) });
          if (problems.length < 10)
            problems.push(`run ${run.id} (turn ${t} of its session): ${detail}; events: ${types}`);
        }
        if (deadline !== undefined && Date.now() - progressAt > 60_000) {
          progressAt = Date.now();
          process.stdout.write(
            `  soak: ${runs} runs, ${Math.round((deadline - Date.now()) / 1000)} s left\n`,
          );
        }
      }
    }),
  );
  const cpu1 = cpuMsOf(pid);
  return {
    runs: runs - before,
    seconds: (nowMs() - t0) / 1000,
    cpuMs: cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined,
  };
}

const tLoad = nowMs();
const cpuLoad0 = cpuMsOf(pid);
let paced: Phase | undefined;
if (SOAK_MIN === undefined) {
  paced = await phase(PACE_MS, TURNS);
  // every event so far is the paced phase's: the subscribers learn where it ends, per session
  const seqs = await lastSeqs();
  const acks = workers.map((w) => nextMessage<{ type: string }>(w, (m) => m.type === "boundary-set"));
  for (const w of workers) w.send({ type: "boundary", seqs });
  await Promise.all(acks);
}
const deadline = SOAK_MIN === undefined ? undefined : Date.now() + SOAK_MIN * 60_000;
const burst = await phase(0, TURNS, deadline);
const finalSeq = await lastSeqs();
for (const w of workers) w.send({ type: "finish", finalSeq });
const done = await Promise.all(results);
const tDone = nowMs();
const cpuDone = cpuMsOf(pid);
clearInterval(sampler);
const end = rssOf(pid);
if (end && end.rss > peakRss) peakRss = end.rss;

// ---------------------------------------------------------------------------------------
// checks

const expectedRuns = SOAK_MIN === undefined ? 2 * SESSIONS * TURNS : runs;
if (runs !== expectedRuns) problems.push(`${runs} runs answered, ${expectedRuns} expected`);
const seen = await mockCount();
if (seen.requests !== runs + 1 || seen.streamed !== runs + 1)
  problems.push(`the mock saw ${seen.requests} requests (${seen.streamed} streamed); ${runs + 1} expected`);
if (sseClients !== SUBSCRIBERS)
  problems.push(`/metrics lash_sse_clients was ${sseClients} with ${SUBSCRIBERS} subscribers`);
const completed = await metric('lash_runs_total{state="completed"}');
if (completed !== runs + 1)
  problems.push(`/metrics lash_runs_total{state="completed"} is ${completed}; ${runs + 1} expected`);

const subs = done.flatMap((d) => d.subs);
const hashOf = new Map<string, number>();
let delivered = 0;
let chunks = 0;
let reconnects = 0;
let lost = 0;
for (const s of subs) {
  delivered += s.events;
  chunks += s.chunks;
  reconnects += s.reconnects;
  const want = finalSeq[s.sessionId]!;
  lost += Math.max(0, want - s.events);
  const say = (p: string) => problems.length < 20 && problems.push(`subscriber of ${s.sessionId}: ${p}`);
  for (const p of s.problems) say(p);
  if (s.events !== want || s.lastSeq !== want)
    say(`${s.events} events up to seq ${s.lastSeq}; the log has ${want}`);
  const wantRuns = runsOf.get(s.sessionId) ?? 0;
  if (s.runsFinished !== wantRuns) say(`saw ${s.runsFinished} runs finish; the session ran ${wantRuns}`);
  const h = hashOf.get(s.sessionId);
  if (h === undefined) hashOf.set(s.sessionId, s.hash);
  else if (h !== s.hash) say("its (seq, type) sequence differs from another subscriber's");
}
const runsSeen = subs.reduce((a, s) => a + s.runsFinished, 0);
if (runsSeen !== runs * PER_SESSION)
  problems.push(`subscribers saw ${runsSeen} runs finish; ${runs * PER_SESSION} expected`);
if (chunks !== runs * PER_SESSION * CHUNKS)
  problems.push(`subscribers got ${chunks} chunks; ${runs * PER_SESSION * CHUNKS} expected`);
const figures = [0, 1].map((i) => ({
  latency: merged(done.map((d) => d.phases[i]!.latency)),
  toAppend: merged(done.map((d) => d.phases[i]!.toAppend)),
  fromAppend: merged(done.map((d) => d.phases[i]!.fromAppend)),
}));
const [pacedFig, burstFig] = SOAK_MIN === undefined ? figures : [undefined, figures[0]!];
if (paced && pacedFig!.latency.count !== paced.runs * PER_SESSION * CHUNKS)
  problems.push(`${pacedFig!.latency.count} paced latencies for ${paced.runs * PER_SESSION * CHUNKS} chunks`);
if (burstFig!.latency.count !== burst.runs * PER_SESSION * CHUNKS)
  problems.push(`${burstFig!.latency.count} burst latencies for ${burst.runs * PER_SESSION * CHUNKS} chunks`);
const negative = figures.reduce((a, f) => a + f.latency.negative, 0);
if (negative > 0) problems.push(`${negative} chunks arrived before they were sent (clock?)`);
if (problems.length) fail(problems);

// ---------------------------------------------------------------------------------------
// figures

const f1 = (n: number) => n.toFixed(1);
const met = (ok: boolean) => (ok ? "met" : "**missed**");
const mib = (n: number | undefined) => (n === undefined ? "n/a (no /proc)" : `${n.toFixed(0)} MiB`);
const deliverS = (tDone - tLoad) / 1000;
const appended = Object.values(finalSeq).reduce((a, b) => a + b, 0);
const cpuMs = cpuLoad0 !== undefined && cpuDone !== undefined ? cpuDone - cpuLoad0 : undefined;
type Fig = (typeof figures)[number];
const latencyRows = (label: string, f: Fig, goal: boolean): (string | number)[][] => [
  [
    `${label}: event latency p50 / p95 (model chunk → subscriber)`,
    `${f1(f.latency.pct(50))} / ${f1(f.latency.pct(95))} ms`,
    goal ? `p95 ≤ ${GOAL_P95_MS} ms` : "—",
    goal ? met(f.latency.pct(95) <= GOAL_P95_MS) : "none set",
  ],
  [`${label}: p99 / max`, `${f1(f.latency.pct(99))} / ${f1(f.latency.max)} ms`, "—", "none set"],
  [
    `${label}: of which chunk sent → appended to the log / appended → subscriber (p50, p95)`,
    `${f1(f.toAppend.pct(50))}, ${f1(f.toAppend.pct(95))} / ${f1(f.fromAppend.pct(50))}, ${f1(f.fromAppend.pct(95))} ms`,
    "—",
    "none set",
  ],
];
const phaseRow = (label: string, p: Phase): (string | number)[] => [
  `${label}: runs; daemon CPU per run`,
  `${p.runs} (${f1(p.runs / p.seconds)}/s over ${f1(p.seconds)} s); ${p.cpuMs === undefined ? "n/a (no /proc)" : `${f1(p.cpuMs / p.runs)} ms`}`,
  "—",
  "none set",
];
const rows: (string | number)[][] = [
  ...(paced && pacedFig ? [...latencyRows("paced", pacedFig, true), phaseRow("paced", paced)] : []),
  ...latencyRows(SOAK_MIN === undefined ? "burst" : "soak", burstFig!, false),
  phaseRow(SOAK_MIN === undefined ? "burst" : "soak", burst),
  ["events lost (every subscriber, every event, in order, once)", lost, "0", met(lost === 0)],
  [
    "events delivered to subscribers / appended to the log",
    `${delivered.toLocaleString("en-US")} / ${appended.toLocaleString("en-US")}`,
    "—",
    "none set",
  ],
  [
    "daemon CPU over the whole load (user + system)",
    cpuMs === undefined ? "n/a (no /proc)" : `${f1(cpuMs / 1000)} s (${f1(cpuMs / 1000 / deliverS)} cores)`,
    "—",
    "none set",
  ],
  ["daemon RSS: subscribers connected, idle", mib(idle?.rss), "reported", "—"],
  [
    "daemon RSS: end of load / peak",
    `${mib(end?.rss)} / ${mib(Math.max(peakRss, end?.peak ?? 0))}`,
    "reported",
    "—",
  ],
  ["SSE reconnects (a reader dropped for falling behind)", reconnects, "—", "none set"],
];
const pacedP95 = pacedFig?.latency.pct(95);
const title =
  SOAK_MIN === undefined
    ? `lash serve: ${SESSIONS} concurrent runs, ${SUBSCRIBERS} SSE subscribers`
    : `lash serve soak: ${SOAK_MIN} min, ${SESSIONS} sessions, ${SUBSCRIBERS} SSE subscribers`;
const phaseJson = (p: Phase | undefined, f: Fig | undefined) =>
  p && f
    ? {
        runs: p.runs,
        seconds: p.seconds,
        runsPerSecond: p.runs / p.seconds,
        daemonCpuMsPerRun: p.cpuMs === undefined ? undefined : p.cpuMs / p.runs,
        latencyMs: {
          p50: f.latency.pct(50),
          p95: f.latency.pct(95),
          p99: f.latency.pct(99),
          max: f.latency.max,
          samples: f.latency.count,
        },
        sentToAppendedMs: { p50: f.toAppend.pct(50), p95: f.toAppend.pct(95) },
        appendedToReceivedMs: { p50: f.fromAppend.pct(50), p95: f.fromAppend.pct(95) },
      }
    : undefined;
report({
  name: SOAK_MIN === undefined ? "serve" : "serve-soak",
  title,
  table: markdownTable(["figure", "value", "goal", "met"], rows),
  goals: [
    pacedP95 === undefined
      ? "Goals: no latency goal for a soak (it is a burst: the daemon saturated);"
      : `Goals: paced event latency p95 ≤ ${GOAL_P95_MS} ms — ${f1(pacedP95)} ms, ${pacedP95 <= GOAL_P95_MS ? "met" : "missed"};`,
    `no event lost — ${lost} lost, ${lost === 0 ? "met" : "missed"}; daemon RSS reported (${mib(end?.rss)} at the end, no goal).`,
    "No goal is set for the burst's latency (the daemon is saturated: it measures the queue), throughput or CPU.",
  ].join(" "),
  results: {
    sessions: SESSIONS,
    subscribers: SUBSCRIBERS,
    turnsPerSession: SOAK_MIN === undefined ? TURNS : undefined,
    soakMinutes: SOAK_MIN,
    chunksPerReply: CHUNKS,
    paceMs: PACE_MS,
    workers: WORKERS,
    runs,
    paced: phaseJson(paced, pacedFig),
    burst: phaseJson(burst, burstFig),
    delivered,
    appended,
    daemonCpuMs: cpuMs,
    daemonRssMiB: { idle: idle?.rss, end: end?.rss, peak: Math.max(peakRss, end?.peak ?? 0) },
    reconnects,
    lost,
    loadAverage: { before: loadBefore, after: loadavg()[0] },
  },
  notes: [
    `Load average (1 min) ${loadBefore.toFixed(1)} before the benchmark, ${(loadavg()[0] ?? 0).toFixed(1)} after, on ${cpus().length} cores${loadBefore > cpus().length / 2 ? ": the machine was busy, the figures are slower than on a quiet machine" : ""}. The split of the latency uses the event's \`at\` (the daemon's clock when it appended the event, whole ms).`,
    `One machine: the daemon, the mock (its own process) and ${WORKERS} subscriber processes share its cores, so the latency includes waiting for a core. ${
      SOAK_MIN !== undefined
        ? `${SESSIONS} sessions run turns one after the other, all at once (\`--max-runs ${SESSIONS}\`), for ${SOAK_MIN} min, each reply in one write and the next turn at once (a burst: the daemon is saturated, a chunk's latency is mostly its wait in the queue; every turn sends the session's whole history, so later turns cost more).`
        : `${SESSIONS} sessions run ${TURNS} turns each one after the other, all at once (\`--max-runs ${SESSIONS}\`), twice: **paced** — the model streams each reply's ${CHUNKS} chunks ${PACE_MS} ms apart, as a model does, each stamped as it is written — then **burst** — each reply in one write, the next turn at once, so the daemon is saturated and a chunk's latency is mostly its wait in the queue.`
    } A chunk's latency runs from its send to the subscriber's read of the \`textDelta\` carrying it (the daemon parses the model stream, appends each event to its SQLite log — durable before any reader sees it — and fans it out to ${PER_SESSION} readers per session).`,
  ],
});

if (HEAP_DIR) {
  // the daemon writes a heap snapshot (synchronously, on its main thread) on SIGUSR2
  daemon.kill("SIGUSR2");
  await api("GET", "/health");
}
mock.send({ type: "close" });
daemon.kill("SIGTERM");
await new Promise((r) => daemon.once("exit", r));
