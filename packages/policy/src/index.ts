// @lash/policy — governance for lash: durable approvals, layered tool policy,
// risk evaluation with previews, read/write classification, dry-run and the shell
// sandbox. The kernel knows none of this by name; the host consults it through the
// `Governance` and `Approver` seams of @lash/core.
export const POLICY_PACKAGE = "@lash/policy";
export { approveAll, callbackApprover, failApprover, rejectAll } from "./approvers.ts";
