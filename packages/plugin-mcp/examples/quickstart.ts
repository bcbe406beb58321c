// A lash session whose model calls a tool of an MCP server (the published server-everything,
// spawned over stdio). Runs without keys: the model is the mock wire server from @lash/providers.
//   pnpm exec node packages/plugin-mcp/examples/quickstart.ts
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createLash, MemoryStore } from "@lash/core";
import { createMcpManager, mcpPlugin, parseMcpConfig } from "@lash/plugin-mcp";
import { createProvider } from "@lash/providers";
import { mockProviderOptions, startMockServer } from "@lash/providers/testing";

const require = createRequire(import.meta.url);
const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
const everything = join(dirname(pkg), "dist/index.js");

// The same JSON Claude Desktop / Cursor / Claude Code read (`command` could be "npx" with
// ["-y", "@modelcontextprotocol/server-everything"]).
const config = parseMcpConfig(`{
  "mcpServers": {
    "everything": { "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(everything)}, "stdio"] }
  }
}`);

const mcp = await createMcpManager(config);
mcp.subscribe((s) => console.log(`[mcp] ${s.name}: ${s.state}${s.reason ? ` (${s.reason})` : ""}`));

const llm = await startMockServer({
  replies: [
    { toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "hello from lash" } }] },
    { text: "The server echoed it back." },
  ],
});
// Against a real model: createProvider("anthropic/claude-haiku-4-5") with ANTHROPIC_API_KEY set.
const provider = createProvider("openai-compatible/mock", mockProviderOptions(llm, "openai-chat"));
const lash = createLash({
  store: MemoryStore,
  provider,
  catalog: [provider.info],
  plugins: [mcpPlugin(mcp)],
});

const session = await lash.createSession({ model: "openai-compatible/mock" });
const run = session.turn("Echo something through MCP.");
for await (const event of run) {
  if (event.type === "toolCompleted") console.log("tool result:", JSON.stringify(event));
}
console.log("assistant:", (await run.result).text);
console.log("status:", mcp.status());

await lash.close();
await mcp.close();
await llm.close();
