// Adapter overhead: normalized events per second for a 10,000-chunk text stream through
// each adapter over the mock wire server, against iterating the vendor SDK's own stream
// over the same server (same request, same bytes). Median of RUNS runs after a warm-up.
//
//   pnpm exec node bench/perf/providers/run.ts [--json out.json] [--runs N] [--chunks N]
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unknownModelInfo } from "@lash/providers";
import type { WireFormat } from "@lash/providers/testing";
import { drainEvents, mockProvider, rawSdkStream, wireFormats } from "@lash/providers/testing";
import type { LlmRequest } from "@lash/sansio";
import { argValue, markdownTable, median, report } from "../util.ts";

const RUNS = Number(argValue("--runs") ?? 7);
const CHUNKS = Number(argValue("--chunks") ?? 10_000);

const text = "lorem ipsum dolor sit amet, ".repeat(Math.ceil((CHUNKS * 6) / 28)).slice(0, CHUNKS * 6);
const script = {
  replies: [{ text, textChunks: CHUNKS, usage: { input: 1000, output: CHUNKS } }],
  loop: true,
};

// The mock server runs in its own process so that rendering and writing the body does not
// compete with the client on the same event loop.
async function startServer(): Promise<{ url: string; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "lash-bench-providers-"));
  const file = join(dir, "script.json");
  writeFileSync(file, JSON.stringify(script));
  const cli = join(
    import.meta.dirname,
    "..",
    "..",
    "..",
    "packages",
    "providers",
    "src",
    "testing",
    "cli.ts",
  );
  const child = spawn(process.execPath, [cli, "--port", "0", "--script", file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(buf);
      if (m?.[1]) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`mock-llm exited with ${code}`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

const { url, stop } = await startServer();
const server = {
  baseUrl: (f: WireFormat) => (f === "openai-chat" || f === "openai-responses" ? `${url}/v1` : url),
};
const request: LlmRequest = {
  model: "mock-model",
  messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "stream a lot" }] }],
  tools: [],
};
const info = unknownModelInfo("openai-compatible/mock-model");

interface Row {
  format: WireFormat;
  events: number;
  sdkItems: number;
  adapterCpuMs: number;
  rawCpuMs: number;
  adapterMs: number;
  rawMs: number;
  adapterEventsPerSec: number;
  rawItemsPerSec: number;
  overhead: number;
}

const rows: Row[] = [];
try {
  for (const format of wireFormats) {
    const provider = mockProvider(server, format);
    const open = rawSdkStream(format, server, request, info);
    const rawOnce = async (): Promise<number> => {
      let n = 0;
      for await (const _ of await open()) n++;
      return n;
    };
    // Warm-up, checked before timing: every chunk arrives on both sides (the adapter adds usage + finish).
    const warmEvents = await drainEvents(provider, request);
    const warmItems = await rawOnce();
    if (warmEvents !== CHUNKS + 2 || warmItems < CHUNKS)
      throw new Error(
        `${format}: the adapter produced ${warmEvents} events (expected ${CHUNKS + 2}), the raw SDK ${warmItems} items (expected ≥ ${CHUNKS})`,
      );
    const adapterMs: number[] = [];
    const rawMs: number[] = [];
    const adapterCpu: number[] = [];
    const rawCpu: number[] = [];
    let events = 0;
    let sdkItems = 0;
    for (let i = 0; i < RUNS; i++) {
      // Alternate the order so drift affects both sides alike.
      const pair = i % 2 === 0 ? ["adapter", "raw"] : ["raw", "adapter"];
      for (const side of pair) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        if (side === "adapter") events = await drainEvents(provider, request);
        else sdkItems = await rawOnce();
        (side === "adapter" ? adapterMs : rawMs).push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        (side === "adapter" ? adapterCpu : rawCpu).push((c.user + c.system) / 1000);
      }
      if (events !== warmEvents || sdkItems !== warmItems)
        throw new Error(`${format}: a timed run produced ${events} events / ${sdkItems} items`);
    }
    const a = median(adapterMs);
    const r = median(rawMs);
    rows.push({
      format,
      events,
      sdkItems,
      adapterCpuMs: median(adapterCpu),
      rawCpuMs: median(rawCpu),
      adapterMs: a,
      rawMs: r,
      adapterEventsPerSec: (events / a) * 1000,
      rawItemsPerSec: (sdkItems / r) * 1000,
      overhead: a / r,
    });
    process.stdout.write(`  ${format}: adapter ${a.toFixed(1)} ms, raw SDK ${r.toFixed(1)} ms\n`);
  }
} finally {
  stop();
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
report({
  name: "providers",
  title: `Provider adapters: ${CHUNKS.toLocaleString("en-US")}-chunk stream over the mock server (median of ${RUNS})`,
  table: markdownTable(
    [
      "adapter",
      "adapter CPU ms",
      "raw SDK CPU ms",
      "CPU ratio adapter/raw",
      "adapter wall ms",
      "raw SDK wall ms",
      "wall ratio adapter/raw",
      "normalized events",
      "events/s (adapter, wall)",
      "SDK items",
      "items/s (raw SDK, wall)",
    ],
    rows.map((r) => [
      r.format,
      r.adapterCpuMs.toFixed(1),
      r.rawCpuMs.toFixed(1),
      (r.adapterCpuMs / r.rawCpuMs).toFixed(3),
      r.adapterMs.toFixed(1),
      r.rawMs.toFixed(1),
      r.overhead.toFixed(3),
      r.events,
      fmt(r.adapterEventsPerSec),
      r.sdkItems,
      fmt(r.rawItemsPerSec),
    ]),
  ),
  results: rows,
  goals: "No goal is set (issue 3 asks for the adapter/raw ratio to be reported).",
  notes: [
    "CPU = this process's user + system time per run (the mock server runs in its own process); the CPU ratio is the primary figure, wall beside it. Checked before timing: each adapter yields every chunk plus usage and finish, and the raw SDK stream every chunk; every timed run yields the same counts.",
    "Raw SDK = `for await` over the vendor SDK's own streaming call with the same request, over the same server; the adapter adds request building, event normalization and the Effect stream. A ratio of 1.000 means no measurable overhead.",
  ],
});
