// Trace a real turn (scripted model, no keys) to JSONL, then render the viewer page.
// pnpm exec node packages/trace/examples/quickstart.ts
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLash, defineTool, MemoryStore, textOutput } from "@lash/core";
import { ScriptedProvider } from "@lash/providers/testing";
import { createTraceRecorder, jsonlSink, renderTraceViewer } from "@lash/trace";

const dir = mkdtempSync(join(tmpdir(), "lash-trace-example-"));
const recorder = createTraceRecorder({
  sinks: [jsonlSink(join(dir, "trace.jsonl"))], // add otlpSink({ url: "http://localhost:4318" }) for a collector
  level: "standard", // "extended" keeps request bodies and streamed text
  redact: { patterns: [/acct-\d+/] }, // env secrets, auth headers and bearer tokens are always redacted
});

const clock = defineTool<Record<string, never>>({
  name: "clock",
  description: "The current time.",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  run: async () => textOutput("12:00"),
});
const lash = createLash({
  store: MemoryStore,
  provider: new ScriptedProvider([
    { toolCalls: [{ name: "clock", arguments: {} }], usage: { input: 100, output: 10 } },
    { text: "It is noon.", usage: { input: 120, output: 5 } },
  ]),
  plugins: [{ name: "example", tools: [clock] }],
});
const session = await lash.createSession({ model: "openai/gpt-5-mini" });
const run = session.turn("What time is it?");
for await (const event of run) recorder.record(event); // TurnActivity events, as they come
await run.result;
await recorder.close(); // flushes (bounded); never throws

const jsonl = readFileSync(join(dir, "trace.jsonl"), "utf8");
console.log(
  jsonl
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).kind)
    .join(" → "),
);
writeFileSync(join(dir, "trace.html"), renderTraceViewer(jsonl));
console.log(`viewer: ${join(dir, "trace.html")}`);
await lash.close();
