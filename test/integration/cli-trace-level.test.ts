// `--trace-level standard|extended` and config `trace.level` without `trace.file`: the real
// `lash -p` process against the mock wire server, the trace read back from its JSONL file.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jsonLines, lash, type Sandbox, sandbox } from "./cli-support.ts";

const ANSWER = "The secret word is PELICAN.";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

function responses(file: string): Record<string, unknown>[] {
  return jsonLines(readFileSync(file, "utf8")).filter((r) => r.kind === "llm_response");
}

describe("lash -p --trace-level", () => {
  it("extended records what the model said; the default (standard) does not", async () => {
    box = await sandbox([{ text: ANSWER }, { text: ANSWER }]);
    const extended = await lash(["-p", "say the word", "--trace", "x.jsonl", "--trace-level", "extended"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(extended.stderr).toBe("");
    expect(extended.code).toBe(0);
    expect(extended.stdout).toContain(ANSWER);
    const [x] = responses(join(box.cwd, "x.jsonl"));
    expect(x?.text).toBe(ANSWER);

    const standard = await lash(["-p", "say the word", "--trace", "s.jsonl"], { env: box.env, cwd: box.cwd });
    expect(standard.code).toBe(0);
    expect(standard.stdout).toContain(ANSWER);
    const file = join(box.cwd, "s.jsonl");
    expect(responses(file)).toHaveLength(1);
    expect(readFileSync(file, "utf8")).not.toContain("PELICAN");
  });

  it('config trace: { level: "extended" } (no file) applies to a --trace run', async () => {
    box = await sandbox([{ text: ANSWER }]);
    mkdirSync(box.home, { recursive: true });
    writeFileSync(join(box.home, "config.json"), JSON.stringify({ trace: { level: "extended" } }));
    const r = await lash(["-p", "say the word", "--trace", "t.jsonl"], { env: box.env, cwd: box.cwd });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(responses(join(box.cwd, "t.jsonl"))[0]?.text).toBe(ANSWER);
  });

  it("a project's trace.level joins the user's trace.file (trace merges by key)", async () => {
    box = await sandbox([{ text: ANSWER }]);
    mkdirSync(box.home, { recursive: true });
    writeFileSync(join(box.home, "config.json"), JSON.stringify({ trace: { file: "user-trace.jsonl" } }));
    mkdirSync(join(box.cwd, ".lash"));
    writeFileSync(join(box.cwd, ".lash", "config.json"), JSON.stringify({ trace: { level: "extended" } }));
    const r = await lash(["-p", "say the word"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(responses(join(box.cwd, "user-trace.jsonl"))[0]?.text).toBe(ANSWER);
  });

  it("--trace-level applies to an OTLP-only trace (no file) without a usage error", async () => {
    box = await sandbox([{ text: ANSWER }]);
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const r = await lash(["-p", "say the word", "--trace-level", "extended"], {
      env: { ...box.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}` },
      cwd: box.cwd,
    });
    expect(r.stderr).not.toContain("--trace-level needs a trace");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(ANSWER);
  });

  it("--trace-level with nothing to trace, or an unknown level, is a usage error", async () => {
    box = await sandbox([]);
    const alone = await lash(["-p", "hi", "--trace-level", "extended"], { env: box.env, cwd: box.cwd });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--trace-level needs a trace to apply to: add --trace <file.jsonl>");
    const bad = await lash(["-p", "hi", "--trace", "t.jsonl", "--trace-level", "verbose"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--trace-level expects "standard" or "extended", got "verbose"');
    expect(box.server.requests).toHaveLength(0);
  });
});
