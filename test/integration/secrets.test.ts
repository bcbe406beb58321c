// The secret scan (issue 14, acceptance 3): real `lash -p` processes with known fake keys in
// the environment and in config, against the mock wire server, while the scripted model has
// the tools print everything they can. Afterwards no secret value is in the database files,
// any export format, `sessions show`, the stream-json output, the trace or the requests the
// model endpoint received.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  chatMessages,
  jsonLines,
  lash,
  SANDBOX_POLICY,
  type Sandbox,
  sandbox,
  textOf,
} from "./cli-support.ts";

vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const ENV_SECRETS = {
  ANTHROPIC_API_KEY: "sk-ant-api03-FAKEanthropic0123456789abcdef",
  OPENAI_API_KEY: "sk-proj-FAKEopenai0123456789abcdefghij",
  GEMINI_API_KEY: "AIzaFAKEgemini0123456789abcdefghijklmno",
  GOOGLE_API_KEY: "FAKE-google-key-0123456789",
  GITHUB_TOKEN: "ghp_FAKEgithub0123456789abcdefghijkl",
  MY_DB_PASSWORD: "FAKE-db-password-0123456789",
  // not secret by its name: listed in config `redaction.env`
  DEPLOY_CRED: "FAKE-deploy-cred-0123456789",
};
/** The key of the provider in use: it is sent to the model endpoint as the bearer token, and nowhere else. */
const PROVIDER_KEY = "FAKE-compat-provider-key-0123456789";
/** In config `redaction.keys`, and in a file of the workspace. */
const CONFIGURED = "FAKE-configured-secret-0123456789";
/** An MCP server's token, passed to that server explicitly by its config `env`. */
const MCP_TOKEN = "FAKE-mcp-service-token-0123456789";
const ALL = { ...ENV_SECRETS, OPENAI_COMPATIBLE_API_KEY: PROVIDER_KEY, CONFIGURED, MCP_TOKEN };

const ENV_SERVER = join(
  import.meta.dirname,
  "..",
  "..",
  "packages",
  "plugin-mcp",
  "test",
  "fixtures",
  "env-server.ts",
);

function leaks(text: string | Buffer): string[] {
  return Object.entries(ALL)
    .filter(([, value]) => text.includes(value))
    .map(([name]) => name);
}

/** Config with `redaction` and an MCP server holding a token; files holding secrets in the workspace. */
function prepare(b: Sandbox): { env: NodeJS.ProcessEnv; cwd: string } {
  mkdirSync(b.home, { recursive: true });
  writeFileSync(
    join(b.home, "config.json"),
    JSON.stringify({
      redaction: { keys: [CONFIGURED], env: ["DEPLOY_CRED"] },
      policy: SANDBOX_POLICY,
      mcpServers: {
        envsrv: { command: process.execPath, args: [ENV_SERVER], env: { SERVICE_TOKEN: MCP_TOKEN } },
      },
    }),
  );
  writeFileSync(join(b.cwd, "notes.txt"), `db password: ${CONFIGURED}\n`);
  writeFileSync(
    join(b.cwd, ".env"),
    `OPENAI_API_KEY=${ENV_SECRETS.OPENAI_API_KEY}\nDEPLOY_CRED=${ENV_SECRETS.DEPLOY_CRED}\n`,
  );
  return { env: { ...b.env, ...ENV_SECRETS, OPENAI_COMPATIBLE_API_KEY: PROVIDER_KEY }, cwd: b.cwd };
}

/**
 * Everything a secret could have reached: the run's output, `sessions show`, every export
 * format, the trace, every file SQLite wrote, and every request the model endpoint received.
 * Returns the places that hold any secret value.
 */
