// The runner's plain part: from a manifest and an agent's name, what its session is (system
// prompt, model, mode, tool names, max turns, output schema), its callable agents as
// `@lash/subagents` agent tools (a call opens a child session through `spawn_agent`'s
// machinery), and the check of a run's input against the agent's `input` schema.
import type { JsonSchema } from "@lash/core";
import { validateJson } from "@lash/core/internal";
import { type AgentTool, type Capability, childPlugin, defineCapability } from "@lash/subagents";
import type { Manifest, ResolvedAgent, ResolvedTool } from "../manifest.ts";
import { LOAD_SKILL, READ_SKILL_FILE } from "../skills/plugin.ts";

/** A problem with `lash run`'s request: the message names it and the fix. */
export class RunRequestError extends Error {
  override readonly name = "RunRequestError";
}

/** The agent `name` of the manifest, or an error listing the agents there are. */
export function findAgent(manifest: Manifest, name: string): ResolvedAgent {
  const agent = manifest.agents.find((a) => a.name === name);
  if (agent) return agent;
  const names = manifest.agents.map((a) => a.name);
  throw new RunRequestError(
    `no agent named \`${name}\` in build ${manifest.hash.slice(0, 12)}` +
      (names.length > 0 ? ` (agents: ${names.join(", ")})` : " (it has no agents)") +
      "; run `lash build` after adding or renaming an agent",
  );
}

/** Session tool names of a manifest tool (`mcp:github/search` → `mcp__github__search`, `mcp:github` → `mcp__github__*`). */
export function sessionToolNames(tool: ResolvedTool): readonly string[] {
  if (tool.kind === "builtin" || tool.kind === "agent") return [tool.name];
  const ref = tool.name.replace(/^mcp:/, "");
  const [server, name] = ref.split("/", 2);
  return [name !== undefined ? `mcp__${server}__${name}` : `mcp__${server}__*`];
}

/** The agents `agent` may call (its tools of kind `agent`), resolved in the manifest. */
export function calledAgents(manifest: Manifest, agent: ResolvedAgent): readonly ResolvedAgent[] {
  return agent.tools.filter((t) => t.kind === "agent").map((t) => findAgent(manifest, t.name));
}

/** Every agent reachable from `agent` through agent tools (itself excluded, each once). */
export function reachableAgents(manifest: Manifest, agent: ResolvedAgent): readonly ResolvedAgent[] {
  const seen = new Map<string, ResolvedAgent>();
  const visit = (a: ResolvedAgent) => {
    for (const c of calledAgents(manifest, a)) {
      if (c.name === agent.name || seen.has(c.name)) continue;
      seen.set(c.name, c);
      visit(c);
    }
  };
  visit(agent);
  return [...seen.values()];
}

/** The model of an agent: its own, else the project default, else `fallback` (the CLI's). */
export function agentModel(manifest: Manifest, agent: ResolvedAgent, fallback?: string): string | undefined {
  return agent.model ?? manifest.project.defaults?.model ?? fallback;
}

/** The child capability of an agent called as a tool: its model, mode, prompt, turns, tools and policy. */
export function agentCapability(manifest: Manifest, agent: ResolvedAgent): Capability {
  const model = agentModel(manifest, agent);
  const names = agent.tools.flatMap(sessionToolNames);
  return defineCapability({
    name: agent.name,
    description: agent.description,
    ...(model !== undefined ? { model } : {}),
    mode: agent.mode,
    systemPrompt: agent.instructions,
    ...(agent.maxTurns !== undefined ? { maxTurns: agent.maxTurns } : {}),
    spawn: agent.tools.some((t) => t.kind === "agent"),
    ...(agent.policy !== undefined ? { policy: agent.policy as { readonly [key: string]: unknown } } : {}),
    tools: ({ parentTools }) => parentTools.map((t) => t.name).filter((n) => matchesAny(names, n)),
  });
}

