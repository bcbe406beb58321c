import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { accumulate } from "@lash/sansio";
import { Effect, Fiber, Stream } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockLlmServer, RecordedRequest } from "../src/testing/index.ts";
import { mockProvider, ScriptedProvider, startMockServer } from "../src/testing/index.ts";
import { collect, request, run, userText } from "./helpers.ts";

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

describe("mock wire server", () => {
  it("records method, path, headers and parsed body, and waits for the n-th request", async () => {
    const before = server.requests.length;
    const waiting = server.waitForRequests(before + 2);
    server.enqueue({ text: "one" }, { text: "two" });
    const p = mockProvider(server, "openai-chat");
    await run(p, request("x/m", [userText("first")]));
    await run(p, request("x/m", [userText("second")]));
    const all = await waiting;
    const [a, b] = all.slice(before) as [RecordedRequest, RecordedRequest];
    expect(a.method).toBe("POST");
    expect(a.path).toBe("/v1/chat/completions");
    expect(a.format).toBe("openai-chat");
    expect(a.headers.authorization).toBe("Bearer test");
    expect((a.body as { messages: { content: string }[] }).messages.at(-1)?.content).toBe("first");
    expect((b.body as { messages: { content: string }[] }).messages.at(-1)?.content).toBe("second");
    expect(a.stream).toBe(true);
  });

  it("serves a responder function that sees the parsed body (e.g. tool calls until round 3)", async () => {
    server.respondWith((req) => {
      const msgs = (req.body as { messages: unknown[] }).messages;
      return msgs.length < 4
        ? { toolCalls: [{ id: `c${msgs.length}`, name: "read_file", arguments: { path: "x" } }] }
        : { text: "finished" };
    });
    try {
      const p = mockProvider(server, "openai-chat");
      const results = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          run(
            p,
            request(
              "x/m",
              Array.from({ length: n }, (_, i) => userText(`m${i}`, `u${i}`)),
            ),
          ),
        ),
      );
      expect(results.map((r) => accumulate(r.events).stopReason)).toEqual([
        "toolUse",
        "toolUse",
        "toolUse",
        "stop",
      ]);
    } finally {
      server.respondWith(undefined);
    }
  });

  it("recordBodies: false keeps the request log light while the responder still sees the body", async () => {
    const seen: unknown[] = [];
    const light = await startMockServer({
      recordBodies: false,
      responder: (req) => {
        seen.push((req.body as { messages: unknown[] }).messages.length);
        return { text: "ok" };
      },
    });
    try {
      await run(mockProvider(light, "openai-chat"), request("x/m", [userText("a"), userText("b", "u2")]));
      expect(seen).toEqual([2]);
      expect(light.requests).toHaveLength(1);
      expect(light.requests[0]).toMatchObject({ path: "/v1/chat/completions", body: null, rawBody: "" });
    } finally {
      await light.close();
    }
  });

  it("a hanging request ends when the consumer is interrupted (the HTTP request is aborted)", async () => {
    server.enqueue({ hang: true });
    const before = server.requests.length;
    const fiber = Effect.runFork(Stream.runDrain(mockProvider(server, "anthropic").stream(request("x/m"))));
    await server.waitForRequests(before + 1);
    expect(server.inFlight).toBe(1);
    await Effect.runPromise(Fiber.interrupt(fiber));
    await server.waitForIdle();
    expect(server.inFlight).toBe(0);
  });

  it("malformed SSE becomes a retryable stream error", async () => {
    for (const format of ["anthropic", "openai-responses", "openai-chat", "google"] as const) {
      server.enqueue({ text: "abc", textChunks: 3, malformedAfterChunks: 2 });
      const out = await run(mockProvider(server, format), request("x/m"));
      expect(out.error?.retryable, format).toBe(true);
      expect(out.error?.kind, format).toBe("streamIncomplete");
    }
  });

  it("a stream cut before its terminal event is a retryable error", async () => {
    for (const format of ["anthropic", "openai-responses"] as const) {
      server.enqueue({ text: "abc", truncate: true });
      const out = await run(mockProvider(server, format), request("x/m"));
      expect(out.error?.kind, format).toBe("streamIncomplete");
      expect(out.error?.message, format).toContain("without a finish");
    }
  });

  it("answers non-streaming requests with JSON", async () => {
    server.enqueue({ text: "plain json", toolCalls: [{ id: "c1", name: "f", arguments: { a: 1 } }] });
    const res = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [], max_tokens: 5 }),
    });
    const body = (await res.json()) as { content: unknown[]; stop_reason: string };
    expect(body.stop_reason).toBe("tool_use");
    expect(body.content).toEqual([
      { type: "text", text: "plain json" },
      { type: "tool_use", id: "c1", name: "f", input: { a: 1 } },
    ]);
  });

  it("sends HTTP errors with headers in the vendor's shape", async () => {
    server.enqueue({ error: { code: "rateLimit", retryAfter: 7, headers: { "x-request-id": "r1" } } });
    const res = await fetch(`${server.url}/v1/messages`, { method: "POST", body: "{}" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(res.headers.get("x-request-id")).toBe("r1");
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "mock: rate limit exceeded" },
    });
  });

  it("runs standalone: pnpm mock-llm --port 0 --script file.json", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mock-llm-"));
    const script = join(dir, "script.json");
    writeFileSync(script, JSON.stringify({ replies: [{ text: "from the CLI" }], loop: true }));
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, "..", "src", "testing", "cli.ts"), "--port", "0", "--script", script],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buf = "";
        child.stdout.on("data", (d: Buffer) => {
          buf += d.toString();
          const m = /listening on (http:\/\/\S+)/.exec(buf);
          if (m?.[1]) resolve(m[1]);
        });
        child.on("exit", (code) => reject(new Error(`mock-llm exited with ${code}`)));
      });
      const fake = {
        url,
        baseUrl: (f: string) => (f.startsWith("openai") ? `${url}/v1` : url),
      } as MockLlmServer;
      for (let i = 0; i < 2; i++) {
        const events = await collect(mockProvider(fake, "google"), request("x/m"));
        expect(accumulate(events).parts).toEqual([{ type: "text", text: "from the CLI" }]);
      }
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describe("ScriptedProvider", () => {
  it("plays back events and replies, and records requests", async () => {
    const p = new ScriptedProvider([
      {
        events: [
          { type: "textDelta", text: "raw" },
          { type: "finish", reason: "stop" },
        ],
      },
      {
        reasoning: { text: "hmm", signature: "s" },
        toolCalls: [{ id: "t1", name: "f", arguments: { x: 1 } }],
      },
    ]);
    expect(accumulate(await collect(p, request("a/b", [userText("one")]))).parts).toEqual([
      { type: "text", text: "raw" },
    ]);
    const second = accumulate(await collect(p, request("a/b", [userText("two")])));
    expect(second.parts).toEqual([
      { type: "reasoning", text: "hmm", replay: { provider: "scripted", signature: "s" } },
      { type: "toolCall", id: "t1", name: "f", argumentsText: '{"x":1}' },
    ]);
    expect(second.stopReason).toBe("toolUse");
    expect(p.requests.map((r) => r.messages[0]?.parts[0])).toEqual([
      { type: "text", text: "one" },
      { type: "text", text: "two" },
    ]);
    const out = await run(p, request("a/b"));
    expect(out.error?.message).toContain("no scripted step");
  });

  it("takes a function script", async () => {
    const p = new ScriptedProvider((req, i) => ({ text: `reply ${i} to ${req.messages.length} messages` }));
    expect(accumulate(await collect(p, request("a/b"))).parts).toEqual([
      { type: "text", text: "reply 0 to 1 messages" },
    ]);
  });
});

describe("stalled streams", () => {
  it.each(["anthropic", "openai-responses", "openai-chat", "google"] as const)(
    "%s: no data for idleTimeoutMs is a retryable timeout",
    async (format) => {
      server.enqueue({ text: "abc", textChunks: 3, hangAfterChunks: 2 });
      const out = await run(mockProvider(server, format, { idleTimeoutMs: 150 }), request("x/m"));
      expect(out.error).toMatchObject({ kind: "timeout", retryable: true });
      expect(out.error?.message).toContain("stalled");
      await server.waitForIdle();
    },
  );
});
