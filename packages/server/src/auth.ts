// Who is calling: bearer tokens (stored hashed in the state db, `tokens.ts`) → principals.
// `AuthorizationLive` is the live layer of the HttpApi's `Authorization` middleware;
// `authenticate` does the same for routes outside the HttpApi (the MCP endpoint).
//
// 1. `auth: "none"` (loopback only; `lash serve` refuses it elsewhere): every caller is the
//    admin principal `local`.
// 2. No token → 401 `missing_token`, naming the header and how to get a token.
// 3. A token that is not a live token → 401 `invalid_token` (unknown and revoked look alike).
import { Clock, Effect, Layer, Redacted } from "effect";
import { Authorization, Principal, Unauthorized } from "./api.ts";
import { Settings, StateDb } from "./services.ts";
import { TokenStore } from "./tokens.ts";

/** The principal every caller is when the daemon runs with `--no-auth`. */
export const LOCAL_PRINCIPAL = new Principal({ name: "local", admin: true });

const missingToken = new Unauthorized({
  code: "missing_token",
  message:
    "this request has no bearer token: send the header `Authorization: Bearer <token>`; create a token with `lash serve token create --principal <name>`",
});

const invalidToken = new Unauthorized({
  code: "invalid_token",
  message:
    "the bearer token is not valid (unknown or revoked): check the token, or create a new one with `lash serve token create --principal <name>` (`lash serve token list` shows the live ones)",
});

// one TokenStore (prepared statements) per state db
const stores = new WeakMap<object, TokenStore>();
const storeOf = (db: ConstructorParameters<typeof TokenStore>[0]): TokenStore => {
  let store = stores.get(db);
  if (!store) {
    store = new TokenStore(db);
    stores.set(db, store);
  }
  return store;
};

/** Check a presented token (the header's value after `Bearer `). */
const check = (
  tokens: TokenStore,
  auth: "tokens" | "none",
  token: string,
): Effect.Effect<Principal, Unauthorized> =>
  Effect.gen(function* () {
    if (auth === "none") return LOCAL_PRINCIPAL;
    const trimmed = token.trim();
    if (trimmed === "") return yield* Effect.fail(missingToken);
    const now = yield* Clock.currentTimeMillis;
    const principal = tokens.verify(trimmed, now);
    if (!principal) return yield* Effect.fail(invalidToken);
    return principal;
  });

/** The token of an `Authorization` header value (`Bearer <token>`, any case); "" when there is none. */
export function bearerToken(authorization: string | undefined): string {
  const m = /^\s*bearer\s+(.*)$/i.exec(authorization ?? "");
  if (m) return m[1] ?? "";
  // a header that is not a bearer one is a wrong token, not a missing one
  return authorization?.trim() ? authorization : "";
}

/**
 * The principal of an `Authorization` header value (`Bearer <token>`), for routes outside
 * the HttpApi (the MCP endpoint): 401 without a valid token.
 */
export const authenticate = (
  authorization: string | undefined,
): Effect.Effect<Principal, Unauthorized, Settings | StateDb> =>
  Effect.gen(function* () {
    const settings = yield* Settings;
    const db = yield* StateDb;
    return yield* check(storeOf(db), settings.auth, bearerToken(authorization));
  });

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function* () {
    const settings = yield* Settings;
    const tokens = storeOf(yield* StateDb);
    return Authorization.of({ bearer: (token) => check(tokens, settings.auth, Redacted.value(token)) });
  }),
);
