// Export a session as HTML, JSON and Markdown, and import the JSON into another store.
// pnpm exec node packages/export/examples/quickstart.ts
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLash, openMemoryStore, SessionStore } from "@lash/core";
import { exportSession, importSession } from "@lash/export";
import { ScriptedProvider } from "@lash/providers/testing";
import { Layer } from "effect";

// One store the runtime writes and the exporter reads.
const opened = await openMemoryStore();
const lash = createLash({
  store: Layer.succeed(SessionStore, opened.shape),
  provider: new ScriptedProvider([
    { text: "Here is a **plan**:\n\n1. read\n2. fix", usage: { input: 50, output: 12 } },
  ]),
});
const session = await lash.createSession({ model: "anthropic/claude-haiku-4-5", title: "Plan the fix" });
await session.turn("Plan the fix, please.").result;

const dir = mkdtempSync(join(tmpdir(), "lash-export-example-"));
for (const format of ["html", "json", "md"] as const) {
  const text = await exportSession(opened.store, session.id, format); // a store: every branch and subagent
  writeFileSync(join(dir, `session.${format}`), text);
}
console.log(await exportSession(opened.store, session.id, "md"));

// JSON → another store (ids are kept when free there).
const other = await openMemoryStore();
const { sessionId, keptIds } = await importSession(
  other.store,
  await exportSession(opened.store, session.id, "json"),
);
console.log(`imported ${sessionId} (ids kept: ${keptIds}); files in ${dir}`);
await lash.close();
