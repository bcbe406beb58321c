// The approvals registry over a real state db file and a real runtime: core asks, a
// principal answers (`decide`), core gets the answer; what a principal may see; 404/403/
// 409/400; a re-ask after a restart keeps the id and createdAt; the two-step rule.
import { join } from "node:path";
import {
  type ApprovalAnswer,
  type ApprovalItem,
  type ApprovalRequest,
  type GovernanceShape,
  LashRuntime,
  type ToolDefinition,
} from "@lash/core";
import type { NamedLayer } from "@lash/policy";
import type { LlmRequest } from "@lash/sansio";
import { Effect, Either, Fiber } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { makeAccess } from "../src/access.ts";
import { type Approval, Principal } from "../src/api.ts";
import { makeApprovals } from "../src/approvals.ts";
import type { ApprovalsShape } from "../src/services.ts";
import { stateDb, type TestHost, tempDir, testHost, testRuns } from "./access-fixture.ts";

const alice = new Principal({ name: "alice", admin: false });
const bob = new Principal({ name: "bob", admin: false });
const root = new Principal({ name: "root", admin: true });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface World {
  readonly host: TestHost;
  readonly runs: ReturnType<typeof testRuns>;
  readonly stateFile: string;
  /** What the registry appended to the event log: [sessionId, runId, type, data]. */
  readonly appended: [string, string, string, unknown][];
  /** A registry over the state file (call again to model a daemon restart). */
  readonly registry: (layers?: readonly NamedLayer[]) => ApprovalsShape;
}

function world(options: Omit<Parameters<typeof testHost>[0], "dbFile"> = {}): World {
  const { dir, cleanup } = tempDir("lash-approvals-");
  const host = testHost({ dbFile: join(dir, "lash.db"), ...options });
  const stateFile = join(dir, "serve.db");
  const runs = testRuns();
  const appended: [string, string, string, unknown][] = [];
  cleanups.push(cleanup, () => host.close());
  return {
    host,
    runs,
    stateFile,
    appended,
    registry: (layers) => {
      const db = stateDb(stateFile);
      cleanups.push(() => {
        db.close();
      });
      return makeApprovals({
        db,
        runs,
        access: makeAccess(host),
        events: {
          append: (sessionId, runId, type, data) => {
            appended.push([sessionId, runId, type, data]);
            return undefined as never;
          },
        },
        ...(layers ? { policyLayers: () => layers } : {}),
      });
    },
  };
}

const item = (callId: string, tool: string, risk?: "low" | "medium" | "high"): ApprovalItem => ({
  callId,
  tool,
  args: { text: callId },
  effects: ["write"],
  reason: `${tool} changes files`,
  layer: "global",
  ...(risk ? { risk: { level: risk, category: "write", reasons: ["a reason"] } } : {}),
  previewHash: "p",
});

const request = (sessionId: string, ...items: ApprovalItem[]): ApprovalRequest => ({
  id: "req-1",
  sessionId,
  turnId: "turn-1",
  items,
});

const either = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e));

/** Ask in the background; resolves once the run is marked waiting. */
async function ask(w: World, approvals: ApprovalsShape, req: ApprovalRequest, runId = "run-1") {
  const waiting = w.runs.nextWaiting(runId);
  const fiber = Effect.runFork(approvals.approver.ask(req, new AbortController().signal));
  expect(await waiting).toBe(true);
  return fiber;
}

