// MCP at the edges, against real servers: text blobs, a tool with a bad schema, a streamable-HTTP
// session the server forgot (404), the session DELETE on exit, and a legacy-SSE server restart.
import { afterEach, describe, expect, it } from "vitest";
import { createMcpManager, type McpManagerHandle, type McpServerStatus } from "../src/index.ts";
import { everythingServer, fixtureServer, startEverythingSse, startSessionHttpServer } from "./helpers.ts";

const open: McpManagerHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});
const manager = async (
  mcpServers: Record<string, unknown>,
  options: Parameters<typeof createMcpManager>[1] = {},
) => {
  const m = await createMcpManager({ mcpServers }, options);
  open.push(m);
  return m;
};
const statusOf = (m: McpManagerHandle, name: string): McpServerStatus => {
  const s = m.status().find((x) => x.name === name);
  if (!s) throw new Error(`no status for ${name}`);
  return s;
};
/** Resolves once the server's status satisfies `pred` (on status changes, no polling). */
const until = (m: McpManagerHandle, name: string, pred: (s: McpServerStatus) => boolean) =>
  new Promise<McpServerStatus>((resolve) => {
    const check = () => {
      const s = statusOf(m, name);
      if (pred(s)) {
        stop();
        resolve(s);
      }
    };
    const stop = m.subscribe(check);
    check();
  });
const textOf = (o: { content: readonly { type: string; text?: string }[] }) =>
  o.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");

describe("MCP at the edges (real servers)", () => {
  it("server-everything's text/plain blob resource reaches the model as text", async () => {
    const m = await manager({ everything: everythingServer() });
    await m.awaitSettled();
    expect(statusOf(m, "everything").state).toBe("ready");
    const out = await m.callTool("everything", "get-resource-reference", {
      resourceType: "Blob",
      resourceId: 2,
    });
    const text = textOf(out);
    expect(text).toContain("[resource demo://resource/dynamic/blob/2 (text/plain)]");
    expect(text).toContain("Resource 2: This is a base64 blob");
    expect(out.content.some((p) => p.type === "attachment")).toBe(false);
  });

  it("one tool with a non-conforming schema is skipped with a readable reason; the others stay usable", async () => {
    const m = await manager({ bad: fixtureServer("bad-schema-server.ts") });
    await m.awaitSettled();
    const status = statusOf(m, "bad");
    expect(status.state).toBe("ready");
    expect(status.toolCount).toBe(2);
    expect(status.skippedTools).toEqual([
      { name: "broken", reason: 'inputSchema must have type "object" (it has none)' },
      { name: "listy", reason: 'outputSchema must have type "object" (it has "array")' },
    ]);
    expect(JSON.stringify(status)).not.toMatch(/invalid_value|"code"/);
    expect((await m.tools()).map((t) => t.name).sort()).toEqual(["mcp__bad__echo", "mcp__bad__stats"]);
    expect(textOf(await m.callTool("bad", "echo", { text: "still here" }))).toBe("echo: still here");
    // the output schema of a listed tool is still enforced (the SDK's check, kept with the lenient listing)
    await expect(m.callTool("bad", "stats", {})).rejects.toThrow(/output schema/i);
  });

  it("streamable HTTP: a call answered 404 (session forgotten) is re-sent on a new session and runs once", async () => {
    const http = await startSessionHttpServer();
    try {
      const m = await manager({ s: { type: "http", url: http.url, timeoutMs: 5000 } });
      await m.awaitSettled();
      expect(statusOf(m, "s").state).toBe("ready");
      expect(textOf(await m.callTool("s", "count", {}))).toBe("execution 1");
      const firstSession = http.requests.find((r) => r.rpc === "tools/call")?.sessionId;
      expect(firstSession).toBeDefined();

      await http.forgetSessions(); // as a restarted server: the old session id now gets 404
      const out = await m.callTool("s", "count", {});
      expect(out.isError).toBeUndefined();
      expect(textOf(out)).toBe("execution 2");
      expect(http.executions()).toBe(2); // the 404'd request never ran; the re-sent one ran once
      const calls = http.requests.filter((r) => r.rpc === "tools/call");
      expect(calls.map((r) => r.sessionId === firstSession)).toEqual([true, true, false]);
      expect(http.requests.filter((r) => r.rpc === "initialize")).toHaveLength(2);
      const status = statusOf(m, "s");
      expect(status.state).toBe("ready");
      expect(status.restarts).toBe(1);
      expect(status.lastError).toMatch(/no longer knows the session \(HTTP 404/);
    } finally {
      await http.close();
    }
  });

  it("streamable HTTP: the session is ended with DELETE when the manager closes (and on restart)", async () => {
    const http = await startSessionHttpServer();
    try {
      const m = await manager({ s: { type: "http", url: http.url } });
      await m.awaitSettled();
      expect(textOf(await m.callTool("s", "count", {}))).toBe("execution 1");
      const first = http.requests.find((r) => r.rpc === "initialize" && r.sessionId === undefined);
      const session1 = http.requests.find((r) => r.rpc === "tools/call")?.sessionId;
      expect(first).toBeDefined();
      expect(http.sessions()).toBe(1);

      await m.restart("s");
      await until(m, "s", (s) => s.restarts === 1 && s.state === "ready");
      expect(textOf(await m.callTool("s", "count", {}))).toBe("execution 2");
      const session2 = http.requests.filter((r) => r.rpc === "tools/call").at(-1)?.sessionId;
      expect(session2).not.toBe(session1);

      await m.close();
      const deletes = http.requests.filter((r) => r.method === "DELETE").map((r) => r.sessionId);
      expect(deletes).toEqual([session1, session2]);
      expect(http.sessions()).toBe(0); // the server closed both sessions
    } finally {
      await http.close();
    }
  });

  it("legacy SSE: after server-everything restarts on the same port, the next call reconnects and succeeds", async () => {
    const sse = await startEverythingSse();
    try {
      // a short call timeout: a call stuck on the dead stream would fail here instead of passing late
      const m = await manager({ legacy: { type: "sse", url: sse.url, timeoutMs: 5000 } });
      await m.awaitSettled();
      expect(statusOf(m, "legacy").state).toBe("ready");
      expect(textOf(await m.callTool("legacy", "echo", { message: "before" }))).toBe("Echo: before");

      await sse.stop();
      // the closed event stream is noticed: the server is no longer shown ready
      const down = await until(m, "legacy", (s) => s.state !== "ready");
      expect(down.reason ?? "").toMatch(/SSE event stream closed/);

      await sse.start();
      const out = await m.callTool("legacy", "echo", { message: "after restart" });
      expect(out.isError).toBeUndefined();
      expect(textOf(out)).toBe("Echo: after restart");
      const status = statusOf(m, "legacy");
      expect(status.state).toBe("ready");
      expect(status.restarts).toBe(1);
      expect(status.lastError ?? "").not.toMatch(/did not answer|timed out/);
    } finally {
      await sse.stop();
    }
  });
});
