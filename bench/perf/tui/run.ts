// TUI render cost per new event with 10 vs 500 turns of history.
//   pnpm exec node bench/perf/tui/run.ts [--json out.json] [--turns 10,500] [--reps 3]
//
// A real turn (reasoning, streamed text, a shell call with streamed output, an
// edit with a diff, a streamed markdown answer) is recorded once from a real
// LashRuntime + ScriptedProvider. History is N replays of it; then the same
// events are fed as a new turn and every event's cost is measured: from the
// event reaching the controller to ink having rendered the frame (React
// reconcile + layout + output), on a fake 120x40 TTY.
// React's production build, as `lash` loads it (apps/cli/src/tui/index.ts); set before ink/react load.
import "./production.ts";
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  type TurnActivity,
} from "@lash/core";
import { ScriptedProvider } from "@lash/providers/testing";
import { toolsPlugin } from "@lash/tools";
import { Effect, Layer, ManagedRuntime } from "effect";
import type { CliContext } from "../../../apps/cli/src/context.ts";
import { mountTui, TuiController } from "../../../apps/cli/src/tui/mount.ts";
import { argValue, markdownTable, median, percentile, report } from "../util.ts";

const turnsArg = (argValue("--turns") ?? "10,500").split(",").map(Number);
const reps = Number(argValue("--reps") ?? "3");

class FakeTty extends EventEmitter {
  isTTY = true;
  columns = 120;
  rows = 40;
  bytes = 0;
  /** The newest output (ANSI codes included), for the check that the measured turn reached the screen. */
  tail = "";
  write(chunk: string | Uint8Array, cb?: () => void): boolean {
    this.bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
    this.tail = (this.tail + (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))).slice(
      -256 * 1024,
    );
    cb?.();
    return true;
  }
}

class FakeStdin extends EventEmitter {
  isTTY = true;
  private queue: string[] = [];
  /** One write of the terminal (a keystroke). */
  type(chunk: string): void {
    this.queue.push(chunk);
    this.emit("readable");
  }
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read() {
    return this.queue.shift() ?? null;
  }
}

const answer = [
  "## What changed",
  "",
  "I ran the test suite and fixed the failing assertion in `math.ts`:",
  "",
  "- the **sum** helper now handles empty arrays",
  "- the test names say what they check",
  "- see [the docs](https://example.com/docs) for the API",
  "",
  "```ts",
  "export function sum(xs: readonly number[]): number {",
  "  return xs.reduce((a, b) => a + b, 0); // 0 for []",
  "}",
  "```",
  "",
  "| file | change |",
  "|---|---|",
  "| math.ts | +1 −1 |",
  "",
  "All 20 tests pass now.",
].join("\n");

