// A lash worker process on Restate for the cluster tests.
//   node worker-main.ts <db> <mockBaseUrl> <counterFile> <port> <adminUrl>
// env HANG_LABEL: the non-idempotent `side_effect` tool called with this label records the
// call in the counter file, says TOOL_RUNNING <label> and never returns (the test kills it there).
// env NOTE: the text of a note a beforeTurn hook adds to every turn's input (none by default): another
// note is "changed code" between attempts of a turn (the model call's request differs).
import { appendFileSync } from "node:fs";
import {
  IdGenerator,
  LlmProviders,
  ModelCatalog,
  type Plugin,
  SqliteStore,
  type ToolDefinition,
  textOutput,
} from "@lash/core";
import { createProvider } from "@lash/providers";
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
const provider = createProvider("openai-compatible/mock", { baseUrl, apiKey: "test", retry: false });
const services = Layer.mergeAll(
  SqliteStore.layer({ filename: db }),
  LlmProviders.single(provider),
  IdGenerator.Live,
  ModelCatalog.Empty,
);

startRestateWorker({
  services,
  runtime: { plugins: [tools] },
  port: Number(port),
  ...(adminUrl && adminUrl !== "-" ? { adminUrl } : {}),
  register: process.env.NO_REGISTER !== "1",
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
