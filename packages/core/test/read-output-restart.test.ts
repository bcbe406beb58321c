// read_output after a restart: a turn cuts a tool output, the runtime closes, a new
// runtime (new process state: a fresh output-budget plugin) opens the same SQLite file,
// and the model's read_output still gets the text — from the store's tool_outputs table
// when the host provides `ToolOutputs`, else from the cut result's full content in the graph.
import { join } from "node:path";
import { describe, expect, it } from "@effect/vitest";
import type { LlmProvider } from "@lash/sansio";
import { Effect, Layer } from "effect";
import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  outputBudgetPlugin,
  SessionStore,
  type SessionStoreShape,
  type ToolDefinition,
  ToolOutputs,
  textOutput,
} from "../src/index.ts";
import { makeSqliteStore } from "../src/store/sqlite.ts";
import { tempDir, withRaw } from "./store/sqlite-helpers.ts";
import { callTools, say, scriptedProvider, testModel } from "./support.ts";

const LINES = 1000;
const dump: ToolDefinition = {
  name: "dump",
  description: "Print a long listing.",
  inputSchema: { type: "object" },
  readOnly: true,
  execute: () =>
    Effect.succeed(textOutput(Array.from({ length: LINES }, (_, i) => `listing line ${i + 1}`).join("\n"))),
};

/** One "process": a runtime over the store file with fresh plugins, closed with the scope. */
const process_ = <A, E>(
  filename: string,
  run: string,
  provider: LlmProvider,
  body: (rt: typeof LashRuntime.Service, store: SessionStoreShape) => Effect.Effect<A, E>,
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const store = yield* makeSqliteStore({ filename });
      const layer = LashRuntime.layer({
        plugins: [outputBudgetPlugin(), { name: "tools", tools: [dump] }],
      }).pipe(
        Layer.provide(
          Layer.mergeAll(
            Layer.succeed(SessionStore, store),
            LlmProviders.single(provider),
            IdGenerator.seeded(run),
            ModelCatalog.fromEntries([testModel]),
          ),
        ),
      );
      return yield* Effect.flatMap(LashRuntime, (rt) => body(rt, store)).pipe(Effect.provide(layer));
    }),
  );

const noteOf = (parts: readonly unknown[]) =>
  /read_output \{"callId": "([^"]+)"/.exec(JSON.stringify(parts).replace(/\\"/g, '"'))?.[1];

const lastToolText = (provider: ReturnType<typeof scriptedProvider>) =>
  JSON.stringify(provider.requests.at(-1)!.messages.at(-1)!.parts);

describe("read_output after a restart", () => {
  for (const durable of [true, false]) {
    it.scoped(
      durable
        ? "the cut output is kept in the store (ToolOutputs provided): a new runtime over the file serves it, a fork shares it, deleteSession removes it"
        : "without ToolOutputs (the runtime's default): a new runtime finds the cut output in the graph (the result's full content)",
      () =>
        Effect.gen(function* () {
          const filename = join(yield* tempDir, "lash.db");
          const withOutputs = <A, E, R>(store: SessionStoreShape, e: Effect.Effect<A, E, R>) =>
            durable ? Effect.provideService(e, ToolOutputs, ToolOutputs.fromStore(store)) : e;

          // process 1: the model runs `dump`; the result is cut to the budget
          const first = scriptedProvider([
            callTools({ id: "call_1", name: "dump", args: {} }),
            say("listed"),
          ]);
          const { sessionId, callId } = yield* process_(filename, "one", first, (rt, store) =>
            Effect.gen(function* () {
              const s = yield* rt.createSession({ model: "test/model" });
              yield* withOutputs(store, rt.turn(s.id, { text: "list it" }));
              const callId = noteOf(first.requests[1]!.messages.at(-1)!.parts);
              return { sessionId: s.id, callId };
            }),
          );
          expect(callId).toMatch(/\.c0$/);
          const kept = yield* withRaw(
            filename,
            (sql) =>
              sql<{ session_id: string; call_id: string; provider_call_id: string | null; text: string }>`
              SELECT session_id, call_id, provider_call_id, text FROM tool_outputs`,
          );
          if (durable) {
            expect(kept).toHaveLength(1);
            expect(kept[0]).toMatchObject({
              session_id: sessionId,
              call_id: callId,
              provider_call_id: "call_1",
            });
            expect(kept[0]!.text.split("\n")).toHaveLength(LINES);
            // mark the stored copy, so what process 2 reads shows where it came from
            yield* withRaw(
              filename,
              (sql) => sql`UPDATE tool_outputs SET text = replace(text, 'listing', 'stored')`,
            );
          } else {
            expect(kept).toHaveLength(0);
          }

          // process 2: fresh plugin state; the model reads line 700 of the cut output
          const second = scriptedProvider([
            callTools({ id: "call_9", name: "read_output", args: { callId, offset: 700, limit: 2 } }),
            say("read"),
            callTools({ id: "call_9", name: "read_output", args: { callId, offset: 999, limit: 5 } }),
            say("read in the fork"),
          ]);
          yield* process_(filename, "two", second, (rt, store) =>
            Effect.gen(function* () {
              yield* withOutputs(store, rt.turn(sessionId, { text: "read the rest" }));
              const read = lastToolText(second);
              const source = durable ? "stored" : "listing";
              expect(read).toContain(`${source} line 700`);
              expect(read).toContain(`${source} line 701`);
              expect(read).not.toContain(`${source} line 702`);
              expect(read).not.toContain("No stored output");
              // a fork shares its origin's outputs
              const fork = yield* rt.fork(sessionId, { title: "fork" });
              yield* withOutputs(store, rt.turn(fork.id, { text: "read it here too" }));
              const inFork = lastToolText(second);
              expect(inFork).toContain(`${source} line 1000`);
              expect(inFork).not.toContain("No stored output");
              // deleting the fork, then the session, removes what it kept
              yield* rt.deleteSession(fork.id);
              yield* rt.deleteSession(sessionId);
            }),
          );
          const left = yield* withRaw(
            filename,
            (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM tool_outputs`,
          );
          expect(left[0]?.n).toBe(0);
        }),
    );
  }
});
