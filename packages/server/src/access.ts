// OWNER: helper s2 (auth). Who may see a session or run an agent. STUB until s2 lands: everything is allowed.
import { Effect, Layer } from "effect";
import { Access } from "./services.ts";

export const AccessLive = Layer.succeed(
  Access,
  Access.of({
    sessionInfo: () => Effect.succeed({ owner: "local" }),
    checkSession: () => Effect.void,
    checkAgent: () => Effect.void,
    principalLayers: () => [],
  }),
);
