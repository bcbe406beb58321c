// Shared setup of the RLM end-to-end tests: a real LashRuntime with the rlm mode, the real
// Anthropic SDK against the mock wire server, and readers for the recorded wire requests.
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  type Plugin,
  type RlmOptions,
  type RuntimeOptions,
  type SessionStore,
  withRlm,
} from "@lash/core";
import { createProvider, ModelCatalog as ProviderCatalog } from "@lash/providers";
import {
  type MockLlmServer,
  type MockReply,
  mockProviderOptions,
  type RecordedRequest,
} from "@lash/providers/testing";
import { Effect, Layer, type Scope } from "effect";

export const MODEL = "anthropic/claude-haiku-4-5";

/** A reply whose text is one Lashlang cell (with optional prose before it). */
export const cell = (code: string, prose = ""): MockReply => ({
  text: `${prose ? `${prose}\n\n` : ""}<lashlang>\n${code}\n</lashlang>\n`,
  usage: { input: 500, output: 40 },
});

export const prose = (text: string): MockReply => ({ text, usage: { input: 500, output: 20 } });

/** Every text of a recorded Anthropic request (system first), joined. */
export function wireText(req: RecordedRequest): string {
  const body = req.body as {
    system?: string | { text: string }[];
    messages: { role: string; content: string | { type: string; text?: string }[] }[];
  };
  const system =
    typeof body.system === "string" ? body.system : (body.system ?? []).map((b) => b.text).join("\n");
  const msgs = body.messages.map((m) =>
    typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? `[${c.type}]`).join("\n"),
  );
  return [system, ...msgs].join("\n\n");
}

/** The last user message of a recorded request (the RLM tail). */
export function wireTail(req: RecordedRequest): string {
  const body = req.body as {
    messages: { role: string; content: string | { type: string; text?: string }[] }[];
  };
  const last = body.messages[body.messages.length - 1]!;
  return typeof last.content === "string" ? last.content : last.content.map((c) => c.text ?? "").join("\n");
}

export function wireTools(req: RecordedRequest): unknown[] {
  return ((req.body as { tools?: unknown[] }).tools ?? []) as unknown[];
}

export function runtimeLayer(
  server: MockLlmServer,
  options: {
    readonly plugins?: readonly Plugin[];
    readonly rlm?: RlmOptions;
    readonly store?: Layer.Layer<SessionStore, unknown>;
    /** The approval step's services (default: everything allowed). */
    readonly governance?: RuntimeOptions["governance"];
    readonly approver?: RuntimeOptions["approver"];
    /** The session model (default `MODEL`); its vendor picks the wire format. */
    readonly model?: string;
  } = {},
) {
  const model = options.model ?? MODEL;
  const vendor = model.slice(0, model.indexOf("/")) as Parameters<typeof mockProviderOptions>[1];
  const provider = createProvider(model, { ...mockProviderOptions(server, vendor), retry: false });
  const info = ProviderCatalog.default().lookup(model);
  const approvals = {
    ...(options.governance ? { governance: options.governance } : {}),
    ...(options.approver ? { approver: options.approver } : {}),
  };
  return LashRuntime.layer(withRlm({ plugins: options.plugins ?? [], ...approvals }, options.rlm ?? {})).pipe(
    Layer.provide(
      Layer.mergeAll(
        options.store ?? MemoryStore,
        LlmProviders.single(provider),
        IdGenerator.seeded(),
        info ? ModelCatalog.fromEntries([info]) : ModelCatalog.Empty,
      ),
    ),
  );
}

export const withRuntime = <A, E>(
  server: MockLlmServer,
  body: (rt: typeof LashRuntime.Service) => Effect.Effect<A, E, Scope.Scope>,
  options: Parameters<typeof runtimeLayer>[1] = {},
) =>
  Effect.runPromise(
    Effect.scoped(Effect.flatMap(LashRuntime, body).pipe(Effect.provide(runtimeLayer(server, options)))),
  );
