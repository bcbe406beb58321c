import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { Socket } from "node:net";
import { bedrockChunk } from "./aws-eventstream.ts";
import { renderError, renderStream, type SseEvent, sseText } from "./render.ts";
import type { MockReply, WireFormat } from "./reply.ts";

/** One request as the mock server saw it. */
export interface RecordedRequest {
  /** 0-based arrival order. */
  readonly index: number;
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Header names lower-cased. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (undefined when not JSON). */
  readonly body: unknown;
  readonly rawBody: string;
  /** Which wire format the path selects (undefined for an unknown path). */
  readonly format: WireFormat | undefined;
  /** The model named by the body or (Gemini, Bedrock, Vertex) the path. */
  readonly model: string | undefined;
  readonly stream: boolean;
  /** Where a Messages API request was sent: Bedrock's or Vertex's paths (absent for the vendors' own). */
  readonly platform?: "bedrock" | "vertex";
}

/** How a streamed answer went: how much of it was written and who ended it. */
export interface StreamRecord {
  /** The request's `index`. */
  readonly index: number;
  /** Events the reply rendered to. */
  readonly eventsTotal: number;
  /** Events written before the connection closed. */
  eventsWritten: number;
  /** True when the client closed the connection before the server ended the response. */
  closedByClient: boolean;
}

export type Responder = (request: RecordedRequest) => MockReply | Promise<MockReply>;

/**
 * A rate limit the server enforces: a token bucket of `requests` that refills `requests` every
 * `perMs` ms ("N requests per second" with the default `perMs`). A request over the limit is
 * answered 429 (with `retry-after`/`retry-after-ms`) before any scripted reply is used; every
 * response carries the bucket's state in rate-limit headers.
 */
export interface MockRateLimit {
  readonly requests: number;
  /** Default 1000. */
  readonly perMs?: number;
  /** Header style: OpenAI `x-ratelimit-*` (default), Anthropic `anthropic-ratelimit-*`, or none. */
  readonly headers?: "openai" | "anthropic" | "none";
}

export interface MockServerOptions {
  /** Default 0: an ephemeral port. */
  readonly port?: number;
  readonly host?: string;
  /**
   * How long an idle keep-alive connection stays open (default 1 s). A benchmark on a loaded
   * machine raises it: a client that reuses a connection the server is closing just then
   * sees "other side closed" (a client without retries fails the call).
   */
  readonly keepAliveTimeoutMs?: number;
  /** Initial FIFO queue of replies. */
  readonly replies?: readonly MockReply[];
  /** Called when the queue is empty. */
  readonly responder?: Responder;
  /** Replay `replies` in a loop instead of consuming them. */
  readonly loop?: boolean;
  /** Enforce a rate limit (429 above it). */
  readonly rateLimit?: MockRateLimit;
  /**
   * Keep each request's body in `requests` (default true). A long benchmark turns it off: the
   * responder still sees the whole request, the log keeps the rest (body `null`, rawBody "").
   */
  readonly recordBodies?: boolean;
}

export interface MockLlmServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Every request so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Appends replies to the FIFO queue. */
  enqueue(...replies: MockReply[]): void;
  /** Sets (or clears) the responder used when the queue is empty. */
  respondWith(responder: Responder | undefined): void;
  /** Resolves when at least `n` requests have arrived. */
  waitForRequests(n: number): Promise<readonly RecordedRequest[]>;
  /** Sets (or clears) the enforced rate limit; the bucket starts full. */
  setRateLimit(limit: MockRateLimit | undefined): void;
  /** One record per streamed answer, in request order (see `StreamRecord`). */
  readonly streams: readonly StreamRecord[];
  /** Resolves when the stream answering request `index` has closed (by either side). */
  waitForStreamClosed(index: number): Promise<StreamRecord>;
  /** Indices of the requests the rate limit answered with 429. */
  readonly rateLimited: readonly number[];
  /** Requests whose connection is still open (e.g. hanging ones). */
  readonly inFlight: number;
  /** TCP connections accepted so far (a client that keeps connections alive opens few). */
  readonly connections: number;
  /** Resolves when no request is in flight (hung requests end when the client aborts). */
  waitForIdle(): Promise<void>;
  /** Base URL the given SDK expects (`/v1` for OpenAI, bare for Anthropic and Gemini). */
  baseUrl(format: WireFormat): string;
  close(): Promise<void>;
}

