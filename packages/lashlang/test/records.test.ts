/**
 * Record literals with distinct keys are built in shape form (one key list per literal, a value
 * array per record; the map is made on first use). These programs check that a shaped record is
 * indistinguishable from a map-backed one: reads, writes, order, equality, copies and JSON.
 */
import { describe, expect, it } from "vitest";
import { value } from "./helpers.ts";

describe("shape-form records behave as records", () => {
  it("field and index reads, missing fields, keys in literal order", async () => {
    expect(
      await value(`r = { b: 1, a: "x", c: [1, 2] }
finish [r.b, r["a"], r.c[1], r["missing"], keys(r), values(r), len(r)]`),
    ).toEqual([1, "x", 2, null, ["b", "a", "c"], [1, "x", [1, 2]], 3]);
  });

  it("one field-read site over records of different literals (the inline cache follows the shape)", async () => {
    expect(
      await value(`rs = [{ a: 1, b: 2 }, { b: 3, a: 4 }, { c: 5 }, json_parse("{\\"a\\": 6}")]
out = []
for r in rs {
  out = push(out, r.a)
}
finish out`),
    ).toEqual([1, 4, null, 6]);
  });

  it("writes: a new field appends, an existing one keeps its place; the copy is unaffected", async () => {
    expect(
      await value(`r = { a: 1, b: 2 }
s = r
r["c"] = 3
r.a = 10
r["b"] = 20
finish { r: r, s: s, rk: keys(r), sk: keys(s) }`),
    ).toEqual({ r: { a: 10, b: 20, c: 3 }, s: { a: 1, b: 2 }, rk: ["a", "b", "c"], sk: ["a", "b"] });
  });

  it("equality with map-backed records and between key orders; contains; to_string", async () => {
    expect(
      await value(`a = { x: 1, y: [1] }
b = json_parse("{\\"y\\": [1], \\"x\\": 1}")
c = {}
c["x"] = 1
c["y"] = [1]
finish [a == b, a == c, { x: 1, y: [1] } == { y: [1], x: 1 }, a == { x: 1 }, contains(a, "y"), to_string(a)]`),
    ).toEqual([true, true, true, false, true, '{"x":1,"y":[1]}']);
  });

  it("a literal with a repeated key keeps the last value at the first place (map semantics)", async () => {
    expect(
      await value(`r = { a: 1, b: 2, a: 3 }
finish [r.a, keys(r)]`),
    ).toEqual([3, ["a", "b"]]);
  });

  it("nested path writes through a shaped record, and grep_text hits are records", async () => {
    expect(
      await value(`r = { inner: { n: 1 }, list: [] }
r.inner.n = r.inner.n + 1
r.list = push(r.list, "x")
hits = grep_text("ab\\nxab\\nno", "ab")
finish [r, hits[1].start, hits[1].line, keys(hits[0])]`),
    ).toEqual([{ inner: { n: 2 }, list: ["x"] }, 1, 2, ["line", "text", "match", "start", "end"]]);
  });
});
