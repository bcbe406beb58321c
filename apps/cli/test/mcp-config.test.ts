// The CLI's config schema for MCP servers: lash's documented keys (startupTimeoutMs) and the
// spellings other clients write (type "streamable-http" / "streamableHttp", serverUrl) are accepted,
// mapped and applied by the real manager; a wrong spelling is one message naming the accepted ones.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../src/config.ts";
import { CliError } from "../src/errors.ts";
import { type McpRuntime, mcpServers, startMcp } from "../src/mcp.ts";

const fixtures = join(import.meta.dirname, "../../../packages/plugin-mcp/test/fixtures");

const usage = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    return (e as Error).message;
  }
  throw new Error("expected a usage error");
};

const running: McpRuntime[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

describe("MCP server config in lash's config file", () => {
  it("accepts startupTimeoutMs, type streamable-http / streamableHttp and serverUrl", () => {
    const config = validateConfig(
      {
        mcpServers: {
          a: { type: "streamable-http", url: "http://127.0.0.1:1/mcp", startupTimeoutMs: 2000 },
          b: { type: "streamableHttp", serverUrl: "http://127.0.0.1:2/mcp" },
          c: { serverUrl: "http://127.0.0.1:3/sse", type: "sse" },
          d: { command: "node", args: ["x.js"], startupTimeoutMs: 90000 },
        },
      },
      "c.json",
    );
    expect(config.mcpServers?.a?.startupTimeoutMs).toBe(2000);
    expect(mcpServers(config).map((s) => [s.name, s.transport])).toEqual([
      ["a", "http"],
      ["b", "http"],
      ["c", "sse"],
      ["d", "stdio"],
    ]);
  });

  it("a wrong spelling names the accepted ones; command with serverUrl is refused", () => {
    const typeMessage = usage(() =>
      validateConfig({ mcpServers: { a: { type: "websocket", url: "ws://x" } } }, "c.json"),
    );
    expect(typeMessage).toContain(
      'mcpServers.a.type: expected "stdio", "http" (streamable HTTP; "streamable-http" and "streamableHttp" mean the same) or "sse" (legacy HTTP+SSE), got "websocket"',
    );
    expect(
      usage(() => validateConfig({ mcpServers: { a: { command: "x", serverUrl: "http://h" } } }, "c.json")),
    ).toContain('needs either "command"');
    expect(
      usage(() => validateConfig({ mcpServers: { a: { command: "x", startupTimeoutMs: 0 } } }, "c.json")),
    ).toContain("mcpServers.a.startupTimeoutMs: expected a positive integer");
  });

  it("startupTimeoutMs is applied: a server that never answers initialize fails after it", async () => {
    const config = validateConfig(
      {
        mcpServers: {
          slow: {
            command: process.execPath,
            args: [join(fixtures, "silent-server.ts")],
            startupTimeoutMs: 400,
          },
        },
      },
      "c.json",
    );
    const mcp = await startMcp(config, { PATH: process.env.PATH ?? "" });
    running.push(mcp);
    // the manager's default budget is 30 s: settling well inside this wait proves the config's 400 ms applied
    await mcp.settle(20_000);
    const slow = mcp.status().find((s) => s.name === "slow");
    // failed now (or, on a loaded machine, already past the backoff into the next attempt)
    expect(["failed", "restarting"]).toContain(slow?.state);
    expect(slow?.reason).toContain("no answer to initialize within 400 ms");
  });
});
