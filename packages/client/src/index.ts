// @lash/client — a typed client for `lash serve`, derived from the server's HttpApi
// (`@lash/server/api`). Built in issue 19.
export { LashApi } from "@lash/server/api";
