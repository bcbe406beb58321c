// Issue 17, acceptance 6: names listed in the policy's `redaction.keys` have their values
// redacted. Real `lash -p` processes against the mock wire server; the scripted model has the
// shell print the variable, lash's own environment and files holding `KEY=value` and
// `"key": "value"`. Afterwards no such value is in any request the model endpoint received,
// the SQLite files, the trace or an export (HTML, JSON, Markdown).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chatMessages, jsonLines, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";

vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

/** In the environment under a name no built-in pattern calls secret: only the policy key does. */
const STAMP = "FAKE-release-stamp-0123456789";
/** Written in a file as `RELEASE_STAMP=…` (not the environment's value). */
const FILE_STAMP = "FAKE-file-stamp-9876543210";
/** Written in a JSON file as `"ship_code": "…"`. */
const JSON_CODE = "FAKE-json-ship-code-4242";
/** Shorter than the redactor's minimum for bare values: redacted because its key is named. */
const SHORT = "abc123";
const VALUES = { STAMP, FILE_STAMP, JSON_CODE, SHORT };

function leaks(text: string | Buffer): string[] {
  const s = text.toString();
  return Object.entries(VALUES)
    .filter(([, value]) => (value === SHORT ? s.includes(`SHIP_CODE=${SHORT}`) : s.includes(value)))
    .map(([name]) => name);
}

describe("policy redaction.keys", () => {
  it("a configured key's values never reach the model, the database, the trace or an export", async () => {
    box = await sandbox([
      {
        text: "Looking.",
        toolCalls: [
          { id: "c1", name: "shell", arguments: { command: 'echo "stamp=$RELEASE_STAMP"' } },
          { id: "c2", name: "shell", arguments: { command: "cat release.env ship.json" } },
          { id: "c3", name: "shell", arguments: { command: "cat /proc/$PPID/environ | tr '\\0' '\\n'" } },
          { id: "c4", name: "read_file", arguments: { path: "ship.json" } },
        ],
      },
      { text: "Done." },
    ]);
    mkdirSync(box.home, { recursive: true });
    // unsandboxed: c3 reads lash's own environment in /proc, which bwrap's PID namespace hides
    // (only the user's config may turn the sandbox off)
    writeFileSync(join(box.home, "config.json"), JSON.stringify({ policy: { sandbox: { mode: "off" } } }));
    // the key names live in the project's config, the policy's second layer
    mkdirSync(join(box.cwd, ".lash"), { recursive: true });
    writeFileSync(
      join(box.cwd, ".lash", "config.json"),
      JSON.stringify({ policy: { redaction: { keys: ["RELEASE_STAMP", "ship_code"] } } }),
    );
    writeFileSync(join(box.cwd, "release.env"), `RELEASE_STAMP=${FILE_STAMP}\nexport SHIP_CODE=${SHORT}\n`);
    writeFileSync(join(box.cwd, "ship.json"), `{\n  "ship_code": "${JSON_CODE}",\n  "name": "kept"\n}\n`);
    const opts = { env: { ...box.env, RELEASE_STAMP: STAMP }, cwd: box.cwd };

    const run = await lash(["-p", "look", "--output-format", "stream-json", "--trace", "trace.jsonl"], opts);
    expect(run.code, run.stderr).toBe(0);
    const lines = jsonLines(run.stdout);
    const sessionId = (lines.find((l) => l.type === "session") as { sessionId: string }).sessionId;

    const toolTexts = chatMessages(box.server.requests.at(1)!.body)
      .filter((m) => m.role === "tool")
      .map((m) => textOf(m.content));
    expect(toolTexts).toHaveLength(4);
    // the variable is kept from the shell's environment (a name in redaction.keys is a secret name)
    expect(toolTexts[0]).toContain("stamp=");
    expect(toolTexts[0]).not.toContain(STAMP);
    // KEY=value and "key": "value" in output: the value replaced, the rest kept
    expect(toolTexts[1]).toContain("RELEASE_STAMP=[REDACTED:RELEASE_STAMP]");
    expect(toolTexts[1]).toContain("export SHIP_CODE=[REDACTED:SHIP_CODE]");
    expect(toolTexts[1]).toContain('"ship_code": "[REDACTED:ship_code]"');
    expect(toolTexts[1]).toContain('"name": "kept"');
    // lash's own environment holds the value: redacted by value and by name
    expect(toolTexts[2]).toContain("RELEASE_STAMP=[REDACTED:RELEASE_STAMP]");
    expect(toolTexts[3]).toContain('"ship_code": "[REDACTED:ship_code]"');

    // everything the values could have reached
    const artifacts: Record<string, string | Buffer> = { stdout: run.stdout, stderr: run.stderr };
    for (const format of ["html", "json", "md"]) {
      const out = join(box.cwd, `export.${format}`);
      const r = await lash(["export", sessionId, "--format", format, "-o", out], opts);
      expect(r.code, r.stderr).toBe(0);
      artifacts[`export ${format}`] = readFileSync(out);
      expect(readFileSync(out, "utf8")).toContain("[REDACTED:");
    }
    const trace = readFileSync(join(box.cwd, "trace.jsonl"));
    expect(trace.length).toBeGreaterThan(0);
    artifacts.trace = trace;
    for (const f of readdirSync(box.home).filter((f) => f !== "config.json"))
      artifacts[`home/${f}`] = readFileSync(join(box.home, f));
    expect(Object.keys(artifacts).some((k) => k.endsWith(".db"))).toBe(true);
    for (const req of box.server.requests) {
      artifacts[`request ${req.index} body`] = req.rawBody;
      artifacts[`request ${req.index} path`] = req.path;
    }
    expect(box.server.requests.length).toBe(2);
    const found = Object.entries(artifacts)
      .map(([where, content]) => [where, leaks(content)] as const)
      .filter(([, names]) => names.length > 0);
    expect(found).toEqual([]);
  });
});
