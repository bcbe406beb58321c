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
