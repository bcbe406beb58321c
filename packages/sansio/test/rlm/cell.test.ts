import { describe, expect, it } from "vitest";
import { canonicalCell, cleanCode, extractCell } from "../../src/internal.ts";

describe("extractCell (§2.5)", () => {
  it("finds the first start-tag line through the next close-tag line; prose before it is trimmed at the end", () => {
    const r = extractCell("Let me look.\n\n<lashlang>\nx = 1\nprint x\n</lashlang>\n  \n");
    expect(r).toEqual({ kind: "cell", prose: "Let me look.", code: "x = 1\nprint x" });
  });

  it("accepts indented tags and CRLF line ends, excluding the newline before the close tag", () => {
    const r = extractCell("ok\r\n  <lashlang>  \r\nprint 1\r\n\t</lashlang>\r\n");
    expect(r).toEqual({ kind: "cell", prose: "ok", code: "print 1" });
  });

  it("an empty cell has empty code; a cell may end the text without a final newline", () => {
    expect(extractCell("<lashlang>\n</lashlang>")).toEqual({ kind: "cell", prose: "", code: "" });
    expect(extractCell("<lashlang>\nprint 2\n</lashlang>")).toEqual({
      kind: "cell",
      prose: "",
      code: "print 2",
    });
  });

  it("inline mentions, markdown fences and a start tag without a line terminator are prose", () => {
    expect(extractCell("Use <lashlang> here, then </lashlang>.")).toEqual({
      kind: "none",
      prose: "Use <lashlang> here, then </lashlang>.",
    });
    expect(extractCell("```lashlang\nprint 1\n```\n")).toMatchObject({ kind: "none" });
    expect(extractCell("%%lashlang\nprint 1")).toMatchObject({ kind: "none" });
    expect(extractCell("text\n<lashlang>")).toMatchObject({ kind: "none" });
  });

  it("markdown fences inside the tags are kept as source", () => {
    const r = extractCell("<lashlang>\n```\nprint 1\n```\n</lashlang>\n");
    expect(r).toEqual({ kind: "cell", prose: "", code: "```\nprint 1\n```" });
  });

  it("a second complete cell is multipleCells; other text after the cell is trailingText", () => {
    const two = "a\n<lashlang>\nprint 1\n</lashlang>\n<lashlang>\nprint 2\n</lashlang>\n";
    expect(extractCell(two)).toEqual({ kind: "error", error: "multipleCells", prose: "a" });
    expect(extractCell("<lashlang>\nprint 1\n</lashlang>\nDone!")).toEqual({
      kind: "error",
      error: "trailingText",
      prose: "",
    });
    expect(extractCell("<lashlang>\nprint 1\n</lashlang>\n<lashlang>\nunclosed")).toMatchObject({
      error: "trailingText",
    });
  });

  it("an unclosed cell is an error", () => {
    expect(extractCell("x\n<lashlang>\nprint 1\n")).toEqual({
      kind: "error",
      error: "unclosedCell",
      prose: "x",
    });
  });

  it("cleanCode drops markdown rule lines; canonicalCell renders the emission format", () => {
    expect(cleanCode("---\nx = 1\n  -----  \nprint x")).toBe("x = 1\nprint x");
    expect(canonicalCell("Reading.  ", "print 1")).toBe("Reading.\n<lashlang>\nprint 1\n</lashlang>");
    expect(canonicalCell("", "print 1")).toBe("<lashlang>\nprint 1\n</lashlang>");
  });
});
