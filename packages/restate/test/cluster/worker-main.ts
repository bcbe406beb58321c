// A lash worker process on Restate for the cluster tests.
//   node worker-main.ts <store> <mockBaseUrl> <counterFile> <port> <adminUrl>
// <store>: a `postgres://…` URL (the Postgres store) or a SQLite file.
// env HANG_LABEL: the non-idempotent `side_effect` tool called with this label records the
// call in the counter file, says TOOL_RUNNING <label> and never returns (the test kills it there).
// env NOTE: the text of a note a beforeTurn hook adds to every turn's input (none by default): another
// note is "changed code" between attempts of a turn (the model call's request differs).
// env KILL_AFTER_COMMIT: the worker SIGKILLs itself right after the store committed the turn with
// this id, before the invocation answers (says COMMITTED <turnId> first); once per counter file.
// env WORKER_NAME: sent as the `x-lash-worker` header of every model request (the mock's log says who asked).
// env RLM=1: the runtime has the rlm mode and the Lashlang operations `side.bump` (not idempotent) and
// `side.hang` (idempotent; hangs like `side_effect` on HANG_LABEL); their counter lines are
// `<label>@<epoch ms>@<WORKER_NAME>`; each journal step is a line `STEP ran|replayed <name>`.
import { appendFileSync, writeFileSync } from "node:fs";
import {
  defineTool,
  IdGenerator,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SessionStore,
  SqliteStore,
  type ToolDefinition,
  textOutput,
  withRlm,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { PostgresStore } from "@lash/store-postgres";
import { Effect, Layer } from "effect";
import { startRestateWorker } from "../../src/index.ts";

const [db, baseUrl, counterFile, port, adminUrl] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const say = (line: string) => process.stdout.write(`${line}\n`);
const note = process.env.NOTE;

const counted = (name: string, idempotent: boolean): ToolDefinition => ({
  name,
  description: `Appends a line to the side-effect counter (${idempotent ? "idempotent" : "not idempotent"}).`,
  inputSchema: { type: "object", properties: { label: { type: "string" } } },
  idempotent,
  execute: (args) =>
    Effect.gen(function* () {
      const label = (args as { label?: string }).label ?? name;
      appendFileSync(counterFile, `${label}\n`);
      if (label === process.env.HANG_LABEL) {
        say(`TOOL_RUNNING ${label}`);
        return yield* Effect.never;
      }
      return textOutput(`did ${label}`);
    }),
});

const tools: Plugin = {
  name: "cluster-tools",
  tools: [counted("side_effect", false), counted("idem_effect", true)],
  hooks:
    note === undefined
      ? {}
      : {
          beforeTurn: (ctx) =>
            Effect.succeed({
              messages: [
                {
                  id: `${ctx.turnId}.note`,
                  role: "user" as const,
                  parts: [{ type: "text" as const, text: `note ${note}` }],
                },
              ],
            }),
        },
};
const labelSchema = {
  type: "object",
  properties: { label: { type: "string" } },
  required: ["label"],
  additionalProperties: false,
};
const sideOp = (operation: "bump" | "hang") =>
  defineTool<{ label: string }>({
    name: operation,
    description: `Appends the label to the side-effect counter${operation === "hang" ? " (hangs on HANG_LABEL)" : ""}.`,
    inputSchema: labelSchema,
    idempotent: operation === "hang",
    binding: { module: "side", operation, returns: "str" },
    run: async ({ label }) => {
      appendFileSync(counterFile, `${label}@${Date.now()}@${process.env.WORKER_NAME ?? ""}\n`);
      if (label === process.env.HANG_LABEL) {
        say(`TOOL_RUNNING ${label}`);
        await new Promise(() => {});
      }
      return { content: [{ type: "text", text: `${operation} ${label}` }], value: `${operation} ${label}` };
    },
  });
const rlmTools: Plugin = { name: "side", tools: [sideOp("bump"), sideOp("hang")] };

const provider = createProvider("openai-compatible/mock", {
  baseUrl,
  apiKey: "test",
  retry: false,
  ...(process.env.WORKER_NAME ? { headers: { "x-lash-worker": process.env.WORKER_NAME } } : {}),
});
const store = db.startsWith("postgres://")
  ? PostgresStore.layer({ url: db, maxConnections: 8 })
  : SqliteStore.layer({ filename: db });
const killAfter = process.env.KILL_AFTER_COMMIT;
// the kill hook: the real store, and a SIGKILL of this process right after one turn's commit
const hooked =
  killAfter === undefined
    ? store
    : Layer.effect(
        SessionStore,
        Effect.map(SessionStore, (s) => ({
          ...s,
          commit: (c: Parameters<typeof s.commit>[0]) =>
            Effect.tap(s.commit(c), () =>
              Effect.sync(() => {
                if (c.turnId !== killAfter) return;
                // once per cluster (the retried invocation's idempotent commit of the turn comes here too)
                try {
                  writeFileSync(`${counterFile}.killed`, c.turnId, { flag: "wx" });
                } catch {
                  return;
                }
                say(`COMMITTED ${c.turnId}`);
                process.kill(process.pid, "SIGKILL");
              }),
            ),
        })),
      ).pipe(Layer.provide(store));
const services = Layer.mergeAll(hooked, LlmProviders.single(provider), IdGenerator.Live, ModelCatalog.Empty);

startRestateWorker({
  services,
  runtime: process.env.RLM === "1" ? withRlm({ plugins: [rlmTools] }) : { plugins: [tools] },
  port: Number(port),
  ...(adminUrl && adminUrl !== "-" ? { adminUrl } : {}),
  register: process.env.NO_REGISTER !== "1",
  // the journal steps of RLM turns, as lines (`STEP ran|replayed <name>`)
  ...(process.env.RLM === "1"
    ? { onStep: (name: string, replayed: boolean) => say(`STEP ${replayed ? "replayed" : "ran"} ${name}`) }
    : {}),
}).then(
  (w) => {
    say(`READY ${w.url}`);
    process.on("SIGTERM", () => void w.close().then(() => process.exit(0)));
  },
  (e) => {
    process.stderr.write(`worker failed to start: ${String(e)}\n`);
    process.exit(1);
  },
);
