// Codex sign-in against a local mock of the authorization server (real HTTP on
// 127.0.0.1): the browser flow with PKCE (the test makes the requests the browser
// would), the device-code flow, auth.json's mode, refresh before expiry and after a
// 401, and a revoked refresh token giving the "run `lash login codex`" error.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type CodexAuthConfig,
  CodexAuthError,
  completeDeviceCode,
  createProvider,
  fileCodexTokens,
  loginWithBrowser,
  readCodexTokens,
  refreshCodexTokens,
  requestDeviceCode,
  writeCodexTokens,
} from "../src/index.ts";
import type { MockAuthServer, MockLlmServer } from "../src/testing/index.ts";
import { startMockAuthServer, startMockServer } from "../src/testing/index.ts";
import { request, run } from "./helpers.ts";

let auth: MockAuthServer;
let wire: MockLlmServer;
let dir: string;
let config: CodexAuthConfig;
const CLIENT = "app_test_client";

beforeAll(async () => {
  auth = await startMockAuthServer({ clientId: CLIENT, expiresIn: 3600, email: "ada@example.com" });
  wire = await startMockServer();
  config = { issuer: auth.url, clientId: CLIENT };
});
afterAll(async () => {
  await auth.close();
  await wire.close();
});
let n = 0;
let authFile: string;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
function freshFile(): string {
  dir = mkdtempSync(join(tmpdir(), "lash-codex-auth-"));
  authFile = join(dir, `home${++n}`, "auth.json");
  return authFile;
}

/** Signs in through the browser flow and stores the tokens, as `lash login codex` does. */
async function signIn(file: string): Promise<void> {
  const login = await loginWithBrowser(config, { ports: [0] });
  const page = await fetch(login.url); // the browser: authorize → 302 → the loopback callback
  expect(page.status).toBe(200);
  writeCodexTokens(file, await login.done);
}

const mode = (path: string): number => statSync(path).mode & 0o777;

describe("browser sign-in (authorization code + PKCE)", () => {
  it("round trip: the server checks the verifier against the challenge; tokens carry account and email", async () => {
    const before = auth.pkceChecks.length;
    const login = await loginWithBrowser(config, { ports: [0] });
    const authorize = new URL(login.url);
    expect(authorize.origin).toBe(auth.url);
    expect(authorize.pathname).toBe("/oauth/authorize");
    expect(authorize.searchParams.get("redirect_uri")).toBe(`http://localhost:${login.port}/auth/callback`);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("client_id")).toBe(CLIENT);
    const challenge = authorize.searchParams.get("code_challenge");
    const page = await fetch(login.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Signed in to Codex");
    const tokens = await login.done;
    const check = auth.pkceChecks[before]!;
    expect(check).toMatchObject({ challenge, ok: true });
    // the verifier went only to the token endpoint, never into the browser's URL
    expect(login.url).not.toContain(check.verifier);
    expect(tokens.accountId).toBe("acct-mock-123");
    expect(tokens.email).toBe("ada@example.com");
    expect(tokens.expiresAt).toBeGreaterThan(Date.now());
    expect(tokens.refreshToken).toBe(auth.issued[auth.issued.length - 1]!.refreshToken);
  });

  it("a redirect with the wrong state is refused and the sign-in keeps waiting", async () => {
    const login = await loginWithBrowser(config, { ports: [0] });
    const forged = await fetch(`http://127.0.0.1:${login.port}/auth/callback?code=abc&state=forged`);
    expect(forged.status).toBe(400);
    expect(await fetch(login.url).then((r) => r.status)).toBe(200);
    await expect(login.done).resolves.toMatchObject({ accountId: "acct-mock-123" });
  });

  it("an error redirect (the user said no) fails the sign-in with the server's words", async () => {
    const login = await loginWithBrowser(config, { ports: [0] });
    const state = new URL(login.url).searchParams.get("state");
    const done = login.done.catch((e: unknown) => e);
    const r = await fetch(
      `http://127.0.0.1:${login.port}/auth/callback?error=access_denied&error_description=nope&state=${state}`,
    );
    expect(r.status).toBe(400);
    const e = (await done) as CodexAuthError;
    expect(e).toBeInstanceOf(CodexAuthError);
    expect(e.reason).toBe("denied");
    expect(e.message).toContain("access_denied: nope");
  });
});

describe("device-code sign-in", () => {
  it("pending until the user enters the code, then authorized", async () => {
    const polls = auth.requests.filter((r) => r.path === "/api/accounts/deviceauth/token").length;
    const device = await requestDeviceCode(config);
    expect(device.verificationUrl).toBe(`${auth.url}/codex/device`);
    expect(device.userCode).toMatch(/^[0-9A-F]{4}-[0-9A-F]{4}$/);
    const done = completeDeviceCode(config, device);
    // at least one poll answered "pending" before the user approves
    await auth.waitForRequest("/api/accounts/deviceauth/token", polls + 1);
    auth.approveDevice(device.userCode);
    const tokens = await done;
    expect(tokens.accountId).toBe("acct-mock-123");
    expect(auth.issued[auth.issued.length - 1]!.grant).toBe("authorization_code");
    expect(auth.pkceChecks[auth.pkceChecks.length - 1]!.ok).toBe(true);
  });
});

