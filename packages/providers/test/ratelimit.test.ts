// Client-side rate limits (issue 22): one limiter per provider key shared by every handle in
// the process; limits from config or learned from the vendor's rate-limit headers; waits are
// `retry{reason: "waiting for rate limit"}` events; 20 sessions started at once against a server
// that answers 429 above N requests per second finish, and once the limiter has learned the
// limit no request draws a 429.
import { describe, expect, it } from "@effect/vitest";
import type { LlmEvent } from "@lash/sansio";
import { accumulate } from "@lash/sansio";
import { Effect, Either, Fiber, Option, Stream, TestClock } from "effect";
import { afterAll, beforeAll } from "vitest";
import { createProvider, KeyLimiter, RATE_LIMIT_WAIT, withRateLimit, withRetry } from "../src/index.ts";
import { parseReset, readRateHeaders } from "../src/ratelimit.ts";
import type { MockLlmServer } from "../src/testing/index.ts";
import { mockProviderOptions, ScriptedProvider, startMockServer } from "../src/testing/index.ts";
import { request, run, userText } from "./helpers.ts";

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer({ replies: [{ text: "ok", usage: { input: 10, output: 2 } }], loop: true });
});
afterAll(() => server.close());

const req = { ...request("x/m", [userText("hi")]), tools: [] };
const waits = (events: readonly LlmEvent[]) =>
  events.filter((e) => e.type === "retry" && e.reason === RATE_LIMIT_WAIT);
const throttled = (events: readonly LlmEvent[]) =>
  events.filter((e) => e.type === "retry" && e.reason !== RATE_LIMIT_WAIT);

describe("headers", () => {
  it("reads OpenAI durations and Anthropic reset times", () => {
    expect(parseReset("6m0s")).toBe(360_000);
    expect(parseReset("1.5s")).toBe(1500);
    expect(parseReset("20ms")).toBe(20);
    expect(parseReset("1h2m3s")).toBe(3_723_000);
    expect(parseReset("30")).toBe(30_000);
    expect(parseReset("2026-01-01T00:00:10Z", Date.parse("2026-01-01T00:00:00Z"))).toBe(10_000);
    expect(parseReset("soon")).toBeUndefined();
    const h = new Headers({
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "49",
      "anthropic-ratelimit-tokens-limit": "40000",
    });
    expect(readRateHeaders(h)).toMatchObject({
      requests: { limit: 50, remaining: 49 },
      tokens: { limit: 40000 },
    });
  });
});

describe("limits from config (TestClock)", () => {
  it.effect("rpm 2: the third request at once waits exactly 30 s, and says so first", () =>
    Effect.gen(function* () {
      const limiter = new KeyLimiter();
      limiter.configure({ rpm: 2 }, 0);
      const scripted = new ScriptedProvider(() => ({ text: "ok" }));
      const p = withRateLimit(scripted, limiter);
      const one = () => Stream.runCollect(p.stream(req)).pipe(Effect.map((c) => [...c]));
      const a = yield* one();
      const b = yield* one();
      expect(waits(a)).toEqual([]);
      expect(waits(b)).toEqual([]);
      const events: LlmEvent[] = [];
      const fiber = yield* Effect.fork(
        Stream.runForEach(p.stream(req), (e) => Effect.sync(() => events.push(e))),
      );
      yield* TestClock.adjust(29_999);
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true);
      expect(scripted.requests).toHaveLength(2); // the third has not been sent
      expect(waits(events)).toEqual([
        expect.objectContaining({
          delayMs: 30_000,
          error: expect.objectContaining({
            kind: "rateLimited",
            message: expect.stringContaining("2 requests/min from config"),
          }),
        }),
      ]);
      yield* TestClock.adjust(1);
      yield* Fiber.join(fiber);
      expect(scripted.requests).toHaveLength(3);
      expect(accumulate(events).stopReason).toBe("stop");
    }),
  );

  it.effect("a limiter wait that would end past the call's deadline fails at once, naming the fix", () =>
    Effect.gen(function* () {
      const limiter = new KeyLimiter();
      limiter.configure({ rpm: 1 }, 0);
      const scripted = new ScriptedProvider(() => ({ text: "ok" }));
      const p = withRetry(withRateLimit(scripted, limiter), { deadlineMs: 500 });
      yield* Stream.runCollect(p.stream(req));
      // the second request would wait ~60 s for its slot: beyond the 500 ms deadline
      const r = yield* Effect.either(Stream.runCollect(p.stream(req)));
      expect(Either.isLeft(r)).toBe(true);
      const err = Either.getLeft(r).pipe(Option.getOrUndefined);
      expect(err?.kind).toBe("timeout");
      expect(err?.message).toContain("--request-deadline");
      expect(scripted.requests).toHaveLength(1);
    }),
  );

  it.effect("tpm: a request is charged its estimated input, corrected by the reported usage", () =>
    Effect.gen(function* () {
      const limiter = new KeyLimiter();
      limiter.configure({ tpm: 600 }, 0); // 10 tokens per second
      const scripted = new ScriptedProvider(() => ({ text: "ok", usage: { input: 300, output: 300 } }));
      const p = withRateLimit(scripted, limiter);
      const first = [...(yield* Stream.runCollect(p.stream(req)))];
      expect(waits(first)).toEqual([]);
      // the first call used 600 tokens: the bucket is empty; the next small request waits ~its estimate / 10 per s
      const events: LlmEvent[] = [];
      const fiber = yield* Effect.fork(
        Stream.runForEach(p.stream(req), (e) => Effect.sync(() => events.push(e))),
      );
      yield* TestClock.adjust(1);
      const [w] = waits(events);
      expect(w?.type === "retry" ? w.delayMs : 0).toBeGreaterThan(0);
      yield* TestClock.adjust(60_000);
      yield* Fiber.join(fiber);
    }),
  );
});

