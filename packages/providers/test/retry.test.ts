// The retry layer: Retry-After, backoff through Effect's Clock (TestClock), attemptReset,
// immediate failures with a message naming the fix.
import { describe, expect, it } from "@effect/vitest";
import type { LlmEvent } from "@lash/sansio";
import { accumulate, LlmError } from "@lash/sansio";
import { Chunk, Effect, Either, Fiber, Stream, TestClock } from "effect";
import { afterAll, beforeAll } from "vitest";
import { createProvider, withRetry } from "../src/index.ts";
import type { MockLlmServer } from "../src/testing/index.ts";
import { mockProviderOptions, ScriptedProvider, startMockServer } from "../src/testing/index.ts";
import { request, run } from "./helpers.ts";

const req = request("anthropic/claude-haiku-4-5");

/** Forks the stream, then advances the TestClock step by step, recording how many requests were made. */
const drive = (provider: ScriptedProvider, stream: Stream.Stream<LlmEvent, LlmError>, steps: number[]) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Stream.runCollect(stream).pipe(Effect.either));
    const seen: number[] = [];
    for (const ms of steps) {
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow();
      seen.push(provider.requests.length);
      yield* TestClock.adjust(ms);
    }
    const result = yield* Fiber.join(fiber);
    return { seen, result: Either.map(result, Chunk.toArray) };
  });

const retries = (events: readonly LlmEvent[]) =>
  events.flatMap((e) => (e.type === "retry" ? [[e.error.kind, e.delayMs] as const] : []));

describe("withRetry", () => {
  it.effect("honours Retry-After on 429 without counting it as an attempt", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([
        { error: { code: "rateLimit", retryAfter: 5 } },
        { error: { code: "rateLimit", retryAfter: 5 } },
        { error: { code: "server" } },
        { text: "done" },
      ]);
      // Only two counted attempts are allowed: the two throttled tries must not count.
      const p = withRetry(scripted, { maxAttempts: 2, baseDelayMs: 1000, jitter: 0 });
      const { seen, result } = yield* drive(scripted, p.stream(req), [4999, 1, 4999, 1, 999, 1, 0]);
      expect(seen).toEqual([1, 1, 2, 2, 3, 3, 4]);
      const events = Either.getOrThrow(result);
      expect(retries(events)).toEqual([
        ["rateLimited", 5000],
        ["rateLimited", 5000],
        ["server", 1000],
      ]);
      expect(accumulate(events).parts).toEqual([{ type: "text", text: "done" }]);
    }),
  );

  it.effect("backs off exponentially up to the cap, then gives up", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([
        { error: { code: "server" } },
        { error: { code: "overloaded" } },
        { error: { code: "server" } },
        { error: { code: "server" } },
        { text: "never reached" },
      ]);
      const p = withRetry(scripted, { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 3000, jitter: 0 });
      const { seen, result } = yield* drive(scripted, p.stream(req), [999, 1, 1999, 1, 2999, 1, 0]);
      expect(seen).toEqual([1, 1, 2, 2, 3, 3, 4]);
      expect(Either.isLeft(result)).toBe(true);
      const err = Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined));
      expect(err?.kind).toBe("server");
      expect(err?.message).toContain("gave up after 4 attempts");
      expect(scripted.requests).toHaveLength(4);
    }),
  );

  it.effect("counts 429s as attempts once the throttle budget is spent", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([
        { error: { code: "rateLimit", retryAfter: 30 } },
        { error: { code: "rateLimit", retryAfter: 30 } },
        { text: "ok" },
      ]);
      const p = withRetry(scripted, { maxAttempts: 1, throttleBudgetMs: 40_000, jitter: 0 });
      const { result } = yield* drive(scripted, p.stream(req), [30_000, 0]);
      const err = Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined));
      expect(err?.kind).toBe("rateLimited");
      expect(scripted.requests).toHaveLength(2);
    }),
  );

  it.effect("emits retry then attemptReset, and readers drop the failed attempt's output", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([
        { text: "lost partial text", textChunks: 4, resetAfterChunks: 2 },
        { text: "kept" },
      ]);
      const p = withRetry(scripted, { baseDelayMs: 500, jitter: 0 });
      const { result } = yield* drive(scripted, p.stream(req), [500, 0]);
      const events = Either.getOrThrow(result);
      expect(events.map((e) => e.type)).toEqual([
        "textDelta",
        "textDelta",
        "retry",
        "attemptReset",
        "textDelta",
        "finish",
      ]);
      const retry = events[2] as Extract<LlmEvent, { type: "retry" }>;
      expect(retry).toMatchObject({ attempt: 2, delayMs: 500, error: { kind: "network", retryable: true } });
      expect(events[3]).toEqual({ type: "attemptReset", attempt: 2 });
      expect(accumulate(events).parts).toEqual([{ type: "text", text: "kept" }]);
    }),
  );

  it.effect("retries a stream that ends without a finish", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([
        { events: [{ type: "textDelta", text: "cut off" }] },
        { text: "whole" },
      ]);
      const p = withRetry(scripted, { baseDelayMs: 100, jitter: 0 });
      const { result } = yield* drive(scripted, p.stream(req), [100, 0]);
      const events = Either.getOrThrow(result);
      expect(retries(events)).toEqual([["streamIncomplete", 100]]);
      expect(accumulate(events)).toMatchObject({
        parts: [{ type: "text", text: "whole" }],
        stopReason: "stop",
      });
    }),
  );

  it.effect("adds bounded jitter", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([{ error: { code: "server" } }, { text: "ok" }]);
      const p = withRetry(scripted, { baseDelayMs: 1000, jitter: 0.5 });
      const { result } = yield* drive(scripted, p.stream(req), [1500, 0]);
      const [[, delay]] = retries(Either.getOrThrow(result)) as [[string, number]];
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThanOrEqual(1500);
    }),
  );

  it.effect("does not retry non-retryable errors", () =>
    Effect.gen(function* () {
      const scripted = new ScriptedProvider([
        { events: [], error: { kind: "badRequest", message: "bad", retryable: false } },
        { text: "unused" },
      ]);
      const p = withRetry(scripted);
      const r = yield* Stream.runCollect(p.stream(req)).pipe(Effect.either);
      expect(Either.isLeft(r) && r.left instanceof LlmError && r.left.kind).toBe("badRequest");
      expect(scripted.requests).toHaveLength(1);
    }),
  );
});

describe("immediate failures through a real adapter", () => {
  let server: MockLlmServer;
  beforeAll(async () => {
    server = await startMockServer();
  });
  afterAll(() => server.close());

  const cases = [
    { status: 400, kind: "badRequest", fix: "fix the request" },
    { status: 401, kind: "auth", fix: "set ANTHROPIC_API_KEY" },
    { status: 403, kind: "permission", fix: "lacks access" },
    { status: 404, kind: "notFound", fix: "check the model name" },
  ] as const;

  it.each(cases)("$status fails at once with a message naming the fix", async ({ status, kind, fix }) => {
    const provider = createProvider("anthropic/claude-haiku-4-5", {
      ...mockProviderOptions(server, "anthropic"),
      env: {},
    });
    const before = server.requests.length;
    server.enqueue({ error: { status } });
    const out = await run(provider, req);
    expect(server.requests.length - before).toBe(1);
    expect(out.events.filter((e) => e.type === "retry")).toEqual([]);
    expect(out.error).toMatchObject({ kind, status, retryable: false, provider: "anthropic" });
    expect(out.error?.message).toContain(fix);
  });
});
