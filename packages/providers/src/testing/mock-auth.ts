// A mock of OpenAI's authorization server for the Codex sign-in tests: a real HTTP
// server on 127.0.0.1 with the endpoints the sign-in uses —
//   GET  /oauth/authorize                      → 302 to the redirect URI with code + state
//   POST /oauth/token                          → authorization_code (PKCE checked) or refresh_token
//   POST /api/accounts/deviceauth/usercode     → a user code
//   POST /api/accounts/deviceauth/token        → 403 until `approveDevice`, then a code + PKCE pair
// Tokens are unsigned JWTs carrying the claims the real ones carry (account id, email, plan, exp).
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { Socket } from "node:net";

export interface MockAuthServerOptions {
  /** Lifetime of issued access tokens in seconds (default 3600). */
  readonly expiresIn?: number;
  readonly accountId?: string;
  readonly email?: string;
  readonly plan?: string;
  /** The only client id accepted (default: any). */
  readonly clientId?: string;
  /** Seconds between device-code polls the server asks for (default 0). */
  readonly deviceInterval?: number;
}

export interface MockAuthRequest {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
}

export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly idToken: string;
  readonly grant: "authorization_code" | "refresh_token";
}

export interface MockAuthServer {
  /** `http://127.0.0.1:<port>`: the issuer (`LASH_CODEX_AUTH_URL`). */
  readonly url: string;
  readonly requests: readonly MockAuthRequest[];
  /** Each authorization code's PKCE check: the challenge the client sent and whether the verifier matched it. */
  readonly pkceChecks: readonly { challenge: string; verifier: string; ok: boolean }[];
  /** Every set of tokens issued, in order. */
  readonly issued: readonly IssuedTokens[];
  /** Rejects every refresh token issued so far (as if the sign-in was revoked). */
  revokeRefreshTokens(): void;
  /** Lifetime of tokens issued from now on. */
  setExpiresIn(seconds: number): void;
  /** The user entered this code at the verification page. */
  approveDevice(userCode: string): void;
  /** Resolves when a request to `path` has arrived (`n` of them). */
  waitForRequest(path: string, n?: number): Promise<MockAuthRequest>;
  close(): Promise<void>;
}

const b64url = (v: Buffer | string): string => Buffer.from(v).toString("base64url");

function jwt(claims: Record<string, unknown>): string {
  return `${b64url(JSON.stringify({ alg: "none", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}.${b64url("mock-signature")}`;
}

async function readParams(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  const type = req.headers["content-type"] ?? "";
  if (raw === "") return {};
  if (type.includes("application/json")) {
    const v = JSON.parse(raw) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)]));
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

