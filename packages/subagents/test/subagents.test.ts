import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import type { Message, ToolResultPart } from "@lash/sansio";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import {
  CapabilityRegistry,
  cancelChild,
  defineCapability,
  exploreCapability,
  extractJson,
  interpretOutcome,
  outcomeFromTranscript,
  outputSchema,
  peerCapability,
  renderTask,
  runningChildren,
  SPAWN_STATE_KEY,
  subagentsPlugin,
} from "../src/index.ts";
import { childEvents, MODEL, parse, type Req, testTools, turnEvents, withRuntime } from "./helpers.ts";

describe("output specs", () => {
  it("shorthand records become closed object schemas; `?` marks optional fields", () => {
    expect(
      outputSchema({ a: "str", b: "int?", c: "list[list[float]]", d: "bool", e: "record", f: "any" }),
    ).toEqual({
      ok: true,
      schema: {
        type: "object",
        properties: {
          a: { type: "string" },
          b: { type: "integer" },
          c: { type: "array", items: { type: "array", items: { type: "number" } } },
          d: { type: "boolean" },
          e: { type: "object" },
          f: {},
        },
        required: ["a", "c", "d", "e", "f"],
        additionalProperties: false,
      },
    });
  });

  it('JSON Schemas and Lashlang Type literal values pass through; `{type: "string"}` is a schema, not shorthand', () => {
    expect(outputSchema({ type: "string" })).toEqual({ ok: true, schema: { type: "string" } });
    const s = { type: "object", properties: { x: { type: "integer" } } };
    expect(outputSchema(s)).toEqual({ ok: true, schema: s });
    expect(outputSchema({ $lash_type: { type: "array", items: { type: "string" } } })).toEqual({
      ok: true,
      schema: { type: "array", items: { type: "string" } },
    });
    // a shorthand field that happens to be called `type`
    expect(outputSchema({ type: "str", size: "int" })).toMatchObject({
      ok: true,
      schema: { properties: { type: { type: "string" }, size: { type: "integer" } } },
    });
  });

  it("malformed outputs are clear errors", () => {
    expect(outputSchema("str")).toMatchObject({
      ok: false,
      error: expect.stringContaining("malformed output"),
    });
    expect(outputSchema({ a: "strng" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("shorthand"),
    });
    expect(outputSchema({ $lash_type: 3 })).toMatchObject({ ok: false });
  });

  it("extractJson finds JSON in prose, fenced blocks and bare text", () => {
    expect(extractJson('{"a":1}')).toEqual({ found: true, value: { a: 1 } });
    expect(extractJson('Here:\n```json\n{"a": [1, 2]}\n```\nDone.')).toEqual({
      found: true,
      value: { a: [1, 2] },
    });
    expect(extractJson('The result is {"ok": true} as asked.')).toEqual({ found: true, value: { ok: true } });
    expect(extractJson("no json here")).toEqual({ found: false });
  });
});

describe("child prompt and outcomes", () => {
  it("renderTask puts the task first, then the seed, then the required output", () => {
    const text = renderTask("  Find the bug.  ", { file: "a.ts" }, { type: "object", properties: {} });
    expect(text.startsWith("Find the bug.\n\n## Seed\n")).toBe(true);
    expect(text).toContain('"file": "a.ts"');
    expect(text.indexOf("## Seed")).toBeLessThan(text.indexOf("## Required output"));
    expect(renderTask("t", undefined, undefined)).toBe("t");
    expect(renderTask("t", undefined, { type: "string" })).toContain("with `value` set to");
  });

  it("interpretOutcome maps every outcome kind", () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    const fin = (finish: unknown) => ({ type: "finished", finish }) as Parameters<typeof interpretOutcome>[0];
    expect(interpretOutcome(fin({ kind: "assistantMessage", text: "  hi  " }), undefined)).toEqual({
      ok: true,
      value: "hi",
    });
    expect(
      interpretOutcome(fin({ kind: "toolValue", toolName: "submit_result", value: { n: 1 } }), schema),
    ).toEqual({ ok: true, value: { n: 1 } });
    expect(
      interpretOutcome(fin({ kind: "toolValue", toolName: "submit_result", value: { value: "x" } }), {
        type: "string",
      }),
    ).toEqual({ ok: true, value: "x" });
    expect(
      interpretOutcome(fin({ kind: "assistantMessage", text: '```json\n{"n": 2}\n```' }), schema),
    ).toEqual({
      ok: true,
      value: { n: 2 },
    });
    expect(interpretOutcome(fin({ kind: "finalValue", value: { n: "two" } }), schema)).toMatchObject({
      ok: false,
      problems: [expect.stringContaining("/n")],
    });
    expect(
      interpretOutcome(
        fin({ kind: "toolValue", toolName: "submit_error", value: { reason: "nope" } }),
        undefined,
      ),
    ).toEqual({ ok: false, error: "the child agent gave up: nope" });
    expect(interpretOutcome({ type: "stopped", reason: "cancelled" }, undefined)).toMatchObject({
      ok: false,
      cancelled: true,
    });
    expect(interpretOutcome({ type: "stopped", reason: "maxTurns", message: "limit" }, undefined)).toEqual({
      ok: false,
      error: "the child agent stopped (maxTurns): limit",
    });
  });

  it("outcomeFromTranscript reads the last committed turn's result", () => {
    const user: Message = { id: "u", role: "user", parts: [{ type: "text", text: "task" }] };
    const submitted: Message[] = [
      user,
      {
        id: "a",
        role: "assistant",
        parts: [{ type: "toolCall", id: "s", name: "submit_result", argumentsText: '{"n":1}' }],
      },
      {
        id: "t",
        role: "tool",
        parts: [
          {
            type: "toolResult",
            callId: "s",
            name: "submit_result",
            content: [{ type: "text", text: "Result submitted." }],
            isError: false,
            value: { n: 1 },
          },
        ],
      },
    ];
    expect(outcomeFromTranscript(submitted)).toEqual({
      type: "finished",
      finish: { kind: "toolValue", toolName: "submit_result", value: { n: 1 } },
    });
    expect(
      outcomeFromTranscript([
        user,
        { id: "a", role: "assistant", parts: [{ type: "text", text: "answer" }] },
      ]),
    ).toEqual({ type: "finished", finish: { kind: "assistantMessage", text: "answer" } });
    expect(outcomeFromTranscript([user])).toMatchObject({ type: "stopped", reason: "incomplete" });
  });
});

