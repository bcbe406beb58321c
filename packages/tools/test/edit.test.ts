import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EditValue, editTool } from "../src/index.ts";
import { makeDirs, read, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
const SOURCE = [
  "function greet(name) {",
  '  return "hello " + name;',
  "}",
  "",
  "function add(a, b) {",
  "  return a + b;",
  "}",
  "",
  "function sub(a, b) {",
  "  return a - b;",
  "}",
  "",
].join("\n");

beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, { "src/math.js": SOURCE, "crlf.txt": "one\r\ntwo\r\nthree\r\n" });
});
afterEach(() => dirs.cleanup());

describe("edit", () => {
  it("applies several exact replacements and returns a unified diff", async () => {
    const out = await run(editTool(dirs.root), {
      path: "src/math.js",
      edits: [
        {
          oldText: "function add(a, b) {\n  return a + b;",
          newText: "function add(a, b) {\n  return b + a;",
        },
        { oldText: "hello", newText: "hi" },
      ],
    });
    const after = read(dirs, "src/math.js");
    expect(after).toContain("return b + a;");
    expect(after).toContain('"hi " + name');
    const value = out.value as EditValue;
    expect(value).toMatchObject({ path: "src/math.js", replacements: 2, added: 2, removed: 2 });
    expect(value.diff).toContain("--- a/src/math.js\n+++ b/src/math.js");
    expect(value.diff).toContain("-  return a + b;\n+  return b + a;");
    expect((out.details as { diff: string }).diff).toBe(value.diff);
    expect(text(out)).toContain("Edited src/math.js: 2 replacements");
  });

  it("refuses an ambiguous oldText, showing where it matches, and changes nothing", async () => {
    const failure = await runFailure(editTool(dirs.root), {
      path: "src/math.js",
      edits: [{ oldText: "(a, b) {", newText: "(x, y) {" }],
    });
    expect(failure.class).toBe("invalidRequest");
    expect(failure.message).toContain("matches 2 places");
    expect(failure.message).toContain("lines 5, 9");
    expect(failure.message).toContain("     5\tfunction add(a, b) {");
    expect(failure.message).toContain("     9\tfunction sub(a, b) {");
    expect(read(dirs, "src/math.js")).toBe(SOURCE);
  });

  it("reports a missing oldText with the most similar lines and their numbers", async () => {
    const failure = await runFailure(editTool(dirs.root), {
      path: "src/math.js",
      edits: [{ oldText: "function multiply(a, b) {\n  return a * b;", newText: "" }],
    });
    expect(failure.message).toContain("was not found in src/math.js");
    expect(failure.message).toContain("Lines most similar");
    expect(failure.message).toMatch(/ {5}[59]\tfunction (add|sub)\(a, b\) \{/);
    expect(read(dirs, "src/math.js")).toBe(SOURCE);
  });

  it("hints at a whitespace-insensitive match", async () => {
    const failure = await runFailure(editTool(dirs.root), {
      path: "src/math.js",
      edits: [{ oldText: "function add(a, b) {\n    return a + b;", newText: "x" }],
    });
    expect(failure.message).toContain("matches lines 5-6 if whitespace is ignored");
    expect(failure.message).toContain("     6\t  return a + b;");
  });

  it("points out when only the first line matches", async () => {
    const failure = await runFailure(editTool(dirs.root), {
      path: "src/math.js",
      edits: [{ oldText: "function add(a, b) {\n  return a + c;", newText: "x" }],
    });
    expect(failure.message).toContain("first line matches line 5");
  });

  it("applies all edits or none", async () => {
    const failure = await runFailure(editTool(dirs.root), {
      path: "src/math.js",
      edits: [
        { oldText: "hello", newText: "hi" },
        { oldText: "does not exist", newText: "x" },
      ],
    });
    expect(failure.message).toContain("edits[1].oldText was not found");
    expect(read(dirs, "src/math.js")).toBe(SOURCE);
  });

  it("refuses overlapping edits", async () => {
    const failure = await runFailure(editTool(dirs.root), {
      path: "src/math.js",
      edits: [
        { oldText: "function add(a, b) {\n  return a + b;", newText: "x" },
        { oldText: "return a + b;\n}", newText: "y" },
      ],
    });
    expect(failure.message).toContain("overlap");
    expect(read(dirs, "src/math.js")).toBe(SOURCE);
  });

  it("keeps CRLF line endings when oldText uses LF", async () => {
    await run(editTool(dirs.root), {
      path: "crlf.txt",
      edits: [{ oldText: "one\ntwo", newText: "uno\ndos" }],
    });
    expect(read(dirs, "crlf.txt")).toBe("uno\r\ndos\r\nthree\r\n");
  });

  it("refuses missing files, empty oldText and no-op edits", async () => {
    expect(
      (await runFailure(editTool(dirs.root), { path: "nope.js", edits: [{ oldText: "a", newText: "b" }] }))
        .message,
    ).toContain("does not exist");
    expect(
      (await runFailure(editTool(dirs.root), { path: "src/math.js", edits: [{ oldText: "", newText: "b" }] }))
        .message,
    ).toContain("oldText is empty");
    expect((await runFailure(editTool(dirs.root), { path: "src/math.js", edits: [] })).message).toContain(
      "non-empty array",
    );
    expect(
      (
        await runFailure(editTool(dirs.root), {
          path: "src/math.js",
          edits: [{ oldText: "hello", newText: "hello" }],
        })
      ).message,
    ).toContain("change nothing");
  });
});
