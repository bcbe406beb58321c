// Does a round trip cost more late in a long session than early? One session,
// run through 200 tool rounds, per-round-trip CPU at the start vs at the end.
//
//   one turn:  one turn of ROUNDS tool rounds (the model calls `add` once per
//              round, then answers): round trip i = from tool call i−1 to tool
//              call i (one model call + its tool dispatch + journal writes);
//   turns:     ROUNDS turns of one tool round each (tool call, answer): per turn
//              = 2 round trips + the commit + loading the active path.
//
// lash with SqliteStore + the effect journal (the issue's case) and with
// MemoryStore, and the raw `openai` SDK loop as the floor (the history the
// request carries grows for everyone: the floor shows what serializing and
// parsing it costs by itself). The runtime runs in a fresh child process per
// run, the mock Chat Completions server in this process (its CPU not counted).
// Reported: median CPU per round trip over the first WINDOW round trips (after
// round 0, which pays the turn's set-up) and over the last WINDOW; ratio
// last / first. Goal (issue 16): ≤ 1.3 for lash with SqliteStore + journal.
//
// Checked before timing: each child first runs a probe session of the same shape
// and stops unless it ended with the expected text after every tool call; after:
// the mock server saw every round of both sessions, each carrying the previous
// tool result.
//
// pnpm exec node bench/perf/long/run.ts [--json out.json] [--rounds 200] [--runs 3] [--window 20]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLash, defineTool, MemoryStore, SqliteStore, textOutput } from "@lash/core";
import { createProvider } from "@lash/providers";
import { type MockReply, type RecordedRequest, startMockServer } from "@lash/providers/testing";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { argValue, markdownTable, median, report } from "../util.ts";

const ROUNDS = Number(argValue("--rounds") ?? 200);
const RUNS = Number(argValue("--runs") ?? 3);
const WINDOW = Number(argValue("--window") ?? 20);
const GOAL = 1.3;
const MODEL = "mock-model";

type Contender = "lash-sqlite" | "lash-memory" | "raw";
type Shape = "one-turn" | "turns";
const CASES: readonly { contender: Contender; shape: Shape }[] = [
  { contender: "lash-sqlite", shape: "one-turn" },
  { contender: "lash-sqlite", shape: "turns" },
  { contender: "lash-memory", shape: "one-turn" },
  { contender: "lash-memory", shape: "turns" },
  { contender: "raw", shape: "one-turn" },
];
const LABEL: Record<Contender, string> = {
  "lash-sqlite": "lash (SqliteStore + journal)",
  "lash-memory": "lash (MemoryStore, journal off)",
  raw: "raw `openai` SDK loop",
};
const SHAPE: Record<Shape, string> = {
  "one-turn": `one turn, ${ROUNDS} tool rounds`,
  turns: `${ROUNDS} turns × 1 tool round`,
};

const add = (a: number, b: number) => `sum=${a + b}`;
/** The session's first user message names the session: `long <k>` (the probe is k = 1). */
const opening = (k: number) => `long ${k}: call add when asked`;

interface Msg {
  readonly role?: string;
  readonly content?: unknown;
}
const text = (c: unknown): string =>
  typeof c === "string"
    ? c
    : Array.isArray(c)
      ? c.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : "")).join("")
      : "";

/** The mock model, a function of the request only: call `add(n, 1)` (n = tool results so far) or answer. */
function responder(shape: Shape): (req: RecordedRequest) => MockReply {
  return (req) => {
    const messages = ((req.body as { messages?: Msg[] }).messages ?? []) as Msg[];
    const session = /^long (\d+):/.exec(text(messages.find((m) => m.role === "user")?.content))?.[1] ?? "?";
    const tools = messages.filter((m) => m.role === "tool");
    const n = tools.length;
    const usage = { input: 20, output: 5 };
    if (n > 0 && !text(tools.at(-1)?.content).includes(add(n - 1, 1)))
      return { text: `wrong tool result ${JSON.stringify(text(tools.at(-1)?.content))}`, usage };
    const last = messages.at(-1);
    const call = {
      toolCalls: [{ id: `call_${session}_${n}`, name: "add", arguments: { a: n, b: 1 } }],
      usage,
    };
    if (shape === "one-turn") return n < ROUNDS ? call : { text: "done", usage };
    return last?.role === "user" ? call : { text: `done ${n}`, usage };
  };
}

/** Problems with what the server saw for one session: every round 0..ROUNDS, in order of tool results. */
function verify(shape: Shape, requests: readonly RecordedRequest[], k: number): string[] {
  const mine = requests.filter((r) =>
    text(
      ((r.body as { messages?: Msg[] }).messages ?? []).find((m) => m.role === "user")?.content,
    ).startsWith(`long ${k}:`),
  );
  const expected = shape === "one-turn" ? ROUNDS + 1 : 2 * ROUNDS;
  return mine.length === expected
    ? []
    : [`session ${k}: the mock server saw ${mine.length} requests, expected ${expected}`];
}

// ---------------------------------------------------------------------------------------------
// The child: one contender, one shape, a probe session then the measured one.

