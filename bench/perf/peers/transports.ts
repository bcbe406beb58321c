// The client's CPU per streamed Chat Completions request, by transport (issue 16, session 9):
// why the OpenAI adapters send their streamed request through lash's own transport
// (packages/providers/src/adapters/http.ts) instead of the `openai` SDK. The mock server runs in
// its own process (its CPU is not counted); one client process runs every transport, rounds
// interleaved, so machine noise hits them alike.
//
//   sdk:       `client.chat.completions.create(params).asResponse()`, body read by its reader
//   fetch:     global `fetch` (undici), body read by its reader
//   node:http: `http.request` with a keep-alive Agent, body read by `res.on("data")`
//   lash:      lash's transport (`openaiTransport(...).post`, keep-alive Agent) with the body parsed
//              into chunk objects by lash's SSE parser (`httpItems`) — more work than the byte-only
//              readers above: what the adapter really does per request
//
// Each transport's answer is checked before it is timed (the tool call and `[DONE]` arrived), and
// every timed request must end with `[DONE]` (the lash mode: a parsed `finish_reason` and `[DONE]`).
//
// pnpm exec node bench/perf/peers/transports.ts [--json out.json] [--requests 2000]
//   [--concurrency 20] [--runs 5]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unknownModelInfo } from "@lash/providers";
import { httpItems, openaiClient, openaiTransport, SseParser } from "@lash/providers/adapters";
import OpenAI from "openai";
import { argValue, markdownTable, median, report } from "../util.ts";

const N = Number(argValue("--requests") ?? 2000);
const C = Number(argValue("--concurrency") ?? 20);
const RUNS = Number(argValue("--runs") ?? 5);

// A tool-call reply (as in the peers workload), one script looped by the mock server.
const dir = mkdtempSync(join(tmpdir(), "lash-bench-transports-"));
const script = join(dir, "script.json");
writeFileSync(
  script,
  JSON.stringify({
    replies: [{ toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] }],
    loop: true,
  }),
);
const cli = join(import.meta.dirname, "..", "..", "..", "packages", "providers", "src", "testing", "cli.ts");
const mock = spawn(process.execPath, [cli, "--port", "0", "--script", script], {
  stdio: ["ignore", "pipe", "inherit"],
});
const origin = await new Promise<string>((resolve, reject) => {
  let buf = "";
  mock.stdout.on("data", (d: Buffer) => {
    buf += d.toString();
    const m = /listening on (http:\/\/\S+)/.exec(buf);
    if (m?.[1]) resolve(m[1]);
  });
  mock.on("exit", (code) => reject(new Error(`mock-llm exited with ${code}`)));
});
const base = `${origin}/v1`;
const url = new URL(`${base}/chat/completions`);

// The request of round 10 of a tool loop: system, user, ten tool calls with their results, one tool.
const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: "system", content: "You are a calculator. Use the add tool." },
  { role: "user", content: "session 1: add 1 and 2, ten times" },
];
for (let i = 0; i < 10; i++) {
  messages.push({
    role: "assistant",
    content: null,
    tool_calls: [{ id: `c${i}`, type: "function", function: { name: "add", arguments: '{"a":1,"b":2}' } }],
  });
  messages.push({ role: "tool", tool_call_id: `c${i}`, content: "3" });
}
const params: OpenAI.ChatCompletionCreateParamsStreaming = {
  model: "mock",
  messages,
  tools: [
    {
      type: "function",
      function: {
        name: "add",
        description: "Add two integers",
        parameters: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } } },
      },
    },
  ],
  stream: true,
  stream_options: { include_usage: true },
};

const config = {
  apiKey: "test",
  baseUrl: base,
  model: "mock",
  info: unknownModelInfo("openai-compatible/mock"),
};
const client = new OpenAI({ baseURL: base, apiKey: "test", maxRetries: 0 });
const agent = new http.Agent({ keepAlive: true });
const transport = openaiTransport(openaiClient(config), config, "/chat/completions");

/** What one request read: its tail (bytes modes) or whether a finish and [DONE] were parsed (lash). */
type Read = { ok: boolean; text: string };

async function readWeb(res: Response): Promise<Read> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let tail = "";
  let all = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const s = decoder.decode(value, { stream: true });
    tail = (tail + s).slice(-32);
    if (all.length < 4096) all += s;
  }
  return { ok: tail.includes("[DONE]"), text: all };
}

