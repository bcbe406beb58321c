// Config keys for what tools see: `redaction.keys` / `redaction.env`, `shell.passEnv`, and
// the secrets the CLI hands to the runtime (`secretsOf`).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, mergeConfig, redactConfig, validateConfig } from "../src/config.ts";
import { secretsOf } from "../src/create-context.ts";
import { CliError } from "../src/errors.ts";

const usage = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    return (e as Error).message;
  }
  throw new Error("expected a usage error");
};

describe("redaction and shell config", () => {
  it("accepts redaction.keys, redaction.env and shell.passEnv; a short secret is refused without echoing it", () => {
    const c = validateConfig(
      {
        redaction: { keys: ["a-long-secret-value"], env: ["DEPLOY_CRED"] },
        shell: { passEnv: ["NPM_TOKEN"] },
      },
      "c.json",
    );
    expect(c.redaction?.keys).toEqual(["a-long-secret-value"]);
    const message = usage(() => validateConfig({ redaction: { keys: ["pw12"] } }, "c.json"));
    expect(message).toContain("redaction.keys.0: expected a secret of at least 8 characters");
    expect(message).not.toContain("pw12");
  });

  it("a project config adds secrets to redact but cannot pass credentials to commands", () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-cfg-"));
    try {
      const user = join(dir, "user.json");
      const project = join(dir, "project", "config.json");
      mkdirSync(join(dir, "project"));
      writeFileSync(
        user,
        JSON.stringify({ redaction: { keys: ["user-secret-1"] }, shell: { passEnv: ["A_TOKEN"] } }),
      );
      writeFileSync(project, JSON.stringify({ redaction: { keys: ["project-secret-1"], env: ["X_CRED"] } }));
      const { config } = loadConfig(user, project);
      expect(config.redaction).toEqual({ keys: ["user-secret-1", "project-secret-1"], env: ["X_CRED"] });
      expect(config.shell).toEqual({ passEnv: ["A_TOKEN"] });
      writeFileSync(project, JSON.stringify({ shell: { passEnv: ["OPENAI_API_KEY"] } }));
      expect(usage(() => loadConfig(user, project))).toContain(
        "shell.passEnv: only allowed in your user config",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(mergeConfig({ shell: { passEnv: ["A"] } }, {}).shell).toEqual({ passEnv: ["A"] });
  });

  it("`lash config` shows redaction.keys redacted", () => {
    const shown = redactConfig({ redaction: { keys: ["a-long-secret-value"] } });
    expect(JSON.stringify(shown)).not.toContain("a-long-secret-value");
  });

  it("secretsOf: provider key names, secret env values, config keys, MCP env values and bearer tokens", () => {
    const env = {
      OPENAI_API_KEY: "sk-test-0123456789abcdefghij",
      DEPLOY_CRED: "deploy-cred-0123456789",
      GH_PAT: "ghp_abcdefghijklmnopqrstuvwxyz0123",
      PATH: "/usr/bin:/bin",
    };
    const { names, values } = secretsOf(
      {
        redaction: { keys: ["config-secret-0123"], env: ["DEPLOY_CRED"] },
        mcpServers: {
          gh: {
            command: "x",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: config-file `${VAR}` expansion
            env: { GITHUB_PERSONAL_ACCESS_TOKEN: "${GH_PAT}", LOG_LEVEL: "debug-verbose" },
          },
          api: {
            url: "http://127.0.0.1:1/mcp",
            headers: { Authorization: "Bearer literal-token-0123456789" },
          },
        },
      },
      env,
    );
    for (const n of [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "OPENAI_COMPATIBLE_API_KEY",
      "GEMINI_API_KEY",
      "GOOGLE_API_KEY",
      "DEPLOY_CRED",
    ])
      expect(names).toContain(n);
    const byValue = new Map(values.map((v) => [v.value, v.name]));
    expect(byValue.get(env.OPENAI_API_KEY)).toBe("OPENAI_API_KEY");
    expect(byValue.get(env.DEPLOY_CRED)).toBe("DEPLOY_CRED");
    expect(byValue.get("config-secret-0123")).toBe("redaction.keys");
    expect(byValue.has(env.GH_PAT)).toBe(true);
    expect(byValue.get("literal-token-0123456789")).toBe("mcpServers.api.headers.Authorization");
    expect(byValue.has("debug-verbose")).toBe(false);
    expect(byValue.has("/usr/bin:/bin")).toBe(false);
  });
});
