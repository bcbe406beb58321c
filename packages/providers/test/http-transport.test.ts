// lash's own transport for the OpenAI adapters (adapters/http.ts): the same answers, errors and
// headers as the `openai` SDK path it replaces, a connection reused across requests, aborts that
// end the request. Each case runs both paths against the real mock server on 127.0.0.1: "sdk" =
// the adapter sent through the SDK (Chat Completions: given its own client, `clientOverride`;
// Responses: a variant with its own `fetch`, as Codex has), "lean" = the adapter as
// createProvider builds it. Chat Completions (openai-compatible) and Responses (openai) alike.
import http from "node:http";
import { type AddressInfo, createServer } from "node:net";
import type { LlmError, LlmProvider } from "@lash/sansio";
import type OpenAI from "openai";
import type { APIError } from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatParams, openaiChatProvider } from "../src/adapters/openai-chat.ts";
import {
  openaiClient,
  openaiResponsesProvider,
  openaiTransport,
  responsesParams,
} from "../src/adapters/openai-responses.ts";
import type { AdapterConfig } from "../src/adapters/shared.ts";
import { unknownModelInfo } from "../src/catalog.ts";
import type { MockError, MockLlmServer, MockReply, WireFormat } from "../src/testing/index.ts";
import { startMockServer } from "../src/testing/index.ts";
import { normalize, request, run } from "./helpers.ts";

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer({ keepAliveTimeoutMs: 60_000 });
});
afterAll(() => server.close());

const KEY = "sk-test-secret-4f2a9c";
const req = request("openai-compatible/mock");

/** The two adapters on lash's transport: how to build each path, its URL path and its request body. */
const adapters = {
  "openai-chat": {
    path: "/chat/completions",
    provider: "openai-compatible",
    sdk: (c: AdapterConfig): LlmProvider => openaiChatProvider(c, openaiClient(c)),
    lean: (c: AdapterConfig): LlmProvider => openaiChatProvider(c),
    params: (c: AdapterConfig): unknown => chatParams(req, c),
    create: (client: OpenAI, params: unknown, signal: AbortSignal) =>
      client.chat.completions.create(params as ChatCompletionCreateParamsStreaming, { signal }).asResponse(),
  },
  "openai-responses": {
    path: "/responses",
    provider: "openai",
    sdk: (c: AdapterConfig): LlmProvider =>
      openaiResponsesProvider(c, { name: "openai", fetch: (input, init) => fetch(input, init) }),
    lean: (c: AdapterConfig): LlmProvider => openaiResponsesProvider(c),
    params: (c: AdapterConfig): unknown => responsesParams(req, c),
    create: (client: OpenAI, params: unknown, signal: AbortSignal) =>
      client.responses.create(params as ResponseCreateParamsStreaming, { signal }).asResponse(),
  },
} as const;
type Format = keyof typeof adapters;
const formats = Object.keys(adapters) as Format[];

function configFor(base: string, extra: Partial<AdapterConfig> = {}): AdapterConfig {
  return {
    apiKey: KEY,
    baseUrl: base,
    model: "mock",
    info: unknownModelInfo("openai-compatible/mock"),
    keyEnv: "OPENAI_API_KEY",
    baseUrlEnv: "OPENAI_BASE_URL",
    ...extra,
  };
}

const paths = adapters["openai-chat"];

/** The fields of an `LlmError` that classification decides. */
const view = (e: LlmError | undefined) =>
  e && {
    kind: e.kind,
    message: e.message,
    status: e.status,
    retryable: e.retryable,
    retryAfterMs: e.retryAfterMs,
    provider: e.provider,
  };

/** One reply through both paths of an adapter: the normalized events and the error of each. */
async function both(reply: MockReply, format: Format = "openai-chat", config?: AdapterConfig) {
  const c = config ?? configFor(server.baseUrl(format as WireFormat));
  server.enqueue(reply);
  const sdk = await run(adapters[format].sdk(c), req);
  server.enqueue(reply);
  const lean = await run(adapters[format].lean(c), req);
  return { sdk, lean };
}

/** What the raw call throws: through the SDK's `create()`, and through the transport. */
async function rawErrors(
  config: AdapterConfig,
  enqueue: () => void,
  abort?: (c: AbortController) => void,
  format: Format = "openai-chat",
) {
  const client = openaiClient(config);
  const params = adapters[format].params(config);
  const transport = openaiTransport(client, config, adapters[format].path);
  const errorOf = async (send: (signal: AbortSignal) => Promise<unknown>): Promise<unknown> => {
    enqueue();
    const controller = new AbortController();
    const pending = send(controller.signal);
    abort?.(controller);
    try {
      await pending;
    } catch (e) {
      return e;
    }
    return undefined;
  };
  const sdk = await errorOf((signal) => adapters[format].create(client, params, signal));
  const lean = await errorOf((signal) => transport.post(JSON.stringify(params), signal));
  transport.close();
  return { sdk, lean };
}

