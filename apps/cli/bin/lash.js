#!/usr/bin/env node
// The published `lash`: the bundled CLI (../dist, built by scripts/bundle.ts) on plain Node ≥ 22.12, no loader.
// Plain JavaScript that old Node versions can parse, so that they get a clear message instead of a SyntaxError.
import module from "node:module";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(`lash needs Node.js 22.12 or newer; this is Node.js ${process.versions.node}.\n`);
  process.exit(1);
}
// V8's code cache on disk (Node's module compile cache, in os.tmpdir()/node-compile-cache): later runs skip
// most of the compile time. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.();
globalThis[Symbol.for("lash.bin")] = true; // run main() whatever this file is linked as
await import("../dist/lash.js");
