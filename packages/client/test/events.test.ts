// The reconnecting event stream against a real HTTP server on 127.0.0.1 that speaks the
// daemon's SSE wire format (`id: <seq>`, `event: <type>`, `data: <ServerEvent JSON>`),
// scripted per connection so drops, restarts and repeats happen exactly where a test wants.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ClientError, NotFound } from "../src/errors.ts";
import { streamAgentChat, streamEvents } from "../src/events.ts";

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

interface TestServer {
  readonly baseUrl: string;
  readonly port: number;
  readonly requests: { url: string; method: string; lastEventId?: string; auth?: string }[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Handler, port = 0): Promise<TestServer> {
  const requests: TestServer["requests"] = [];
  const server: Server = createServer((req, res) => {
    requests.push({
      url: req.url ?? "",
      method: req.method ?? "",
      lastEventId: req.headers["last-event-id"] as string | undefined,
      auth: req.headers.authorization,
    });
    handler(req, res, requests.length);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const actual = (server.address() as AddressInfo).port;
  const handle: TestServer = {
    baseUrl: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

const event = (seq: number, type = "textDelta", runId = "r1") =>
  `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, sessionId: "s1", runId, type, at: 1, data: { n: seq } })}\n\n`;

const sse = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });

async function collect(it: AsyncIterable<{ seq: number; type: string }>) {
  const out: { seq: number; type: string }[] = [];
  for await (const e of it) out.push({ seq: e.seq, type: e.type });
  return out;
}

describe("streamEvents", () => {
  it("reconnects after a dropped connection with Last-Event-ID, skips a repeat, ends at runFinished", async () => {
    let first: ServerResponse | undefined;
    const server = await serve((req, res, n) => {
      sse(res);
      if (n === 1) {
        first = res;
        res.write(`: hello\n\n${event(1)}${event(2)}${event(3)}`);
        return;
      }
      // the replay starts one early on purpose: the client must not yield a seq twice
      const after = Number(req.headers["last-event-id"]);
      for (let seq = after; seq <= 4; seq++) res.write(event(seq));
      res.end(`${event(5, "runFinished")}${event(6)}`);
    });
    const seen: { seq: number; type: string }[] = [];
    for await (const e of streamEvents(
      { baseUrl: server.baseUrl, token: "tok" },
      { runId: "r1" },
      { initialDelayMs: 1 },
    )) {
      seen.push({ seq: e.seq, type: e.type });
      // the connection dies mid-stream (no clean end of the chunked body)
      if (e.seq === 3) first?.socket?.destroy();
    }
    expect(seen.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(seen.at(-1)?.type).toBe("runFinished");
    expect(server.requests.map((r) => [r.url, r.lastEventId, r.auth])).toEqual([
      ["/v1/runs/r1/events", undefined, "Bearer tok"],
      ["/v1/runs/r1/events", "3", "Bearer tok"],
    ]);
  });

  it("starts after `after`, and follows a daemon that goes away and comes back on the same port", async () => {
    let first = await serve((_req, res) => {
      sse(res);
      res.write(`${event(11)}${event(12)}`);
    });
    const port = first.port;
    const reconnects: string[] = [];
    let restarted: Promise<TestServer> | undefined;
    const stream = streamEvents(
      { baseUrl: first.baseUrl },
      { sessionId: "s1" },
      {
        after: 10,
        initialDelayMs: 1,
        maxDelayMs: 5,
        onReconnect: ({ cause }) => {
          reconnects.push(cause);
          // the restart happens once the client has seen the daemon gone (a refused connection)
          if (restarted === undefined && /ECONNREFUSED|fetch failed/.test(cause))
            restarted = serve((req, res) => {
              sse(res);
              const after = Number(req.headers["last-event-id"]);
              for (let seq = after + 1; seq <= 14; seq++) res.write(event(seq));
            }, port);
        },
      },
    );
    const seen: number[] = [];
    for await (const e of stream) {
      seen.push(e.seq);
      if (e.seq === 12) await first.close();
      if (e.seq === 14) break;
    }
    expect(seen).toEqual([11, 12, 13, 14]);
    expect(first.requests[0]?.lastEventId).toBe("10");
    const second = await restarted!;
    expect(second.requests[0]?.lastEventId).toBe("12");
    expect(reconnects.length).toBeGreaterThan(0);
    first = second;
  });

  it("gives up after maxRetries tries without an event, naming the cursor to read on from", async () => {
    const server = await serve((_req, res) => {
      sse(res);
      res.end(event(1, "textDelta", "r9"));
    });
    const baseUrl = server.baseUrl;
    const stream = streamEvents({ baseUrl }, { sessionId: "s1" }, { maxRetries: 2, initialDelayMs: 1 });
    expect((await stream.next()).value).toMatchObject({ seq: 1 });
    await server.close();
    const error = await stream.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ _tag: "ClientError", code: "stream_gave_up" });
    expect((error as ClientError).message).toContain("Last-Event-ID: 1");
  });

  it("an API error (404) ends the stream with the API's tagged error", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ _tag: "NotFound", code: "run_not_found", message: "no run r404; list runs with …" }),
      );
    });
    const error = await collect(streamEvents({ baseUrl: server.baseUrl }, { runId: "r404" })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NotFound);
    expect(error).toMatchObject({
      _tag: "NotFound",
      code: "run_not_found",
      message: "no run r404; list runs with …",
    });
    expect(server.requests).toHaveLength(1);
  });

  it("retries a 503 (a daemon not ready yet)", async () => {
    const server = await serve((_req, res, n) => {
      if (n === 1) {
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ _tag: "Unavailable", code: "not_ready", message: "starting" }));
        return;
      }
      sse(res);
      res.end(event(1, "runFinished"));
    });
    expect(
      await collect(streamEvents({ baseUrl: server.baseUrl }, { runId: "r1" }, { initialDelayMs: 1 })),
    ).toEqual([{ seq: 1, type: "runFinished" }]);
  });

  it("a run stream that ends cleanly with the run already over ends without reconnecting forever", async () => {
    const server = await serve((req, res) => {
      if (req.url === "/v1/runs/r1") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "r1", state: "completed", lastSeq: 5 }));
        return;
      }
      sse(res);
      res.end();
    });
    expect(await collect(streamEvents({ baseUrl: server.baseUrl }, { runId: "r1" }, { after: 5 }))).toEqual(
      [],
    );
    expect(server.requests.map((r) => r.url)).toEqual(["/v1/runs/r1/events", "/v1/runs/r1"]);
  });

  it("close() ends a stream waiting for its next event and closes the connection", async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const server = await serve((req, res) => {
      sse(res);
      res.write(event(1));
      req.socket.on("close", () => closed());
    });
    const stream = streamEvents({ baseUrl: server.baseUrl }, { sessionId: "s1" });
    expect((await stream.next()).value).toMatchObject({ seq: 1 });
    const pending = stream.next();
    stream.close();
    expect(await pending).toEqual({ done: true, value: undefined });
    await connectionClosed;
    expect(server.requests).toHaveLength(1);
  });

  it("an AbortSignal ends it too; `break` in for-await closes the connection", async () => {
    const server = await serve((_req, res) => {
      sse(res);
      res.write(`${event(1)}${event(2)}`);
    });
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const e of streamEvents(
      { baseUrl: server.baseUrl },
      { sessionId: "s1" },
      { signal: controller.signal },
    )) {
      seen.push(e.seq);
      if (e.seq === 2) controller.abort();
    }
    expect(seen).toEqual([1, 2]);
  });

  it("an event that is not a ServerEvent fails with a clear ClientError", async () => {
    const server = await serve((_req, res) => {
      sse(res);
      res.end('id: 1\ndata: {"nope":true}\n\n');
    });
    await expect(collect(streamEvents({ baseUrl: server.baseUrl }, { runId: "r1" }))).rejects.toMatchObject({
      _tag: "ClientError",
      code: "bad_event",
    });
  });
});

describe("streamAgentChat", () => {
  it("POSTs the chat once and continues on the run's stream after a drop", async () => {
    const bodies: string[] = [];
    let first: ServerResponse | undefined;
    const server = await serve((req, res, n) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        bodies.push(body);
        sse(res);
        if (n === 1) {
          first = res;
          res.write(event(1, "runStarted", "r7"));
        } else res.end(`${event(2, "textDelta", "r7")}${event(3, "runFinished", "r7")}`);
      });
    });
    const seen: number[] = [];
    for await (const e of streamAgentChat(
      { baseUrl: server.baseUrl },
      "helper",
      { input: "hi" },
      { initialDelayMs: 1 },
    )) {
      seen.push(e.seq);
      if (e.seq === 1) first?.socket?.destroy();
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(server.requests.map((r) => [r.method, r.url, r.lastEventId])).toEqual([
      ["POST", "/v1/agents/helper/chat/stream", undefined],
      ["GET", "/v1/runs/r7/events", "1"],
    ]);
    expect(JSON.parse(bodies[0]!)).toEqual({ input: "hi" });
  });
});
