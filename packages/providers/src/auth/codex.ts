// Signing in to Codex with a ChatGPT plan: OAuth 2.0 against OpenAI's authorization
// server, as the official Codex CLI does it (same issuer, public client id, scopes,
// loopback redirect `http://localhost:1455/auth/callback`, device-code endpoints).
//
// 1. `loginWithBrowser` — authorization code with PKCE: a one-shot HTTP server on
//    127.0.0.1 receives the redirect, checks `state`, exchanges the code (with the
//    PKCE verifier) at `/oauth/token`.
// 2. `loginWithDeviceCode` — for machines without a browser: a user code to type in
//    at `<issuer>/codex/device`; polling returns an authorization code (and the PKCE
//    pair the server made for it), exchanged like the browser one.
// 3. `refreshCodexTokens` — `grant_type=refresh_token`; a refresh token the server
//    rejects (expired, revoked, already used) is `CodexAuthError{reason: "signInRequired"}`
//    whose message says to run `lash login codex`.
//
// The issuer is overridable (`LASH_CODEX_AUTH_URL`) so tests point it at a local mock.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import * as Data from "effect/Data";
import type { CodexTokens } from "./store.ts";

export const CODEX_ISSUER = "https://auth.openai.com";
/** The Codex CLI's public OAuth client id (a public client: PKCE, no secret). */
export const CODEX_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann";
/** The ChatGPT backend's Responses endpoint base (`/responses` is appended). */
export const CODEX_BASE_URL = "https://chatgpt.com/backend-api/codex";
/** The loopback port registered for this client id (1457 is the registered fallback). */
export const CODEX_CALLBACK_PORTS = [1455, 1457] as const;
const SCOPES = "openid profile email offline_access";
/** Sent as `originator` on the authorize URL and the Responses requests. */
export const CODEX_ORIGINATOR = "lash";

/** A sign-in step failed. `signInRequired` means the stored sign-in is gone for good. */
export class CodexAuthError extends Data.TaggedError("CodexAuthError")<{
  readonly message: string;
  readonly reason: "notSignedIn" | "signInRequired" | "denied" | "server" | "network" | "cancelled";
}> {}

export const SIGN_IN_HINT = "run `lash login codex` to sign in again";

export interface CodexAuthConfig {
  /** Authorization server (default https://auth.openai.com). */
  readonly issuer: string;
  readonly clientId: string;
}

/** Issuer and client id from the environment (`LASH_CODEX_AUTH_URL`, `LASH_CODEX_CLIENT_ID`). */
export function codexAuthConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): CodexAuthConfig {
  const issuer = env.LASH_CODEX_AUTH_URL?.trim() || CODEX_ISSUER;
  return {
    issuer: issuer.replace(/\/+$/, ""),
    clientId: env.LASH_CODEX_CLIENT_ID?.trim() || CODEX_CLIENT_ID,
  };
}

// ---------------------------------------------------------------------------
// PKCE and claims

const b64url = (buf: Buffer): string => buf.toString("base64url");

export interface Pkce {
  readonly verifier: string;
  readonly challenge: string;
}

/** A fresh PKCE pair: 64 random bytes as the verifier, its SHA-256 (base64url) as the S256 challenge. */
export function generatePkce(): Pkce {
  const verifier = b64url(randomBytes(64));
  return { verifier, challenge: pkceChallenge(verifier) };
}

export function pkceChallenge(verifier: string): string {
  return b64url(createHash("sha256").update(verifier).digest());
}

