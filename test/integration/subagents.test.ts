// @lash/subagents end to end: a real LashRuntime, the real Anthropic SDK and
// the mock wire server. Responders tell the parent from its children by the
// first user message (a child's first message starts with its task).
import type { TurnActivity } from "@lash/core";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import type { Message, ToolResultPart } from "@lash/sansio";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import {
  CHEAP_MODEL,
  childEvents,
  MODEL,
  parse,
  type Req,
  testTools,
  turnEvents,
  withRuntime,
} from "../../packages/subagents/test/helpers.ts";

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(responder: (req: Req) => MockReply | Promise<MockReply>): Promise<MockLlmServer> {
  const server = await startMockServer({ responder: (raw) => responder(parse(raw)) });
  servers.push(server);
  return server;
}

const spawnCall = (id: string, args: Record<string, unknown>) => ({
  id,
  name: "spawn_agent",
  arguments: args,
});

/** The tool results of the session's transcript, by call id. */
function toolResults(messages: readonly Message[]): Map<string, ToolResultPart> {
  const out = new Map<string, ToolResultPart>();
  for (const m of messages) for (const p of m.parts) if (p.type === "toolResult") out.set(p.callId, p);
  return out;
}

const text = (p: ToolResultPart | undefined) =>
  (p?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

describe("spawn_agent end to end", () => {
  it("one child with typed output: a linked child session, a schema-shaped result, events and a readable transcript", async () => {
    const childRequests: Req[] = [];
    const server = await serve((req) => {
      if (req.first.startsWith("PARENT")) {
        if (req.step === 0)
          return {
            toolCalls: [
              spawnCall("call_typed", {
                task: "CHILD count the notes",
                capability: "explore",
                output: { count: "int", names: "list[str]" },
                seed: { folder: "notes", hint: "two of them" },
              }),
            ],
            usage: { input: 100, output: 20 },
          };
        return { text: `parent saw: ${req.results[0]?.text}`, usage: { input: 150, output: 10 } };
      }
      childRequests.push(req);
      if (req.step === 0)
        return {
          toolCalls: [
            { id: "c_submit", name: "submit_result", arguments: { count: 2, names: ["alpha", "beta"] } },
          ],
          usage: { input: 40, output: 8 },
        };
      return { text: "unexpected" };
    });
    const { plugin } = testTools();
    const events: TurnActivity[] = [];
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL });
          const r = yield* rt.turn(parent.id, { text: "PARENT typed" }, { onEvent: (e) => events.push(e) });
          expect(r.outcome.type).toBe("finished");

          // the child saw only the task, the seed and the required output; it could submit a typed result
          expect(childRequests).toHaveLength(1);
          const c = childRequests[0]!;
          expect(c.first).toContain("CHILD count the notes");
          expect(c.first).toContain('"folder": "notes"');
          expect(c.first).toContain("## Required output");
          expect(c.first).not.toContain("PARENT");
          expect(c.system).toContain("Subagent capability: explore. Depth: 1/5.");
          expect(c.toolSchemas.submit_result).toMatchObject({
            type: "object",
            properties: { count: { type: "integer" }, names: { type: "array", items: { type: "string" } } },
            required: ["count", "names"],
            additionalProperties: false,
          });

          // the parent received the child's value
          const result = toolResults(yield* rt.readView(parent.id)).get("call_typed")!;
          expect(result.isError).toBe(false);
          expect(result.value).toEqual({ count: 2, names: ["alpha", "beta"] });
          expect(JSON.parse(text(result))).toEqual({ count: 2, names: ["alpha", "beta"] });
          expect(r.text).toContain('"count": 2');

          // the child is a normal session linked to the call, hidden from the default list
          const kids = yield* rt.children(parent.id);
          expect(kids).toHaveLength(1);
          const child = kids[0]!;
          expect(child.parentLink).toEqual({ sessionId: parent.id, callId: "call_typed", depth: 1 });
          expect((yield* rt.listSessions()).map((s) => s.id)).toEqual([parent.id]);
          expect((yield* rt.listSessions({ includeChildren: true })).map((s) => s.id).sort()).toEqual(
            [parent.id, child.id].sort(),
          );
          const transcript = yield* rt.readView(child.id);
          expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
          expect(result.details).toMatchObject({ childSessionId: child.id, capability: "explore", depth: 1 });

          // hosts see the child start and finish on the parent's stream
          const seen = childEvents(events);
          expect(seen.map((e) => e.name)).toEqual(["childStarted", "childFinished"]);
          expect(
            seen.every((e) => e.data.childSessionId === child.id && e.data.callId === "call_typed"),
          ).toBe(true);
          expect(seen[1]!.data.outcome).toBe("finished");
        }),
      { plugins: [plugin] },
    );
  });

  it("a child that answers in prose is asked again with the problem; a wrong shape after its repair turn is a tool error", async () => {
    const server = await serve((req) => {
      if (req.first.startsWith("PARENT")) {
        if (req.step === 0)
          return {
            toolCalls: [
              spawnCall("call_a", { task: "CHILD-A", capability: "peer", output: { type: "string" } }),
              spawnCall("call_b", { task: "CHILD-B", capability: "peer", output: { n: "int" } }),
            ],
          };
        return { text: "ok" };
      }
      if (req.first.startsWith("CHILD-A")) {
        // prose first; the structured-output check asks again (with the problem) and the child
        // submits `{ value }` (a non-object schema is wrapped)
        if (req.step === 0) return { text: "I think the answer is forty-two." };
        return { toolCalls: [{ id: "s1", name: "submit_result", arguments: { value: "forty-two" } }] };
      }
      // CHILD-B answers prose every time: two tries in its turn, two in its repair turn
      return { text: "no idea" };
    });
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const parent = yield* rt.createSession({ model: MODEL });
        yield* rt.turn(parent.id, { text: "PARENT repair" });
        const results = toolResults(yield* rt.readView(parent.id));
        expect(results.get("call_a")).toMatchObject({ isError: false, value: "forty-two" });
        expect(results.get("call_b")!.isError).toBe(true);
        expect(text(results.get("call_b"))).toContain("does not match the required output");
        const kids = yield* rt.children(parent.id);
        expect(kids.map((k) => k.turnCount)).toEqual([1, 2]);
        const childB = server.requests.map(parse).filter((q) => q.first.startsWith("CHILD-B"));
        expect(childB).toHaveLength(4);
        expect(JSON.stringify(childB[1]!.raw.body)).toContain("does not match the required output schema");
      }),
    );
  });

  it("three spawns in one response run concurrently: their requests overlap at the mock server", async () => {
    const arrived: Req[] = [];
    let release!: () => void;
    const allThere = new Promise<void>((r) => {
      release = r;
    });
    let peakInFlight = 0;
    const server: MockLlmServer = await serve(async (req) => {
      if (req.first.startsWith("PARENT")) {
        if (req.step === 0)
          return {
            toolCalls: ["one", "two", "three"].map((n) =>
              spawnCall(`call_${n}`, { task: `CHILD ${n}`, capability: "explore" }),
            ),
          };
        return { text: req.results.map((r) => r.text).join(" | ") };
      }
      arrived.push(req);
      if (arrived.length === 3) {
        peakInFlight = server.inFlight;
        release();
      }
      // no child answers before all three are in flight: serial children would never get here
      await allThere;
      return { text: `answer of ${req.first}` };
    });
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const parent = yield* rt.createSession({ model: MODEL });
        const r = yield* rt.turn(parent.id, { text: "PARENT parallel" });
        expect(peakInFlight).toBe(3);
        expect(r.text).toBe("answer of CHILD one | answer of CHILD two | answer of CHILD three");
        expect(yield* rt.children(parent.id)).toHaveLength(3);
      }),
    );
  });

  it("depth limit: spawn_agent is offered down to depth 4, hidden at depth 5, and refused beyond", async () => {
    const seen: { depthTask: string; tools: readonly string[]; system: string }[] = [];
    const server = await serve((req) => {
      if (req.step === 0) {
        seen.push({ depthTask: req.first.split("\n")[0]!, tools: req.tools, system: req.system });
        const level = req.first.startsWith("LEVEL") ? Number(req.first.split(" ")[1]) : 0;
        if (req.tools.includes("spawn_agent"))
          return {
            toolCalls: [
              spawnCall(`call_level_${level + 1}`, { task: `LEVEL ${level + 1}`, capability: "peer" }),
            ],
          };
        return { text: `bottom at ${level}` };
      }
      return { text: req.results[0]?.text ?? "?" };
    });
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const root = yield* rt.createSession({ model: MODEL });
        const r = yield* rt.turn(root.id, { text: "ROOT go deep" });
        expect(r.text).toBe("bottom at 5");
        expect(seen.map((s) => s.depthTask)).toEqual([
          "ROOT go deep",
          "LEVEL 1",
          "LEVEL 2",
          "LEVEL 3",
          "LEVEL 4",
          "LEVEL 5",
        ]);
        expect(seen.map((s) => s.tools.includes("spawn_agent"))).toEqual([
          true,
          true,
          true,
          true,
          true,
          false,
        ]);
        expect(seen[5]!.system).toContain("Depth: 5/5.");
        // the chain is in the graph: each child links to its parent's call at depth + 1
        let id = root.id;
        for (let depth = 1; depth <= 5; depth++) {
          const kids = yield* rt.children(id);
          expect(kids).toHaveLength(1);
          expect(kids[0]!.parentLink).toMatchObject({ sessionId: id, depth });
          id = kids[0]!.id;
        }
        expect(yield* rt.children(id)).toHaveLength(0);
      }),
    );

    // beyond the limit (a session at depth 5 that still has the tool): a clear error result
    const server2 = await serve((req) =>
      req.step === 0
        ? { toolCalls: [spawnCall("call_deep", { task: "too deep", capability: "peer" })] }
        : { text: "understood" },
    );
    await withRuntime(server2, (rt) =>
      Effect.gen(function* () {
        const s = yield* rt.createSession({
          model: MODEL,
          parentLink: { sessionId: "elsewhere", callId: "c", depth: 5 },
        });
        yield* rt.turn(s.id, { text: "DEEP" });
        const res = toolResults(yield* rt.readView(s.id)).get("call_deep")!;
        expect(res.isError).toBe(true);
        expect(text(res)).toBe("subagent recursion depth exceeded: max depth is 5");
        expect(yield* rt.children(s.id)).toHaveLength(0);
      }),
    );
  });

  it("capabilities narrow tools: explore gets read-only tools only and a write call is an error; peer never widens the parent", async () => {
    const byTask = new Map<string, Req[]>();
    const server = await serve((req) => {
      if (req.first.startsWith("PARENT")) {
        if (req.step === 0)
          return {
            toolCalls: [
              spawnCall("call_explore", { task: "EXPLORE try to write", capability: "explore" }),
              spawnCall("call_peer", { task: "PEER list tools", capability: "peer" }),
            ],
          };
        return { text: "done" };
      }
      const key = req.first.split(" ")[0]!;
      byTask.set(key, [...(byTask.get(key) ?? []), req]);
      if (key === "EXPLORE" && req.step === 0)
        return { toolCalls: [{ id: "w1", name: "write_note", arguments: { text: "sneaky" } }] };
      if (key === "EXPLORE") return { text: `write result: ${req.results[0]?.text}` };
      return { text: "peer done" };
    });
    const { plugin, writes } = testTools();
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          // the parent itself may only read and spawn
          const parent = yield* rt.createSession({ model: MODEL, tools: ["read_notes", "spawn_agent"] });
          yield* rt.turn(parent.id, { text: "PARENT scopes" });
          const explore = byTask.get("EXPLORE")!;
          expect([...explore[0]!.tools].sort()).toEqual(["read_notes", "submit_error"]);
          expect(explore[1]!.results[0]).toMatchObject({ isError: true });
          expect(explore[1]!.results[0]!.text).toContain("Unknown tool `write_note`");
          expect(writes).toEqual([]);
          const peer = byTask.get("PEER")!;
          expect([...peer[0]!.tools].sort()).toEqual(["read_notes", "spawn_agent", "submit_error"]);
          const results = toolResults(yield* rt.readView(parent.id));
          expect(results.get("call_explore")).toMatchObject({ isError: false });
          expect(text(results.get("call_explore"))).toContain("Unknown tool `write_note`");
        }),
      { plugins: [plugin] },
    );
  });

  it("a root parent's peer gets its write tool; an explore child of the same parent does not", async () => {
    const firstTools = new Map<string, readonly string[]>();
    const server = await serve((req) => {
      if (req.first.startsWith("PARENT")) {
        if (req.step === 0)
          return {
            toolCalls: [
              spawnCall("c1", { task: "EXPLORE", capability: "explore" }),
              spawnCall("c2", { task: "PEER", capability: "peer" }),
            ],
          };
        return { text: "done" };
      }
      firstTools.set(req.first, req.tools);
      return { text: "ok" };
    });
    const { plugin } = testTools();
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL });
          yield* rt.turn(parent.id, { text: "PARENT" });
          expect([...firstTools.get("EXPLORE")!].sort()).toEqual(["read_notes", "submit_error"]);
          expect([...firstTools.get("PEER")!].sort()).toEqual([
            "read_notes",
            "spawn_agent",
            "submit_error",
            "write_note",
          ]);
        }),
      { plugins: [plugin] },
    );
  });

  it("a child failure is a tool error result in the parent (provider error, submit_error, unknown capability)", async () => {
    const server = await serve((req) => {
      if (req.first.startsWith("PARENT")) {
        if (req.step === 0)
          return {
            toolCalls: [
              spawnCall("call_broken", { task: "BROKEN", capability: "peer" }),
              spawnCall("call_gives_up", { task: "GIVEUP", capability: "peer" }),
              spawnCall("call_unknown", { task: "x", capability: "wizard" }),
            ],
          };
        return { text: "handled" };
      }
      if (req.first.startsWith("BROKEN"))
        return { error: { code: "badRequest", message: "the child's request is broken" } };
      return { toolCalls: [{ id: "e1", name: "submit_error", arguments: { reason: "no such file" } }] };
    });
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const parent = yield* rt.createSession({ model: MODEL });
        const r = yield* rt.turn(parent.id, { text: "PARENT failures" });
        expect(r.outcome.type).toBe("finished");
        const results = toolResults(yield* rt.readView(parent.id));
        expect(results.get("call_broken")!.isError).toBe(true);
        expect(text(results.get("call_broken"))).toMatch(
          /^the child agent stopped \(providerError\).*broken/,
        );
        expect(results.get("call_gives_up")!.isError).toBe(true);
        expect(text(results.get("call_gives_up"))).toContain("the child agent gave up: no such file");
        expect(results.get("call_unknown")!.isError).toBe(true);
        // the dispatcher rejects an enum violation before the tool runs
        expect(text(results.get("call_unknown"))).toContain("capability");
        expect(yield* rt.children(parent.id)).toHaveLength(2);
      }),
    );
  });

  it("cancelling the parent cancels its running children", async () => {
    const server = await serve((req) => {
      if (req.first.startsWith("PARENT"))
        return {
          toolCalls: [
            spawnCall("call_x", { task: "SLOW x", capability: "peer" }),
            spawnCall("call_y", { task: "SLOW y", capability: "peer" }),
          ],
        };
      return { hang: true };
    });
    const events: TurnActivity[] = [];
    await withRuntime(server, (rt) =>
      Effect.scoped(
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL });
          const handle = yield* rt.startTurn(
            parent.id,
            { text: "PARENT cancel" },
            { onEvent: (e) => events.push(e) },
          );
          // both children are waiting on the model
          yield* Effect.promise(() => server.waitForRequests(3));
          expect(server.inFlight).toBe(2);
          yield* handle.cancel;
          const r = yield* handle.result;
          expect(r.outcome).toMatchObject({ type: "stopped", reason: "cancelled" });
          const kids = yield* rt.children(parent.id);
          expect(kids).toHaveLength(2);
          for (const kid of kids) {
            const ev = yield* turnEvents(rt, kid.id);
            const fin = ev.find((e) => e.type === "turnFinished");
            expect(fin).toMatchObject({ outcome: { type: "stopped", reason: "cancelled" } });
            expect((yield* rt.getSession(kid.id)).turnCount).toBe(1);
          }
          yield* Effect.promise(() => server.waitForIdle());
          const finished = childEvents(events).filter((e) => e.name === "childFinished");
          expect(finished.map((e) => e.data.outcome)).toEqual(["cancelled", "cancelled"]);
        }),
      ),
    );
  });

  it("child usage and cost roll up into the parent's ledger, per child and in total", async () => {
    const server = await serve((req) => {
      if (req.first.startsWith("PARENT")) {
        if (req.step === 0)
          return {
            toolCalls: [
              spawnCall("c_cheap", { task: "CHEAP", capability: "explore" }),
              spawnCall("c_peer", { task: "PEER", capability: "peer" }),
            ],
            usage: { input: 1000, output: 100 },
          };
        return { text: "sum", usage: { input: 2000, output: 50 } };
      }
      if (req.first.startsWith("CHEAP")) return { text: "cheap", usage: { input: 300, output: 30 } };
      if (req.step === 0)
        return {
          toolCalls: [{ id: "r1", name: "read_notes", arguments: {} }],
          usage: { input: 400, output: 40, cacheRead: 100 },
        };
      return { text: "peer", usage: { input: 500, output: 60 } };
    });
    const { plugin } = testTools();
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL });
          const r = yield* rt.turn(parent.id, { text: "PARENT costs" });
          const kids = yield* rt.children(parent.id);
          const cheap = kids.find((k) => k.title === "CHEAP")!;
          const peer = kids.find((k) => k.title === "PEER")!;
          expect(cheap.model).toBe(CHEAP_MODEL);
          expect(peer.model).toBe(MODEL);
          const cheapUsage = yield* rt.usage(cheap.id);
          const peerUsage = yield* rt.usage(peer.id);
          expect(cheapUsage.total).toEqual({ input: 300, output: 30 });
          expect(peerUsage.total).toEqual({ input: 900, output: 100, cacheRead: 100 });
          const ledger = yield* rt.usage(parent.id);
          const bySource = new Map(ledger.bySource.map((g) => [g.source, g]));
          expect(bySource.get(`agent:${cheap.id}`)).toMatchObject({
            model: CHEAP_MODEL,
            usage: cheapUsage.total,
          });
          expect(bySource.get(`agent:${peer.id}`)).toMatchObject({ model: MODEL, usage: peerUsage.total });
          expect(bySource.get(`agent:${cheap.id}`)!.costUsd).toBeCloseTo(cheapUsage.costUsd!, 12);
          expect(bySource.get(`agent:${peer.id}`)!.costUsd).toBeCloseTo(peerUsage.costUsd!, 12);
          expect(bySource.get("turn")!.usage).toEqual(r.usage);
          expect(ledger.total).toEqual({ input: 3000 + 300 + 900, output: 150 + 30 + 100, cacheRead: 100 });
          expect(ledger.costUsd).toBeCloseTo(r.costUsd! + cheapUsage.costUsd! + peerUsage.costUsd!, 12);
          expect(cheapUsage.costUsd! > 0 && peerUsage.costUsd! > 0).toBe(true);
        }),
      { plugins: [plugin], subagents: { models: { explore: CHEAP_MODEL } } },
    );
  });
});
