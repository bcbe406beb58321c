// @lash/agents — agents as files: `.agent.md` / YAML specs, `lash build` to a
// content-addressed manifest, agents as tools, entry functions, skills (SKILL.md)
// and project instruction files (AGENTS.md).
export const AGENTS_PACKAGE = "@lash/agents";
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
  SKILL_FILE,
  type Skill,
  type SkillProblem,
  type SkillRoot,
  validateSkillDir,
} from "./skills/index.ts";