/** Bedrock's `/model/{id}/invoke[-with-response-stream]` and Vertex's `…/models/{model}:[stream]rawPredict`. */
const bedrockPath = /\/model\/([^/]+)\/invoke(-with-response-stream)?$/;
const vertexPath = /\/publishers\/anthropic\/models\/([^/:]+):(stream)?rawPredict$/i;

export function formatOfPath(path: string): WireFormat | undefined {
  if (bedrockPath.test(path) || vertexPath.test(path)) return "anthropic";
  if (path.endsWith("/chat/completions")) return "openai-chat";
  if (path.endsWith("/responses")) return "openai-responses";
  if (path.endsWith("/messages")) return "anthropic";
  if (/:(stream)?generateContent$/i.test(path)) return "google";
  return undefined;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

const sseHeaders = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
};

/** Splits an event's bytes inside its first multibyte character (or returns it whole). */
function splitInsideChar(buf: Buffer): Buffer[] {
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (b >= 0xc0) return [buf.subarray(0, i + 1), buf.subarray(i + 1)];
  }
  return [buf];
}

/** Starts the mock wire server on 127.0.0.1 (ephemeral port unless given). */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockLlmServer> {
  const queue: MockReply[] = [...(options.replies ?? [])];
  const loopScript = options.loop ? [...(options.replies ?? [])] : undefined;
  let loopIndex = 0;
  let responder = options.responder;
  const requests: RecordedRequest[] = [];
  const waiters: { n: number; resolve: (r: readonly RecordedRequest[]) => void }[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let closing = false;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];
  const rateLimited: number[] = [];
  const streams: StreamRecord[] = [];
  const streamClosed = new Map<number, Promise<StreamRecord>>();
  let gate: { limit: MockRateLimit; level: number; at: number } | undefined;
  const setRateLimit = (limit: MockRateLimit | undefined): void => {
    gate = limit ? { limit, level: limit.requests, at: performance.now() } : undefined;
  };
  setRateLimit(options.rateLimit);

  /** Takes one request from the bucket: whether it may pass, and the headers that say where the bucket stands. */
  const admit = (): { ok: boolean; headers: Record<string, string>; retryAfterMs: number } | undefined => {
    if (!gate) return undefined;
    const { requests, perMs = 1000, headers: style = "openai" } = gate.limit;
    const rate = requests / perMs;
    const now = performance.now();
    gate.level = Math.min(requests, gate.level + (now - gate.at) * rate);
    gate.at = now;
    const ok = gate.level >= 1;
    if (ok) gate.level -= 1;
    const remaining = Math.floor(gate.level);
    const resetMs = Math.ceil((requests - gate.level) / rate);
    const retryAfterMs = Math.ceil((1 - gate.level) / rate) + 1;
    const headers: Record<string, string> =
      style === "openai"
        ? {
            "x-ratelimit-limit-requests": String(requests),
            "x-ratelimit-remaining-requests": String(remaining),
            "x-ratelimit-reset-requests": `${resetMs}ms`,
          }
        : style === "anthropic"
          ? {
              "anthropic-ratelimit-requests-limit": String(requests),
              "anthropic-ratelimit-requests-remaining": String(remaining),
              "anthropic-ratelimit-requests-reset": new Date(Date.now() + resetMs).toISOString(),
            }
          : {};
    return { ok, headers, retryAfterMs };
  };

  const waitFor = (n: number): Promise<readonly RecordedRequest[]> => {
    if (requests.length >= n) return Promise.resolve(requests.slice());
    return new Promise((resolve) => waiters.push({ n, resolve }));
  };

  const nextReply = async (req: RecordedRequest): Promise<MockReply> => {
    const queued = queue.shift();
    if (queued) return queued;
    if (responder) return responder(req);
    if (loopScript && loopScript.length > 0) return loopScript[loopIndex++ % loopScript.length]!;
    return { error: { status: 400, message: `mock-llm: no reply scripted for request #${req.index}` } };
  };

  const record = (req: IncomingMessage, raw: string): RecordedRequest => {
    const u = new URL(req.url ?? "/", "http://localhost");
    let body: unknown;
    try {
      body = raw === "" ? undefined : JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const format = formatOfPath(u.pathname);
    const b = body as { model?: unknown; stream?: unknown } | undefined;
    let model = typeof b?.model === "string" ? b.model : undefined;
    let stream = b?.stream === true;
    if (format === "google") {
      const m = /models\/(.+):\w+$/.exec(u.pathname);
      model = m?.[1] ? decodeURIComponent(m[1]) : undefined;
      stream = /:streamGenerateContent$/i.test(u.pathname);
    }
    let platform: "bedrock" | "vertex" | undefined;
    const bedrock = bedrockPath.exec(u.pathname);
    const vertex = bedrock ? null : vertexPath.exec(u.pathname);
    if (bedrock) {
      platform = "bedrock";
      model = decodeURIComponent(bedrock[1]!);
      stream = bedrock[2] !== undefined;
    } else if (vertex) {
      platform = "vertex";
      model = decodeURIComponent(vertex[1]!);
      stream = vertex[2] !== undefined;
    }
    const rec: RecordedRequest = {
      index: requests.length,
      method: req.method ?? "GET",
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      headers: { ...req.headers },
      body,
      rawBody: raw,
      format,
      model,
      stream,
      ...(platform ? { platform } : {}),
    };
    requests.push(options.recordBodies === false ? { ...rec, body: null, rawBody: "" } : rec);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (requests.length >= w.n) {
        waiters.splice(i, 1);
        w.resolve(requests.slice());
      }
    }
    return rec;
  };

  const writeEvents = async (
    res: ServerResponse,
    reply: MockReply,
    events: SseEvent[],
    format: WireFormat,
    index: number,
    encode: (e: SseEvent) => Buffer | string = sseText,
  ): Promise<void> => {
    const socket = res.socket;
    const alive = (): boolean => !closing && !res.destroyed && !res.writableEnded;
    const stat: StreamRecord = { index, eventsTotal: events.length, eventsWritten: 0, closedByClient: false };
    streams.push(stat);
    streamClosed.set(
      index,
      new Promise((resolve) =>
        res.on("close", () => {
          stat.closedByClient = !res.writableFinished && !closing;
          resolve(stat);
        }),
      ),
    );
    const paced =
      reply.stallAfter !== undefined ||
      reply.chunkDelayMs !== undefined ||
      reply.splitMultibyte ||
      reply.resetAfterChunks !== undefined ||
      reply.hangAfterChunks !== undefined ||
      reply.malformedAfterChunks !== undefined;
    if (reply.writeSplits && reply.writeSplits.length > 0) {
      const all =
        reply.rawSse !== undefined
          ? Buffer.from(reply.rawSse, "utf8")
          : Buffer.concat(events.map((e) => Buffer.from(encode(e))));
      let at = 0;
      for (const cut of [...reply.writeSplits, all.length]) {
        const end = Math.min(Math.max(cut, at), all.length);
        if (end > at) {
          res.write(all.subarray(at, end));
          await delay(1);
          if (!alive()) return;
        }
        at = end;
      }
      res.end();
      return;
    }
    if (reply.rawSse !== undefined) {
      res.end(reply.rawSse);
      return;
    }
    if (!paced) {
      // One write: fastest for the benchmarks.
      stat.eventsWritten = events.length;
      res.end(
        encode === sseText
          ? events.map(sseText).join("")
          : Buffer.concat(events.map((e) => Buffer.from(encode(e)))),
      );
      return;
    }
    for (let i = 0; i < events.length; i++) {
      if (reply.hangAfterChunks !== undefined && i === reply.hangAfterChunks) return; // stall
      if (reply.resetAfterChunks !== undefined && i === reply.resetAfterChunks) {
        await delay(1);
        if (socket && typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
        else socket?.destroy();
        return;
      }
      if (reply.malformedAfterChunks !== undefined && i === reply.malformedAfterChunks)
        res.write(
          format === "anthropic" || format === "openai-responses"
            ? "event: content_block_delta\ndata: {not json\n\n"
            : "data: {not json\n\n",
        );
      const encoded = encode(events[i]!);
      const buf = Buffer.from(
        reply.atWrite === undefined
          ? encoded
          : reply.atWrite(typeof encoded === "string" ? encoded : encoded.toString("utf8")),
      );
      if (reply.splitMultibyte) {
        for (const piece of splitInsideChar(buf)) {
          res.write(piece);
          await delay(2);
          if (!alive()) return;
        }
      } else res.write(buf);
      stat.eventsWritten = i + 1;
      if (reply.stallAfter !== undefined && buf.toString("utf8").includes(reply.stallAfter)) return; // stall
      if (reply.chunkDelayMs) await delay(reply.chunkDelayMs);
      if (!alive()) return;
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rec = record(req, Buffer.concat(chunks).toString("utf8"));
    const format = rec.format;
    if (!format) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `mock-llm: unknown path ${rec.path}` } }));
      return;
    }
    const admitted = admit();
    if (admitted && !admitted.ok) {
      rateLimited.push(rec.index);
      const e = renderError(format, {
        code: "rateLimit",
        retryAfter: admitted.retryAfterMs / 1000,
        headers: { ...admitted.headers, "retry-after-ms": String(admitted.retryAfterMs) },
      });
      res.writeHead(e.status, e.headers);
      res.end(e.body);
      return;
    }
    const limitHeaders = admitted?.headers ?? {};
    const reply = await nextReply(rec);
    if (reply.hang) return; // never answer
    if (reply.error) {
      const e = renderError(format, reply.error, rec.platform);
      res.writeHead(e.status, { ...limitHeaders, ...e.headers, ...(reply.headers ?? {}) });
      res.end(e.body);
      return;
    }
    const rendered = renderStream(format, reply, rec.index, rec.model ?? "mock-model");
    let events = rendered.events;
    if (reply.truncate && rendered.terminal > 0) events = events.slice(0, events.length - rendered.terminal);
    if (!rec.stream && reply.raw === undefined && reply.rawSse === undefined) {
      res.writeHead(200, { "content-type": "application/json", ...limitHeaders, ...(reply.headers ?? {}) });
      res.end(JSON.stringify(nonStreamingBody(format, events)));
      return;
    }
    if (rec.platform === "bedrock" && reply.rawSse === undefined) {
      // Bedrock frames each event in AWS event-stream messages
      res.writeHead(200, {
        "content-type": "application/vnd.amazon.eventstream",
        ...limitHeaders,
        ...(reply.headers ?? {}),
      });
      res.flushHeaders();
      await writeEvents(res, reply, events, format, rec.index, (e) => bedrockChunk(e.data));
      return;
    }
    res.writeHead(200, { ...sseHeaders, ...limitHeaders, ...(reply.headers ?? {}) });
    res.flushHeaders();
    await writeEvents(res, reply, events, format, rec.index);
  };

  const server: Server = createServer((req, res) => {
    inFlight++;
    res.on("close", () => {
      inFlight--;
      if (inFlight === 0) {
        const w = idleWaiters;
        idleWaiters = [];
        for (const f of w) f();
      }
    });
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `mock-llm: ${String(e)}` } }));
    });
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1000;
  server.on("connection", (s: Socket) => {
    s.setNoDelay(true);
    connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const url = `http://${options.host ?? "127.0.0.1"}:${port}`;

  return {
    url,
    port,
    get requests() {
      return requests;
    },
    enqueue(...replies) {
      queue.push(...replies);
    },
    respondWith(r) {
      responder = r;
    },
    setRateLimit,
    get rateLimited() {
      return rateLimited;
    },
    get streams() {
      return streams;
    },
    waitForStreamClosed(index) {
      const p = streamClosed.get(index);
      if (p) return p;
      return waitFor(index + 1).then(async () => {
        // the answer starts after the request is recorded: wait for its stream to exist
        while (!streamClosed.has(index)) await new Promise((r) => setImmediate(r));
        return streamClosed.get(index)!;
      });
    },
    waitForRequests: waitFor,
    get inFlight() {
      return inFlight;
    },
    get connections() {
      return connections;
    },
    waitForIdle() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    baseUrl(format) {
      return format === "openai-chat" || format === "openai-responses" ? `${url}/v1` : url;
    },
    close() {
      closing = true;
      return new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
    },
  };
}

/** Folds rendered stream events into the vendor's non-streaming JSON body (for SDK calls without `stream`). */
function nonStreamingBody(format: WireFormat, events: SseEvent[]): unknown {
  const payloads = events
    .filter((e) => e.data !== "[DONE]")
    .map((e) => JSON.parse(e.data) as Record<string, unknown>);
  if (format === "openai-responses") {
    const last = payloads[payloads.length - 1] as { response?: unknown } | undefined;
    return last?.response ?? {};
  }
  if (format === "google") {
    const parts: unknown[] = [];
    let finishReason: unknown;
    let usageMetadata: unknown;
    for (const p of payloads) {
      const c = (
        p.candidates as { content?: { parts?: unknown[] }; finishReason?: unknown }[] | undefined
      )?.[0];
      for (const part of c?.content?.parts ?? []) parts.push(part);
      if (c?.finishReason) finishReason = c.finishReason;
      if (p.usageMetadata) usageMetadata = p.usageMetadata;
    }
    return { candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }], usageMetadata };
  }
  if (format === "openai-chat") {
    let content = "";
    const toolCalls: { id?: string; type: string; function: { name: string; arguments: string } }[] = [];
    let finish: unknown = null;
    let usage: unknown;
    for (const p of payloads) {
      const ch = (p.choices as { delta?: Record<string, unknown>; finish_reason?: unknown }[])[0];
      if (p.usage) usage = p.usage;
      if (!ch) continue;
      if (typeof ch.delta?.content === "string") content += ch.delta.content;
      for (const tc of (ch.delta?.tool_calls as
        | { index: number; id?: string; function?: { name?: string; arguments?: string } }[]
        | undefined) ?? []) {
        let cur = toolCalls[tc.index];
        if (!cur) {
          cur = { type: "function", function: { name: "", arguments: "" } };
          toolCalls[tc.index] = cur;
        }
        if (tc.id) cur.id = tc.id;
        if (tc.function?.name) cur.function.name = tc.function.name;
        if (tc.function?.arguments) cur.function.arguments += tc.function.arguments;
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
    return {
      id: "chatcmpl-mock",
      object: "chat.completion",
      created: 0,
      model: "mock",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
          finish_reason: finish,
        },
      ],
      ...(usage ? { usage } : {}),
    };
  }
  // anthropic
  const content: Record<string, unknown>[] = [];
  let message: Record<string, unknown> = {};
  let stopReason: unknown = null;
  let usage: Record<string, unknown> = {};
  for (const p of payloads) {
    if (p.type === "message_start") {
      message = p.message as Record<string, unknown>;
      usage = { ...(message.usage as Record<string, unknown>) };
    } else if (p.type === "content_block_start")
      content[p.index as number] = { ...(p.content_block as object) };
    else if (p.type === "content_block_delta") {
      const b = content[p.index as number]!;
      const d = p.delta as Record<string, string>;
      if (d.type === "text_delta") b.text = String(b.text ?? "") + d.text;
      else if (d.type === "thinking_delta") b.thinking = String(b.thinking ?? "") + d.thinking;
      else if (d.type === "signature_delta") b.signature = d.signature;
      else if (d.type === "input_json_delta") b._json = String(b._json ?? "") + d.partial_json;
    } else if (p.type === "message_delta") {
      stopReason = (p.delta as { stop_reason?: unknown }).stop_reason;
      usage = { ...usage, ...(p.usage as object) };
    }
  }
  for (const b of content)
    if (b && "_json" in b) {
      b.input = JSON.parse(String(b._json || "{}")) as unknown;
      delete b._json;
    }
  return { ...message, content, stop_reason: stopReason, usage };
}
