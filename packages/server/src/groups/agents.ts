// Handlers of `AgentsApi`: the built agents the daemon serves (`Host.manifest`), and a chat
// with one — the same path for `POST /v1/agents/:name/chat`, `…/chat/stream` and the MCP
// endpoint (`mcp.ts`):
// 1. `Access.checkAgent(…, "execute")` (404 unknown agent / no build, 403 by its `acl`);
// 2. the input checked like `lash run` checks it (`checkInput`): 400 naming the problem;
// 3. a new session of the agent (`Host.agentSession`), or `sessionId`: one of the caller's
//    sessions of that agent;
// 4. a run (`RunManager.start`), then its result (`wait`) or its event stream.
import { HttpApiBuilder } from "@effect/platform";
import { checkInput, inputText, type ResolvedAgent, RunRequestError } from "@lash/agents";
import { LashRuntime, SessionStore } from "@lash/core";
import { validateJson } from "@lash/core/internal";
import { extractJson } from "@lash/subagents";
import { Effect } from "effect";
import {
  AgentInfo,
  AgentReply,
  BadRequest,
  CurrentPrincipal,
  type Forbidden,
  LashApi,
  NotFound,
  type Principal,
  type Run,
  type TooManyRequests,
  Unavailable,
} from "../api.ts";
import { Access, Host, RunManager } from "../services.ts";
import { core, agentOf as sessionAgent } from "./common.ts";
import { eventsResponse } from "./sessions.ts";

/** Durable-state keys of a daemon session (the same as access.ts reads). */
const OWNER_KEY = "serve.owner";

/** What a chat may fail with (the errors of `AgentsApi.chat`). */
export type ChatError = BadRequest | NotFound | Forbidden | TooManyRequests | Unavailable;

/** The agent `name` of the build the daemon serves: 404 naming `lash build` when it has none such. */
export const agentOf = (name: string) =>
  Effect.flatMap(Host, (host) => {
    const agent = host.manifest?.agents.find((a) => a.name === name);
    if (agent) return Effect.succeed(agent);
    const names = host.manifest?.agents.map((a) => a.name) ?? [];
    return Effect.fail(
      new NotFound({
        code: "agent_not_found",
        message: host.manifest
          ? `no agent named ${JSON.stringify(name)} in the build this daemon serves (agents: ${names.join(", ") || "none"}); define it (an *.agent.md or agents/*.yaml), run \`lash build\` and restart \`lash serve\``
          : `no agent named ${JSON.stringify(name)}: the daemon's workspace has no build; define agents (*.agent.md or agents/*.yaml), run \`lash build\` there and restart \`lash serve\``,
      }),
    );
  });

/** The agent's input, checked as `lash run` checks it: 400 naming the schema problem and the fix. */
export const checkAgentInput = (agent: ResolvedAgent, input: unknown): Effect.Effect<unknown, BadRequest> =>
  Effect.suspend(() => {
    const raw =
      input === undefined || input === null
        ? undefined
        : typeof input === "string"
          ? input
          : JSON.stringify(input);
    if (raw === undefined || raw.trim() === "")
      return Effect.fail(
        new BadRequest({
          code: "input_required",
          message:
            agent.input === undefined
              ? `agent ${JSON.stringify(agent.name)} needs an input: send {"input": "<task>"}`
              : `agent ${JSON.stringify(agent.name)} needs an input matching its input schema: send {"input": <JSON value>} (GET /v1/agents shows the schema)`,
        }),
      );
    try {
      return Effect.succeed(checkInput(agent, raw));
    } catch (e) {
      if (!(e instanceof RunRequestError)) return Effect.die(e);
      return Effect.fail(
        new BadRequest({
          code: "invalid_input",
          message: `${e.message}\nSend an input that matches it (GET /v1/agents shows the schema).`,
        }),
      );
    }
  });

/**
 * A new session of built agent `name` owned by `principal`: the host's agent session (model,
 * prompt, tools, typed output, skills) plus the agent's and the principal's policy layers.
 * `title`: the session's title (a loop's firing key).
 */
export const createAgentSession = (principal: Principal, name: string, title?: string) =>
  Effect.gen(function* () {
    const host = yield* Host;
    const access = yield* Access;
    if (!host.agentSession)
      return yield* Effect.fail(
        new Unavailable({
          code: "agents_unavailable",
          message:
            "this daemon cannot run built agents (its host gives no agent sessions); start it with `lash serve` in the workspace that has the build",
        }),
      );
    const spec = yield* Effect.try({
      try: () => host.agentSession!(name),
      catch: (e) =>
        new Unavailable({
          code: "agent_session_failed",
          message: `cannot open a session of agent ${JSON.stringify(name)}: ${e instanceof Error ? e.message : String(e)}`,
        }),
    });
    const session = yield* Effect.tryPromise({
      try: () =>
        host.runtime.runPromise(
          Effect.flatMap(LashRuntime, (rt) =>
            rt.createSession({
              ...spec.create,
              ...(title !== undefined ? { title } : {}),
              ...(spec.plugins.length > 0 ? { plugins: spec.plugins } : {}),
              state: { ...spec.create.state, [OWNER_KEY]: principal.name },
            }),
          ),
        ),
      catch: (e) =>
        new Unavailable({
          code: "session_create_failed",
          message: `cannot create a session of agent ${JSON.stringify(name)}: ${e instanceof Error ? e.message : String(e)}; check the daemon's store and model settings`,
        }),
    });
    host.setSessionLayers?.(session.id, [...spec.policyLayers, ...access.principalLayers(principal)]);
    return session.id;
  });

