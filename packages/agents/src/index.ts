// @lash/agents — agents as files: `.agent.md` / YAML specs, `lash build` to a
// content-addressed manifest, agents as tools, entry functions, skills (SKILL.md)
// and project instruction files (AGENTS.md).
export const AGENTS_PACKAGE = "@lash/agents";
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
  defaultSkillRoots,
  discoverSkills,
  LOAD_SKILL,
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
