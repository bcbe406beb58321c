// OWNER: helper s2 (auth). Bearer tokens (stored hashed in the state db) → principals;
// the `Authorization` middleware's live layer. STUB until s2 lands: every caller is `local`.
import { Effect, Layer } from "effect";
import { Authorization, Principal } from "./api.ts";

export const AuthorizationLive = Layer.succeed(
  Authorization,
  Authorization.of({ bearer: () => Effect.succeed(new Principal({ name: "local", admin: true })) }),
);