describe("capabilities", () => {
  it("the registry keeps registration order and replaces same-name entries in place", () => {
    const reg = CapabilityRegistry.defaults({ explore: "m/cheap" });
    expect(reg.names()).toEqual(["explore", "peer"]);
    expect(reg.get("explore")!.model).toBe("m/cheap");
    reg.register(exploreCapability({ model: "m/other" }));
    reg.register(defineCapability({ name: "reviewer", description: "reviews", tools: () => ["read_notes"] }));
    expect(reg.names()).toEqual(["explore", "peer", "reviewer"]);
    expect(reg.get("explore")!.model).toBe("m/other");
    expect(peerCapability().spawn).toBe(true);
    expect(exploreCapability().spawn).toBe(false);
  });

  it("classification: spawn_agent declares effects read; explore adds a readonly policy layer, peer none", () => {
    const spawn = subagentsPlugin().tools?.find((t) => t.name === "spawn_agent");
    expect(spawn?.effects).toEqual(["read"]);
    expect(exploreCapability({ model: "m/x" }).policy).toEqual({ profile: "readonly" });
    expect(peerCapability().policy).toBeUndefined();
  });

  it("plugin options are checked; `capability` is required only without a default", () => {
    expect(() => subagentsPlugin({ capabilities: [] })).toThrow(/at least one capability/);
    expect(() => subagentsPlugin({ defaultCapability: "nope" })).toThrow(/not registered/);
    const schemaOf = (p: ReturnType<typeof subagentsPlugin>) =>
      p.tools![0]!.inputSchema as { required: string[]; properties: { capability: { enum: string[] } } };
    expect(schemaOf(subagentsPlugin()).required).toEqual(["task", "capability"]);
    expect(schemaOf(subagentsPlugin({ defaultCapability: "explore" })).required).toEqual(["task"]);
    expect(schemaOf(subagentsPlugin({ capabilities: [peerCapability()] })).required).toEqual(["task"]);
    expect(schemaOf(subagentsPlugin()).properties.capability.enum).toEqual(["explore", "peer"]);
    const tool = subagentsPlugin().tools![0]!;
    expect(tool).toMatchObject({
      name: "spawn_agent",
      idempotent: true,
      binding: { module: "agents", operation: "spawn" },
    });
  });
});

