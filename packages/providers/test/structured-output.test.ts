// Structured output (issue 22): each vendor's request carries the schema in its own field
// (asserted on the mock wire server's request log), strict mode only where OpenAI's rules
// allow it, the forced-tool fallback on older Claude models, and the output check: a reply
// that does not match is retried once with the validation problems, then fails typed.
// Every provider: Codex (the Responses field through the ChatGPT backend), and Claude on
// Bedrock and Vertex (through their SDKs' own framing), where the platform decides between
// `output_config.format` and the forced tool.
import type { LlmEvent, LlmRequest } from "@lash/sansio";
import { accumulate } from "@lash/sansio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicParams, googleParams } from "../src/adapters/index.ts";
import type { ProviderKind } from "../src/index.ts";
import { createProvider, outputFormat, strictProblems, unknownModelInfo } from "../src/index.ts";
import type { MockLlmServer } from "../src/testing/index.ts";
import { mockProviderOptions, startMockServer } from "../src/testing/index.ts";
import { request, run, userText } from "./helpers.ts";

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockServer();
});
afterAll(() => server.close());

const answerSchema = {
  type: "object",
  properties: { answer: { type: "string" }, score: { type: "integer", minimum: 0 } },
  required: ["answer", "score"],
  additionalProperties: false,
};

const ask = (model: string, output: LlmRequest["output"], tools = false): LlmRequest => ({
  ...request(model, [userText("rate it")]),
  ...(tools ? {} : { tools: [] }),
  ...(output ? { output } : {}),
});

const providerFor = (model: string) => {
  const vendor = model.slice(0, model.indexOf("/")) as ProviderKind;
  return createProvider(model, { ...mockProviderOptions(server, vendor), retry: { jitter: 0 } });
};

/** Runs one request; returns the outcome and the bodies the server received for it. */
async function exchange(model: string, req: LlmRequest) {
  const before = server.requests.length;
  const outcome = await run(providerFor(model), req);
  const bodies = server.requests.slice(before).map((r) => r.body as Record<string, unknown>);
  return { ...outcome, bodies };
}

const good = JSON.stringify({ answer: "fine", score: 7 });

const CODEX = "codex/gpt-5-codex";
/** A Bedrock model Anthropic lists with structured outputs on Bedrock, and an older one. */
const BEDROCK = "bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0";
const BEDROCK_OLD = "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0";
const VERTEX = "vertex-anthropic/claude-haiku-4-5@20251001";

/** The forced output tool as the anthropic adapter sends it (older models, Vertex). */
const forcedTool = (body: Record<string, unknown> | undefined) => {
  expect(body?.output_config).toBeUndefined();
  expect(body?.tool_choice).toEqual({ type: "tool", name: "output" });
  expect(body?.tools).toEqual([expect.objectContaining({ name: "output", input_schema: answerSchema })]);
};

