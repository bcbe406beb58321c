export {
  defaultSkillRoots,
  discoverSkills,
  listFiles,
  projectFileSkillRoots,
  SKILL_COMPATIBILITY_MAX,
  SKILL_DESCRIPTION_MAX,
  SKILL_FILE,
  SKILL_NAME_MAX,
  type Skill,
  type SkillProblem,
  type SkillRoot,
  validateSkillDir,
} from "./discover.ts";
export {
  jailedPath,
  LOAD_SKILL,
  READ_SKILL_FILE,
  SKILL_FILE_MAX_BYTES,
  SKILLS_PLUGIN,
  type SkillsPluginOptions,
  skillsCatalog,
  skillsPlugin,
} from "./plugin.ts";