/** The payload of a JWT (signature not checked: the tokens come straight from the issuer over TLS). */
export function jwtClaims(token: string | undefined): Record<string, unknown> {
  const part = token?.split(".")[1];
  if (!part) return {};
  try {
    const v = JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as unknown;
    return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

interface TokenResponse {
  readonly access_token?: unknown;
  readonly refresh_token?: unknown;
  readonly id_token?: unknown;
  readonly expires_in?: unknown;
}

/** Stored tokens from a token-endpoint answer (account id, email and plan from the id token's claims). */
export function tokensFrom(body: TokenResponse, now: number, previous?: CodexTokens): CodexTokens {
  const access = typeof body.access_token === "string" ? body.access_token : undefined;
  if (!access)
    throw new CodexAuthError({ reason: "server", message: "the token endpoint sent no access_token" });
  const refresh = typeof body.refresh_token === "string" ? body.refresh_token : previous?.refreshToken;
  if (!refresh)
    throw new CodexAuthError({ reason: "server", message: "the token endpoint sent no refresh_token" });
  const idToken = typeof body.id_token === "string" ? body.id_token : previous?.idToken;
  const id = jwtClaims(idToken);
  const auth = (id["https://api.openai.com/auth"] ?? {}) as Record<string, unknown>;
  const accessClaims = jwtClaims(access);
  const accessAuth = (accessClaims["https://api.openai.com/auth"] ?? {}) as Record<string, unknown>;
  const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
  const expiresAt =
    typeof body.expires_in === "number"
      ? now + body.expires_in * 1000
      : typeof accessClaims.exp === "number"
        ? accessClaims.exp * 1000
        : undefined;
  return {
    accessToken: access,
    refreshToken: refresh,
    ...(idToken ? { idToken } : {}),
    accountId: str(auth.chatgpt_account_id) ?? str(accessAuth.chatgpt_account_id) ?? previous?.accountId,
    email: str(id.email) ?? previous?.email,
    plan: str(auth.chatgpt_plan_type) ?? previous?.plan,
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    lastRefresh: now,
  };
}

// ---------------------------------------------------------------------------
// HTTP helpers

async function post(
  url: string,
  body: Record<string, string>,
  as: "form" | "json",
  signal?: AbortSignal,
): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": as === "form" ? "application/x-www-form-urlencoded" : "application/json",
        accept: "application/json",
      },
      body: as === "form" ? new URLSearchParams(body).toString() : JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  } catch (e) {
    if (signal?.aborted && (signal.reason as Error | undefined)?.name === "TimeoutError")
      throw new CodexAuthError({
        reason: "network",
        message: `no answer from ${new URL(url).origin} in time: check the network${url.startsWith(CODEX_ISSUER) ? "" : " and LASH_CODEX_AUTH_URL"}, then try again`,
      });
    if (signal?.aborted) throw new CodexAuthError({ reason: "cancelled", message: "sign-in cancelled" });
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new CodexAuthError({
      reason: "network",
      message: `cannot reach ${new URL(url).origin} (${cause?.code ?? cause?.message ?? (e as Error).message}): check the network${url.startsWith(CODEX_ISSUER) ? "" : " and LASH_CODEX_AUTH_URL"}`,
    });
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v === "object" && v !== null) json = v as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: res.status, json, text };
}

/** `error` / `error_description` (or a nested `{error: {code, message}}`) of an OAuth error body. */
function oauthError(json: Record<string, unknown>, text: string): { code: string; message: string } {
  const e = json.error;
  if (e && typeof e === "object") {
    const o = e as { code?: unknown; message?: unknown; type?: unknown };
    const code = typeof o.code === "string" ? o.code : typeof o.type === "string" ? o.type : "error";
    return { code, message: typeof o.message === "string" ? o.message : code };
  }
  const code = typeof e === "string" ? e : typeof json.code === "string" ? json.code : "error";
  const desc = json.error_description ?? json.message;
  return { code, message: typeof desc === "string" ? desc : text.slice(0, 200) || code };
}

/** Exchanges an authorization code (with its PKCE verifier) for tokens. */
export async function exchangeCode(
  config: CodexAuthConfig,
  args: { code: string; verifier: string; redirectUri: string; now?: number; signal?: AbortSignal },
): Promise<CodexTokens> {
  const res = await post(
    `${config.issuer}/oauth/token`,
    {
      grant_type: "authorization_code",
      code: args.code,
      redirect_uri: args.redirectUri,
      client_id: config.clientId,
      code_verifier: args.verifier,
    },
    "form",
    args.signal,
  );
  if (res.status < 200 || res.status >= 300) {
    const err = oauthError(res.json, res.text);
    throw new CodexAuthError({
      reason: res.status >= 500 ? "server" : "denied",
      message: `the authorization server refused the sign-in (${res.status} ${err.code}): ${err.message}`,
    });
  }
  return tokensFrom(res.json, args.now ?? Date.now());
}

/**
 * Trades the refresh token for new tokens. A rejected refresh token (400/401: expired,
 * revoked, reused) is `signInRequired`; anything else (5xx, network) is transient.
 */
export async function refreshCodexTokens(
  config: CodexAuthConfig,
  tokens: CodexTokens,
  now: number = Date.now(),
): Promise<CodexTokens> {
  const res = await post(
    `${config.issuer}/oauth/token`,
    {
      client_id: config.clientId,
      grant_type: "refresh_token",
      refresh_token: tokens.refreshToken,
      scope: "openid profile email",
    },
    "json",
    // a hung authorization server must not hold every later request waiting on this refresh
    AbortSignal.timeout(30_000),
  );
  if (res.status >= 200 && res.status < 300) return tokensFrom(res.json, now, tokens);
  const err = oauthError(res.json, res.text);
  if (res.status === 400 || res.status === 401 || res.status === 403)
    throw new CodexAuthError({
      reason: "signInRequired",
      message: `the Codex sign-in is no longer valid: the authorization server rejected the refresh token (${err.code}: ${err.message}) — ${SIGN_IN_HINT}`,
    });
  throw new CodexAuthError({
    reason: "server",
    message: `refreshing the Codex sign-in failed (${res.status} ${err.code}): ${err.message}`,
  });
}

