// The plugin shapes live in tool.ts (tools and plugins refer to each other); this module keeps
// their historical import path.
export type {
  BeforeToolCallResult,
  BeforeTurnResult,
  HookContext,
  Plugin,
  PluginHooks,
  ProjectedResult,
  ToolCallInfo,
} from "./tool.ts";
