// Runnable without keys: `pnpm exec node packages/subagents/examples/quickstart.ts`.
// A parent agent fans a question out to two read-only `explore` subagents with a
// typed result, through the real Anthropic SDK pointed at the mock wire server.

import { createLash, defineTool, MemoryStore, textOutput } from "@lash/core";
import { createProvider, ModelCatalog } from "@lash/providers";
import { mockProviderOptions, startMockServer } from "@lash/providers/testing";
import { subagentsPlugin } from "@lash/subagents";

// The scripted "model": the parent spawns two children in one response; each child
// reads the notes and submits a result matching the requested output schema.
const server = await startMockServer({
  responder: (req) => {
    const body = req.body as { messages: { role: string; content: unknown }[] };
    const first = JSON.stringify(body.messages[0]?.content ?? "");
    const step = body.messages.filter((m) => m.role === "assistant").length;
    if (first.includes("Summarise the project")) {
      if (step > 0) return { text: "Both subagents reported back.", usage: { input: 900, output: 20 } };
      return {
        toolCalls: ["backend", "frontend"].map((area) => ({
          name: "spawn_agent",
          arguments: {
            task: `List the open issues of the ${area}.`,
            capability: "explore",
            output: { area: "str", issues: "list[str]" },
            seed: { area },
          },
        })),
        usage: { input: 500, output: 60 },
      };
    }
    const area = first.includes("backend") ? "backend" : "frontend";
    if (step === 0)
      return { toolCalls: [{ name: "read_notes", arguments: {} }], usage: { input: 200, output: 10 } };
    return {
      toolCalls: [{ name: "submit_result", arguments: { area, issues: [`${area}: flaky test`] } }],
      usage: { input: 260, output: 25 },
    };
  },
});

const readNotes = defineTool<Record<string, never>>({
  name: "read_notes",
  description: "Read the team's notes.",
  inputSchema: { type: "object", properties: {} },
  readOnly: true, // → available to `explore` children
  run: async () => textOutput("backend: flaky test; frontend: flaky test"),
});

const catalog = ModelCatalog.default();
const lash = createLash({
  store: MemoryStore,
  // Against the real API: createProvider(model) with ANTHROPIC_API_KEY set.
  provider: (model) => createProvider(model, mockProviderOptions(server, "anthropic")),
  catalog: [catalog.lookup("anthropic/claude-opus-4-5")!, catalog.lookup("anthropic/claude-haiku-4-5")!],
  plugins: [
    // explore children run on a cheaper model
    subagentsPlugin({ models: { explore: "anthropic/claude-haiku-4-5" } }),
    { name: "notes", tools: [readNotes] },
  ],
});

const parent = await lash.createSession({ model: "anthropic/claude-opus-4-5" });
const run = parent.turn("Summarise the project's open issues.");
for await (const event of run) {
  if (event.type === "plugin" && event.plugin === "subagents") console.log(event.name, event.data);
  if (event.type === "toolCompleted") console.log(event.name, "→", event.content);
}
const result = await run.result;
console.log(result.text);

const usage = await parent.usage();
for (const g of usage.bySource) console.log(g.source, g.model, g.usage, g.costUsd?.toFixed(6));
console.log("total", usage.total, usage.costUsd?.toFixed(6));

// Children are normal sessions linked to the parent's tool call.
const children = (await lash.listSessions({ includeChildren: true })).filter(
  (s) => s.parentLink?.sessionId === parent.id,
);
for (const c of children)
  console.log(c.id, c.parentLink, (await lash.session(c.id).readView()).length, "messages");

await lash.close();
await server.close();
