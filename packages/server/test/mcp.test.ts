// The MCP endpoint (mcp.ts) over a real node HTTP server on 127.0.0.1, driven by the official
// MCP SDK client (`Client` + `StreamableHTTPClientTransport`). The agent runs are real lash
// turns (LashRuntime + the OpenAI-compatible adapter against the mock wire server), opened the
// way the daemon opens an agent session (planAgentSession, outputPlugin, checkAgentInput);
// auth and access are the endpoint's seams, given here as a token table and an acl.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inputText, type Manifest, outputPlugin, planAgentSession, type ResolvedAgent } from "@lash/agents";
import { IdGenerator, LashRuntime, LlmProviders, MemoryStore, ModelCatalog } from "@lash/core";
import { createProvider } from "@lash/providers";
import {
  type MockLlmServer,
  type MockReply,
  mockProviderOptions,
  startMockServer,
} from "@lash/providers/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { Context, Effect, Layer, ManagedRuntime } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { Principal, Run } from "../src/api.ts";
import { checkAgentInput, replyOf } from "../src/groups/agents.ts";
import { type McpHandler, makeMcpHandler, SessionEventStore } from "../src/mcp.ts";

const MODEL = "openai-compatible/mock";

const summary = {
  type: "object",
  properties: { title: { type: "string" }, score: { type: "integer" } },
  required: ["title", "score"],
  additionalProperties: false,
} as const;
const request = {
  type: "object",
  properties: { repository: { type: "string" } },
  required: ["repository"],
  additionalProperties: false,
} as const;

const agent = (a: Partial<ResolvedAgent> & { name: string; instructions: string }): ResolvedAgent => ({
  description: `the ${a.name} agent`,
  mode: "standard",
  tools: [],
  source: `agents/${a.name}.agent.md`,
  model: MODEL,
  ...a,
});

const manifest: Manifest = {
  version: 1,
  hash: "a".repeat(64),
  lashVersion: "test",
  inputs: [],
  project: {},
  agents: [
    agent({ name: "echoer", instructions: "ECHOER-PROMPT" }),
    agent({ name: "secret", instructions: "SECRET-PROMPT" }),
    agent({ name: "summarizer", instructions: "SUMMARIZER-PROMPT", input: request, output: summary }),
  ],
  skills: [],
};

const TOKENS: Record<string, Principal> = {
  "tok-alice": new Principal({ name: "alice", admin: false }),
  "tok-bob": new Principal({ name: "bob", admin: false }),
};

interface Setup {
  readonly url: (agent: string) => URL;
  readonly llm: MockLlmServer;
  readonly handler: McpHandler;
  readonly close: () => Promise<void>;
}

let setup: Setup | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await setup?.close();
  setup = undefined;
});

