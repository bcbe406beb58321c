/**
 * `format` with a literal `{}` template is compiled at its call site (template parsed once, no
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
