// `lash login codex` end to end against a mock authorization server and the mock wire
// server (real processes, real HTTP on 127.0.0.1): the test is the browser (it requests the
// authorize URL the CLI printed, which redirects to the CLI's loopback server). Then
// `lash doctor` shows the sign-in without a token, a `lash -p` run with a codex model
// (whose tool cats auth.json) leaves no token text in the database, trace, exports or
// output, and `lash logout` forgets it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type MockAuthServer, startMockAuthServer } from "@lash/providers/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonLines, lash, type Sandbox, sandbox, start } from "./cli-support.ts";

vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox | undefined;
let auth: MockAuthServer | undefined;
afterEach(async () => {
  await box?.cleanup();
  await auth?.close();
  box = undefined;
  auth = undefined;
});

function codexEnv(b: Sandbox, a: MockAuthServer): NodeJS.ProcessEnv {
  return {
    ...b.env,
    LASH_MODEL: "codex/gpt-5-codex",
    LASH_CODEX_BASE_URL: `${b.server.url}/backend-api/codex`,
    LASH_CODEX_AUTH_URL: a.url,
    LASH_CODEX_CALLBACK_PORT: "0",
  };
}

describe("lash login codex", () => {
  it("browser sign-in, doctor, a codex run that leaks no token, logout", async () => {
    // unsandboxed: the tool reads auth.json in LASH_HOME (under /tmp, which a sandbox would hide)
    box = await sandbox([], { shellSandbox: "off" });
    auth = await startMockAuthServer({ email: "ada@example.com", plan: "pro" });
    const env = codexEnv(box, auth);
    const opts = { env, cwd: box.cwd };

    // 1. sign in: the CLI prints the URL; the "browser" follows it back to the loopback server
    const login = start(["login", "codex", "--no-browser"], opts);
    const urlLine = await login.waitForLine((l) => l.includes("/oauth/authorize?"));
    const page = await fetch(urlLine.trim());
    expect(page.status).toBe(200);
    const done = await login.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain("signed in as ada@example.com (pro plan)");
    const file = join(box.home, "auth.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(auth.pkceChecks.map((c) => c.ok)).toEqual([true]);
    const issued = auth.issued[0]!;
    const tokens = [issued.accessToken, issued.refreshToken, issued.idToken];
    const leaks = (text: string | Buffer): number => tokens.filter((t) => text.includes(t)).length;
    expect(leaks(readFileSync(file))).toBe(3);
    expect(leaks(done.stdout + done.stderr)).toBe(0);

    // 2. doctor: who and until when, never a token
    const doctor = await lash(["doctor"], opts);
    expect(doctor.stdout).toMatch(
      /provider codex\s+signed in as ada@example\.com \(pro plan\); access token valid until/,
    );
    expect(doctor.stdout).toMatch(/model\s+codex\/gpt-5-codex/);
    expect(leaks(doctor.stdout + doctor.stderr)).toBe(0);

    // 3. a run whose tool prints auth.json
    box.server.enqueue(
      { toolCalls: [{ id: "c1", name: "shell", arguments: { command: `cat ${file}; env` } }] },
      { text: "Read it." },
    );
    const run = await lash(["-p", "look", "--output-format", "stream-json", "--trace", "trace.jsonl"], opts);
    expect(run.code, run.stderr).toBe(0);
    const sessionId = (jsonLines(run.stdout).find((l) => l.type === "session") as { sessionId: string })
      .sessionId;
    const [first, second] = box.server.requests;
    expect(first!.path).toBe("/backend-api/codex/responses");
    expect(first!.headers.authorization).toBe(`Bearer ${issued.accessToken}`);
    expect(first!.headers["chatgpt-account-id"]).toBe("acct-mock-123");
    // the model saw the file with its tokens replaced by name
    const toolOutput = JSON.stringify((second!.body as { input: unknown }).input);
    expect(toolOutput).toContain("[REDACTED:auth.json.codex.accessToken]");
    expect(toolOutput).toContain("[REDACTED:auth.json.codex.refreshToken]");
    const artifacts: Record<string, string | Buffer> = {
      output: run.stdout + run.stderr,
      trace: readFileSync(join(box.cwd, "trace.jsonl")),
    };
    for (const format of ["html", "json", "md"]) {
      const out = join(box.cwd, `export.${format}`);
      const r = await lash(["export", sessionId, "--format", format, "-o", out], opts);
      expect(r.code, r.stderr).toBe(0);
      artifacts[`export ${format}`] = readFileSync(out);
    }
    for (const f of readdirSync(box.home).filter((f) => f !== "auth.json"))
      artifacts[`home/${f}`] = readFileSync(join(box.home, f));
    expect(Object.keys(artifacts).some((k) => k.endsWith(".db"))).toBe(true);
    for (const req of box.server.requests) artifacts[`request ${req.index} body`] = req.rawBody;
    const found = Object.entries(artifacts)
      .filter(([, content]) => leaks(content) > 0)
      .map(([k]) => k);
    expect(found).toEqual([]);

    // 4. logout
    const out = await lash(["logout"], opts);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Signed out of Codex");
    expect(readdirSync(box.home)).not.toContain("auth.json");
    const after = await lash(["doctor"], opts);
    expect(after.stdout).toMatch(/provider codex\s+not signed in/);
    const noSignIn = await lash(["-p", "hi"], opts);
    expect(noSignIn.code).toBe(2);
    expect(noSignIn.stderr).toContain("run `lash login codex`");
  });

  it("--device-code: prints the code, waits while pending, signs in once approved", async () => {
    box = await sandbox();
    auth = await startMockAuthServer({ deviceInterval: 0.05 });
    const opts = { env: codexEnv(box, auth), cwd: box.cwd };
    const login = start(["login", "codex", "--device-code"], opts);
    const codeLine = await login.waitForLine((l) => /enter the code [0-9A-F]{4}-[0-9A-F]{4}/.test(l));
    const userCode = /([0-9A-F]{4}-[0-9A-F]{4})/.exec(codeLine)![1]!;
    await auth.waitForRequest("/api/accounts/deviceauth/token", 1); // a pending poll
    auth.approveDevice(userCode);
    const done = await login.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`${auth.url}/codex/device`);
    expect(statSync(join(box.home, "auth.json")).mode & 0o777).toBe(0o600);
  });

  it("a sign-in the server revoked: `lash -p` says to run `lash login codex`", async () => {
    box = await sandbox();
    // tokens that expire within the refresh margin: the first request refreshes first
    auth = await startMockAuthServer({ expiresIn: 60 });
    const opts = { env: codexEnv(box, auth), cwd: box.cwd };
    const login = start(["login", "codex", "--no-browser"], opts);
    const urlLine = await login.waitForLine((l) => l.includes("/oauth/authorize?"));
    expect((await fetch(urlLine.trim())).status).toBe(200);
    expect((await login.done).code).toBe(0);
    auth.revokeRefreshTokens();
    const run = await lash(["-p", "hi"], opts);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("rejected the refresh token");
    expect(run.stderr).toContain("run `lash login codex` to sign in again");
    expect(box.server.requests).toHaveLength(0); // nothing was sent with a stale token
    expect(auth.requests.filter((r) => r.params.grant_type === "refresh_token")).toHaveLength(1);
  });

  it("a refresh during the run: the new tokens in auth.json are redacted from tool output too", async () => {
    // unsandboxed: the tool reads auth.json in LASH_HOME (under /tmp, which a sandbox would hide)
    box = await sandbox([], { shellSandbox: "off" });
    auth = await startMockAuthServer({ expiresIn: 60 }); // within the margin: refreshed before the first request
    const opts = { env: codexEnv(box, auth), cwd: box.cwd };
    const login = start(["login", "codex", "--no-browser"], opts);
    const urlLine = await login.waitForLine((l) => l.includes("/oauth/authorize?"));
    expect((await fetch(urlLine.trim())).status).toBe(200);
    expect((await login.done).code).toBe(0);
    const file = join(box.home, "auth.json");
    box.server.enqueue(
      { toolCalls: [{ id: "c1", name: "shell", arguments: { command: `cat ${file}` } }] },
      { text: "Read it." },
    );
    const run = await lash(["-p", "look"], opts);
    expect(run.code, run.stderr).toBe(0);
    const refreshed = auth.issued[1]!;
    expect(refreshed.grant).toBe("refresh_token");
    expect(box.server.requests[0]!.headers.authorization).toBe(`Bearer ${refreshed.accessToken}`);
    const toolOutput = box.server.requests[1]!.rawBody;
    expect(toolOutput).toContain("[REDACTED:auth.json.codex.accessToken]");
    for (const t of [refreshed.accessToken, refreshed.refreshToken, auth.issued[0]!.accessToken])
      expect(toolOutput.includes(t)).toBe(false);
    for (const f of readdirSync(box.home).filter((f) => f !== "auth.json"))
      expect(readFileSync(join(box.home, f)).includes(refreshed.accessToken)).toBe(false);
  });
});