async function start(replies: MockReply[]): Promise<Setup> {
  const llm = await startMockServer({ replies });
  const provider = createProvider(MODEL, mockProviderOptions(llm, "openai-chat"));
  const runtime = ManagedRuntime.make(
    LashRuntime.layer({}).pipe(
      Layer.provide(
        Layer.mergeAll(
          MemoryStore,
          LlmProviders.single(provider),
          IdGenerator.seeded(),
          ModelCatalog.fromEntries([provider.info]),
        ),
      ),
    ),
  );
  const rt = Context.get(await runtime.runPromise(Effect.context<LashRuntime>()), LashRuntime);
  let runs = 0;
  const handler = makeMcpHandler({
    agent: (name) => manifest.agents.find((a) => a.name === name),
    authenticate: async (header) => {
      const principal = TOKENS[/^Bearer (.*)$/.exec(header ?? "")?.[1] ?? ""];
      if (!principal)
        throw { _tag: "Unauthorized", code: "missing_token", message: "send Authorization: Bearer <token>" };
      return principal;
    },
    checkAgent: async (principal, name) => {
      if (!manifest.agents.some((a) => a.name === name))
        throw { _tag: "NotFound", code: "agent_not_found", message: `no agent ${name}; run lash build` };
      if (name === "secret" && principal.name !== "bob")
        throw { _tag: "Forbidden", code: "forbidden", message: `${principal.name} may not execute secret` };
    },
    // one run of the agent in a new session, as the daemon's chat path opens it
    chat: async (principal, name, input) => {
      const a = manifest.agents.find((x) => x.name === name)!;
      const value = await Effect.runPromise(Effect.either(checkAgentInput(a, input)));
      if (value._tag === "Left") throw value.left;
      const plan = planAgentSession(manifest, a);
      const output = outputPlugin(plan);
      const session = await Effect.runPromise(
        rt.createSession({
          model: plan.model ?? MODEL,
          mode: plan.mode,
          systemPrompt: plan.systemPrompt,
          tools: [...plan.tools],
          ...(output ? { plugins: [output] } : {}),
        }),
      );
      const result = await Effect.runPromise(rt.turn(session.id, { text: inputText(value.right) }));
      return replyOf(
        a,
        new Run({
          id: `run-${++runs}`,
          sessionId: session.id,
          principal: principal.name,
          state: result.outcome.type === "finished" ? "completed" : "failed",
          input: inputText(value.right),
          createdAt: 0,
          lastSeq: 0,
          resumes: 0,
          text: result.text,
          ...(result.finalValue !== undefined ? { value: result.finalValue } : {}),
        }),
      );
    },
  });
  const server: HttpServer = createServer((req, res) => {
    const m = /^\/v1\/agents\/([^/]+)\/mcp$/.exec(new URL(req.url ?? "/", "http://x").pathname);
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    void handler(req, res, decodeURIComponent(m[1]!));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => new URL(`http://127.0.0.1:${port}/v1/agents/${name}/mcp`),
    llm,
    handler,
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
      await runtime.dispose();
      await llm.close();
    },
  };
}

