import { existsSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  editTool,
  globTool,
  grepTool,
  readFileTool,
  shellTool,
  Workspace,
  writeFileTool,
} from "../src/index.ts";
import { makeDirs, read, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, { "inside.txt": "inside\n", "sub/a.txt": "a\n", ".git/config": "[core]\n" });
  const { writeFile } = await import("node:fs/promises");
  await writeFile(path.join(dirs.outside, "secret.txt"), "TOP SECRET\n");
});
afterEach(() => dirs.cleanup());

describe("workspace jail", () => {
  it("refuses `..` escapes for reads and writes", async () => {
    const failure = await runFailure(readFileTool(dirs.root), { path: "../outside/secret.txt" });
    expect(failure.class).toBe("permissionDenied");
    expect(failure.message).toContain("escapes the workspace root");
    const nested = await runFailure(readFileTool(dirs.root), { path: "sub/../../outside/secret.txt" });
    expect(nested.class).toBe("permissionDenied");
    const write = await runFailure(writeFileTool(dirs.root), { path: "../outside/new.txt", content: "x" });
    expect(write.class).toBe("permissionDenied");
    expect(existsSync(path.join(dirs.outside, "new.txt"))).toBe(false);
  });

  it("normalises `..` that stays inside the root", async () => {
    const out = await run(readFileTool(dirs.root), { path: "sub/../inside.txt" });
    expect(text(out)).toContain("inside");
  });

  it("refuses absolute paths outside the root and accepts absolute paths inside it", async () => {
    const failure = await runFailure(readFileTool(dirs.root), {
      path: path.join(dirs.outside, "secret.txt"),
    });
    expect(failure.class).toBe("permissionDenied");
    expect(failure.message).toContain("outside the workspace root");
    const etc = await runFailure(readFileTool(dirs.root), { path: "/etc/passwd" });
    expect(etc.class).toBe("permissionDenied");
    const ok = await run(readFileTool(dirs.root), { path: path.join(dirs.root, "inside.txt") });
    expect(text(ok)).toContain("inside");
  });

  it("refuses a file symlink that points outside", async () => {
    symlinkSync(path.join(dirs.outside, "secret.txt"), path.join(dirs.root, "link.txt"));
    const failure = await runFailure(readFileTool(dirs.root), { path: "link.txt" });
    expect(failure.class).toBe("permissionDenied");
    expect(failure.message).toContain("symbolic link");
    expect(failure.message).not.toContain("TOP SECRET");
    const write = await runFailure(writeFileTool(dirs.root), { path: "link.txt", content: "pwned" });
    expect(write.class).toBe("permissionDenied");
    const edit = await runFailure(editTool(dirs.root), {
      path: "link.txt",
      edits: [{ oldText: "TOP", newText: "X" }],
    });
    expect(edit.class).toBe("permissionDenied");
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(path.join(dirs.outside, "secret.txt"), "utf8")).toBe("TOP SECRET\n");
  });

  it("refuses paths through a directory symlink that points outside, including new files", async () => {
    symlinkSync(dirs.outside, path.join(dirs.root, "linkdir"));
    const failure = await runFailure(readFileTool(dirs.root), { path: "linkdir/secret.txt" });
    expect(failure.class).toBe("permissionDenied");
    const write = await runFailure(writeFileTool(dirs.root), { path: "linkdir/deep/new.txt", content: "x" });
    expect(write.class).toBe("permissionDenied");
    expect(existsSync(path.join(dirs.outside, "deep"))).toBe(false);
    const grep = await runFailure(grepTool(dirs.root), { pattern: "SECRET", path: "linkdir" });
    expect(grep.class).toBe("permissionDenied");
    const shell = await runFailure(shellTool(dirs.root), { command: "pwd", cwd: "linkdir" });
    expect(shell.class).toBe("permissionDenied");
  });

  it("refuses a dangling symlink whose target is outside (no file is created there)", async () => {
    symlinkSync(path.join(dirs.outside, "created-by-link.txt"), path.join(dirs.root, "dangling.txt"));
    const write = await runFailure(writeFileTool(dirs.root), { path: "dangling.txt", content: "x" });
    expect(write.class).toBe("permissionDenied");
    expect(existsSync(path.join(dirs.outside, "created-by-link.txt"))).toBe(false);
  });

  it("allows symlinks that stay inside the root", async () => {
    symlinkSync(path.join(dirs.root, "sub"), path.join(dirs.root, "alias"));
    const out = await run(readFileTool(dirs.root), { path: "alias/a.txt" });
    expect(text(out)).toContain("a");
  });

  it("search tools do not follow symlinks out of the root", async () => {
    symlinkSync(dirs.outside, path.join(dirs.root, "linkdir"));
    symlinkSync(path.join(dirs.outside, "secret.txt"), path.join(dirs.root, "secret-link.txt"));
    const grep = await run(grepTool(dirs.root), { pattern: "SECRET" });
    expect(grep.value).toMatchObject({ matches: [], total: 0 });
    const glob = await run(globTool(dirs.root), { pattern: "**/*.txt" });
    expect((glob.value as { files: string[] }).files).toEqual(["inside.txt", "sub/a.txt"]);
  });

  it("denies writes under .git/ by default but allows reading there", async () => {
    const write = await runFailure(writeFileTool(dirs.root), { path: ".git/config", content: "evil" });
    expect(write.class).toBe("permissionDenied");
    expect(write.message).toContain(".git/");
    expect(read(dirs, ".git/config")).toBe("[core]\n");
    const hooks = await runFailure(writeFileTool(dirs.root), { path: ".git/hooks/pre-commit", content: "x" });
    expect(hooks.class).toBe("permissionDenied");
    const out = await run(readFileTool(dirs.root), { path: ".git/config" });
    expect(text(out)).toContain("[core]");
  });

  it("applies configurable deny and allow patterns", async () => {
    await setup(dirs, { ".env": "KEY=1\n", "src/x.ts": "x\n", "docs/y.md": "y\n" });
    const ws = new Workspace({ root: dirs.root, deny: [".env"], allow: ["src/", "*.txt"] });
    const env = await runFailure(readFileTool(ws), { path: ".env" });
    expect(env.message).toContain("deny pattern");
    const docs = await runFailure(readFileTool(ws), { path: "docs/y.md" });
    expect(docs.message).toContain("allow patterns");
    expect(text(await run(readFileTool(ws), { path: "src/x.ts" }))).toContain("x");
    symlinkSync(path.join(dirs.root, ".env"), path.join(dirs.root, "src", "env-link"));
    const grep = await run(grepTool(ws), { pattern: "." });
    const paths = (grep.value as { matches: { path: string }[] }).matches.map((m) => m.path);
    expect(paths).not.toContain(".env");
    expect(paths).not.toContain("docs/y.md");
    expect(paths).toContain("src/x.ts");
    expect(paths).not.toContain("src/env-link");
    expect((await runFailure(readFileTool(ws), { path: "src/env-link" })).class).toBe("permissionDenied");
  });

  it("refuses a symlink that leads into a write-protected directory", async () => {
    symlinkSync(path.join(dirs.root, ".git"), path.join(dirs.root, "gitalias"));
    const write = await runFailure(writeFileTool(dirs.root), { path: "gitalias/config", content: "evil" });
    expect(write.class).toBe("permissionDenied");
    expect(read(dirs, ".git/config")).toBe("[core]\n");
  });
});
