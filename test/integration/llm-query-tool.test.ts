// Issue 21 (`llm_query` as a tool in standard mode) and issue 16 (tools get capabilities, not the
// runtime), end to end: a real LashRuntime, the real vendor SDKs against the mock wire server
// (its request log), the graph, the ledger and the JSON export.
import { defineTool, type Plugin, textOutput } from "@lash/core";
import { exportSession, parseExport } from "@lash/export";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { llmQueryTool, toolsPlugin } from "@lash/tools";
import { Effect } from "effect";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";
import { cell, withRuntime } from "./rlm-support.ts";

// the CLI test spawns `lash` processes; the shared box can be slow
vi.setConfig({ testTimeout: 120_000 });

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(replies: MockReply[]): Promise<MockLlmServer> {
  const server = await startMockServer({ replies });
  servers.push(server);
  return server;
}

const MODEL = "openai-compatible/qwen3";
const queryPlugin: Plugin = { name: "query", tools: [llmQueryTool()] };
const call = (args: Record<string, unknown>): MockReply => ({
  toolCalls: [{ name: "llm_query", arguments: args }],
  usage: { input: 100, output: 10 },
});
const scoreSchema = {
  type: "object",
  properties: { score: { type: "integer" } },
  required: ["score"],
  additionalProperties: false,
};

type Body = {
  messages: { role: string; content: unknown; tool_call_id?: string }[];
  tools?: { function: { name: string; parameters: unknown } }[];
  response_format?: { type: string; json_schema: { name: string; schema: Record<string, unknown> } };
};
const bodyOf = (server: MockLlmServer, i: number) => server.requests[i]!.body as Body;
const toolMessages = (b: Body) => b.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

