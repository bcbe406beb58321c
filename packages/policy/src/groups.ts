// Tool groups and profiles: the names a policy can use besides tool names and globs.
import type { ToolDefinition, ToolEffectKind } from "@lash/core";
import picomatch from "picomatch";
import type { PolicyLayer, ProfileName } from "./schema.ts";

/** What a group or pattern is matched against: a tool's name, and what is known of it. */
export interface ToolFacts {
  readonly name: string;
  readonly effects: readonly ToolEffectKind[];
  /** The definition, when the tool is known (family, binding …). */
  readonly tool?: ToolDefinition;
}

/** The built-in file tools that only read. */
export const FS_READ_TOOLS: readonly string[] = ["read_file", "glob", "grep", "list", "search"];
/** The built-in file tools that write. */
export const FS_WRITE_TOOLS: readonly string[] = ["write_file", "edit", "apply_patch"];
/** Shell and process tools. */
export const RUNTIME_TOOLS: readonly string[] = ["shell", "process"];
export const PLAN_TOOLS: readonly string[] = ["update_plan"];
export const AGENT_TOOLS: readonly string[] = ["spawn_agent"];
/**
 * Read-only tools lash itself adds to help the model use what it already has: the rest of a
 * cut tool result, a skill's body and files. Every profile allows them (a layer can still deny them).
 */
export const READ_CONTROL_TOOLS: readonly string[] = [
  "read_output",
  "read_artifact",
  "load_skill",
  "read_skill_file",
];

/** The MCP tool-name part of a server (as @lash/plugin-mcp writes it: `mcp__<server>__<tool>`). */
const mcpServerPart = (server: string): string => server.replace(/[^a-zA-Z0-9_-]/g, "_") || "_";

const isMcp = (t: ToolFacts): boolean => t.name.startsWith("mcp__") || t.tool?.family === "mcp";

const EFFECT_GROUPS: readonly ToolEffectKind[] = ["read", "write", "exec", "network", "secret"];

/** The groups lash knows, with what each means (for `--help`, errors and explain). */
export const GROUPS: readonly { readonly name: string; readonly description: string }[] = [
  { name: "group:fs", description: "the file tools (group:fs:read + group:fs:write)" },
  {
    name: "group:fs:read",
    description: FS_READ_TOOLS.filter((t) => t !== "list" && t !== "search").join(", "),
  },
  { name: "group:fs:write", description: FS_WRITE_TOOLS.join(", ") },
  { name: "group:runtime", description: "shell and process tools" },
  { name: "group:plan", description: PLAN_TOOLS.join(", ") },
  { name: "group:agents", description: "spawn_agent and agents exposed as tools" },
  { name: "group:mcp", description: "every MCP tool" },
  { name: "group:mcp:<server>", description: "the tools of one MCP server" },
  { name: "group:read", description: "tools whose effects include read" },
  { name: "group:write", description: "tools whose effects include write" },
  { name: "group:exec", description: "tools whose effects include exec" },
  { name: "group:network", description: "tools whose effects include network" },
  { name: "group:secret", description: "tools whose effects include secret" },
  { name: "group:readonly", description: "tools whose effects are only read" },
];

/** Does the group `group` (with its `group:` prefix) contain this tool? `undefined`: no such group. */
export function inGroup(group: string, t: ToolFacts): boolean | undefined {
  const g = group.slice("group:".length);
  switch (g) {
    case "fs":
      return FS_READ_TOOLS.includes(t.name) || FS_WRITE_TOOLS.includes(t.name);
    case "fs:read":
      return FS_READ_TOOLS.includes(t.name);
    case "fs:write":
      return FS_WRITE_TOOLS.includes(t.name);
    case "runtime":
      return RUNTIME_TOOLS.includes(t.name) || (t.tool?.family === "shell" && !isMcp(t));
    case "plan":
      return PLAN_TOOLS.includes(t.name);
    case "agents":
      return AGENT_TOOLS.includes(t.name) || t.tool?.family === "agent";
    case "mcp":
      return isMcp(t);
    case "readonly":
      return t.effects.length > 0 && t.effects.every((e) => e === "read");
  }
  if ((EFFECT_GROUPS as readonly string[]).includes(g)) return t.effects.includes(g as ToolEffectKind);
  if (g.startsWith("mcp:") && g.length > 4) {
    const server = g.slice(4);
    return isMcp(t) && t.name.startsWith(`mcp__${mcpServerPart(server)}__`);
  }
  return undefined;
}

/** Is this a group name lash knows? */
export function isKnownGroup(group: string): boolean {
  return inGroup(group, { name: "", effects: [] }) !== undefined;
}

const globCache = new Map<string, (s: string) => boolean>();
const globOf = (pattern: string): ((s: string) => boolean) => {
  let m = globCache.get(pattern);
  if (!m) {
    m = picomatch(pattern, { dot: true });
    globCache.set(pattern, m);
  }
  return m;
};

/** Does one entry of `allow` / `deny` / `tools` (a name, a glob or a group) cover this tool? */
export function matchesPattern(pattern: string, t: ToolFacts): boolean {
  if (pattern.startsWith("group:")) return inGroup(pattern, t) === true;
  if (pattern === t.name) return true;
  if (!/[*?[\]{}!()]/.test(pattern)) return false;
  return globOf(pattern)(t.name);
}

/** The profiles as layers. */
export const PROFILE_LAYERS: { readonly [P in ProfileName]: PolicyLayer } = {
  minimal: { allow: ["group:fs:read", "group:plan", ...READ_CONTROL_TOOLS] },
  readonly: { allow: ["group:readonly", ...READ_CONTROL_TOOLS] },
  coding: {
    allow: ["group:fs", "group:runtime", "group:plan", "group:agents", ...READ_CONTROL_TOOLS],
    tools: { "group:exec": { approval: "risk" }, "group:readonly": { approval: "never" } },
  },
  full: {},
};

export const PROFILE_DESCRIPTIONS: { readonly [P in ProfileName]: string } = {
  minimal:
    "read-only file tools and the plan (and read_output, read_artifact, load_skill, read_skill_file, as every profile)",
  readonly:
    "every tool whose effects are only read (and read_output, read_artifact, load_skill, read_skill_file)",
  coding:
    "file tools, shell, plan and agents (and read_output, read_artifact, load_skill, read_skill_file); approval risk for exec tools, never for read-only ones",
  full: "every tool",
};