export async function startMockAuthServer(options: MockAuthServerOptions = {}): Promise<MockAuthServer> {
  let expiresIn = options.expiresIn ?? 3600;
  const accountId = options.accountId ?? "acct-mock-123";
  const requests: MockAuthRequest[] = [];
  const pkceChecks: { challenge: string; verifier: string; ok: boolean }[] = [];
  const issued: IssuedTokens[] = [];
  const codes = new Map<string, { challenge: string; redirectUri: string; clientId: string }>();
  const liveRefresh = new Set<string>();
  const devices = new Map<string, { userCode: string; approved: boolean }>();
  const waiters: { path: string; n: number; resolve: (r: MockAuthRequest) => void }[] = [];
  const sockets = new Set<Socket>();
  let n = 0;
  let url = "";

  const issue = (grant: IssuedTokens["grant"]): IssuedTokens => {
    n++;
    const now = Math.floor(Date.now() / 1000);
    const auth = { chatgpt_account_id: accountId, chatgpt_plan_type: options.plan ?? "plus" };
    const t: IssuedTokens = {
      accessToken: jwt({
        sub: "user-mock",
        exp: now + expiresIn,
        n,
        "https://api.openai.com/auth": auth,
        nonce: b64url(randomBytes(6)),
      }),
      refreshToken: `rt_mock_${n}_${b64url(randomBytes(9))}`,
      idToken: jwt({ email: options.email ?? "someone@example.com", "https://api.openai.com/auth": auth, n }),
      grant,
    };
    liveRefresh.add(t.refreshToken);
    issued.push(t);
    return t;
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
  const tokenBody = (t: IssuedTokens) => ({
    access_token: t.accessToken,
    refresh_token: t.refreshToken,
    id_token: t.idToken,
    token_type: "Bearer",
    expires_in: expiresIn,
  });
  const clientOk = (id: string | undefined): boolean =>
    options.clientId === undefined || id === options.clientId;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const u = new URL(req.url ?? "/", "http://localhost");
    const params = req.method === "GET" ? Object.fromEntries(u.searchParams) : await readParams(req);
    const rec: MockAuthRequest = { method: req.method ?? "GET", path: u.pathname, params };
    requests.push(rec);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (w.path === rec.path && requests.filter((r) => r.path === w.path).length >= w.n) {
        waiters.splice(i, 1);
        w.resolve(rec);
      }
    }
    switch (`${rec.method} ${u.pathname}`) {
      case "GET /oauth/authorize": {
        const redirect = params.redirect_uri ?? "";
        if (
          !clientOk(params.client_id) ||
          params.response_type !== "code" ||
          params.code_challenge_method !== "S256" ||
          !params.code_challenge
        )
          return send(res, 400, { error: "invalid_request", error_description: "bad authorize parameters" });
        const code = `code_${b64url(randomBytes(12))}`;
        codes.set(code, {
          challenge: params.code_challenge,
          redirectUri: redirect,
          clientId: params.client_id ?? "",
        });
        const to = new URL(redirect);
        to.searchParams.set("code", code);
        to.searchParams.set("state", params.state ?? "");
        res.writeHead(302, { location: to.toString() });
        res.end();
        return;
      }
      case "POST /oauth/token": {
        if (!clientOk(params.client_id)) return send(res, 401, { error: "invalid_client" });
        if (params.grant_type === "authorization_code") {
          const entry = codes.get(params.code ?? "");
          if (!entry)
            return send(res, 400, { error: "invalid_grant", error_description: "unknown or used code" });
          codes.delete(params.code ?? "");
          const verifier = params.code_verifier ?? "";
          const ok = b64url(createHash("sha256").update(verifier).digest()) === entry.challenge;
          pkceChecks.push({ challenge: entry.challenge, verifier, ok });
          if (!ok)
            return send(res, 400, {
              error: "invalid_grant",
              error_description: "code_verifier does not match the code_challenge",
            });
          if (entry.redirectUri !== params.redirect_uri)
            return send(res, 400, { error: "invalid_grant", error_description: "redirect_uri mismatch" });
          return send(res, 200, tokenBody(issue("authorization_code")));
        }
        if (params.grant_type === "refresh_token") {
          const rt = params.refresh_token ?? "";
          if (!liveRefresh.has(rt))
            return send(res, 401, {
              error: {
                message: "Your refresh token has been invalidated.",
                type: "invalid_request_error",
                code: "refresh_token_invalidated",
              },
            });
          liveRefresh.delete(rt); // rotated: a refresh token works once
          return send(res, 200, tokenBody(issue("refresh_token")));
        }
        return send(res, 400, { error: "unsupported_grant_type" });
      }
      case "POST /api/accounts/deviceauth/usercode": {
        if (!clientOk(params.client_id)) return send(res, 401, { error: "invalid_client" });
        const id = `dev_${b64url(randomBytes(8))}`;
        const userCode = `${randomBytes(2).toString("hex").toUpperCase()}-${randomBytes(2).toString("hex").toUpperCase()}`;
        devices.set(id, { userCode, approved: false });
        return send(res, 200, {
          device_auth_id: id,
          user_code: userCode,
          interval: String(options.deviceInterval ?? 0),
        });
      }
      case "POST /api/accounts/deviceauth/token": {
        const d = devices.get(params.device_auth_id ?? "");
        if (!d || d.userCode !== params.user_code) return send(res, 400, { error: "invalid_device" });
        if (!d.approved) return send(res, 403, { error: "authorization_pending" });
        devices.delete(params.device_auth_id ?? "");
        const verifier = b64url(randomBytes(48));
        const challenge = b64url(createHash("sha256").update(verifier).digest());
        const code = `code_${b64url(randomBytes(12))}`;
        codes.set(code, { challenge, redirectUri: `${url}/deviceauth/callback`, clientId: "" });
        return send(res, 200, {
          authorization_code: code,
          code_challenge: challenge,
          code_verifier: verifier,
        });
      }
      default:
        return send(res, 404, { error: "not_found" });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: String(e) }));
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const a = server.address();
  url = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
  return {
    url,
    requests,
    pkceChecks,
    issued,
    revokeRefreshTokens() {
      liveRefresh.clear();
    },
    setExpiresIn(seconds) {
      expiresIn = seconds;
    },
    approveDevice(userCode) {
      for (const d of devices.values()) if (d.userCode === userCode) d.approved = true;
    },
    waitForRequest(path, count = 1) {
      const seen = requests.filter((r) => r.path === path);
      if (seen.length >= count) return Promise.resolve(seen[count - 1]!);
      return new Promise((resolve) => waiters.push({ path, n: count, resolve }));
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
    },
  };
}