interface ChildResult {
  /** CPU ms of each round trip, in order (one-turn: tool call to tool call; turns: per turn / 2). */
  readonly perRoundTripMs: readonly number[];
  readonly totalCpuMs: number;
  readonly wallMs: number;
}

async function child(contender: Contender, shape: Shape, baseUrl: string, out: string): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), "lash-long-"));
  let marks: number[] = [];
  let calls = 0;
  const cpuNow = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const tool = (a: number, b: number) => {
    calls++;
    marks.push(cpuNow());
    return add(a, b);
  };

  let session: (k: number) => Promise<string>;
  let close = async () => {};
  if (contender === "raw") {
    const client = new OpenAI({ baseURL: baseUrl, apiKey: "test", maxRetries: 0 });
    session = async (k) => {
      const messages: ChatCompletionMessageParam[] = [{ role: "user", content: opening(k) }];
      for (;;) {
        const stream = await client.chat.completions.create({
          model: MODEL,
          messages,
          stream: true,
          tools: [
            {
              type: "function",
              function: {
                name: "add",
                parameters: {
                  type: "object",
                  properties: { a: { type: "integer" }, b: { type: "integer" } },
                  required: ["a", "b"],
                },
              },
            },
          ],
        });
        let answer = "";
        const tc = { id: "", args: "" };
        for await (const chunk of stream) {
          const d = chunk.choices[0]?.delta;
          answer += d?.content ?? "";
          for (const t of d?.tool_calls ?? []) {
            tc.id ||= t.id ?? "";
            tc.args += t.function?.arguments ?? "";
          }
        }
        if (!tc.id) return answer;
        const { a, b } = JSON.parse(tc.args) as { a: number; b: number };
        messages.push({
          role: "assistant",
          content: null,
          tool_calls: [{ id: tc.id, type: "function", function: { name: "add", arguments: tc.args } }],
        });
        messages.push({ role: "tool", tool_call_id: tc.id, content: tool(a, b) });
      }
    };
  } else {
    const model = `openai-compatible/${MODEL}`;
    const lash = createLash({
      store:
        contender === "lash-sqlite" ? SqliteStore.layer({ filename: join(tmp, "lash.db") }) : MemoryStore,
      provider: createProvider(model, { baseUrl, apiKey: "test" }),
      journal: contender === "lash-sqlite",
      maxTurns: ROUNDS + 5,
      plugins: [
        {
          name: "bench",
          tools: [
            defineTool<{ a: number; b: number }>({
              name: "add",
              description: "Add two integers.",
              inputSchema: {
                type: "object",
                properties: { a: { type: "integer" }, b: { type: "integer" } },
                required: ["a", "b"],
              },
              readOnly: true,
              run: async ({ a, b }) => textOutput(tool(a, b)),
            }),
          ],
        },
      ],
    });
    close = () => lash.close();
    session = async (k) => {
      const s = await lash.createSession({ model });
      if (shape === "one-turn") return (await s.turn(opening(k)).result).text;
      let last = "";
      for (let t = 0; t < ROUNDS; t++) {
        last = (await s.turn(t === 0 ? opening(k) : `turn ${t}`).result).text;
        // turns: one mark per finished turn (two round trips)
        marks.push(cpuNow());
      }
      return last;
    };
  }
  const expectedText = shape === "one-turn" ? "done" : `done ${ROUNDS}`;
  const toolMarks = shape === "one-turn";

  // The probe, checked before timing (it also warms the JIT).
  const probeText = await session(1);
  if (probeText.trim() !== expectedText || calls !== ROUNDS)
    throw new Error(
      `probe check failed before timing: ${JSON.stringify(probeText.slice(0, 80))}, ${calls} tool calls`,
    );

  calls = 0;
  marks = [];
  const start = cpuNow();
  const t0 = performance.now();
  const final = await session(0);
  const wallMs = performance.now() - t0;
  const totalCpuMs = cpuNow() - start;
  if (final.trim() !== expectedText || calls !== ROUNDS)
    throw new Error(
      `the measured session ended with ${JSON.stringify(final.slice(0, 80))} after ${calls} tool calls`,
    );
  // turns: the tool marks were pushed too; keep one mark per turn (every second one).
  const points = toolMarks ? marks : marks.filter((_, i) => i % 2 === 1);
  const perRoundTripMs = points.slice(1).map((m, i) => (m - points[i]!) / (toolMarks ? 1 : 2));
  await close();
  rmSync(tmp, { recursive: true, force: true });
  writeFileSync(out, JSON.stringify({ perRoundTripMs, totalCpuMs, wallMs } satisfies ChildResult));
}

// ---------------------------------------------------------------------------------------------
// The parent.

