// The promise facade: a durable session in SQLite, a tool, one turn.
// Run: pnpm exec node packages/core/examples/facade.ts
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLash, defineTool, SqliteStore, textOutput } from "@lash/core";
import { ScriptedProvider } from "@lash/providers/testing";

// A scripted model so the example runs offline; use
// `createProvider("anthropic/claude-sonnet-4-5")` from @lash/providers for a real one.
const model = new ScriptedProvider([
  { toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] },
  { text: "2 + 3 = 5" },
]);

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
  run: async ({ a, b }) => textOutput(String(a + b)),
});

const lash = createLash({
  store: SqliteStore.layer({ filename: join(mkdtempSync(join(tmpdir(), "lash-")), "lash.db") }),
  provider: model,
  plugins: [{ name: "math", tools: [add] }],
});

const session = await lash.createSession({ model: "anthropic/claude-sonnet-4-5" });
const turn = session.turn("What is 2 + 3?");
for await (const event of turn) {
  if (event.type === "textDelta") process.stdout.write(event.text);
  if (event.type === "toolCompleted") console.log(`[${event.name} → ${JSON.stringify(event.content)}]`);
}
const result = await turn.result;
console.log(`\n${result.outcome.type}; ${result.toolCalls} tool call; revision ${result.headRevision}`);
console.log((await session.readView()).map((m) => m.role).join(" → "));
await lash.close();
