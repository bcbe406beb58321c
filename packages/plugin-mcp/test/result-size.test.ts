// MCP results and sizes (issue 14 item 6), against a real stdio server: a result over the limit is
// an honest tool error and the server stays up; a message too big to read closes the connection
// with a reason that says so (not "the server process exited"); a text result is held once.
import { ToolFailure } from "@lash/core";
import { afterEach, describe, expect, it } from "vitest";
import { createMcpManager, type McpManagerHandle, mapCallResult } from "../src/index.ts";
import { fixtureServer } from "./helpers.ts";

const MIB = 1024 * 1024;
const open: McpManagerHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});

async function bigServer(options: Parameters<typeof createMcpManager>[1] = {}) {
  const m = await createMcpManager({ mcpServers: { big: fixtureServer("big-server.ts") } }, options);
  open.push(m);
  await m.awaitSettled({ timeoutMs: 20_000 });
  expect(m.status()[0]).toMatchObject({ state: "ready" });
  return m;
}

const failure = async (p: Promise<unknown>): Promise<ToolFailure> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ToolFailure);
  return e as ToolFailure;
};

describe("MCP result sizes", () => {
  it("a result over the limit is a tool error naming both sizes; the server keeps running", async () => {
    const m = await bigServer({ maxResultBytes: 2 * MIB });
    const pid = m.status()[0]!.pid;
    const f = await failure(m.callTool("big", "big", { bytes: 3 * MIB }));
    expect(f.message).toMatch(/the result of "big" from MCP server "big" is 3\.0 MB, over the 2\.0 MB limit/);
    expect(f.message).not.toContain("exited");
    expect(m.status()[0]).toMatchObject({ state: "ready", pid });
    // under the limit it passes, on the same process
    const ok = await m.callTool("big", "big", { bytes: MIB });
    expect((ok.content[0] as { text: string }).text).toHaveLength(MIB);
    expect(m.status()[0]!.pid).toBe(pid);
  });

  it("the default limit takes a 10 MB result as an honest error, not as the server exiting", async () => {
    // the SDK's own stdio read buffer is 10 MiB: before, this message closed the connection and the
    // call failed with "the server process exited"
    const m = await bigServer();
    const f = await failure(m.callTool("big", "big", { bytes: 10 * MIB }));
    expect(f.message).toContain("is 10 MB, over the 8.0 MB limit for MCP results");
    expect(m.status()[0]).toMatchObject({ state: "ready" });
  });

  it("a message too large to read at all closes the connection with that reason", async () => {
    // (the default read limit is 64 MiB; a small one keeps the test fast)
    const m = await bigServer({ maxResultBytes: MIB, maxMessageBytes: 2 * MIB });
    const f = await failure(m.callTool("big", "big", { bytes: 3 * MIB }));
    expect(f.message).toContain("exceeded the 2 MB read limit, so lash closed the connection");
    expect(f.message).not.toContain("the server process exited");
    expect(m.status()[0]!.lastError).toContain("read limit");
  });

  it("a text result is held once: no `value` copy of the text", () => {
    const text = "y".repeat(100_000);
    const out = mapCallResult("s", "t", { content: [{ type: "text", text }] });
    expect(out.value).toBeUndefined();
    expect(JSON.stringify(out).length).toBeLessThan(text.length + 200);
  });
});
