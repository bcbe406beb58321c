import { canonicalJson, hashValue, type LlmRequest, type Message, sha256Hex } from "@lash/sansio";
import { describe, expect, it } from "vitest";
import { Hashed, Journal } from "../src/journal.ts";
import { type DigestCache, envelopeHash, requestDigest, seeded } from "../src/turn/request-digest.ts";

// The callLlm envelope's hash is stored with each journaled model answer: a turn journaled by an
// older version resumes only if the same request still hashes to the same value.

const fresh = (session?: string): DigestCache => ({
  messages: [],
  prefix: [],
  ...(session !== undefined ? { session } : {}),
});

/**
 * What the journal hashed before the envelope was written from cached pieces, computed here from
 * scratch (no cache): the whole envelope, canonical, with the messages as their chained digest
 * and the tool list as its digest.
 */
const fullHash = (head: { kind: string; effectId: number; iteration: number }, request: LlmRequest) => {
  let digest = "";
  for (const m of request.messages) digest = sha256Hex(`${digest}:${canonicalJson(m)}`);
  return hashValue({
    ...head,
    request: {
      ...request,
      messages: { count: request.messages.length, digest },
      ...(request.tools ? { tools: sha256Hex(canonicalJson(request.tools)) } : {}),
    },
  });
};

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
    expect(hashValue({ ...head, request: requestDigest(fresh(), request) })).toBe(pinned);
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

  it("a new turn starts from the session's last turn's chain, and still hashes what differs", () => {
    const head = { kind: "callLlm", effectId: 0, iteration: 0 };
    const u0 = user("u0", "first");
    const a1 = user("a1", "answer");
    const turn1 = fresh("s1");
    envelopeHash(turn1, head, { model: "a/b", messages: [u0], tools: [] });
    envelopeHash(turn1, head, { model: "a/b", messages: [u0, a1], tools: [] });
    // the next turn: the same history objects, then its input
    const u2 = user("u2", "second");
    const next = { model: "a/b", messages: [u0, a1, u2], tools: [] };
    expect(envelopeHash(fresh("s1"), head, next)).toBe(fullHash(head, next));
    // the history's head re-read as new objects (a store that no longer caches it), its tail the same objects
    const reread = { model: "a/b", messages: [user("u0", "first"), a1, u2], tools: [] };
    expect(envelopeHash(fresh("s1"), head, reread)).toBe(fullHash(head, next));
    // a head that changed: the same tail objects no longer carry their old digests
    const changed = { model: "a/b", messages: [user("u0", "FIRST"), a1, u2], tools: [] };
    const h = envelopeHash(fresh("s1"), head, changed);
    expect(h).toBe(fullHash(head, changed));
    expect(h).not.toBe(fullHash(head, next));
    // another session's turn that shares only the first message (a fork): its own history counts
    const forked = { model: "a/b", messages: [u0, user("a1", "another answer"), u2], tools: [] };
    expect(envelopeHash(fresh("s1"), head, forked)).toBe(fullHash(head, forked));
  });

  it("keeps the chains of at most 256 sessions and about 20,000 messages", () => {
    const head = { kind: "callLlm", effectId: 0, iteration: 0 };
    for (let i = 0; i < 300; i++)
      envelopeHash(fresh(`many${i}`), head, { model: "a/b", messages: [user(`u${i}`, "hi")], tools: [] });
    expect(seeded().sessions).toBe(256);
    const long = Array.from({ length: 15_000 }, (_, i) => user(`l${i}`, "x"));
    const turn = fresh("long1");
    envelopeHash(turn, head, { model: "a/b", messages: long, tools: [] });
    envelopeHash(fresh("long2"), head, { model: "a/b", messages: long.slice(0, 9_000), tools: [] });
    // the next turn to begin counts what the others hold: the least recently begun are let go
    envelopeHash(fresh("third"), head, { model: "a/b", messages: [user("t0", "z")], tools: [] });
    const after = seeded();
    expect(after.messages).toBeLessThanOrEqual(20_000);
    expect(after.sessions).toBeLessThan(256);
    // a session whose chain was let go hashes its history again: the same value as from scratch
    const next = { model: "a/b", messages: [...long, user("l-next", "y")], tools: [] };
    expect(envelopeHash(fresh("long1"), head, next)).toBe(fullHash(head, next));
  });
});
