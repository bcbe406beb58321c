// Issue 21, the RLM slice of `llm.query`, the stream mask and projected bindings, end to end: a
// real LashRuntime, the real vendor SDKs against the mock wire server (its request log and its
// per-stream record of how much was written and who closed the connection).
import { rlmMode, type TurnActivity } from "@lash/core";
import { exportSession, parseExport } from "@lash/export";
import { type MockLlmServer, type MockReply, startMockServer } from "@lash/providers/testing";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { cell, wireText, withRuntime } from "./rlm-support.ts";

const servers: MockLlmServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(replies: MockReply[]): Promise<MockLlmServer> {
  const server = await startMockServer({ replies });
  servers.push(server);
  return server;
}

/** One model per provider family (the vendor picks the wire format). */
const FAMILIES = [
  { family: "OpenAI-compatible Chat Completions", model: "openai-compatible/qwen3" },
  { family: "OpenAI Responses", model: "openai/gpt-4.1" },
  { family: "Anthropic", model: "anthropic/claude-haiku-4-5" },
  { family: "Google", model: "google/gemini-2.5-flash" },
] as const;

describe("the stream mask (issue 21, acceptance 3)", () => {
  const reply = "Counting.\n<lashlang>\nfinish 6 * 7\n</lashlang>\n";
  for (const { family, model } of FAMILIES) {
    it(`${family}: the cell is hidden from the visible stream and the connection is closed at the close tag`, async () => {
      const server = await serve([
        {
          textPieces: [
            "Counting.\n",
            "<lashlang>\n",
            "finish 6 * 7\n",
            "</lashlang>\n",
            "NOT SENT\n",
            "tail",
          ],
          // the server writes nothing after the close-tag delta: only the client can end the stream
          stallAfter: "</lashlang>",
          usage: { input: 321, output: 50 },
        },
      ]);
      const events: TurnActivity[] = [];
      await withRuntime(
        server,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model, mode: "rlm" });
            const t = yield* rt.turn(s.id, { text: "6 times 7?" }, { onEvent: (e) => events.push(e) });
            expect(t.finalValue).toBe(42);
            const closed = yield* Effect.promise(() => server.waitForStreamClosed(0));
            expect(closed.closedByClient).toBe(true);
            expect(closed.eventsWritten).toBeLessThan(closed.eventsTotal);
            // only the prose reached the visible stream
            const visible = events.flatMap((e) => (e.type === "textDelta" ? [e.text] : [])).join("");
            expect(visible).toBe("Counting.\n");
            // the recorded reply ends at the close tag
            const view = yield* rt.readView(s.id);
            const assistant = JSON.stringify(view.filter((m) => m.role === "assistant"));
            expect(assistant).toContain("finish 6 * 7");
            expect(assistant).not.toContain("NOT SENT");
            // usage of what was received: Anthropic had reported the input in message_start;
            // the others report usage only at the end, so input is the request's estimate;
            // output is the received reply's length / 4
            const usage = (yield* rt.usage(s.id)).total;
            if (model.startsWith("anthropic/")) expect(usage.input).toBe(321);
            else {
              expect(usage.input).toBeGreaterThan(0);
              expect(usage.input).not.toBe(321);
            }
            expect(usage.output).toBe(Math.ceil(reply.length / 4));
          }),
        { model },
      );
    });
  }
});

