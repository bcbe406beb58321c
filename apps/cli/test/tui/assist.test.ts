// `@path` completion (real files, the tools' ignore-aware walker), fuzzy ranking,
// the `/` menu, Ctrl+R search, and `@path` mentions → message parts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyEntry,
  commandMenu,
  FileIndex,
  fileMenu,
  fuzzyScore,
  pastedImagePath,
  resolveMentions,
  searchHistory,
} from "../../src/tui/assist.ts";

// a 1×1 PNG
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

let root = "";
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "lash-assist-"));
  const files: Record<string, string | Buffer> = {
    ".gitignore": "build/\n*.log\n",
    "src/widget.ts": "export const W = 1;\n",
    "src/deep/widget-helper.ts": "export {};\n",
    "src/other.ts": "x\n",
    "build/widget.js": "ignored\n",
    "debug.log": "ignored\n",
    "shot.png": PNG,
  };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("@path completion", () => {
  it("lists the workspace's files through the ignore-aware walker and ranks fuzzy matches", async () => {
    const index = new FileIndex(root);
    const files = await index.load();
    expect(files).toContain("src/widget.ts");
    expect(files).not.toContain("build/widget.js");
    expect(files).not.toContain("debug.log");
    const menu = fileMenu("look at @widg", "look at @widg".length, index)!;
    expect(menu.kind).toBe("file");
    expect(menu.entries.map((e) => e.label)).toEqual(["src/widget.ts", "src/deep/widget-helper.ts"]);
    const applied = applyEntry("look at @widg now", { ...menu, end: 13 }, menu.entries[0]!);
    expect(applied.text).toBe("look at @src/widget.ts now");
    // a subsequence matches; a name match beats a directory match
    expect(fuzzyScore("swt", "src/widget.ts")).toBeDefined();
    expect(fuzzyScore("zzz", "src/widget.ts")).toBeUndefined();
    expect(fuzzyScore("other", "src/other.ts")!).toBeLessThan(fuzzyScore("other", "other/src/x.ts")!);
    // an email address is no mention
    expect(fileMenu("mail a@widget", 13, index)).toBeUndefined();
    // narrowing: a longer query searches what the shorter one matched, with the same result as afresh
    expect(index.rank("w")).toContain("src/widget.ts");
    const fresh = new FileIndex(root);
    await fresh.load();
    expect(index.rank("wdgt")).toEqual(fresh.rank("wdgt"));
    expect(index.rank("wdgt")).toEqual(["src/widget.ts", "src/deep/widget-helper.ts"]);
  });

  it("the / menu filters commands by prefix; Ctrl+R finds older entries", () => {
    expect(commandMenu("/")!.entries.length).toBeGreaterThan(8);
    expect(commandMenu("/mo")!.entries[0]!.label).toBe("/model [provider/model]");
    expect(commandMenu("/model x")).toBeUndefined();
    const h = ["deploy staging", "build", "deploy prod"];
    expect(searchHistory(h, "deploy")?.text).toBe("deploy prod");
    expect(searchHistory(h, "deploy", 1)?.text).toBe("deploy staging");
    expect(searchHistory(h, "deploy", 2)).toBeUndefined();
  });
});

describe("@path mentions → the user message", () => {
  it("a text file follows the prompt in a <file> block; an image is an image part for a model that takes images", async () => {
    const r = await resolveMentions("check @src/widget.ts and @shot.png, not @nothing", root, {
      images: true,
      model: "m",
    });
    expect(r.attached).toEqual(["src/widget.ts", "shot.png (image)"]);
    expect(r.parts[0]).toEqual({ type: "text", text: "check @src/widget.ts and @shot.png, not @nothing" });
    expect(r.parts[1]).toEqual({
      type: "text",
      text: '\n\n<file path="src/widget.ts">\nexport const W = 1;\n</file>',
    });
    expect(r.parts[2]).toMatchObject({ type: "attachment", mediaType: "image/png", name: "shot.png" });
    expect(Buffer.from((r.parts[2] as { data: string }).data, "base64").equals(PNG)).toBe(true);
    expect(r.problems).toEqual([]);
  });

  it("a pasted (dropped) image path becomes a mention; other pastes do not", () => {
    const png = join(root, "shot.png");
    expect(pastedImagePath(png)).toBe(png);
    expect(pastedImagePath(`'${png}'`)).toBe(png);
    expect(pastedImagePath(`file://${png}`)).toBe(png);
    expect(pastedImagePath(join(root, "src/widget.ts"))).toBeUndefined();
    expect(pastedImagePath(join(root, "missing.png"))).toBeUndefined();
    expect(pastedImagePath(`${png}\n${png}`)).toBeUndefined();
  });

  it("an image for a model without image input is not attached, and says why", async () => {
    const r = await resolveMentions("see @shot.png", root, { images: false, model: "test/model" });
    expect(r.parts).toHaveLength(1);
    expect(r.problems[0]).toMatch(/shot\.png is an image, and test\/model does not accept images/);
  });
});
