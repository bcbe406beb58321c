import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readmeSection, renderSection } from "../readme-section.ts";

describe("README performance section", () => {
  it("is exactly what bench/results/latest.json renders to (run `node bench/readme-section.ts --write` after `pnpm bench`)", () => {
    const readme = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
    expect(readmeSection(readme)).toBe(renderSection());
  });
});
