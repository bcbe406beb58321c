// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} placeholders are the config syntax under test
import { Either } from "effect";
import { describe, expect, it } from "vitest";
import { expandServerEnv, McpConfigError, type McpServerConfig, parseMcpConfig } from "../src/index.ts";

/** A `claude_desktop_config.json` as Claude Desktop's docs show it (plus Cline-style extras). */
const claudeDesktop = `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"]
    },
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>" }
    },
    "postgres": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "mcp/postgres", "postgresql://host.docker.internal:5432/mydb"],
      "disabled": true,
      "autoApprove": []
    }
  }
}`;

describe("parseMcpConfig", () => {
  it("reads a Claude Desktop config unchanged (env, unknown keys, Cline's disabled)", () => {
    const config = parseMcpConfig(claudeDesktop);
    expect(config.servers).toEqual([
      {
        name: "filesystem",
        type: "stdio",
        enabled: true,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"],
      },
      {
        name: "github",
        type: "stdio",
        enabled: true,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "<YOUR_TOKEN>" },
      },
      {
        name: "postgres",
        type: "stdio",
        enabled: false,
        command: "docker",
        args: ["run", "-i", "--rm", "mcp/postgres", "postgresql://host.docker.internal:5432/mydb"],
      },
    ] satisfies McpServerConfig[]);
  });

  it("reads Cursor / Claude Code remote servers and lash's own keys", () => {
    const config = parseMcpConfig({
      mcpServers: {
        docs: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
        legacy: { type: "sse", url: "http://127.0.0.1:9000/sse" },
        local: {
          type: "stdio",
          command: "python",
          args: ["server.py"],
          cwd: "/srv",
          timeoutMs: 5000,
          startupTimeoutMs: 90000,
          enabled: false,
        },
      },
    });
    expect(config.servers).toEqual([
      {
        name: "docs",
        type: "http",
        enabled: true,
        url: "https://example.com/mcp",
        headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
      },
      { name: "legacy", type: "sse", enabled: true, url: "http://127.0.0.1:9000/sse" },
      {
        name: "local",
        type: "stdio",
        enabled: false,
        command: "python",
        args: ["server.py"],
        cwd: "/srv",
        timeoutMs: 5000,
        startupTimeoutMs: 90000,
      },
    ]);
  });

  it("maps other clients' spellings: type streamable-http / streamableHttp, serverUrl", () => {
    const config = parseMcpConfig({
      mcpServers: {
        a: { type: "streamable-http", url: "http://127.0.0.1:1/mcp" },
        b: { type: "streamableHttp", serverUrl: "http://127.0.0.1:2/mcp", startupTimeoutMs: 250 },
        c: { serverUrl: "http://127.0.0.1:3/mcp" },
        d: { type: "sse", serverUrl: "http://127.0.0.1:4/sse", url: "http://127.0.0.1:4/sse" },
      },
    });
    expect(config.servers).toEqual([
      { name: "a", type: "http", enabled: true, url: "http://127.0.0.1:1/mcp" },
      { name: "b", type: "http", enabled: true, url: "http://127.0.0.1:2/mcp", startupTimeoutMs: 250 },
      { name: "c", type: "http", enabled: true, url: "http://127.0.0.1:3/mcp" },
      { name: "d", type: "sse", enabled: true, url: "http://127.0.0.1:4/sse" },
    ]);
    expect(
      problems({ mcpServers: { a: { url: "http://127.0.0.1:1/mcp", serverUrl: "http://127.0.0.1:2/mcp" } } }),
    ).toEqual([
      'mcpServers.a: has both "url" and "serverUrl" (the same setting) with different values; keep one',
    ]);
    expect(problems({ mcpServers: { a: { command: "x", serverUrl: "http://h" } } })[0]).toMatch(
      /both "command" and "url"/,
    );
  });

  const problems = (input: unknown): string[] => {
    try {
      parseMcpConfig(input);
    } catch (error) {
      expect(error).toBeInstanceOf(McpConfigError);
      return (error as McpConfigError).issues.map((i) => `${i.path}: ${i.message}`);
    }
    throw new Error("expected the config to be rejected");
  };

  it("names the JSON path and what was expected", () => {
    expect(problems({ mcpServers: { github: { command: "npx", args: "-y server" } } })).toEqual([
      "mcpServers.github.args: expected an array of strings",
    ]);
    expect(
      problems({ mcpServers: { github: { command: "npx", args: ["-y", 2], env: { TOKEN: 1 } } } }),
    ).toEqual([
      "mcpServers.github.args: expected an array of strings",
      "mcpServers.github.env: expected an object whose values are strings",
    ]);
    expect(problems({ mcpServers: { a: { type: "websocket", url: "ws://x" } } })).toEqual([
      'mcpServers.a.type: expected "stdio", "http" (streamable HTTP; "streamable-http" and "streamableHttp" mean the same) or "sse" (legacy HTTP+SSE)',
    ]);
    expect(problems({ mcpServers: { a: { command: "x", timeoutMs: -5 } } })).toEqual([
      "mcpServers.a.timeoutMs: expected a positive whole number of milliseconds",
    ]);
    expect(problems({ mcpServers: { a: "npx server" } })[0]).toMatch(
      /^mcpServers\.a: expected a server object/,
    );
    expect(problems({ servers: {} })[0]).toMatch(/^mcpServers: is required/);
    expect(problems({ mcpServers: [] })).toEqual([
      "mcpServers: expected an object mapping server names to server configs",
    ]);
  });

  it("rejects entries that are neither stdio nor remote, or both", () => {
    expect(problems({ mcpServers: { a: { args: ["x"] } } })).toEqual([
      'mcpServers.a: expected "command" (a local stdio server) or "url" (a remote http/sse server)',
    ]);
    expect(problems({ mcpServers: { a: { command: "x", url: "http://h" } } })[0]).toMatch(
      /both "command" and "url"/,
    );
    expect(problems({ mcpServers: { a: { type: "http", command: "x" } } })).toEqual([
      'mcpServers.a.url: expected a URL (type "http")',
    ]);
    expect(problems({ mcpServers: { a: { url: "ftp://h/x" } } })).toEqual([
      'mcpServers.a.url: expected an http:// or https:// URL, got "ftp://h/x"',
    ]);
  });

  it("says when the text is not JSON, and the message lists every problem", () => {
    expect(problems("{ mcpServers: ")[0]).toMatch(/^: not valid JSON/);
    try {
      parseMcpConfig({ mcpServers: { a: { command: 1 }, b: { url: 2 } } });
    } catch (error) {
      expect((error as Error).message).toBe(
        "invalid MCP config:\n  mcpServers.a.command: expected a non-empty string\n  mcpServers.b.url: expected a non-empty string",
      );
    }
  });
});

describe("expandServerEnv", () => {
  const [github, docs] = parseMcpConfig({
    mcpServers: {
      github: {
        command: "${NODE_BIN:-node}",
        args: ["server.js", "--org=${ORG}"],
        env: { GITHUB_TOKEN: "${GH_TOKEN}" },
      },
      docs: { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
    },
  }).servers as [McpServerConfig, McpServerConfig];

  it("expands ${VAR} and ${VAR:-default} in command, args, env, url and headers", () => {
    expect(Either.getOrThrow(expandServerEnv(github, { ORG: "acme", GH_TOKEN: "t0k" }))).toMatchObject({
      command: "node",
      args: ["server.js", "--org=acme"],
      env: { GITHUB_TOKEN: "t0k" },
    });
    expect(Either.getOrThrow(expandServerEnv(docs, { HOST: "h.example", TOKEN: "abc" }))).toMatchObject({
      url: "https://h.example/mcp",
      headers: { Authorization: "Bearer abc" },
    });
  });

  it("names the variables that are not set", () => {
    const r = expandServerEnv(github, {});
    expect(Either.isLeft(r) && r.left).toMatch(/^environment variables ORG, GH_TOKEN not set/);
  });
});
