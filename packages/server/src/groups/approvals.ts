// OWNER: helper s2 (approvals). Handlers of `ApprovalsApi`.
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import { CurrentPrincipal, LashApi } from "../api.ts";
import { Approvals } from "../services.ts";

export const ApprovalsGroupLive = HttpApiBuilder.group(LashApi, "approvals", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        const approvals = yield* Approvals;
        return { approvals: yield* approvals.list(principal, urlParams.state ?? "pending") };
      }),
    )
    .handle("get", ({ path }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        return yield* (yield* Approvals).get(principal, path.id);
      }),
    )
    .handle("decide", ({ path, payload }) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal;
        return yield* (yield* Approvals).decide(principal, path.id, payload);
      }),
    ),
);
