// @lash/server — `lash serve`, the daemon (issue 19). The API schema is `./api.ts`
// (also `@lash/server/api`, which the client imports alone).
export * from "./api.ts";
export { hashesEqual, PRINCIPAL_NAME, TOKEN_PREFIX, type TokenInfo, TokenStore } from "./tokens.ts";
