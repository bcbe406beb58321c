import { hashValue, type LlmRequest, type Message } from "@lash/sansio";
import { describe, expect, it } from "vitest";
import { Hashed, Journal } from "../src/journal.ts";
import { type DigestCache, envelopeHash, requestDigest } from "../src/turn/request-digest.ts";

// The callLlm envelope's hash is stored with each journaled model answer: a turn journaled by an
// older version resumes only if the same request still hashes to the same value.

const fresh = (): DigestCache => ({ messages: [], prefix: [] });

/** What the journal hashed before the envelope was written from cached pieces: the whole envelope, canonical. */
const fullHash = (head: { kind: string; effectId: number; iteration: number }, request: LlmRequest) =>
  hashValue({ ...head, request: requestDigest(fresh(), request) });

const user = (id: string, text: string): Message => ({ id, role: "user", parts: [{ type: "text", text }] });

describe("the callLlm envelope hash", () => {
  it("is the value the previous version stored for the same request (pinned)", () => {
    const m1 = user("t.m0", 'hello "there" é');
    const m2: Message = {
      id: "t.m1",
      role: "assistant",
      parts: [{ type: "toolCall", id: "c0", name: "echo", argumentsText: '{"n":1,"b":[true,null]}' }],
    };
    const tools = [
      {
        name: "echo",
        description: "echo",
        inputSchema: { type: "object", properties: { n: { type: "number" } } },
      },
    ];
    const request = {
      model: "test/model",
      system: "You are terse.",
      messages: [m1, m2],
      tools,
      toolChoice: "auto",
      maxOutput: 512,
      cache: { system: true },
    } as LlmRequest;
    const head = { kind: "callLlm", effectId: 7, iteration: 2 };
    // computed by ab380f6's call-llm.ts: hashValue({ kind, effectId, iteration, request: requestDigest(...) })
    const pinned = "f29e26260450f59641f499b7a99da36d65a3c5155c98556736845d20a4afdd74";
    expect(fullHash(head, request)).toBe(pinned);
    expect(envelopeHash(fresh(), head, request)).toBe(pinned);
    expect(Journal.hash(new Hashed(pinned))).toBe(pinned);
  });

  it("equals the canonical sha256 of the whole envelope call after call, as the messages and the other fields change", () => {
    const cache = fresh();
    const tools = [{ name: "echo", description: "echo", inputSchema: { type: "object" } }];
    const otherTools = [{ name: "cat", description: "cat", inputSchema: { type: "object" } }];
    const messages: Message[] = [user("m0", "go")];
    let request: LlmRequest = { model: "a/b", messages: [...messages], tools };
    const variants: ((r: LlmRequest) => LlmRequest)[] = [
      (r) => r,
      (r) => ({ ...r, system: "be brief" }),
      (r) => ({ ...r, system: "be brief" }),
      (r) => ({ ...r, system: "be briefer", toolChoice: { type: "tool", name: "echo" } }),
      (r) => ({ ...r, tools: otherTools, maxOutput: 10, temperature: 0.5 }),
      (r) => ({ ...r, system: undefined, cache: { lastMessages: 2 } }),
      (r) => ({ ...r, tools: [], reasoning: { effort: "low" } }),
      (r) => ({ ...r, model: "c/d" }),
    ];
    const seen = new Set<string>();
    for (let i = 0; i < 24; i++) {
      if (i % 3 === 0) messages.push(user(`m${i + 1}`, `step ${i}`));
      const base: LlmRequest = { ...request, messages: [...messages] };
      request = variants[i % variants.length]!(base);
      const head = { kind: "callLlm", effectId: i, iteration: Math.floor(i / 2) };
      const h = envelopeHash(cache, head, request);
      expect(h).toBe(fullHash(head, request));
      seen.add(h);
    }
    expect(seen.size).toBe(24);
  });

  it("a history that differs by one message hashes differently (replay still finds the mismatch)", () => {
    const a = [user("m0", "one"), user("m1", "two")];
    const b = [user("m0", "one"), user("m1", "TWO")];
    const head = { kind: "callLlm", effectId: 1, iteration: 0 };
    const cache = fresh();
    const ha = envelopeHash(cache, head, { model: "a/b", messages: a, tools: [] });
    const hb = envelopeHash(cache, head, { model: "a/b", messages: b, tools: [] });
    expect(ha).not.toBe(hb);
    expect(hb).toBe(fullHash(head, { model: "a/b", messages: b, tools: [] }));
  });
});
