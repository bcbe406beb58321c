import type { LlmEvent, LlmProvider, LlmRequest, ModelInfo } from "@lash/sansio";
import { Effect, Layer, type Scope, Stream } from "effect";
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  type RuntimeOptions,
  type SessionStore,
} from "../src/index.ts";
import { MemoryStore } from "../src/store/memory.ts";

/** A scripted model: each call gets the next list of events (or a function of the request). */
export function scriptedProvider(
  script: readonly (readonly LlmEvent[] | ((req: LlmRequest) => readonly LlmEvent[]))[],
): LlmProvider & { readonly requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    name: "scripted",
    requests,
    stream: (request) =>
      Stream.suspend(() => {
        const i = requests.length;
        requests.push({ ...request, messages: request.messages.slice() });
        const step = script[i];
        if (!step)
          return Stream.fromIterable<LlmEvent>([
            { type: "textDelta", text: "(script exhausted)" },
            { type: "finish", reason: "stop" },
          ]);
        return Stream.fromIterable(typeof step === "function" ? step(request) : step);
      }),
  };
}

export const say = (text: string, usage = { input: 100, output: 10 }): LlmEvent[] => [
  { type: "textDelta", text },
  { type: "usage", usage },
  { type: "finish", reason: "stop" },
];

export const callTools = (...calls: { id: string; name: string; args: unknown }[]): LlmEvent[] => [
  ...calls.flatMap((c): LlmEvent[] => [
    { type: "toolCallStart", id: c.id, name: c.name },
    { type: "toolCallArgsDelta", id: c.id, delta: JSON.stringify(c.args) },
    { type: "toolCallEnd", id: c.id },
  ]),
  { type: "usage", usage: { input: 100, output: 20 } },
  { type: "finish", reason: "toolUse" },
];

export const testModel: ModelInfo = {
  id: "test/model",
  contextWindow: 100_000,
  maxOutput: 8000,
  reasoning: false,
  images: false,
  caching: true,
  pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
};

export function runtimeLayer(
  provider: LlmProvider,
  options: RuntimeOptions & { plugins?: readonly Plugin[]; store?: Layer.Layer<SessionStore, unknown> } = {},
) {
  const { store, ...rest } = options;
  return LashRuntime.layer(rest).pipe(
    Layer.provide(
      Layer.mergeAll(
        store ?? MemoryStore,
        LlmProviders.single(provider),
        IdGenerator.seeded(),
        ModelCatalog.fromEntries([testModel]),
      ),
    ),
  );
}

export const withRuntime = <A, E>(
  provider: LlmProvider,
  body: (rt: typeof LashRuntime.Service) => Effect.Effect<A, E, Scope.Scope>,
  options: Parameters<typeof runtimeLayer>[1] = {},
) => Effect.scoped(Effect.flatMap(LashRuntime, body).pipe(Effect.provide(runtimeLayer(provider, options))));
