import { describe, expect, it } from "@effect/vitest";
import { Effect, Layer } from "effect";
import {
  defineTool,
  EffectJournal,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  MemoryStore,
  ModelCatalog,
  PluginHost,
  SessionStore,
  ToolCatalog,
  textOutput,
} from "../src/internal.ts";
import { callTools, say, scriptedProvider } from "./support.ts";

const ping = defineTool({
  name: "ping",
  description: "ping",
  inputSchema: { type: "object" },
  run: async () => textOutput("pong"),
});

describe("services as layers", () => {
  it.effect("LashRuntime takes PluginHost, ToolCatalog and EffectJournal from its context", () => {
    const provider = scriptedProvider([callTools({ id: "p", name: "ping", args: {} }), say("done")]);
    const services = Layer.mergeAll(
      LlmProviders.single(provider),
      IdGenerator.seeded(),
      ModelCatalog.Empty,
      PluginHost.layer([{ name: "p", tools: [ping], prompt: "Be brief." }]),
    );
    const layer = LashRuntime.layer().pipe(
      Layer.provideMerge(
        Layer.mergeAll(ToolCatalog.layer, EffectJournal.layer).pipe(Layer.provideMerge(services)),
      ),
      Layer.provideMerge(MemoryStore),
    );
    return Effect.gen(function* () {
      const rt = yield* LashRuntime;
      const store = yield* SessionStore;
      const s = yield* rt.createSession({ model: "m" });
      const r = yield* rt.turn(s.id, { text: "go" });
      expect(r.text).toBe("done");
      expect(provider.requests[0]!.system).toBe("Be brief.");
      expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(["ping"]);
      expect(JSON.stringify(provider.requests[1]!.messages.at(-1))).toContain("pong");
      // the journal service recorded into the store (cleared by the commit)
      expect(yield* store.journalForTurn(s.id, r.turnId)).toEqual([]);
      expect((yield* ToolCatalog).forSession).toBeTypeOf("function");
    }).pipe(Effect.provide(layer));
  });

  it("PluginHost refuses two tool-result projectors", () => {
    const projector = { projectToolResult: () => Effect.succeed({ content: [] }) };
    expect(() =>
      PluginHost.make([
        { name: "a", hooks: projector },
        { name: "b", hooks: projector },
      ]),
    ).toThrow(/only one plugin may project tool results; found a, b/);
  });
});
