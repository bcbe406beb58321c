// Bounded waits and honest retries (issue 14 items 5, 9, 11): an exact idle timeout, a total
// deadline per model call, Retry-After beyond the deadline, attempt counts that equal the
// requests the server saw, connection refused, truncated streams in every wire format.
import { createServer } from "node:net";
import { describe, expect, it } from "@effect/vitest";
import type { LlmError, LlmEvent } from "@lash/sansio";
import { accumulate } from "@lash/sansio";
import { Effect, Either, Fiber, Option, Stream, TestClock } from "effect";
import { afterAll, beforeAll } from "vitest";
import { createProvider, withRetry } from "../src/index.ts";
import type { MockLlmServer, WireFormat } from "../src/testing/index.ts";
import { mockProvider, ScriptedProvider, startMockServer, wireFormats } from "../src/testing/index.ts";
import { request, run } from "./helpers.ts";

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

const req = request("x/m");
const fast = { baseDelayMs: 1, maxDelayMs: 1, jitter: 0 } as const;
const retryEvents = (events: readonly LlmEvent[]) =>
  events.filter((e): e is Extract<LlmEvent, { type: "retry" }> => e.type === "retry");

/** Lets real I/O (the mock server, the SDK) make progress while the TestClock stands still. */
const settle = Effect.promise(() => new Promise<void>((r) => setTimeout(r, 20)));

/** Polls (real time, no clock movement) until the mock server has seen `n` requests in all. */
const requestsReach = (n: number) => Effect.promise(() => server.waitForRequests(n));

const failure = (r: Either.Either<unknown, LlmError>): LlmError | undefined =>
  Either.isLeft(r) ? r.left : undefined;

describe("idle timeout (TestClock)", () => {
  for (const format of wireFormats)
    it.effect(`${format}: a hanging request fails exactly at the idle timeout, not before`, () =>
      Effect.gen(function* () {
        server.enqueue({ hang: true });
        const before = server.requests.length;
        const p = mockProvider(server, format, { idleTimeoutMs: 120_000 });
        const fiber = yield* Effect.fork(Stream.runCollect(p.stream(req)).pipe(Effect.either));
        yield* requestsReach(before + 1);
        yield* TestClock.adjust(119_999);
        yield* settle;
        expect(Option.isNone(yield* Fiber.poll(fiber)), "still waiting 1 ms before the timeout").toBe(true);
        yield* TestClock.adjust(1);
        const err = failure(yield* Fiber.join(fiber));
        expect(err).toMatchObject({ kind: "timeout", retryable: true });
        expect(err?.message).toContain("no data for 120 s");
        yield* Effect.promise(() => server.waitForIdle());
      }),
    );

  it.effect("a stream that stalls mid-answer fails one idle timeout after its last event", () =>
    Effect.gen(function* () {
      // message_start, content_block_start, the first text delta, then silence
      server.enqueue({ text: "abc", textChunks: 3, hangAfterChunks: 3 });
      const p = mockProvider(server, "anthropic", { idleTimeoutMs: 30_000 });
      const seen: LlmEvent[] = [];
      const fiber = yield* Effect.fork(
        Stream.runForEach(p.stream(req), (e) => Effect.sync(() => seen.push(e))).pipe(Effect.either),
      );
      yield* Effect.promise(async () => {
        while (!seen.some((e) => e.type === "textDelta")) await new Promise((r) => setTimeout(r, 5));
      });
      yield* TestClock.adjust(29_999);
      yield* settle;
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true);
      yield* TestClock.adjust(1);
      expect(failure(yield* Fiber.join(fiber))?.message).toContain("no data for 30 s");
      yield* Effect.promise(() => server.waitForIdle());
    }),
  );
});

