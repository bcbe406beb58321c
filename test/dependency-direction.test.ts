// Enforces the package dependency graph of DESIGN.md §2: every import in a
// package's sources (and every dependency in its package.json) must be in
// that package's allowlist. Arrows point inward; a wrong arrow fails here.
// Also: tests, examples, bench/ and test/ keep to their own allowlists; no
// relative import reaches into another package; no import cycle anywhere in
// packages/*/src and apps/*/src.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
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
  "packages/store-postgres": ["@lash/core", "@lash/sansio"],
  "packages/subagents": ["@lash/core", "@lash/sansio"],
  "packages/trace": ["@lash/sansio"],
  "packages/export": ["@lash/sansio", "@lash/core"],
  "packages/policy": ["@lash/core", "@lash/sansio"],
  "packages/agents": ["@lash/core", "@lash/sansio", "@lash/subagents", "@lash/policy"],
  "packages/server": [
    "@lash/core",
    "@lash/sansio",
    "@lash/agents",
    "@lash/policy",
    "@lash/trace",
    "@lash/subagents",
    "@lash/export",
  ],
  "packages/client": ["@lash/server"],
  // the web console: a browser app that talks to the daemon through the typed client only
  "packages/console": ["@lash/client"],
  "apps/cli": [
    "@lash/sansio",
    "@lash/lashlang",
    "@lash/core",
    "@lash/providers",
    "@lash/tools",
    "@lash/plugin-mcp",
    "@lash/store-postgres",
    "@lash/restate",
    "@lash/subagents",
    "@lash/trace",
    "@lash/export",
    "@lash/policy",
    "@lash/agents",
    "@lash/server",
    "@lash/client",
    "@lash/console",
  ],
  bench: [
    "@lash/sansio",
    "@lash/lashlang",
    "@lash/core",
    "@lash/providers",
    "@lash/tools",
    "@lash/restate",
    "@lash/store-postgres",
  ],
};

/**
 * Workspace packages a package's tests (and its devDependencies) may use besides
 * `internal`: the mock wire server of @lash/providers/testing (providers sits at the
 * bottom of the graph, so this adds no cycle), and real tools for export's fixtures.
 */
const testInternal: Record<string, readonly string[]> = {
  "packages/core": ["@lash/providers"],
  "packages/export": ["@lash/providers", "@lash/tools"],
  "packages/plugin-mcp": ["@lash/providers"],
  "packages/store-postgres": ["@lash/providers"],
  "packages/subagents": ["@lash/providers"],
  "packages/trace": ["@lash/providers"],
  "packages/policy": ["@lash/providers", "@lash/tools"],
  "packages/agents": ["@lash/providers", "@lash/tools"],
  "packages/server": ["@lash/providers", "@lash/tools", "@lash/client"],
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
    "@cfworker/json-schema",
    // RLM trigger schedules (rlm/triggers.ts), the same cron parser as the daemon's scheduler
    "croner",
  ],
  "packages/providers": [
    "effect",
    "@anthropic-ai/sdk",
    "@anthropic-ai/bedrock-sdk",
    "@anthropic-ai/vertex-sdk",
    "openai",
    "@google/genai",
    "@cfworker/json-schema",
  ],
  "packages/tools": ["effect", "ignore", "diff"],
  "packages/plugin-mcp": ["effect", "@modelcontextprotocol/sdk", "zod"],
  "packages/store-postgres": [
    "effect",
    "@effect/sql",
    "@effect/sql-pg",
    "@effect/experimental",
    "@effect/platform",
  ],
  "packages/subagents": ["effect"],
  "packages/trace": ["effect", "@effect/platform", "@effect/opentelemetry", "@opentelemetry/*"],
  "packages/export": ["effect", "marked"],
  "packages/policy": ["effect", "picomatch", "shell-quote"],
  "packages/agents": ["effect", "picomatch", "yaml", "croner"],
  "packages/server": [
    "effect",
    "@effect/platform",
    "@effect/platform-node",
    "@modelcontextprotocol/sdk",
    "better-sqlite3",
    "croner",
  ],
  "packages/client": ["effect", "@effect/platform"],
  "packages/console": ["preact", "marked"],
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

