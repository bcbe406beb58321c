// Approvals over HTTP (issue 19, acceptance 2), against a real `lash serve` with tokens and
// the mock wire server: a run waits on a pending approval and a second client resolves it;
// a denial's text reaches the model; an approval survives `kill -9` of the daemon.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { chatMessages, type Sandbox, textOf } from "./cli-support.ts";
import { as, createToken, readUntil, untilFinished, writeConfig } from "./serve-auth-support.ts";
import { type Daemon, serveTests } from "./serve-support.ts";

vi.setConfig({ testTimeout: 120_000 });

const t = serveTests();
/** `lash serve` with bearer tokens, killed after the test. */
const daemon = (s: Sandbox): Promise<Daemon> => t.daemon(s, [], { auth: true });

/** alice's session with one turn started; resolves once the run waits on its approval. */
async function pendingApproval(d: Daemon, alice: string) {
  const session = await as(d, alice, "POST", "/v1/sessions", { title: "approvals" });
  expect(session.status).toBe(201);
  const sessionId = session.body.id as string;
  const run = await as(d, alice, "POST", `/v1/sessions/${sessionId}/turns`, { text: "write the note" });
  expect(run.status).toBe(202);
  const runId = run.body.id as string;
  const events = await readUntil(d, alice, `/v1/runs/${runId}/events`, (e) => e.type === "approvalWaiting");
  const requested = events.find((e) => e.type === "approvalRequested");
  const requestId = requested?.data.requestId as string;
  expect(events.at(-1)?.data).toEqual({ requestId, reasked: false });
  return { sessionId, runId, requestId, lastSeq: events.at(-1)?.seq as number };
}

const writeNote = {
  toolCalls: [{ id: "call-1", name: "write_file", arguments: { path: "note.txt", content: "hi" } }],
};