describe("deadline per model call (TestClock)", () => {
  it.effect("a retry whose wait would end past the deadline fails at once, naming the attempts", () =>
    Effect.gen(function* () {
      // 503 with Retry-After 100 s each time: tries at 0, 100, 200 s; the next would start at 300 > 250.
      const scripted = new ScriptedProvider(
        Array.from({ length: 6 }, () => ({ error: { status: 503, retryAfter: 100 } })),
      );
      const p = withRetry(scripted, { maxAttempts: 6, baseDelayMs: 1000, jitter: 0, deadlineMs: 250_000 });
      const fiber = yield* Effect.fork(Stream.runCollect(p.stream(req)).pipe(Effect.either));
      for (let i = 0; i < 2; i++) {
        for (let k = 0; k < 20; k++) yield* Effect.yieldNow();
        yield* TestClock.adjust(100_000);
      }
      const err = failure(yield* Fiber.join(fiber));
      expect(scripted.requests).toHaveLength(3);
      expect(err?.message).toContain("gave up after 3 attempts");
      expect(err?.message).toContain("250 s deadline");
    }),
  );

  it.effect("an attempt still running at the deadline is cut off with a timeout", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([{ error: { code: "server" } }, { hang: true }]);
      const p = withRetry(scripted, { baseDelayMs: 1000, jitter: 0, deadlineMs: 60_000 });
      const fiber = yield* Effect.fork(Stream.runCollect(p.stream(req)).pipe(Effect.either));
      for (let k = 0; k < 20; k++) yield* Effect.yieldNow();
      yield* TestClock.adjust(1000); // the backoff: the second try starts and hangs
      for (let k = 0; k < 20; k++) yield* Effect.yieldNow();
      yield* TestClock.adjust(58_999);
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true);
      yield* TestClock.adjust(1);
      const err = failure(yield* Fiber.join(fiber));
      expect(err).toMatchObject({ kind: "timeout", retryable: false });
      expect(err?.message).toContain("within the 60 s deadline");
      expect(err?.message).toContain("2 attempts");
      expect(scripted.requests).toHaveLength(2);
    }),
  );
});

describe("Retry-After beyond the deadline", () => {
  it.each(wireFormats)(
    "%s: 429 with Retry-After 3600 fails at once with the time to wait",
    async (format) => {
      const before = server.requests.length;
      server.enqueue({ error: { code: "rateLimit", retryAfter: 3600 } });
      const out = await run(mockProvider(server, format, { retry: {} }), req);
      expect(server.requests.length - before).toBe(1);
      expect(retryEvents(out.events)).toEqual([]);
      expect(out.error).toMatchObject({ kind: "rateLimited", retryable: false, retryAfterMs: 3_600_000 });
      expect(out.error?.message).toContain("the server asks to retry after 3600 s");
      expect(out.error?.message).toContain("beyond the 600 s deadline");
      expect(out.error?.message).toMatch(/try again at \d\d:\d\d UTC/);
    },
  );
});

describe("honest attempt counts", () => {
  it.each(wireFormats)(
    "%s: 'gave up after N attempts' is the number of requests the server saw",
    async (format) => {
      const before = server.requests.length;
      // Three rate-limit waits (not counted against maxAttempts) and four server errors.
      server.enqueue(
        { error: { code: "rateLimit", retryAfter: 0 } },
        { error: { code: "rateLimit", retryAfter: 0 } },
        { error: { code: "rateLimit", retryAfter: 0 } },
        { error: { status: 500 } },
        { error: { status: 500 } },
        { error: { status: 500 } },
        { error: { status: 500 } },
      );
      const out = await run(mockProvider(server, format, { retry: { ...fast, maxAttempts: 4 } }), req);
      const seen = server.requests.length - before;
      expect(seen).toBe(7); // the vendor SDK made no requests of its own
      expect(out.error?.message).toContain(`gave up after ${seen} attempts`);
      const retries = retryEvents(out.events);
      expect(retries.map((r) => r.attempt)).toEqual([2, 3, 4, 5, 6, 7]);
      expect(retries.map((r) => r.reason)).toEqual([
        "429 rate limited",
        "429 rate limited",
        "429 rate limited",
        "500 server error",
        "500 server error",
        "500 server error",
      ]);
      // rate-limit waits do not count: no "of n" on them; the counted ones say how many tries remain possible
      expect(retries.map((r) => r.maxAttempts)).toEqual([undefined, undefined, undefined, 7, 7, 7]);
    },
  );
});

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("connection refused", () => {
  const models: Record<WireFormat, string> = {
    anthropic: "anthropic/claude-haiku-4-5",
    "openai-responses": "openai/gpt-5-mini",
    "openai-chat": "openai-compatible/llama3",
    google: "google/gemini-2.5-flash",
  };
  it.each(wireFormats)("%s: retried (bounded), then a message naming the URL and the fix", async (format) => {
    const base = `http://127.0.0.1:${await closedPort()}${format === "openai-chat" || format === "openai-responses" ? "/v1" : ""}`;
    const p = createProvider(models[format], { apiKey: "k", baseUrl: base, env: {}, retry: fast });
    const out = await run(p, req);
    expect(out.error).toMatchObject({ kind: "network" });
    expect(out.error?.message).toContain(`could not connect to ${base} (connection refused)`);
    expect(out.error?.message).toContain("is the server running?");
    expect(out.error?.message).toContain("gave up after 4 attempts");
    expect(retryEvents(out.events).map((r) => r.reason)).toEqual([
      "connection refused",
      "connection refused",
      "connection refused",
    ]);
  });
});