// ---- through a runtime ----

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function serve(responder: (req: Req) => MockReply): Promise<MockLlmServer> {
  const server = await startMockServer({ responder: (raw) => responder(parse(raw)) });
  servers.push(server);
  return server;
}
const resultOf = (messages: readonly Message[], callId: string): ToolResultPart | undefined => {
  for (const m of messages)
    for (const p of m.parts) if (p.type === "toolResult" && p.callId === callId) return p;
  return undefined;
};
const textOf = (p: ToolResultPart | undefined) =>
  (p?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

describe("spawn_agent through a runtime", () => {
  it("argument errors are tool errors: unknown capability (with a custom registry), malformed output, no capability", async () => {
    const server = await serve((req) =>
      req.step === 0
        ? {
            toolCalls: [
              { id: "c1", name: "spawn_agent", arguments: { task: "x", output: { a: "strng" } } },
              { id: "c2", name: "spawn_agent", arguments: { task: "   " } },
            ],
          }
        : { text: "ok" },
    );
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: MODEL });
          yield* rt.turn(s.id, { text: "go" });
          const view = yield* rt.readView(s.id);
          expect(textOf(resultOf(view, "c1"))).toContain("malformed output");
          expect(textOf(resultOf(view, "c2"))).toBe("missing task: give the subagent a task to do");
          expect(yield* rt.children(s.id)).toHaveLength(0);
        }),
      { subagents: { defaultCapability: "explore" } },
    );
  });

  it("a child whose turn committed before the parent recorded it is read back, not run again", async () => {
    const server = await serve((req) => {
      if (req.first === "PARENT") {
        return req.step === 0
          ? {
              toolCalls: [
                { id: "call_done", name: "spawn_agent", arguments: { task: "CHILD", capability: "peer" } },
              ],
            }
          : { text: `got ${req.results[0]?.text}` };
      }
      return { text: "precomputed answer", usage: { input: 10, output: 1 } };
    });
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const parent = yield* rt.createSession({ model: MODEL });
        // the state a crash leaves behind: the child of call_done exists and has committed its turn
        const child = yield* rt.createSession({
          model: MODEL,
          parentLink: { sessionId: parent.id, callId: "call_done", depth: 1 },
        });
        yield* rt.turn(child.id, { text: "CHILD" });
        const requestsBefore = server.requests.length;
        const r = yield* rt.turn(parent.id, { text: "PARENT" });
        expect(r.text).toBe("got precomputed answer");
        const childRequests = server.requests
          .slice(requestsBefore)
          .map(parse)
          .filter((q) => q.first === "CHILD");
        expect(childRequests).toHaveLength(0);
        expect(yield* rt.children(parent.id)).toHaveLength(1);
        expect((yield* rt.getSession(child.id)).turnCount).toBe(1);
        const ledger = yield* rt.usage(parent.id);
        expect(ledger.bySource.find((g) => g.source === `agent:${child.id}`)?.usage).toEqual({
          input: 10,
          output: 1,
        });
      }),
    );
  });

  it("the child's session records its spawn; peer children at depth < 5 can spawn, explore children cannot", async () => {
    const server = await serve((req) => {
      if (req.first === "PARENT")
        return req.step === 0
          ? {
              toolCalls: [
                {
                  id: "call_rec",
                  name: "spawn_agent",
                  arguments: { task: "CHILD rec", capability: "explore", output: { ok: "bool" } },
                },
              ],
            }
          : { text: "done" };
      return { toolCalls: [{ id: "s", name: "submit_result", arguments: { ok: true } }] };
    });
    const { plugin } = testTools();
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL });
          yield* rt.turn(parent.id, { text: "PARENT" });
          const [child] = yield* rt.children(parent.id);
          expect(child!.state[SPAWN_STATE_KEY]).toMatchObject({
            parentSessionId: parent.id,
            callId: "call_rec",
            capability: "explore",
            depth: 1,
            task: "CHILD rec",
            schema: { type: "object", properties: { ok: { type: "boolean" } } },
          });
          expect(child!.state["lash.tools"]).toEqual(["read_notes", "submit_result", "submit_error"]);
          expect((yield* rt.tools(child!.id)).map((t) => t.name).sort()).toEqual([
            "read_notes",
            "submit_error",
            "submit_result",
          ]);
        }),
      { plugins: [plugin] },
    );
  });

  it("cancelChild stops just that child: its spawn_agent call is cancelled, its sibling and the parent go on", async () => {
    const server = await serve((req) => {
      if (req.first === "PARENT")
        return req.step === 0
          ? {
              toolCalls: [
                { id: "c_slow", name: "spawn_agent", arguments: { task: "CHILD slow", capability: "peer" } },
                { id: "c_fast", name: "spawn_agent", arguments: { task: "CHILD fast", capability: "peer" } },
              ],
            }
          : {
              text: `parent saw: ${req.results.map((r) => `${r.id}=${r.isError ? "error" : "ok"}:${r.text}`).join(" | ")}`,
            };
      if (req.first.includes("CHILD slow")) return { hang: true };
      return { text: "fast result", usage: { input: 5, output: 1 } };
    });
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const parent = yield* rt.createSession({ model: MODEL });
        const fiber = yield* Effect.fork(rt.turn(parent.id, { text: "PARENT" }));
        // wait until the slow child's model call hangs
        while (
          !server.requests.some((r) => parse(r).first.includes("CHILD slow")) ||
          runningChildren().length === 0
        )
          yield* Effect.sleep(20);
        const children = yield* rt.children(parent.id);
        const slow = children.find((c) => c.title?.includes("CHILD slow"))!;
        expect(cancelChild("no-such-child")).toBe(false);
        expect(cancelChild(slow.id)).toBe(true);
        const r = yield* fiber.await.pipe(Effect.flatten);
        expect(r.outcome.type).toBe("finished");
        expect(r.text).toMatch(/c_slow=error:the child agent was cancelled by the user/);
        expect(r.text).toMatch(/c_fast=ok:fast result/);
        expect(runningChildren()).toEqual([]);
        const finished = childEvents(yield* turnEvents(rt, parent.id)).filter(
          (e) => e.name === "childFinished",
        );
        // one childFinished per child, the slow one cancelled
        expect(finished.map((e) => `${e.data.callId}:${e.data.outcome}`).sort()).toEqual([
          "c_fast:finished",
          "c_slow:cancelled",
        ]);
      }),
    );
  });
});

