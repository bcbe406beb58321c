// Where the console talks to and as whom: the daemon that served the page (same origin), with
// the bearer token the user entered once, kept in this tab's sessionStorage. Every call goes
// through the typed client `@lash/client`; nothing else talks to the daemon.
import { createClient, type LashClientPromise } from "@lash/client";

const TOKEN_KEY = "lash.console.token";

export function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeToken(token: string | undefined): void {
  try {
    if (token === undefined) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // storage disabled: the token lives as long as the page
  }
}

export function makeClient(token: string | undefined): LashClientPromise {
  return createClient({ baseUrl: location.origin, token });
}

/** An error from the client as one line for people: the daemon's message (it names the fix). */
export function describeError(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const e = error as { _tag?: unknown; code?: unknown; message?: unknown };
    if (typeof e.message === "string" && typeof e.code === "string") return `${e.message} (${e.code})`;
    if (typeof e.message === "string") return e.message;
  }
  return String(error);
}

/** Whether the error is the daemon's 401 (no token, or a wrong one). */
export const isUnauthorized = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "Unauthorized";
