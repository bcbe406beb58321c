// Acceptance 5 of issue 15: the public API report is checked in, and this test fails
// when a package's published API changes without its report being updated.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { libraryPackages, renderReport, root } from "../../scripts/api-report.ts";
import { buildPackages } from "./build.ts";

describe("public API report", () => {
  it("every library package's report matches its built declarations", { timeout: 300_000 }, async () => {
    await buildPackages();
    const packages = libraryPackages();
    expect(packages.map((p) => p.name)).toContain("@lash/core");
    expect(packages.flatMap((p) => p.entryPoints.map((e) => e.specifier))).not.toContain(
      "@lash/core/internal",
    );
    // in a child process: building the reports is a few seconds of synchronous compiler work
    const stale = await promisify(execFile)(
      process.execPath,
      [join(root, "scripts", "api-report.ts"), "--check"],
      {
        cwd: root,
      },
    ).then(
      () => [] as string[],
      (e: { code?: number; stderr?: string }) => {
        if (e.code !== 1) throw e;
        return (e.stderr ?? "")
          .split("\n")
          .filter((l) => l.startsWith("  "))
          .map((l) => l.trim());
      },
    );
    expect(
      stale,
      `the public API changed without its report: review the change, then run \`pnpm api:update\` and commit ${stale.join(", ")}`,
    ).toEqual([]);
  });

  const dir = mkdtempSync(join(tmpdir(), "lash-api-report-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("an added export, a changed signature and a removed export each change the report", () => {
    const dts = join(dir, "index.d.ts");
    const report = (source: string) => {
      writeFileSync(dts, source);
      return renderReport("fixture", [{ specifier: "fixture", dts }]);
    };
    const base = report(
      "/** docs are not API */\nexport declare function run(input: string): number;\nexport interface Options { readonly a?: number }\n",
    );
    expect(base).toContain("export declare function run(input: string): number;");
    expect(base).not.toContain("docs are not API");
    expect(
      report(
        "export declare function run(input: string): number;\nexport interface Options { readonly a?: number }\n",
      ),
    ).toBe(base);
    const added = report(
      "export declare function run(input: string): number;\nexport interface Options { readonly a?: number }\nexport declare const extra: 1;\n",
    );
    expect(added).not.toBe(base);
    expect(added).toContain("// extra\ndeclare const extra: 1;");
    expect(
      report(
        "export declare function run(input: string, n: number): number;\nexport interface Options { readonly a?: number }\n",
      ),
    ).not.toBe(base);
    expect(report("export declare function run(input: string): number;\n")).not.toBe(base);
  });
});
