// `lash serve`'s agents: the build the daemon serves (`readManifest(cwd)`) and the session a
// built agent runs in, made the way `lash run <agent>` makes it (run-agent.ts), so one agent
// behaves the same from the CLI and over HTTP/MCP.
//
// What differs from `lash run`, because one daemon context serves every agent:
// 1. Agent tools (agents calling agents) are per context: the context gets the agent tools of
//    every agent of the build (each session's tool allow-list shows it only its own).
// 2. Skills are per context too: the context gets none (`skillsOnly: []`) and each agent
//    session gets its own skills plugin (the spec's `skills`, no catalog: the build appended it).
import type { AgentSessionPlan, Manifest, ResolvedAgent } from "@lash/agents";
import {
  defaultSkillRoots,
  discoverSkills,
  findAgent,
  LOAD_SKILL,
  outputPlugin,
  planAgentSession,
  projectFileSkillRoots,
  readManifest,
  type Skill,
  skillsPlugin,
} from "@lash/agents";
import type { CreateSessionOptions, Plugin } from "@lash/core";
import type { NamedLayer } from "@lash/policy";
import type { AgentTool } from "@lash/subagents";
import { SESSION_LAYERS_KEY } from "./policy.ts";
import { runLayers } from "./run-agent.ts";

/** The durable-state key naming the built agent a daemon session runs (read by the server's access checks). */
export const SERVE_AGENT_KEY = "serve.agent";

/** An agent session's settings: `@lash/server`'s `AgentSessionSpec` (same shape). */
export interface AgentSessionSettings {
  readonly create: CreateSessionOptions;
  readonly plugins: readonly Plugin[];
  readonly policyLayers: readonly NamedLayer[];
  /** The spec's `maxTurns` (a turn option, not a session one). */
  readonly maxTurns?: number;
}

export interface ServeAgentsOptions {
  /** The workspace the daemon serves (its `.lash/build`, skills and tools' root). */
  readonly cwd: string;
  /** `$LASH_HOME` (its skills are found too). */
  readonly home: string;
  /** The model of an agent whose spec and project name none (the daemon's `--model`). */
  readonly defaultModel: string;
  /** Extra skill roots (config `skillRoots`). */
  readonly skillRoots?: readonly string[];
  /** The build to serve (default: the newest in `cwd`, none when it has no build). */
  readonly manifest?: Manifest;
}

export interface ServeAgents {
  /** The build served (`ServeHost.manifest`); absent: `GET /v1/agents` is empty. */
  readonly manifest?: Manifest;
  /** Spread these into `createCliContext`'s options (agent tools of every agent; skills per session). */
  readonly contextOptions: {
    readonly agentTools?: readonly AgentTool[];
    readonly skillsOnly?: readonly string[];
  };
  /** `ServeHost.agentSession` (absent without a build). Throws `RunRequestError` for an unknown agent. */
  readonly agentSession?: (name: string) => AgentSessionSettings;
}

/** The daemon's agents: read the build once, find the skills once. */
export function serveAgents(options: ServeAgentsOptions): ServeAgents {
  const manifest = options.manifest ?? readManifest(options.cwd);
  if (!manifest || manifest.agents.length === 0)
    return { ...(manifest ? { manifest } : {}), contextOptions: {} };
  const extra = [...(options.skillRoots ?? []), ...projectFileSkillRoots(options.cwd)];
  const skills = discoverSkills(defaultSkillRoots(options.cwd, options.home, extra)).skills;
  const tools = new Map<string, AgentTool>();
  for (const a of manifest.agents)
    for (const t of planAgentSession(manifest, a).agentTools) tools.set(t.name, t);
  return {
    manifest,
    contextOptions: { agentTools: [...tools.values()], skillsOnly: [] },
    agentSession: (name) => agentSessionFor(manifest, name, { ...options, skills }),
  };
}

/**
 * The session of built agent `name`, as `lash run <name>` opens it: the planned model, mode,
 * system prompt (instructions + skills catalog) and tools (incl. `load_skill`/`read_skill_file`
 * and the agents it calls), the typed-output plugin, its skills, and the policy layers
 * `project file` and `agent:<name>`. Its state records `serve.agent: <name>`.
 */
export function agentSessionFor(
  manifest: Manifest,
  name: string,
  where: { readonly cwd: string; readonly defaultModel: string; readonly skills?: readonly Skill[] },
): AgentSessionSettings {
  const agent = findAgent(manifest, name);
  const plan = planAgentSession(manifest, agent);
  const plugins: Plugin[] = [];
  const output = outputPlugin(plan);
  if (output) plugins.push(output);
  const skills = agentSkills(plan, agent, where.skills ?? []);
  if (skills) plugins.push(skills);
  const policyLayers = runLayers(manifest, agent);
  return {
    create: {
      model: plan.model ?? where.defaultModel,
      mode: plan.mode,
      cwd: where.cwd,
      systemPrompt: plan.systemPrompt,
      tools: [...plan.tools],
      // the agent's policy layers live in the session's state: the CLI governance's plugin
      // restores them whenever the session is opened (also after a daemon restart)
      state: {
        [SERVE_AGENT_KEY]: agent.name,
        ...(policyLayers.length > 0 ? { [SESSION_LAYERS_KEY]: policyLayers } : {}),
      },
    },
    plugins,
    policyLayers,
    ...(plan.maxTurns !== undefined ? { maxTurns: plan.maxTurns } : {}),
  };
}

/** The agent's skills plugin (its spec's `skills`; the catalog is already in its instructions). */
function agentSkills(
  plan: AgentSessionPlan,
  agent: ResolvedAgent,
  skills: readonly Skill[],
): Plugin | undefined {
  if (skills.length === 0 || !plan.tools.includes(LOAD_SKILL)) return undefined;
  return skillsPlugin({ skills, ...(agent.skills ? { only: agent.skills } : {}), catalog: false });
}
