#!/usr/bin/env node
// The workspace's `lash` (`pnpm exec lash`): runs the TypeScript entry directly (Node ≥ 22.18 strips the
// types), no build step. The published package's bin is ./lash.js, which runs the bundle in ../dist.
globalThis[Symbol.for("lash.bin")] = true; // run main() whatever this file is linked as
await import("../src/main.ts");
