// A lash process for the crash tests: runs (or resumes) one turn of a session
// in a SQLite database against the mock wire server, and announces on stdout
// the points where the parent test kills it.
//   node worker.ts <db> <baseUrl> <counterFile> <mode: turn|resume|abandon|inspect> <killAt: none|tool|beforeCommit|afterCommit|abort> [sessionId]
// CRASH_TOOLS=promise: the tools are promise tools (`defineTool`: dispatch's short path), else Effect tools.
// `abort`: the `crash_effect` tool (idempotent, so every resume runs it again) really crashes the process.
import { appendFileSync } from "node:fs";
import { createProvider } from "@lash/providers";
import { Effect, Layer } from "effect";
import {
  defineTool,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SqliteStore,
  type ToolDefinition,
  textOutput,
} from "../../src/index.ts";

const [db, baseUrl, counterFile, mode, killAt, sessionArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];

const say = (line: string) => process.stdout.write(`${line}\n`);

/** The same tool as a promise tool (`defineTool`): a lone call runs on dispatch's short path. */
const countedPromise = (name: string, idempotent: boolean): ToolDefinition =>
  defineTool<{ label?: string }>({
    name,
    description: `Appends a line to the side-effect counter (${idempotent ? "idempotent" : "not idempotent"}).`,
    inputSchema: { type: "object", properties: { label: { type: "string" } } },
    idempotent,
    run: async (args) => {
      const label = args.label ?? name;
      appendFileSync(counterFile, `${label}\n`);
      if (killAt === "abort" && name === "crash_effect") {
        say("ABORTING");
        process.abort();
      }
      if (killAt === "tool") {
        say("TOOL_RUNNING");
        return new Promise(() => {});
      }
      return textOutput(`did ${label}`);
    },
  }) as ToolDefinition;

const counted = (name: string, idempotent: boolean): ToolDefinition =>
  process.env.CRASH_TOOLS === "promise" ? countedPromise(name, idempotent) : countedEffect(name, idempotent);

const countedEffect = (name: string, idempotent: boolean): ToolDefinition => ({
  name,
  description: `Appends a line to the side-effect counter (${idempotent ? "idempotent" : "not idempotent"}).`,
  inputSchema: { type: "object", properties: { label: { type: "string" } } },
  idempotent,
  execute: (args) =>
    Effect.gen(function* () {
      const label = (args as { label?: string }).label ?? name;
      appendFileSync(counterFile, `${label}\n`);
      if (killAt === "abort" && name === "crash_effect") {
        say("ABORTING");
        process.abort();
      }
      if (killAt === "tool") {
        say("TOOL_RUNNING");
        return yield* Effect.never;
      }
      return textOutput(`did ${label}`);
    }),
});

// The hook only where it is a kill point: a checkpoint hook is plugin code, which makes the turn
// write its waiting journal records first — the other scenarios run without that extra write.
const crashPoints: Plugin = {
  name: "crash-points",
  tools: [counted("side_effect", false), counted("idem_effect", true), counted("crash_effect", true)],
  hooks:
    killAt === "beforeCommit"
      ? {
          onCheckpoint: (_ctx, checkpoint) =>
            checkpoint === "beforeCompletion"
              ? Effect.zipRight(
                  Effect.sync(() => say("BEFORE_COMMIT")),
                  Effect.never,
                )
              : Effect.succeed(undefined),
        }
      : {},
};

const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "test", retry: false });
const layer = LashRuntime.layer({ plugins: [crashPoints] }).pipe(
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
  let sessionId = sessionArg;
  if (!sessionId) {
    sessionId = (yield* rt.createSession({ model: "openai-compatible/mock" })).id;
  }
  say(`SESSION ${sessionId}`);
  if (mode === "inspect") {
    const view = yield* rt.readView(sessionId);
    const session = yield* rt.getSession(sessionId);
    say(`VIEW ${JSON.stringify({ messages: view, turnCount: session.turnCount })}`);
    return;
  }
  if (mode === "abandon") {
    say(`ABANDONED ${JSON.stringify((yield* rt.abandonPending(sessionId)) ?? null)}`);
    return;
  }
  const result =
    mode === "resume"
      ? yield* rt.resumePending(sessionId)
      : yield* rt.turn(
          sessionId,
          { text: process.env.TURN_TEXT ?? "do the thing" },
          { resumePending: false },
        );
  say(
    `COMMITTED ${JSON.stringify(result ? { outcome: result.outcome, text: result.text, resumed: result.resumed } : null)}`,
  );
  if (killAt === "afterCommit") yield* Effect.never;
});

const announced = program.pipe(
  Effect.tapError((e) =>
    Effect.sync(() => {
      if (e._tag === "TurnError") say(`FAILED ${JSON.stringify({ reason: e.reason, message: e.message })}`);
    }),
  ),
);

Effect.runPromise(Effect.scoped(Effect.provide(announced, layer))).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`worker failed: ${String(e)}\n`);
    process.exit(1);
  },
);
