// Issue 19 acceptance 4: the official MCP SDK client lists and calls a built agent through
// `/v1/agents/:name/mcp` of a real `lash serve` (a project made with `lash init`, a written
// `*.agent.md` and `lash build`; the mock wire server as the model).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, textOf } from "./cli-support.ts";
import { api, readSse, serveTests } from "./serve-support.ts";

const t = serveTests();
let client: Client | undefined;
// (registered after serveTests: after-each hooks run last-registered first, so the client closes before its daemon)
afterEach(async () => {
  await client?.close().catch(() => undefined);
  client = undefined;
});

const REVIEWER = `---
name: reviewer
description: Reviews a file and scores it.
input: { path: str }
output: { verdict: str, score: int }
---
REVIEWER-PROMPT: review the file you are given.
`;

async function project(box: Sandbox): Promise<void> {
  const opts = { env: box.env, cwd: box.cwd };
  expect((await lash(["init"], opts)).code).toBe(0);
  writeFileSync(join(box.cwd, "agents", "reviewer.agent.md"), REVIEWER);
  const build = await lash(["build"], opts);
  expect(build.code).toBe(0);
}

async function connect(url: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const c = new Client({ name: "serve-mcp-test", version: "1.0.0" });
  await c.connect(transport);
  client = c;
  return { client: c, transport };
}

describe("lash serve: agents as MCP servers", () => {
  it("the MCP SDK client lists the agent's tool and calls it; the model got the input; the result is text", async () => {
    const sb = await t.sandbox([{ text: "Hello over MCP." }]);
    await project(sb);
    const daemon = await t.daemon(sb);
    const { client: c, transport } = await connect(`${daemon.url}/v1/agents/hello/mcp`);
    expect(transport.sessionId).toBeTruthy();
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(["hello"]);
    expect(tools[0]!.description).toContain("Greets the user");
    expect(tools[0]!.inputSchema).toMatchObject({
      type: "object",
      properties: { input: { type: "string" } },
    });
    const result = await c.callTool({ name: "hello", arguments: { input: "greet me" } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: "text", text: "Hello over MCP." }]);
    expect(sb.server.requests).toHaveLength(1);
    expect(textOf(chatMessages(sb.server.requests[0]!.body).at(-1)!.content)).toBe("greet me");
    // the call was an ordinary run of a session of the agent
    const sessions = await api(daemon.url, "GET", "/v1/sessions");
    expect((sessions.body.sessions as { agent?: string }[]).map((s) => s.agent)).toEqual(["hello"]);
  });

  it("a typed agent: its schemas are the tool's, the result's structuredContent is the typed value", async () => {
    const sb = await t.sandbox([{ text: JSON.stringify({ verdict: "LGTM", score: 8 }) }]);
    await project(sb);
    const daemon = await t.daemon(sb);
    const { client: c, transport } = await connect(`${daemon.url}/v1/agents/reviewer/mcp`);
    const { tools } = await c.listTools();
    expect(tools[0]!.inputSchema).toMatchObject({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    });
    expect(tools[0]!.outputSchema).toMatchObject({ type: "object", required: ["verdict", "score"] });
    // bad input: an isError result naming the problem, no model call
    const bad = await c.callTool({ name: "reviewer", arguments: { file: "a.ts" } });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]!.text).toContain("input schema");
    expect(sb.server.requests).toHaveLength(0);
    const result = await c.callTool({ name: "reviewer", arguments: { path: "src/a.ts" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ verdict: "LGTM", score: 8 });
    const body = sb.server.requests[0]!.body;
    expect(textOf(chatMessages(body).at(-1)!.content)).toContain('"path": "src/a.ts"');
    expect(
      chatMessages(body)
        .filter((m) => m.role === "system")
        .map((m) => textOf(m.content))
        .join("\n"),
    ).toContain("REVIEWER-PROMPT");
    // DELETE ends the MCP session: its id is unknown afterwards
    const id = transport.sessionId!;
    await transport.terminateSession();
    const after = await fetch(`${daemon.url}/v1/agents/reviewer/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": id,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: {} }),
    });
    expect(after.status).toBe(404);
  });

  it("a call the client cancels cancels the agent's run", async () => {
    const sb = await t.sandbox([{ hang: true }]);
    await project(sb);
    const daemon = await t.daemon(sb);
    const { client: c } = await connect(`${daemon.url}/v1/agents/hello/mcp`);
    const abort = new AbortController();
    const call = c.callTool({ name: "hello", arguments: { input: "wait forever" } }, undefined, {
      signal: abort.signal,
    });
    // the model got the request (the run is in its model call): cancel
    await sb.server.waitForRequests(1);
    abort.abort();
    await expect(call).rejects.toThrow();
    const sessions = await api(daemon.url, "GET", "/v1/sessions");
    const [session] = sessions.body.sessions as { id: string }[];
    const runs = await api(daemon.url, "GET", `/v1/sessions/${session!.id}/runs`);
    const [run] = runs.body.runs as { id: string }[];
    // the run's stream ends with its runFinished: cancelled
    const { events, ended } = await readSse(`${daemon.url}/v1/runs/${run!.id}/events`);
    expect(ended).toBe(true);
    expect(events.at(-1)!.event).toBe("runFinished");
    expect(events.at(-1)!.data.data.state).toBe("cancelled");
  });
});
