// The output budget with artifacts on, through a real runtime over a MemoryStore: a cut
// output is stored once as an artifact (two calls, one artifact), the graph's result holds
// a reference instead of the text, the long strings of the tool's value/details are swapped
// for the same reference (standard sessions), and the plugin offers no read_output.
import { describe, expect, it } from "@effect/vitest";
import type { Message, ToolResultPart } from "@lash/sansio";
import { sha256Hex } from "@lash/sansio";
import { Effect, Layer } from "effect";
import {
  Artifacts,
  type ArtifactsShape,
  artifactRef,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  makeMemoryStore,
  outputBudgetPlugin,
  type SessionRecord,
  SessionStore,
  StoreError,
  type ToolDefinition,
} from "../src/index.ts";
import { callTools, say, scriptedProvider, testModel } from "./support.ts";

const TEXT = Array.from({ length: 2000 }, (_, i) => `row ${i + 1}`).join("\n");
const dump: ToolDefinition = {
  name: "dump",
  description: "Print a long listing.",
  inputSchema: { type: "object" },
  readOnly: true,
  truncate: "tail",
  execute: () =>
    Effect.succeed({
      content: [{ type: "text", text: TEXT }],
      value: { stdout: TEXT, exitCode: 0 },
      details: { command: "dump", stdout: TEXT },
    }),
};

describe("output budget with artifacts", () => {
  it("offers no read_output (read_artifact is @lash/tools' tool)", () => {
    expect(outputBudgetPlugin({ artifacts: true }).tools).toEqual([]);
    expect(outputBudgetPlugin().tools?.map((t) => t.name)).toEqual(["read_output"]);
  });

  it.effect("stores a cut output once, refers to it from the graph, slims value and details", () =>
    Effect.gen(function* () {
      const store = yield* makeMemoryStore();
      const provider = scriptedProvider([
        callTools({ id: "a", name: "dump", args: {} }, { id: "b", name: "dump", args: {} }),
        say("done"),
      ]);
      const layer = LashRuntime.layer({
        plugins: [outputBudgetPlugin({ artifacts: true }), { name: "tools", tools: [dump] }],
      }).pipe(
        Layer.provide(
          Layer.mergeAll(
            Layer.succeed(SessionStore, store),
            LlmProviders.single(provider),
            IdGenerator.seeded("art"),
            ModelCatalog.fromEntries([testModel]),
          ),
        ),
      );
      const id = sha256Hex(TEXT);
      const results = yield* Effect.gen(function* () {
        const rt = yield* LashRuntime;
        const s = yield* rt.createSession({ model: "test/model" });
        yield* rt.turn(s.id, { text: "dump twice" });
        const path = yield* store.activePath(s.id);
        return path.flatMap((n) =>
          n.kind === "message"
            ? (n.payload as Message).parts.filter((p): p is ToolResultPart => p.type === "toolResult")
            : [],
        );
      }).pipe(Effect.provide(layer), Effect.scoped);

      // the model saw the tail and the id
      const seen = JSON.stringify(provider.requests[1]!.messages.at(-1)!.parts);
      expect(seen).toContain(`stored as artifact ${id}`);
      expect(seen).toContain("row 2000");
      expect(seen).not.toContain("row 1\\n");
      // one artifact holds the text
      expect(yield* store.artifactInfo(id)).toMatchObject({ id, size: TEXT.length });
      expect(new TextDecoder().decode((yield* store.readArtifact(id))!)).toBe(TEXT);
      // the graph: both results refer to it; value and details keep their short fields only
      expect(results).toHaveLength(2);
      for (const r of results) {
        expect(r.full).toEqual([
          {
            type: "attachment",
            mediaType: "text/plain; charset=utf-8",
            ref: artifactRef(id),
            name: "dump output",
          },
        ]);
        const note = `[${TEXT.length} bytes: the full output is artifact ${id}]`;
        expect(r.value).toEqual({ stdout: note, exitCode: 0 });
        expect(r.details).toEqual({ command: "dump", stdout: note });
      }
      // garbage collection keeps it: the nodes refer to it
      expect((yield* store.collectArtifacts({ storedBefore: Number.MAX_SAFE_INTEGER })).removed).toEqual([]);
    }),
  );

  const hookRun = (mode: "standard" | "rlm", artifacts: ArtifactsShape) =>
    outputBudgetPlugin({ artifacts: true }).hooks!.projectToolResult!(
      { session: { id: "s", mode } as SessionRecord, turnId: "t" },
      { callId: "c", name: "dump", args: {}, tool: dump },
      { content: [{ type: "text", text: TEXT }], value: { stdout: TEXT } },
    ).pipe(Effect.provideService(Artifacts, artifacts));

  it.effect("RLM sessions keep the full text (programs read it) and the reference beside it", () =>
    Effect.gen(function* () {
      const store = yield* makeMemoryStore();
      const r = yield* hookRun("rlm", Artifacts.fromStore(store));
      const id = sha256Hex(TEXT);
      expect(r.full).toEqual([
        { type: "text", text: TEXT },
        {
          type: "attachment",
          mediaType: "text/plain; charset=utf-8",
          ref: artifactRef(id),
          name: "dump output",
        },
      ]);
      expect(r.value).toBeUndefined();
      expect(yield* store.artifactInfo(id)).toBeDefined();
    }),
  );

  it.effect("a store that fails: the plain cut, the full text in the graph, and the reason", () =>
    Effect.gen(function* () {
      const broken: ArtifactsShape = {
        put: () => Effect.fail(new StoreError({ message: "disk full" })),
        info: () => Effect.succeed(undefined),
        read: () => Effect.succeed(undefined),
      };
      const r = yield* hookRun("standard", broken);
      expect(r.full).toEqual([{ type: "text", text: TEXT }]);
      expect(JSON.stringify(r.content)).toContain("The full output could not be stored: disk full");
      expect(JSON.stringify(r.content)).not.toContain("row 1\\n");
    }),
  );
});