describe("llm_query in standard mode (issue 21)", () => {
  it("is in the catalog with its JSON schema; a structured query sends the JSON-schema response format, the model gets the value, the graph and the export keep the record, the ledger the usage", async () => {
    const server = await serve([
      call({ task: "Rate the review", inputs: { review: "fine, not great" }, output: scoreSchema }),
      {
        text: JSON.stringify({ kind: "value", value: { score: 6 }, error: null }),
        usage: { input: 40, output: 9 },
      },
      { text: "The score is 6.", usage: { input: 120, output: 6 } },
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: MODEL });
          const t = yield* rt.turn(s.id, { text: "rate it" });
          expect(t.text).toBe("The score is 6.");
          expect(server.requests).toHaveLength(3);
          // the catalog: llm_query with its input schema
          const tool = bodyOf(server, 0).tools?.find((x) => x.function.name === "llm_query");
          expect(tool?.function.parameters).toMatchObject({
            required: ["task"],
            additionalProperties: false,
          });
          // the sub-request: tool-less, the task and inputs in the prompt, the reply's shape as response_format
          const sub = bodyOf(server, 1);
          expect(sub.tools ?? []).toEqual([]);
          expect(sub.response_format?.type).toBe("json_schema");
          expect(sub.response_format?.json_schema.name).toBe("llm_query_reply");
          expect(sub.response_format?.json_schema.schema).toMatchObject({
            required: ["kind", "value", "error"],
            properties: { value: { anyOf: [scoreSchema, { type: "null" }] } },
          });
          const prompt = JSON.stringify(sub.messages);
          expect(prompt).toContain("Rate the review");
          expect(prompt).toContain("fine, not great");
          // what the model is given back
          expect(toolMessages(bodyOf(server, 2))).toEqual(['{"score":6}']);
          // the graph record (as RLM's llm.query records it) and the export
          const view = yield* rt.readView(s.id);
          const results = view.flatMap((m) => m.parts.filter((p) => p.type === "toolResult"));
          expect(results).toHaveLength(1);
          const rec = results[0] as { name: string; value?: unknown; details?: unknown; isError: boolean };
          expect(rec.name).toBe("llm_query");
          expect(rec.isError).toBe(false);
          expect(rec.value).toEqual({ score: 6 });
          expect(rec.details).toMatchObject({
            kind: "llm.query",
            task: "Rate the review",
            inputs: { review: "fine, not great" },
            output: scoreSchema,
            model: MODEL,
            usage: { input: 40, output: 9 },
          });
          const exported = parseExport(yield* Effect.promise(() => exportSession(rt, s.id, "json")));
          expect(JSON.stringify(exported.nodes)).toContain('"kind":"llm.query"');
          // the ledger: the sub-query is a row of its own
          const usage = yield* rt.usage(s.id);
          expect(usage.bySource.find((r) => r.source === "llm.query")?.usage).toMatchObject({
            input: 40,
            output: 9,
          });
        }),
      { model: MODEL, plugins: [queryPlugin] },
    );
  });

  it("a shorthand output and no output: the schema it stands for, and a plain string by default", async () => {
    const server = await serve([
      call({ task: "List the claims", output: { claims: "list[str]" } }),
      { text: JSON.stringify({ kind: "value", value: { claims: ["a", "b"] }, error: null }) },
      call({ task: "Say hi" }),
      { text: JSON.stringify({ kind: "value", value: "hi", error: null }) },
      { text: "done" },
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: MODEL });
          yield* rt.turn(s.id, { text: "go" });
          const value = (i: number) =>
            (bodyOf(server, i).response_format!.json_schema.schema.properties as { value: unknown }).value;
          expect(value(1)).toEqual({
            anyOf: [
              {
                type: "object",
                properties: { claims: { type: "array", items: { type: "string" } } },
                required: ["claims"],
                additionalProperties: false,
              },
              { type: "null" },
            ],
          });
          expect(value(3)).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] });
          expect(toolMessages(bodyOf(server, 4))).toEqual(['{"claims":["a","b"]}', "hi"]);
        }),
      { model: MODEL, plugins: [queryPlugin] },
    );
  });

  it("a malformed structured reply (twice: the provider's check retries once) is a typed tool error the model reads", async () => {
    const server = await serve([
      call({ task: "Rate it", output: scoreSchema }),
      { text: "I would say seven." },
      { text: '{"kind": "value", "value": {"score": "seven"}, "error": null}' },
      { text: "It failed." },
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: MODEL });
          const events: { type: string; isError?: boolean; name?: string }[] = [];
          yield* rt.turn(s.id, { text: "rate" }, { onEvent: (e) => events.push(e) });
          expect(server.requests).toHaveLength(4);
          const [msg] = toolMessages(bodyOf(server, 3));
          expect(msg).toMatch(/^llm_query: the model call failed \(outputMismatch\): /);
          expect(msg).toContain("does not match the required output schema");
          const done = events.find((e) => e.type === "toolCompleted" && e.name === "llm_query");
          expect(done?.isError).toBe(true);
        }),
      { model: MODEL, plugins: [queryPlugin] },
    );
  });

  it("the model's own error answer is an error result, with the record kept", async () => {
    const server = await serve([
      call({ task: "Rate it", output: scoreSchema }),
      { text: JSON.stringify({ kind: "error", value: null, error: "no review given" }) },
      { text: "ok" },
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: MODEL });
          yield* rt.turn(s.id, { text: "rate" });
          expect(toolMessages(bodyOf(server, 2))).toEqual(["llm_query: no review given"]);
          const view = yield* rt.readView(s.id);
          const rec = view.flatMap((m) => m.parts).find((p) => p.type === "toolResult") as {
            isError: boolean;
            details?: unknown;
          };
          expect(rec.isError).toBe(true);
          expect(rec.details).toMatchObject({ kind: "llm.query", task: "Rate it" });
        }),
      { model: MODEL, plugins: [queryPlugin] },
    );
  });

  it("invalid arguments: a clear tool error, and no model call is made", async () => {
    const server = await serve([
      call({ inputs: [1, 2] }),
      call({ task: "Rate it", output: { score: "integer-ish" } }),
      { text: "gave up" },
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: MODEL });
          yield* rt.turn(s.id, { text: "rate" });
          // three requests: the session's own; no sub-request in between
          expect(server.requests).toHaveLength(3);
          expect(bodyOf(server, 1).response_format).toBeUndefined();
          const [missing] = toolMessages(bodyOf(server, 1));
          expect(missing).toContain("task");
          const msgs = toolMessages(bodyOf(server, 2));
          expect(msgs[1]).toContain("llm_query: unknown type `integer-ish`");
        }),
      { model: MODEL, plugins: [queryPlugin] },
    );
  });

  it("toolsPlugin({ llmQuery: true }) adds it; an RLM cell's llm.query then runs through the tool", async () => {
    const server = await serve([
      cell('r = await llm.query({ task: "Rate it", output: { score: "int" } })?\nfinish r.score'),
      { text: JSON.stringify({ kind: "value", value: { score: 7 }, error: null }) },
    ]);
    const plugin = toolsPlugin({ root: process.cwd(), tools: [], llmQuery: true });
    expect(plugin.tools.map((t) => t.name)).toEqual(["llm_query"]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "anthropic/claude-haiku-4-5", mode: "rlm" });
          const t = yield* rt.turn(s.id, { text: "rate" });
          expect(t.finalValue).toBe(7);
          const sub = server.requests[1]!.body as { output_config?: { format: Record<string, unknown> } };
          expect(sub.output_config?.format).toMatchObject({ type: "json_schema" });
        }),
      { model: "anthropic/claude-haiku-4-5", plugins: [plugin] },
    );
  });
});

