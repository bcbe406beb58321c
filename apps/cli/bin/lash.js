#!/usr/bin/env node
// `pnpm exec lash` / an installed `lash`: Node ≥ 22.18 runs the TypeScript entry directly.
import "../src/main.ts";
