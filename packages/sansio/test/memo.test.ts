import { describe, expect, it } from "vitest";
import { canonicalJson, type Message, memoOf } from "../src/index.ts";

const message = (): Message => ({ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] });

describe("memoOf: what the runtime remembers about a message, kept on the message", () => {
  it("is one record per object, filled by whichever cache comes first", () => {
    const m = message();
    memoOf(m).chars = 12;
    memoOf(m).chat = ["converted"];
    expect(memoOf(m)).toEqual({ chars: 12, chat: ["converted"] });
    expect(memoOf(message())).toEqual({});
  });

  it("is invisible to JSON, keys, spreads, canonical hashing and equality", () => {
    const m = message();
    const before = { json: JSON.stringify(m), canonical: canonicalJson(m), keys: Object.keys(m) };
    memoOf(m).chars = 12;
    expect(JSON.stringify(m)).toBe(before.json);
    expect(canonicalJson(m)).toBe(before.canonical);
    expect(Object.keys(m)).toEqual(before.keys);
    expect(Object.getOwnPropertySymbols({ ...m })).toEqual([]);
    expect(structuredClone(m)).toEqual(message());
    expect(m).toStrictEqual(message());
  });

  it("caches nothing on a frozen object, and does not throw", () => {
    const m = Object.freeze(message());
    memoOf(m).chars = 12;
    expect(memoOf(m).chars).toBeUndefined();
  });
});