describe("llm_query's sub-request carries each vendor's JSON-schema response format", () => {
  const families: readonly {
    readonly model: string;
    readonly format: (body: Record<string, unknown>) => unknown;
  }[] = [
    { model: "openai/gpt-4.1", format: (b) => (b.text as { format?: unknown } | undefined)?.format },
    { model: "openai-compatible/qwen3", format: (b) => b.response_format },
    {
      model: "anthropic/claude-haiku-4-5",
      format: (b) => (b.output_config as { format?: unknown } | undefined)?.format,
    },
    {
      model: "google/gemini-2.5-flash",
      format: (b) => (b.generationConfig as { responseJsonSchema?: unknown } | undefined)?.responseJsonSchema,
    },
  ];
  for (const { model, format } of families) {
    it(model, async () => {
      const server = await serve([
        call({ task: "Rate it", output: { score: "int" } }),
        { text: JSON.stringify({ kind: "value", value: { score: 3 }, error: null }) },
        { text: "3" },
      ]);
      await withRuntime(
        server,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model });
            const t = yield* rt.turn(s.id, { text: "rate" });
            expect(t.text).toBe("3");
            expect(server.requests).toHaveLength(3);
            // the session's own request asks for no structured output; the sub-request does
            expect(format(server.requests[0]!.body as Record<string, unknown>)).toBeUndefined();
            expect(JSON.stringify(format(server.requests[1]!.body as Record<string, unknown>))).toContain(
              '"required":["kind","value","error"]',
            );
            const rec = (yield* rt.readView(s.id))
              .flatMap((m) => m.parts)
              .find((p) => p.type === "toolResult") as { value?: unknown } | undefined;
            expect(rec?.value).toEqual({ score: 3 });
          }),
        { model, plugins: [queryPlugin] },
      );
    });
  }
});

describe("tools get capabilities, not the runtime (issue 16)", () => {
  it("a custom tool calls the session's model through host.llm (journaled, usage in the ledger) and reads the session through host.sessions", async () => {
    const summarize = defineTool<{ text: string }>({
      name: "summarize",
      description: "Summarise a text with the session's model.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
        additionalProperties: false,
      },
      readOnly: true,
      run: async (args, ctx) => {
        const host = ctx.host!;
        const r = await Effect.runPromise(
          host.llm.complete(
            {
              system: "Summarise in three words.",
              messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: args.text }] }],
            },
            { source: "summarize" },
          ),
        );
        const session = await Effect.runPromise(host.sessions.get(ctx.sessionId));
        const summary = r.response.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
        return textOutput(`${summary} (session model ${session.model}, answered by ${r.model})`, {
          usage: r.usage ? [r.usage] : [],
        });
      },
    });
    const server = await serve([
      { toolCalls: [{ name: "summarize", arguments: { text: "a very long text about cats" } }] },
      { text: "cats are long", usage: { input: 30, output: 4 } },
      { text: "Summarised." },
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: MODEL });
          yield* rt.turn(s.id, { text: "summarise" });
          const sub = bodyOf(server, 1);
          expect(sub.messages[0]).toMatchObject({ role: "system", content: "Summarise in three words." });
          expect(JSON.stringify(sub.messages)).toContain("a very long text about cats");
          expect(toolMessages(bodyOf(server, 2))).toEqual([
            `cats are long (session model ${MODEL}, answered by ${MODEL})`,
          ]);
          const usage = yield* rt.usage(s.id);
          expect(usage.bySource.find((r) => r.source === "summarize")?.usage).toMatchObject({
            input: 30,
            output: 4,
          });
        }),
      { model: MODEL, plugins: [{ name: "custom", tools: [summarize] }] },
    );
  });
});

describe("llm_query from the CLI (opt-in with --tools)", () => {
  let box: Sandbox | undefined;
  afterEach(async () => {
    await box?.cleanup();
    box = undefined;
  });

  it("`lash -p … --tools read_file,llm_query` offers it and runs it; without it named, it is not offered", async () => {
    box = await sandbox([
      { toolCalls: [{ name: "llm_query", arguments: { task: "Name a colour", output: { colour: "str" } } }] },
      { text: JSON.stringify({ kind: "value", value: { colour: "teal" }, error: null }) },
      { text: "Teal." },
      { text: "plain" },
    ]);
    const r = await lash(["-p", "pick", "--tools", "read_file,llm_query"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Teal.\n");
    const names = (i: number) =>
      ((box!.server.requests[i]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map(
        (t) => t.function.name,
      );
    expect(names(0)).toEqual(expect.arrayContaining(["llm_query", "read_file"]));
    expect(names(0)).not.toContain("shell");
    expect(
      (box.server.requests[1]!.body as { response_format?: { type: string } }).response_format?.type,
    ).toBe("json_schema");
    const last = chatMessages(box.server.requests[2]!.body).at(-1)!;
    expect(last.role).toBe("tool");
    expect(textOf(last.content)).toBe('{"colour":"teal"}');
    // default tools: no llm_query
    const plain = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(plain.code).toBe(0);
    expect(names(3)).not.toContain("llm_query");
    expect(names(3)).toContain("read_file");
  });
});
