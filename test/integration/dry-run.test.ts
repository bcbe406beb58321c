// Acceptance 4 of issue 17: dry-run. A scripted session (the real `lash -p` process, the real
// runtime and tools, the SQLite store, the mock wire server as the model) calls write_file,
// edit, apply_patch, shell and a write-classified MCP tool of a real stdio MCP server. With
// --dry-run (or config policy.writes "stub") the workspace stays byte-identical — every file
// hashed before and after — and the tool results the model saw, and the export, say what
// would have changed. The same session without dry-run does change the files (the control).
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { MockReply } from "@lash/providers/testing";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";

const WRITER = join(
  import.meta.dirname,
  "..",
  "..",
  "packages",
  "plugin-mcp",
  "test",
  "fixtures",
  "writer-server.ts",
);

const PATCH = [
  "--- a/notes.md",
  "+++ b/notes.md",
  "@@ -1,2 +1,2 @@",
  " # notes",
  "-old line",
  "+new line",
  "--- /dev/null",
  "+++ b/docs/b.md",
  "@@ -0,0 +1,2 @@",
  "+# b",
  "+body",
  "",
].join("\n");

const replies = (): MockReply[] => [
  {
    toolCalls: [
      { name: "write_file", arguments: { path: "src/new.txt", content: "fresh\n" } },
      { name: "edit", arguments: { path: "src/a.txt", edits: [{ oldText: "two", newText: "TWO" }] } },
      { name: "apply_patch", arguments: { patch: PATCH } },
      { name: "shell", arguments: { command: "touch shell-was-here" } },
      { name: "mcp__w__write_note", arguments: { name: "note.txt", text: "from mcp" } },
    ],
  },
  { text: "done" },
];

/** sha256 of every file under `root` (and the set of directories), by relative path. */
function hashTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      const rel = relative(root, full);
      if (entry.isDirectory()) {
        out[`${rel}/`] = "dir";
        walk(full);
      } else out[rel] = createHash("sha256").update(readFileSync(full)).digest("hex");
    }
  };
  walk(root);
  return out;
}

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

async function setUp(policy?: object): Promise<Sandbox> {
  const b = await sandbox(replies());
  mkdirSync(join(b.cwd, "src"), { recursive: true });
  writeFileSync(join(b.cwd, "src", "a.txt"), "one\ntwo\nthree\n");
  writeFileSync(join(b.cwd, "notes.md"), "# notes\nold line\n");
  mkdirSync(b.home, { recursive: true });
  writeFileSync(
    join(b.home, "config.json"),
    JSON.stringify({
      mcpServers: { w: { command: process.execPath, args: [WRITER], env: { WRITER_DIR: b.cwd } } },
      ...(policy ? { policy } : {}),
    }),
  );
  return b;
}

/** The tool results of the model's second request, by tool call order. */
function toolResults(b: Sandbox): string[] {
  const second = b.server.requests[1]?.body;
  return chatMessages(second)
    .filter((m) => m.role === "tool")
    .map((m) => textOf(m.content));
}

describe("dry-run", () => {
  it("--dry-run: the workspace stays byte-identical; the model and the export read what would have changed", async () => {
    box = await setUp();
    const before = hashTree(box.cwd);
    const opts = { env: box.env, cwd: box.cwd };
    const r = await lash(["-p", "--dry-run", "--output-format", "json", "change things"], opts);
    expect(r.code, r.stderr).toBe(0);
    expect(hashTree(box.cwd)).toEqual(before);

    const results = toolResults(box);
    expect(results).toHaveLength(5);
    for (const text of results) expect(text).toMatch(/^Dry run: not run\. It would have: /);
    const [write, edit, patch, shell, mcp] = results as [string, string, string, string, string];
    expect(write).toContain("It would have: create src/new.txt (+1 -0)");
    expect(write).toContain("+fresh");
    expect(edit).toContain("It would have: edit src/a.txt: 1 replacement (+1 -1)");
    expect(edit).toContain("-two\n+TWO");
    expect(patch).toContain("It would have: patch 2 files (notes.md, docs/b.md), 2 hunks (+3 -1)");
    expect(patch).toContain("  create docs/b.md (+2 -0)");
    expect(patch).toContain("-old line\n+new line");
    expect(shell).toContain("It would have: run `touch shell-was-here`");
    expect(shell).toContain(`cwd: ${box.cwd}`);
    expect(mcp).toBe(
      'Dry run: not run. It would have: call mcp__w__write_note with {"name":"note.txt","text":"from mcp"}',
    );

    const sessionId = (JSON.parse(r.stdout) as { sessionId: string }).sessionId;
    const md = await lash(["export", sessionId, "--format", "md"], opts);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain("Dry run: not run. It would have: edit src/a.txt");
    expect(md.stdout).toContain("call mcp__w__write_note");
    // the export itself writes to stdout only: still nothing changed
    expect(hashTree(box.cwd)).toEqual(before);
  });

  it('config policy.writes "stub" does the same', async () => {
    box = await setUp({ writes: "stub" });
    const before = hashTree(box.cwd);
    const r = await lash(["-p", "change things"], { env: box.env, cwd: box.cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(hashTree(box.cwd)).toEqual(before);
    const results = toolResults(box);
    expect(results).toHaveLength(5);
    for (const text of results) expect(text).toMatch(/^Dry run: not run\. It would have: /);
  });

  it("a dry run is never held up by approvals: stubbed calls are settled before the policy asks", async () => {
    // approval "always" with -p's default --approval-mode fail would stop the turn at the first call
    box = await setUp({ approval: "always" });
    const before = hashTree(box.cwd);
    const r = await lash(["-p", "--dry-run", "change things"], { env: box.env, cwd: box.cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("[approval]");
    expect(hashTree(box.cwd)).toEqual(before);
    expect(toolResults(box)).toHaveLength(5);
  });

  it("without dry-run the same session changes every one of those files (the control)", async () => {
    box = await setUp();
    const before = hashTree(box.cwd);
    const r = await lash(["-p", "change things"], { env: box.env, cwd: box.cwd });
    expect(r.code, r.stderr).toBe(0);
    const after = hashTree(box.cwd);
    expect(after).not.toEqual(before);
    for (const changed of ["src/new.txt", "src/a.txt", "notes.md", "docs/b.md", "shell-was-here", "note.txt"])
      expect(after[changed], changed).not.toBe(before[changed]);
    for (const text of toolResults(box)) expect(text).not.toContain("Dry run");
  });
});