// ---------------------------------------------------------------------------
// Browser sign-in (authorization code + PKCE, loopback redirect)

export interface BrowserLogin {
  /** The URL to open in a browser. */
  readonly url: string;
  /** The port the loopback server listens on. */
  readonly port: number;
  /** Resolves with the tokens once the browser came back with a code (rejects on error/cancel). */
  readonly done: Promise<CodexTokens>;
  /** Stops waiting: `done` rejects with `cancelled`. */
  cancel(): void;
}

export interface BrowserLoginOptions {
  /** Loopback ports to try in order (default 1455, then 1457; 0 = any free port, for tests). */
  readonly ports?: readonly number[];
  readonly now?: () => number;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => {
      server.off("listening", onListening);
      reject(e);
    };
    const onListening = () => {
      server.off("error", onError);
      const a = server.address();
      resolve(typeof a === "object" && a ? a.port : port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, "127.0.0.1");
  });
}

const page = (title: string, body: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:system-ui;margin:4em auto;max-width:32em"><h1>${title}</h1><p>${body}</p></body>`;

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Starts the loopback server and returns the authorize URL. The browser's redirect to
 * `http://localhost:<port>/auth/callback?code=…&state=…` completes the sign-in.
 */
export async function loginWithBrowser(
  config: CodexAuthConfig,
  options: BrowserLoginOptions = {},
): Promise<BrowserLogin> {
  const pkce = generatePkce();
  const state = b64url(randomBytes(32));
  const now = options.now ?? Date.now;
  let settle: { resolve: (t: CodexTokens) => void; reject: (e: CodexAuthError) => void } | undefined;
  const done = new Promise<CodexTokens>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let finished = false;
  let redirectUri = "";
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://localhost");
    if (u.pathname !== "/auth/callback") {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
      return;
    }
    if (finished) {
      res
        .writeHead(409, { "content-type": "text/html; charset=utf-8" })
        .end(page("Already done", "You can close this tab."));
      return;
    }
    if (u.searchParams.get("state") !== state) {
      res
        .writeHead(400, { "content-type": "text/html; charset=utf-8" })
        .end(
          page(
            "Sign-in failed",
            "The state parameter does not match this sign-in: start again with <code>lash login codex</code>.",
          ),
        );
      return;
    }
    const error = u.searchParams.get("error");
    const code = u.searchParams.get("code");
    const fail = (e: CodexAuthError) => {
      finished = true;
      res
        .writeHead(400, { "content-type": "text/html; charset=utf-8", connection: "close" })
        .end(page("Sign-in failed", escapeHtml(e.message)));
      close();
      settle?.reject(e);
    };
    if (error || !code) {
      const desc = u.searchParams.get("error_description");
      fail(
        new CodexAuthError({
          reason: "denied",
          message: error
            ? `the authorization server said ${error}${desc ? `: ${desc}` : ""}`
            : "the redirect carried no authorization code",
        }),
      );
      return;
    }
    finished = true;
    exchangeCode(config, { code, verifier: pkce.verifier, redirectUri, now: now() }).then(
      (tokens) => {
        res
          .writeHead(200, { "content-type": "text/html; charset=utf-8", connection: "close" })
          .end(
            page("Signed in to Codex", "lash is signed in with your ChatGPT plan. You can close this tab."),
          );
        close();
        settle?.resolve(tokens);
      },
      (e: unknown) => {
        fail(e instanceof CodexAuthError ? e : new CodexAuthError({ reason: "server", message: String(e) }));
      },
    );
  });
  const close = () => {
    server.close();
    server.closeAllConnections();
  };
  const ports = options.ports ?? CODEX_CALLBACK_PORTS;
  let port: number | undefined;
  let lastError: Error | undefined;
  for (const p of ports) {
    try {
      port = await listen(server, p);
      break;
    } catch (e) {
      lastError = e as Error;
    }
  }
  if (port === undefined)
    throw new CodexAuthError({
      reason: "network",
      message: `cannot listen on 127.0.0.1:${ports.join(" or ")} for the sign-in redirect (${lastError?.message}): stop what uses the port, or use \`lash login codex --device-code\``,
    });
  redirectUri = `http://localhost:${port}/auth/callback`;
  const query = new URLSearchParams({
    response_type: "code",
    client_id: config.clientId,
    redirect_uri: redirectUri,
    scope: SCOPES,
    code_challenge: pkce.challenge,
    code_challenge_method: "S256",
    id_token_add_organizations: "true",
    codex_cli_simplified_flow: "true",
    state,
    originator: CODEX_ORIGINATOR,
  });
  return {
    url: `${config.issuer}/oauth/authorize?${query.toString()}`,
    port,
    done,
    cancel() {
      if (finished) return;
      finished = true;
      close();
      settle?.reject(new CodexAuthError({ reason: "cancelled", message: "sign-in cancelled" }));
    },
  };
}