describe("llm.query with a schema carries the vendor's JSON-schema response format (issue 21, acceptance 4)", () => {
  const program = 'r = await llm.query({ task: "Rate it", output: { score: "int" } })?\nfinish r.score';
  const answer = { kind: "value", value: { score: 7 }, error: null };
  const cases: readonly {
    readonly family: string;
    readonly model: string;
    readonly reply: MockReply;
    readonly check: (body: Record<string, unknown>) => void;
  }[] = [
    {
      family: "OpenAI Responses (text.format)",
      model: "openai/gpt-4.1",
      reply: { text: JSON.stringify(answer) },
      check: (body) => {
        const format = (body.text as { format: Record<string, unknown> }).format;
        expect(format).toMatchObject({ type: "json_schema", name: "llm_query_reply" });
        expect(format.schema).toMatchObject({ required: ["kind", "value", "error"] });
      },
    },
    {
      family: "OpenAI-compatible Chat Completions (response_format)",
      model: "openai-compatible/qwen3",
      reply: { text: JSON.stringify(answer) },
      check: (body) => {
        const format = body.response_format as { type: string; json_schema: Record<string, unknown> };
        expect(format.type).toBe("json_schema");
        expect(format.json_schema).toMatchObject({ name: "llm_query_reply" });
        expect(format.json_schema.schema).toMatchObject({ required: ["kind", "value", "error"] });
      },
    },
    {
      family: "Anthropic, native structured output (output_config.format)",
      model: "anthropic/claude-haiku-4-5",
      reply: { text: JSON.stringify(answer) },
      check: (body) => {
        const format = (body.output_config as { format: Record<string, unknown> }).format;
        expect(format.type).toBe("json_schema");
        expect(format.schema).toMatchObject({ required: ["kind", "value", "error"] });
        expect(body.tools).toBeUndefined();
      },
    },
    {
      family: "Anthropic, a model without it (the forced tool)",
      model: "anthropic/claude-3-5-haiku",
      reply: { toolCalls: [{ name: "llm_query_reply", arguments: answer }] },
      check: (body) => {
        expect(body.output_config).toBeUndefined();
        expect(body.tool_choice).toEqual({ type: "tool", name: "llm_query_reply" });
        const tools = body.tools as { name: string; input_schema: unknown }[];
        expect(tools).toHaveLength(1);
        expect(tools[0]!.input_schema).toMatchObject({ required: ["kind", "value", "error"] });
      },
    },
    {
      family: "Google (responseMimeType + responseJsonSchema)",
      model: "google/gemini-2.5-flash",
      reply: { text: JSON.stringify(answer) },
      check: (body) => {
        const config = body.generationConfig as Record<string, unknown>;
        expect(config.responseMimeType).toBe("application/json");
        expect(config.responseJsonSchema).toMatchObject({ required: ["kind", "value", "error"] });
      },
    },
  ];
  for (const c of cases) {
    it(c.family, async () => {
      const server = await serve([cell(program), c.reply]);
      await withRuntime(
        server,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: c.model, mode: "rlm" });
            const t = yield* rt.turn(s.id, { text: "rate" });
            expect(t.finalValue).toBe(7);
            expect(server.requests).toHaveLength(2);
            c.check(server.requests[1]!.body as Record<string, unknown>);
            // the session's own request asks for no structured output
            const own = server.requests[0]!.body as Record<string, unknown>;
            expect(own.response_format ?? own.output_config ?? own.text).toBeUndefined();
          }),
        { model: c.model },
      );
    });
  }

  it("a malformed reply (twice: the check retries once) is an error result the cell handles", async () => {
    const server = await serve([
      cell(
        `r = await llm.query({ task: "Rate it", output: { score: "int" } })\nfinish r.ok ? "ok" : r.error`,
      ),
      { text: "I would say seven." },
      { text: '{"kind": "value", "value": {"score": "seven"}, "error": null}' },
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "openai-compatible/qwen3", mode: "rlm" });
          const t = yield* rt.turn(s.id, { text: "rate" });
          expect(server.requests).toHaveLength(3);
          expect(typeof t.finalValue).toBe("string");
          expect(t.finalValue).toMatch(/^llm\.query: the model call failed: /);
          expect(t.finalValue).toContain("does not match the required output schema");
        }),
      { model: "openai-compatible/qwen3" },
    );
  });
});