describe("the request carries the schema in each vendor's field", () => {
  it("OpenAI Responses: text.format json_schema, strict when the schema allows", async () => {
    server.enqueue({ text: good });
    const { bodies, error } = await exchange(
      "openai/gpt-4.1",
      ask("openai/gpt-4.1", { schema: answerSchema, name: "rating" }),
    );
    expect(error).toBeUndefined();
    expect(bodies[0]?.text).toEqual({
      format: { type: "json_schema", name: "rating", schema: answerSchema, strict: true },
    });
  });

  it("Chat Completions: response_format json_schema, non-strict when a field is optional", async () => {
    const optional = { ...answerSchema, required: ["answer"] };
    server.enqueue({ text: JSON.stringify({ answer: "ok" }) });
    const { bodies, error } = await exchange(
      "openai-compatible/qwen3",
      ask("openai-compatible/qwen3", { schema: optional }),
    );
    expect(error).toBeUndefined();
    expect(bodies[0]?.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "output", schema: optional, strict: false },
    });
  });

  it("Anthropic (structured outputs model): output_config.format json_schema, no tools added", async () => {
    server.enqueue({ text: good });
    const { bodies, error } = await exchange(
      "anthropic/claude-haiku-4-5",
      ask("anthropic/claude-haiku-4-5", { schema: answerSchema }),
    );
    expect(error).toBeUndefined();
    const format = (bodies[0]?.output_config as { format?: Record<string, unknown> } | undefined)?.format;
    expect(format?.type).toBe("json_schema");
    expect(format?.schema).toMatchObject({
      type: "object",
      properties: { answer: { type: "string" }, score: { type: "integer" } },
      required: ["answer", "score"],
      additionalProperties: false,
    });
    expect(bodies[0]?.tools).toBeUndefined();
  });

  it("Anthropic (older model): a forced single tool whose input is the answer, read back as text", async () => {
    server.enqueue({ toolCalls: [{ name: "output", arguments: { answer: "fine", score: 7 } }] });
    const { bodies, events, error } = await exchange(
      "anthropic/claude-3-5-haiku",
      ask("anthropic/claude-3-5-haiku", { schema: answerSchema }),
    );
    expect(error).toBeUndefined();
    expect(bodies[0]?.output_config).toBeUndefined();
    expect(bodies[0]?.tool_choice).toEqual({ type: "tool", name: "output" });
    expect(bodies[0]?.tools).toEqual([
      expect.objectContaining({ name: "output", input_schema: answerSchema }),
    ]);
    const response = accumulate(events);
    expect(response.stopReason).toBe("stop");
    expect(response.parts).toEqual([{ type: "text", text: good }]);
  });

  it("Gemini: responseMimeType application/json + responseJsonSchema", async () => {
    server.enqueue({ text: good });
    const { bodies, error } = await exchange(
      "google/gemini-2.5-flash",
      ask("google/gemini-2.5-flash", { schema: answerSchema }),
    );
    expect(error).toBeUndefined();
    const config = bodies[0]?.generationConfig as Record<string, unknown>;
    expect(config.responseMimeType).toBe("application/json");
    expect(config.responseJsonSchema).toEqual(answerSchema);
  });

  it("Gemini 2.x with tools: no response schema (unsupported with function calling), the prompt asks instead", async () => {
    server.enqueue({ text: good });
    const { bodies, error } = await exchange(
      "google/gemini-2.5-flash",
      ask("google/gemini-2.5-flash", { schema: answerSchema }, true),
    );
    expect(error).toBeUndefined();
    const config = bodies[0]?.generationConfig as Record<string, unknown>;
    expect(config.responseMimeType).toBeUndefined();
    expect(JSON.stringify(bodies[0]?.systemInstruction)).toContain("matching this JSON Schema");
  });

  it("Codex: the Responses text.format json_schema reaches the ChatGPT backend", async () => {
    server.enqueue({ text: good });
    const before = server.requests.length;
    const { bodies, error } = await exchange(CODEX, ask(CODEX, { schema: answerSchema, name: "rating" }));
    expect(error).toBeUndefined();
    expect(server.requests[before]?.path).toBe("/backend-api/codex/responses");
    expect(bodies[0]?.text).toEqual({
      format: { type: "json_schema", name: "rating", schema: answerSchema, strict: true },
    });
    expect(bodies[0]?.store).toBe(false); // still the backend's shape
  });

  it("Bedrock (a model listed with structured outputs on Bedrock): output_config.format in the invoke body", async () => {
    server.enqueue({ text: good });
    const before = server.requests.length;
    const { bodies, error, events } = await exchange(BEDROCK, ask(BEDROCK, { schema: answerSchema }));
    expect(error).toBeUndefined();
    expect(server.requests[before]?.platform).toBe("bedrock");
    const format = (bodies[0]?.output_config as { format?: Record<string, unknown> } | undefined)?.format;
    expect(format?.type).toBe("json_schema");
    expect(format?.schema).toMatchObject({ required: ["answer", "score"], additionalProperties: false });
    expect(bodies[0]?.tools).toBeUndefined();
    expect(typeof bodies[0]?.anthropic_version).toBe("string");
    expect(accumulate(events).parts).toEqual([{ type: "text", text: good }]);
  });

  it("Bedrock (older model id with the anthropic. prefix and -v1:0 suffix): the forced tool, read back as text", async () => {
    server.enqueue({ toolCalls: [{ name: "output", arguments: { answer: "fine", score: 7 } }] });
    const { bodies, error, events } = await exchange(BEDROCK_OLD, ask(BEDROCK_OLD, { schema: answerSchema }));
    expect(error).toBeUndefined();
    forcedTool(bodies[0]);
    const response = accumulate(events);
    expect(response.stopReason).toBe("stop");
    expect(response.parts).toEqual([{ type: "text", text: good }]);
  });

  it("Vertex (structured outputs off unless an organization policy allows them): the forced tool, even on Haiku 4.5", async () => {
    server.enqueue({ toolCalls: [{ name: "output", arguments: { answer: "fine", score: 7 } }] });
    const before = server.requests.length;
    const { bodies, error, events } = await exchange(VERTEX, ask(VERTEX, { schema: answerSchema }));
    expect(error).toBeUndefined();
    expect(server.requests[before]?.platform).toBe("vertex");
    forcedTool(bodies[0]);
    expect(accumulate(events).parts).toEqual([{ type: "text", text: good }]);
  });

  it("the record shorthand becomes a JSON Schema; a non-object root is wrapped as { value }", () => {
    const short = outputFormat(
      ask("openai/gpt-5", { schema: { answer: "str", tags: "list[str]", note: "str?" } }),
    );
    expect(short?.schema).toEqual({
      type: "object",
      properties: {
        answer: { type: "string" },
        tags: { type: "array", items: { type: "string" } },
        note: { type: "string" },
      },
      required: ["answer", "tags"],
      additionalProperties: false,
    });
    expect(short?.strict).toBe(false); // `note` is optional
    const list = outputFormat(ask("openai/gpt-5", { schema: { type: "array", items: { type: "string" } } }));
    expect(list).toMatchObject({
      wrapped: true,
      strict: true,
      schema: { type: "object", required: ["value"], properties: { value: { type: "array" } } },
    });
  });

  it("strict-mode rules: every property required, additionalProperties false, no unsupported keywords", () => {
    expect(strictProblems(answerSchema)).toEqual([]);
    expect(strictProblems({ ...answerSchema, additionalProperties: undefined })).toEqual([
      "/: additionalProperties is not false",
    ]);
    expect(
      strictProblems({
        type: "object",
        properties: { name: { type: "string", minLength: 1 }, any: {} },
        required: ["name", "any"],
        additionalProperties: false,
      }),
    ).toEqual(["/name: `minLength` is not supported", "/any: no `type`"]);
    // an explicit choice wins
    expect(outputFormat(ask("openai/gpt-5", { schema: answerSchema, strict: false }))?.strict).toBe(false);
  });
});

