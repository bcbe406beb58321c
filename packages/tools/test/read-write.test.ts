import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ReadFileValue, readFileTool, type WriteFileValue, writeFileTool } from "../src/index.ts";
import { makeDirs, read, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");
// 1x1 transparent PNG
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);

beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, {
    "small.txt": "alpha\nbeta\ngamma\n",
    "long.txt": `${lines(3000)}\n`,
    "bin.dat": Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x00, 0xff]),
    "pic.png": PNG,
    "crlf.txt": "one\r\ntwo\r\n",
    "empty.txt": "",
  });
});
afterEach(() => dirs.cleanup());

describe("read_file", () => {
  it("returns numbered lines and a structured value", async () => {
    const out = await run(readFileTool(dirs.root), { path: "small.txt" });
    expect(text(out)).toBe("     1\talpha\n     2\tbeta\n     3\tgamma");
    expect(out.value).toEqual({
      path: "small.txt",
      content: "alpha\nbeta\ngamma",
      totalLines: 3,
      offset: 1,
      lines: 3,
      truncated: false,
    } satisfies ReadFileValue);
  });

  it("pages with offset and limit and says where to continue", async () => {
    const out = await run(readFileTool(dirs.root), { path: "long.txt", offset: 10, limit: 5 });
    expect(text(out)).toContain("    10\tline 10\n    11\tline 11");
    expect(text(out)).toContain("    14\tline 14");
    expect(text(out)).not.toContain("line 15");
    expect(text(out)).toContain("Call read_file with offset=15 to continue");
    expect(out.value).toMatchObject({
      offset: 10,
      lines: 5,
      totalLines: 3000,
      truncated: true,
      nextOffset: 15,
    });
  });

  it("caps the default read at the line limit", async () => {
    const out = await run(readFileTool(dirs.root), { path: "long.txt" });
    const value = out.value as ReadFileValue;
    expect(value.lines).toBe(2000);
    expect(value.nextOffset).toBe(2001);
    expect(text(out)).toContain("Showing lines 1-2000 of 3000");
  });

  it("caps the output bytes and long lines", async () => {
    const tool = readFileTool(dirs.root, { maxOutputBytes: 200, maxLineLength: 10 });
    const out = await run(tool, { path: "long.txt" });
    const value = out.value as ReadFileValue;
    expect(value.lines).toBeLessThan(20);
    expect(Buffer.byteLength(text(out).split("\n\n")[0] ?? "")).toBeLessThanOrEqual(200);
    expect(text(out)).toContain("200-byte output cap");
    await setup(dirs, { "wide.txt": `${"x".repeat(50)}\n` });
    const wide = await run(tool, { path: "wide.txt" });
    expect(text(wide)).toContain("line clipped: 40 more chars");
    expect((wide.value as ReadFileValue).truncated).toBe(true);
  });

  it("refuses files over the size cap with a hint how to page", async () => {
    const out = await run(readFileTool(dirs.root, { maxFileBytes: 1000 }), { path: "long.txt" });
    expect(out.isError).toBe(true);
    expect(text(out)).toContain("over the 1000-byte limit");
    expect(text(out)).toContain("sed -n");
  });

  it("detects binary files instead of dumping them", async () => {
    const out = await run(readFileTool(dirs.root), { path: "bin.dat" });
    expect(out.isError).toBe(true);
    expect(text(out)).toContain("bin.dat is a binary file (10 bytes)");
    expect(text(out)).not.toContain("ELF");
  });

  it("returns images as attachments", async () => {
    const out = await run(readFileTool(dirs.root), { path: "pic.png" });
    const attachment = out.content.find((p) => p.type === "attachment");
    expect(attachment).toMatchObject({
      type: "attachment",
      mediaType: "image/png",
      data: PNG.toString("base64"),
    });
  });

  it("handles CRLF, empty files, missing files, directories and bad offsets", async () => {
    expect((await run(readFileTool(dirs.root), { path: "crlf.txt" })).value).toMatchObject({
      content: "one\ntwo",
      totalLines: 2,
    });
    expect(text(await run(readFileTool(dirs.root), { path: "empty.txt" }))).toBe("empty.txt is empty.");
    const missing = await runFailure(readFileTool(dirs.root), { path: "nope.txt" });
    expect(missing.message).toContain("does not exist");
    const dir = await runFailure(readFileTool(dirs.root), { path: "." });
    expect(dir.message).toContain("is a directory");
    const past = await runFailure(readFileTool(dirs.root), { path: "small.txt", offset: 10 });
    expect(past.message).toContain("past the end");
    const bad = await runFailure(readFileTool(dirs.root), { path: "small.txt", offset: 0 });
    expect(bad.class).toBe("invalidRequest");
    const noPath = await runFailure(readFileTool(dirs.root), {});
    expect(noPath.message).toContain("`path` is required");
  });
});

describe("write_file", () => {
  it("creates parent directories and reports creation", async () => {
    const out = await run(writeFileTool(dirs.root), { path: "a/b/c.txt", content: "hi\n" });
    expect(read(dirs, "a/b/c.txt")).toBe("hi\n");
    expect(out.value).toEqual({ path: "a/b/c.txt", bytes: 3, created: true } satisfies WriteFileValue);
    expect(text(out)).toBe("Created a/b/c.txt (3 bytes).");
  });

  it("overwrites and carries a diff in details", async () => {
    const out = await run(writeFileTool(dirs.root), { path: "small.txt", content: "alpha\nBETA\ngamma\n" });
    expect(read(dirs, "small.txt")).toBe("alpha\nBETA\ngamma\n");
    expect(out.value).toMatchObject({ created: false });
    const diff = (out.details as { diff: string }).diff;
    expect(diff).toContain("-beta\n+BETA");
    expect(text(out)).toContain("+1 -1 lines");
  });

  it("refuses to write over a directory", async () => {
    await setup(dirs, { "d/x.txt": "x" });
    const failure = await runFailure(writeFileTool(dirs.root), { path: "d", content: "x" });
    expect(failure.message).toContain("is a directory");
    expect(existsSync(path.join(dirs.root, "d", "x.txt"))).toBe(true);
  });
});