describe("lash serve: approvals over HTTP", () => {
  it("a run waits on a pending approval; a second client (an admin) approves it over HTTP and the run goes on", async () => {
    const sb = await t.sandbox([writeNote, { text: "written" }]);
    writeConfig(sb, { tools: { write_file: { approval: "always" } } });
    const alice = await createToken(sb, "alice");
    const root = await createToken(sb, "root", true);
    const d = await daemon(sb);
    const { sessionId, runId, requestId, lastSeq } = await pendingApproval(d, alice);

    expect((await as(d, alice, "GET", `/v1/runs/${runId}`)).body.state).toBe("waitingApproval");
    expect(existsSync(join(sb.cwd, "note.txt"))).toBe(false);
    const listed = await as(d, root, "GET", "/v1/approvals?state=pending");
    expect(listed.status).toBe(200);
    const approvals = listed.body.approvals as Record<string, unknown>[];
    expect(approvals.map((a) => [a.id, a.runId, a.state, a.requestedBy])).toEqual([
      [requestId, runId, "pending", "alice"],
    ]);
    expect(approvals[0]?.items).toEqual([
      expect.objectContaining({
        callId: "call-1",
        tool: "write_file",
        args: { path: "note.txt", content: "hi" },
      }),
    ]);

    const decided = await as(d, root, "POST", `/v1/approvals/${requestId}`, { decision: "approve" });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ id: requestId, state: "approved", decidedBy: "root" });

    const rest = await untilFinished(d, alice, sessionId, lastSeq);
    const resolved = rest.find((e) => e.type === "approvalResolved");
    expect(resolved?.data).toMatchObject({ requestId, by: "root" });
    expect(rest.at(-1)?.type).toBe("runFinished");
    expect(rest.at(-1)?.data).toMatchObject({ state: "completed", text: "written" });
    expect(readFileSync(join(sb.cwd, "note.txt"), "utf8")).toBe("hi");
    // answered once: a second answer is a conflict, and nothing is pending any more
    const again = await as(d, root, "POST", `/v1/approvals/${requestId}`, { decision: "deny" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ _tag: "Conflict", code: "approval_decided" });
    expect((await as(d, alice, "GET", "/v1/approvals?state=pending")).body.approvals).toEqual([]);
  });

  it("a denial's reason reaches the model, naming who denied it; bad answers are 400/404", async () => {
    const sb = await t.sandbox([writeNote, { text: "understood" }]);
    writeConfig(sb, { tools: { write_file: { approval: "always" } } });
    const alice = await createToken(sb, "alice");
    const d = await daemon(sb);
    const { sessionId, requestId, lastSeq } = await pendingApproval(d, alice);

    const unknown = await as(d, alice, "POST", `/v1/approvals/${requestId}`, {
      decision: "approve",
      callIds: ["call-9"],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ _tag: "BadRequest", code: "unknown_call" });
    const argsOnDeny = await as(d, alice, "POST", `/v1/approvals/${requestId}`, {
      decision: "deny",
      args: { "call-1": { path: "x", content: "y" } },
    });
    expect(argsOnDeny.status).toBe(400);
    expect(argsOnDeny.body).toMatchObject({ code: "args_on_deny" });
    expect((await as(d, alice, "POST", "/v1/approvals/nope", { decision: "deny" })).status).toBe(404);

    const denied = await as(d, alice, "POST", `/v1/approvals/${requestId}`, {
      decision: "deny",
      reason: "write it to a branch instead",
    });
    expect(denied.body).toMatchObject({ state: "denied", decidedBy: "alice" });
    const rest = await untilFinished(d, alice, sessionId, lastSeq);
    expect(rest.at(-1)?.data).toMatchObject({ state: "completed", text: "understood" });
    expect(existsSync(join(sb.cwd, "note.txt"))).toBe(false);
    // the model's next request carries the denial as the tool result
    const second = sb.server.requests[1];
    const toolResult = chatMessages(second?.body).find(
      (m) => m.role === "tool" && m.tool_call_id === "call-1",
    );
    expect(textOf(toolResult?.content)).toBe(
      "Denied: write_file was not run; the approver (alice) denied it: write it to a branch instead. Do not retry the same call unchanged: change the arguments or the approach, or ask the user.",
    );
  });

  it("kill -9 while pending: after a restart the same approval is pending again, and approving runs the tool once", async () => {
    const sb = await t.sandbox([
      { toolCalls: [{ id: "call-1", name: "shell", arguments: { command: "echo ran >> count.txt" } }] },
      { text: "counted" },
    ]);
    writeConfig(sb, { tools: { shell: { approval: "always" } } });
    const alice = await createToken(sb, "alice");
    const first = await daemon(sb);
    const { sessionId, runId, requestId, lastSeq } = await pendingApproval(first, alice);
    const before = (await as(first, alice, "GET", `/v1/approvals/${requestId}`)).body;
    first.proc.child.kill("SIGKILL");
    await first.proc.done;
    expect(sb.server.requests).toHaveLength(1);

    // the same state and LASH_HOME: the run resumes from the journal and asks again
    const second = await daemon(sb);
    const resumed = await readUntil(
      second,
      alice,
      `/v1/sessions/${sessionId}/events`,
      (e) => e.type === "approvalWaiting",
      lastSeq,
    );
    expect(resumed.at(-1)?.data).toEqual({ requestId, reasked: true });
    expect(resumed.map((e) => e.type)).toContain("runResumed");
    const again = (await as(second, alice, "GET", `/v1/approvals/${requestId}`)).body;
    expect(again).toMatchObject({ id: requestId, state: "pending", runId, createdAt: before.createdAt });
    expect((await as(second, alice, "GET", `/v1/runs/${runId}`)).body.state).toBe("waitingApproval");

    const decided = await as(second, alice, "POST", `/v1/approvals/${requestId}`, { decision: "approve" });
    expect(decided.body).toMatchObject({ state: "approved", decidedBy: "alice" });
    const rest = await untilFinished(second, alice, sessionId, resumed.at(-1)?.seq);
    expect(rest.at(-1)?.data).toMatchObject({ state: "completed", text: "counted" });
    expect(readFileSync(join(sb.cwd, "count.txt"), "utf8")).toBe("ran\n");
    // the model was not asked again for the call it had already made
    expect(sb.server.requests).toHaveLength(2);
  });
});