describe("fallbacks and combinations (request builders)", () => {
  const cfg = (id: string) => ({ model: id.slice(id.indexOf("/") + 1), info: unknownModelInfo(id) });

  it("Anthropic forced tool beside other tools: tool_choice any; with thinking on: no forcing, the prompt asks", () => {
    const withTools = anthropicParams(
      ask("anthropic/claude-sonnet-4-20250514", { schema: answerSchema }, true),
      cfg("anthropic/claude-sonnet-4-20250514"),
    );
    expect(withTools.tools?.map((t) => (t as { name: string }).name)).toEqual(["read_file", "output"]);
    expect(withTools.tool_choice).toEqual({ type: "any" });
    const thinking = anthropicParams(
      { ...ask("anthropic/claude-opus-4", { schema: answerSchema }), reasoning: { budgetTokens: 2048 } },
      cfg("anthropic/claude-opus-4"),
    );
    expect(thinking.tool_choice).toBeUndefined();
    expect(JSON.stringify(thinking.system)).toContain("call the `output` tool");
    // a request tool of the same name keeps its name; the output tool gets another
    const clash = anthropicParams(
      { ...ask("anthropic/claude-3-5-haiku", { schema: answerSchema, name: "read_file" }, true) },
      cfg("anthropic/claude-3-5-haiku"),
    );
    expect(clash.tools?.map((t) => (t as { name: string }).name)).toEqual(["read_file", "read_file_result"]);
  });

  it("the platform decides: Bedrock only for the models listed there (not Opus 4.7), Vertex never", () => {
    const field = (id: string, platform: "anthropic" | "bedrock" | "vertex") => {
      const p = anthropicParams(ask(id, { schema: answerSchema }), cfg(id), platform);
      return p.output_config ? "output_config" : p.tool_choice ? "forced tool" : "neither";
    };
    expect(field("bedrock/eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock")).toBe("output_config");
    expect(field("bedrock/global.anthropic.claude-opus-4-6-v1", "bedrock")).toBe("output_config");
    expect(field("bedrock/us.anthropic.claude-opus-4-7", "bedrock")).toBe("forced tool");
    expect(field("bedrock/anthropic.claude-sonnet-4-20250514-v1:0", "bedrock")).toBe("forced tool");
    expect(field("vertex-anthropic/claude-opus-4-6", "vertex")).toBe("forced tool");
    // Anthropic's own API: every model from Sonnet 4.5 / Opus 4.1 on
    expect(field("anthropic/claude-opus-4-7", "anthropic")).toBe("output_config");
  });

  it("Gemini 3 takes the response schema together with function declarations", () => {
    const p = googleParams(
      ask("google/gemini-3-pro-preview", { schema: answerSchema }, true),
      cfg("google/gemini-3-pro-preview"),
    );
    expect(p.config?.responseMimeType).toBe("application/json");
    expect(p.config?.responseJsonSchema).toEqual(answerSchema);
    expect(p.config?.tools).toHaveLength(1);
  });

  it("a malformed output schema fails typed before any request", async () => {
    const before = server.requests.length;
    const { error } = await exchange("openai/gpt-4.1", ask("openai/gpt-4.1", { schema: { a: "strng" } }));
    expect(error).toMatchObject({ kind: "badRequest", message: expect.stringContaining("malformed output") });
    expect(server.requests.length).toBe(before);
  });
});

