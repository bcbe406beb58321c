// Enforces the package dependency graph of DESIGN.md §2: every import in a
// package's sources (and every dependency in its package.json) must be in
// that package's allowlist. Arrows point inward; a wrong arrow fails here.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/** Workspace packages each package may import (besides itself). */
const internal: Record<string, readonly string[]> = {
  "packages/sansio": [],
  "packages/lashlang": [],
  "packages/core": ["@lash/sansio", "@lash/lashlang"],
  "packages/providers": ["@lash/sansio"],
  "packages/tools": ["@lash/core", "@lash/sansio", "@lash/lashlang"],
  "packages/plugin-mcp": ["@lash/core", "@lash/sansio"],
  "packages/subagents": ["@lash/core", "@lash/sansio"],
  "packages/trace": ["@lash/sansio"],
  "packages/export": ["@lash/sansio", "@lash/core"],
  "apps/cli": [
    "@lash/sansio",
    "@lash/lashlang",
    "@lash/core",
    "@lash/providers",
    "@lash/tools",
    "@lash/plugin-mcp",
    "@lash/subagents",
    "@lash/trace",
    "@lash/export",
  ],
  bench: ["@lash/sansio", "@lash/lashlang", "@lash/core", "@lash/providers", "@lash/tools"],
};

/** Third-party packages a package's *sources* may import (tests may use dev tools). */
const external: Record<string, readonly string[]> = {
  "packages/sansio": ["effect"],
  "packages/lashlang": ["chevrotain"],
  "packages/core": [
    "effect",
    "@effect/platform",
    "@effect/platform-node",
    "@effect/sql",
    "better-sqlite3",
    "@effect/experimental",
  ],
  "packages/providers": ["effect", "@anthropic-ai/sdk", "openai", "@google/genai"],
  "packages/tools": ["effect", "ignore", "diff"],
  "packages/plugin-mcp": ["effect", "@modelcontextprotocol/sdk", "zod"],
  "packages/subagents": ["effect"],
  "packages/trace": ["effect", "@effect/platform", "@effect/opentelemetry", "@opentelemetry/*"],
  "packages/export": ["effect", "marked"],
  "apps/cli": ["*"],
  bench: ["*"],
};

const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

function files(dir: string): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === "node_modules" || name === "results") continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(files(p));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

const importRe =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

function importsOf(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(importRe)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec) out.push(spec);
  }
  return out;
}

function packageName(spec: string): string {
  if (spec.startsWith("@")) return spec.split("/").slice(0, 2).join("/");
  return spec.split("/")[0]!;
}

function allowed(pkg: string, name: string): boolean {
  if (name.startsWith("@lash/")) return internal[pkg]!.includes(name);
  const ext = external[pkg]!;
  return ext.some((e) => e === "*" || e === name || (e.endsWith("/*") && name.startsWith(e.slice(0, -1))));
}

describe("dependency direction (DESIGN.md §2)", () => {
  it("parses import forms", () => {
    expect(
      importsOf(
        `import { a } from "x";\nimport type { B } from '@lash/core';\nexport * from "./y.ts";\nconst m = await import("z/sub");\nimport "side";`,
      ),
    ).toEqual(["x", "@lash/core", "./y.ts", "z/sub", "side"]);
  });

  for (const pkg of Object.keys(internal)) {
    it(`${pkg} imports only what its arrows allow`, () => {
      const selfName = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8")).name as string;
      const srcDir = pkg === "bench" ? join(root, pkg) : join(root, pkg, "src");
      const violations: string[] = [];
      for (const file of files(srcDir)) {
        for (const spec of importsOf(readFileSync(file, "utf8"))) {
          if (spec.startsWith(".") || builtins.has(spec)) continue;
          const name = packageName(spec);
          if (name === selfName) continue;
          if (!allowed(pkg, name)) violations.push(`${relative(root, file)} imports ${spec}`);
        }
      }
      expect(violations).toEqual([]);
    });

    it(`${pkg}/package.json declares only allowed workspace dependencies`, () => {
      const manifest = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8"));
      const deps = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
      const bad = deps.filter((d) => d.startsWith("@lash/") && !internal[pkg]!.includes(d));
      expect(bad).toEqual([]);
    });
  }

  it("a wrong arrow is caught", () => {
    expect(allowed("packages/sansio", "@lash/core")).toBe(false);
    expect(allowed("packages/providers", "@lash/core")).toBe(false);
    expect(allowed("packages/lashlang", "@lash/sansio")).toBe(false);
    expect(allowed("packages/core", "@lash/providers")).toBe(false);
    expect(allowed("packages/core", "@lash/sansio")).toBe(true);
  });

  it("examples/ import lash only through published, stable entry points", () => {
    const published = new Set<string>();
    for (const dir of readdirSync(join(root, "packages"))) {
      let manifest: { name: string; publishConfig?: { exports?: Record<string, unknown> } };
      try {
        manifest = JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8"));
      } catch {
        continue;
      }
      for (const sub of Object.keys(manifest.publishConfig?.exports ?? {}))
        if (sub !== "./internal")
          published.add(sub === "." ? manifest.name : `${manifest.name}/${sub.slice(2)}`);
    }
    expect(published).toContain("@lash/core");
    const examples = files(join(root, "examples"));
    expect(examples.length).toBeGreaterThan(0);
    const violations: string[] = [];
    for (const file of examples)
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        if (spec.startsWith("@lash/") ? !published.has(spec) : spec.startsWith("."))
          violations.push(`${relative(root, file)} imports ${spec}`);
      }
    expect(violations).toEqual([]);
  });
});