const modes: Record<string, () => Promise<Read>> = {
  sdk: async () => readWeb(await client.chat.completions.create(params).asResponse()),
  fetch: async () =>
    readWeb(
      await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer test" },
        body: JSON.stringify(params),
      }),
    ),
  "node:http": () =>
    new Promise<Read>((resolve, reject) => {
      const body = JSON.stringify(params);
      const req = http.request(
        url,
        {
          method: "POST",
          agent,
          headers: {
            "content-type": "application/json",
            authorization: "Bearer test",
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          res.setEncoding("utf8");
          let tail = "";
          let all = "";
          res.on("data", (s: string) => {
            tail = (tail + s).slice(-32);
            if (all.length < 4096) all += s;
          });
          res.on("end", () => resolve({ ok: tail.includes("[DONE]"), text: all }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    }),
  lash: async () => {
    const res = await transport.post(JSON.stringify(params), new AbortController().signal);
    const state = { done: false };
    const parser = new SseParser<OpenAI.ChatCompletionChunk>(state, (_event, data, s) => {
      if (data === "[DONE]") {
        s.done = true;
        return undefined;
      }
      return JSON.parse(data) as OpenAI.ChatCompletionChunk;
    });
    let finish: string | undefined;
    let text = "";
    for await (const batch of httpItems(res, parser))
      for (const chunk of batch) {
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (text.length < 4096) text += JSON.stringify(chunk);
      }
    return { ok: state.done && finish === "tool_calls", text };
  },
};

// Checked before timing: every transport got the tool call and the end of the stream.
for (const [name, one] of Object.entries(modes)) {
  const r = await one();
  if (!r.ok || !r.text.includes('"name":"add"')) {
    mock.kill("SIGTERM");
    throw new Error(`${name}: the answer lacks the tool call or its end: ${r.text.slice(0, 300)}`);
  }
}

async function round(one: () => Promise<Read>): Promise<{ cpuUs: number; wallMs: number }> {
  let left = N;
  let bad = 0;
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (left-- > 0) if (!(await one()).ok) bad++;
    }),
  );
  const d = process.cpuUsage(t0);
  if (bad > 0) throw new Error(`${bad} of ${N} requests did not end with [DONE]`);
  return { cpuUs: (d.user + d.system) / N, wallMs: performance.now() - w0 };
}

// warm-up, then RUNS rounds per transport, interleaved
for (const one of Object.values(modes)) await round(one);
const samples = new Map<string, { cpuUs: number; wallMs: number }[]>();
for (let r = 0; r < RUNS; r++)
  for (const [name, one] of Object.entries(modes)) {
    const list = samples.get(name) ?? [];
    list.push(await round(one));
    samples.set(name, list);
  }
mock.kill("SIGTERM");
agent.destroy();
transport.close();
rmSync(dir, { recursive: true, force: true });

const sdkCpu = median(samples.get("sdk")!.map((s) => s.cpuUs));
const rows = [...samples].map(([name, list]) => {
  const cpu = median(list.map((s) => s.cpuUs));
  const cpus = list.map((s) => s.cpuUs);
  return {
    name,
    cpuUs: cpu,
    min: Math.min(...cpus),
    max: Math.max(...cpus),
    vsSdk: cpu / sdkCpu,
    wallMs: median(list.map((s) => s.wallMs)),
  };
});
report({
  name: "transports",
  title: "Client CPU per streamed Chat Completions request, by transport",
  table: markdownTable(
    ["transport", "CPU µs / request", "min–max", "vs SDK", `wall ms / ${N} requests`],
    rows.map((r) => [
      r.name,
      r.cpuUs.toFixed(0),
      `${r.min.toFixed(0)}–${r.max.toFixed(0)}`,
      `${r.vsSdk.toFixed(2)}×`,
      r.wallMs.toFixed(0),
    ]),
  ),
  goals:
    "No goal is set for a transport on its own: it serves issue 16's per-round-trip goals (bench/perf/peers).",
  results: rows,
  notes: [
    `${N} requests per round, ${C} in flight, a tool-call reply (the peers workload's), the request of round 10 of a tool loop; medians of ${RUNS} interleaved rounds after a warm-up; CPU = user + system of the client process (the mock server runs in its own). The lash row parses every event into a chunk object; the others only read the bytes.`,
  ],
});