describe("a reply that does not match is retried once with the validation problems, then fails typed", () => {
  /** How a model gives its answer: as text, or as the forced output tool's input (its arguments). */
  type Via = "text" | "tool";
  const models: [string, Via][] = [
    ["openai/gpt-4.1", "text"],
    ["openai-compatible/qwen3", "text"],
    ["anthropic/claude-haiku-4-5", "text"],
    ["google/gemini-2.5-flash", "text"],
    [CODEX, "text"],
    [BEDROCK, "text"],
    [BEDROCK_OLD, "tool"],
    [VERTEX, "tool"],
  ];
  const reply = (via: Via, answer: string) =>
    via === "text" ? { text: answer } : { toolCalls: [{ name: "output", arguments: answer }] };
  /** The end of the conversation (Messages / Chat `messages`, Responses `input`, Gemini `contents`). */
  const lastUserText = (body: Record<string, unknown>): string =>
    JSON.stringify(body.messages ?? body.input ?? body.contents).slice(-600);

  for (const [model, via] of models) {
    it(`${model}: mismatch → retry with the problem → match`, async () => {
      server.enqueue(reply(via, JSON.stringify({ answer: "fine", score: -1 })), reply(via, good));
      const { bodies, events, error } = await exchange(model, ask(model, { schema: answerSchema }));
      expect(error).toBeUndefined();
      expect(bodies).toHaveLength(2);
      // the second request carries the bad reply and the validation message for the model
      expect(lastUserText(bodies[1]!)).toContain("does not match the required output schema");
      expect(lastUserText(bodies[1]!)).toMatch(/\/score: .*0/);
      // the retry asks in the same way as the first request
      expect(bodies[1]?.output_config).toEqual(bodies[0]?.output_config);
      expect(bodies[1]?.tool_choice).toEqual(bodies[0]?.tool_choice);
      const retries = events.filter((e): e is Extract<LlmEvent, { type: "retry" }> => e.type === "retry");
      expect(retries).toEqual([
        expect.objectContaining({ attempt: 2, maxAttempts: 2, reason: "output mismatch" }),
      ]);
      // one finish only: the bad reply's finish was never passed on
      expect(events.filter((e) => e.type === "finish")).toHaveLength(1);
      expect(accumulate(events).parts).toEqual([{ type: "text", text: good }]);
    });

    it(`${model}: two mismatches → outputMismatch, after exactly two requests`, async () => {
      server.enqueue(reply(via, "not json at all"), reply(via, JSON.stringify({ answer: 3 })));
      const { bodies, error } = await exchange(model, ask(model, { schema: answerSchema }));
      expect(bodies).toHaveLength(2);
      expect(lastUserText(bodies[1]!)).toContain("the reply is not JSON");
      expect(error).toMatchObject({ _tag: "LlmError", kind: "outputMismatch", retryable: false });
      expect(error?.message).toContain("after 2 tries");
      expect(error?.message).toMatch(/\/answer: /);
    });
  }

  it("replies that call tools are not checked (the answer comes later)", async () => {
    server.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "a" } }] });
    const { bodies, error, events } = await exchange(
      "openai/gpt-4.1",
      ask("openai/gpt-4.1", { schema: answerSchema }, true),
    );
    expect(error).toBeUndefined();
    expect(bodies).toHaveLength(1);
    expect(accumulate(events).stopReason).toBe("toolUse");
  });

  it("an injected validator (a host's own) decides", async () => {
    server.enqueue({ text: good }, { text: good });
    const calls: unknown[] = [];
    const p = createProvider("openai/gpt-4.1", {
      ...mockProviderOptions(server, "openai"),
      validateOutput: (_schema, value) => {
        calls.push(value);
        return calls.length === 1 ? ["/: host says no"] : [];
      },
    });
    const before = server.requests.length;
    const outcome = await run(p, ask("openai/gpt-4.1", { schema: answerSchema }));
    expect(outcome.error).toBeUndefined();
    expect(calls).toHaveLength(2);
    expect(JSON.stringify(server.requests[before + 1]?.body)).toContain("host says no");
  });
});
