// The activity stream's types live in @lash/sansio (trace and other edges read them
// without depending on core); re-exported here for hosts that import from core.
export type { TurnActivity, TurnActivityBody } from "@lash/sansio";
