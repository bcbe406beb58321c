import type { ToolDefinition } from "@lash/core";
import { applyPatchTool } from "./apply-patch.ts";
import { editTool } from "./edit.ts";
import { type LlmQueryOptions, llmQueryTool } from "./llm-query.ts";
import { updatePlanTool } from "./plan.ts";
import { readArtifactTool } from "./read-artifact.ts";
import { type ReadFileLimits, readFileTool } from "./read-file.ts";
import { globTool, grepTool, type SearchLimits } from "./search.ts";
import { type ShellOptions, shellTool } from "./shell.ts";
import { Workspace } from "./workspace.ts";
import { writeFileTool } from "./write-file.ts";

export const TOOL_NAMES = [
  "read_file",
  "write_file",
  "edit",
  "apply_patch",
  "glob",
  "grep",
  "shell",
  "update_plan",
  "read_artifact",
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolsPluginOptions {
  /** Workspace root every path is jailed to. */
  readonly root: string;
  /** Gitignore-style patterns; when given, only matching paths are readable or writable. */
  readonly allow?: readonly string[];
  /** Gitignore-style patterns that can be neither read nor written. */
  readonly deny?: readonly string[];
  /** Gitignore-style patterns that can be read but not written. Default `[".git/"]`. */
  readonly denyWrite?: readonly string[];
  /** Let the file tools open files with more than one name (hard links). Default false. */
  readonly allowHardLinks?: boolean;
  /** Only these tools (by name). Default: all. */
  readonly tools?: readonly string[];
  readonly shell?: ShellOptions;
  readonly read?: ReadFileLimits;
  readonly glob?: SearchLimits;
  readonly grep?: SearchLimits;
  /**
   * Add the `llm_query` tool (a focused, tool-less sub-query to the model with an optional
   * output type): `true`, or its options. Default off. With it, an RLM cell's `llm.query`
   * runs through the tool.
   */
  readonly llmQuery?: boolean | LlmQueryOptions;
}

export interface ToolsPlugin {
  readonly name: "tools";
  readonly tools: readonly ToolDefinition[];
  readonly workspace: Workspace;
}

/** The built-in tools as one plugin value (`{ name: "tools", tools }`). */
export function toolsPlugin(options: ToolsPluginOptions): ToolsPlugin {
  const workspace = new Workspace({
    root: options.root,
    ...(options.allow === undefined ? {} : { allow: options.allow }),
    ...(options.deny === undefined ? {} : { deny: options.deny }),
    ...(options.denyWrite === undefined ? {} : { denyWrite: options.denyWrite }),
    ...(options.allowHardLinks === undefined ? {} : { allowHardLinks: options.allowHardLinks }),
  });
  const wanted = options.tools;
  if (wanted !== undefined) {
    const unknown = wanted.filter((n) => !(TOOL_NAMES as readonly string[]).includes(n));
    if (unknown.length > 0) {
      throw new Error(
        `toolsPlugin: unknown tool name(s) ${unknown.join(", ")}; known: ${TOOL_NAMES.join(", ")}.`,
      );
    }
  }
  const make: Record<ToolName, () => ToolDefinition> = {
    read_file: () => readFileTool(workspace, options.read) as ToolDefinition,
    write_file: () => writeFileTool(workspace) as ToolDefinition,
    edit: () => editTool(workspace) as ToolDefinition,
    apply_patch: () => applyPatchTool(workspace) as ToolDefinition,
    glob: () => globTool(workspace, options.glob) as ToolDefinition,
    grep: () => grepTool(workspace, options.grep) as ToolDefinition,
    shell: () => shellTool(workspace, options.shell) as ToolDefinition,
    update_plan: () => updatePlanTool() as ToolDefinition,
    read_artifact: () => readArtifactTool() as ToolDefinition,
  };
  const tools = TOOL_NAMES.filter((n) => wanted === undefined || wanted.includes(n)).map((n) => make[n]());
  if (options.llmQuery)
    tools.push(llmQueryTool(options.llmQuery === true ? {} : options.llmQuery) as ToolDefinition);
  return { name: "tools", tools, workspace };
}
