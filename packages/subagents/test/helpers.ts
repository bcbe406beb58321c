// Shared pieces of the subagent tests: a real LashRuntime over the mock wire
// server (Anthropic Messages format through the official SDK), request parsing
// for responders, and two small tools (one read-only, one that writes).
import {
  defineTool,
  IdGenerator,
  LashRuntime,
  type LashRuntimeShape,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  type Plugin,
  type RuntimeOptions,
  type SessionStore,
  type TurnActivity,
  textOutput,
} from "@lash/core";
import { createProvider, ModelCatalog as ProviderCatalog } from "@lash/providers";
import { type MockLlmServer, mockProviderOptions, type RecordedRequest } from "@lash/providers/testing";
import type { LlmProvider } from "@lash/sansio";
import { Effect, Layer, Stream } from "effect";
import { type SubagentsOptions, subagentsPlugin } from "../src/index.ts";

export const MODEL = "anthropic/claude-haiku-4-5";
export const CHEAP_MODEL = "anthropic/claude-3-5-haiku";

/** One mock-server request, reduced to what responders branch on. */
export interface Req {
  readonly raw: RecordedRequest;
  readonly model: string;
  readonly system: string;
  /** Text of the first user message (the task for a child). */
  readonly first: string;
  readonly tools: readonly string[];
  readonly toolSchemas: { readonly [name: string]: unknown };
  /** Assistant messages so far (0 on a session's first model call). */
  readonly step: number;
  /** Tool results of the last user message. */
  readonly results: readonly { readonly id: string; readonly text: string; readonly isError: boolean }[];
}

type Block = { type?: string; text?: string; tool_use_id?: string; content?: unknown; is_error?: boolean };
type AnthropicBody = {
  model?: string;
  system?: string | { text: string }[];
  messages?: { role: string; content: string | Block[] }[];
  tools?: { name: string; input_schema: unknown }[];
};

const blockText = (c: unknown): string =>
  typeof c === "string"
    ? c
    : Array.isArray(c)
      ? c.map((b: Block) => (b.type === "text" ? (b.text ?? "") : "")).join("")
      : "";

export function parse(raw: RecordedRequest): Req {
  const body = (raw.body ?? {}) as AnthropicBody;
  const messages = body.messages ?? [];
  const system =
    typeof body.system === "string" ? body.system : (body.system ?? []).map((b) => b.text).join("\n");
  const firstUser = messages.find((m) => m.role === "user");
  const last = messages[messages.length - 1];
  const results =
    last && last.role === "user" && Array.isArray(last.content)
      ? last.content
          .filter((b) => b.type === "tool_result")
          .map((b) => ({ id: b.tool_use_id ?? "", text: blockText(b.content), isError: b.is_error === true }))
      : [];
  const toolSchemas: { [name: string]: unknown } = {};
  for (const t of body.tools ?? []) toolSchemas[t.name] = t.input_schema;
  return {
    raw,
    model: body.model ?? "",
    system,
    first: firstUser ? blockText(firstUser.content) : "",
    tools: (body.tools ?? []).map((t) => t.name),
    toolSchemas,
    step: messages.filter((m) => m.role === "assistant").length,
    results,
  };
}

/** Tools for the tests: `read_notes` is read-only, `write_note` writes (and records that it ran). */
export function testTools(): { plugin: Plugin; writes: string[] } {
  const writes: string[] = [];
  const readNotes = defineTool<Record<string, never>>({
    name: "read_notes",
    description: "Read the notes.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    readOnly: true,
    run: async () => textOutput("notes: alpha, beta"),
  });
  const writeNote = defineTool<{ text: string }>({
    name: "write_note",
    description: "Write a note.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
    run: async ({ text }) => {
      writes.push(text);
      return textOutput("written");
    },
  });
  return { plugin: { name: "test-tools", tools: [readNotes, writeNote] }, writes };
}

const providerCatalog = ProviderCatalog.default();

export function runtimeLayer(
  server: Pick<MockLlmServer, "baseUrl">,
  options: {
    readonly subagents?: SubagentsOptions;
    readonly plugins?: readonly Plugin[];
    readonly store?: Layer.Layer<SessionStore, unknown>;
    readonly ids?: Layer.Layer<IdGenerator>;
    /** Adjust the runtime options (e.g. `withRlm`). */
    readonly wrap?: (options: RuntimeOptions) => RuntimeOptions;
  } = {},
) {
  const cache = new Map<string, LlmProvider>();
  const forModel = (model: string): LlmProvider => {
    let p = cache.get(model);
    if (!p) {
      p = createProvider(model, { ...mockProviderOptions(server, "anthropic"), retry: false });
      cache.set(model, p);
    }
    return p;
  };
  const base: RuntimeOptions = { plugins: [subagentsPlugin(options.subagents), ...(options.plugins ?? [])] };
  return LashRuntime.layer(options.wrap ? options.wrap(base) : base).pipe(
    Layer.provide(
      Layer.mergeAll(
        options.store ?? MemoryStore,
        LlmProviders.fromFunction(forModel),
        options.ids ?? IdGenerator.seeded(),
        Layer.succeed(ModelCatalog, { info: (m: string) => providerCatalog.lookup(m) }),
      ),
    ),
  );
}

/** Run `body` against a fresh runtime over `server`. */
export function withRuntime<A, E>(
  server: MockLlmServer,
  body: (rt: LashRuntimeShape) => Effect.Effect<A, E>,
  options: Parameters<typeof runtimeLayer>[1] = {},
): Promise<A> {
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(LashRuntime, body).pipe(Effect.provide(runtimeLayer(server, options)))),
  );
}

/** Events of a session's finished turn (from the retained activity log). */
export const turnEvents = (rt: LashRuntimeShape, sessionId: string) =>
  Stream.runCollect(
    rt.observe(sessionId, 0).pipe(Stream.takeUntil((e: TurnActivity) => e.type === "turnFinished")),
  ).pipe(Effect.map((c) => [...c]));

/** The `subagents` plugin events of a list of activity events. */
export const childEvents = (events: readonly TurnActivity[]) =>
  events.flatMap((e) =>
    e.type === "plugin" && e.plugin === "subagents"
      ? [{ name: e.name, data: e.data as { childSessionId: string; outcome?: string; callId: string } }]
      : [],
  );