describe("spawn_agent with an output: the child's answer is requested with the schema (issue 22)", () => {
  it("the child's model requests carry it as structured output; a JSON answer (no submit_result) is the typed result", async () => {
    const server = await serve((req) => {
      if (req.first === "PARENT")
        return req.step === 0
          ? {
              toolCalls: [
                {
                  id: "call_typed",
                  name: "spawn_agent",
                  arguments: {
                    task: "CHILD typed",
                    capability: "explore",
                    output: { count: "int", files: "list[str]" },
                  },
                },
              ],
            }
          : { text: `parent saw ${req.results[0]?.text.replace(/\s+/g, "")}` };
      // the child answers with the JSON value itself
      return { text: JSON.stringify({ count: 2, files: ["a.ts", "b.ts"] }) };
    });
    const { plugin } = testTools();
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const parent = yield* rt.createSession({ model: MODEL });
          const r = yield* rt.turn(parent.id, { text: "PARENT" });
          expect(r.text).toBe('parent saw {"count":2,"files":["a.ts","b.ts"]}');
          const child = server.requests.map(parse).find((q) => q.first.startsWith("CHILD typed"));
          const parentReq = server.requests.map(parse).find((q) => q.first === "PARENT");
          // Anthropic structured outputs: output_config.format with the child's schema
          expect((child!.raw.body as { output_config?: unknown }).output_config).toEqual({
            format: {
              type: "json_schema",
              schema: {
                type: "object",
                properties: {
                  count: { type: "integer" },
                  files: { type: "array", items: { type: "string" } },
                },
                required: ["count", "files"],
                additionalProperties: false,
              },
            },
          });
          // the parent's own requests ask for no structured output
          expect((parentReq!.raw.body as { output_config?: unknown }).output_config).toBeUndefined();
        }),
      { plugins: [plugin] },
    );
  });
});
