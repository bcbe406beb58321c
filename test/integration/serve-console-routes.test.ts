// The daemon routes the console's pages read (issue 24), against a real `lash serve` child
// process and the mock wire server: a session's graph nodes, forks and a side-by-side compare
// of two branches, the session exported (HTML, JSON, Markdown), the trace of a session and of
// one run rebuilt from the event log (secrets redacted), per-agent metrics as JSON — through
// @lash/client where it has a method — and the same ACL as the other session routes.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient, type SessionNode } from "@lash/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { lash, type Sandbox, sandbox } from "./cli-support.ts";
import { as, createToken } from "./serve-auth-support.ts";
import { api, type Daemon, startDaemon } from "./serve-support.ts";

vi.setConfig({ testTimeout: 120_000 });

let sb: Sandbox | undefined;
const daemons: Daemon[] = [];

afterEach(async () => {
  for (const d of daemons.splice(0))
    if (d.proc.child.exitCode === null && d.proc.child.signalCode === null) {
      d.proc.child.kill("SIGKILL");
      await d.proc.done;
    }
  await sb?.cleanup();
  sb = undefined;
});

/** A value the daemon's environment holds as a secret (a `*_TOKEN` variable). */
const SECRET = "s3cr3t-value-of-the-daemon-4711";

const textOfMessage = (payload: unknown): string => {
  const parts = (payload as { parts?: { type: string; text?: string }[] }).parts ?? [];
  return parts.map((p) => (p.type === "text" ? (p.text ?? "") : "")).join("");
};
const roleOf = (n: SessionNode): string => (n.payload as { role?: string }).role ?? "";
const messagesOf = (nodes: readonly SessionNode[]) =>
  nodes.filter((n) => n.kind === "message").map((n) => [roleOf(n), textOfMessage(n.payload)]);

