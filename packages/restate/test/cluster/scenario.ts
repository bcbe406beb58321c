// The cluster scenarios, run inside a private network namespace (`unshare -n`, lo up) by
// restate.test.ts: the mock wire server, restate-server and the worker processes all live in
// it, so restate-server's version check cannot leave the machine. Prints one line
// `REPORT <json>` that the test asserts on.
//   node scenario.ts <basic|interrupt|kill> <tmpdir>
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IdGenerator, LashRuntime, LlmProviders, ModelCatalog, SqliteStore } from "@lash/core";
import { createProvider } from "@lash/providers";
import { type MockReply, type RecordedRequest, startMockServer } from "@lash/providers/testing";
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
function respond(request: RecordedRequest): MockReply {
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  const last = messages.at(-1)!;
  const users = messages.filter((m) => m.role === "user" && !textOf(m.content).startsWith("note "));
  const label = textOf(users.at(-1)?.content);
  if (last.role === "tool") return { text: `done ${label}`, usage: { input: 20, output: 5 } };
  return { toolCalls: [{ name: "side_effect", arguments: { label } }], usage: { input: 20, output: 5 } };
}

const lastUserLabel = (r: RecordedRequest) =>
  textOf(
    (r.body as { messages: { role: string; content: unknown }[] }).messages
      .filter((m) => m.role === "user")
      .at(-1)?.content,
  );

async function main() {
  const mock = await startMockServer({ responder: respond });
  const restate = await startRestateServer({ dir: join(dir, "restate") });
  const db = join(dir, "lash.db");
  const counter = join(dir, "counter.txt");
  writeFileSync(counter, "");
  const baseUrl = mock.baseUrl("openai-chat");
  const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "test", retry: false });
  const local = ManagedRuntime.make(
    LashRuntime.layer().pipe(
      Layer.provide(
        Layer.mergeAll(
          SqliteStore.layer({ filename: db }),
          LlmProviders.single(provider),
          IdGenerator.Live,
          ModelCatalog.Empty,
        ),
      ),
    ),
  );
  const createSession = () =>
    local.runPromise(
      Effect.flatMap(LashRuntime, (rt) => rt.createSession({ model: "openai-compatible/mock" })),
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
    } else if (mode === "kill") {
      const sessions = Number(process.env.SESSIONS ?? "4");
      const [pa, pb] = [await freePort(), await freePort()];
      const a = startWorker([db, baseUrl, counter, String(pa), "-"], { HANG_LABEL: "s0t1" });
      const b = startWorker([db, baseUrl, counter, String(pb), "-"], {});
      await Promise.all([a.waitFor("READY"), b.waitFor("READY")]);
      const proxy = await startProxy([`http://127.0.0.1:${pa}`, `http://127.0.0.1:${pb}`]);
      await registerDeployment(restate.adminUrl, proxy.url);
      const ids: string[] = [];
      for (let i = 0; i < sessions; i++) ids.push((await createSession()).id);
      let requestsAtKill = -1;
      const replies: Record<string, unknown[]> = {};
      const runs = ids.map(async (id, i) => {
        replies[id] = [];
        for (const t of [1, 2]) {
          const r = await submitTurn(restate.ingressUrl, id, { turnId: `s${i}t${t}`, text: `s${i}t${t}` });
          replies[id]!.push(r);
        }
      });
      await a.waitFor("TOOL_RUNNING s0t1");
      requestsAtKill = mock.requests.length;
      a.child.kill("SIGKILL");
      await a.exited;
      await Promise.all(runs);
      const views: Record<string, unknown> = {};
      for (const id of ids) views[id] = await inspect(id);
      // model requests asked twice with the same body: where were the first copies?
      const seen = new Map<string, number>();
      const repeats: { label: string; first: number; again: number }[] = [];
      for (const r of mock.requests) {
        const prev = seen.get(r.rawBody);
        if (prev !== undefined) repeats.push({ label: lastUserLabel(r), first: prev, again: r.index });
        else seen.set(r.rawBody, r.index);
      }
      await proxy.close();
      Object.assign(report, {
        ids,
        replies,
        views,
        counter: counterLines(),
        requestsAtKill,
        requests: mock.requests.length,
        repeats,
        workerBServed: b.child.exitCode === null,
      });
    }
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await Promise.all(
      children.map((c) =>
        c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once("exit", r)) : undefined,
      ),
    );
    await restate.stop();
    await mock.close();
    await local.dispose();
  }
  process.stdout.write(`REPORT ${JSON.stringify(report)}\n`);
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