describe("llm.query and continue_as are records in the session graph (issue 21)", () => {
  it("both leave a tool-result record on the step's observation, in the JSON and HTML exports", async () => {
    const server = await serve([
      cell(
        'r = await llm.query({ task: "Rate it", inputs: { text: "fine" }, output: { score: "int" } })?\nawait control.continue_as({ task: "Report the score.", seed: { score: r.score } })?',
      ),
      {
        text: JSON.stringify({ kind: "value", value: { score: 7 }, error: null }),
        usage: { input: 40, output: 9 },
      },
      cell('finish format("score {}", score)'),
    ]);
    await withRuntime(server, (rt) =>
      Effect.gen(function* () {
        const s = yield* rt.createSession({ model: "anthropic/claude-haiku-4-5", mode: "rlm" });
        const t = yield* rt.turn(s.id, { text: "rate" });
        expect(t.finalValue).toBe("score 7");
        const json = yield* Effect.promise(() => exportSession(rt, s.id, "json"));
        const exported = parseExport(json);
        const records = exported.nodes.flatMap((n) =>
          n.kind === "message"
            ? ((n.payload as { parts: { type: string; name?: string; details?: unknown; value?: unknown }[] })
                .parts ?? [])
            : [],
        );
        const query = records.find((p) => p.type === "toolResult" && p.name === "llm_query");
        expect(query?.value).toEqual({ score: 7 });
        expect(query?.details).toMatchObject({
          kind: "llm.query",
          task: "Rate it",
          inputs: { text: "fine" },
          output: { type: "object", required: ["score"] },
          model: "anthropic/claude-haiku-4-5",
          usage: { input: 40, output: 9 },
        });
        const cont = records.find((p) => p.type === "toolResult" && p.name === "continue_as");
        expect(cont?.details).toMatchObject({
          kind: "continue_as",
          task: "Report the score.",
          seedKeys: ["score"],
        });
        // the frame switch itself is the frame node the store already keeps
        expect(exported.nodes.some((n) => n.kind === "frame")).toBe(true);
        const html = yield* Effect.promise(() => exportSession(rt, s.id, "html"));
        expect(html).toContain("llm_query");
        expect(html).toContain("continue_as");
        // records are not shown to the model: the next prompt renders the step without them
        expect(JSON.stringify(server.requests[2]!.body)).not.toContain("seedKeys");
      }),
    );
  });
});

describe("projected bindings (issue 21, library option `bindings`)", () => {
  it("host values are read-only names in every cell, listed in the prompt beside history", async () => {
    const server = await serve([
      cell("print cfg.n + len(note)"),
      cell("cfg = 3"),
      cell('local = cfg\nlocal.n = 5\nfinish format("{} {} {}", local.n, cfg.n, cfg.tags[0])'),
    ]);
    await withRuntime(
      server,
      (rt) =>
        Effect.gen(function* () {
          const s = yield* rt.createSession({ model: "anthropic/claude-haiku-4-5", mode: "rlm" });
          const t = yield* rt.turn(s.id, { text: "go" });
          expect(t.finalValue).toBe("5 2 a");
          const system = wireText(server.requests[0]!);
          const section = system.slice(system.indexOf("# Read-Only Variables"));
          expect(section).toContain('- `cfg`: read-only record from the host: {"n":2,"tags":["a"]}');
          expect(section).toContain('- `note`: read-only string from the host: "hello"');
          expect(section).toContain("- `history`:");
          expect(wireText(server.requests[1]!)).toContain("history[1].output[0] (1 chars):\n7");
          // assigning one is an error the model reads
          expect(wireText(server.requests[2]!)).toContain("`cfg` is a read-only projected binding");
        }),
      { rlm: { bindings: { cfg: { n: 2, tags: ["a"] }, note: "hello" } } },
    );
  });

  it("names are checked: `history` is reserved, a name must be an identifier", () => {
    expect(() => rlmMode({ bindings: { history: 1 } })).toThrow(/`history` is reserved/);
    expect(() => rlmMode({ bindings: { "a-b": 1 } })).toThrow(/not an identifier/);
  });
});
