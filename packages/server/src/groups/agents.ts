// OWNER: helper s3 (agents + MCP). Handlers of `AgentsApi`. STUB until s3 lands.
import { HttpApiBuilder } from "@effect/platform";
import { Effect } from "effect";
import { LashApi, Unavailable } from "../api.ts";

const notBuilt = new Unavailable({ code: "not_built", message: "agent routes are not built yet" });

export const AgentsGroupLive = HttpApiBuilder.group(LashApi, "agents", (handlers) =>
  handlers
    .handle("list", () => Effect.succeed({ agents: [] }))
    .handle("chat", () => Effect.fail(notBuilt))
    .handle("chatStream", () => Effect.fail(notBuilt)),
);
