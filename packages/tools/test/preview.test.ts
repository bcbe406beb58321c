// Previews: what write_file, edit, apply_patch and shell would do, computed by the same code
// as the real call (the diff of a preview equals the diff the call then reports) and changing
// nothing on disk.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type ToolDefinition, ToolFailure, type ToolPreview } from "@lash/core";
import { Cause, Effect, Exit, Option } from "effect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyPatchTool, editTool, shellTool, writeFileTool } from "../src/index.ts";
import { makeDirs, run, runFailure, setup, type TempDirs } from "./helpers.ts";

let dirs: TempDirs;
beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, { "src/a.txt": "one\ntwo\nthree\n", "notes.md": "# notes\n" });
});
afterEach(() => dirs.cleanup());

const pctx = { sessionId: "s1", callId: "c1", signal: new AbortController().signal };

function preview<A>(tool: ToolDefinition<A>, args: unknown): Promise<ToolPreview> {
  if (!tool.preview) throw new Error(`${tool.name} has no preview`);
  return Effect.runPromise(tool.preview(args as A, pctx));
}

async function previewFailure<A>(tool: ToolDefinition<A>, args: unknown): Promise<ToolFailure> {
  if (!tool.preview) throw new Error(`${tool.name} has no preview`);
  const exit = await Effect.runPromiseExit(tool.preview(args as A, pctx));
  if (Exit.isSuccess(exit)) throw new Error(`expected the preview to fail, got ${exit.value.summary}`);
  const f = Cause.failureOption(exit.cause);
  if (Option.isNone(f) || !(f.value instanceof ToolFailure)) throw new Error(Cause.pretty(exit.cause));
  return f.value;
}

/** Every file under the root with its content and mtime. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[path.relative(root, full)] = `${statSync(full).mtimeMs}:${readFileSync(full, "utf8")}`;
    }
  };
  walk(root);
  return out;
}

describe("write_file preview", () => {
  it("shows a create with its line count and writes nothing", async () => {
    const before = snapshot(dirs.root);
    const p = await preview(writeFileTool(dirs.root), { path: "src/new.ts", content: "a\nb\n" });
    expect(p.summary).toBe("create src/new.ts (+2 -0), 4 bytes");
    expect(p.files).toEqual([{ path: "src/new.ts", action: "create", added: 2, removed: 0 }]);
    expect(p.diff).toContain("--- /dev/null");
    expect(p.diff).toContain("+++ b/src/new.ts");
    expect(snapshot(dirs.root)).toEqual(before);
  });

  it("shows a modify with the diff the real write then reports", async () => {
    const tool = writeFileTool(dirs.root);
    const args = { path: "src/a.txt", content: "one\nTWO\nthree\n" };
    const p = await preview(tool, args);
    expect(p.summary).toBe("overwrite src/a.txt (+1 -1), 14 bytes");
    expect(p.files).toEqual([{ path: "src/a.txt", action: "modify", added: 1, removed: 1 }]);
    expect(p.diff).toContain("-two\n+TWO");
    const out = await run(tool, args);
    expect((out.details as { diff: string }).diff).toBe(p.diff);
  });

  it("fails as the tool would for a protected path", async () => {
    const tool = writeFileTool(dirs.root);
    const args = { path: ".git/config", content: "x" };
    const f = await previewFailure(tool, args);
    expect(f.message).toBe((await runFailure(tool, args)).message);
  });
});

describe("edit preview", () => {
  it("shows the diff of the edit as it would apply and leaves the file alone", async () => {
    const tool = editTool(dirs.root);
    const args = { path: "src/a.txt", edits: [{ oldText: "two", newText: "2\n2b" }] };
    const before = snapshot(dirs.root);
    const p = await preview(tool, args);
    expect(p.summary).toBe("edit src/a.txt: 1 replacement (+2 -1)");
    expect(p.files).toEqual([{ path: "src/a.txt", action: "modify", added: 2, removed: 1 }]);
    expect(snapshot(dirs.root)).toEqual(before);
    const out = await run(tool, args);
    expect((out.details as { diff: string }).diff).toBe(p.diff);
  });

  it("gives the same error the tool would for a missing oldText", async () => {
    const tool = editTool(dirs.root);
    const args = { path: "src/a.txt", edits: [{ oldText: "four", newText: "4" }] };
    const f = await previewFailure(tool, args);
    expect(f.class).toBe("invalidRequest");
    expect(f.message).toContain("was not found in src/a.txt");
    expect(f.message).toBe((await runFailure(tool, args)).message);
  });
});

describe("apply_patch preview", () => {
  const patch = [
    "--- a/src/a.txt",
    "+++ b/src/a.txt",
    "@@ -1,3 +1,3 @@",
    " one",
    "-two",
    "+deux",
    " three",
    "--- /dev/null",
    "+++ b/src/b.txt",
    "@@ -0,0 +1,2 @@",
    "+x",
    "+y",
    "--- a/notes.md",
    "+++ /dev/null",
    "@@ -1 +0,0 @@",
    "-# notes",
    "",
  ].join("\n");

  it("lists files, hunks and line counts, and the diff equals the applied one", async () => {
    const tool = applyPatchTool(dirs.root);
    const before = snapshot(dirs.root);
    const p = await preview(tool, { patch });
    expect(p.summary).toBe("patch 3 files (src/a.txt, src/b.txt, notes.md), 3 hunks (+3 -2)");
    expect(p.files).toEqual([
      { path: "src/a.txt", action: "modify", added: 1, removed: 1 },
      { path: "src/b.txt", action: "create", added: 2, removed: 0 },
      { path: "notes.md", action: "delete", added: 0, removed: 1 },
    ]);
    expect(snapshot(dirs.root)).toEqual(before);
    const out = await run(tool, { patch });
    expect((out.value as { diff: string }).diff).toBe(p.diff);
  });

  it("fails as the tool would when a hunk does not apply", async () => {
    const tool = applyPatchTool(dirs.root);
    const bad = { patch: "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,1 +1,1 @@\n-nope\n+yes\n" };
    const f = await previewFailure(tool, bad);
    expect(f.message).toContain("does not apply");
    expect(f.message).toBe((await runFailure(tool, bad)).message);
  });
});

describe("shell preview", () => {
  it("shows the command, the resolved cwd and no sandbox when none is configured", async () => {
    const p = await preview(shellTool(dirs.root), { command: "touch made-by-shell", cwd: "src" });
    expect(p.command).toEqual({
      command: "touch made-by-shell",
      cwd: path.join(dirs.root, "src"),
      sandbox: "no sandbox",
    });
    expect(p.summary).toBe(`run \`touch made-by-shell\` in ${path.join(dirs.root, "src")} (no sandbox)`);
    expect(snapshot(dirs.root)["src/made-by-shell"]).toBeUndefined();
  });

  it("shows the sandbox's describe()", async () => {
    const sandbox = {
      describe: () => "bwrap: workspace writable, network off",
      wrap: (argv: readonly string[], c: { readonly env: NodeJS.ProcessEnv }) => ({ argv, env: c.env }),
    };
    const tool = shellTool(dirs.root, { sandbox });
    const p = await preview(tool, { command: "ls" });
    expect(p.command?.sandbox).toBe("bwrap: workspace writable, network off");
  });

  it("rejects a missing cwd as the tool would", async () => {
    const f = await previewFailure(shellTool(dirs.root), { command: "ls", cwd: "nope" });
    expect(f.message).toBe("shell: the working directory `nope` does not exist.");
  });
});
