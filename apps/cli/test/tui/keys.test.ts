// One ink input that holds several keys (issue 25 item 5): control bytes inside text are keys.
import type { Key } from "ink";
import { describe, expect, it } from "vitest";
import { splitKeys } from "../../src/tui/keys.ts";

const none = {} as Key;
const show = (input: string) =>
  splitKeys(input, none).map(([i, k]) => (k.ctrl ? `C-${i}` : k.backspace ? "BS" : i));

describe("splitKeys", () => {
  it("splits Ctrl+U followed by text into the key and the text", () => {
    expect(show("\x15hello")).toEqual(["C-u", "hello"]);
    expect(show("abc\x15def\x01")).toEqual(["abc", "C-u", "def", "C-a"]);
  });

  it("leaves text, Enter and newlines (a paste, fast typing) as one input", () => {
    expect(show("hello")).toEqual(["hello"]);
    expect(show("line one\nline two\r")).toEqual(["line one\nline two\r"]);
    expect(show("x")).toEqual(["x"]);
  });

  it("drops unbound control bytes instead of typing them", () => {
    expect(show("a\x1cb")).toEqual(["a", "b"]);
  });
});
