// A lash process for the llm-capability crash test: a turn (SQLite store, journal on) whose tool
// `ask_then_act` asks the model through `host.llm`, announces the reply, and — in `turn` mode —
// hangs so the parent can SIGKILL it; `resume` mode finishes the cut-off turn.
//   node llm-capability-worker.ts <db> <baseUrl> <turn|resume> [sessionId]

import {
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  SqliteStore,
  type ToolDefinition,
  textOutput,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { Effect, Layer } from "effect";

const [db, baseUrl, mode, sessionArg] = process.argv.slice(2) as [string, string, string, string | undefined];
const say = (line: string) => process.stdout.write(`${line}\n`);

const askThenAct: ToolDefinition = {
  name: "ask_then_act",
  description: "Asks the model a question, then acts on the answer.",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  // re-run after a crash: its model call is answered from the journal
  idempotent: true,
  execute: (_args, ctx) =>
    Effect.gen(function* () {
      const r = yield* ctx.host!.llm.complete(
        { messages: [{ id: "q1", role: "user", parts: [{ type: "text", text: "Pick a number." }] }] },
        { source: "ask_then_act" },
      );
      const answer = r.response.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      say(`ANSWER ${answer}`);
      if (mode === "turn") return yield* Effect.never;
      return textOutput(`acted on ${answer}`, { usage: r.usage ? [r.usage] : [] });
    }),
};

const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "test", retry: false });
const layer = LashRuntime.layer({ plugins: [{ name: "ask", tools: [askThenAct] }] }).pipe(
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
  const sessionId = sessionArg ?? (yield* rt.createSession({ model: "openai-compatible/mock" })).id;
  say(`SESSION ${sessionId}`);
  const result =
    mode === "resume"
      ? yield* rt.resumePending(sessionId)
      : yield* rt.turn(sessionId, { text: "act" }, { resumePending: false });
  const usage = yield* rt.usage(sessionId);
  say(
    `COMMITTED ${JSON.stringify({ text: result?.text, resumed: result?.resumed, sources: usage.bySource.map((r) => r.source) })}`,
  );
});

Effect.runPromise(Effect.scoped(Effect.provide(program, layer))).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`worker failed: ${String(e)}\n`);
    process.exit(1);
  },
);