async function recordTurn(): Promise<{
  events: TurnActivity[];
  ctx: CliContext;
  cleanup: () => Promise<void>;
}> {
  const root = mkdtempSync(join(tmpdir(), "lash-tui-bench-"));
  const cwd = join(root, "work");
  mkdirSync(cwd);
  writeFileSync(join(cwd, "math.ts"), "export const sum = (xs) => xs.reduce((a, b) => a + b);\n");
  const provider = new ScriptedProvider([
    {
      reasoning: {
        text: "The user wants the tests fixed. I should run them first and look at the failure.",
        chunks: 8,
      },
      text: "I'll run the tests first.",
      textChunks: 6,
      toolCalls: [
        { id: "sh", name: "shell", arguments: { command: "for i in $(seq 1 20); do echo test $i ok; done" } },
      ],
      usage: { input: 5000, output: 80 },
    },
    {
      toolCalls: [
        {
          id: "ed",
          name: "edit",
          arguments: {
            path: "math.ts",
            edits: [{ oldText: "xs.reduce((a, b) => a + b)", newText: "xs.reduce((a, b) => a + b, 0)" }],
          },
        },
      ],
      usage: { input: 5200, output: 60 },
    },
    { text: answer, textChunks: 60, usage: { input: 5400, output: 300 } },
  ]);
  const info = {
    id: "bench/model",
    contextWindow: 200_000,
    maxOutput: 8000,
    reasoning: true,
    images: false,
    caching: true,
    pricing: { input: 3, output: 15 },
  };
  const runtime = ManagedRuntime.make(
    LashRuntime.layer({ plugins: [toolsPlugin({ root: cwd })] }).pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          MemoryStore,
          LlmProviders.single(provider),
          IdGenerator.Live,
          ModelCatalog.fromEntries([info]),
        ),
      ),
    ),
  );
  const ctx: CliContext = {
    runtime,
    paths: {
      home: join(root, "home"),
      db: join(root, "home", "lash.db"),
      config: join(root, "home", "config.json"),
    },
    settings: { model: info.id, mode: "standard", cwd, scripted: true },
    modelInfo: () => info,
    knownModels: () => [info.id],
    setModel() {},
    newSession: () =>
      runtime.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.createSession({ model: info.id, cwd }))),
    gitBranch: () => "main",
    pluginStatus: () => ({}),
    exportSession: () => Promise.reject(new Error("n/a")),
    close: () => runtime.dispose(),
  };
  const s = await ctx.newSession();
  const events: TurnActivity[] = [];
  await runtime.runPromise(
    Effect.flatMap(LashRuntime, (rt) =>
      rt.turn(s.id, { text: "fix the tests" }, { onEvent: (e) => events.push(e) }),
    ),
  );
  return {
    events,
    ctx,
    cleanup: async () => {
      await runtime.dispose();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

interface Sample {
  readonly turns: number;
  readonly committed: number;
  readonly mountMs: number;
  readonly perEventMs: number[];
  /** Streamed text chunks (textDelta) only. */
  readonly perChunkMs: number[];
  /** Events that moved a finished item to <Static>. */
  readonly perFinishedMs: number[];
  /** A keystroke mid-stream to the frame that shows it. */
  readonly keyMs: number[];
  readonly inkRenderMs: number[];
  readonly cpuPerEventMs: number;
  readonly bytesPerEvent: number;
}

async function measure(ctx: CliContext, template: readonly TurnActivity[], turns: number): Promise<Sample> {
  const controller = new TuiController(ctx, { throttleMs: 0, maxLiveLines: 24 });
  const replay = (turn: string) => {
    controller.transcript.user(`prompt for ${turn}`);
    for (const e of template) controller.ingest({ ...e, turnId: turn });
  };
  for (let i = 0; i < turns; i++) replay(`h${i}`);
  const committed = controller.getState().committed.length;

  const stdout = new FakeTty();
  const stdin = new FakeStdin();
  let waiter: ((ms: number) => void) | undefined;
  const t0 = performance.now();
  let firstFrame: Promise<void> = new Promise((resolve) => {
    waiter = () => resolve();
  });
  const inst = mountTui(controller, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    maxFps: 1000,
    kittyKeyboard: false,
    onRender: ({ renderTime }) => {
      const w = waiter;
      waiter = undefined;
      w?.(renderTime);
    },
  });
  await firstFrame;
  const mountMs = performance.now() - t0;
  firstFrame = Promise.resolve();

  // the measured turn
  controller.transcript.user("the measured prompt");
  controller.flushNow();
  await new Promise((r) => setTimeout(r, 5));
  const perEventMs: number[] = [];
  const perChunkMs: number[] = [];
  const perFinishedMs: number[] = [];
  const keyMs: number[] = [];
  const inkRenderMs: number[] = [];
  const bytes0 = stdout.bytes;
  const cpu0 = process.cpuUsage();
  let k = 0;
  for (const e of template) {
    const before = controller.getState().committed.length;
    const rendered = new Promise<number>((resolve) => {
      waiter = resolve;
    });
    const start = performance.now();
    controller.ingest({ ...e, turnId: "measured" });
    const timeout = new Promise<number>((resolve) => setTimeout(() => resolve(-1), 50));
    const renderTime = await Promise.race([rendered, timeout]);
    if (renderTime >= 0) {
      const ms = performance.now() - start;
      perEventMs.push(ms);
      inkRenderMs.push(renderTime);
      if (e.type === "textDelta") perChunkMs.push(ms);
      if (controller.getState().committed.length > before) perFinishedMs.push(ms);
    }
    waiter = undefined;
    // let ink's 1 ms render throttle window pass so the next event renders on its own
    await new Promise((r) => setTimeout(r, 2));
    // every 5th event: a keystroke typed into the prompt while the turn streams
    if (++k % 5 === 0) {
      const echoed = new Promise<number>((resolve) => {
        waiter = resolve;
      });
      const t = performance.now();
      stdin.type("x");
      const r = await Promise.race([
        echoed,
        new Promise<number>((resolve) => setTimeout(() => resolve(-1), 50)),
      ]);
      if (r >= 0) keyMs.push(performance.now() - t);
      waiter = undefined;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
  const cpu = process.cpuUsage(cpu0);
  // Checked (the warm-up run's check comes before anything is timed): the measured turn's answer is on screen.
  if (!stdout.tail.includes("handles empty arrays"))
    throw new Error(`${turns} turns: the measured turn's answer never reached the terminal`);
  // The waits between events cost no CPU: this is the CPU the TUI spent per event (controller, React, ink).
  const cpuPerEventMs = (cpu.user + cpu.system) / 1000 / template.length;
  const bytesPerEvent = (stdout.bytes - bytes0) / Math.max(1, perEventMs.length);
  inst.unmount();
  inst.cleanup();
  return {
    turns,
    committed,
    mountMs,
    perEventMs,
    perChunkMs,
    perFinishedMs,
    keyMs,
    inkRenderMs,
    cpuPerEventMs,
    bytesPerEvent,
  };
}

const { events, ctx, cleanup } = await recordTurn();
// warm-up (JIT, module init) so the first size measured is not penalised
await measure(ctx, events, 2);
const results: Sample[] = [];
for (const turns of turnsArg) {
  const runs: Sample[] = [];
  for (let r = 0; r < reps; r++) runs.push(await measure(ctx, events, turns));
  results.push({
    turns,
    committed: runs[0]!.committed,
    mountMs: median(runs.map((r) => r.mountMs)),
    perEventMs: runs.flatMap((r) => r.perEventMs),
    perChunkMs: runs.flatMap((r) => r.perChunkMs),
    perFinishedMs: runs.flatMap((r) => r.perFinishedMs),
    keyMs: runs.flatMap((r) => r.keyMs),
    inkRenderMs: runs.flatMap((r) => r.inkRenderMs),
    cpuPerEventMs: median(runs.map((r) => r.cpuPerEventMs)),
    bytesPerEvent: median(runs.map((r) => r.bytesPerEvent)),
  });
}
await cleanup();

const f = (n: number) => n.toFixed(3);
/** Issue 6: a 500-turn session renders "without slowing down" — per-event CPU at the largest size ≤ 1.2× the smallest (20 % for noise). */
const GOAL_RATIO = 1.2;
const base = results[0];
const last = results[results.length - 1];
const cpuRatio = base && last ? last.cpuPerEventMs / base.cpuPerEventMs : undefined;
const rows = results.map((r) => [
  r.turns,
  r.committed,
  r.perEventMs.length,
  f(r.cpuPerEventMs),
  base ? `${(r.cpuPerEventMs / base.cpuPerEventMs).toFixed(2)}×` : "-",
  r === last && r !== base ? `≤ ${GOAL_RATIO}×` : "-",
  r === last && r !== base && cpuRatio !== undefined ? (cpuRatio <= GOAL_RATIO ? "met" : "**missed**") : "-",
  f(median(r.perEventMs)),
  f(percentile(r.perEventMs, 95)),
  f(median(r.perChunkMs)),
  f(median(r.perFinishedMs)),
  f(median(r.keyMs)),
  f(median(r.inkRenderMs)),
  Math.round(r.bytesPerEvent),
  r.mountMs.toFixed(0),
]);
const goals = `Goal (issue 6): rendering does not slow down with history — per-event CPU at ${last?.turns} turns ≤ ${GOAL_RATIO}× that at ${base?.turns} turns: ${cpuRatio !== undefined ? `${cpuRatio.toFixed(2)}×, ${cpuRatio <= GOAL_RATIO ? "met" : "missed"}` : "not measured"}. No goal is set for full replay: reported. CPU per event = this process's CPU over the measured turn's events (and the keystrokes typed every 5th event) divided by the number of events (the pauses between events cost none); wall per event beside it. "events" counts the events that rendered a frame within 50 ms (the rest are not in the wall figures).`;
const notes = [
  `Events per turn: ${events.length} (reasoning, text deltas, tool calls, streamed shell output, edit diff, 60-chunk markdown answer). ${reps} runs per size; fake 120x40 TTY, ink incremental rendering, maxFps 1000 so every event renders on its own.`,
  "per streamed chunk = textDelta events only; per finished item = events that moved a finished item to <Static> (written once above the live area); keystroke to frame = a key typed into the prompt every 5th event mid-stream, from stdin to ink's rendered frame (the terminal's own echo latency is not included).",
  "per event = from the event reaching the TUI controller to ink having rendered the frame (React reconcile + Yoga layout + output); ink render = ink's own layout+output part.",
  "full replay = first frame with <Static> writing every history item once (ink lays out each line: ~1 ms per item).",
];
if (base && last && base !== last)
  notes.push(
    `Median per-event wall time at ${last.turns} turns is ${(median(last.perEventMs) / median(base.perEventMs)).toFixed(2)}x the cost at ${base.turns} turns: finished items are rendered once by <Static>, each frame only lays out the live tail.`,
  );
report({
  name: "tui",
  goals,
  title: "TUI render cost per new event vs history length",
  table: markdownTable(
    [
      "history turns",
      "static items",
      "events",
      "CPU ms / event",
      "vs fewest turns",
      "goal",
      "met?",
      "per event median ms (wall)",
      "per event p95 ms",
      "per streamed chunk median ms",
      "per finished item median ms",
      "keystroke to frame median ms",
      "ink render median ms",
      "bytes/event",
      "full replay ms",
    ],
    rows,
  ),
  results: results.map((r) => ({
    turns: r.turns,
    staticItems: r.committed,
    events: r.perEventMs.length,
    perEventMedianMs: median(r.perEventMs),
    perEventP95Ms: percentile(r.perEventMs, 95),
    perChunkMedianMs: median(r.perChunkMs),
    perChunkP95Ms: percentile(r.perChunkMs, 95),
    chunks: r.perChunkMs.length,
    perFinishedMedianMs: median(r.perFinishedMs),
    perFinishedP95Ms: percentile(r.perFinishedMs, 95),
    finished: r.perFinishedMs.length,
    keystrokeMedianMs: median(r.keyMs),
    keystrokeP95Ms: percentile(r.keyMs, 95),
    inkRenderMedianMs: median(r.inkRenderMs),
    cpuPerEventMs: r.cpuPerEventMs,
    bytesPerEvent: r.bytesPerEvent,
    fullReplayMs: r.mountMs,
  })),
  notes,
});
process.exit(0);
