// Subagent narrowing through a real runtime (issue 17): a child's calls are decided under its
// parent's policy layers plus its capability's, so a child never gains a tool its parent lacks
// — even when the capability hands it the tool itself.
import type { GovernedCall, Plugin } from "@lash/core";
import {
  decodePolicyLayer,
  makeGovernance,
  type NamedLayer,
  resolvePolicy,
  SessionPolicies,
} from "@lash/policy";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { type Capability, defineCapability, peerCapability } from "@lash/subagents";
import { Effect, Either } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { MODEL, parse, type Req, testTools, withRuntime } from "../../packages/subagents/test/helpers.ts";

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function serve(responder: (req: Req) => MockReply): Promise<MockLlmServer> {
  const server = await startMockServer({ responder: (raw) => responder(parse(raw)) });
  servers.push(server);
  return server;
}

/** The parent spawns one child of `capability`; the child calls write_note, then read_notes, then submits. */
function script(capability: string) {
  const childResults: string[] = [];
  const responder = (req: Req): MockReply => {
    if (req.first === "PARENT")
      return req.step === 0
        ? { toolCalls: [{ id: "p1", name: "spawn_agent", arguments: { task: "CHILD", capability } }] }
        : { text: "parent done" };
    if (req.step === 0)
      return {
        toolCalls: [
          { id: "k1", name: "write_note", arguments: { text: "from the child" } },
          { id: "k2", name: "read_notes", arguments: {} },
        ],
      };
    childResults.push(...req.results.map((r) => r.text));
    return { toolCalls: [{ id: "k3", name: "submit_result", arguments: { value: "ok" } }] };
  };
  return { responder, childResults };
}

async function runWith(
  parentLayers: readonly NamedLayer[],
  capabilities: readonly Capability[],
  capability: string,
): Promise<{ childResults: string[]; writes: string[] }> {
  const { responder, childResults } = script(capability);
  const server = await serve(responder);
  const tools = testTools();
  const sessions = new SessionPolicies();
  const registered: string[] = [];
  const governance = makeGovernance(resolvePolicy(parentLayers), {
    sessionLayers: (id) => sessions.layersOf(id),
  });
  const plugins: Plugin[] = [tools.plugin];
  await withRuntime(
    server,
    (rt) =>
      Effect.gen(function* () {
        const s = yield* rt.createSession({ model: MODEL });
        const r = yield* rt.turn(s.id, { text: "PARENT" });
        expect(r.text).toBe("parent done");
      }),
    {
      plugins,
      subagents: {
        capabilities,
        onChild: ({ sessionId, parentSessionId, capability: cap }) => {
          registered.push(cap.name);
          sessions.register(
            sessionId,
            parentSessionId,
            cap.policy
              ? [{ name: `capability:${cap.name}`, layer: Either.getOrThrow(decodePolicyLayer(cap.policy)) }]
              : [],
          );
        },
      },
      wrap: (o) => ({ ...o, governance }),
    },
  );
  expect(registered).toEqual([capability]);
  return { childResults, writes: tools.writes };
}

describe("a child never gains a tool its parent lacks", () => {
  it("the parent's deny applies to the child (whose tool set still has the tool)", async () => {
    const r = await runWith(
      [{ name: "global", layer: { deny: ["write_note"] } }],
      [peerCapability()],
      "peer",
    );
    expect(r.writes).toEqual([]);
    expect(r.childResults[0]).toContain(
      'Denied: write_note was not run; the policy (global: deny "write_note")',
    );
    expect(r.childResults[1]).toContain("notes: alpha, beta");
  });

  it("a capability's own layer narrows the child further; the parent keeps its tools", async () => {
    const reader = defineCapability({
      name: "reader",
      description: "reads",
      tools: ({ parentTools }) => parentTools.map((t) => t.name),
      policy: { allow: ["read_notes"] },
    });
    const r = await runWith([], [reader], "reader");
    expect(r.writes).toEqual([]);
    expect(r.childResults[0]).toContain(
      "Denied: write_note was not run; the policy (capability:reader: allow",
    );
    expect(r.childResults[1]).toContain("notes: alpha, beta");
    // the parent's own calls are not narrowed by its child's capability
    expect(governanceAllowsParent()).toBe(true);
  });

  it("a capability that allows everything cannot undo the parent's allow list", async () => {
    const wide = defineCapability({
      name: "wide",
      description: "everything",
      tools: ({ parentTools }) => parentTools.map((t) => t.name),
      policy: { profile: "full", allow: [] },
    });
    const r = await runWith(
      [{ name: "global", layer: { allow: ["read_notes", "spawn_agent"] } }],
      [wide],
      "wide",
    );
    expect(r.writes).toEqual([]);
    expect(r.childResults[0]).toContain("Denied: write_note was not run; the policy (global: allow");
  });
});

/** With no layers a root session's calls are all allowed (the control for the test above). */
function governanceAllowsParent(): boolean {
  const sessions = new SessionPolicies();
  sessions.register("child", "root", [{ name: "capability:reader", layer: { allow: ["read_notes"] } }]);
  const gov = makeGovernance(resolvePolicy([]), { sessionLayers: (id) => sessions.layersOf(id) });
  const call = (sessionId: string): GovernedCall =>
    ({
      sessionId,
      turnId: "t",
      callId: "c",
      name: "write_note",
      args: {},
      tool: {
        name: "write_note",
        description: "",
        inputSchema: { type: "object" },
        execute: () => Effect.die("x"),
      },
      effects: ["write"],
    }) as GovernedCall;
  return gov.decide(call("root")).action === "allow" && gov.decide(call("child")).action === "deny";
}
