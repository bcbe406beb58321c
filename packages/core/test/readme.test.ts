import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

describe("README", () => {
  it("shows the example file verbatim, and the example prints what the README says", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const example = readFileSync(join(root, "examples", "facade.ts"), "utf8");
    expect(readme).toContain(example.trimEnd());
    const out = execFileSync(process.execPath, [join(root, "examples", "facade.ts")], { encoding: "utf8" });
    const shown = readme.split("Output:\n\n```\n")[1]!.split("```")[0]!;
    expect(out.trim()).toBe(shown.trim());
  });
});
