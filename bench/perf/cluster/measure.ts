// The measurements of bench/perf/cluster (run.ts starts this inside `unshare -n`, lo up: restate-
// server's start-up version check cannot leave the machine). Prints nothing but progress on
// stderr; writes its results as JSON to argv[2].
//
// One workload for every engine: S sessions at once, each running turns one after the other; a
// turn is a scripted tool loop against the mock wire server (model call → one `side_effect` tool
// call → model call → answer), so 3 effects per turn (2 model calls, 1 tool attempt).
//   local   — the in-process LashRuntime on a SQLite file (the embedded default), in this process.
//   restate — Postgres 15 + restate-server + 1 or 2 lash worker processes (worker-main.ts of the
//             restate tests) behind one deployment URL (the tests' round-robin proxy); turns
//             submitted through the ingress.
// CPU per process from /proc (user + system): this process (driver: mock server, client, and for
// `local` the runtime itself), the workers, restate-server, Postgres (postmaster, its live backends
// and its reaped children). Every configuration runs a warm-up turn whose reply is checked first;
// every timed turn's reply is checked too (outcome finished, text `done <label>`).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SqliteStore,
  textOutput,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { type RecordedRequest, startMockServer } from "@lash/providers/testing";
import { freePort, registerDeployment, startRestateServer, submitTurn } from "@lash/restate";
import { PostgresStore } from "@lash/store-postgres";
import { startPostgres } from "@lash/store-postgres/testing";
import { Effect, Layer, ManagedRuntime } from "effect";
import { startProxy } from "../../../packages/restate/test/cluster/proxy.ts";

const out = process.argv[2]!;
const LEVELS = (process.env.LEVELS ?? "1,10,50").split(",").map(Number);
const REPS = Number(process.env.REPS ?? 3);
const workerMain = join(import.meta.dirname, "../../../packages/restate/test/cluster/worker-main.ts");
const log = (s: string) => process.stderr.write(`${s}\n`);

let ticks: number | undefined;
/** [own CPU ms, reaped children's CPU ms] of a process, from /proc. */
function cpu(pid: number): [number, number] {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8");
    const x = f.slice(f.lastIndexOf(")") + 2).split(" ");
    ticks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    return [
      ((Number(x[11]) + Number(x[12])) * 1000) / ticks,
      ((Number(x[13]) + Number(x[14])) * 1000) / ticks,
    ];
  } catch {
    return [0, 0];
  }
}
const ppidOf = (pid: number) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(f.slice(f.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return -1;
  }
};
/** The whole CPU a process tree root used: itself, its live children, its reaped children. */
function treeCpu(root: number): number {
  const [own, reaped] = cpu(root);
  let live = 0;
  for (const d of readdirSync("/proc")) {
    const pid = Number(d);
    if (pid > 0 && ppidOf(pid) === root) live += cpu(pid)[0] + cpu(pid)[1];
  }
  return own + reaped + live;
}
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((c) => (c as { text?: string }).text ?? "").join("")
      : "";
function respond(r: RecordedRequest) {
  const messages = (r.body as { messages: { role: string; content: unknown }[] }).messages;
  const label = textOf(messages.filter((m) => m.role === "user").at(-1)?.content);
  if (messages.at(-1)!.role === "tool") return { text: `done ${label}`, usage: { input: 20, output: 5 } };
  return { toolCalls: [{ name: "side_effect", arguments: { label } }], usage: { input: 20, output: 5 } };
}