/** The session a chat runs in: `sessionId` (the caller's, of this agent) or a new one. */
const chatSession = (principal: Principal, name: string, sessionId: string | undefined) =>
  Effect.gen(function* () {
    if (sessionId === undefined) return yield* createAgentSession(principal, name);
    const access = yield* Access;
    yield* access.checkSession(principal, sessionId);
    const record = yield* core(Effect.flatMap(SessionStore, (store) => store.getSession(sessionId)));
    const agent = sessionAgent(record);
    if (agent !== name)
      return yield* Effect.fail(
        new BadRequest({
          code: "session_agent_mismatch",
          message: `session ${JSON.stringify(sessionId)} ${agent !== undefined ? `runs agent ${JSON.stringify(agent)}` : "runs no agent"}, not ${JSON.stringify(name)}: give a session of ${JSON.stringify(name)} (its chat replies name it) or leave sessionId out for a new one`,
        }),
      );
    return sessionId;
  });

/** Steps 1–4 up to the started run: check, session, `RunManager.start`. */
export const startAgentRun = (
  principal: Principal,
  name: string,
  body: { readonly input: unknown; readonly sessionId?: string | undefined },
): Effect.Effect<Run, ChatError, Host | Access | RunManager> =>
  Effect.gen(function* () {
    const access = yield* Access;
    yield* access.checkAgent(principal, name, "execute");
    const agent = yield* agentOf(name);
    const input = yield* checkAgentInput(agent, body.input);
    const sessionId = yield* chatSession(principal, name, body.sessionId);
    const runs = yield* RunManager;
    return yield* runs.start({ sessionId, text: inputText(input), principal });
  });

/**
 * The typed value of a finished run of `agent`: the turn's final value, else (a standard
 * agent answers with the JSON its output schema asks for) the JSON of its text when it
 * matches the schema — as `lash run`'s entry functions read it.
 */
export const typedValue = (agent: ResolvedAgent, run: Run): unknown => {
  if (run.value !== undefined) return run.value;
  if (agent.output === undefined || run.state !== "completed" || run.text === undefined) return undefined;
  const found = extractJson(run.text);
  return found.found && validateJson(agent.output, found.value).length === 0 ? found.value : undefined;
};

/** A finished run as the chat reply: its text, and the typed value when the agent has an output. */
export const replyOf = (agent: ResolvedAgent, run: Run): AgentReply => {
  const value = typedValue(agent, run);
  return new AgentReply({
    sessionId: run.sessionId,
    runId: run.id,
    state: run.state,
    ...(run.text !== undefined ? { text: run.text } : {}),
    ...(value !== undefined ? { value } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
  });
};

/** A chat to the end: start the agent's run and wait for it. */
export const chatAgent = (
  principal: Principal,
  name: string,
  body: { readonly input: unknown; readonly sessionId?: string | undefined },
): Effect.Effect<AgentReply, ChatError, Host | Access | RunManager> =>
  Effect.gen(function* () {
    const run = yield* startAgentRun(principal, name, body);
    const runs = yield* RunManager;
    const done = yield* runs.wait(run.id);
    return replyOf(yield* agentOf(name), done);
  });

/** The agents `principal` may execute or read (an agent its `acl` hides from it is left out). */
export const listAgents = (principal: Principal) =>
  Effect.gen(function* () {
    const host = yield* Host;
    const access = yield* Access;
    const manifest = host.manifest;
    if (!manifest) return [];
    const out: AgentInfo[] = [];
    for (const agent of manifest.agents) {
      const may = (need: "execute" | "read") =>
        access.checkAgent(principal, agent.name, need).pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false),
        );
      const grant = (yield* may("execute")) ? "execute" : (yield* may("read")) ? "read" : undefined;
      if (grant === undefined) continue;
      const model = agent.model ?? manifest.project.defaults?.model;
      out.push(
        new AgentInfo({
          name: agent.name,
          description: agent.description,
          ...(model !== undefined ? { model } : {}),
          mode: agent.mode,
          ...(agent.input !== undefined ? { input: agent.input } : {}),
          ...(agent.output !== undefined ? { output: agent.output } : {}),
          access: grant,
        }),
      );
    }
    return out;
  });

export const AgentsGroupLive = HttpApiBuilder.group(LashApi, "agents", (handlers) =>
  handlers
    .handle("list", () =>
      Effect.flatMap(CurrentPrincipal, (principal) =>
        Effect.map(listAgents(principal), (agents) => ({ agents })),
      ),
    )
    .handle("chat", ({ path, payload }) =>
      Effect.flatMap(CurrentPrincipal, (principal) => chatAgent(principal, path.name, payload)),
    )
    .handle("chatStream", ({ path, payload }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const run = yield* startAgentRun(principal, path.name, payload);
        // every event of this run (its stream ends after `runFinished`)
        return yield* eventsResponse(run.sessionId, run.id, {}, 0);
      }),
    ),
);
