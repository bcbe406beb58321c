// The plain parts of the agents routes and the MCP tool: the input check (as `lash run`
// checks it), the typed value of a finished run, and the MCP tool of an agent whose schemas
// are not objects (MCP wants object schemas: wrapped as `{ input }` / `{ value }`).
import type { ResolvedAgent } from "@lash/agents";
import { Effect, Either } from "effect";
import { describe, expect, it } from "vitest";
import { Run } from "../src/api.ts";
import { checkAgentInput, typedValue } from "../src/groups/agents.ts";
import { agentTool } from "../src/mcp.ts";

const agent = (a: Partial<ResolvedAgent> & { name: string }): ResolvedAgent => ({
  description: `the ${a.name} agent`,
  mode: "standard",
  tools: [],
  instructions: "",
  source: `agents/${a.name}.agent.md`,
  ...a,
});

const typed = agent({
  name: "typed",
  input: {
    type: "object",
    properties: { n: { type: "integer" } },
    required: ["n"],
    additionalProperties: false,
  },
  output: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
});

const check = (a: ResolvedAgent, input: unknown) => Effect.runSync(Effect.either(checkAgentInput(a, input)));

const run = (fields: Partial<ConstructorParameters<typeof Run>[0]>) =>
  new Run({
    id: "r1",
    sessionId: "s1",
    principal: "local",
    state: "completed",
    input: "x",
    createdAt: 0,
    lastSeq: 0,
    resumes: 0,
    ...fields,
  });

describe("checkAgentInput", () => {
  it("an untyped agent takes any non-empty input; none is input_required naming the body to send", () => {
    expect(check(agent({ name: "plain" }), "do it")).toEqual(Either.right("do it"));
    const none = check(agent({ name: "plain" }), "  ");
    expect(Either.isLeft(none) && none.left).toMatchObject({ code: "input_required" });
    expect(Either.isLeft(none) && none.left.message).toContain('{"input": "<task>"}');
  });

  it("a typed agent: a matching JSON value passes, a wrong one is invalid_input naming the schema problem", () => {
    expect(check(typed, { n: 3 })).toEqual(Either.right({ n: 3 }));
    // a JSON string parses as `lash run` parses its argument
    expect(check(typed, '{"n": 4}')).toEqual(Either.right({ n: 4 }));
    const bad = check(typed, { n: "three" });
    expect(Either.isLeft(bad) && bad.left.code).toBe("invalid_input");
    expect(Either.isLeft(bad) && bad.left.message).toContain("does not match agent `typed`'s input schema");
    expect(Either.isLeft(bad) && bad.left.message).toMatch(/\/n/);
    const missing = check(typed, undefined);
    expect(Either.isLeft(missing) && missing.left.code).toBe("input_required");
  });
});

describe("typedValue", () => {
  it("is the turn's final value when there is one", () => {
    expect(typedValue(typed, run({ value: { ok: false }, text: "{}" }))).toEqual({ ok: false });
  });
  it("else the JSON of the answer when it matches the output schema", () => {
    expect(typedValue(typed, run({ text: '{"ok": true}' }))).toEqual({ ok: true });
    expect(typedValue(typed, run({ text: '```json\n{"ok": true}\n```' }))).toEqual({ ok: true });
  });
  it("nothing for an answer that does not match, a failed run, or an untyped agent", () => {
    expect(typedValue(typed, run({ text: '{"ok": "yes"}' }))).toBeUndefined();
    expect(typedValue(typed, run({ text: '{"ok": true}', state: "failed" }))).toBeUndefined();
    expect(typedValue(agent({ name: "plain" }), run({ text: '{"ok": true}' }))).toBeUndefined();
  });
});

describe("agentTool", () => {
  it("wraps non-object schemas: input as { input }, output as { value }", () => {
    const tool = agentTool(agent({ name: "lister", input: { type: "string" }, output: { type: "array" } }));
    expect(tool.inputSchema).toEqual({
      type: "object",
      properties: { input: { type: "string" } },
      required: ["input"],
    });
    expect(tool.outputSchema).toEqual({
      type: "object",
      properties: { value: { type: "array" } },
      required: ["value"],
    });
  });
});
