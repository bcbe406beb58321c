// Where the Codex adapter gets its bearer token: the sign-in stored in auth.json,
// refreshed shortly before it expires and once more after a 401. Concurrent
// requests in one process share one refresh; a refresh another process already
// wrote to the file is picked up instead of refreshing again.
import type { CodexAuthConfig } from "./codex.ts";
import { CodexAuthError, refreshCodexTokens } from "./codex.ts";
import type { CodexTokens } from "./store.ts";
import { readCodexTokens, writeCodexTokens } from "./store.ts";

export interface CodexCredential {
  readonly accessToken: string;
  readonly accountId?: string | undefined;
}

export interface CodexTokenSource {
  /** A usable access token (refreshed first when it expires within the margin). */
  current(): Promise<CodexCredential>;
  /** After a 401 for `stale`: a different token (refreshed now, unless another caller already did). Absent for a fixed token. */
  readonly refreshAfter401?: (stale: string) => Promise<CodexCredential>;
}

/** A fixed token (tests, or a token obtained elsewhere): never refreshed. */
export function staticCodexToken(accessToken: string, accountId?: string): CodexTokenSource {
  const cred = { accessToken, ...(accountId ? { accountId } : {}) };
  return { current: () => Promise.resolve(cred) };
}

export interface FileTokenSourceOptions {
  /** Refresh when the token expires within this many ms (default 5 minutes). */
  readonly marginMs?: number;
  /** The clock (epoch ms; default `Date.now`). */
  readonly now?: () => number;
}

const inflight = new Map<string, Promise<CodexTokens>>();

const credOf = (t: CodexTokens): CodexCredential => ({
  accessToken: t.accessToken,
  ...(t.accountId ? { accountId: t.accountId } : {}),
});

/** The sign-in in `authFile` (`$LASH_HOME/auth.json`). */
export function fileCodexTokens(
  authFile: string,
  config: CodexAuthConfig,
  options: FileTokenSourceOptions = {},
): CodexTokenSource {
  const now = options.now ?? Date.now;
  const margin = options.marginMs ?? 5 * 60_000;
  const load = (): CodexTokens => {
    const t = readCodexTokens(authFile);
    if (!t)
      throw new CodexAuthError({
        reason: "notSignedIn",
        message: `not signed in to Codex (no sign-in in ${authFile}): run \`lash login codex\``,
      });
    return t;
  };
  const expiring = (t: CodexTokens): boolean => t.expiresAt !== undefined && t.expiresAt - margin <= now();
  /** One refresh per file at a time; `stale` is the token that prompted it. */
  const refresh = (stale: string): Promise<CodexTokens> => {
    const running = inflight.get(authFile);
    if (running) return running;
    const p = (async () => {
      const onDisk = load();
      // another process (or an earlier refresh here) already replaced the stale token
      if (onDisk.accessToken !== stale && !expiring(onDisk)) return onDisk;
      try {
        const fresh = await refreshCodexTokens(config, onDisk, now());
        writeCodexTokens(authFile, fresh);
        return fresh;
      } catch (e) {
        // another process refreshed with the same (now rotated) refresh token first: its
        // tokens are in the file, and the refusal we got is not a reason to sign in again
        const again = load();
        if (again.refreshToken !== onDisk.refreshToken && !expiring(again)) return again;
        throw e;
      }
    })().finally(() => inflight.delete(authFile));
    inflight.set(authFile, p);
    return p;
  };
  return {
    async current() {
      const t = load();
      return credOf(expiring(t) ? await refresh(t.accessToken) : t);
    },
    async refreshAfter401(stale) {
      return credOf(await refresh(stale));
    },
  };
}