/** `@lash/subagents` agent tools for every agent reachable from `agent` (each narrowed per call to its own tools). */
export function agentToolsFor(manifest: Manifest, agent: ResolvedAgent): readonly AgentTool[] {
  return reachableAgents(manifest, agent).map((a) => ({
    name: a.name,
    description: a.description,
    ...(a.input !== undefined ? { inputSchema: objectInput(a.input) } : {}),
    ...(a.output !== undefined ? { output: a.output } : {}),
    capability: agentCapability(manifest, a),
  }));
}

/** A tool's input must be an object: a non-object `input` schema is wrapped as `{ input }`. */
function objectInput(schema: JsonSchema): JsonSchema {
  return schema.type === "object"
    ? schema
    : { type: "object", properties: { input: schema }, required: ["input"], additionalProperties: false };
}

function matchesAny(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : p === name));
}

/** What a root run of an agent opens: the session's settings and its per-session plugins. */
export interface AgentSessionPlan {
  readonly agent: ResolvedAgent;
  readonly model?: string;
  readonly mode: "standard" | "rlm";
  readonly systemPrompt: string;
  /** Session tool names: built-ins, MCP tools (a trailing `*` for a whole server) and agent tools. */
  readonly tools: readonly string[];
  readonly maxTurns?: number;
  readonly output?: JsonSchema;
  /** The agents it may call, as subagent agent tools. */
  readonly agentTools: readonly AgentTool[];
}

/** The skills tools, when the agent has skills: its instructions end with their catalog. */
function skillTools(manifest: Manifest, agent: ResolvedAgent): string[] {
  const skills = agent.skills ?? manifest.skills.map((s) => s.name);
  return skills.length > 0 ? [LOAD_SKILL, READ_SKILL_FILE] : [];
}

export function planAgentSession(manifest: Manifest, agent: ResolvedAgent): AgentSessionPlan {
  const model = agentModel(manifest, agent);
  return {
    agent,
    ...(model !== undefined ? { model } : {}),
    mode: agent.mode,
    systemPrompt: agent.instructions,
    tools: [...agent.tools.flatMap(sessionToolNames), ...skillTools(manifest, agent)],
    ...(agent.maxTurns !== undefined ? { maxTurns: agent.maxTurns } : {}),
    ...(agent.output !== undefined ? { output: agent.output } : {}),
    agentTools: agentToolsFor(manifest, agent),
  };
}

/**
 * The per-session plugin of a root run with a typed output: the subagent child plugin
 * (`submit_result` / structured output for standard sessions, `finish <value>` for RLM), the one
 * typed-output machinery lash has.
 */
export function outputPlugin(plan: AgentSessionPlan) {
  if (plan.output === undefined) return undefined;
  return childPlugin({
    capability: plan.agent.name,
    depth: 0,
    maxDepth: 0,
    mode: plan.mode,
    schema: plan.output,
  });
}

/** Parse and check a run's input: JSON when it parses, else the text; checked against `input`. */
export function checkInput(agent: ResolvedAgent, raw: string | undefined): unknown {
  let value: unknown = raw;
  if (raw !== undefined) {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  const schema = agent.input;
  if (schema === undefined) {
    if (raw === undefined || raw.trim() === "")
      throw new RunRequestError(`agent \`${agent.name}\` needs an input: lash run ${agent.name} "<task>"`);
    return value;
  }
  if (value === undefined)
    throw new RunRequestError(
      `agent \`${agent.name}\` needs an input matching its input schema: lash run ${agent.name} '<json>' or --input-json <file>`,
    );
  const problems = validateJson(schema, value);
  if (problems.length > 0)
    throw new RunRequestError(
      `the input does not match agent \`${agent.name}\`'s input schema (${agent.source}):\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
  return value;
}

/** The first user message of a run: a string input as is, other input as JSON. */
export function inputText(value: unknown): string {
  return typeof value === "string"
    ? value
    : `Input:\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;
}