// ---------------------------------------------------------------------------
// Device-code sign-in

export interface DeviceCode {
  /** Where the user types the code. */
  readonly verificationUrl: string;
  readonly userCode: string;
  readonly deviceAuthId: string;
  /** Seconds between polls. */
  readonly interval: number;
}

/** Asks for a user code (`POST <issuer>/api/accounts/deviceauth/usercode`). */
export async function requestDeviceCode(config: CodexAuthConfig, signal?: AbortSignal): Promise<DeviceCode> {
  const res = await post(
    `${config.issuer}/api/accounts/deviceauth/usercode`,
    { client_id: config.clientId },
    "json",
    signal,
  );
  if (res.status === 404)
    throw new CodexAuthError({
      reason: "server",
      message:
        "the authorization server does not offer device-code sign-in: use `lash login codex` (browser)",
    });
  if (res.status < 200 || res.status >= 300) {
    const err = oauthError(res.json, res.text);
    throw new CodexAuthError({
      reason: "server",
      message: `device-code request failed (${res.status}): ${err.message}`,
    });
  }
  const j = res.json;
  const userCode = j.user_code ?? j.usercode;
  if (typeof j.device_auth_id !== "string" || typeof userCode !== "string")
    throw new CodexAuthError({
      reason: "server",
      message: "the device-code answer lacks device_auth_id or user_code",
    });
  const interval = Number(j.interval ?? 5);
  return {
    verificationUrl: `${config.issuer}/codex/device`,
    userCode,
    deviceAuthId: j.device_auth_id,
    // at least a second between polls (0 or nonsense from the server would be a tight loop)
    interval: Number.isFinite(interval) && interval >= 1 ? interval : 5,
  };
}

/**
 * Polls until the user has entered the code (403/404 = not yet), then exchanges the
 * authorization code it returns. Gives up after `maxWaitMs` (default 15 minutes).
 */
export async function completeDeviceCode(
  config: CodexAuthConfig,
  device: DeviceCode,
  options: { now?: () => number; signal?: AbortSignal; maxWaitMs?: number } = {},
): Promise<CodexTokens> {
  const now = options.now ?? Date.now;
  const started = Date.now();
  const maxWait = options.maxWaitMs ?? 15 * 60_000;
  for (;;) {
    const res = await post(
      `${config.issuer}/api/accounts/deviceauth/token`,
      { device_auth_id: device.deviceAuthId, user_code: device.userCode },
      "json",
      options.signal,
    );
    if (res.status >= 200 && res.status < 300) {
      const j = res.json;
      if (typeof j.authorization_code !== "string" || typeof j.code_verifier !== "string")
        throw new CodexAuthError({
          reason: "server",
          message: "the device-code answer lacks authorization_code",
        });
      return exchangeCode(config, {
        code: j.authorization_code,
        verifier: j.code_verifier,
        redirectUri: `${config.issuer}/deviceauth/callback`,
        now: now(),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    }
    if (res.status !== 403 && res.status !== 404) {
      const err = oauthError(res.json, res.text);
      throw new CodexAuthError({
        reason: "denied",
        message: `device-code sign-in failed (${res.status}): ${err.message}`,
      });
    }
    if (Date.now() - started >= maxWait)
      throw new CodexAuthError({
        reason: "cancelled",
        message: `the device code expired (after ${Math.round(maxWait / 60_000)} minutes): run \`lash login codex --device-code\` again`,
      });
    await new Promise<void>((resolve, reject) => {
      const signal = options.signal;
      const onAbort = () => {
        clearTimeout(t);
        reject(new CodexAuthError({ reason: "cancelled", message: "sign-in cancelled" }));
      };
      // the listener goes with its timer: one per poll would pile up over a long wait
      const t = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, device.interval * 1000);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
