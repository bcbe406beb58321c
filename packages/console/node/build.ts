// Builds the console into a directory: esbuild bundles src/main.tsx (Preact, the typed client,
// the stylesheet it imports) into one JS and one CSS file with content hashes in their names,
// and writes an index.html that loads them. Nothing is fetched at run time from anywhere but
// the daemon that serves these files.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

export const PACKAGE_DIR = join(import.meta.dirname, "..");
export const SOURCE_DIR = join(PACKAGE_DIR, "src");
export const DIST_DIR = join(PACKAGE_DIR, "dist");

/** What a build wrote: the file names (relative to the directory) and the stamp of the sources. */
export interface ConsoleManifest {
  readonly stamp: string;
  readonly script: string;
  readonly style: string;
  readonly files: readonly string[];
}

function walk(dir: string): string[] {
  let out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(walk(p));
    else out.push(p);
  }
  return out;
}

/**
 * A hash of everything the bundle is made of that lives in this repository: the console's
 * sources, this build script, and the client and API schema it bundles. A dist/ whose stamp
 * differs is stale.
 */
export function sourceStamp(): string {
  const hash = createHash("sha256");
  const roots = [
    SOURCE_DIR,
    join(PACKAGE_DIR, "node", "build.ts"),
    join(PACKAGE_DIR, "package.json"),
    join(PACKAGE_DIR, "..", "client", "src"),
    join(PACKAGE_DIR, "..", "server", "src", "api.ts"),
  ];
  for (const root of roots) {
    const files = statSync(root).isDirectory() ? walk(root) : [root];
    for (const f of files)
      hash.update(relative(PACKAGE_DIR, f)).update("\0").update(readFileSync(f)).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

const html = (script: string, style: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>lash console</title>
<link rel="stylesheet" href="/console/${style}">
<script type="module" src="/console/${script}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading the lash console…</p></div>
<noscript>The lash console needs JavaScript.</noscript>
</body>
</html>
`;

/** Bundle the console into `outdir` (emptied first); returns its manifest (also written as manifest.json). */
export async function buildConsole(
  outdir: string = DIST_DIR,
  options: { readonly minify?: boolean } = {},
): Promise<ConsoleManifest> {
  const stamp = sourceStamp();
  const { build } = await import("esbuild");
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: [join(SOURCE_DIR, "main.tsx")],
    outdir,
    entryNames: "[name]-[hash]",
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: options.minify ?? true,
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
    absWorkingDir: PACKAGE_DIR,
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => relative(outdir, join(PACKAGE_DIR, f)));
  const script = outputs.find((f) => f.endsWith(".js"));
  const style = outputs.find((f) => f.endsWith(".css"));
  if (script === undefined || style === undefined)
    throw new Error(`the console build wrote no JS or no CSS (${outputs.join(", ")})`);
  writeFileSync(join(outdir, "index.html"), html(script, style));
  const manifest: ConsoleManifest = { stamp, script, style, files: ["index.html", script, style] };
  writeFileSync(join(outdir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