interface Row {
  engine: string;
  workers: number;
  sessions: number;
  turns: number;
  wallMs: number;
  cpuMs: { driver: number; workers: number; restate: number; postgres: number; total: number };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const turnsPer = (s: number) => Math.max(2, Math.ceil(20 / s));

function check(reply: { outcome: string; text: string; reason?: string; message?: string }, label: string) {
  if (reply.outcome !== "finished" || reply.text !== `done ${label}`)
    throw new Error(`CLUSTER BENCHMARK FAILED: turn ${label} answered ${JSON.stringify(reply)}`);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "lash-bench-cluster-"));
  const counter = join(dir, "counter.txt");
  writeFileSync(counter, "");
  // no provider retries below: a long keep-alive keeps the mock from closing a socket a worker reuses
  const mock = await startMockServer({ responder: respond, keepAliveTimeoutMs: 120_000 });
  const baseUrl = mock.baseUrl("openai-chat");
  const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "bench", retry: false });
  const rows: Row[] = [];
  const children: ChildProcess[] = [];
  const pg = await startPostgres();
  const restate = await startRestateServer({ dir: join(dir, "restate") }).catch((e: unknown) => {
    pg.stop();
    throw e;
  });
  let sessionNo = 0;
  try {
    // ── local: the in-process runtime on SQLite ──
    const tools: Plugin = {
      name: "bench-tools",
      tools: [
        {
          name: "side_effect",
          description: "Appends a line to the side-effect counter (not idempotent).",
          inputSchema: { type: "object", properties: { label: { type: "string" } } },
          idempotent: false,
          execute: (args) =>
            Effect.sync(() => {
              const label = (args as { label?: string }).label ?? "";
              writeFileSync(counter, `${label}\n`, { flag: "a" });
              return textOutput(`did ${label}`);
            }),
        },
      ],
    };
    const local = ManagedRuntime.make(
      LashRuntime.layer({ plugins: [tools] }).pipe(
        Layer.provide(
          Layer.mergeAll(
            SqliteStore.layer({ filename: join(dir, "local.db") }),
            // lash's default retry: with 50 sessions and the mock server in this one process a
            // keep-alive socket is sometimes reset (ECONNRESET); the retry asks again
            LlmProviders.single(createProvider("openai-compatible/mock", { baseUrl, apiKey: "bench" })),
            IdGenerator.Live,
            ModelCatalog.Empty,
          ),
        ),
      ),
    );
    const rt = await local.runPromise(LashRuntime);
    const localTurn = async (sessionId: string, label: string) => {
      const r = await local.runPromise(rt.turn(sessionId, { text: label }, { turnId: label, wait: true }));
      check({ outcome: r.outcome.type, text: r.text, ...r.outcome }, label);
    };
    const newLocal = async () =>
      (await local.runPromise(rt.createSession({ model: "openai-compatible/mock" }))).id;
    const warm = await newLocal();
    await localTurn(warm, `w${sessionNo++}`);
    for (const s of LEVELS)
      for (let rep = 0; rep < REPS; rep++) {
        const ids = await Promise.all(Array.from({ length: s }, () => newLocal()));
        const c0 = selfCpu();
        const t0 = performance.now();
        await Promise.all(
          ids.map(async (id) => {
            for (let t = 0; t < turnsPer(s); t++) await localTurn(id, `l${sessionNo++}`);
          }),
        );
        const wallMs = performance.now() - t0;
        const driver = selfCpu() - c0;
        rows.push({
          engine: "local/SQLite",
          workers: 1,
          sessions: s,
          turns: s * turnsPer(s),
          wallMs,
          cpuMs: { driver, workers: 0, restate: 0, postgres: 0, total: driver },
        });
        log(`local s=${s} rep=${rep}: ${wallMs.toFixed(0)} ms wall, ${driver.toFixed(0)} ms CPU`);
      }
    await local.dispose();

    // ── restate: Postgres + restate-server + 1 or 2 workers behind one deployment ──
    const pgRoot = Number(readFileSync(join(pg.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    const restatePid = restate.child.pid!;
    for (const n of [1, 2]) {
      const url = pg.createDatabase(`bench_w${n}`);
      const ports = await Promise.all(Array.from({ length: n }, () => freePort()));
      const workers = ports.map((port) =>
        spawn(process.execPath, [workerMain, url, baseUrl, counter, String(port), "-"], {
          stdio: ["ignore", "pipe", "inherit"],
        }),
      );
      children.push(...workers);
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve, reject) => {
              let buf = "";
              w.stdout!.on("data", (d: Buffer) => {
                buf += d.toString();
                if (buf.includes("READY")) resolve();
              });
              w.once("exit", (c) => reject(new Error(`worker exited (${c}) before READY`)));
            }),
        ),
      );
      const proxy = await startProxy(ports.map((p) => `http://127.0.0.1:${p}`));
      await registerDeployment(restate.adminUrl, proxy.url);
      const store = ManagedRuntime.make(
        LashRuntime.layer().pipe(
          Layer.provide(
            Layer.mergeAll(
              PostgresStore.layer({ url, maxConnections: 2 }),
              LlmProviders.single(provider),
              IdGenerator.Live,
              ModelCatalog.Empty,
            ),
          ),
        ),
      );
      const newSession = async () =>
        (
          await store.runPromise(
            Effect.flatMap(LashRuntime, (r) => r.createSession({ model: "openai-compatible/mock" })),
          )
        ).id;
      const restateTurn = async (id: string, label: string) =>
        check(await submitTurn(restate.ingressUrl, id, { turnId: label, text: label }), label);
      // warm-up, checked: every worker answers a turn (the proxy alternates)
      for (let i = 0; i < 2 * n; i++) await restateTurn(await newSession(), `w${sessionNo++}`);
      for (const s of LEVELS)
        for (let rep = 0; rep < REPS; rep++) {
          const ids = await Promise.all(Array.from({ length: s }, () => newSession()));
          const before = {
            driver: selfCpu(),
            workers: workers.map((w) => cpu(w.pid!)[0]),
            restate: treeCpu(restatePid),
            postgres: treeCpu(pgRoot),
          };
          const t0 = performance.now();
          await Promise.all(
            ids.map(async (id) => {
              for (let t = 0; t < turnsPer(s); t++) await restateTurn(id, `r${sessionNo++}`);
            }),
          );
          const wallMs = performance.now() - t0;
          const c = {
            driver: selfCpu() - before.driver,
            workers: workers.reduce((a, w, i) => a + cpu(w.pid!)[0] - before.workers[i]!, 0),
            restate: treeCpu(restatePid) - before.restate,
            postgres: treeCpu(pgRoot) - before.postgres,
          };
          rows.push({
            engine: "Restate/Postgres",
            workers: n,
            sessions: s,
            turns: s * turnsPer(s),
            wallMs,
            cpuMs: { ...c, total: c.driver + c.workers + c.restate + c.postgres },
          });
          log(`restate w=${n} s=${s} rep=${rep}: ${wallMs.toFixed(0)} ms wall, ${JSON.stringify(c)}`);
        }
      await proxy.close();
      await store.dispose();
      for (const w of workers) w.kill("SIGKILL");
    }
    // every tool ran once per turn: the counter has one line per turn, none twice
    const lines = readFileSync(counter, "utf8").split("\n").filter(Boolean);
    if (new Set(lines).size !== lines.length)
      throw new Error(
        "CLUSTER BENCHMARK FAILED: a tool ran twice (the side-effect counter has a label twice)",
      );
    const summary = new Map<string, Row[]>();
    for (const r of rows) {
      const k = `${r.engine}|${r.workers}|${r.sessions}`;
      summary.set(k, [...(summary.get(k) ?? []), r]);
    }
    const results = [...summary.values()].map((rs) => ({
      engine: rs[0]!.engine,
      workers: rs[0]!.workers,
      sessions: rs[0]!.sessions,
      turns: rs[0]!.turns,
      reps: rs.length,
      wallMsPerTurn: median(rs.map((r) => r.wallMs / r.turns)),
      turnsPerSecond: median(rs.map((r) => (r.turns * 1000) / r.wallMs)),
      cpuMsPerTurn: median(rs.map((r) => r.cpuMs.total / r.turns)),
      cpuMsPerTurnBy: {
        driver: median(rs.map((r) => r.cpuMs.driver / r.turns)),
        workers: median(rs.map((r) => r.cpuMs.workers / r.turns)),
        restate: median(rs.map((r) => r.cpuMs.restate / r.turns)),
        postgres: median(rs.map((r) => r.cpuMs.postgres / r.turns)),
      },
    }));
    writeFileSync(out, JSON.stringify({ results, requests: mock.requests.length }));
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await restate.stop();
    pg.stop();
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
