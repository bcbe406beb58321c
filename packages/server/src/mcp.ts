// `/v1/agents/<name>/mcp`: each built agent as an MCP server over Streamable HTTP, with the
// official SDK's server transport, so Claude Desktop, Cursor or another lash can call it.
//
// 1. Every HTTP request is authenticated (`Authorization: Bearer …`, 401) and the principal
//    must be allowed to execute the agent (`Access.checkAgent`: 404 / 403), as a JSON error
//    body `{ _tag, code, message }`.
// 2. An `initialize` POST without `Mcp-Session-Id` opens an MCP session: a low-level SDK
//    `Server` and its transport (session id from `sessionIdGenerator`, an event store for
//    resumability: a client that lost an SSE stream reconnects with `Last-Event-ID`). The
//    session belongs to the agent of its URL and to the principal that opened it.
// 3. The server has one tool, named after the agent: its `inputSchema` is the agent's input
//    schema (a string `input` property when it has none; a non-object schema is wrapped as
//    `{ input }`), its `outputSchema` the agent's output schema (a non-object one wrapped as
//    `{ value }`). A call runs the agent the way `POST /v1/agents/:name/chat` does (a new
//    session, a run, its result) and returns the text plus `structuredContent` for a typed
//    agent; a problem is an `isError` result naming it. A cancelled call cancels the run.
// 4. A `DELETE` ends the MCP session (the SDK closes its transport); `close()` ends them all.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ResolvedAgent } from "@lash/agents";
import type { JsonSchema } from "@lash/core";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type EventStore,
  StreamableHTTPServerTransport,
} from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { Cause, Effect, Exit, Option, Runtime } from "effect";
import type { AgentReply, Principal } from "./api.ts";
import { authenticate } from "./auth.ts";
import { agentOf, replyOf, startAgentRun } from "./groups/agents.ts";
import { Access, Host, RunManager, Settings, type StateDb } from "./services.ts";

/** Handles a request whose path is `/v1/agents/<name>/mcp`; resolves when the response is written. */
export interface McpHandler {
  (req: IncomingMessage, res: ServerResponse, agent: string): Promise<void>;
  /** Close every MCP session's transport (the daemon stops). */
  readonly close: () => Promise<void>;
  /** Open MCP sessions. */
  readonly sessions: () => number;
}

/** An error the deps throw: a body of the API's error schema (`_tag`, `code`, `message`). */
export interface McpError {
  readonly _tag: string;
  readonly code: string;
  readonly message: string;
}

/** What the MCP endpoint needs of the daemon (plain promises: the handler is node http code). */
export interface McpDeps {
  /** The built agent `name`, if the daemon serves it. */
  readonly agent: (name: string) => ResolvedAgent | undefined;
  /** The principal of an `Authorization` header value; rejects with an {@link McpError} (401). */
  readonly authenticate: (authorization: string | undefined) => Promise<Principal>;
  /** Rejects with an {@link McpError} (404 unknown agent, 403 by its acl). */
  readonly checkAgent: (principal: Principal, agent: string) => Promise<void>;
  /** Run the agent once on `input` (a new session) to its end; abort = cancel the run. */
  readonly chat: (
    principal: Principal,
    agent: string,
    input: unknown,
    signal: AbortSignal,
  ) => Promise<AgentReply>;
  /** Largest request body (413 beyond it; default the SDK's 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Events kept per MCP session for resumption (default 1,000). */
  readonly replayEvents?: number;
  /** The server version announced in `initialize`. */
  readonly version?: string;
}

const STATUS: { readonly [tag: string]: number } = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  TooManyRequests: 429,
  Unavailable: 503,
};

const isMcpError = (e: unknown): e is McpError =>
  typeof e === "object" &&
  e !== null &&
  typeof (e as McpError)._tag === "string" &&
  typeof (e as McpError).code === "string" &&
  typeof (e as McpError).message === "string";

function sendError(res: ServerResponse, e: McpError): void {
  if (res.headersSent) return void res.end();
  res.writeHead(STATUS[e._tag] ?? 500, { "content-type": "application/json" });
  res.end(JSON.stringify({ _tag: e._tag, code: e.code, message: e.message }));
}