async function connect(
  name: string,
  token = "tok-alice",
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(setup!.url(name), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "test", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return { client, transport };
}

const userText = (body: unknown): string => {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  const last = messages.filter((m) => m.role === "user").at(-1)!.content;
  return typeof last === "string" ? last : (last as { text?: string }[]).map((p) => p.text ?? "").join("");
};
const systemText = (body: unknown): string =>
  (body as { messages: { role: string; content: unknown }[] }).messages
    .filter((m) => m.role === "system")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");

describe("agents as MCP servers (Streamable HTTP)", () => {
  it("lists the agent as one tool with its schemas, and a call runs it: the model got the input, the result is its text", async () => {
    setup = await start([{ text: "echo: hello there" }]);
    const { client, transport } = await connect("echoer");
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({
      name: "echoer",
      description: "the echoer agent",
      inputSchema: { type: "object", properties: { input: { type: "string" } }, required: ["input"] },
    });
    expect(tools[0]!.outputSchema).toBeUndefined();
    const result = await client.callTool({ name: "echoer", arguments: { input: "hello there" } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: "text", text: "echo: hello there" }]);
    expect(setup.llm.requests).toHaveLength(1);
    expect(userText(setup.llm.requests[0]!.body)).toBe("hello there");
    expect(systemText(setup.llm.requests[0]!.body)).toContain("ECHOER-PROMPT");
  });

  it("a typed agent: inputSchema/outputSchema are its schemas, the result carries structuredContent (the client validates it)", async () => {
    setup = await start([{ text: JSON.stringify({ title: "ok", score: 3 }) }]);
    const { client } = await connect("summarizer");
    const { tools } = await client.listTools();
    expect(tools[0]!.inputSchema).toEqual(request);
    expect(tools[0]!.outputSchema).toEqual(summary);
    const result = await client.callTool({ name: "summarizer", arguments: { repository: "lash" } });
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify({ title: "ok", score: 3 }) }]);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ title: "ok", score: 3 });
    // the input reached the model as the JSON `lash run` sends
    expect(userText(setup.llm.requests[0]!.body)).toContain('"repository": "lash"');
    // the schema went to the model as its structured output
    expect(
      JSON.stringify((setup.llm.requests[0]!.body as { response_format?: unknown }).response_format),
    ).toContain('"score"');
  });

  it("input that does not match the agent's schema is an isError result naming the problem; no model call", async () => {
    setup = await start([]);
    const { client } = await connect("summarizer");
    const result = await client.callTool({ name: "summarizer", arguments: { repo: "typo" } });
    expect(result.isError).toBe(true);
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text).toContain("invalid_input");
    expect(text).toContain("does not match agent `summarizer`'s input schema");
    expect(setup.llm.requests).toHaveLength(0);
  });

  it("401 without a token, 403 for an agent the principal may not execute, 404 for an unknown agent — JSON bodies", async () => {
    setup = await start([]);
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
    };
    const post = (name: string, headers: Record<string, string>) =>
      fetch(setup!.url(name), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(init),
      });
    const none = await post("echoer", {});
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ _tag: "Unauthorized", code: "missing_token" });
    const denied = await post("secret", { authorization: "Bearer tok-alice" });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ code: "forbidden", message: "alice may not execute secret" });
    const unknown = await post("nobody", { authorization: "Bearer tok-alice" });
    expect(unknown.status).toBe(404);
    expect(setup.handler.sessions()).toBe(0);
    // the SDK client sees the 403 body as a failed connect
    await expect(connect("secret", "tok-alice")).rejects.toThrow(/alice may not execute secret/);
    const bob = await connect("secret", "tok-bob");
    expect((await bob.client.listTools()).tools.map((t) => t.name)).toEqual(["secret"]);
  });

  it("an MCP session belongs to its principal and agent; DELETE ends it and close() ends the rest", async () => {
    setup = await start([]);
    const alice = await connect("echoer");
    await connect("summarizer");
    expect(setup.handler.sessions()).toBe(2);
    const id = alice.transport.sessionId!;
    const list = { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} };
    const as = (name: string, token: string) =>
      fetch(setup!.url(name), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${token}`,
          "mcp-session-id": id,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify(list),
      });
    const other = await as("echoer", "tok-bob");
    expect(other.status).toBe(403);
    expect(((await other.json()) as { message: string }).message).toContain("belongs to another principal");
    const wrongAgent = await as("summarizer", "tok-alice");
    expect(wrongAgent.status).toBe(404);
    expect(await wrongAgent.json()).toMatchObject({ code: "mcp_session_not_found" });
    await alice.transport.terminateSession();
    expect(setup.handler.sessions()).toBe(1);
    const gone = await as("echoer", "tok-alice");
    expect(gone.status).toBe(404);
    await setup.handler.close();
    expect(setup.handler.sessions()).toBe(0);
  });
});

describe("SessionEventStore (MCP resumability)", () => {
  const msg = (n: number): JSONRPCMessage => ({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { n },
  });

  it("replays exactly the events after Last-Event-ID, of that stream only", async () => {
    const store = new SessionEventStore(100);
    const a1 = await store.storeEvent("a", msg(1));
    await store.storeEvent("b", msg(2));
    const a3 = await store.storeEvent("a", msg(3));
    const a4 = await store.storeEvent("a", msg(4));
    expect(await store.getStreamIdForEventId(a3)).toBe("a");
    const sent: [string, JSONRPCMessage][] = [];
    const stream = await store.replayEventsAfter(a1, { send: async (id, m) => void sent.push([id, m]) });
    expect(stream).toBe("a");
    expect(sent).toEqual([
      [a3, msg(3)],
      [a4, msg(4)],
    ]);
  });

  it("keeps the last `max` events", async () => {
    const store = new SessionEventStore(2);
    const first = await store.storeEvent("s", msg(1));
    await store.storeEvent("s", msg(2));
    await store.storeEvent("s", msg(3));
    const sent: number[] = [];
    await store.replayEventsAfter(first, {
      send: async (_id, m) => void sent.push((m as unknown as { params: { n: number } }).params.n),
    });
    expect(sent).toEqual([2, 3]);
  });
});
