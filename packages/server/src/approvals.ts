// OWNER: helper s2 (approvals). The daemon's approver: a pending approval per core
// request, answered over HTTP, durable across a restart. STUB until s2 lands.
import { ApprovalError } from "@lash/core";
import { Effect, Layer } from "effect";
import { NotFound } from "./api.ts";
import { Approvals } from "./services.ts";

const notBuilt = new NotFound({ code: "not_built", message: "approvals over HTTP are not built yet" });

export const ApprovalsLive = Layer.succeed(
  Approvals,
  Approvals.of({
    approver: {
      ask: () => Effect.fail(new ApprovalError({ message: "approvals over HTTP are not built yet" })),
    },
    list: () => Effect.succeed([]),
    get: () => Effect.fail(notBuilt),
    decide: () => Effect.fail(notBuilt),
  }),
);
