// Diffs for review: line numbers, line backgrounds and word-level highlights.
import { describe, expect, it } from "vitest";
import { changedSpan, renderDiff } from "../../src/tui/diff.ts";
import { lineText } from "../../src/tui/markdown.ts";
import { palette, setTheme } from "../../src/tui/theme.ts";

const DIFF = [
  "--- a/src/math.ts",
  "+++ b/src/math.ts",
  "@@ -9,4 +9,4 @@",
  " export function area(r: number) {",
  "-  return 3.14 * r * r;",
  "+  return Math.PI * r * r;",
  " }",
  "-// old",
].join("\n");

describe("renderDiff", () => {
  it("numbers each line (new numbers for added and context lines, old for removed)", () => {
    const out = renderDiff(DIFF).map(lineText);
    expect(out).toEqual([
      "--- a/src/math.ts",
      "+++ b/src/math.ts",
      "@@ -9,4 +9,4 @@",
      " 9   export function area(r: number) {",
      "10 -   return 3.14 * r * r;",
      "10 +   return Math.PI * r * r;",
      "11   }",
      "12 - // old",
    ]);
  });

  it("red/green line backgrounds, and a stronger background on just the words that changed", () => {
    setTheme("dark");
    const p = palette();
    const lines = renderDiff(DIFF);
    const del = lines[4]!;
    const add = lines[5]!;
    expect(del.slice(1).every((s) => s.bg !== undefined && s.color === p.removed)).toBe(true);
    expect(add.slice(1).every((s) => s.bg !== undefined && s.color === p.added)).toBe(true);
    expect(del.filter((s) => s.bg === p.removedWordBg).map((s) => s.text)).toEqual(["3.14"]);
    expect(add.filter((s) => s.bg === p.addedWordBg).map((s) => s.text)).toEqual(["Math.PI"]);
    // a removed line with no added partner is coloured as a whole, no word highlight
    expect(lines[7]!.some((s) => s.bg === p.removedWordBg)).toBe(false);
    expect(changedSpan("a b c", "a x c")).toEqual({ a: [2, 3], b: [2, 3] });
  });

  it("the light and high-contrast themes change the colours", () => {
    setTheme("light");
    expect(renderDiff(DIFF)[5]![1]!.bg).toBe("#dafbe1");
    setTheme("high-contrast");
    expect(palette().noDim).toBe(true);
    expect(renderDiff(DIFF)[5]![1]!.color).toBe("greenBright");
    setTheme("dark");
  });
});
