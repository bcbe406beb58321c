// Approvals for RLM cell operations: a cell's tool calls take the same dispatch path as
// standard mode's, so the calls of one aggregate `await` are asked about in one request, and
// a denied operation reaches the model (in the cell's output) with the denial text.
import {
  type ApprovalRequest,
  type ApproverShape,
  defineTool,
  type GovernanceShape,
  LashRuntime,
  type Plugin,
} from "@lash/core";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { cell, MODEL, prose, runtimeLayer, wireText } from "./rlm-support.ts";

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("approvals in RLM cells", () => {
  it("the operations of one aggregate await are asked about together; a denied one reads as denied", async () => {
    const server = await startMockServer({
      replies: [
        cell(
          'rs = await [side.bump({ label: "one" }), side.bump({ label: "two" })]\nprint rs',
          "Bumping both.",
        ),
        prose("done"),
      ],
    });
    servers.push(server);
    const ran: string[] = [];
    const side: Plugin = {
      name: "side",
      tools: [
        defineTool<{ label: string }>({
          name: "bump",
          description: "bump a label",
          inputSchema: {
            type: "object",
            properties: { label: { type: "string" } },
            required: ["label"],
            additionalProperties: false,
          },
          binding: { module: "side", operation: "bump", returns: "str" },
          run: async ({ label }) => {
            ran.push(label);
            return { content: [{ type: "text", text: `bumped ${label}` }], value: `bumped ${label}` };
          },
        }),
      ],
    };
    const governance: GovernanceShape = {
      decide: (call) =>
        call.name === "bump" ? { action: "ask", layer: "test", reason: "bump writes" } : { action: "allow" },
    };
    const requests: ApprovalRequest[] = [];
    const approver: ApproverShape = {
      ask: (request) =>
        Effect.sync(() => {
          requests.push(request);
          return {
            by: "user",
            decisions: request.items.map((i) =>
              (i.args as { label: string }).label === "one"
                ? { callId: i.callId, decision: "approve" as const }
                : { callId: i.callId, decision: "deny" as const, reason: "two is too many" },
            ),
          };
        }),
    };
    const layer = runtimeLayer(server, { plugins: [side], governance, approver });
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const rt = yield* LashRuntime;
          const s = yield* rt.createSession({ model: MODEL, mode: "rlm" });
          return yield* rt.turn(s.id, { text: "bump one and two" });
        }).pipe(Effect.provide(layer)),
      ),
    );
    expect(result.outcome.type).toBe("finished");
    expect(requests).toHaveLength(1);
    expect(requests[0]!.items.map((i) => i.args)).toEqual([{ label: "one" }, { label: "two" }]);
    expect(ran).toEqual(["one"]);
    expect(wireText(server.requests[1]!)).toContain("two is too many");
  });
});