async function runCase(
  contender: Contender,
  shape: Shape,
  scratch: string,
  run: number,
): Promise<ChildResult> {
  const server = await startMockServer({ responder: responder(shape) });
  const out = join(scratch, `${contender}-${shape}-${run}.json`);
  let stderr = "";
  const code = await new Promise<number | null>((resolve) => {
    const c = spawn(
      process.execPath,
      [
        import.meta.filename,
        "--child",
        contender,
        shape,
        server.baseUrl("openai-chat"),
        out,
        "--rounds",
        String(ROUNDS),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    c.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    c.on("exit", resolve);
  });
  const requests = server.requests;
  await server.close();
  const problems = code === 0 ? [...verify(shape, requests, 1), ...verify(shape, requests, 0)] : [];
  if (code !== 0 || problems.length > 0) {
    process.stderr.write(
      `\nLONG-SESSION BENCHMARK FAILED: ${contender} ${shape} run ${run + 1}: ${code !== 0 ? `child exited with ${code}: ${stderr.trim().split("\n").slice(-4).join(" | ")}` : problems.join("; ")}\n`,
    );
    process.exit(1);
  }
  return JSON.parse(readFileSync(out, "utf8")) as ChildResult;
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "lash-long-bench-"));
  const started = performance.now();
  const rows: {
    contender: Contender;
    shape: Shape;
    firstMs: number;
    lastMs: number;
    ratio: number;
    ratios: number[];
  }[] = [];
  for (const { contender, shape } of CASES) {
    const firsts: number[] = [];
    const lasts: number[] = [];
    const ratios: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const r = await runCase(contender, shape, scratch, run);
      const first = median(r.perRoundTripMs.slice(0, WINDOW));
      const last = median(r.perRoundTripMs.slice(-WINDOW));
      firsts.push(first);
      lasts.push(last);
      ratios.push(last / first);
      process.stdout.write(
        `  run ${run + 1}/${RUNS} ${contender.padEnd(12)} ${shape.padEnd(9)} first ${first.toFixed(2)} ms  last ${last.toFixed(2)} ms  ratio ${(last / first).toFixed(2)}  (total cpu ${r.totalCpuMs.toFixed(0)} ms, wall ${r.wallMs.toFixed(0)} ms)\n`,
      );
    }
    rows.push({
      contender,
      shape,
      firstMs: median(firsts),
      lastMs: median(lasts),
      ratio: median(ratios),
      ratios,
    });
  }
  rmSync(scratch, { recursive: true, force: true });
  const totalSeconds = (performance.now() - started) / 1000;
  const goalOf = (c: Contender) => (c === "lash-sqlite" ? GOAL : undefined);
  const verdict = (r: (typeof rows)[number]) => {
    const goal = goalOf(r.contender);
    return goal === undefined ? "-" : r.ratio <= goal ? "met" : "**missed**";
  };
  const table = markdownTable(
    [
      "contender",
      "session",
      `CPU ms / round trip, first ${WINDOW}`,
      `CPU ms / round trip, last ${WINDOW}`,
      "last / first",
      "last − first (ms)",
      "min–max over runs",
      "goal",
      "met?",
    ],
    rows.map((r) => [
      LABEL[r.contender],
      SHAPE[r.shape],
      r.firstMs.toFixed(2),
      r.lastMs.toFixed(2),
      `${r.ratio.toFixed(2)}×`,
      (r.lastMs - r.firstMs).toFixed(2),
      `${Math.min(...r.ratios).toFixed(2)}–${Math.max(...r.ratios).toFixed(2)}`,
      goalOf(r.contender) !== undefined ? `≤ ${GOAL}×` : "-",
      verdict(r),
    ]),
  );
  const goalRows = rows.filter((r) => goalOf(r.contender) !== undefined);
  report({
    name: "long",
    title: `Per-round-trip cost at the start vs the end of one ${ROUNDS}-round session`,
    table,
    results: { rounds: ROUNDS, runs: RUNS, window: WINDOW, goal: GOAL, rows, totalSeconds },
    goals: `Goal (issue 16): a round trip at the end of a ${ROUNDS}-round session costs ≤ ${GOAL}× one at its start, for lash with SqliteStore + journal — ${goalRows.map((r) => `${SHAPE[r.shape]}: ${r.ratio.toFixed(2)}× (${verdict(r).replaceAll("*", "")})`).join("; ")}.`,
    notes: [
      `CPU = the child process's user + system time (process.cpuUsage); one turn: between consecutive tool calls (a model call over the mock Chat Completions server, its stream, the tool's dispatch and the journal writes); turns: per turn (2 round trips, commit and active-path load included) / 2. ` +
        `First = round trips 1..${WINDOW} (round 0 pays the turn's set-up), last = the final ${WINDOW}; medians within each window, then the median over ${RUNS} runs, each in a fresh process after a checked probe session of the same shape. ` +
        `Every request carries the whole history, so JSON encoding and parsing grow for every contender: the raw SDK row is that floor. A ratio flatters a contender with a high starting cost: the absolute growth (last − first) is beside it. Total ${totalSeconds.toFixed(0)} s.`,
    ],
  });
}

if (process.argv[2] === "--child") {
  const [, , , contender, shape, baseUrl, out] = process.argv;
  child(contender as Contender, shape as Shape, baseUrl!, out!).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
} else await main();
