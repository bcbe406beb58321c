export {
  type ApplyPatchArgs,
  type ApplyPatchValue,
  applyPatchTool,
  type PatchAction,
  type PatchedFile,
  parsePatch,
} from "./apply-patch.ts";
export { applyEdits, type EditArgs, type EditValue, editTool } from "./edit.ts";
export { type LlmQueryArgs, type LlmQueryOptions, llmQueryTool } from "./llm-query.ts";
export {
  type PlanItem,
  type PlanStatus,
  type PlanValue,
  type UpdatePlanArgs,
  updatePlanTool,
} from "./plan.ts";
export {
  TOOL_NAMES,
  type ToolName,
  type ToolsPlugin,
  type ToolsPluginOptions,
  toolsPlugin,
} from "./plugin.ts";
export { type ReadArtifactArgs, type ReadArtifactLimits, readArtifactTool } from "./read-artifact.ts";
export { type ReadFileArgs, type ReadFileLimits, type ReadFileValue, readFileTool } from "./read-file.ts";
export {
  type GlobArgs,
  type GlobValue,
  type GrepArgs,
  type GrepMatch,
  type GrepValue,
  globTool,
  grepTool,
  type SearchLimits,
} from "./search.ts";
export {
  type ShellArgs,
  type ShellOptions,
  type ShellProgress,
  type ShellSandbox,
  type ShellValue,
  shellTool,
} from "./shell.ts";
export { imageMediaType, isBinary, unifiedDiff } from "./text.ts";
export { ALWAYS_SKIPPED, type WalkEntry, walkFiles } from "./walk.ts";
export {
  type Access,
  asWorkspace,
  DEFAULT_DENY_WRITE,
  type ResolvedPath,
  Workspace,
  type WorkspaceOptions,
} from "./workspace.ts";
export { type WriteFileArgs, type WriteFileValue, writeFileTool } from "./write-file.ts";