async function scan(
  b: Sandbox,
  opts: { env: NodeJS.ProcessEnv; cwd: string },
  run: { stdout: string; stderr: string },
  sessionId: string,
): Promise<(readonly [string, string[]])[]> {
  const artifacts: Record<string, string | Buffer> = { stdout: run.stdout, stderr: run.stderr };
  const show = await lash(["sessions", "show", sessionId], opts);
  expect(show.code).toBe(0);
  expect(show.stdout).toContain("[REDACTED:");
  artifacts["sessions show"] = show.stdout;
  for (const format of ["html", "json", "md"]) {
    const out = join(b.cwd, `export.${format}`);
    const r = await lash(["export", sessionId, "--format", format, "-o", out], opts);
    expect(r.code, r.stderr).toBe(0);
    artifacts[`export ${format}`] = readFileSync(out);
  }
  const trace = readFileSync(join(b.cwd, "trace.jsonl"));
  expect(trace.length).toBeGreaterThan(0);
  artifacts.trace = trace;
  // every file SQLite wrote: the database, its WAL and shared memory (not the config file itself)
  for (const f of readdirSync(b.home).filter((f) => f !== "config.json"))
    artifacts[`home/${f}`] = readFileSync(join(b.home, f));
  expect(Object.keys(artifacts).some((k) => k.endsWith(".db"))).toBe(true);
  // the model endpoint: every request body and path; headers carry only the provider's own key
  for (const req of b.server.requests) {
    artifacts[`request ${req.index} body`] = req.rawBody;
    artifacts[`request ${req.index} path`] = req.path;
    artifacts[`request ${req.index} headers`] = JSON.stringify({ ...req.headers, authorization: undefined });
    expect(req.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
  }
  return Object.entries(artifacts)
    .map(([where, content]) => [where, leaks(content)] as const)
    .filter(([, names]) => names.length > 0);
}

describe("secret scan", () => {
  it("no known secret reaches the database, exports, sessions show, stream-json, the trace or the model", async () => {
    box = await sandbox([
      {
        text: "Let me look at the environment.",
        toolCalls: [
          { id: "c1", name: "shell", arguments: { command: "env" } },
          {
            id: "c2",
            name: "shell",
            arguments: {
              command:
                'echo "openai=$OPENAI_API_KEY anthropic=$ANTHROPIC_API_KEY compat=$OPENAI_COMPATIBLE_API_KEY deploy=$DEPLOY_CRED"',
            },
          },
          {
            id: "c3",
            name: "shell",
            arguments: { command: "cat notes.txt .env; cat /proc/$PPID/environ | tr '\\0' '\\n'" },
          },
          { id: "c4", name: "read_file", arguments: { path: ".env" } },
          { id: "c5", name: "mcp__envsrv__env", arguments: {} },
        ],
      },
      // a subagent reads the secret file too
      {
        toolCalls: [
          { id: "s1", name: "spawn_agent", arguments: { task: "Read notes.txt.", capability: "explore" } },
        ],
      },
      { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "notes.txt" } }] },
      { text: "The notes hold a password." },
      { text: "Done looking." },
    ]);
    const opts = prepare(box);
    const run = await lash(
      ["-p", "show me everything", "--output-format", "stream-json", "--trace", "trace.jsonl"],
      opts,
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = jsonLines(run.stdout);
    const sessionId = (lines.find((l) => l.type === "session") as { sessionId: string }).sessionId;

    // the tools ran and their output arrived, redacted
    const completed = lines.filter((l) => l.type === "toolCompleted") as { name: string; isError: boolean }[];
    expect(completed.map((c) => c.name)).toEqual(
      expect.arrayContaining(["shell", "read_file", "mcp__envsrv__env", "spawn_agent"]),
    );
    expect(completed.every((c) => !c.isError)).toBe(true);
    const toolTexts = chatMessages(box.server.requests.at(1)!.body)
      .filter((m) => m.role === "tool")
      .map((m) => textOf(m.content));
    // `env` shows the environment without the credentials (PATH, HOME … are there)
    expect(toolTexts[0]).toContain("PATH=");
    expect(toolTexts[0]).not.toMatch(/(ANTHROPIC|OPENAI|OPENAI_COMPATIBLE|GEMINI|GOOGLE)_API_KEY=/);
    expect(toolTexts[0]).not.toMatch(/GITHUB_TOKEN=|MY_DB_PASSWORD=|DEPLOY_CRED=/);
    expect(toolTexts[1]).toContain("openai= anthropic= compat= deploy=");
    // values read from files (and from lash's own /proc environ) are replaced by name
    expect(toolTexts[2]).toContain("db password: [REDACTED:redaction.keys]");
    expect(toolTexts[2]).toContain("OPENAI_API_KEY=[REDACTED:OPENAI_API_KEY]");
    expect(toolTexts[2]).toContain("DEPLOY_CRED=[REDACTED:DEPLOY_CRED]");
    expect(toolTexts[3]).toContain("[REDACTED:OPENAI_API_KEY]");
    // the MCP server got its token explicitly; what it printed is redacted
    expect(toolTexts[4]).toContain('"SERVICE_TOKEN":"[REDACTED:mcpServers.envsrv.env.SERVICE_TOKEN]"');
    expect(toolTexts[4]).not.toMatch(/OPENAI_API_KEY|GITHUB_TOKEN/);
    expect(box.server.requests.length).toBe(5);

    expect(await scan(box, opts, run, sessionId)).toEqual([]);
  });

  it("RLM mode: a cell that prints the shell's environment, files and lash's environ leaks nothing", async () => {
    const code = [
      'r = (await shell.exec({ command: "env; cat notes.txt .env /proc/$PPID/environ" })?)',
      "print r.stdout",
    ].join("\n");
    box = await sandbox([
      { text: `Looking.\n<lashlang>\n${code}\n</lashlang>\n` },
      { text: '<lashlang>\nfinish("looked")\n</lashlang>\n' },
    ]);
    const opts = prepare(box);
    const run = await lash(
      ["-p", "look", "--mode", "rlm", "--output-format", "stream-json", "--trace", "trace.jsonl"],
      opts,
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines.at(-1)).toMatchObject({ type: "result", outcome: "finished" });
    const sessionId = (lines.find((l) => l.type === "session") as { sessionId: string }).sessionId;
    // the printed output reached the model, redacted
    const second = box.server.requests.at(1)!.rawBody;
    expect(second).toContain("db password: [REDACTED:redaction.keys]");
    expect(second).toContain("[REDACTED:OPENAI_API_KEY]");
    expect(await scan(box, opts, run, sessionId)).toEqual([]);
  });
});
