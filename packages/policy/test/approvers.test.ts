// The approvers against a real runtime: the promise facade (`createLash`) over a real mock wire
// server on 127.0.0.1, a policy that asks about `append`, and each approver answering.
import {
  type ApprovalRequest,
  type ApproverShape,
  createLash,
  defineTool,
  type GovernanceShape,
  MemoryStore,
  type TurnActivity,
  TurnError,
  textOutput,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import { afterEach, describe, expect, it } from "vitest";
import { approveAll, callbackApprover, failApprover, rejectAll } from "../src/index.ts";

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const governance: GovernanceShape = {
  decide: (call) =>
    call.name === "append"
      ? { action: "ask", layer: "test policy", reason: "append writes" }
      : { action: "allow" },
};

async function run(approver: {
  approver?: ApproverShape;
  onApproval?: Parameters<typeof createLash>[0]["onApproval"];
}) {
  const server = await startMockServer({
    replies: [
      {
        toolCalls: [
          { name: "append", arguments: { line: "a" } },
          { name: "append", arguments: { line: "b" } },
        ],
      },
      { text: "done" },
    ],
  });
  servers.push(server);
  const lines: string[] = [];
  const lash = createLash({
    store: MemoryStore,
    provider: createProvider("openai-compatible/mock", {
      baseUrl: server.baseUrl("openai-chat"),
      apiKey: "test",
      retry: false,
    }),
    plugins: [
      {
        name: "t",
        tools: [
          defineTool<{ line: string }>({
            name: "append",
            description: "append a line",
            inputSchema: {
              type: "object",
              properties: { line: { type: "string" } },
              required: ["line"],
              additionalProperties: false,
            },
            run: async ({ line }) => {
              lines.push(line);
              return textOutput(`appended ${line}`);
            },
          }),
        ],
      },
    ],
    governance,
    ...approver,
  });
  const session = await lash.createSession({ model: "openai-compatible/mock" });
  const turn = session.turn("append two lines");
  const events: TurnActivity[] = [];
  for await (const e of turn) events.push(e);
  const outcome = await turn.result.then(
    (r) => ({ ok: true as const, r }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  await lash.close();
  /** The tool results the model was sent in its second request. */
  const sent = (
    server.requests[1]?.body as { messages?: { role: string; content: unknown }[] } | undefined
  )?.messages
    ?.filter((m) => m.role === "tool")
    .map((m) => String(m.content));
  return { lines, events, outcome, sent, server };
}

describe("approvers", () => {
  it("approveAll: both calls of the response run, asked about in one request", async () => {
    const r = await run({ approver: approveAll() });
    expect(r.outcome.ok).toBe(true);
    expect(r.lines).toEqual(["a", "b"]);
    const requested = r.events.filter((e) => e.type === "approvalRequested");
    expect(requested).toHaveLength(1);
    expect(requested[0]?.type === "approvalRequested" && requested[0].items.map((i) => i.args)).toEqual([
      { line: "a" },
      { line: "b" },
    ]);
    const resolved = r.events.find((e) => e.type === "approvalResolved");
    expect(resolved).toMatchObject({ by: "approve-all", replayed: false });
  });

  it("rejectAll: nothing runs; the model's next request carries the denial, by whom and why", async () => {
    const r = await run({ approver: rejectAll("the operator said no") });
    expect(r.outcome.ok).toBe(true);
    expect(r.lines).toEqual([]);
    expect(r.sent).toEqual([
      expect.stringContaining(
        "Denied: append was not run; the approver (reject-all) denied it: the operator said no.",
      ),
      expect.stringContaining("Do not retry the same call unchanged"),
    ]);
  });

  it("failApprover: the turn stops with TurnError approval naming the tool and the hint; nothing runs", async () => {
    const r = await run({ approver: failApprover("use --approval-mode approve-all|reject-all") });
    expect(r.outcome.ok).toBe(false);
    const e = r.outcome.ok ? undefined : r.outcome.e;
    expect(e).toBeInstanceOf(TurnError);
    expect((e as TurnError).reason).toBe("approval");
    expect((e as TurnError).message).toContain(
      "append needs an approval, and none could be had: use --approval-mode approve-all|reject-all.",
    );
    expect(r.lines).toEqual([]);
    expect(r.server.requests).toHaveLength(1);
  });

  it("callbackApprover and the facade's onApproval: the promise answers, per call", async () => {
    const seen: ApprovalRequest[] = [];
    const answer = async (request: ApprovalRequest) => {
      seen.push(request);
      return {
        by: "reviewer",
        decisions: [
          { callId: request.items[0]!.callId, decision: "approve" as const },
          { callId: request.items[1]!.callId, decision: "deny" as const, reason: "one is enough" },
        ],
      };
    };
    const viaApprover = await run({ approver: callbackApprover(answer) });
    expect(viaApprover.lines).toEqual(["a"]);
    expect(viaApprover.sent?.[1]).toContain("the approver (reviewer) denied it: one is enough");
    const viaFacade = await run({ onApproval: answer });
    expect(viaFacade.lines).toEqual(["a"]);
    expect(viaFacade.sent?.[1]).toContain("the approver (reviewer) denied it: one is enough");
    expect(seen).toHaveLength(2);
  });

  it("a rejected onApproval promise stops the turn with the callback's message", async () => {
    const r = await run({
      onApproval: async () => {
        throw new Error("reviewer unavailable");
      },
    });
    expect(r.outcome.ok).toBe(false);
    expect((r.outcome as { e: TurnError }).e.message).toContain("onApproval failed: reviewer unavailable");
  });
});
