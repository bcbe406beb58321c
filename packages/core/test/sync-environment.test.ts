// syncEnvironment records the environment only when it changed: a turn whose tools and system
// prompt stay the same writes one environment record, not one per model round; a changed
// environment is recorded again; a resumed turn replays the unrecorded syncs as they were.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Layer } from "effect";
import {
  defineTool,
  type JournalEntry,
  type Plugin,
  SessionStore,
  type SessionStoreShape,
  textOutput,
} from "../src/index.ts";
import { makeMemoryStore } from "../src/store/memory.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

const syncKeys = (entries: readonly JournalEntry[]) =>
  entries.filter((e) => e.key.includes(":syncEnvironment:")).map((e) => e.key);

describe("syncEnvironment: recorded only when the environment changed", () => {
  it.effect("four rounds with the same tools and prompt: one environment record", () =>
    Effect.gen(function* () {
      const store: SessionStoreShape = yield* makeMemoryStore();
      const seen: string[][] = [];
      // what the journal holds when each call runs (the turn's waiting records are written before a tool starts)
      const peek = defineTool<{ n: number }>({
        name: "peek",
        description: "reads the turn's journal",
        inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        run: async (_args, ctx) => {
          const entries = await Effect.runPromise(store.journalForTurn(ctx.sessionId, ctx.turnId ?? ""));
          seen.push(syncKeys(entries));
          return textOutput("ok");
        },
      });
      const plugin: Plugin = { name: "p", tools: [peek], prompt: "be brief" };
      const provider = scriptedProvider([
        callTools({ id: "a", name: "peek", args: { n: 1 } }),
        callTools({ id: "b", name: "peek", args: { n: 2 } }),
        callTools({ id: "c", name: "peek", args: { n: 3 } }),
        say("done"),
      ]);
      yield* withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            const r = yield* rt.turn(s.id, { text: "go" });
            expect(r.toolCalls).toBe(3);
          }),
        { plugins: [plugin], store: Layer.succeed(SessionStore, store) },
      );
      // one sync per round was asked for (4 model requests); only the first was recorded
      expect(provider.requests).toHaveLength(4);
      expect(seen).toHaveLength(3);
      for (const keys of seen) expect(keys).toHaveLength(1);
      expect(seen[2]![0]).toMatch(/:0:syncEnvironment:/);
      // every request still carried the tools and the system prompt
      for (const req of provider.requests) {
        expect(req.tools?.map((t) => t.name)).toEqual(["peek"]);
        expect(req.system).toContain("be brief");
      }
    }),
  );

  it.effect("a changed environment (a tool appears) is recorded, and the next request has it", () =>
    Effect.gen(function* () {
      const store: SessionStoreShape = yield* makeMemoryStore();
      const seen: string[][] = [];
      const dynamic: ReturnType<typeof defineTool<{ n: number }>>[] = [];
      const extra = defineTool<{ n: number }>({
        name: "extra",
        description: "appears later",
        inputSchema: { type: "object", properties: { n: { type: "number" } } },
        run: async () => textOutput("extra"),
      });
      const peek = defineTool<{ n: number }>({
        name: "peek",
        description: "reads the turn's journal, then adds a tool",
        inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        run: async (args, ctx) => {
          const entries = await Effect.runPromise(store.journalForTurn(ctx.sessionId, ctx.turnId ?? ""));
          seen.push(syncKeys(entries));
          if (args.n === 1) dynamic.push(extra);
          return textOutput("ok");
        },
      });
      const plugin: Plugin = {
        name: "p",
        tools: [peek],
        dynamicTools: () => Effect.sync(() => dynamic.slice()),
      };
      const provider = scriptedProvider([
        callTools({ id: "a", name: "peek", args: { n: 1 } }),
        callTools({ id: "b", name: "peek", args: { n: 2 } }),
        callTools({ id: "c", name: "peek", args: { n: 3 } }),
        say("done"),
      ]);
      yield* withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model" });
            yield* rt.turn(s.id, { text: "go" });
          }),
        { plugins: [plugin], store: Layer.succeed(SessionStore, store) },
      );
      expect(seen.map((k) => k.length)).toEqual([1, 2, 2]);
      expect(provider.requests.map((r) => r.tools?.map((t) => t.name))).toEqual([
        ["peek"],
        ["peek", "extra"],
        ["peek", "extra"],
        ["peek", "extra"],
      ]);
    }),
  );
});
