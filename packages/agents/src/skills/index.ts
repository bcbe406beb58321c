export {
  defaultSkillRoots,
  discoverSkills,
  listFiles,
  SKILL_COMPATIBILITY_MAX,
  SKILL_DESCRIPTION_MAX,
  SKILL_FILE,
  SKILL_NAME_MAX,
  type Skill,
  type SkillProblem,
  type SkillRoot,
  validateSkillDir,
} from "./discover.ts";
