// Bundles the `lash` CLI into apps/cli/dist: one ESM entry (dist/lash.js) plus the chunks that its dynamic
// imports split off, so `lash --version` loads a few kilobytes while a turn loads core, a vendor SDK only on
// its first request and ink only for the TUI. Everything is bundled except package.json's `dependencies`:
// only what cannot be bundled belongs there (better-sqlite3: a native `.node` binary); the rest of what the
// CLI uses are devDependencies, so npm installs nothing else with the published package.
//
// pnpm --filter lash build   (or, from the root, pnpm build:cli)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildConsole } from "@lash/console/build";
import { build, type Plugin } from "esbuild";

const root = join(import.meta.dirname, "..");
const outdir = join(root, "dist");

const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  dependencies?: Record<string, string>;
};
/** Left to npm: the published package's dependencies. */
const EXTERNAL = Object.keys(manifest.dependencies ?? {});
/** Optional peers that a dependency loads only when the user installed them: left unresolved. */
const OPTIONAL = [
  "react-devtools-core", // ink, only with DEV=true and the package installed beside it
  "pg-native", // pg (@lash/store-postgres), only through `pg.native` with the package installed beside it
] as const;

rmSync(outdir, { recursive: true, force: true });
const started = performance.now();

// The web console (`lash serve` at `/`), built now and embedded: the packed CLI serves these
// files and never builds them (the source run builds them on first use, packages/console/node/source.ts).
const consoleDir = mkdtempSync(join(tmpdir(), "lash-console-"));
const consoleBuild = await buildConsole(consoleDir);
const consoleFiles = Object.fromEntries(
  consoleBuild.files.map((f) => [f, readFileSync(join(consoleDir, f), "utf8")] as const),
);
rmSync(consoleDir, { recursive: true, force: true });
const embedConsole: Plugin = {
  name: "embed-console",
  setup(b) {
    b.onResolve({ filter: /^\.\/source\.ts$/ }, (args) =>
      args.importer.includes(join("packages", "console", "node"))
        ? { path: "console-files", namespace: "lash-console" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "lash-console" }, () => ({
      contents: `export const loadFiles = async () => (${JSON.stringify({ files: consoleFiles, stamp: consoleBuild.stamp })});`,
      loader: "js",
    }));
  },
};
const result = await build({
  entryPoints: { lash: join(root, "src", "main.ts") },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22.12",
  // Maps give stack traces under `NODE_OPTIONS=--enable-source-maps` the original file and line; without the
  // sources' text, which would take the unpacked package from 13 to 32 MB.
  sourcemap: "linked",
  sourcesContent: false,
  minifySyntax: true,
  legalComments: "linked",
  external: [...EXTERNAL, ...OPTIONAL],
  chunkNames: "chunks/[name]-[hash]",
  // React and its reconciler pick their production build from NODE_ENV; the bundle fixes it at build time
  // instead (the source run sets it while ink loads, see src/tui/index.ts).
  define: { "process.env.NODE_ENV": '"production"' },
  // Bundled CommonJS dependencies (and a few ESM ones) call require() for Node built-ins.
  banner: {
    js: 'import { createRequire as __lashCreateRequire } from "node:module"; const require = __lashCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
  logOverride: {
    // packages/lashlang/src/checker.ts has a dead `case "obj" as never` after `case "obj"` (harmless).
    "duplicate-case": "silent",
    // src/tui/index.ts sets NODE_ENV while ink loads when running from source; with the define above that
    // code is a no-op (it sees "production" already), and process.env is left untouched.
    "assign-to-define": "silent",
  },
  metafile: true,
  plugins: [embedConsole],
});
const outputs = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith(".js"));
const total = outputs.reduce((n, [, o]) => n + o.bytes, 0);
const entry = outputs.find(([f]) => f.endsWith("dist/lash.js"))?.[1];
process.stdout.write(
  `lash bundle: ${outputs.length} files, ${(total / 1024).toFixed(0)} KiB` +
    ` (entry ${((entry?.bytes ?? 0) / 1024).toFixed(0)} KiB) in ${(performance.now() - started).toFixed(0)} ms\n`,
);