/** The parts of an SDK error that callers read. */
const sdkView = (e: unknown) => {
  const x = e as APIError;
  return {
    class: x?.constructor?.name,
    name: x?.name,
    message: x?.message,
    status: x?.status,
    error: x?.error,
    code: x?.code,
    type: x?.type,
    retryAfter: x?.headers?.get?.("retry-after") ?? undefined,
    requestId: x?.requestID,
  };
};

const errorCases: [string, MockError][] = [
  ["400 bad request", { code: "badRequest" }],
  ["400 context overflow", { code: "contextOverflow" }],
  ["401 auth", { code: "auth" }],
  ["403 permission", { code: "permission" }],
  ["404 not found", { code: "notFound" }],
  ["408 request timeout", { status: 408, message: "request timeout" }],
  ["409 conflict", { status: 409, message: "conflict" }],
  ["413 too large", { status: 413, message: "payload too large" }],
  ["422 unprocessable", { status: 422, message: "unprocessable" }],
  [
    "429 rate limit + retry-after",
    { code: "rateLimit", retryAfter: 7, headers: { "x-request-id": "req_1" } },
  ],
  ["429 retry-after-ms", { code: "rateLimit", headers: { "retry-after-ms": "1500" } }],
  ["429 quota", { code: "quota" }],
  ["500 server", { code: "server" }],
  ["503 unavailable", { status: 503, message: "unavailable", retryAfter: 2 }],
  ["529 overloaded", { code: "overloaded" }],
  ["502 plain-text body", { status: 502, body: "<html>bad gateway</html>" }],
  ["500 JSON body without `error`", { status: 500, body: { detail: "it broke" } }],
  ["500 empty body", { status: 500, body: "" }],
];

describe.each(formats)("HTTP errors (%s): the transport and the SDK agree", (format) => {
  it.each(errorCases)("%s: same SDK error class, status, body and headers", async (_, error) => {
    const { sdk, lean } = await rawErrors(
      configFor(server.baseUrl(format)),
      () => server.enqueue({ error }),
      undefined,
      format,
    );
    expect(sdk).toBeInstanceOf(Error);
    expect(sdkView(lean)).toEqual(sdkView(sdk));
  });

  it.each(errorCases)("%s: same LlmError kind, message, status, retry-after", async (_, error) => {
    const { sdk, lean } = await both({ error }, format);
    expect(sdk.error).toBeDefined();
    expect(lean.error?.provider).toBe(adapters[format].provider);
    expect(view(lean.error)).toEqual(view(sdk.error));
  });
});

describe("HTTP errors: what the classification makes of them", () => {
  it("a 429's retry-after reaches the error (7 s) on the lean path", async () => {
    const { lean } = await both({ error: { code: "rateLimit", retryAfter: 7 } });
    expect(lean.error).toMatchObject({
      kind: "rateLimited",
      status: 429,
      retryable: true,
      retryAfterMs: 7000,
    });
  });

  it("a 401 names the key's environment variable", async () => {
    const { lean } = await both({ error: { code: "auth" } });
    expect(lean.error?.kind).toBe("auth");
    expect(lean.error?.message).toContain("set OPENAI_API_KEY to a valid key");
  });
});