describe("truncated streams", () => {
  it.each(wireFormats)(
    "%s: a stream that closes without its finish is retried, not accepted",
    async (format) => {
      const before = server.requests.length;
      server.enqueue({ text: "half an ans", truncate: true }, { text: "the whole answer" });
      const out = await run(mockProvider(server, format, { retry: fast }), req);
      expect(server.requests.length - before).toBe(2);
      expect(out.error).toBeUndefined();
      const retries = retryEvents(out.events);
      expect(retries).toHaveLength(1);
      expect(retries[0]).toMatchObject({ reason: "truncated stream", error: { kind: "streamIncomplete" } });
      expect(accumulate(out.events)).toMatchObject({
        parts: [{ type: "text", text: "the whole answer" }],
        stopReason: "stop",
      });
    },
  );

  it.each(wireFormats)(
    "%s: without the retry layer it is a retryable streamIncomplete error",
    async (format) => {
      server.enqueue({ text: "half an ans", truncate: true });
      const out = await run(mockProvider(server, format), req);
      expect(out.error).toMatchObject({ kind: "streamIncomplete", retryable: true });
      expect(out.error?.message).toContain("without a finish");
    },
  );

  const chunk = (delta: object, finish: string | null = null) =>
    JSON.stringify({
      id: "c1",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });

  it("openai-chat: a server that omits finish_reason but ends with [DONE] is complete", async () => {
    server.enqueue({ raw: [chunk({ role: "assistant", content: "fine" }), "[DONE]"] });
    const out = await run(mockProvider(server, "openai-chat"), req);
    expect(out.error).toBeUndefined();
    expect(accumulate(out.events)).toMatchObject({
      parts: [{ type: "text", text: "fine" }],
      stopReason: "stop",
    });
  });

  it("openai-chat: finish_reason without [DONE] is complete too (the answer is whole)", async () => {
    server.enqueue({ raw: [chunk({ role: "assistant", content: "fine" }), chunk({}, "stop")] });
    const out = await run(mockProvider(server, "openai-chat"), req);
    expect(out.error).toBeUndefined();
    expect(accumulate(out.events).stopReason).toBe("stop");
  });

  it("openai-chat: neither finish_reason nor [DONE] is a truncated stream", async () => {
    server.enqueue({ raw: [chunk({ role: "assistant", content: "half" })] });
    const out = await run(mockProvider(server, "openai-chat"), req);
    expect(out.error).toMatchObject({ kind: "streamIncomplete", retryable: true });
    expect(out.error?.message).toContain("no finish_reason and no [DONE]");
  });
});

describe("the retry event", () => {
  it("says attempt k of n, why and how long", async () => {
    server.enqueue({ error: { status: 503 } }, { text: "ok" });
    const out = await run(
      mockProvider(server, "anthropic", { retry: { baseDelayMs: 5, maxDelayMs: 5, jitter: 0 } }),
      req,
    );
    expect(retryEvents(out.events)).toEqual([
      expect.objectContaining({
        attempt: 2,
        maxAttempts: 4,
        delayMs: 5,
        reason: "503 overloaded",
        error: expect.objectContaining({ status: 503, kind: "overloaded" }),
      }),
    ]);
    expect(out.events.filter((e) => e.type === "attemptReset")).toEqual([
      { type: "attemptReset", attempt: 2 },
    ]);
  });
});
