// Content fitted to the terminal (issue 25 item 3): rows never wider than the width, measured as
// the terminal does (wide characters, emoji), code wrapped at column 0 without a gutter, hanging
// indents for lists and quotes, tables that wrap inside their cells or turn into a list.
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { type Line, lineText, renderMarkdown } from "../../src/tui/markdown.ts";
import { wrapLine, wrapLines } from "../../src/tui/wrap.ts";

const rows = (md: string, width: number) => wrapLines(renderMarkdown(md, width), width).map(lineText);
const widest = (r: readonly string[]) => Math.max(...r.map((l) => stringWidth(l)));

describe("wrapping to the terminal width", () => {
  it("counts wide characters and emoji as two columns and breaks between words", () => {
    const line: Line = [{ text: "漢字の幅は二列です and 😀🚀 emoji in a sentence that is long" }];
    for (const w of [10, 17, 24, 33]) {
      const r = wrapLine(line, w).map(lineText);
      expect(widest(r)).toBeLessThanOrEqual(w);
      expect(r.join(" ").replace(/\s+/g, " ")).toContain("emoji in a sentence");
      for (const row of r) expect(row).not.toMatch(/^ | $/); // no space left at a break
    }
  });

  it("cuts a word longer than a row by grapheme, never an emoji in half", () => {
    const r = wrapLine([{ text: `${"x".repeat(25)}👩‍👩‍👧🚀` }], 10).map(lineText);
    expect(r).toEqual(["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx👩‍👩‍👧🚀"]);
  });

  it("wraps code at column 0 without a gutter and keeps the indent of wrapped list items", () => {
    const call = `const value = compute(${Array.from({ length: 12 }, (_, i) => `argument${i}`).join(", ")});`;
    const md = [
      "```ts",
      call,
      "```",
      "",
      "- top item",
      "  - a nested item whose text is much longer than the terminal is wide, so it wraps",
      "> a quoted sentence that is long enough to wrap onto a second row of the terminal",
    ].join("\n");
    const r = rows(md, 40);
    expect(widest(r)).toBeLessThanOrEqual(40);
    const code = r.filter((l) => l.includes("argument"));
    expect(code.length).toBeGreaterThan(2);
    for (const l of code) expect(l).toMatch(/^[^\s│]/); // no gutter: the rows copy as the code
    expect(code.join(" ")).toBe(call);
    const nested = r.findIndex((l) => l.includes("◦ a nested item"));
    expect(r[nested]!.indexOf("a nested")).toBe(4);
    expect(r[nested + 1]!.match(/^ */)![0].length).toBe(4); // hanging indent under the text
    // every row of the wrapped quote has its bar
    const quote = r.slice(r.findIndex((l) => l.includes("a quoted sentence")));
    expect(quote.length).toBe(3);
    for (const l of quote) expect(l.startsWith("▌ ")).toBe(true);
  });

  it("wraps a wide table inside its cells, every row within the width, separators aligned", () => {
    const md = [
      "| name | description | status |",
      "|---|---|---|",
      "| alpha | a rather long description of the first thing that will not fit on one row | ok |",
      "| beta | short | failing since the refactor of the parser last week |",
    ].join("\n");
    for (const w of [50, 80]) {
      const r = rows(md, w);
      expect(widest(r)).toBeLessThanOrEqual(w);
      const bars = r
        .filter((l) => l.includes("│"))
        .map((l) => [...l.matchAll(/│/g)].map((m) => stringWidth(l.slice(0, m.index))));
      expect(bars.length).toBeGreaterThan(3);
      for (const b of bars) expect(b).toEqual(bars[0]); // every row's separators in the same columns
      expect(r.join(" ")).toMatch(/will\s+not\s+fit/);
    }
  });

  it("turns a table that cannot fit into a list of header: value lines", () => {
    const md = [
      "| a | b | c | d | e | f |",
      "|---|---|---|---|---|---|",
      "| identifier | description | category | maintainer | repository | licence |",
    ].join("\n");
    const r = rows(md, 30);
    expect(widest(r)).toBeLessThanOrEqual(30);
    expect(r).toContain("• a: identifier");
    expect(r).toContain("  f: licence");
  });
});
