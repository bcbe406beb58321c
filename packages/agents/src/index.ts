// @lash/agents — agents as files: `.agent.md` / YAML specs, `lash build` to a
// content-addressed manifest, agents as tools, entry functions, skills (SKILL.md)
// and project instruction files (AGENTS.md).
export const AGENTS_PACKAGE = "@lash/agents";
export {
  BUILD_DIR,
  type BuildOptions,
  type BuildResult,
  type BuildSkill,
  buildProject,
  compileProject,
  DEFAULT_AGENT_DIRS,
  DEFAULT_BUILTIN_TOOLS,
  defaultSkillsCatalog,
  fileSha256,
  findProjectFile,
  type ParsedAgent,
  PROJECT_FILES,
  type ProjectParse,
  parseProject,
  readManifest,
  skillFiles,
  skillsLock,
  sortDiagnostics,
} from "./build.ts";
export {
  capText,
  findInstructionFiles,
  INSTRUCTIONS_MAX_CHARS,
  type InstructionFile,
  type InstructionOptions,
  instructionDirs,
  projectInstructions,
  renderInstructions,
} from "./instructions.ts";
export {
  MANIFEST_VERSION,
  type Manifest,
  type ManifestSkill,
  type ResolvedAgent,
  type ResolvedTool,
} from "./manifest.ts";
export {
  type AgentSessionPlan,
  agentCapability,
  agentModel,
  agentToolsFor,
  calledAgents,
  checkInput,
  findAgent,
  inputText,
  outputPlugin,
  planAgentSession,
  RunRequestError,
  reachableAgents,
  sessionToolNames,
} from "./run/runner.ts";
export {
  defaultSkillRoots,
  discoverSkills,
  LOAD_SKILL,
  projectFileSkillRoots,
  READ_SKILL_FILE,
  SKILL_FILE,
  SKILLS_PLUGIN,
  type Skill,
  type SkillProblem,
  type SkillRoot,
  type SkillsPluginOptions,
  skillsCatalog,
  skillsPlugin,
  validateSkillDir,
} from "./skills/index.ts";
export {
  closest,
  type Diagnostic,
  decodeWithPositions,
  editDistance,
  formatDiagnostic,
  parseYamlSource,
  type SourceDoc,
  splitFrontMatter,
} from "./source.ts";
export {
  AGENT_NAME_PATTERN,
  AgentSpec,
  APPROVAL_MODES,
  agentSpecJsonSchema,
  ProjectFile,
  projectFileJsonSchema,
  Schedule,
  ToolRef,
} from "./spec.ts";
