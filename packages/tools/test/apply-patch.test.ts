import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ApplyPatchValue, applyPatchTool } from "../src/index.ts";
import { makeDirs, read, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
const A = "one\ntwo\nthree\nfour\nfive\n";
const B = "alpha\nbeta\ngamma\n";

beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, { "a.txt": A, "dir/b.txt": B, "old.txt": "gone\n", "noeol.txt": "x\ny" });
});
afterEach(() => dirs.cleanup());

describe("apply_patch", () => {
  it("modifies, creates and deletes several files", async () => {
    const patch = [
      "diff --git a/a.txt b/a.txt",
      "index 1111111..2222222 100644",
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,3 +1,3 @@",
      " one",
      "-two",
      "+TWO",
      " three",
      "@@ -4,2 +4,3 @@",
      " four",
      " five",
      "+six",
      "--- /dev/null",
      "+++ b/new/c.txt",
      "@@ -0,0 +1,2 @@",
      "+hello",
      "+world",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-gone",
      "",
    ].join("\n");
    const out = await run(applyPatchTool(dirs.root), { patch });
    expect(read(dirs, "a.txt")).toBe("one\nTWO\nthree\nfour\nfive\nsix\n");
    expect(read(dirs, "new/c.txt")).toBe("hello\nworld\n");
    expect(existsSync(path.join(dirs.root, "old.txt"))).toBe(false);
    const value = out.value as ApplyPatchValue;
    expect(value.files).toEqual([
      { path: "a.txt", action: "modify", added: 2, removed: 1 },
      { path: "new/c.txt", action: "create", added: 2, removed: 0 },
      { path: "old.txt", action: "delete", added: 0, removed: 1 },
    ]);
    const details = out.details as { files: { path: string; diff: string }[] };
    expect(details.files.map((f) => f.path)).toEqual(["a.txt", "new/c.txt", "old.txt"]);
    expect(details.files[0]?.diff).toContain("-two\n+TWO");
    expect(text(out)).toContain("Applied patch to 3 files");
  });

  it("is atomic: a failing hunk in the second file changes no file", async () => {
    const patch = [
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,2 +1,2 @@",
      "-one",
      "+ONE",
      " two",
      "--- /dev/null",
      "+++ b/created.txt",
      "@@ -0,0 +1 @@",
      "+new",
      "--- a/dir/b.txt",
      "+++ b/dir/b.txt",
      "@@ -1,2 +1,2 @@",
      " alpha",
      "-BETA-NOT-THERE",
      "+beta2",
      "",
    ].join("\n");
    const failure = await runFailure(applyPatchTool(dirs.root), { patch });
    expect(failure.class).toBe("invalidRequest");
    expect(failure.message).toContain("hunk 1 of 1 hunk for `dir/b.txt`");
    expect(failure.message).toContain("BETA-NOT-THERE");
    expect(failure.message).toContain("No file was changed");
    expect(read(dirs, "a.txt")).toBe(A);
    expect(read(dirs, "dir/b.txt")).toBe(B);
    expect(existsSync(path.join(dirs.root, "created.txt"))).toBe(false);
  });

  it("finds hunks a few lines away from their stated position", async () => {
    const patch = ["--- a/a.txt", "+++ b/a.txt", "@@ -10,2 +10,2 @@", " three", "-four", "+FOUR", ""].join(
      "\n",
    );
    await run(applyPatchTool(dirs.root), { patch });
    expect(read(dirs, "a.txt")).toBe("one\ntwo\nthree\nFOUR\nfive\n");
  });

  it("handles missing trailing newlines", async () => {
    const patch = [
      "--- a/noeol.txt",
      "+++ b/noeol.txt",
      "@@ -1,2 +1,2 @@",
      " x",
      "-y",
      "\\ No newline at end of file",
      "+z",
      "",
    ].join("\n");
    await run(applyPatchTool(dirs.root), { patch });
    expect(read(dirs, "noeol.txt")).toBe("x\nz\n");
  });

  it("renames files", async () => {
    const patch = [
      "diff --git a/dir/b.txt b/dir/renamed.txt",
      "similarity index 90%",
      "rename from dir/b.txt",
      "rename to dir/renamed.txt",
      "--- a/dir/b.txt",
      "+++ b/dir/renamed.txt",
      "@@ -1,3 +1,3 @@",
      " alpha",
      "-beta",
      "+BETA",
      " gamma",
      "",
    ].join("\n");
    const out = await run(applyPatchTool(dirs.root), { patch });
    expect(existsSync(path.join(dirs.root, "dir/b.txt"))).toBe(false);
    expect(read(dirs, "dir/renamed.txt")).toBe("alpha\nBETA\ngamma\n");
    expect((out.value as ApplyPatchValue).files[0]).toMatchObject({
      action: "rename",
      from: "dir/b.txt",
      path: "dir/renamed.txt",
    });
  });

  it("refuses to create an existing file, patch a missing one, or write outside the root", async () => {
    const create = await runFailure(applyPatchTool(dirs.root), {
      patch: ["--- /dev/null", "+++ b/a.txt", "@@ -0,0 +1 @@", "+x", ""].join("\n"),
    });
    expect(create.message).toContain("already exists");
    const missing = await runFailure(applyPatchTool(dirs.root), {
      patch: ["--- a/missing.txt", "+++ b/missing.txt", "@@ -1 +1 @@", "-x", "+y", ""].join("\n"),
    });
    expect(missing.message).toContain("does not exist");
    const escaped = await runFailure(applyPatchTool(dirs.root), {
      patch: [
        "--- a/a.txt",
        "+++ b/a.txt",
        "@@ -1 +1 @@",
        "-one",
        "+1",
        "--- /dev/null",
        "+++ b/../outside/x.txt",
        "@@ -0,0 +1 @@",
        "+x",
        "",
      ].join("\n"),
    });
    expect(escaped.class).toBe("permissionDenied");
    expect(read(dirs, "a.txt")).toBe(A);
    const git = await runFailure(applyPatchTool(dirs.root), {
      patch: ["--- /dev/null", "+++ b/.git/hooks/post-checkout", "@@ -0,0 +1 @@", "+evil", ""].join("\n"),
    });
    expect(git.class).toBe("permissionDenied");
  });

  it("tolerates wrong hunk counts and applies several hunks to the same file in one patch", async () => {
    const patch = [
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,7 +1,7 @@",
      " one",
      "-two",
      "+2",
      "@@ -4,1 +4,1 @@",
      "-four",
      "+4",
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -5 +5 @@",
      "-five",
      "+5",
      "",
    ].join("\n");
    const out = await run(applyPatchTool(dirs.root), { patch });
    expect(read(dirs, "a.txt")).toBe("one\n2\nthree\n4\n5\n");
    expect((out.value as ApplyPatchValue).files).toEqual([
      { path: "a.txt", action: "modify", added: 3, removed: 3 },
    ]);
  });

  it("explains malformed input", async () => {
    expect((await runFailure(applyPatchTool(dirs.root), { patch: "just some text" })).message).toContain(
      "no file changes found",
    );
    expect(
      (
        await runFailure(applyPatchTool(dirs.root), {
          patch: "*** Begin Patch\n*** Update File: a.txt\n*** End Patch",
        })
      ).message,
    ).toContain("unified diff");
    expect(
      (await runFailure(applyPatchTool(dirs.root), { patch: "@@ -1 +1 @@\n-a\n+b\n" })).message,
    ).toContain("before any");
  });
});
