// Who answers the approvals a policy asks for, by `--approval-mode`. The runtime gets one
// approver for its whole life; it delegates to the current one, which the TUI replaces with
// its prompt (`LocalContext.setApprover`) when the mode is interactive.
import type { ApproverShape } from "@lash/core";
import { approveAll, failApprover, rejectAll } from "@lash/policy";
import { Effect } from "effect";
import type { ApprovalMode } from "./args.ts";

/** Why `-p` cannot answer, and what to do (the turn error adds how to resume the kept request). */
const PRINT_HINT =
  "lash -p does not prompt (--approval-mode fail): run with --approval-mode approve-all or reject-all, or allow the tool in the config's policy";

/** Until the TUI attaches its prompt, an interactive run cannot answer either. */
const NO_PROMPT_HINT =
  "no approval prompt is attached to this run: use --approval-mode approve-all or reject-all, or allow the tool in the config's policy";

export function approverFor(mode: ApprovalMode | undefined, print: boolean): ApproverShape {
  switch (mode ?? (print ? "fail" : "interactive")) {
    case "approve-all":
      return approveAll();
    case "reject-all":
      return rejectAll();
    case "fail":
      return failApprover(PRINT_HINT);
    default:
      return failApprover(NO_PROMPT_HINT);
  }
}

/** An approver that asks whichever approver is current (`set` replaces it; later requests go to the new one). */
export function switchableApprover(initial: ApproverShape): {
  readonly approver: ApproverShape;
  readonly set: (next: ApproverShape) => void;
} {
  let current = initial;
  return {
    approver: { ask: (request, signal) => Effect.suspend(() => current.ask(request, signal)) },
    set: (next) => {
      current = next;
    },
  };
}
