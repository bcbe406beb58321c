// The cluster scenarios, run inside a private network namespace (`unshare -n`, lo up) by
// restate.test.ts: the mock wire server, restate-server and the worker processes all live in
// it, so restate-server's version check cannot leave the machine. Writes <tmpdir>/report.json,
// which the test asserts on, and prints `REPORT report.json`.
//   node scenario.ts <basic|interrupt|mismatch|kill|commit|rlm> <tmpdir>
// env STORE=postgres: the workers share one Postgres (started here, in the namespace, on a
// loopback port; stopped at the end) instead of a SQLite file in <tmpdir>.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IdGenerator, LashRuntime, LlmProviders, ModelCatalog, SqliteStore, withRlm } from "@lash/core";
import { createProvider } from "@lash/providers";
import { type MockReply, type RecordedRequest, startMockServer } from "@lash/providers/testing";
import { PostgresStore } from "@lash/store-postgres";
import { startPostgres, type TestPostgres } from "@lash/store-postgres/testing";
import { Effect, Layer, ManagedRuntime } from "effect";
import {
  freePort,
  registerDeployment,
  startRestateServer,
  submitTurn,
  TurnInvocationError,
} from "../../src/index.ts";
import { startProxy } from "./proxy.ts";

const [mode, dir] = process.argv.slice(2) as [string, string];
const workerMain = join(import.meta.dirname, "worker-main.ts");

interface Worker {
  readonly child: ChildProcess;
  readonly lines: string[];
  waitFor(prefix: string): Promise<string>;
  readonly exited: Promise<void>;
}

const children: ChildProcess[] = [];
function startWorker(args: string[], env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [workerMain, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (l: string) => void }[] = [];
  let buf = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of [...waiters])
        if (line.startsWith(w.prefix)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    lines,
    exited,
    waitFor: (prefix) => {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ prefix, resolve });
        void exited.then(() => reject(new Error(`worker exited before "${prefix}"`)));
      });
    },
  };
}

/** The model: a user message asks for the `side_effect` tool labelled with its text; a tool result gets an answer. */
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((c) => (c as { text?: string }).text ?? "").join("")
      : "";
/**
 * The `rlm` scenario's one cell: a tool call, a process that sleeps 3 s and then calls a tool, a
 * second tool call (the first worker hangs in it and is SIGKILLed there, the sleeper mid-sleep).
 */
const RLM_CELL = `process sleeper() {
  sleep for "3s"
  finish await side.bump({ label: "woke" })?
}
a = await side.bump({ label: "r1" })?
s = start sleeper()
b = await side.hang({ label: "r2" })?
finish { a: a, b: b, s: (await s)? }`;

function respond(request: RecordedRequest): MockReply {
  if (mode === "rlm")
    return { text: `<lashlang>\n${RLM_CELL}\n</lashlang>\n`, usage: { input: 20, output: 5 } };
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  const last = messages.at(-1)!;
  const users = messages.filter((m) => m.role === "user" && !textOf(m.content).startsWith("note "));
  const label = textOf(users.at(-1)?.content);
  const slow = process.env.MODEL_CHUNK_MS ? { chunkDelayMs: Number(process.env.MODEL_CHUNK_MS) } : {};
  if (last.role === "tool") return { text: `done ${label}`, usage: { input: 20, output: 5 }, ...slow };
  return {
    toolCalls: [{ name: "side_effect", arguments: { label } }],
    usage: { input: 20, output: 5 },
    ...slow,
  };
}

const lastUserLabel = (r: RecordedRequest) =>
  textOf(
    (r.body as { messages: { role: string; content: unknown }[] }).messages
      .filter((m) => m.role === "user")
      .at(-1)?.content,
  );

/** Who asked (the `x-lash-worker` header the workers send). */
const workerOf = (r: RecordedRequest) => String(r.headers["x-lash-worker"] ?? "");

/** Resolves once the mock has answered `n` requests. */
let requestWaiters: { n: number; resolve: () => void }[] = [];
let answered = 0;
const afterRequests = (n: number) =>
  answered >= n ? Promise.resolve() : new Promise<void>((resolve) => requestWaiters.push({ n, resolve }));

