// Acceptance 2: the same SSE byte stream, cut into TCP writes at random points (inside
// multibyte characters, inside `data:` lines, between CR and LF…), normalizes identically.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockLlmServer, MockReply, WireFormat } from "../src/testing/index.ts";
import { mockProvider, renderStream, sseText, startMockServer, wireFormats } from "../src/testing/index.ts";
import { normalize, request, run } from "./helpers.ts";

const reply: MockReply = {
  reasoning: { text: "Überlegung: 思考 → plan 🧠", chunks: 3, signature: "sig==", encrypted: "enc==" },
  text: "Grüße, 世界! Ça va? 👋🏽 naïve café — “quoted”",
  textChunks: 9,
  toolCalls: [
    { id: "call_x", name: "read_file", arguments: { path: "docs/résumé.md" }, chunks: 4 },
    { id: "call_y", name: "read_file", arguments: { path: "☃.txt" }, chunks: 2 },
  ],
  usage: { input: 321, output: 54, reasoning: 12, cacheRead: 100 },
};

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

function bodyBytes(format: WireFormat): number {
  const r = renderStream(format, reply, 0, "mock-model");
  return Buffer.byteLength(r.events.map(sseText).join(""), "utf8");
}

async function events(format: WireFormat, r: MockReply) {
  server.enqueue(r);
  const out = await run(mockProvider(server, format), request("x/mock-model"));
  expect(out.error).toBeUndefined();
  return normalize(out.events);
}

describe.each(wireFormats)("chunk-split invariance: %s", (format) => {
  it("random split points give identical normalized events", async () => {
    const baseline = await events(format, reply);
    expect(baseline.at(-1)).toEqual({ type: "finish", reason: "toolUse" });
    const size = bodyBytes(format);
    // The mock renders bodies deterministically per request index; ids are scripted.
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: size - 1 }), { minLength: 1, maxLength: 12 }),
        async (cuts) => {
          const got = await events(format, { ...reply, writeSplits: [...cuts].sort((a, b) => a - b) });
          expect(got).toEqual(baseline);
        },
      ),
      { numRuns: 12 },
    );
  });

  it("multibyte characters split across TCP writes", async () => {
    const baseline = await events(format, reply);
    expect(await events(format, { ...reply, splitMultibyte: true })).toEqual(baseline);
  });
});
