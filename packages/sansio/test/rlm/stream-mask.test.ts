import { describe, expect, it } from "vitest";
import { extractCell, maskedText, StreamMask } from "../../src/internal.ts";

/** Feeds `pieces` through a mask: what was shown, what the reply kept, and whether it closed. */
function feed(pieces: readonly string[]) {
  const m = new StreamMask();
  let visible = "";
  let accepted = "";
  let doneAt: number | undefined;
  pieces.forEach((p, i) => {
    const s = m.push(p);
    visible += s.visible;
    accepted += s.accepted;
    if (m.done && doneAt === undefined) doneAt = i;
  });
  if (!m.done) visible += m.end();
  return { visible, accepted, doneAt, hiding: m.hiding };
}

describe("the RLM stream mask (reference §2.5)", () => {
  it("shows the prose, hides from the completed start-tag line on, and is done at the close-tag line", () => {
    const r = feed([
      "I'll count.\n<lash",
      "lang>\nx = 1\n",
      "finish x\n</lashlang>",
      "\nTrailing text",
      " more",
    ]);
    expect(r.visible).toBe("I'll count.\n");
    expect(r.doneAt).toBe(3);
    // the reply ends with the close-tag line: nothing after it is kept
    expect(r.accepted).toBe("I'll count.\n<lashlang>\nx = 1\nfinish x\n</lashlang>\n");
    expect(extractCell(r.accepted)).toEqual({ kind: "cell", prose: "I'll count.", code: "x = 1\nfinish x" });
  });

  it("holds back a partial line that could still become the start tag, then releases it when it does not", () => {
    const m = new StreamMask();
    expect(m.push("Look: <lash").visible).toBe("Look: <lash");
    expect(m.push("\n  <lash").visible).toBe("\n");
    expect(m.push("lang> inline mention\n").visible).toBe("  <lashlang> inline mention\n");
    expect(m.hiding).toBe(false);
  });

  it("a reply without a cell is shown whole (the held-back end is flushed at the end)", () => {
    expect(feed(["Just prose.\n", "<lash"]).visible).toBe("Just prose.\n<lash");
    expect(feed(["Just prose.\n", "<lash"]).doneAt).toBeUndefined();
  });

  it("inline and indented tags: only a line that is exactly the tag (trimmed) counts; CRLF aware", () => {
    const r = feed(["a <lashlang> b\r\n", "  <lashlang>  \r\n", "x\r\n", " </lashlang> \r\n", "after"]);
    expect(r.visible).toBe("a <lashlang> b\r\n");
    expect(r.doneAt).toBe(3);
    expect(r.accepted).toBe("a <lashlang> b\r\n  <lashlang>  \r\nx\r\n </lashlang> \r\n");
  });

  it("everything after the close tag in the same delta is dropped; later deltas are ignored", () => {
    const m = new StreamMask();
    expect(m.push("<lashlang>\nfinish 1\n</lashlang>\nextra").accepted).toBe(
      "<lashlang>\nfinish 1\n</lashlang>\n",
    );
    expect(m.push("more").accepted).toBe("");
    expect(m.done).toBe(true);
  });

  it("reset starts over (a retried attempt); maskedText masks a whole reply", () => {
    const m = new StreamMask();
    m.push("<lashlang>\n");
    m.reset();
    expect(m.hiding).toBe(false);
    expect(m.push("hello\n").visible).toBe("hello\n");
    expect(maskedText("Prose\n<lashlang>\nfinish 1\n</lashlang>\n")).toBe("Prose\n");
  });
});