/** The graph as Postgres holds it: per session and turn, node / usage / commit rows (what a double write would show). */
function graphOf(pg: TestPostgres, database: string) {
  const rows = (sql: string) =>
    JSON.parse(pg.psql(`SELECT coalesce(json_agg(x), '[]') FROM (${sql}) x`, database));
  return {
    nodes: rows(
      "SELECT session_id, turn_id, count(*)::int AS n, min(seq)::int AS first, max(seq)::int AS last FROM nodes GROUP BY 1, 2 ORDER BY 1, 4",
    ),
    usage: rows("SELECT session_id, turn_id, count(*)::int AS n FROM usage GROUP BY 1, 2 ORDER BY 1, 2"),
    commits: rows(
      "SELECT session_id, turn_id, head_revision::int AS revision FROM turn_commits ORDER BY 1, 3",
    ),
    sessions: rows(
      "SELECT id, head_revision::int AS revision, turn_count::int AS turns FROM sessions ORDER BY id",
    ),
  };
}

async function main() {
  const mock = await startMockServer({
    // the workers run without provider retries (so the request log counts exactly what a kill
    // repeats): a keep-alive longer than the run keeps the server from closing a socket a worker
    // is about to reuse ("other side closed" would fail a turn that has nothing to do with a kill)
    keepAliveTimeoutMs: 120_000,
    responder: (r) => {
      const reply = respond(r);
      answered++;
      if (process.env.PROGRESS && answered % 50 === 0)
        process.stderr.write(`PROGRESS answered ${answered}\n`);
      for (const w of requestWaiters.filter((x) => answered >= x.n)) w.resolve();
      requestWaiters = requestWaiters.filter((x) => answered < x.n);
      return reply;
    },
  });
  const restate = await startRestateServer({ dir: join(dir, "restate") });
  // a Postgres that fails to start must not leave restate-server (its own process group) running
  const pg =
    process.env.STORE === "postgres"
      ? await startPostgres().catch(async (e: unknown) => {
          await restate.stop();
          await mock.close();
          throw e;
        })
      : undefined;
  const database = "lash";
  const db = pg ? pg.createDatabase(database) : join(dir, "lash.db");
  const counter = join(dir, "counter.txt");
  writeFileSync(counter, "");
  const baseUrl = mock.baseUrl("openai-chat");
  const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "test", retry: false });
  const local = ManagedRuntime.make(
    LashRuntime.layer(mode === "rlm" ? withRlm({}) : {}).pipe(
      Layer.provide(
        Layer.mergeAll(
          pg ? PostgresStore.layer({ url: db, maxConnections: 4 }) : SqliteStore.layer({ filename: db }),
          LlmProviders.single(provider),
          IdGenerator.Live,
          ModelCatalog.Empty,
        ),
      ),
    ),
  );
  const createSession = () =>
    local.runPromise(
      Effect.flatMap(LashRuntime, (rt) =>
        rt.createSession({ model: "openai-compatible/mock", ...(mode === "rlm" ? { mode: "rlm" } : {}) }),
      ),
    );
  const inspect = (sessionId: string) =>
    local.runPromise(
      Effect.flatMap(LashRuntime, (rt) =>
        Effect.all({ view: rt.readView(sessionId), session: rt.getSession(sessionId) }).pipe(
          Effect.map(({ view, session }) => ({
            turnCount: session.turnCount,
            messages: view.map((m) => ({ role: m.role, text: JSON.stringify(m.parts) })),
          })),
        ),
      ),
    );
  const counterLines = () => readFileSync(counter, "utf8").split("\n").filter(Boolean);
  const report: Record<string, unknown> = {};
  try {
    if (mode === "basic") {
      const port = await freePort();
      const w = startWorker([db, baseUrl, counter, String(port), restate.adminUrl], {});
      await w.waitFor("READY");
      const s = await createSession();
      const reply = await submitTurn(restate.ingressUrl, s.id, { turnId: "turn-1", text: "b1" });
      const requestsAfter = mock.requests.length;
      // the same idempotency key again: the invocation's recorded answer, nothing runs
      const again = await submitTurn(restate.ingressUrl, s.id, { turnId: "turn-1", text: "b1" });
      Object.assign(report, {
        reply,
        again,
        requestsAfter,
        requestsAfterAgain: mock.requests.length,
        counter: counterLines(),
        view: await inspect(s.id),
      });
    } else if (mode === "interrupt") {
      const port = await freePort();
      const w1 = startWorker([db, baseUrl, counter, String(port), restate.adminUrl], { HANG_LABEL: "m1" });
      await w1.waitFor("READY");
      const s = await createSession();
      const submitted = submitTurn(restate.ingressUrl, s.id, { turnId: "turn-1", text: "m1" }).then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      await w1.waitFor("TOOL_RUNNING m1");
      w1.child.kill("SIGKILL");
      await w1.exited;
      // the same endpoint, the same code: the retried invocation replays on the new process
      const w2 = startWorker([db, baseUrl, counter, String(port), restate.adminUrl], { NO_REGISTER: "1" });
      await w2.waitFor("READY");
      const outcome = await submitted;
      Object.assign(report, {
        ok: outcome.ok,
        status: outcome.ok ? 200 : outcome.e instanceof TurnInvocationError ? outcome.e.status : -1,
        error: outcome.ok ? "" : String(outcome.e),
        requests: mock.requests.length,
        counter: counterLines(),
        view: await inspect(s.id),
      });
    } else if (mode === "rlm") {
      // an RLM turn: worker A runs the cell until its second tool call (side.hang r2), where it is
      // SIGKILLed with the sleeper process mid-sleep; worker B (same endpoint) finishes the turn
      const port = await freePort();
      const w1 = startWorker([db, baseUrl, counter, String(port), restate.adminUrl], {
        RLM: "1",
        HANG_LABEL: "r2",
        WORKER_NAME: "A",
      });
      await w1.waitFor("READY");
      const s = await createSession();
      const submitted = submitTurn(restate.ingressUrl, s.id, { turnId: "rlm-turn-1", text: "go" }).then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      await w1.waitFor("TOOL_RUNNING r2");
      w1.child.kill("SIGKILL");
      await w1.exited;
      const counterAtKill = counterLines();
      const w2 = startWorker([db, baseUrl, counter, String(port), restate.adminUrl], {
        RLM: "1",
        WORKER_NAME: "B",
        NO_REGISTER: "1",
      });
      await w2.waitFor("READY");
      const outcome = await submitted;
      Object.assign(report, {
        ok: outcome.ok,
        reply: outcome.ok ? outcome.r : undefined,
        error: outcome.ok ? "" : String(outcome.e),
        requests: mock.requests.length,
        counterAtKill,
        counter: counterLines(),
        // the journal steps each worker took: `ran|replayed <name>`
        steps: {
          A: w1.lines.filter((l) => l.startsWith("STEP ")).map((l) => l.slice(5)),
          B: w2.lines.filter((l) => l.startsWith("STEP ")).map((l) => l.slice(5)),
        },
        view: await inspect(s.id),
      });
    } else if (mode === "mismatch") {
      const port = await freePort();
      const w1 = startWorker([db, baseUrl, counter, String(port), restate.adminUrl], {
        HANG_LABEL: "x1",
        NOTE: "v1",
      });
      await w1.waitFor("READY");
      const s = await createSession();
      const submitted = submitTurn(restate.ingressUrl, s.id, { turnId: "x-turn-1", text: "x1" }).then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      await w1.waitFor("TOOL_RUNNING x1");
      w1.child.kill("SIGKILL");
      await w1.exited;
      // the same endpoint, changed code: the note a hook adds to the turn's input differs
      const w2 = startWorker([db, baseUrl, counter, String(port), restate.adminUrl], {
        NOTE: "v2",
        NO_REGISTER: "1",
      });
      await w2.waitFor("READY");
      const outcome = await submitted;
      Object.assign(report, {
        ok: outcome.ok,
        status: outcome.ok ? 200 : outcome.e instanceof TurnInvocationError ? outcome.e.status : -1,
        error: outcome.ok ? "" : String(outcome.e),
        requests: mock.requests.length,
        counter: counterLines(),
      });
    } else if (mode === "kill" || mode === "commit") {
      // two workers behind one deployment URL (the round-robin proxy), SESSIONS sessions × 2 turns.
      // kill: the worker running the tool of s0t1 hangs there and is SIGKILLed once the mock has
      // answered 2 × SESSIONS requests (half of all; many turns in flight, model replies streamed
      // slowly (MODEL_CHUNK_MS) so that some model calls are cut off too). commit: the worker that commits s3t1
      // SIGKILLs itself right after the commit, before the invocation answers.
      const sessions = Number(process.env.SESSIONS ?? "4");
      const [pa, pb] = [await freePort(), await freePort()];
      const env = (name: string): Record<string, string> =>
        mode === "kill"
          ? { WORKER_NAME: name, HANG_LABEL: "s0t1" }
          : { WORKER_NAME: name, KILL_AFTER_COMMIT: "s3t1" };
      const a = startWorker([db, baseUrl, counter, String(pa), "-"], env("A"));
      const b = startWorker([db, baseUrl, counter, String(pb), "-"], env("B"));
      await Promise.all([a.waitFor("READY"), b.waitFor("READY")]);
      const proxy = await startProxy([`http://127.0.0.1:${pa}`, `http://127.0.0.1:${pb}`]);
      await registerDeployment(restate.adminUrl, proxy.url);
      const ids: string[] = [];
      for (let i = 0; i < sessions; i++) ids.push((await createSession()).id);
      const replies: Record<string, unknown[]> = {};
      const started = performance.now();
      const runs = ids.map(async (id, i) => {
        replies[id] = [];
        for (const t of [1, 2]) {
          const r = await submitTurn(restate.ingressUrl, id, { turnId: `s${i}t${t}`, text: `s${i}t${t}` });
          replies[id]!.push(r);
        }
      });
      const signal = mode === "kill" ? "TOOL_RUNNING s0t1" : "COMMITTED s3t1";
      const victim = await Promise.race([
        a.waitFor(signal).then(() => ({ name: "A", w: a })),
        b.waitFor(signal).then(() => ({ name: "B", w: b })),
      ]);
      if (mode === "kill") {
        await afterRequests(2 * sessions);
        if (process.env.PROGRESS)
          process.stderr.write(`PROGRESS kill ${victim.name} at ${mock.requests.length}\n`);
        victim.w.child.kill("SIGKILL");
      }
      await victim.w.exited;
      // every request the victim made was received by now (it is dead): the repeats must be ones
      // it had asked, asked again later by the survivor
      const requestsAtKill = mock.requests.length;
      await Promise.all(runs);
      const seconds = (performance.now() - started) / 1000;
      const views: Record<string, unknown> = {};
      for (const id of ids) views[id] = await inspect(id);
      // model requests asked more than once with the same body (the same session, turn and step)
      const copies = new Map<string, RecordedRequest[]>();
      for (const r of mock.requests) copies.set(r.rawBody, [...(copies.get(r.rawBody) ?? []), r]);
      const repeats = [...copies.values()]
        .filter((rs) => rs.length > 1)
        .map((rs) => ({
          label: lastUserLabel(rs[0]!),
          copies: rs.length,
          first: rs[0]!.index,
          firstWorker: workerOf(rs[0]!),
          again: rs.slice(1).map((r) => ({ index: r.index, worker: workerOf(r) })),
        }));
      await proxy.close();
      Object.assign(report, {
        ids,
        replies,
        views,
        counter: counterLines(),
        victim: victim.name,
        requestsAtKill,
        requests: mock.requests.length,
        byWorker: {
          A: mock.requests.filter((r) => workerOf(r) === "A").length,
          B: mock.requests.filter((r) => workerOf(r) === "B").length,
        },
        repeats,
        seconds,
        graph: pg ? graphOf(pg, database) : undefined,
      });
    }
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await Promise.all(
      children.map((c) =>
        c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once("exit", r)) : undefined,
      ),
    );
    await local.dispose();
    await restate.stop();
    await mock.close();
    pg?.stop();
  }
  // the report can be large (100 sessions): a file in <tmpdir>, and one line saying it is there
  writeFileSync(join(dir, "report.json"), JSON.stringify(report));
  process.stdout.write("REPORT report.json\n");
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(
      `scenario ${mode} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    process.exit(1);
  },
);
