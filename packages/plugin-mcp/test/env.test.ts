// The environment a stdio MCP server is started with: the host's, scrubbed of credentials,
// plus what the server's config passes explicitly.
import { afterEach, describe, expect, it } from "vitest";
import { createMcpManager, type McpManagerHandle } from "../src/index.ts";
import { fixtureServer } from "./helpers.ts";

const open: McpManagerHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});

const envOf = async (m: McpManagerHandle, server: string): Promise<Record<string, string>> => {
  const out = await m.callTool(server, "env", {});
  const text = out.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  return JSON.parse(text) as Record<string, string>;
};

describe("stdio server environment", () => {
  it("gets the host environment without credentials; the server's own env passes explicitly", async () => {
    const host = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: "/home/tester",
      LANG: "C.UTF-8",
      LASH_TEST_PLAIN: "plain-value",
      ANTHROPIC_API_KEY: "sk-ant-test-anthropic-0123456789",
      OPENAI_API_KEY: "sk-test-openai-0123456789abcdef",
      OPENAI_COMPATIBLE_API_KEY: "compat-key-0123456789",
      GEMINI_API_KEY: "gemini-key-0123456789",
      GITHUB_TOKEN: "ghp_test0123456789abcdefghijklmn",
      DB_PASSWORD: "hunter2hunter2",
      LASH_HELD_KEYLIKE: "held-by-the-host-0123",
    };
    const m = await createMcpManager(
      {
        mcpServers: {
          plain: fixtureServer("env-server.ts"),
          passing: fixtureServer("env-server.ts", {
            // biome-ignore lint/suspicious/noTemplateCurlyInString: config-file `${VAR}` expansion
            GITHUB_TOKEN: "${GITHUB_TOKEN}",
            SERVER_SECRET: "given-in-config",
          }),
        },
      },
      { env: host, secretEnvNames: ["LASH_HELD_KEYLIKE"] },
    );
    open.push(m);

    const plain = await envOf(m, "plain");
    // what lash runs with reaches the server (PATH, HOME, LANG, anything not secret) …
    expect(plain).toMatchObject({ HOME: "/home/tester", LANG: "C.UTF-8", LASH_TEST_PLAIN: "plain-value" });
    // … its credentials do not
    for (const name of [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "OPENAI_COMPATIBLE_API_KEY",
      "GEMINI_API_KEY",
      "GITHUB_TOKEN",
      "DB_PASSWORD",
      "LASH_HELD_KEYLIKE",
    ])
      expect(plain[name], name).toBeUndefined();
    const text = JSON.stringify(plain);
    for (const value of Object.values(host).filter((v) => v.includes("0123") || v.startsWith("hunter")))
      expect(text).not.toContain(value);

    const passing = await envOf(m, "passing");
    expect(passing.GITHUB_TOKEN).toBe(host.GITHUB_TOKEN);
    expect(passing.SERVER_SECRET).toBe("given-in-config");
    expect(passing.OPENAI_API_KEY).toBeUndefined();
  });
});
