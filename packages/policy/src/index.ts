// @lash/policy — governance for lash: durable approvals, layered tool policy,
// risk evaluation with previews, read/write classification, dry-run and the shell
// sandbox. The kernel knows none of this by name; the host consults it through the
// `Governance` and `Approver` seams of @lash/core.
export const POLICY_PACKAGE = "@lash/policy";

export { approveAll, callbackApprover, failApprover, rejectAll } from "./approvers.ts";
export { type DryRunDetails, type DryRunOptions, dryRunOutput, dryRunPlugin } from "./dry-run.ts";
export {
  AGENT_TOOLS,
  FS_READ_TOOLS,
  FS_WRITE_TOOLS,
  GROUPS,
  inGroup,
  isKnownGroup,
  matchesPattern,
  PLAN_TOOLS,
  PROFILE_DESCRIPTIONS,
  PROFILE_LAYERS,
  READ_CONTROL_TOOLS,
  RUNTIME_TOOLS,
  type ToolFacts,
} from "./groups.ts";
export {
  CONTROL_TOOLS,
  childPolicy,
  DEFAULT_RISK_THRESHOLD,
  type DecideOptions,
  decide,
  deniedPath,
  denyPatternMatcher,
  describeLayers,
  explain,
  type GovernanceOptions,
  makeGovernance,
  type NamedLayer,
  needsSecondApprover,
  type Policy,
  type PolicyCall,
  type PolicyVerdict,
  patchPaths,
  pathArguments,
  resolvePolicy,
  SESSION_LAYERS_KEY,
  SessionPolicies,
  secondApproverThreshold,
} from "./policy.ts";
export { assessRisk, LARGE_CHANGE_LINES, MANY_FILES, type RiskInput, riskAssessor } from "./risk.ts";
export {
  type BwrapSandbox,
  type BwrapSandboxOptions,
  type BwrapStatus,
  bwrapArgs,
  bwrapSandbox,
  bwrapStatus,
  describeSandbox,
  SANDBOX_FIX,
  SandboxUnavailableError,
  type WrappedCommand,
} from "./sandbox.ts";
export {
  ApprovalRule,
  decodePolicyLayer,
  didYouMean,
  type PolicyIssue,
  PolicyLayer,
  PolicyLayerError,
  PROFILES,
  type ProfileName,
  policyLayerIssues,
  policyLayerJsonSchema,
  RiskLevel,
  ToolRule,
  unknownKeyMessage,
} from "./schema.ts";
