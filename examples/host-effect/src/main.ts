// lash as a library, through the Effect API: `LashRuntime.layer` provided with the
// services it needs as layers (SqliteStore, LlmProviders, ModelCatalog, IdGenerator),
// a custom tool, a turn, the session resumed in a second process, and a fork.
//
//   npm run build
//   LASH_DB=/tmp/lash-example.db node dist/main.js first          # prints the session id
//   LASH_DB=/tmp/lash-example.db node dist/main.js second <id>    # resumes it, forks it
//
// The model is `anthropic/claude-sonnet-4-5` from @lash/providers, configured from the
// environment (ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL to point it elsewhere: the
// packaging test points it at lash's mock wire server). Each step prints one JSON line.
import {
  defineTool,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  SqliteStore,
  ToolFailure,
  textOutput,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { Console, Effect, Layer } from "effect";

const MODEL = "anthropic/claude-sonnet-4-5";

const add = defineTool<{ a: number; b: number }>({
  name: "add",
  description: "Add two numbers.",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
  readOnly: true,
  run: async ({ a, b }) => {
    if (!Number.isFinite(a + b))
      throw new ToolFailure({ message: "not a finite sum", class: "invalidRequest" });
    return textOutput(String(a + b));
  },
});

/** The runtime and everything it needs, as one layer. */
const LashLive = (filename: string) => {
  const provider = createProvider(MODEL);
  return LashRuntime.layer({ plugins: [{ name: "math", tools: [add] }] }).pipe(
    Layer.provide(
      Layer.mergeAll(
        SqliteStore.layer({ filename }),
        LlmProviders.single(provider),
        ModelCatalog.fromEntries([provider.info]),
        IdGenerator.Live,
      ),
    ),
  );
};

const print = (step: string, data: Record<string, unknown>) =>
  Console.log(JSON.stringify({ example: "host-effect", node: process.versions.node, step, ...data }));

const first = Effect.gen(function* () {
  const rt = yield* LashRuntime;
  const session = yield* rt.createSession({ model: MODEL, title: "example" });
  const tools: string[] = [];
  const result = yield* rt.turn(
    session.id,
    { text: "What is 2 + 3?" },
    {
      onEvent: (event) => {
        if (event.type === "toolCompleted") tools.push(`${event.name} → ${JSON.stringify(event.content)}`);
      },
    },
  );
  yield* print("turn", { sessionId: session.id, text: result.text, outcome: result.outcome.type, tools });
});

const second = (sessionId: string) =>
  Effect.gen(function* () {
    const rt = yield* LashRuntime;
    // A new process: the session comes back from the SQLite file with its history.
    const before = (yield* rt.readView(sessionId)).length;
    const resumed = yield* rt.turn(sessionId, { text: "What did I ask you before?" });
    yield* print("resume", {
      sessionId,
      messagesBefore: before,
      text: resumed.text,
      outcome: resumed.outcome.type,
    });

    // A fork continues from the leaf in a new session; the original is untouched.
    const fork = yield* rt.fork(sessionId, { title: "example fork" });
    const forked = yield* rt.turn(fork.id, { text: "And what is 2 + 3 on the fork?" });
    yield* print("fork", {
      sessionId: fork.id,
      parent: sessionId,
      text: forked.text,
      outcome: forked.outcome.type,
      forkMessages: (yield* rt.readView(fork.id)).length,
      originalMessages: (yield* rt.readView(sessionId)).length,
    });
  });

const [step, sessionId] = process.argv.slice(2);
const filename = process.env.LASH_DB;
if (!filename || (step !== "first" && step !== "second") || (step === "second" && !sessionId)) {
  process.stderr.write("usage: LASH_DB=<file> node dist/main.js first | second <session id>\n");
  process.exit(2);
}
const program = step === "first" ? first : second(sessionId!);
await Effect.runPromise(program.pipe(Effect.provide(LashLive(filename))));
