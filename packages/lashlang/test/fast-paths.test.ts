/**
 * Compiled fast paths. `format` with a literal `{}` template is compiled at its call site (template parsed once, no
 * argument array). Its results, errors and memory charge must be those of the general path (a
 * template held in a variable), which these programs compare side by side.
 */
import { describe, expect, it } from "vitest";
import { errorOf, run, value } from "./helpers.ts";

describe("format: the compiled literal template equals the general path", () => {
  it("values of every kind format the same either way", async () => {
    expect(
      await value(`t = "{}|{}|{}|{}|{}|{}"
a = format("{}|{}|{}|{}|{}|{}", 1, 2.5, "s", null, [1, { k: "v" }], (1, "x"))
b = format(t, 1, 2.5, "s", null, [1, { k: "v" }], (1, "x"))
finish [a, a == b]`),
    ).toEqual(['1|2.5|s|null|[1,{"k":"v"}]|(1, "x")', true]);
  });

  it("indexed and escaped templates still format (they take the general path)", async () => {
    expect(await value(`finish [format("{1}{0}", "a", "b"), format("{{}}{}", 1)]`)).toEqual(["ba", "{}1"]);
  });

  it("too few or too many arguments: the general path's errors", async () => {
    expect(await errorOf(`finish format("{}{}", 1)`)).toBe(
      "format string has more `{}` placeholders than arguments (1)",
    );
    expect(await errorOf(`finish format("{}", 1, 2)`)).toBe("format argument `1` is unused");
  });

  it("the memory charge is the same as the general path's", async () => {
    const lit = await run(`x = format("a{}b{}", "xyz", 12345)`);
    const gen = await run(`t = "a{}b{}"\nx = format(t, "xyz", 12345)`);
    const t = await run(`t = "a{}b{}"`);
    expect(lit.outcome).toBe("continued");
    expect(lit.allocated).toBeGreaterThan(0);
    expect(lit.allocated).toBe(gen.allocated - t.allocated);
  });
});

describe("`(global op number) op number` operands are computed inline, with the general rules", () => {
  it("numbers: the same values as the general path (a literal-free spelling)", async () => {
    expect(
      await value(`i = 5
j = -4
k = 2.5
three = 3
seven = 7
finish [(i * 3) % 7, (j * 3) % 7, (k * 2) / 4, (i - 1) * 2 + 1, 1 + (i % 3) * 10, (i * three) % seven, (j * three) % seven]`),
    ).toEqual([1, -5, 1.25, 9, 21, 1, -5]);
  });

  it("a non-number operand takes the general path: concatenation, or its error", async () => {
    expect(await value(`s = "a"\nfinish [(s + 1) + 2, (s + "b") + "c"]`, { check: false })).toEqual([
      "a12",
      "abc",
    ]);
    expect(await errorOf(`s = [1]\nx = (s * 3) % 7`, { check: false })).toMatch(/list/);
  });

  it("an unset global is still the unknown-name error", async () => {
    expect(await errorOf("x = (nope * 3) % 7", { check: false })).toBe("unknown name `nope`");
  });
});
