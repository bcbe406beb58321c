#!/usr/bin/env node
// pnpm mock-llm --port N --script file.json
// Script: a JSON array of MockReply, or { "replies": [...], "loop": true }.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startMockServer } from "./mock-server.ts";
import type { MockReply } from "./reply.ts";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    script: { type: "string" },
    loop: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});

if (values.help) {
  process.stdout.write(
    "usage: mock-llm [--port N] [--host H] [--script replies.json] [--loop]\n" +
      "Speaks OpenAI Chat Completions (/v1/chat/completions), OpenAI Responses (/v1/responses),\n" +
      "Anthropic Messages (/v1/messages) and Gemini (/v1beta/models/<m>:streamGenerateContent).\n",
  );
  process.exit(0);
}

let replies: MockReply[] = [];
let loop = values.loop ?? false;
if (values.script) {
  const parsed = JSON.parse(readFileSync(values.script, "utf8")) as unknown;
  if (Array.isArray(parsed)) replies = parsed as MockReply[];
  else if (parsed && typeof parsed === "object") {
    const o = parsed as { replies?: MockReply[]; loop?: boolean };
    replies = o.replies ?? [];
    loop = loop || o.loop === true;
  }
}
if (replies.length === 0) {
  replies = [{ text: "Hello from mock-llm.", textChunks: 4, usage: { input: 10, output: 5 } }];
  loop = true;
}

const server = await startMockServer({ port: Number(values.port), host: values.host, replies, loop });
process.stdout.write(`mock-llm listening on ${server.url}\n`);
process.stdout.write(`  OPENAI_BASE_URL=${server.baseUrl("openai-responses")}\n`);
process.stdout.write(`  ANTHROPIC_BASE_URL=${server.url}\n`);
process.stdout.write(`  GOOGLE_GEMINI_BASE_URL=${server.url}\n`);
const stop = (): void => {
  server.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
