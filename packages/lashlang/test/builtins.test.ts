import { describe, expect, it } from "vitest";
import { errorOf, value } from "./helpers.ts";

describe("builtins", () => {
  it.each([
    ["len('héllo🙂')", 6],
    ["len([1, 2])", 2],
    ["len((1, 2, 3))", 3],
    ["len({a: 1})", 1],
    ["len(null)", 0],
    ["empty('')", true],
    ["empty([])", true],
    ["empty(null)", true],
    ["empty((1,))", false],
    ["keys({b: 1, a: 2})", ["b", "a"]],
    ["values({b: 1, a: 2})", [1, 2]],
    ["keys(null)", []],
    ["trim('  x \\n')", "x"],
    ["trim(12)", "12"],
    ["to_string(3.0)", "3"],
    ["to_string(1.5)", "1.5"],
    ["to_string(null)", "null"],
    ["to_string([1, 'a'])", '[1,"a"]'],
    ["to_string({b: 1, a: {d: 1, c: 2}})", '{"a":{"c":2,"d":1},"b":1}'],
    ["to_string((1, 'x'))", '(1, "x")'],
    ["to_string((1,))", "(1,)"],
    ["to_string(())", "()"],
    ["to_string(1 / 0)", "inf"],
    ["to_string(-1 / 0)", "-inf"],
    ["to_string(0 / 0)", "NaN"],
    ["to_string(0.0000001)", "0.0000001"],
    ["to_string(1000000000000000000000 * 10)", "10000000000000000000000"],
    ["to_string([1 / 0])", "[null]"],
    ["to_int('3.9')", 3],
    ["to_int(-3.9)", -3],
    ["to_int('')", 0],
    ["to_int(true)", 1],
    ["to_float(' 2.5 ')", 2.5],
    ["to_float(null)", 0],
    ["json_parse('{\"a\": [1, true, null]}')", { a: [1, true, null] }],
    ["contains('abc', 'b')", true],
    ["contains('a1c', 1)", true],
    ["contains([1, [2]], [2])", true],
    ["contains((1, 2), 3)", false],
    ["contains({a: 1}, 'a')", true],
    ["contains(null, 'a')", false],
    ["starts_with(123, 12)", true],
    ["ends_with('abc', 'bc')", true],
    ["split(101, 0)", ["1", "1"]],
    ["split('a,b,,c', ',')", ["a", "b", "", "c"]],
    ["join(['a', 2, true, null], '-')", "a-2-true-null"],
    ["join(('a', 'b'), '|')", "a|b"],
    ["find('héllo', 'l')", 2],
    ["find('hello', 'l', 3)", 3],
    ["find('hello', 'z')", null],
    ["find('abc', '')", 0],
    ["find('abc', '', 3)", 3],
    ["find('abc', '', 4)", null],
    ["ceil_div(10, 3)", 4],
    ["ceil_div(-10, 3)", -3],
    ["floor_div(-10, 3)", -4],
    ["floor_div(10, -3)", -4],
    ["push([1], [2])", [1, [2]]],
    ["slice('abcdef', 1, 3)", "bc"],
    ["slice('a🙂cd', 1, 3)", "🙂c"],
    ["slice([1, 2, 3], -2, null)", [2, 3]],
    ["slice([1, 2, 3], 2, 1)", []],
    ["slice([1, 2, 3], -10, 10)", [1, 2, 3]],
    ["slice((1, 2, 3), 1, null)", [2, 3]],
    ["format('{} and {}', 1, 'b')", "1 and b"],
    ["format('{1}{0}{1}', 'a', 'b')", "bab"],
    ["format('{{}}')", "{}"],
    ["format('{}', [1, {a: 2}])", '[1,{"a":2}]'],
    ["range(3)", [0, 1, 2]],
    ["range(2, -2, -1)", [2, 1, 0, -1]],
    ["range(0, 10, 4)", [0, 4, 8]],
  ])("%s", async (src, expected) => {
    expect(await value(`finish ${src}`)).toEqual(expected);
  });

  it("grep_text reports 1-based lines, char offsets and strips CR", async () => {
    expect(await value(`finish grep_text("ab\\r\\nxbé b\\nzz", "b")`)).toEqual([
      { line: 1, text: "ab", match: "b", start: 1, end: 2 },
      { line: 2, text: "xbé b", match: "b", start: 1, end: 2 },
    ]);
  });

  it.each([
    ["len(1)", "`len` requires a string, tuple, list, record, or null; use `.size` for images"],
    ["keys([1])", "`keys` expects a record, got list"],
    ["json_parse('{')", "invalid json:"],
    ["join([[1]], ',')", "expected text"],
    ["join([{a: 1}], ',')", "expected text"],
    ["find('a', 'a', -1)", "`find` start must be a non-negative integer"],
    ["grep_text('a', '')", "`grep_text` needle must not be empty"],
    ["ceil_div(1.5, 1)", "`ceil_div` arguments must be an integer"],
    ["ceil_div('1', 1)", "must be an integer"],
    ["floor_div(1, 0)", "`floor_div` division by zero"],
    ["push((1, 2), 3)", "`push` requires a list as the first argument"],
    ["slice(1, 0, 1)", "`slice` expects a string, list or tuple, got number"],
    ["slice('abc', 0.5, 1)", "`slice` bounds must be an integer"],
    ["format('{} {1}', 'x', 'y')", "can't mix `{}` and indexed format placeholders"],
    ["format('plain', 1)", "format argument `0` is unused"],
    ["format('{0}', 1, 2)", "format argument `1` is unused"],
    ["format('{')", "unmatched `{` in format string"],
    ["format('}')", "unmatched `}` in format string"],
    ["format('{2}', 1)", "format placeholder `{2}` has no matching argument"],
    ["format('{} {}', 1)", "more `{}` placeholders than arguments"],
    ["format(1)", "`format` requires a string template"],
    ["range(0, 5, 0)", "`range` step must not be zero"],
    ["range(0, 5, 1.5)", "`range` arguments must be an integer"],
    ["range(1000001)", "`range` would produce 1000001 items (limit 1000000)"],
    ["to_int('abc')", "expected a number"],
    ["to_int([1])", "expected a number, got list"],
    ["validate(1, 2)", "`validate` requires a Type literal as the second argument"],
  ])("%s fails with %s", async (src, msg) => {
    expect(await errorOf(`finish ${src}`, { check: false })).toContain(msg);
  });

  it("reports arity at check time and at run time", async () => {
    expect(await errorOf("finish len(1, 2)")).toBe("`len` takes 1 arg(s), got 2");
    expect(await errorOf("finish find('a')", { check: false })).toBe("`find` takes 2 or 3 arg(s), got 1");
    expect(await errorOf("finish nope(1)")).toBe("unknown builtin `nope`");
    expect(await errorOf("finish nope(1)", { check: false })).toBe("unknown builtin `nope`");
  });

  it("len of an image points to .size", async () => {
    const r = await errorOf("finish len(img)", {}, undefined).catch((e: Error) => e.message);
    expect(r).toContain("unknown name");
  });
});