function isPackageDir(dir: string | undefined): boolean {
  return dir !== undefined && /^(packages|apps)\/[^/]+$/.test(dir);
}

/** The unit a path belongs to: "packages/core", "apps/cli", or a top-level directory ("bench", "test", "examples"). */
function ownerOf(absPath: string): string {
  const parts = relative(root, absPath).split(sep);
  return parts[0] === "packages" || parts[0] === "apps" ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** "src", "test", "examples" … inside a package; undefined outside packages. */
function partOf(absPath: string): string | undefined {
  const parts = relative(root, absPath).split(sep);
  return parts[0] === "packages" || parts[0] === "apps" ? parts[2] : undefined;
}

/**
 * A relative import that crosses a package boundary, or undefined when it is fine:
 * a package's sources never reach out of their package, and nothing reaches into
 * another package except into its test/ directory (shared test fixtures), from a
 * file that is not a package source.
 */
function crossPackage(file: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const target = resolve(dirname(file), spec);
  const from = ownerOf(file);
  const to = ownerOf(target);
  if (from === to) return undefined;
  const fromSource = isPackageDir(from) && partOf(file) === "src";
  if (fromSource) return `${relative(root, file)} reaches out of ${from}: ${spec}`;
  if (isPackageDir(to) && partOf(target) !== "test")
    return `${relative(root, file)} reaches into ${to} by a relative path (import "${packageNameOf(to)}" instead): ${spec}`;
  return undefined;
}

function packageNameOf(dir: string): string {
  try {
    return JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")).name as string;
  } catch {
    return dir;
  }
}

/**
 * Cross-package relative imports that exist today and are not this test's to fix,
 * each with the reason. The test fails when one disappears, so the list only shrinks.
 */
const knownCrossPackage: Record<string, string> = {
  "bench/perf/tui/run.ts":
    "times the ink TUI's controller and mount from apps/cli/src, which the CLI does not publish as a library entry point",
  "bench/perf/tui/echo.ts":
    "times keystroke-to-echo through the same TUI controller and mount (and the @ file index) as run.ts, for the same reason",
  "bench/perf/export/run.ts":
    "imports core's promise store and @lash/export's renderer from src; bench declares no @lash/export dependency and DESIGN §2 gives bench no arrow to export",
  "bench/perf/scale/run.ts": "imports openSqliteStore from core/src/store/promise.ts rather than @lash/core",
  "bench/perf/cli/run.ts":
    "imports the mock server from providers/src/testing rather than @lash/providers/testing",
  "bench/perf/core-store/run.ts": "imports core's store from src rather than @lash/core",
};

const staticOrDynamicImportRe =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

/** Workspace package name → (import specifier → source file), from the manifests' development `exports`. */
function workspaceEntries(): Map<string, string> {
  const out = new Map<string, string>();
  for (const top of ["packages", "apps"])
    for (const dir of readdirSync(join(root, top))) {
      let manifest: { name: string; exports?: Record<string, unknown> };
      try {
        manifest = JSON.parse(readFileSync(join(root, top, dir, "package.json"), "utf8"));
      } catch {
        continue;
      }
      for (const [sub, target] of Object.entries(manifest.exports ?? {})) {
        const path = typeof target === "string" ? target : (target as { default?: string }).default;
        if (typeof path !== "string" || !path.endsWith(".ts")) continue;
        out.set(sub === "." ? manifest.name : `${manifest.name}/${sub.slice(2)}`, join(root, top, dir, path));
      }
    }
  return out;
}

function resolveModule(file: string, spec: string, entries: Map<string, string>): string | undefined {
  if (!spec.startsWith(".")) return entries.get(spec);
  const base = resolve(dirname(file), spec);
  return [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find(
    (p) => existsSync(p) && statSync(p).isFile(),
  );
}

/**
 * The module graph of every source file under packages/*\/src and apps/*\/src. Every
 * import form counts — static, `import type`/`export type`, and dynamic `import()` —
 * because a cycle through a lazy or type-only edge is still a knot in the design
 * (the CLI's main.ts ↔ command files cycle over MainIO was type-only one way and
 * dynamic the other).
 */
function sourceGraph(): Map<string, string[]> {
  const entries = workspaceEntries();
  const graph = new Map<string, string[]>();
  for (const top of ["packages", "apps"])
    for (const dir of readdirSync(join(root, top)))
      for (const file of files(join(root, top, dir, "src"))) {
        if (file.endsWith(".d.ts")) continue;
        const edges: string[] = [];
        for (const m of readFileSync(file, "utf8").matchAll(staticOrDynamicImportRe)) {
          const target = resolveModule(file, (m[1] ?? m[2] ?? m[3])!, entries);
          if (target) edges.push(target);
        }
        graph.set(file, edges);
      }
  return graph;
}

/** Every strongly connected component with more than one module (or a self-import), each as one cycle path. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  // one concrete cycle per component: walk from its first module inside the component until a repeat
  return components.map((component) => {
    const members = new Set(component);
    const path = [component[component.length - 1]!];
    for (;;) {
      const last = path[path.length - 1]!;
      const step = (graph.get(last) ?? []).find((w) => members.has(w))!;
      const seen = path.indexOf(step);
      if (seen >= 0) return [...path.slice(seen), step];
      path.push(step);
    }
  });
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

    it(`${pkg}/package.json declares only allowed workspace dependencies (dev ones included)`, () => {
      const manifest = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8"));
      const deps = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
      const bad = deps.filter((d) => d.startsWith("@lash/") && !internal[pkg]!.includes(d));
      const devAllowed = [...internal[pkg]!, ...(testInternal[pkg] ?? [])];
      const badDev = Object.keys(manifest.devDependencies ?? {}).filter(
        (d) => d.startsWith("@lash/") && !devAllowed.includes(d),
      );
      expect([...bad, ...badDev.map((d) => `devDependency ${d}`)]).toEqual([]);
    });

    if (pkg !== "bench")
      it(`${pkg}'s tests import only its arrows plus its test allowlist`, () => {
        const selfName = packageNameOf(pkg);
        const ok = new Set([selfName, ...internal[pkg]!, ...(testInternal[pkg] ?? [])]);
        const violations: string[] = [];
        for (const file of files(join(root, pkg, "test")))
          for (const spec of importsOf(readFileSync(file, "utf8")))
            if (spec.startsWith("@lash/") && !ok.has(packageName(spec)))
              violations.push(`${relative(root, file)} imports ${spec}`);
        expect(violations).toEqual([]);
      });
  }

  it("no relative import crosses a package boundary (into another package's sources, or out of a package's sources)", () => {
    const scanned: string[] = [];
    for (const top of ["packages", "apps"])
      for (const dir of readdirSync(join(root, top)))
        for (const part of ["src", "test", "examples"]) scanned.push(...files(join(root, top, dir, part)));
    for (const dir of ["bench", "test", "examples"]) scanned.push(...files(join(root, dir)));
    expect(scanned.length).toBeGreaterThan(100);
    const violations: string[] = [];
    const excepted = new Set<string>();
    for (const file of scanned) {
      const rel = relative(root, file).split(sep).join("/");
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        const problem = crossPackage(file, spec);
        if (problem === undefined) continue;
        if (rel in knownCrossPackage) excepted.add(rel);
        else violations.push(problem);
      }
    }
    expect(violations).toEqual([]);
    // a known exception that no longer occurs is taken off the list
    expect([...excepted].sort()).toEqual(Object.keys(knownCrossPackage).sort());
  });

  it("a relative import across packages is caught", () => {
    const from = join(root, "packages/tools/src/read.ts");
    expect(crossPackage(from, "../../core/src/tool.ts")).toMatch(/reaches out of packages\/tools/);
    expect(crossPackage(join(root, "packages/tools/test/x.test.ts"), "../../core/src/tool.ts")).toMatch(
      /reaches into packages\/core by a relative path \(import "@lash\/core" instead\)/,
    );
    expect(crossPackage(join(root, "bench/perf/x/run.ts"), "../../../packages/core/src/store.ts")).toMatch(
      /reaches into packages\/core/,
    );
    expect(crossPackage(from, "./tool.ts")).toBeUndefined();
    expect(
      crossPackage(join(root, "test/integration/x.test.ts"), "../../packages/export/test/fixture.ts"),
    ).toBe(undefined);
  });

  it("test/ imports workspace packages only through their entry points", () => {
    const entries = workspaceEntries();
    const violations: string[] = [];
    for (const file of files(join(root, "test")))
      for (const spec of importsOf(readFileSync(file, "utf8")))
        if (spec.startsWith("@lash/") && !entries.has(spec))
          violations.push(`${relative(root, file)} imports ${spec}`);
    expect(violations).toEqual([]);
  });

  it("no import cycle in packages/*/src and apps/*/src (static, type-only and dynamic imports)", () => {
    const graph = sourceGraph();
    expect(graph.size).toBeGreaterThan(100);
    const cycles = findCycles(graph).map((c) => c.map((f) => relative(root, f)).join(" → "));
    expect(cycles).toEqual([]);
  });

  it("core's and sansio's public entry points export by name (no `export *`)", () => {
    // a name added to a module must not become public API by accident
    const starred: string[] = [];
    for (const pkg of ["packages/core", "packages/sansio"]) {
      const manifest = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8"));
      for (const [sub, target] of Object.entries(manifest.exports as Record<string, string>)) {
        if (sub === "./internal") continue;
        const source = readFileSync(join(root, pkg, target), "utf8");
        if (/^\s*export\s*\*/m.test(source)) starred.push(`${pkg}/${target}`);
      }
    }
    expect(starred).toEqual([]);
  });

  it("a cycle is caught, with its path", () => {
    const g = new Map<string, string[]>([
      ["a", ["b"]],
      ["b", ["c", "d"]],
      ["c", ["a"]],
      ["d", []],
      ["e", ["e"]],
    ]);
    const cycles = findCycles(g);
    expect(cycles).toHaveLength(2);
    const abc = cycles.find((c) => c.length === 4)!;
    expect(abc[0]).toBe(abc[3]);
    expect(new Set(abc)).toEqual(new Set(["a", "b", "c"]));
    expect(cycles).toContainEqual(["e", "e"]);
    expect(
      findCycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("a wrong arrow is caught", () => {
    expect(allowed("packages/sansio", "@lash/core")).toBe(false);
    expect(allowed("packages/providers", "@lash/core")).toBe(false);
    expect(allowed("packages/lashlang", "@lash/sansio")).toBe(false);
    expect(allowed("packages/core", "@lash/providers")).toBe(false);
    expect(allowed("packages/core", "@lash/sansio")).toBe(true);
  });

  it("examples/ and packages/*/examples import lash only through published, stable entry points", () => {
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
    // examples/ and each package's examples/ alike: they are what users copy
    const examples = [
      ...files(join(root, "examples")),
      ...readdirSync(join(root, "packages")).flatMap((dir) => files(join(root, "packages", dir, "examples"))),
    ];
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

// Issue 16's shape of the host: runtime.ts wires services (≤ 200 lines) and each file of the
// carved turn (core/src/turn/) stays ≤ 250 lines.
describe("the host's turn stays carved", () => {
  const lines = (file: string) =>
    readFileSync(join(root, file), "utf8").replace(/\n$/, "").split("\n").length;
  it("packages/core/src/runtime.ts ≤ 200 lines, every packages/core/src/turn/*.ts ≤ 250", () => {
    expect(lines("packages/core/src/runtime.ts")).toBeLessThanOrEqual(200);
    const turn = readdirSync(join(root, "packages/core/src/turn")).filter((f) => f.endsWith(".ts"));
    expect(turn.length).toBeGreaterThan(5);
    const over = turn.map((f) => `packages/core/src/turn/${f}`).filter((f) => lines(f) > 250);
    expect(over).toEqual([]);
  });
});
