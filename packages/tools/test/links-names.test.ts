// Hard links and over-long names (issue 14 item 11): a hard link inside the workspace to a file
// outside it is neither read nor written (unless allowed); a 300-character name is a clear error.
import { existsSync, linkSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editTool, grepTool, readFileTool, Workspace, writeFileTool } from "../src/index.ts";
import { makeDirs, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
let secret: string;
beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, { "plain.txt": "plain\n" });
  secret = path.join(dirs.outside, "secret.txt");
  writeFileSync(secret, "TOP SECRET\n");
  linkSync(secret, path.join(dirs.root, "linked.txt"));
});
afterEach(() => dirs.cleanup());

describe("hard links", () => {
  it("read_file, write_file and edit refuse a file with more than one name, saying why", async () => {
    const read = await runFailure(readFileTool(dirs.root), { path: "linked.txt" });
    expect(read.class).toBe("permissionDenied");
    expect(read.message).toContain("`linked.txt` is a hard link (the file has 2 names)");
    expect(read.message).toContain("files.allowHardLinks");
    expect(read.message).not.toContain("TOP SECRET");

    const write = await runFailure(writeFileTool(dirs.root), { path: "linked.txt", content: "pwned\n" });
    expect(write.class).toBe("permissionDenied");
    const edit = await runFailure(editTool(dirs.root), {
      path: "linked.txt",
      edits: [{ oldText: "TOP SECRET", newText: "pwned" }],
    });
    expect(edit.class).toBe("permissionDenied");
    expect(readFileSync(secret, "utf8")).toBe("TOP SECRET\n");
  });

  it("grep skips it and says so; ordinary files are unaffected", async () => {
    const out = text(await run(grepTool(dirs.root), { pattern: "SECRET|plain" }));
    expect(out).toContain("plain.txt");
    expect(out).not.toContain("TOP SECRET");
    expect(out).toContain("Skipped 1 hard-linked file(s)");
    expect(text(await run(readFileTool(dirs.root), { path: "plain.txt" }))).toContain("plain");
  });

  it("allowHardLinks opens it", async () => {
    const ws = new Workspace({ root: dirs.root, allowHardLinks: true });
    expect(text(await run(readFileTool(ws), { path: "linked.txt" }))).toContain("TOP SECRET");
  });
});

describe("over-long names", () => {
  it("a 300-character file name is an invalid request naming the limit, not a raw ENAMETOOLONG", async () => {
    const name = `${"n".repeat(300)}.txt`;
    for (const [tool, args] of [
      [readFileTool(dirs.root), { path: name }],
      [writeFileTool(dirs.root), { path: name, content: "x" }],
      [writeFileTool(dirs.root), { path: `sub/${name}/x.txt`, content: "x" }],
    ] as const) {
      const f = await runFailure(tool, args);
      expect(f.class).toBe("invalidRequest");
      expect(f.message).toContain(
        "has a file or directory name of 304 bytes; names may have at most 255 bytes",
      );
      expect(f.message).not.toContain("ENAMETOOLONG");
    }
    expect(existsSync(path.join(dirs.root, "sub"))).toBe(false);
  });
});
