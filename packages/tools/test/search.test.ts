import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type GlobValue, type GrepValue, globTool, grepTool } from "../src/index.ts";
import { makeDirs, run, runFailure, setup, type TempDirs, text } from "./helpers.ts";

let dirs: TempDirs;
beforeEach(async () => {
  dirs = makeDirs();
  await setup(dirs, {
    ".gitignore": "dist/\n*.log\n",
    "src/index.ts": "export const answer = 42;\n// TODO: more\n",
    "src/util.ts": "export function todo() {}\n",
    "src/deep/x.ts": "const X = 'todo';\n",
    "src/deep/.gitignore": "generated.ts\n",
    "src/deep/generated.ts": "// TODO generated\n",
    "dist/index.js": "// TODO built\n",
    "debug.log": "TODO in a log\n",
    "node_modules/pkg/index.ts": "// TODO dependency\n",
    ".git/HEAD": "TODO ref\n",
    "README.md": "# TODO readme\n",
    "image.bin": Buffer.from([0, 1, 2, 84, 79, 68, 79]),
  });
});
afterEach(() => dirs.cleanup());

describe("glob", () => {
  it("matches recursively and respects .gitignore (nested too), .git and node_modules", async () => {
    const out = await run(globTool(dirs.root), { pattern: "**/*.ts" });
    expect((out.value as GlobValue).files).toEqual(["src/deep/x.ts", "src/index.ts", "src/util.ts"]);
    expect(text(out)).toBe("src/deep/x.ts\nsrc/index.ts\nsrc/util.ts");
    const names = await run(globTool(dirs.root), { pattern: "*.{js,log,md}" });
    expect((names.value as GlobValue).files).toEqual(["README.md"]);
  });

  it("searches under a path, relative to it", async () => {
    const out = await run(globTool(dirs.root), { pattern: "deep/*.ts", path: "src" });
    expect((out.value as GlobValue).files).toEqual(["src/deep/x.ts"]);
  });

  it("caps results with a note", async () => {
    const out = await run(globTool(dirs.root, { maxResults: 2 }), { pattern: "**/*" });
    const value = out.value as GlobValue;
    expect(value.files).toHaveLength(2);
    expect(value.total).toBe(5); // dotfiles (.gitignore) are not matched by `*`
    expect(value.truncated).toBe(true);
    expect(text(out)).toContain("[3 more results not shown; narrow the pattern or path.]");
  });

  it("says when nothing matches and refuses escaping patterns", async () => {
    expect(text(await run(globTool(dirs.root), { pattern: "*.py" }))).toContain("No files match");
    expect((await runFailure(globTool(dirs.root), { pattern: "../**" })).class).toBe("invalidRequest");
    expect((await runFailure(globTool(dirs.root), { pattern: "*", path: "../" })).class).toBe(
      "permissionDenied",
    );
  });
});

describe("grep", () => {
  it("finds regex matches with line numbers, respecting .gitignore and skipping binaries", async () => {
    const out = await run(grepTool(dirs.root), { pattern: "TODO" });
    const value = out.value as GrepValue;
    expect(value.matches).toEqual([
      { path: "README.md", line: 1, text: "# TODO readme" },
      { path: "src/index.ts", line: 2, text: "// TODO: more" },
    ]);
    expect(text(out)).toBe("README.md:1:# TODO readme\nsrc/index.ts:2:// TODO: more");
  });

  it("supports ignoreCase, a glob filter and a single-file path", async () => {
    const ci = await run(grepTool(dirs.root), { pattern: "todo", ignoreCase: true, glob: "*.ts" });
    expect((ci.value as GrepValue).matches.map((m) => `${m.path}:${m.line}`)).toEqual([
      "src/deep/x.ts:1",
      "src/index.ts:2",
      "src/util.ts:1",
    ]);
    const file = await run(grepTool(dirs.root), { pattern: "answer\\s*=", path: "src/index.ts" });
    expect((file.value as GrepValue).matches).toEqual([
      { path: "src/index.ts", line: 1, text: "export const answer = 42;" },
    ]);
  });

  it("caps results with a note", async () => {
    await setup(dirs, { "many.txt": Array.from({ length: 50 }, (_, i) => `hit ${i}`).join("\n") });
    const out = await run(grepTool(dirs.root, { maxResults: 10 }), { pattern: "^hit" });
    const value = out.value as GrepValue;
    expect(value.matches).toHaveLength(10);
    expect(value.total).toBe(50);
    expect(value.truncated).toBe(true);
    expect(text(out)).toContain("[40 more results not shown; narrow the pattern or path.]");
  });

  it("explains an invalid regular expression", async () => {
    const failure = await runFailure(grepTool(dirs.root), { pattern: "foo(" });
    expect(failure.class).toBe("invalidRequest");
    expect(failure.message).toContain("not a valid regular expression");
  });
});
