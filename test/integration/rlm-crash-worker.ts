// A lash process for the RLM crash test: runs (or resumes) one rlm turn of a session in a SQLite
// database against the mock wire server. `side.bump` appends to a counter file (not idempotent);
// `side.hang` appends too, then (when HANG=1) announces `HANG_RUNNING <label>` and never returns.
// STAMP=1 appends `<label>@<epoch ms>` instead; TURN_TEXT is the turn's input (rlm-process-crash.test.ts).
//   node rlm-crash-worker.ts <db> <baseUrl> <counterFile> <turn|resume> [sessionId]
import { appendFileSync } from "node:fs";
import {
  defineTool,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SqliteStore,
  withRlm,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { Effect, Layer } from "effect";

const [db, baseUrl, counterFile, mode, sessionArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
];
const say = (line: string) => process.stdout.write(`${line}\n`);

const schema = {
  type: "object",
  properties: { label: { type: "string" } },
  required: ["label"],
  additionalProperties: false,
};

const side: Plugin = {
  name: "side",
  tools: [
    defineTool<{ label: string }>({
      name: "bump",
      description: "Append the label to the counter file.",
      inputSchema: schema,
      binding: { module: "side", operation: "bump", returns: "str" },
      run: async ({ label }) => {
        appendFileSync(counterFile, process.env.STAMP === "1" ? `${label}@${Date.now()}\n` : `${label}\n`);
        return { content: [{ type: "text", text: `bumped ${label}` }], value: `bumped ${label}` };
      },
    }),
    defineTool<{ label: string }>({
      name: "hang",
      description: "Append the label to the counter file, then wait.",
      inputSchema: schema,
      idempotent: true,
      binding: { module: "side", operation: "hang", returns: "str" },
      run: async ({ label }) => {
        appendFileSync(counterFile, `${label}\n`);
        if (process.env.HANG === "1") {
          say(`HANG_RUNNING ${label}`);
          await new Promise(() => {});
        }
        return { content: [{ type: "text", text: `waited ${label}` }], value: `waited ${label}` };
      },
    }),
  ],
};

const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "test", retry: false });
const layer = LashRuntime.layer(withRlm({ plugins: [side] })).pipe(
  Layer.provide(
    Layer.mergeAll(
      SqliteStore.layer({ filename: db }),
      LlmProviders.single(provider),
      IdGenerator.Live,
      ModelCatalog.Empty,
    ),
  ),
);

const program = Effect.gen(function* () {
  const rt = yield* LashRuntime;
  const sessionId =
    sessionArg ?? (yield* rt.createSession({ model: "openai-compatible/mock", mode: "rlm" })).id;
  say(`SESSION ${sessionId}`);
  const result =
    mode === "resume"
      ? yield* rt.resumePending(sessionId)
      : yield* rt.turn(
          sessionId,
          { text: process.env.TURN_TEXT ?? "bump, then wait" },
          { resumePending: false },
        );
  const session = yield* rt.getSession(sessionId);
  say(
    `COMMITTED ${JSON.stringify(
      result
        ? {
            outcome: result.outcome,
            resumed: result.resumed,
            turnCount: session.turnCount,
            state: session.state.rlm,
          }
        : null,
    )}`,
  );
});

Effect.runPromise(Effect.scoped(Effect.provide(program, layer))).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`worker failed: ${String(e)}\n`);
    process.exit(1);
  },
);