describe.each(formats)("streams (%s): the transport and the SDK agree", (format) => {
  const replies: [string, MockReply][] = [
    ["text", { text: "hello there, world", textChunks: 5, usage: { input: 10, output: 4 } }],
    [
      "tool calls",
      { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.txt" }, chunks: 3 }] },
    ],
    ["multibyte split across reads", { text: "héllo wörld ✓ 日本", textChunks: 4, splitMultibyte: true }],
    ["body cut at odd offsets", { text: "abcdefghij", textChunks: 5, writeSplits: [3, 17, 40, 41, 90] }],
    ["truncated (no finish, no [DONE])", { text: "partial", truncate: true }],
    ["malformed event", { text: "abc", textChunks: 3, malformedAfterChunks: 2 }],
    [
      "error payload in a 200 stream",
      { rawSse: 'data: {"error":{"message":"rate limit reached","type":"requests"}}\n\n' },
    ],
    [
      "error event in a 200 stream",
      { rawSse: 'data: {"error":{"message":"the model is overloaded","type":"server_error"}}\n\n' },
    ],
    ["connection reset mid-stream", { text: "lost partial text", textChunks: 4, resetAfterChunks: 2 }],
  ];
  it.each(replies)("%s: same events, same error kind and retryability", async (name, reply) => {
    const { sdk, lean } = await both(reply, format);
    expect(normalize(lean.events)).toEqual(normalize(sdk.events));
    expect(lean.error?.kind).toBe(sdk.error?.kind);
    expect(lean.error?.retryable).toBe(sdk.error?.retryable);
    // a reset's message quotes the socket error, which differs between undici and node:http
    if (!name.startsWith("connection reset")) expect(lean.error?.message).toBe(sdk.error?.message);
    const fails = !["text", "tool calls", "multibyte split across reads", "body cut at odd offsets"].includes(
      name,
    );
    if (fails) expect(sdk.error).toBeDefined();
    else {
      expect(sdk.error).toBeUndefined();
      expect(normalize(sdk.events).at(-1)?.type).toBe("finish");
    }
  });

  it("a reset mid-stream is a retryable network failure on the lean path", async () => {
    const { lean } = await both({ text: "lost partial text", textChunks: 4, resetAfterChunks: 2 }, format);
    expect(lean.error).toMatchObject({ kind: "network", retryable: true });
    expect(lean.error?.message).toMatch(/^[a-z-]+ \(mock\): connection failed: terminated/);
  });
});

describe("connections", () => {
  it.each(formats)(
    "%s: one keep-alive connection serves sequential requests (counted on the server)",
    async (format) => {
      const own = await startMockServer({ keepAliveTimeoutMs: 60_000 });
      try {
        const provider = adapters[format].lean(configFor(own.baseUrl(format)));
        for (let i = 0; i < 5; i++) {
          own.enqueue(
            i % 2 === 0
              ? { text: `answer ${i}`, textChunks: 3 }
              : { toolCalls: [{ name: "read_file", arguments: { path: `${i}` } }] },
          );
          const out = await run(provider, req);
          expect(out.error).toBeUndefined();
          expect(out.events.some((e) => e.type === "finish")).toBe(true);
        }
        expect(own.requests).toHaveLength(5);
        expect(own.connections).toBe(1);
        // an HTTP error's body is read whole, so its connection is reused too
        own.enqueue({ error: { code: "badRequest" } }, { text: "after the error" });
        expect((await run(provider, req)).error?.kind).toBe("badRequest");
        expect((await run(provider, req)).error).toBeUndefined();
        expect(own.connections).toBe(1);
      } finally {
        await own.close();
      }
    },
  );

  it("an abort mid-stream ends the request: the server sees the close, the next request works", async () => {
    const own = await startMockServer({ keepAliveTimeoutMs: 60_000 });
    try {
      const config = configFor(own.baseUrl("openai-chat"));
      const client = openaiClient(config);
      const transport = openaiTransport(client, config, "/chat/completions");
      own.enqueue({ text: "one two three four", textChunks: 4, hangAfterChunks: 2 });
      const controller = new AbortController();
      const res = await transport.post(JSON.stringify(chatParams(req, config)), controller.signal);
      expect(res.status).toBe(200);
      const firstData = new Promise<void>((resolve) => res.body.once("data", () => resolve()));
      await firstData;
      expect(own.inFlight).toBe(1);
      controller.abort();
      const stat = await own.waitForStreamClosed(0);
      expect(stat.closedByClient).toBe(true);
      expect(stat.eventsWritten).toBeLessThan(stat.eventsTotal);
      await own.waitForIdle();
      // the aborted socket is not reused: the next request gets a fresh one and succeeds
      own.enqueue({ text: "fine" });
      const out = await run(paths.lean(config), req);
      expect(out.error).toBeUndefined();
      expect(normalize(out.events)[0]).toEqual({ type: "text", text: "fine" });
      transport.close();
    } finally {
      await own.close();
    }
  });

  it("an abort before the answer's headers: APIUserAbortError on both paths, and the server sees the close", async () => {
    const config = configFor(server.baseUrl("openai-chat"));
    const { sdk, lean } = await rawErrors(
      config,
      () => server.enqueue({ hang: true }),
      (c) => {
        void server.waitForRequests(server.requests.length + 1).then(() => c.abort());
      },
    );
    expect(sdkView(sdk).class).toBe("APIUserAbortError");
    expect(sdkView(lean)).toEqual(sdkView(sdk));
    await server.waitForIdle();
    expect(server.inFlight).toBe(0);
  });
});

/** A port with nothing listening. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("transport failures: the transport and the SDK agree", () => {
  it("connection refused: APIConnectionError on both paths; the same network error naming the URL", async () => {
    const base = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = configFor(base);
    const raw = await rawErrors(config, () => undefined);
    expect(sdkView(raw.sdk).class).toBe("APIConnectionError");
    expect(sdkView(raw.lean)).toEqual(sdkView(raw.sdk));
    const sdk = await run(paths.sdk(config), req);
    const lean = await run(paths.lean(config), req);
    expect(lean.error).toMatchObject({ kind: "network", retryable: true });
    expect(lean.error?.message).toContain(`could not connect to ${base} (connection refused)`);
    expect(view(lean.error)).toEqual(view(sdk.error));
  });

  it("a server that never answers: the configured timeoutMs ends it as APIConnectionTimeoutError, a retryable timeout", async () => {
    const config = configFor(server.baseUrl("openai-chat"), { timeoutMs: 300 });
    const raw = await rawErrors(config, () => server.enqueue({ hang: true }));
    expect(sdkView(raw.sdk).class).toBe("APIConnectionTimeoutError");
    expect(sdkView(raw.lean)).toEqual(sdkView(raw.sdk));
    const { sdk, lean } = await both({ hang: true }, "openai-chat", config);
    expect(lean.error).toMatchObject({ kind: "timeout", retryable: true });
    expect(view(lean.error)).toEqual(view(sdk.error));
    // the timed-out requests were closed by the client
    await server.waitForIdle();
    expect(server.inFlight).toBe(0);
  });
});

describe("request headers", () => {
  it("the bearer token, the configured headers, content-type, accept and a lash user-agent arrive", async () => {
    const config = configFor(server.baseUrl("openai-chat"), {
      headers: { "X-Title": "lash tests", "HTTP-Referer": "https://example.test" },
    });
    server.enqueue({ text: "ok" });
    const before = server.requests.length;
    expect((await run(paths.lean(config), req)).error).toBeUndefined();
    const h = server.requests[before]!.headers;
    expect(h.authorization).toBe(`Bearer ${KEY}`);
    expect(h["x-title"]).toBe("lash tests");
    expect(h["http-referer"]).toBe("https://example.test");
    expect(h["content-type"]).toBe("application/json");
    expect(h.accept).toBe("text/event-stream");
    expect(String(h["user-agent"])).toMatch(/^lash /);
  });

  it("configured headers win over the defaults, case-insensitively (as the SDK's defaultHeaders do)", async () => {
    const config = configFor(server.baseUrl("openai-chat"), { headers: { "User-Agent": "my-app/1.0" } });
    server.enqueue({ text: "ok" }, { text: "ok" });
    const before = server.requests.length;
    await run(paths.sdk(config), req);
    await run(paths.lean(config), req);
    expect(server.requests[before]!.headers["user-agent"]).toBe("my-app/1.0");
    expect(server.requests[before + 1]!.headers["user-agent"]).toBe("my-app/1.0");
  });

  it("the API key appears only in the Authorization header (request log: body, path, query, other headers)", async () => {
    const config = configFor(server.baseUrl("openai-chat"), { headers: { "x-extra": "1" } });
    server.enqueue({ error: { code: "server" } }, { text: "ok" });
    const before = server.requests.length;
    await run(paths.lean(config), req);
    await run(paths.lean(config), req);
    const sent = server.requests.slice(before);
    expect(sent).toHaveLength(2);
    for (const r of sent) {
      const { authorization, ...others } = r.headers;
      expect(authorization).toBe(`Bearer ${KEY}`);
      const elsewhere = JSON.stringify({ ...r, headers: others });
      expect(elsewhere).not.toContain(KEY);
      expect(elsewhere).toContain('"model":"mock"'); // the log holds the body it searched
    }
  });
});

describe("proxy", () => {
  it("with NODE_USE_ENV_PROXY=1 the request goes through HTTP_PROXY, as fetch's would (a forwarding proxy on loopback)", async () => {
    const seen: string[] = [];
    // a plain HTTP forward proxy: the request line holds the absolute URL; forward it to the mock
    const proxy = http.createServer((inbound, outbound) => {
      seen.push(`${inbound.method} ${inbound.url}`);
      const forward = http.request(
        inbound.url!,
        { method: inbound.method, headers: inbound.headers },
        (res) => {
          outbound.writeHead(res.statusCode ?? 502, res.headers);
          res.pipe(outbound);
        },
      );
      inbound.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const saved = {
      use: process.env.NODE_USE_ENV_PROXY,
      http: process.env.HTTP_PROXY,
      no: process.env.NO_PROXY,
    };
    try {
      process.env.NODE_USE_ENV_PROXY = "1";
      process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      delete process.env.NO_PROXY;
      const provider = paths.lean(configFor(server.baseUrl("openai-chat")));
      server.enqueue({ text: "via the proxy" });
      const out = await run(provider, req);
      expect(out.error).toBeUndefined();
      expect(normalize(out.events)[0]).toEqual({ type: "text", text: "via the proxy" });
      expect(seen).toEqual([`POST ${server.baseUrl("openai-chat")}/chat/completions`]);
    } finally {
      for (const [k, v] of [
        ["NODE_USE_ENV_PROXY", saved.use],
        ["HTTP_PROXY", saved.http],
        ["NO_PROXY", saved.no],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});