/** The events of one MCP session's SSE streams, the last `max` kept, for `Last-Event-ID` replay. */
export class SessionEventStore implements EventStore {
  private next = 0;
  private readonly events: {
    readonly stream: string;
    readonly n: number;
    readonly message: JSONRPCMessage;
  }[] = [];
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const n = ++this.next;
    this.events.push({ stream: streamId, n, message });
    if (this.events.length > this.max) this.events.shift();
    return `${streamId}#${n}`;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const i = eventId.lastIndexOf("#");
    return i > 0 ? eventId.slice(0, i) : undefined;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const i = lastEventId.lastIndexOf("#");
    const stream = lastEventId.slice(0, i);
    const after = Number(lastEventId.slice(i + 1));
    for (const e of this.events)
      if (e.stream === stream && e.n > after) await send(`${e.stream}#${e.n}`, e.message);
    return stream;
  }
}

const isObjectSchema = (s: JsonSchema | undefined): s is JsonSchema => s !== undefined && s.type === "object";

/** The MCP tool of an agent: its name, description and (object) input/output schemas. */
export function agentTool(agent: ResolvedAgent): Tool {
  const input: JsonSchema = isObjectSchema(agent.input)
    ? agent.input
    : {
        type: "object",
        properties: {
          input:
            agent.input ??
            ({ type: "string", description: "The task for the agent, self-contained." } as JsonSchema),
        },
        required: ["input"],
      };
  const output: JsonSchema | undefined =
    agent.output === undefined
      ? undefined
      : isObjectSchema(agent.output)
        ? agent.output
        : { type: "object", properties: { value: agent.output }, required: ["value"] };
  return {
    name: agent.name,
    description: agent.description,
    inputSchema: input as Tool["inputSchema"],
    ...(output ? { outputSchema: output as NonNullable<Tool["outputSchema"]> } : {}),
  };
}

/** The agent's input from the tool's arguments (the inverse of {@link agentTool}'s wrapping). */
const inputOf = (agent: ResolvedAgent, args: { readonly [k: string]: unknown } | undefined): unknown =>
  isObjectSchema(agent.input) ? (args ?? {}) : args?.input;

const errorResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

/** A finished chat as the tool's result. */
function resultOf(agent: ResolvedAgent, reply: AgentReply): CallToolResult {
  const where = `(session ${reply.sessionId}, run ${reply.runId})`;
  if (reply.state !== "completed")
    return errorResult(
      `agent ${agent.name} ${reply.state === "cancelled" ? "was cancelled" : "failed"}${reply.error ? `: ${reply.error.message}` : ""} ${where}`,
    );
  if (agent.output === undefined) return { content: [{ type: "text", text: reply.text ?? "" }] };
  if (reply.value === undefined)
    return errorResult(
      `agent ${agent.name} finished without a value matching its output schema ${where}; its last text: ${reply.text ?? "(none)"}`,
    );
  const structured = isObjectSchema(agent.output)
    ? (reply.value as { [k: string]: unknown })
    : { value: reply.value };
  const text = reply.text?.trim() ? reply.text : JSON.stringify(reply.value);
  return { content: [{ type: "text", text }], structuredContent: structured };
}

interface McpSession {
  readonly agent: string;
  readonly principal: string;
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
}

