export {
  type Capability,
  type CapabilityContext,
  type CapabilityOptions,
  CapabilityRegistry,
  defineCapability,
  exploreCapability,
  peerCapability,
} from "./capabilities.ts";
export { CHILD_ONLY_TOOLS, type ChildInfo, childPlugin, SUBMIT_ERROR, SUBMIT_RESULT } from "./child.ts";
export { extractJson, type OutputSpec, outputSchema, shorthandType } from "./output.ts";
export {
  type AgentTool,
  agentToolOperation,
  agentToolTask,
  type ChildFinishedData,
  type ChildStartedData,
  cancelChild,
  DEFAULT_MAX_DEPTH,
  interpretOutcome,
  outcomeFromTranscript,
  PLUGIN_NAME,
  rlmChildState,
  runningChildren,
  SPAWN_AGENT,
  SPAWN_STATE_KEY,
  type SpawnArgs,
  type SpawnDetails,
  type SpawnRecord,
  type SubagentsOptions,
  subagentsPlugin,
} from "./plugin.ts";
export { DEFAULT_CHILD_SYSTEM_PROMPT, renderTask } from "./prompt.ts";
