// `lash serve` applies every policy layer of a session to its runs, against a real daemon:
// a principal's layer (config `serve.principals.<name>.policy`) on the sessions and agent chats
// it starts (with the agent's own layers: strictest wins), after a restart too; an agent's
// `maxTurns` on its runs.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { chatMessages, lash, type Sandbox, textOf } from "./cli-support.ts";
import { as, createToken, readUntil, untilFinished, writeConfig } from "./serve-auth-support.ts";
import { fileLine, serveTests, stopDaemon } from "./serve-support.ts";

vi.setConfig({ testTimeout: 120_000 });

const t = serveTests();

/** The text of the tool result the model read in request `i` (the first tool message). */
const toolResultOf = (sb: Sandbox, i: number): string =>
  textOf(chatMessages(sb.server.requests[i]!.body).find((m) => m.role === "tool")?.content);

describe("lash serve: a principal's policy layer", () => {
  it("denies alice's write_file in her sessions (the model reads why); bob's runs; a restart keeps it", async () => {
    const write = (path: string) => ({
      toolCalls: [{ name: "write_file", arguments: { path, content: "x" } }],
    });
    const sb = await t.sandbox([
      write("alice.txt"),
      { text: "alice: not written" },
      write("bob.txt"),
      { text: "bob: written" },
      write("alice-again.txt"),
      { text: "alice: still not written" },
    ]);
    writeConfig(sb, {}, { serve: { principals: { alice: { policy: { deny: ["write_file"] } } } } });
    const alice = await createToken(sb, "alice");
    const bob = await createToken(sb, "bob");
    const first = await t.daemon(sb, [], { auth: true });

    const aliceSession = (await as(first, alice, "POST", "/v1/sessions", {})).body.id as string;
    const a = await as(first, alice, "POST", `/v1/sessions/${aliceSession}/turns?wait=true`, {
      text: "write alice.txt",
    });
    expect(a.body).toMatchObject({ state: "completed", text: "alice: not written" });
    expect(existsSync(join(sb.cwd, "alice.txt"))).toBe(false);
    expect(toolResultOf(sb, 1)).toContain("principal:alice");

    const bobSession = (await as(first, bob, "POST", "/v1/sessions", {})).body.id as string;
    const b = await as(first, bob, "POST", `/v1/sessions/${bobSession}/turns?wait=true`, {
      text: "write bob.txt",
    });
    expect(b.body).toMatchObject({ state: "completed", text: "bob: written" });
    expect(existsSync(join(sb.cwd, "bob.txt"))).toBe(true);

    // a new daemon (the layers are in the session's durable state, not in the old process)
    await stopDaemon(first);
    const second = await t.daemon(sb, [], { auth: true });
    const again = await as(second, alice, "POST", `/v1/sessions/${aliceSession}/turns?wait=true`, {
      text: "write alice-again.txt",
    });
    expect(again.body).toMatchObject({ state: "completed", text: "alice: still not written" });
    expect(existsSync(join(sb.cwd, "alice-again.txt"))).toBe(false);
    expect(toolResultOf(sb, 5)).toContain("principal:alice");
    expect(sb.server.requests).toHaveLength(6);
  });

  it("kill -9 mid-run: the resumed run of alice's session still denies her write_file", async () => {
    const sb = await t.sandbox([
      {
        toolCalls: [
          { id: "s1", name: "shell", arguments: { command: "echo ran >> counter.txt && sleep 60" } },
        ],
      },
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "after.txt", content: "x" } }] },
      { text: "resumed: not written" },
    ]);
    writeConfig(sb, {}, { serve: { principals: { alice: { policy: { deny: ["write_file"] } } } } });
    const alice = await createToken(sb, "alice");
    const first = await t.daemon(sb, [], { auth: true });
    const sessionId = (await as(first, alice, "POST", "/v1/sessions", {})).body.id as string;
    const runId = (await as(first, alice, "POST", `/v1/sessions/${sessionId}/turns`, { text: "go" })).body
      .id as string;
    await fileLine(join(sb.cwd, "counter.txt"));
    await stopDaemon(first);

    const second = await t.daemon(sb, [], { auth: true });
    const end = await untilFinished(second, alice, sessionId);
    expect(end.at(-1)?.data).toMatchObject({ state: "completed", text: "resumed: not written" });
    expect((await as(second, alice, "GET", `/v1/runs/${runId}`)).body.resumes).toBe(1);
    expect(existsSync(join(sb.cwd, "after.txt"))).toBe(false);
    const written = chatMessages(sb.server.requests[2]!.body).find((m) => m.tool_call_id === "w1");
    expect(textOf(written?.content)).toContain("principal:alice");
  });

  it("a principal's layer can ask for approval and the two-step rule: alice's shell waits for another principal; bob's runs", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ id: "a1", name: "shell", arguments: { command: "echo a >> a.txt" } }] },
      { text: "alice done" },
      { toolCalls: [{ id: "b1", name: "shell", arguments: { command: "echo b >> b.txt" } }] },
      { text: "bob done" },
    ]);
    writeConfig(
      sb,
      {},
      {
        serve: {
          principals: {
            alice: { policy: { tools: { shell: { approval: "always" } }, secondApprover: "low" } },
          },
        },
      },
    );
    const alice = await createToken(sb, "alice");
    const bob = await createToken(sb, "bob");
    const root = await createToken(sb, "root", true);
    const d = await t.daemon(sb, [], { auth: true });
    const mine = (await as(d, alice, "POST", "/v1/sessions", {})).body.id as string;
    const runId = (await as(d, alice, "POST", `/v1/sessions/${mine}/turns`, { text: "a" })).body.id as string;
    const waiting = await readUntil(
      d,
      alice,
      `/v1/runs/${runId}/events`,
      (e) => e.type === "approvalWaiting",
    );
    const requestId = waiting.at(-1)?.data.requestId as string;
    const approval = (await as(d, alice, "GET", `/v1/approvals/${requestId}`)).body;
    expect(approval).toMatchObject({ requestedBy: "alice", requiresOtherPrincipal: true });
    expect(JSON.stringify(approval)).toContain("principal:alice");
    expect((await as(d, alice, "POST", `/v1/approvals/${requestId}`, { decision: "approve" })).status).toBe(
      403,
    );
    expect((await as(d, root, "POST", `/v1/approvals/${requestId}`, { decision: "approve" })).status).toBe(
      200,
    );
    expect((await untilFinished(d, alice, mine)).at(-1)?.data).toMatchObject({ text: "alice done" });

    const theirs = (await as(d, bob, "POST", "/v1/sessions", {})).body.id as string;
    const b = await as(d, bob, "POST", `/v1/sessions/${theirs}/turns?wait=true`, { text: "b" });
    expect(b.body).toMatchObject({ state: "completed", text: "bob done" });
    expect((await as(d, root, "GET", "/v1/approvals?state=all")).body.approvals).toHaveLength(1);
  });

  it("a fork keeps the source's layers (an admin's fork of alice's session still denies her write_file)", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "fork.txt", content: "x" } }] },
      { text: "fork: not written" },
    ]);
    writeConfig(sb, {}, { serve: { principals: { alice: { policy: { deny: ["write_file"] } } } } });
    const alice = await createToken(sb, "alice");
    const root = await createToken(sb, "root", true);
    const d = await t.daemon(sb, [], { auth: true });
    const source = (await as(d, alice, "POST", "/v1/sessions", {})).body.id as string;
    const fork = await as(d, root, "POST", `/v1/sessions/${source}/fork`, {});
    expect(fork.body.owner).toBe("root");
    const run = await as(d, root, "POST", `/v1/sessions/${fork.body.id}/turns?wait=true`, { text: "write" });
    expect(run.body).toMatchObject({ state: "completed", text: "fork: not written" });
    expect(existsSync(join(sb.cwd, "fork.txt"))).toBe(false);
    expect(toolResultOf(sb, 1)).toContain("principal:alice");
  });

  it("an agent chat of alice runs under the agent's layers and hers: each one's deny holds", async () => {
    const sb = await t.sandbox([
      {
        toolCalls: [
          { id: "w", name: "write_file", arguments: { path: "w.txt", content: "x" } },
          { id: "s", name: "shell", arguments: { command: "echo ran > s.txt" } },
        ],
      },
      { text: "neither ran" },
    ]);
    const opts = { env: sb.env, cwd: sb.cwd };
    expect((await lash(["init"], opts)).code).toBe(0);
    writeFileSync(
      join(sb.cwd, "agents", "worker.agent.md"),
      "---\nname: worker\ndescription: Works.\ntools: [write_file, shell]\npolicy:\n  deny: [shell]\n---\nWORKER\n",
    );
    expect((await lash(["build"], opts)).code).toBe(0);
    writeConfig(sb, {}, { serve: { principals: { alice: { policy: { deny: ["write_file"] } } } } });
    const alice = await createToken(sb, "alice");
    const d = await t.daemon(sb, [], { auth: true });
    const chat = await as(d, alice, "POST", "/v1/agents/worker/chat", { input: "work" });
    expect(chat.body).toMatchObject({ state: "completed", text: "neither ran" });
    expect(existsSync(join(sb.cwd, "w.txt"))).toBe(false);
    expect(existsSync(join(sb.cwd, "s.txt"))).toBe(false);
    const results = chatMessages(sb.server.requests[1]!.body)
      .filter((m) => m.role === "tool")
      .map((m) => textOf(m.content));
    expect(results.find((r) => r.includes("write_file"))).toContain("principal:alice");
    expect(results.find((r) => r.includes("shell"))).toContain("agent:worker");
  });
});

