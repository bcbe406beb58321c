// Acceptance 3: a conversation begun on one provider continues on another. For each
// ordered pair, the second provider's request carries the tool call ids, the image in its
// own shape, and the reasoning only when it produced it itself.
import type { Message } from "@lash/sansio";
import { accumulate } from "@lash/sansio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockLlmServer, WireFormat } from "../src/testing/index.ts";
import { mockProvider, startMockServer, wireFormats } from "../src/testing/index.ts";
import { request, run } from "./helpers.ts";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const replayProvider: Record<WireFormat, string | undefined> = {
  anthropic: "anthropic",
  "openai-responses": "openai",
  "openai-chat": undefined, // Chat Completions reasoning has no replay data
  google: "google",
};

// biome-ignore lint/suspicious/noExplicitAny: request bodies are untyped vendor JSON
type Json = any;

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

/** Runs turn 1 on `a` and returns the conversation to continue. */
async function firstTurn(a: WireFormat): Promise<Message[]> {
  const user: Message = {
    id: "u1",
    role: "user",
    parts: [
      { type: "text", text: "What does this picture show? Then read notes.txt." },
      { type: "attachment", mediaType: "image/png", data: PNG, name: "pixel.png" },
    ],
  };
  server.enqueue({
    reasoning: { text: `thinking on ${a}`, signature: `sig-${a}`, encrypted: `enc-${a}` },
    text: "A single pixel. Reading the notes.",
    toolCalls: [
      { id: `call-${a}-1`, name: "read_file", arguments: { path: "notes.txt" }, signature: `fcsig-${a}` },
    ],
  });
  const out = await run(mockProvider(server, a, { info: { reasoning: true } }), request("x/m", [user]));
  expect(out.error).toBeUndefined();
  const assistant: Message = { id: "a1", role: "assistant", parts: [...accumulate(out.events).parts] };
  const tool: Message = {
    id: "t1",
    role: "tool",
    parts: [
      {
        type: "toolResult",
        callId: `call-${a}-1`,
        name: "read_file",
        content: [
          { type: "text", text: "notes: buy milk" },
          { type: "attachment", mediaType: "image/png", data: PNG },
        ],
        isError: false,
      },
    ],
  };
  return [user, assistant, tool];
}

interface Seen {
  callIds: string[];
  resultIds: string[];
  images: string[];
  reasoning: unknown[];
}

function inspect(format: WireFormat, body: Json): Seen {
  const seen: Seen = { callIds: [], resultIds: [], images: [], reasoning: [] };
  if (format === "anthropic") {
    for (const m of body.messages)
      for (const b of m.content) {
        if (b.type === "tool_use") seen.callIds.push(b.id);
        if (b.type === "tool_result") {
          seen.resultIds.push(b.tool_use_id);
          for (const c of b.content) if (c.type === "image") seen.images.push(c.source.data);
        }
        if (b.type === "image") seen.images.push(b.source.data);
        if (b.type === "thinking" || b.type === "redacted_thinking") seen.reasoning.push(b);
      }
  } else if (format === "openai-responses") {
    for (const it of body.input) {
      if (it.type === "function_call") seen.callIds.push(it.call_id);
      if (it.type === "function_call_output") {
        seen.resultIds.push(it.call_id);
        if (Array.isArray(it.output))
          for (const c of it.output) if (c.type === "input_image") seen.images.push(c.image_url);
      }
      if (it.type === "reasoning") seen.reasoning.push(it);
      if (it.type === "message" && Array.isArray(it.content))
        for (const c of it.content) if (c.type === "input_image") seen.images.push(c.image_url);
    }
  } else if (format === "openai-chat") {
    for (const m of body.messages) {
      for (const tc of m.tool_calls ?? []) seen.callIds.push(tc.id);
      if (m.role === "tool") seen.resultIds.push(m.tool_call_id);
      if (Array.isArray(m.content))
        for (const c of m.content) if (c.type === "image_url") seen.images.push(c.image_url.url);
      if (m.reasoning_content || m.reasoning) seen.reasoning.push(m);
    }
  } else {
    for (const c of body.contents)
      for (const p of c.parts) {
        if (p.functionCall) seen.callIds.push(p.functionCall.id);
        if (p.functionResponse) seen.resultIds.push(p.functionResponse.id);
        if (p.inlineData) seen.images.push(p.inlineData.data);
        if (p.thought || (p.thoughtSignature && !p.functionCall)) seen.reasoning.push(p);
      }
  }
  return seen;
}

const pairs = wireFormats.flatMap((a) => wireFormats.map((b) => [a, b] as const));

describe("cross-provider continuation", () => {
  it.each(pairs)("%s → %s", async (a, b) => {
    const conversation = await firstTurn(a);
    const before = server.requests.length;
    server.enqueue({ text: "The notes say: buy milk." });
    const out = await run(
      mockProvider(server, b, { info: { reasoning: true } }),
      request("x/m", conversation),
    );
    expect(out.error).toBeUndefined();
    const sent = server.requests[before]!;
    const body = sent.body as Json;
    const raw = sent.rawBody;
    const seen = inspect(b, body);

    // Tool call ids survive, and the result points at the call.
    expect(seen.callIds).toEqual([`call-${a}-1`]);
    expect(seen.resultIds).toEqual([`call-${a}-1`]);

    // Both images (user message, tool result), in the second vendor's own shape.
    expect(seen.images).toHaveLength(2);
    for (const img of seen.images)
      expect(img).toBe(
        b === "openai-responses" || b === "openai-chat" ? `data:image/png;base64,${PNG}` : PNG,
      );

    // Reasoning: replayed only to the provider that produced it.
    const own = a === b && replayProvider[a] !== undefined;
    if (own) {
      expect(seen.reasoning).toHaveLength(1);
      if (b === "anthropic")
        expect(seen.reasoning[0]).toEqual({
          type: "thinking",
          thinking: `thinking on ${a}`,
          signature: `sig-${a}`,
        });
      if (b === "openai-responses")
        expect(seen.reasoning[0]).toMatchObject({ type: "reasoning", encrypted_content: `enc-${a}` });
      if (b === "google")
        expect(seen.reasoning[0]).toEqual({
          text: `thinking on ${a}`,
          thought: true,
          thoughtSignature: `sig-${a}`,
        });
    } else {
      expect(seen.reasoning).toEqual([]);
      expect(raw).not.toContain(`sig-${a}`);
      expect(raw).not.toContain(`enc-${a}`);
      expect(raw).not.toContain(`thinking on ${a}`);
    }

    // Gemini: its own function-call signature goes back; a foreign call gets the documented placeholder.
    if (b === "google") {
      const fc = (body.contents as Json[]).flatMap((c: Json) => c.parts).find((p: Json) => p.functionCall);
      expect(fc.thoughtSignature).toBe(a === "google" ? "fcsig-google" : "skip_thought_signature_validator");
    }
  });
});
