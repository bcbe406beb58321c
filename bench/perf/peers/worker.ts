// One framework, one run (probes, then the SSE tool loop, the non-streamed tool
// loop where the framework has one, and streaming), in a fresh process (spawned
// by run.ts):
//   node worker.ts <framework> <baseUrl> <specs-json> <out-file> [--sabotage|--sabotage-probe]
// Imports, global set-up and the probe sessions (one per variant, checked before
// anything is timed; they also warm the JIT) happen before the measurement; CPU time
// (process.cpuUsage) and wall time cover the workload only. The mock server
// runs in the parent, so its CPU is not counted here.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  AdapterContext,
  Framework,
  FrameworkAdapter,
  Variant,
  WorkerOutput,
  WorkerResult,
  WorkloadSpec,
} from "./workload.ts";
import { add, FINAL_TEXT, FRAMEWORKS, PROBE, streamText, VARIANTS, wireOf } from "./workload.ts";

async function load(name: Framework, ctx: AdapterContext): Promise<FrameworkAdapter> {
  switch (name) {
    case "raw":
      return (await import("./frameworks/raw.ts")).rawAdapter(ctx);
    case "lash-memory":
      return (await import("./frameworks/lash.ts")).lashAdapter(ctx, false);
    case "lash-sqlite":
      return (await import("./frameworks/lash.ts")).lashAdapter(ctx, true);
    case "ai-sdk":
      return (await import("./frameworks/ai-sdk.ts")).aiSdkAdapter(ctx);
    case "pi":
      return (await import("./frameworks/pi.ts")).piAdapter(ctx);
    case "openai-agents":
      return (await import("./frameworks/openai-agents.ts")).openaiAgentsAdapter(ctx);
    case "mastra":
      return (await import("./frameworks/mastra.ts")).mastraAdapter(ctx);
  }
}

/** Run `count` jobs with at most `concurrency` in flight. */
async function pool(count: number, concurrency: number, job: (k: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await job(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

async function main(): Promise<void> {
  const [name, baseUrl, specsJson, out, flag] = process.argv.slice(2);
  if (!name || !baseUrl || !specsJson || !out)
    throw new Error("usage: worker.ts <framework> <baseUrl> <specs> <out> [--sabotage|--sabotage-probe]");
  if (!(FRAMEWORKS as readonly string[]).includes(name)) throw new Error(`unknown framework ${name}`);
  const specs = JSON.parse(specsJson) as Record<Variant, WorkloadSpec>;
  // --sabotage: skip the last session, to show that the parent's check fails the run.
  const sessions = (spec: WorkloadSpec) => (flag === "--sabotage" ? spec.sessions - 1 : spec.sessions);
  const tmp = mkdtempSync(join(tmpdir(), `lash-peers-${name}-`));
  let toolCalls = 0;
  const ctx: AdapterContext = {
    baseUrl,
    rounds: specs.tools.rounds,
    tmp,
    add: (a, b) => {
      toolCalls++;
      // --sabotage-probe: the probe session gets a wrong tool result, to show the check before timing.
      return flag === "--sabotage-probe" ? add(a, b + 1) : add(a, b);
    },
  };
  const adapter = await load(name as Framework, ctx);
  const supported = (v: Variant) => v === "stream" || adapter.wires.includes(wireOf(v));
  const run = (spec: WorkloadSpec, k: number) =>
    spec.variant === "stream" ? adapter.streamSession(k) : adapter.toolSession(k, wireOf(spec.variant));
  const expected = (spec: WorkloadSpec) => (spec.variant === "stream" ? streamText(spec.chunks) : FINAL_TEXT);

  // Before anything is timed: one probe session per variant, checked (final text,
  // tool calls run). A wrong result stops the worker here, with nothing timed.
  for (const spec of VARIANTS.map((v) => specs[v]).filter((s) => supported(s.variant))) {
    toolCalls = 0;
    const text = await run(spec, PROBE);
    const wantCalls = spec.variant === "stream" ? 0 : spec.rounds;
    if (text.trim() !== expected(spec).trim() || toolCalls !== wantCalls)
      throw new Error(
        `probe check failed before timing (${spec.variant}): final text ${JSON.stringify(text.slice(0, 80))}, ${toolCalls} tool calls (expected ${wantCalls})`,
      );
  }
  if (flag === "--sabotage-probe") throw new Error("--sabotage-probe: the probe check should have failed");

  // The SSE tool loop, the non-streamed tool loop, then the streaming variant, each measured on its own.
  const results: WorkerResult[] = [];
  for (const spec of VARIANTS.map((v) => specs[v]).filter((s) => supported(s.variant))) {
    const errors: string[] = [];
    let completed = 0;
    toolCalls = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await pool(sessions(spec), spec.concurrency, async (k) => {
      try {
        const text = await run(spec, k);
        if (text.trim() === expected(spec).trim()) completed++;
        else if (errors.length < 5)
          errors.push(`session ${k}: final text ${JSON.stringify(text.slice(0, 80))} (${text.length} chars)`);
      } catch (e) {
        if (errors.length < 5) errors.push(`session ${k}: ${e instanceof Error ? e.message : String(e)}`);
      }
    });
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    results.push({
      framework: name,
      variant: spec.variant,
      cpuUserMs: cpu.user / 1000,
      cpuSystemMs: cpu.system / 1000,
      wallMs,
      // Peak so far: after the SSE tool loop (the first) it is that loop's peak, the probes' included.
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      toolCalls,
      completed,
      errors,
    });
  }
  await adapter.close?.();
  rmSync(tmp, { recursive: true, force: true });
  const output: WorkerOutput = { wires: adapter.wires, results };
  writeFileSync(out, JSON.stringify(output));
}

if (import.meta.main) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