describe("lash serve: an agent's maxTurns", () => {
  it("a run of an agent with maxTurns: 1 makes one model call with tools, then the final notice, and stops", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] },
      { text: "never asked" },
    ]);
    const opts = { env: sb.env, cwd: sb.cwd };
    expect((await lash(["init"], opts)).code).toBe(0);
    writeFileSync(join(sb.cwd, "a.txt"), "A");
    writeFileSync(
      join(sb.cwd, "agents", "brief.agent.md"),
      "---\nname: brief\ndescription: One call.\ntools: [read_file]\nmaxTurns: 1\n---\nBRIEF\n",
    );
    expect((await lash(["build"], opts)).code).toBe(0);
    const d = await t.daemon(sb);
    const chat = await fetch(`${d.url}/v1/agents/brief/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: "read a.txt" }),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
    expect(chat.state).toBe("completed");
    const run = (await fetch(`${d.url}/v1/runs/${chat.runId}`).then((r) => r.json())) as { outcome: unknown };
    expect(run.outcome).toMatchObject({ type: "stopped", reason: "maxTurns" });
    // without the limit the second answer's tool call would run and the model be asked a third time
    expect(sb.server.requests).toHaveLength(2);
    expect(JSON.stringify(sb.server.requests[1]!.body)).toContain("[turn limit]");
  });
});