/** The MCP endpoint over `deps`: one SDK server + transport per MCP session. */
export function makeMcpHandler(deps: McpDeps): McpHandler {
  const sessions = new Map<string, McpSession>();

  const open = (agent: ResolvedAgent, principal: Principal): McpSession => {
    const server = new Server(
      { name: `lash-agent-${agent.name}`, version: deps.version ?? "0.1.0" },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [agentTool(agent)] }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      if (request.params.name !== agent.name)
        return errorResult(
          `no tool named ${JSON.stringify(request.params.name)}: this server has one tool, ${agent.name}`,
        );
      try {
        const reply = await deps.chat(
          principal,
          agent.name,
          inputOf(agent, request.params.arguments),
          extra.signal,
        );
        return resultOf(agent, reply);
      } catch (e) {
        return errorResult(
          isMcpError(e) ? `${e.code}: ${e.message}` : `agent ${agent.name} failed: ${String(e)}`,
        );
      }
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new SessionEventStore(deps.replayEvents ?? 1000),
      ...(deps.maxBodyBytes !== undefined ? { maxRequestBodySize: deps.maxBodyBytes } : {}),
      onsessioninitialized: (id) => {
        sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const session: McpSession = { agent: agent.name, principal: principal.name, server, transport };
    return session;
  };

  const handler = async (req: IncomingMessage, res: ServerResponse, name: string): Promise<void> => {
    try {
      const principal = await deps.authenticate(req.headers.authorization);
      await deps.checkAgent(principal, name);
      const agent = deps.agent(name);
      if (!agent)
        return sendError(res, {
          _tag: "NotFound",
          code: "agent_not_found",
          message: `no agent named ${JSON.stringify(name)} in the build this daemon serves; run \`lash build\` and restart \`lash serve\``,
        });
      const id = req.headers["mcp-session-id"];
      if (typeof id === "string") {
        const session = sessions.get(id);
        if (!session || session.agent !== name)
          return sendError(res, {
            _tag: "NotFound",
            code: "mcp_session_not_found",
            message: `no MCP session ${JSON.stringify(id)} of agent ${JSON.stringify(name)} (it ended, or the daemon restarted): initialize a new session`,
          });
        if (session.principal !== principal.name)
          return sendError(res, {
            _tag: "Forbidden",
            code: "forbidden",
            message: `MCP session ${JSON.stringify(id)} belongs to another principal: use the token that opened it, or initialize your own session`,
          });
        return await session.transport.handleRequest(req, res);
      }
      // no session id: only an `initialize` POST opens one (the transport says so otherwise)
      const session = open(agent, principal);
      await session.server.connect(session.transport);
      await session.transport.handleRequest(req, res);
      if (session.transport.sessionId === undefined || !sessions.has(session.transport.sessionId))
        await session.server.close();
    } catch (e) {
      if (isMcpError(e)) return sendError(res, e);
      sendError(res, {
        _tag: "Internal",
        code: "internal",
        message: `the MCP endpoint failed: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
  };

  return Object.assign(handler, {
    close: async () => {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((s) => s.server.close().catch(() => undefined)));
    },
    sessions: () => sessions.size,
  });
}

/** Run an Effect for a node handler: its typed failure is rejected as is, a defect as an Error. */
const runner =
  <R>(rt: Runtime.Runtime<R>) =>
  <A, E>(effect: Effect.Effect<A, E, R>, signal?: AbortSignal): Promise<A> =>
    Runtime.runPromiseExit(rt)(effect, signal ? { signal } : undefined).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value;
      const failure = Cause.failureOption(exit.cause);
      if (Option.isSome(failure)) throw failure.value;
      throw Cause.squash(exit.cause);
    });

/**
 * The daemon's MCP endpoint over its services (auth, access, the build, runs). Build it in
 * the daemon's runtime (`yield* mcpHandler`), route `/v1/agents/<name>/mcp` to it, and
 * `await handler.close()` when the daemon stops (its MCP sessions end).
 */
export const mcpHandler: Effect.Effect<McpHandler, never, Host | Access | RunManager | Settings | StateDb> =
  Effect.gen(function* () {
    const rt = yield* Effect.runtime<Host | Access | RunManager | Settings | StateDb>();
    const host = yield* Host;
    const settings = yield* Settings;
    const run = runner(rt);
    return makeMcpHandler({
      agent: (name) => host.manifest?.agents.find((a) => a.name === name),
      authenticate: (authorization) => run(authenticate(authorization)),
      checkAgent: (principal, agent) =>
        run(Effect.flatMap(Access, (access) => access.checkAgent(principal, agent, "execute"))),
      chat: (principal, agent, input, signal) =>
        run(
          Effect.gen(function* () {
            const runs = yield* RunManager;
            const started = yield* startAgentRun(principal, agent, { input });
            // the MCP client cancelled the call: cancel the run too
            const done = yield* runs
              .wait(started.id)
              .pipe(Effect.onInterrupt(() => Effect.ignore(runs.cancel(started.id))));
            return replyOf(yield* agentOf(agent), done);
          }),
          signal,
        ),
      maxBodyBytes: settings.maxBodyBytes,
    });
  });