describe("lash serve: the console's routes", () => {
  it("nodes, fork, compare, export, traces and per-agent metrics of real runs", async () => {
    sb = await sandbox([
      { toolCalls: [{ id: "call-1", name: "read_file", arguments: { path: "note.txt" } }] },
      { text: "first answer" },
      { text: "answer on branch A" },
      { text: "answer on branch B" },
    ]);
    writeFileSync(join(sb.cwd, "note.txt"), `the note says ${SECRET}\n`);
    const d = await startDaemon({ ...sb, env: { ...sb.env, LASH_TEST_SERVICE_TOKEN: SECRET } });
    daemons.push(d);
    const client = createClient({ baseUrl: d.url });

    // one turn with a tool call
    const s1 = await client.sessions.create({ title: "origin" });
    const run1 = await client.turns.start(s1.id, "read the note", { wait: true });
    expect(run1.state).toBe("completed");
    const nodes1 = await client.sessions.nodes(s1.id);
    expect(nodes1.every((n) => n.sessionId === s1.id)).toBe(true);
    expect(nodes1.map((n) => n.parentId)).toEqual([null, ...nodes1.slice(0, -1).map((n) => n.id)]);
    expect(messagesOf(nodes1).map(([role]) => role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messagesOf(nodes1).at(-1)).toEqual(["assistant", "first answer"]);
    const leaf1 = nodes1.at(-1)!;

    // fork at the leaf: the new session's path starts with the origin's nodes, and says so
    const s2 = await client.sessions.fork(s1.id, { title: "branch B" });
    expect(s2.origin).toEqual({ sessionId: s1.id, nodeId: leaf1.id });
    expect((await client.sessions.nodes(s2.id)).map((n) => n.id)).toEqual(nodes1.map((n) => n.id));
    expect((await client.sessions.list()).find((s) => s.id === s2.id)?.origin?.sessionId).toBe(s1.id);
    // fork at an earlier node (the first message): its path ends there
    const s3 = await client.sessions.fork(s1.id, { atNode: nodes1[0]!.id });
    expect((await client.sessions.nodes(s3.id)).map((n) => n.id)).toEqual([nodes1[0]!.id]);

    // one more turn on each branch, then the two side by side
    expect((await client.turns.start(s1.id, "go on as A", { wait: true })).state).toBe("completed");
    const runB = await client.turns.start(s2.id, "go on as B", { wait: true });
    expect(runB.state).toBe("completed");
    const cmp = await client.sessions.compare(s1.id, s2.id);
    expect(cmp).toMatchObject({ a: s1.id, b: s2.id, ancestor: leaf1.id, shared: nodes1.length });
    expect(messagesOf(cmp.onlyA)).toEqual([
      ["user", "go on as A"],
      ["assistant", "answer on branch A"],
    ]);
    expect(messagesOf(cmp.onlyB)).toEqual([
      ["user", "go on as B"],
      ["assistant", "answer on branch B"],
    ]);
    expect(cmp.onlyB.every((n) => n.sessionId === s2.id)).toBe(true);
    // unrelated sessions share nothing
    const fresh = await client.sessions.create({ title: "unrelated" });
    expect(await client.sessions.compare(s1.id, fresh.id)).toMatchObject({ ancestor: null, shared: 0 });
    const missing = await api(d.url, "GET", `/v1/sessions/${s1.id}/compare/ses_nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ _tag: "NotFound", code: "session_not_found" });
    expect(missing.body.message).toContain("GET /v1/sessions");

    // the export, in each format, with the secret the tool read redacted
    const html = await fetch(`${d.url}/v1/sessions/${s1.id}/export`);
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(html.headers.get("content-security-policy")).toContain("default-src 'none'");
    const page = await html.text();
    expect(page).toContain("<!doctype html>");
    expect(page).toContain("answer on branch A");
    expect(page).not.toContain(SECRET);
    const json = JSON.parse(await client.sessions.export(s1.id, "json")) as {
      session: { id: string };
      nodes: unknown[];
    };
    expect(json.session.id).toBe(s1.id);
    expect(JSON.stringify(json)).toContain("the note says");
    expect(JSON.stringify(json)).not.toContain(SECRET);
    const md = await fetch(`${d.url}/v1/sessions/${s1.id}/export?format=md`);
    expect(md.headers.get("content-type")).toContain("text/markdown");
    expect(await md.text()).toContain("first answer");
    const badFormat = await fetch(`${d.url}/v1/sessions/${s1.id}/export?format=pdf`);
    expect(badFormat.status).toBe(400);

    // the session's trace (every run), and one run's (its turn only), from the event log
    const traceLines = (await client.sessions.trace(s1.id, { format: "jsonl", level: "extended" }))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; turnId?: string; sessionId?: string });
    const turnsOf = (records: { kind: string; turnId?: string }[]) =>
      new Set(records.filter((r) => r.kind === "turn_started").map((r) => r.turnId));
    expect(turnsOf(traceLines).size).toBe(2);
    expect(traceLines.some((r) => r.kind === "tool_completed")).toBe(true);
    const fullTrace = JSON.stringify(traceLines);
    expect(fullTrace).toContain("read_file");
    expect(fullTrace).not.toContain(SECRET);
    const runTrace = (await client.runs.trace(run1.id, { format: "jsonl", level: "extended" }))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; turnId?: string });
    expect([...turnsOf(runTrace)]).toEqual([run1.turnId]);
    const viewer = await fetch(`${d.url}/v1/runs/${runB.id}/trace`);
    expect(viewer.headers.get("content-type")).toContain("text/html");
    const viewerPage = await viewer.text();
    expect(viewerPage).toContain('id="trace-data"');
    expect(viewerPage).toContain(`run ${runB.id}`);

    // per-agent metrics: three completed runs of plain sessions, four model calls, one tool call
    const metrics = await client.metrics.agents();
    expect(metrics.since).toBeGreaterThan(0);
    expect(metrics.agents.map((a) => a.agent)).toEqual([""]);
    const plain = metrics.agents[0]!;
    expect(plain.runs).toEqual({ completed: 3, failed: 0, cancelled: 0 });
    expect(plain.llm.calls).toBe(4);
    expect(plain.tools).toEqual({ calls: 1, errors: 0 });
    expect(plain.recentRuns.map((r) => r.state)).toEqual(["completed", "completed", "completed"]);
    expect(plain.runLatencyMs.p50).not.toBeNull();
    expect(plain.runLatencyMs.p95!).toBeGreaterThanOrEqual(plain.runLatencyMs.p50!);
    expect(plain.llm.latencyMs.p50).not.toBeNull();
  });

  it("the routes keep the sessions' ACL; metrics need a token; an agent's runs are counted under its name", async () => {
    sb = await sandbox([
      { text: "hello from the agent", usage: { input: 120, output: 7 } },
      { toolCalls: [{ id: "c1", name: "reviewer", arguments: { path: "a.ts" } }] },
      { text: "LGTM from the reviewer" },
      { text: "The reviewer says LGTM." },
    ]);
    const opts = { env: sb.env, cwd: sb.cwd };
    expect((await lash(["init"], opts)).code).toBe(0);
    writeFileSync(
      join(sb.cwd, "agents", "lead.agent.md"),
      "---\nname: lead\ndescription: Leads a review.\ntools: [reviewer]\n---\nLEAD-PROMPT\n",
    );
    writeFileSync(
      join(sb.cwd, "agents", "reviewer.agent.md"),
      "---\nname: reviewer\ndescription: reviews one file\ninput: { path: str }\n---\nREVIEWER-PROMPT\n",
    );
    expect((await lash(["build"], opts)).code).toBe(0);
    const alice = await createToken(sb, "alice");
    const bob = await createToken(sb, "bob");
    const d = await startDaemon(sb, [], { auth: true });
    daemons.push(d);

    const chat = await as(d, alice, "POST", "/v1/agents/hello/chat", { input: "hi" });
    expect(chat.body).toMatchObject({ state: "completed", text: "hello from the agent" });
    const sessionId = chat.body.sessionId as string;
    const runId = chat.body.runId as string;
    const bobs = await as(d, bob, "POST", "/v1/sessions", { title: "bob's" });

    // a subagent's child session: listed with children=true, under its parent, for its root's owner only
    const lead = await as(d, alice, "POST", "/v1/agents/lead/chat", { input: "review a.ts" });
    expect(lead.body).toMatchObject({ state: "completed", text: "The reviewer says LGTM." });
    const leadSession = lead.body.sessionId as string;
    const listed = async (token: string, children: boolean) =>
      (
        (await as(d, token, "GET", `/v1/sessions${children ? "?children=true" : ""}`)).body.sessions as {
          id: string;
          parent?: { sessionId: string };
        }[]
      ).filter((s) => s.parent?.sessionId === leadSession);
    expect(await listed(alice, false)).toEqual([]);
    const children = await listed(alice, true);
    expect(children).toHaveLength(1);
    expect(children[0]!.parent).toMatchObject({ sessionId: leadSession, callId: expect.any(String) });
    expect(await listed(bob, true)).toEqual([]);

    for (const path of [
      `/v1/sessions/${sessionId}/nodes`,
      `/v1/sessions/${sessionId}/compare/${bobs.body.id}`,
      `/v1/sessions/${bobs.body.id}/compare/${sessionId}`,
      `/v1/sessions/${sessionId}/export?format=json`,
      `/v1/sessions/${sessionId}/trace`,
      `/v1/runs/${runId}/trace`,
    ]) {
      const r = await as(d, bob, "GET", path);
      expect([path, r.status, r.body._tag]).toEqual([path, 403, "Forbidden"]);
    }
    expect((await as(d, undefined, "GET", `/v1/sessions/${sessionId}/nodes`)).status).toBe(401);
    expect((await as(d, undefined, "GET", "/v1/metrics/agents")).status).toBe(401);
    // the owner reads them
    expect((await as(d, alice, "GET", `/v1/sessions/${sessionId}/nodes`)).status).toBe(200);
    const exported = await fetch(`${d.url}/v1/sessions/${sessionId}/export?format=md`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    expect(exported.status).toBe(200);
    expect(await exported.text()).toContain("hello from the agent");

    // a view link: made with alice's token, opened without one (a new browser tab)
    const link = await as(d, alice, "POST", "/v1/views", { kind: "runTrace", id: runId });
    expect(link.status).toBe(201);
    expect(link.body.url).toMatch(/^\/v1\/views\/[A-Za-z0-9_-]{32}$/);
    expect(link.body.expiresAt).toBeGreaterThan(Date.now());
    const opened = await fetch(`${d.url}${link.body.url}`);
    expect(opened.status).toBe(200);
    expect(opened.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await opened.text()).toContain(`run ${runId}`);
    const exportLink = await createClient({ baseUrl: d.url, token: alice }).views.link({
      kind: "export",
      id: sessionId,
      format: "md",
    });
    expect(await (await fetch(`${d.url}${exportLink.url}`)).text()).toContain("hello from the agent");
    // an unknown ticket is refused; bob gets no link to alice's session; a bad format names the good ones
    const refused = await fetch(`${d.url}/v1/views/${"A".repeat(32)}`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ _tag: "Unauthorized", code: "invalid_view_link" });
    expect((await as(d, bob, "POST", "/v1/views", { kind: "sessionTrace", id: sessionId })).status).toBe(403);
    const badView = await as(d, alice, "POST", "/v1/views", {
      kind: "sessionTrace",
      id: sessionId,
      format: "md",
    });
    expect(badView.status).toBe(400);
    expect(badView.body.message).toContain("html or jsonl");

    const metrics = await createClient({ baseUrl: d.url, token: bob }).metrics.agents();
    const hello = metrics.agents.find((a) => a.agent === "hello");
    expect(hello?.runs.completed).toBe(1);
    expect(hello?.llm.calls).toBe(1);
    expect(hello?.tokens).toMatchObject({ input: 120, output: 7 });
  });
});