describe("auth.json", () => {
  it("is created with mode 0600 (and stays so when rewritten); its directory 0700", async () => {
    const file = freshFile();
    await signIn(file);
    expect(mode(file)).toBe(0o600);
    expect(statSync(join(file, "..")).mode & 0o777).toBe(0o700);
    writeCodexTokens(file, { ...readCodexTokens(file)!, email: "x@example.com" });
    expect(mode(file)).toBe(0o600);
  });
});

describe("refresh", () => {
  it("before expiry: a token far from expiry is used as is; within 5 minutes of it, refreshed first", async () => {
    const file = freshFile();
    await signIn(file);
    const stored = readCodexTokens(file)!;
    let now = stored.lastRefresh + 60_000;
    const source = fileCodexTokens(file, config, { now: () => now });
    const refreshesBefore = auth.issued.filter((t) => t.grant === "refresh_token").length;
    expect((await source.current()).accessToken).toBe(stored.accessToken);
    expect(auth.issued.filter((t) => t.grant === "refresh_token").length).toBe(refreshesBefore);
    now = stored.expiresAt! - 4 * 60_000;
    // two requests at once share one refresh
    const [a, b] = await Promise.all([source.current(), source.current()]);
    expect(a.accessToken).not.toBe(stored.accessToken);
    expect(b.accessToken).toBe(a.accessToken);
    expect(auth.issued.filter((t) => t.grant === "refresh_token").length).toBe(refreshesBefore + 1);
    const after = readCodexTokens(file)!;
    expect(after.accessToken).toBe(a.accessToken);
    expect(after.refreshToken).not.toBe(stored.refreshToken); // rotated
    expect(after.accountId).toBe("acct-mock-123");
    expect(mode(file)).toBe(0o600);
  });

  it("on a 401 from the Responses endpoint: refreshed once and the request sent again", async () => {
    const file = freshFile();
    await signIn(file);
    const stored = readCodexTokens(file)!;
    const provider = createProvider("codex/gpt-5-codex", {
      authFile: file,
      baseUrl: `${wire.url}/backend-api/codex`,
      env: { LASH_CODEX_AUTH_URL: auth.url, LASH_CODEX_CLIENT_ID: CLIENT },
      retry: false,
    });
    const before = wire.requests.length;
    wire.enqueue({ error: { code: "auth" } }, { text: "hello from codex" });
    const out = await run(
      provider,
      request("codex/gpt-5-codex", undefined, { system: "Be brief.", maxOutput: 500 }),
    );
    expect(out.error).toBeUndefined();
    expect(out.events.some((e) => e.type === "textDelta" && e.text === "hello from codex")).toBe(true);
    const [first, second] = wire.requests.slice(before);
    expect(wire.requests.length - before).toBe(2);
    expect(first!.headers.authorization).toBe(`Bearer ${stored.accessToken}`);
    const fresh = readCodexTokens(file)!;
    expect(fresh.accessToken).not.toBe(stored.accessToken);
    expect(second!.headers.authorization).toBe(`Bearer ${fresh.accessToken}`);
    expect(second!.headers["chatgpt-account-id"]).toBe("acct-mock-123");
    expect(second!.headers.originator).toBe("lash");
    // the fields the ChatGPT backend wants (and not the ones it rejects)
    const body = second!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      instructions: "Be brief.",
      store: false,
      stream: true,
      model: "gpt-5-codex",
    });
    expect(body.include).toContain("reasoning.encrypted_content");
    expect(body).not.toHaveProperty("max_output_tokens");
  });

  it("a revoked refresh token fails with a clear 'run `lash login codex`' error, not retried", async () => {
    const file = freshFile();
    await signIn(file);
    auth.revokeRefreshTokens();
    await expect(refreshCodexTokens(config, readCodexTokens(file)!)).rejects.toMatchObject({
      _tag: "CodexAuthError",
      reason: "signInRequired",
    });
    const stored = readCodexTokens(file)!;
    const provider = createProvider("codex/gpt-5-codex", {
      authFile: file,
      baseUrl: `${wire.url}/backend-api/codex`,
      env: { LASH_CODEX_AUTH_URL: auth.url, LASH_CODEX_CLIENT_ID: CLIENT },
      retry: { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 },
    });
    const before = wire.requests.length;
    wire.enqueue({ error: { code: "auth" } });
    const out = await run(provider, request("codex/gpt-5-codex"));
    expect(wire.requests.length - before).toBe(1);
    expect(out.error).toMatchObject({ kind: "auth", retryable: false, provider: "codex" });
    expect(out.error?.message).toContain("rejected the refresh token");
    expect(out.error?.message).toContain("run `lash login codex`");
    expect(out.error?.message).not.toContain(stored.refreshToken);
  });

  it("not signed in: building the provider says to run `lash login codex`", () => {
    const file = freshFile();
    expect(() => createProvider("codex/gpt-5-codex", { authFile: file, env: {} })).toThrow(
      /run `lash login codex`/,
    );
  });
});
