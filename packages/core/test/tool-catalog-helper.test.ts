// A session's tool allow-list narrows the catalog; tools flagged `helper` (read_output) follow
// their plugin instead of the list — by the flag, not by name.
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { outputBudgetPlugin } from "../src/budget.ts";
import { PluginHost, TOOL_ALLOW_KEY, ToolCatalog } from "../src/host.ts";
import type { SessionRecord } from "../src/store.ts";
import { defineTool, type ToolDefinition, textOutput } from "../src/tool.ts";

const tool = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  ...defineTool({
    name,
    description: name,
    inputSchema: { type: "object" },
    run: async () => textOutput(name),
  }),
  ...extra,
});

const session = (allow?: readonly string[]): SessionRecord => ({
  id: "ses_1",
  model: "test/model",
  mode: "standard",
  createdAt: 0,
  updatedAt: 0,
  leafId: null,
  headRevision: 0,
  turnCount: 0,
  frameId: "frame_1",
  state: allow ? { [TOOL_ALLOW_KEY]: allow } : {},
});

const names = (plugins: Parameters<typeof PluginHost.make>[0], allow?: readonly string[]) =>
  Effect.runPromise(ToolCatalog.make(PluginHost.make(plugins)).forSession(session(allow))).then((m) =>
    [...m.keys()].sort(),
  );

describe("ToolCatalog and helper tools", () => {
  it("read_output is a helper: it stays when the allow-list leaves it out", async () => {
    const budget = outputBudgetPlugin({});
    expect(budget.tools?.find((t) => t.name === "read_output")?.helper).toBe(true);
    const plugins = [{ name: "files", tools: [tool("read_file"), tool("shell")] }, budget];
    expect(await names(plugins)).toEqual(["read_file", "read_output", "shell"]);
    expect(await names(plugins, ["read_file"])).toEqual(["read_file", "read_output"]);
  });

  it("the flag, not the name: a tool named read_output without it is narrowed; any helper is kept", async () => {
    const plugins = [
      { name: "a", tools: [tool("read_file"), tool("read_output"), tool("peek_more", { helper: true })] },
    ];
    expect(await names(plugins, ["read_file"])).toEqual(["peek_more", "read_file"]);
  });
});
