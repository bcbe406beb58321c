// Principals over HTTP (issue 19, acceptance 3), against a real `lash serve`: tokens from
// `lash serve token`, no token 401, a revoked token 401 at once, sessions and approvals
// invisible to other principals (403), an agent's `acl`, and the two-step rule.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { lash, type Sandbox } from "./cli-support.ts";
import { as, createToken, readUntil, untilFinished, writeConfig } from "./serve-auth-support.ts";
import { type Daemon, serveTests } from "./serve-support.ts";

vi.setConfig({ testTimeout: 120_000 });

const t = serveTests();
/** `lash serve` with bearer tokens, killed after the test. */
const daemon = (s: Sandbox): Promise<Daemon> => t.daemon(s, [], { auth: true });

describe("lash serve token", () => {
  it("create prints the token once; list never shows it; revoke takes effect in a running daemon", async () => {
    const sb = await t.sandbox([]);
    const env = { env: sb.env, cwd: sb.cwd };
    const alice = await createToken(sb, "alice");
    const created = await lash(["serve", "token", "create", "--principal", "root", "--admin", "--json"], env);
    const root = JSON.parse(created.stdout) as { id: string; token: string; admin: boolean };
    expect(root.admin).toBe(true);

    const list = await lash(["serve", "token", "list"], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+PRINCIPAL\s+ADMIN\s+CREATED\s+LAST USED\s+REVOKED\n/);
    expect(list.stdout).toContain("alice");
    expect(list.stdout).not.toContain(alice.slice(5));
    expect(list.stdout).not.toContain(root.token.slice(5));
    const json = JSON.parse((await lash(["serve", "token", "list", "--json"], env)).stdout) as {
      tokens: { id: string; principal: string }[];
    };
    expect(json.tokens.map((t) => t.principal)).toEqual(["alice", "root"]);
    const aliceId = json.tokens[0]?.id as string;

    const d = await daemon(sb);
    expect((await as(d, alice, "GET", "/v1/sessions")).status).toBe(200);
    const revoked = await lash(["serve", "token", "revoke", aliceId], env);
    expect(revoked.stdout).toBe(`revoked token ${aliceId} (principal alice)\n`);
    const after = await as(d, alice, "GET", "/v1/sessions");
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ _tag: "Unauthorized", code: "invalid_token" });
    expect((await as(d, root.token, "GET", "/v1/sessions")).status).toBe(200);

    const unknown = await lash(["serve", "token", "revoke", "tok_nope"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no token "tok_nope"');
    const bad = await lash(["serve", "token", "create"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--principal <name> is required");
  });
});

describe("lash serve: principals", () => {
  it("no token 401 (naming the header and the command); a wrong token 401", async () => {
    const sb = await t.sandbox([]);
    const d = await daemon(sb);
    const none = await as(d, undefined, "GET", "/v1/sessions");
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ _tag: "Unauthorized", code: "missing_token" });
    expect(none.body.message).toContain("Authorization: Bearer <token>");
    expect(none.body.message).toContain("lash serve token create --principal <name>");
    const wrong = await as(d, "lash_not-a-token", "POST", "/v1/sessions", {});
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe("invalid_token");
    // health stays open
    expect((await as(d, undefined, "GET", "/health")).status).toBe(200);
  });

  it("a session is invisible to another principal (403), visible to its owner and admins", async () => {
    const sb = await t.sandbox([{ text: "hi alice" }]);
    const alice = await createToken(sb, "alice");
    const bob = await createToken(sb, "bob");
    const root = await createToken(sb, "root", true);
    const d = await daemon(sb);
    const created = await as(d, alice, "POST", "/v1/sessions", { title: "alice's" });
    expect(created.body.owner).toBe("alice");
    const id = created.body.id as string;
    await as(d, bob, "POST", "/v1/sessions", { title: "bob's" });

    const ids = async (token: string) =>
      ((await as(d, token, "GET", "/v1/sessions")).body.sessions as { id: string; owner: string }[]).map(
        (s) => s.owner,
      );
    expect(await ids(alice)).toEqual(["alice"]);
    expect(await ids(bob)).toEqual(["bob"]);
    expect((await ids(root)).sort()).toEqual(["alice", "bob"]);

    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${id}`, undefined],
      ["GET", `/v1/sessions/${id}/messages`, undefined],
      ["POST", `/v1/sessions/${id}/turns`, { text: "let me in" }],
      ["DELETE", `/v1/sessions/${id}`, undefined],
    ] as const) {
      const r = await as(d, bob, method, path, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body).toMatchObject({ _tag: "Forbidden", code: "forbidden" });
      expect(r.body.message).toContain("visible only to the principal that created it and to admins");
    }
    expect((await as(d, bob, "GET", "/v1/sessions/nope")).status).toBe(404);
    expect((await as(d, root, "GET", `/v1/sessions/${id}`)).status).toBe(200);
    const run = await as(d, alice, "POST", `/v1/sessions/${id}/turns?wait=true`, { text: "hello" });
    expect(run.body).toMatchObject({ state: "completed", principal: "alice", text: "hi alice" });
    // the run and its events are alice's too
    expect((await as(d, bob, "GET", `/v1/runs/${run.body.id}`)).status).toBe(403);
    expect((await as(d, bob, "GET", `/v1/runs/${run.body.id}/events`)).status).toBe(403);
  });

  it("an agent's acl: only the principals it lists may run it (admins too); 403 names the agent and the fix", async () => {
    const sb = await t.sandbox([]);
    mkdirSync(join(sb.cwd, "agents"));
    writeFileSync(
      join(sb.cwd, "agents", "reviewer.agent.md"),
      "---\nname: reviewer\ndescription: Reviews changes.\nacl:\n  alice: execute\n  bob: read\n---\nYou review changes.\n",
    );
    const build = await lash(["build"], { env: sb.env, cwd: sb.cwd });
    expect(build.code, build.stderr).toBe(0);
    const alice = await createToken(sb, "alice");
    const bob = await createToken(sb, "bob");
    const carol = await createToken(sb, "carol");
    const d = await daemon(sb);
    for (const [token, grant] of [
      [bob, 'grants it only "read"'],
      [carol, "does not list it"],
    ] as const) {
      const r = await as(d, token, "POST", "/v1/sessions", { agent: "reviewer" });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("forbidden");
      expect(r.body.message).toContain('may not execute agent "reviewer"');
      expect(r.body.message).toContain(grant);
      expect(r.body.message).toContain("to `acl:` in agents/reviewer.agent.md and run `lash build`");
    }
    // alice passes the acl (what happens next is the agent wiring's business)
    const ok = await as(d, alice, "POST", "/v1/sessions", { agent: "reviewer" });
    expect(ok.body.code).not.toBe("forbidden");
    const missing = await as(d, alice, "POST", "/v1/sessions", { agent: "nope" });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toContain("lash build");
  });

  it("the two-step rule: the run's starter may not approve, may deny; another principal approves", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ id: "call-1", name: "shell", arguments: { command: "echo one >> steps.txt" } }] },
      { toolCalls: [{ id: "call-2", name: "shell", arguments: { command: "echo two >> steps.txt" } }] },
      { text: "done" },
    ]);
    writeConfig(sb, { tools: { shell: { approval: "always" } }, secondApprover: "low" });
    const alice = await createToken(sb, "alice");
    const bob = await createToken(sb, "bob");
    const root = await createToken(sb, "root", true);
    const d = await daemon(sb);
    const id = (await as(d, alice, "POST", "/v1/sessions", {})).body.id as string;
    const runId = (await as(d, alice, "POST", `/v1/sessions/${id}/turns`, { text: "two steps" })).body
      .id as string;
    const waiting = (after?: number) =>
      readUntil(d, alice, `/v1/runs/${runId}/events`, (e) => e.type === "approvalWaiting", after);

    const first = await waiting();
    const req1 = first.at(-1)?.data.requestId as string;
    const approval = (await as(d, alice, "GET", `/v1/approvals/${req1}`)).body;
    expect(approval).toMatchObject({ requestedBy: "alice", requiresOtherPrincipal: true });
    // bob cannot even see it; alice (the starter) may not approve it
    expect((await as(d, bob, "POST", `/v1/approvals/${req1}`, { decision: "approve" })).status).toBe(403);
    const refused = await as(d, alice, "POST", `/v1/approvals/${req1}`, { decision: "approve" });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ _tag: "Forbidden", code: "second_principal_required" });
    expect(refused.body.message).toContain("an admin other than alice may approve it; alice may still deny");
    const approved = await as(d, root, "POST", `/v1/approvals/${req1}`, { decision: "approve" });
    expect(approved.body).toMatchObject({ state: "approved", decidedBy: "root" });

    const second = await waiting(first.at(-1)?.seq);
    const req2 = second.at(-1)?.data.requestId as string;
    expect(req2).not.toBe(req1);
    const denied = await as(d, alice, "POST", `/v1/approvals/${req2}`, {
      decision: "deny",
      reason: "one is enough",
    });
    expect(denied.body).toMatchObject({ state: "denied", decidedBy: "alice" });
    const end = await untilFinished(d, alice, id, second.at(-1)?.seq);
    expect(end.at(-1)?.data).toMatchObject({ state: "completed", text: "done" });
    expect(readFileSync(join(sb.cwd, "steps.txt"), "utf8")).toBe("one\n");
  });
});
