// OWNER: helper s2 (auth). Bearer tokens (stored hashed in the state db) → principals;
// the `Authorization` middleware's live layer. STUB until s2 lands: every caller is `local`.
import { Effect, Layer } from "effect";
import { Authorization, Principal, type Unauthorized } from "./api.ts";

/**
 * The principal of an `Authorization` header value (`Bearer <token>`), for routes outside
 * the HttpApi (the MCP endpoint): 401 without a valid token.
 */
export const authenticate = (_authorization: string | undefined): Effect.Effect<Principal, Unauthorized> =>
  Effect.succeed(new Principal({ name: "local", admin: true }));

export const AuthorizationLive = Layer.succeed(
  Authorization,
  Authorization.of({ bearer: () => Effect.succeed(new Principal({ name: "local", admin: true })) }),
);
