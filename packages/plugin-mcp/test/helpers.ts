import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { buildServer } from "./fixtures/tools.ts";

const fixtures = join(import.meta.dirname, "fixtures");

/** A stdio server entry (config-file shape) running one of the fixtures with this Node. */
export const fixtureServer = (file: string, env?: Record<string, string>) => ({
  command: process.execPath,
  args: [join(fixtures, file)],
  ...(env ? { env } : {}),
});

/** The published `@modelcontextprotocol/server-everything`, over stdio. */
export function everythingServer() {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const pkg = require(pkgPath) as { bin: Record<string, string> };
  const bin = pkg.bin["mcp-server-everything"];
  if (!bin) throw new Error("server-everything has no mcp-server-everything bin");
  return { command: process.execPath, args: [join(dirname(pkgPath), bin), "stdio"] };
}

/** The test suite's McpServer behind a real streamable-HTTP endpoint on 127.0.0.1 (stateless mode). */
export async function startHttpMcpServer(): Promise<{
  url: string;
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}> {
  const requests: IncomingHttpHeaders[] = [];
  const http: Server = createServer((req, res) => {
    requests.push(req.headers);
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const server = buildServer("http");
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** The test suite's McpServer behind the legacy HTTP+SSE transport (GET /sse, POST /messages). */
export async function startSseMcpServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = new Map<string, SSEServerTransport>();
  const http: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      res.on("close", () => sessions.delete(transport.sessionId));
      void buildServer("sse").connect(transport);
      return;
    }
    const id = new URL(req.url ?? "/", "http://x").searchParams.get("sessionId") ?? "";
    const transport = sessions.get(id);
    if (req.method === "POST" && transport) {
      void transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Whether a process is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A stateful streamable-HTTP server (sessions with `Mcp-Session-Id`) whose `count` tool counts its
 * executions. `forgetSessions()` drops every session, as a restarted server would: a request with
 * an old session id is then answered `404 Session not found`. Every request is recorded.
 */
export async function startSessionHttpServer(): Promise<{
  url: string;
  /** Executions of the `count` tool. */
  executions: () => number;
  /** Every request (method, session id, JSON-RPC method when a POST). */
  requests: { method: string; sessionId?: string; rpc?: string }[];
  /** Sessions the server knows now. */
  sessions: () => number;
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}> {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { randomUUID } = await import("node:crypto");
  let executions = 0;
  const requests: { method: string; sessionId?: string; rpc?: string }[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const build = () => {
    const server = new McpServer({ name: "lash-test-sessions", version: "1.0.0" });
    server.registerTool("count", { description: "Counts its executions." }, async () => {
      executions++;
      return { content: [{ type: "text", text: `execution ${executions}` }] };
    });
    return server;
  };
  const readBody = (req: import("node:http").IncomingMessage) =>
    new Promise<unknown>((resolve, reject) => {
      let text = "";
      req.on("data", (c: Buffer) => {
        text += c.toString();
      });
      req.on("end", () => {
        try {
          resolve(text ? JSON.parse(text) : undefined);
        } catch (e) {
          reject(e);
        }
      });
      req.on("error", reject);
    });
  const http: Server = createServer((req, res) => {
    void (async () => {
      const sessionId = req.headers["mcp-session-id"] as string | undefined;
      const body = req.method === "POST" ? await readBody(req) : undefined;
      const rpc = (body as { method?: string } | undefined)?.method;
      requests.push({
        method: req.method ?? "",
        ...(sessionId ? { sessionId } : {}),
        ...(rpc ? { rpc } : {}),
      });
      if (sessionId !== undefined) {
        const transport = sessions.get(sessionId);
        if (!transport) {
          res.writeHead(404, { "content-type": "application/json" }).end(
            JSON.stringify({
              jsonrpc: "2.0",
              error: { code: -32001, message: "Session not found" },
              id: null,
            }),
          );
          return;
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      if (req.method !== "POST" || rpc !== "initialize") {
        res.writeHead(400).end("Bad Request: no session");
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await build().connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    executions: () => executions,
    requests,
    sessions: () => sessions.size,
    forgetSessions: async () => {
      const all = [...sessions.values()];
      sessions.clear();
      // a restarted server has no open streams either
      await Promise.all(all.map((t) => t.close().catch(() => undefined)));
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/**
 * The published server-everything in `sse` mode on a loopback port, as a child process that can be
 * killed and started again on the same port (a server restart).
 */
export async function startEverythingSse(): Promise<{
  url: string;
  /** Kill the server and wait for its exit. */
  stop(): Promise<void>;
  /** Start it again on the same port; resolves once it listens. */
  start(): Promise<void>;
}> {
  const { spawn } = await import("node:child_process");
  const { createServer: netServer } = await import("node:net");
  const port = await new Promise<number>((resolve, reject) => {
    const probe = netServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const p = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
  const { command, args } = everythingServer();
  let child: import("node:child_process").ChildProcess | undefined;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const c = spawn(command, [...args.slice(0, -1), "sse"], {
        env: { PATH: process.env.PATH ?? "", PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = c;
      let out = "";
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes(`running on port ${port}`)) resolve();
      };
      c.stderr?.on("data", onData);
      c.stdout?.on("data", onData);
      c.once("exit", (code) => reject(new Error(`server-everything sse exited (${code}): ${out}`)));
    });
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once("exit", () => resolve()));
    c.kill("SIGKILL");
    await exited;
  };
  await start();
  return { url: `http://127.0.0.1:${port}/sse`, stop, start };
}
