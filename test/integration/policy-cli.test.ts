// The config policy governs a real `lash -p` run (issue 17): a denied tool, a path matching
// workspace.denyPatterns (refused by the policy, skipped by glob), approval "always" with
// --approval-mode reject-all and the output limits — what the model reads next shows each.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";

vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

describe("config policy in a -p run", () => {
  it("denies, refuses denied paths (grep skips them), asks (rejected) and cuts output to the limits", async () => {
    box = await sandbox([
      {
        toolCalls: [
          { id: "c1", name: "shell", arguments: { command: "echo ran > shell-ran.txt" } },
          { id: "c2", name: "read_file", arguments: { path: ".env.local" } },
          { id: "c3", name: "grep", arguments: { pattern: "X=1" } },
          { id: "c4", name: "write_file", arguments: { path: "new.txt", content: "x" } },
          { id: "c5", name: "read_file", arguments: { path: "long.txt" } },
        ],
      },
      { text: "Done." },
    ]);
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, "config.json"),
      JSON.stringify({
        policy: {
          deny: ["group:runtime"],
          workspace: { denyPatterns: [".env*"] },
          limits: { maxOutputLines: 5 },
        },
      }),
    );
    mkdirSync(join(box.cwd, ".lash"), { recursive: true });
    writeFileSync(
      join(box.cwd, ".lash", "config.json"),
      JSON.stringify({ policy: { tools: { write_file: { approval: "always" } } } }),
    );
    writeFileSync(join(box.cwd, ".env.local"), "X=1\n");
    writeFileSync(join(box.cwd, "visible.txt"), "X=1\n");
    writeFileSync(
      join(box.cwd, "long.txt"),
      `${Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n")}\n`,
    );
    const opts = { env: box.env, cwd: box.cwd };

    const run = await lash(["-p", "go", "--approval-mode", "reject-all"], opts);
    expect(run.code, run.stderr).toBe(0);
    const results = chatMessages(box.server.requests.at(1)!.body)
      .filter((m) => m.role === "tool")
      .map((m) => textOf(m.content));
    expect(results).toHaveLength(5);
    expect(results[0]).toContain(
      'Denied: shell was not run; the policy (global: deny "group:runtime") denied it',
    );
    expect(results[1]).toContain("Denied: read_file was not run; the policy (workspace.denyPatterns");
    expect(results[1]).toContain('".env.local" matches ".env*"');
    // grep walks the workspace and skips the denied file (the tools' workspace has the patterns)
    expect(results[2]).toContain("visible.txt:1:X=1");
    expect(results[2]).not.toContain(".env.local");
    expect(results[3]).toContain("Denied: write_file was not run; the approver (reject-all) denied it");
    expect(results[4]).toContain("line 1");
    expect(results[4]).not.toContain("line 40");
  });
});