describe("20 sessions at once against a server that answers 429 above N requests per second", () => {
  // Anthropic's headers (absolute reset times) with fewer sessions, to keep the suite short.
  for (const [vendor, model, style, n] of [
    ["openai", "openai/gpt-4.1", "openai", 20],
    ["anthropic", "anthropic/claude-haiku-4-5", "anthropic", 10],
  ] as const)
    it(`${vendor}: ${n} sessions finish; after the limiter learned the limit, no request draws a 429`, async () => {
      const base = server.requests.length;
      const base429 = server.rateLimited.length;
      // N = 5 requests per second; a fresh key, so the limiter starts knowing nothing
      server.setRateLimit({ requests: 5, perMs: 1000, headers: style });
      const key = `key-${vendor}-${base}`;
      const sessions = (n: number) =>
        Promise.all(
          Array.from({ length: n }, () =>
            run(
              createProvider(model, {
                ...mockProviderOptions(server, vendor),
                apiKey: key,
                retry: { jitter: 0 },
              }),
              req,
            ),
          ),
        );
      try {
        // wave 1: the limiter knows nothing; the first burst teaches it (some of it draws 429s)
        const first = await sessions(n);
        for (const o of first) {
          expect(o.error).toBeUndefined();
          expect(accumulate(o.events).parts).toEqual([{ type: "text", text: "ok" }]);
        }
        const wave1 = server.requests.length - base;
        const rejected1 = server.rateLimited.slice(base429);
        // only requests of the first burst (sent before any answer came back) were refused
        expect(rejected1.every((i) => i < base + n)).toBe(true);
        expect(rejected1.length).toBeLessThanOrEqual(n - 5);
        expect(wave1).toBe(n + rejected1.length);

        // wave 2: as many sessions again at once, after learning: they queue, zero 429s
        const second = await sessions(n);
        const rejected2 = server.rateLimited.length - base429 - rejected1.length;
        expect(rejected2).toBe(0);
        expect(server.requests.length - base - wave1).toBe(n);
        for (const o of second) {
          expect(o.error).toBeUndefined();
          expect(throttled(o.events)).toEqual([]); // no 429 reached the retry layer
        }
        const waited = second.flatMap((o) => waits(o.events));
        expect(waited.length).toBeGreaterThan(0); // the queueing was visible
        expect(waited[0]).toMatchObject({
          type: "retry",
          attempt: 1,
          error: { kind: "rateLimited", message: expect.stringContaining("learned from the server") },
        });
      } finally {
        server.setRateLimit(undefined);
      }
    });
});
