import { describe, expect, it } from "vitest";
import { Editor, History } from "../../src/tui/editor.ts";

describe("Editor", () => {
  it("edits a multi-line buffer and moves between lines", () => {
    const e = new Editor();
    e.insert("hello");
    e.newline();
    e.insert("wide world");
    expect(e.text).toBe("hello\nwide world");
    expect(e.position()).toEqual({ line: 1, col: 10 });
    expect(e.up()).toBe(true);
    expect(e.position()).toEqual({ line: 0, col: 5 });
    expect(e.up()).toBe(false);
    e.home();
    e.insert(">");
    expect(e.text).toBe(">hello\nwide world");
    expect(e.down()).toBe(true);
    e.end();
    e.deleteWordBack();
    expect(e.text).toBe(">hello\nwide ");
    e.backspace();
    e.deleteToLineStart();
    expect(e.text).toBe(">hello\n");
    e.deleteToLineStart();
    expect(e.text).toBe(">hello");
  });

  it("collapses large pastes, expands them on send and deletes them whole", () => {
    const e = new Editor();
    const big = Array.from({ length: 120 }, (_, i) => `line ${i}`).join("\n");
    e.insert("see: ");
    e.paste(big);
    expect(e.text).toBe("see: [pasted 120 lines #1]");
    expect(e.value()).toBe(`see: ${big}`);
    e.paste("small");
    expect(e.text).toBe("see: [pasted 120 lines #1]small");
    for (let i = 0; i < 5; i++) e.backspace();
    e.backspace();
    expect(e.text).toBe("see: ");
    expect(e.value()).toBe("see: ");
    e.paste("x".repeat(900));
    expect(e.text).toBe("see: [pasted 900 chars #2]");
  });

  it("handles surrogate pairs as one character", () => {
    const e = new Editor();
    e.insert("a😀");
    e.left();
    expect(e.cursor).toBe(1);
    e.right();
    e.backspace();
    expect(e.text).toBe("a");
  });
});

describe("History", () => {
  it("browses older prompts and restores the draft being typed", () => {
    const h = new History(["first", "second"]);
    const draft = { text: "typing", pastes: new Map<number, string>() };
    expect(h.prev(draft)?.text).toBe("second");
    expect(h.prev(draft)?.text).toBe("first");
    expect(h.prev(draft)).toBeUndefined();
    expect(h.next()?.text).toBe("second");
    expect(h.next()?.text).toBe("typing");
    expect(h.next()).toBeUndefined();
    h.push({ text: "third", pastes: new Map() });
    h.push({ text: "third", pastes: new Map() });
    expect(h.texts()).toEqual(["first", "second", "third"]);
  });
});
