// MCP at the edges, against real servers: text blobs, a tool with a bad schema, a streamable-HTTP
// session the server forgot (404), the session DELETE on exit, and a legacy-SSE server restart.
import { afterEach, describe, expect, it } from "vitest";
import { createMcpManager, type McpManagerHandle, type McpServerStatus } from "../src/index.ts";
import { everythingServer } from "./helpers.ts";

const open: McpManagerHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});
const manager = async (
  mcpServers: Record<string, unknown>,
  options: Parameters<typeof createMcpManager>[1] = {},
) => {
  const m = await createMcpManager({ mcpServers }, options);
  open.push(m);
  return m;
};
const statusOf = (m: McpManagerHandle, name: string): McpServerStatus => {
  const s = m.status().find((x) => x.name === name);
  if (!s) throw new Error(`no status for ${name}`);
  return s;
};
const textOf = (o: { content: readonly { type: string; text?: string }[] }) =>
  o.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");

describe("MCP at the edges (real servers)", () => {
  it("server-everything's text/plain blob resource reaches the model as text", async () => {
    const m = await manager({ everything: everythingServer() });
    await m.awaitSettled();
    expect(statusOf(m, "everything").state).toBe("ready");
    const out = await m.callTool("everything", "get-resource-reference", {
      resourceType: "Blob",
      resourceId: 2,
    });
    const text = textOf(out);
    expect(text).toContain("[resource demo://resource/dynamic/blob/2 (text/plain)]");
    expect(text).toContain("Resource 2: This is a base64 blob");
    expect(out.content.some((p) => p.type === "attachment")).toBe(false);
  });
});
