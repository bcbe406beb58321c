import { describe, expect, it } from "vitest";
import {
  highlightCode,
  lineText,
  parseInline,
  renderMarkdown,
  safeSplitPoint,
} from "../../src/tui/markdown.ts";

const texts = (md: string) => renderMarkdown(md).map(lineText);

describe("markdown", () => {
  it("styles emphasis, inline code, strikethrough and links", () => {
    const segs = parseInline("a **bold** and *it* with `code`, ~~gone~~ and [site](https://x.dev)");
    expect(segs.find((s) => s.text === "bold")?.bold).toBe(true);
    expect(segs.find((s) => s.text === "it")?.italic).toBe(true);
    expect(segs.find((s) => s.text === "code")?.color).toBe("yellow");
    expect(segs.find((s) => s.text === "gone")?.strikethrough).toBe(true);
    const link = segs.find((s) => s.text === "site");
    expect(link?.underline).toBe(true);
    expect(segs.map((s) => s.text).join("")).toBe("a bold and it with code, gone and site (https://x.dev)");
  });

  it("leaves snake_case words and lone stars alone", () => {
    expect(
      parseInline("use my_var_name and 2 * 3")
        .map((s) => s.text)
        .join(""),
    ).toBe("use my_var_name and 2 * 3");
    expect(parseInline("use my_var_name").every((s) => !s.italic)).toBe(true);
  });

  it("renders headings, lists (nested, numbered, tasks), quotes and rules", () => {
    const out = texts(
      "# Title\n\nSome text\ncontinued.\n\n- one\n  - nested\n1. first\n- [x] done\n- [ ] todo\n\n> quoted\n\n---",
    );
    expect(out[0]).toBe("Title");
    expect(out).toContain("Some text continued.");
    expect(out).toContain("• one");
    expect(out).toContain("  ◦ nested");
    expect(out).toContain("1. first");
    expect(out).toContain("• ☑ done");
    expect(out).toContain("• ☐ todo");
    expect(out).toContain("▌ quoted");
    expect(out.some((l) => /^─{3,}$/.test(l))).toBe(true);
    const heading = renderMarkdown("## Sub")[0]!;
    expect(heading[0]?.bold).toBe(true);
    // level 3 and deeper keep no `###` either (issue 25 item 9)
    expect(lineText(renderMarkdown("### Third level")[0]!)).toBe("Third level");
    expect(lineText(renderMarkdown("###### Sixth")[0]!)).toBe("Sixth");
  });

  it("renders fenced code with a language label and highlighting, without parsing markdown inside", () => {
    const lines = renderMarkdown('```ts\nconst x = "**no**"; // note\n```');
    expect(lineText(lines[0]!)).toBe("  ts");
    // no gutter: the line is the code alone (drawn at column 0, marked as code)
    expect(lineText(lines[1]!)).toBe('const x = "**no**"; // note');
    expect(lines[1]![0]?.code).toBe(true);
    const kw = lines[1]!.find((s) => s.text === "const");
    expect(kw?.color).toBe("magenta");
    expect(lines[1]!.find((s) => s.text.startsWith('"'))?.color).toBe("green");
    expect(lines[1]!.find((s) => s.text.startsWith("//"))?.italic).toBe(true);
  });

  it("colours diffs in diff fences", () => {
    const add = highlightCode("+added", "diff")[0]!;
    const del = highlightCode("-removed", "diff")[0]!;
    expect(add.color).toBe("green");
    expect(del.color).toBe("red");
  });

  it("aligns tables", () => {
    const out = texts("| a | long header |\n|---|---|\n| 1 | x |");
    expect(out[0]).toBe("a   │ long header");
    expect(out[1]).toMatch(/^─+┼─+$/);
    expect(out[2]).toBe("1   │ x"); // no trailing padding after the last column
  });

  it("never splits a streaming text inside a code fence", () => {
    const text = "para one\n\n```\ncode\n\nmore code\n";
    expect(safeSplitPoint(text)).toBe("para one\n\n".length);
    expect(safeSplitPoint("no blank line yet")).toBe(0);
    const closed = `${text}\`\`\`\n\nafter\n`;
    expect(safeSplitPoint(closed)).toBe(closed.indexOf("after"));
  });
});