const failure = (r: Either.Either<Approval, { _tag: string; code: string; message: string }>) => {
  if (Either.isRight(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.right)}`);
  return r.left;
};

describe("ask and decide", () => {
  it("a pending approval is seen by the session's owner and admins; the owner's answer reaches core", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: alice });
    const approvals = w.registry();
    const fiber = await ask(w, approvals, request(session, item("c1", "write_file"), item("c2", "shell")));

    const listed = await Effect.runPromise(approvals.list(alice, "pending"));
    expect(listed.map((a) => [a.id, a.state, a.runId, a.requestedBy, a.requiresOtherPrincipal])).toEqual([
      ["req-1", "pending", "run-1", "alice", false],
    ]);
    expect(await Effect.runPromise(approvals.list(root, "pending"))).toHaveLength(1);
    expect(await Effect.runPromise(approvals.list(bob, "all"))).toEqual([]);
    expect(failure(await either(approvals.get(bob, "req-1"))).code).toBe("forbidden");

    const decided = await Effect.runPromise(
      approvals.decide(alice, "req-1", { decision: "approve", args: { c1: { text: "edited" } } }),
    );
    expect(decided.state).toBe("approved");
    expect(decided.decidedBy).toBe("alice");
    expect(typeof decided.decidedAt).toBe("number");
    const answer: ApprovalAnswer = await Effect.runPromise(Fiber.join(fiber));
    expect(answer).toEqual({
      by: "alice",
      decisions: [
        { callId: "c1", decision: "approve", args: { text: "edited" } },
        { callId: "c2", decision: "approve" },
      ],
    });
    expect(w.runs.waitingCalls).toEqual([
      ["run-1", true],
      ["run-1", false],
    ]);
    expect(await Effect.runPromise(approvals.list(alice, "pending"))).toEqual([]);
    expect((await Effect.runPromise(approvals.get(alice, "req-1"))).decisions).toHaveLength(2);
  });

  it("404 unknown, 403 not visible, 409 already decided, 400 for unknown calls and args on a deny", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: alice });
    const approvals = w.registry();
    const fiber = await ask(w, approvals, request(session, item("c1", "write_file"), item("c2", "shell")));

    expect(failure(await either(approvals.decide(alice, "nope", { decision: "approve" })))).toMatchObject({
      _tag: "NotFound",
      code: "approval_not_found",
    });
    expect(failure(await either(approvals.decide(bob, "req-1", { decision: "approve" })))).toMatchObject({
      _tag: "Forbidden",
      code: "forbidden",
    });
    const unknown = failure(
      await either(approvals.decide(alice, "req-1", { decision: "deny", callIds: ["c9"] })),
    );
    expect(unknown).toMatchObject({ _tag: "BadRequest", code: "unknown_call" });
    expect(unknown.message).toContain("its calls: c1 (write_file), c2 (shell)");
    const argsOnDeny = failure(
      await either(approvals.decide(alice, "req-1", { decision: "deny", args: { c1: {} } })),
    );
    expect(argsOnDeny).toMatchObject({ _tag: "BadRequest", code: "args_on_deny" });
    const stray = failure(
      await either(
        approvals.decide(alice, "req-1", { decision: "approve", callIds: ["c1"], args: { c2: {} } }),
      ),
    );
    expect(stray).toMatchObject({ _tag: "BadRequest", code: "unknown_call" });

    // one call now, the other later: still pending in between, `mixed` at the end
    const partial = await Effect.runPromise(
      approvals.decide(alice, "req-1", { decision: "approve", callIds: ["c1"] }),
    );
    expect(partial.state).toBe("pending");
    expect(partial.decisions).toEqual([{ callId: "c1", decision: "approve" }]);
    expect(
      failure(await either(approvals.decide(alice, "req-1", { decision: "deny", callIds: ["c1"] }))),
    ).toMatchObject({ _tag: "Conflict", code: "call_decided" });
    const done = await Effect.runPromise(
      approvals.decide(root, "req-1", { decision: "deny", reason: "not that shell command" }),
    );
    expect(done.state).toBe("mixed");
    expect(done.decidedBy).toBe("alice, root");
    expect(await Effect.runPromise(Fiber.join(fiber))).toEqual({
      by: "alice, root",
      decisions: [
        { callId: "c1", decision: "approve" },
        { callId: "c2", decision: "deny", reason: "not that shell command" },
      ],
    });
    const again = failure(await either(approvals.decide(alice, "req-1", { decision: "approve" })));
    expect(again).toMatchObject({ _tag: "Conflict", code: "approval_decided" });
    expect(again.message).toContain("mixed by alice, root");
  });

  it("a turn cancelled while waiting leaves the approval pending; once its run ended it expires (409)", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: alice });
    const approvals = w.registry();
    const fiber = await ask(w, approvals, request(session, item("c1", "write_file")));
    await Effect.runPromise(Fiber.interrupt(fiber));
    expect((await Effect.runPromise(approvals.get(alice, "req-1"))).state).toBe("pending");
    w.runs.finish("run-1", "cancelled");
    expect(await Effect.runPromise(approvals.list(alice, "pending"))).toEqual([]);
    const expired = failure(await either(approvals.decide(alice, "req-1", { decision: "approve" })));
    expect(expired).toMatchObject({ _tag: "Conflict", code: "approval_expired" });
    expect((await Effect.runPromise(approvals.get(alice, "req-1"))).state).toBe("expired");
  });
});

describe("a daemon restart", () => {
  it("the approval stays pending; deciding before the run asks again is 409 (retry); the re-ask keeps id and createdAt", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: alice });
    const first = w.registry();
    await ask(w, first, request(session, item("c1", "write_file")));
    // the row was made long ago (so a re-ask that reset createdAt would show)
    const db = stateDb(w.stateFile);
    db.prepare("UPDATE approvals SET created_at = 1 WHERE id = 'req-1'").run();
    db.close();
    const before = await Effect.runPromise(first.get(alice, "req-1"));
    expect(before.createdAt).toBe(1);

    // the process dies (its waiter with it): a new registry over the same state file
    const second = w.registry();
    expect((await Effect.runPromise(second.list(alice, "pending"))).map((a) => a.id)).toEqual(["req-1"]);
    const early = failure(await either(second.decide(alice, "req-1", { decision: "approve" })));
    expect(early).toMatchObject({ _tag: "Conflict", code: "approval_not_waiting" });
    expect(early.message).toContain("retry");

    // the resumed run asks again with core's same request id
    const fiber = await ask(w, second, request(session, item("c1", "write_file")));
    const again = await Effect.runPromise(second.get(alice, "req-1"));
    expect(again.state).toBe("pending");
    expect(again.createdAt).toBe(before.createdAt);
    await Effect.runPromise(second.decide(alice, "req-1", { decision: "approve" }));
    expect((await Effect.runPromise(Fiber.join(fiber))).decisions).toEqual([
      { callId: "c1", decision: "approve" },
    ]);
    // each ask told the run's stream that the approval can be answered (the second one: again)
    expect(w.appended).toEqual([
      [session, "run-1", "approvalWaiting", { requestId: "req-1", reasked: false }],
      [session, "run-1", "approvalWaiting", { requestId: "req-1", reasked: true }],
    ]);
  });

  it("a decision core never received (crash right after it) is asked again: the row flips back to pending", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: alice });
    const first = w.registry();
    await ask(w, first, request(session, item("c1", "write_file")));
    await Effect.runPromise(first.decide(alice, "req-1", { decision: "deny" }));
    const second = w.registry();
    const fiber = await ask(w, second, request(session, item("c1", "write_file")));
    const row = await Effect.runPromise(second.get(alice, "req-1"));
    expect(row.state).toBe("pending");
    expect(row.decisions).toBeUndefined();
    expect(row.decidedBy).toBeUndefined();
    await Effect.runPromise(second.decide(alice, "req-1", { decision: "approve" }));
    expect((await Effect.runPromise(Fiber.join(fiber))).by).toBe("alice");
  });
});

describe("the two-step rule", () => {
  it("the run's starter may not approve a call at or above secondApprover (unassessed = high), may deny; another principal may approve", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: alice });
    const approvals = w.registry([{ name: "global", layer: { secondApprover: "high" } }]);
    const fiber = await ask(
      w,
      approvals,
      request(session, item("c1", "read_file", "low"), item("c2", "shell", "high"), item("c3", "deploy")),
    );
    const pending = await Effect.runPromise(approvals.get(alice, "req-1"));
    expect(pending.requiresOtherPrincipal).toBe(true);

    // the low-risk call: the starter may approve it
    await Effect.runPromise(approvals.decide(alice, "req-1", { decision: "approve", callIds: ["c1"] }));
    const refused = failure(await either(approvals.decide(alice, "req-1", { decision: "approve" })));
    expect(refused).toMatchObject({ _tag: "Forbidden", code: "second_principal_required" });
    expect(refused.message).toBe(
      "the two-step rule (policy secondApprover: high) needs a principal other than alice, who started this run, to approve shell, deploy: an admin other than alice may approve it; alice may still deny",
    );
    // a deny by the starter is fine; an admin approves the rest
    await Effect.runPromise(approvals.decide(alice, "req-1", { decision: "deny", callIds: ["c3"] }));
    const done = await Effect.runPromise(
      approvals.decide(root, "req-1", { decision: "approve", callIds: ["c2"] }),
    );
    expect(done.state).toBe("mixed");
    expect((await Effect.runPromise(Fiber.join(fiber))).decisions.map((d) => [d.callId, d.decision])).toEqual(
      [
        ["c1", "approve"],
        ["c2", "approve"],
        ["c3", "deny"],
      ],
    );
  });

  it("when another principal started the run in the owner's session, the owner may approve", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: root });
    const approvals = w.registry([{ name: "global", layer: { secondApprover: "medium" } }]);
    const fiber = await ask(w, approvals, request(session, item("c1", "shell", "medium")));
    const refused = failure(await either(approvals.decide(root, "req-1", { decision: "approve" })));
    expect(refused.message).toContain(
      "the session's owner (alice) or an admin other than root may approve it",
    );
    await Effect.runPromise(approvals.decide(alice, "req-1", { decision: "approve" }));
    expect((await Effect.runPromise(Fiber.join(fiber))).by).toBe("alice");
  });

  it("below the threshold, or without a rule, the starter approves alone", async () => {
    const w = world();
    const session = await w.host.createSession("alice");
    w.runs.add({ id: "run-1", sessionId: session, turnId: "turn-1", principal: alice });
    const approvals = w.registry([{ name: "global", layer: { secondApprover: "high" } }]);
    const fiber = await ask(w, approvals, request(session, item("c1", "shell", "medium")));
    expect((await Effect.runPromise(approvals.get(alice, "req-1"))).requiresOtherPrincipal).toBe(false);
    await Effect.runPromise(approvals.decide(alice, "req-1", { decision: "approve" }));
    expect((await Effect.runPromise(Fiber.join(fiber))).by).toBe("alice");
  });
});

describe("with a real turn", () => {
  const writeTool = (runs: string[]): ToolDefinition => ({
    name: "write_note",
    description: "writes a note",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: (args) =>
      Effect.sync(() => {
        runs.push((args as { text: string }).text);
        return { content: [{ type: "text", text: "written" }] };
      }),
  });
  const asks: GovernanceShape = {
    decide: (call) =>
      call.name === "write_note"
        ? { action: "ask", layer: "global", reason: "it writes" }
        : { action: "allow" },
  };
  const toolResults = (req: LlmRequest | undefined): string[] =>
    (req?.messages ?? []).flatMap((m) =>
      m.parts.flatMap((p) =>
        p.type === "toolResult" ? p.content.flatMap((c) => (c.type === "text" ? [c.text] : [])) : [],
      ),
    );

  it("the turn waits for the HTTP answer; a denial's reason and decider reach the model", async () => {
    const notes: string[] = [];
    const w = world({
      governance: asks,
      plugins: [{ name: "t", tools: [writeTool(notes)] }],
      script: [
        { toolCalls: [{ id: "call-1", name: "write_note", arguments: { text: "hi" } }] },
        { text: "ok" },
      ],
    });
    const session = await w.host.createSession("alice");
    // the run is known before its turn id (the daemon learns it from the first event)
    w.runs.add({ id: "run-1", sessionId: session, principal: alice });
    const approvals = w.registry();
    w.host.setApprover(approvals.approver);
    const waiting = w.runs.nextWaiting("run-1");
    const turn = w.host.runtime.runPromise(
      Effect.flatMap(LashRuntime, (rt) => rt.turn(session, { text: "go" })),
    );
    expect(await waiting).toBe(true);
    const [pending] = await Effect.runPromise(approvals.list(alice, "pending"));
    expect(pending?.items).toMatchObject([{ callId: "call-1", tool: "write_note", args: { text: "hi" } }]);
    expect(pending?.sessionId).toBe(session);
    await Effect.runPromise(
      approvals.decide(alice, pending?.id ?? "", { decision: "deny", reason: "not today" }),
    );
    const result = await turn;
    expect(result.text).toBe("ok");
    expect(notes).toEqual([]);
    expect(toolResults(w.host.provider.requests[1])).toEqual([
      "Denied: write_note was not run; the approver (alice) denied it: not today. Do not retry the same call unchanged: change the arguments or the approach, or ask the user.",
    ]);
    expect((await Effect.runPromise(approvals.get(alice, pending?.id ?? ""))).state).toBe("denied");
  });
});
