// What `import` of a package costs a fresh Node process (module resolution, loading,
// compiling and evaluating everything it pulls in at import time): @lash/core, and
// @lash/core + @lash/providers (what a host needs for a turn), against the raw
// `openai` SDK, pi and the AI SDK. Each run is a fresh `node` with no compile cache
// (what a plain `node app.js` pays); the child measures its own CPU time
// (process.cpuUsage, user + system) and wall time around `await import(...)` only —
// Node's own start-up is excluded. Before anything is timed each import is checked
// once: the module must expose the export a host would use, else the benchmark fails.
//
// @lash/* is timed in two forms: the workspace's TypeScript sources (what `pnpm lash` and
// the tests load; Node strips the types file by file) and the published form — each
// package's `tsc -b` build laid out as `npm install` would (installed.ts), which is what a
// user's `import("@lash/core")` loads. Goal (issue 16): @lash/core ≤ 100 ms CPU, median,
// judged on the published (built) form.
//
// Reference rows explain the remainder: `effect`'s barrel (all of Effect, with fast-check
// through Schema; @lash/* imported it until issue 16, now they import submodules), the
// `effect/*` submodules @lash/core uses, Schema and Effect alone, and @lash/core bundled by esbuild into one
// ESM file (the same code, a handful of files instead of ~700). A second table splits the
// built import's CPU by what it loads, step by step in one process.
//
// pnpm exec node bench/perf/import/run.ts [--json out.json] [--runs 11]
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { argValue, markdownTable, median, report } from "../util.ts";
import { installBuilt } from "./installed.ts";

const RUNS = Number(argValue("--runs") ?? 11);
const GOAL_MS = 100;
const bench = join(import.meta.dirname, "..", "..");
const root = join(bench, "..");

/** @lash/core bundled into one ESM file (dynamic imports split off), better-sqlite3 left to Node. */
async function bundleCore(outdir: string): Promise<string> {
  // better-sqlite3 (a native binding) is core's own dependency.
  const betterSqlite = createRequire(join(root, "packages", "core", "package.json")).resolve(
    "better-sqlite3",
  );
  await build({
    entryPoints: { core: join(root, "packages", "core", "src", "index.ts") },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22.12",
    minifySyntax: true,
    logLevel: "error",
    plugins: [
      {
        name: "better-sqlite3-external",
        setup(b) {
          b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: betterSqlite, external: true }));
        },
      },
    ],
    banner: {
      js: 'import { createRequire as __r } from "node:module"; const require = __r(import.meta.url);',
    },
  });
  return pathToFileURL(join(outdir, "core.js")).href;
}
const scratch = mkdtempSync(join(tmpdir(), "lash-import-bench-"));
const coreBundle = await bundleCore(scratch);
/** The published form: built @lash/* packages laid out as `npm install` would, in its own directory. */
const installed = join(scratch, "installed");
installBuilt(root, installed, ["@lash/core", "@lash/providers"]);

/** The `effect` submodules @lash/core and @lash/sansio import values from (effect/Effect …, never the barrel). */
const EFFECT_MODULES = [
  "Cache",
  "Cause",
  "Clock",
  "Context",
  "Data",
  "Deferred",
  "Duration",
  "Effect",
  "Either",
  "Exit",
  "Fiber",
  "FiberId",
  "Layer",
  "ManagedRuntime",
  "Option",
  "ParseResult",
  "PubSub",
  "Runtime",
  "Schema",
  "SchemaAST",
  "Scope",
  "Stream",
].map((m) => `effect/${m}`);

interface Target {
  readonly label: string;
  /** The specifiers imported (in one process, in order). */
  readonly modules: readonly string[];
  /** An export of the last module that must be a function. */
  readonly check: string;
  readonly goal?: number;
  /** Where the child runs (resolves bare specifiers from): the bench directory unless given. */
  readonly cwd?: string;
}
const targets: readonly Target[] = [
  {
    label: "`@lash/core`, built (dist, as `npm install` lays it out)",
    modules: ["@lash/core"],
    check: "createLash",
    goal: GOAL_MS,
    cwd: installed,
  },
  {
    label: "`@lash/core` + `@lash/providers`, built",
    modules: ["@lash/core", "@lash/providers"],
    check: "createProvider",
    cwd: installed,
  },
  { label: "`@lash/core`, workspace sources (.ts)", modules: ["@lash/core"], check: "createLash" },
  {
    label: "`@lash/core` + `@lash/providers`, workspace sources (.ts)",
    modules: ["@lash/core", "@lash/providers"],
    check: "createProvider",
  },
  { label: "`openai` (the raw SDK)", modules: ["openai"], check: "default" },
  { label: "`@mariozechner/pi-agent-core` (pi)", modules: ["@mariozechner/pi-agent-core"], check: "Agent" },
  { label: "`ai` (Vercel AI SDK)", modules: ["ai"], check: "generateText" },
  { label: "reference: `effect`, the barrel (all of Effect)", modules: ["effect"], check: "pipe" },
  {
    label: `reference: the ${EFFECT_MODULES.length} \`effect/*\` submodules @lash/core uses, no barrel`,
    modules: EFFECT_MODULES,
    check: "make",
  },
  {
    label: "reference: `effect/Schema` alone (pulls in fast-check)",
    modules: ["effect/Schema"],
    check: "decodeUnknown",
  },
  { label: "reference: `effect/Effect` alone", modules: ["effect/Effect"], check: "runPromise" },
  {
    label: "reference: `@lash/core` bundled by esbuild (one file)",
    modules: [coreBundle],
    check: "createLash",
  },
];

interface Sample {
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly modules: number;
}

/** One fresh process: import the modules, check the export, report CPU and wall (and, when `count`, the module count). */
function once(t: Target, count = false): Sample {
  // The counting hook costs time per module: it runs in the check run only, never in a timed one.
  const hook = count
    ? `const { registerHooks } = await import("node:module");
       registerHooks({ load(url, context, next) { modules++; return next(url, context); } });`
    : "";
  const program = `
    let modules = 0;
    ${hook}
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let m;
    for (const name of ${JSON.stringify(t.modules)}) m = await import(name);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (typeof m[${JSON.stringify(t.check)}] !== "function")
      throw new Error(${JSON.stringify(`${t.modules.at(-1)} has no function export "${t.check}"`)});
    process.stdout.write(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs, modules }));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", program], {
    cwd: t.cwd ?? bench,
    encoding: "utf8",
    env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: "1", NODE_COMPILE_CACHE: "" },
  });
  return JSON.parse(out) as Sample;
}

// Checked before timing: every import succeeds and exposes its export (execFileSync throws
// otherwise); this run also counts the modules each import loads.
const moduleCount = new Map(targets.map((t) => [t, once(t, true).modules]));

const samples = new Map<Target, Sample[]>(targets.map((t) => [t, []]));
for (let run = 0; run < RUNS; run++)
  // Rotate the order so machine noise does not favour one target.
  for (let i = 0; i < targets.length; i++) {
    const t = targets[(i + run) % targets.length]!;
    samples.get(t)!.push(once(t));
  }

// Where the built import's CPU goes: the same fresh, cache-less process imports these one
// after another, each timed on its own (a step pays only for what the earlier ones did not load).
const STEPS: readonly { readonly label: string; readonly specifiers: readonly string[] }[] = [
  {
    label: `the ${EFFECT_MODULES.length} \`effect/*\` submodules @lash/core uses (with fast-check via Schema)`,
    specifiers: EFFECT_MODULES,
  },
  { label: "`@lash/sansio` (built)", specifiers: ["@lash/sansio"] },
  { label: "`@lash/core` (built), the rest of its import", specifiers: ["@lash/core"] },
  {
    label: "after the import, at the first SqliteStore open: `better-sqlite3`",
    specifiers: ["better-sqlite3"],
  },
  {
    label:
      "after the import, when a SqliteStore first needs its SQL client (a migration, a new file, deleting or forking a session …): `@effect/sql`",
    specifiers: ["@effect/sql/SqlClient"],
  },
];
function steps(): number[] {
  const program = `
    const out = [];
    for (const step of ${JSON.stringify(STEPS.map((x) => x.specifiers))}) {
      const c0 = process.cpuUsage();
      for (const s of step) await import(s);
      const c = process.cpuUsage(c0);
      out.push((c.user + c.system) / 1000);
    }
    process.stdout.write(JSON.stringify(out));
  `;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", program], {
    cwd: installed,
    encoding: "utf8",
    env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: "1", NODE_COMPILE_CACHE: "" },
  });
  return JSON.parse(out) as number[];
}
const stepRuns = Array.from({ length: RUNS }, steps);
const stepMs = STEPS.map((_, i) => median(stepRuns.map((r) => r[i]!)));

const rows = targets.map((t) => {
  const s = samples.get(t)!;
  return {
    label: t.label,
    modules: t.modules,
    goal: t.goal,
    cpuMs: median(s.map((x) => x.cpuMs)),
    cpuMsRuns: s.map((x) => x.cpuMs),
    wallMs: median(s.map((x) => x.wallMs)),
    moduleCount: moduleCount.get(t) ?? 0,
  };
});
rmSync(scratch, { recursive: true, force: true });
const openai = rows.find((r) => r.modules[0] === "openai");
const table = markdownTable(
  [
    "import",
    "CPU ms (median)",
    "min–max",
    "vs `openai`",
    "wall ms (median)",
    "modules loaded",
    "goal",
    "met?",
  ],
  rows.map((r) => [
    r.label,
    r.cpuMs.toFixed(0),
    `${Math.min(...r.cpuMsRuns).toFixed(0)}–${Math.max(...r.cpuMsRuns).toFixed(0)}`,
    openai ? `${(r.cpuMs / openai.cpuMs).toFixed(2)}×` : "-",
    r.wallMs.toFixed(0),
    r.moduleCount.toFixed(0),
    r.goal !== undefined ? `≤ ${r.goal} ms CPU` : "-",
    r.goal === undefined ? "-" : r.cpuMs <= r.goal ? "met" : "**missed**",
  ]),
);
const core = rows[0]!;
const source = rows[2]!;
const split = markdownTable(
  ["step (one process, in this order)", "CPU ms (median)"],
  STEPS.map((x, i) => [x.label, stepMs[i]!.toFixed(0)]),
);
report({
  name: "import",
  title: "Module import cost in a fresh process (`await import(...)`)",
  table: `${table}\n\n${split}`,
  results: {
    runs: RUNS,
    goalMs: GOAL_MS,
    rows: rows.map((r) => ({ ...r, modules: r.modules.map((m) => (m === coreBundle ? "<bundle>" : m)) })),
    steps: STEPS.map((x, i) => ({ ...x, cpuMs: stepMs[i], cpuMsRuns: stepRuns.map((r) => r[i]) })),
  },
  goals: `Goal (issue 16): \`import("@lash/core")\` ≤ ${GOAL_MS} ms CPU, judged on the published (built) package — ${core.cpuMs <= GOAL_MS ? "met" : "missed"} (${core.cpuMs.toFixed(0)} ms, ${openai ? `${(core.cpuMs / openai.cpuMs).toFixed(2)}× the raw \`openai\` SDK` : ""}); from the workspace's TypeScript sources ${source.cpuMs.toFixed(0)} ms (no goal: what \`pnpm lash\` and the tests pay).`,
  notes: [
    `Medians of ${RUNS} fresh processes per row (order rotated per run), no compile cache (NODE_DISABLE_COMPILE_CACHE=1); CPU = the child's user + system time around the imports only (Node's start-up excluded), wall beside it; "modules loaded" counts the files Node's module loader loaded (a registerHooks load hook, in the untimed check run). "Built" rows import @lash/* as a user's \`npm install\` gets them: each package's \`tsc -b\` output (dist/*.js, publishConfig.exports) in a node_modules layout with its third-party dependencies beside it (bench/perf/import/installed.ts, built first); "workspace sources" rows resolve @lash/* to their TypeScript sources (Node strips the types file by file); the peers are their published JavaScript. Each import was checked once before timing (the export a host uses must be a function).`,
    'The second table times, in one fresh process per run, each import after the ones above it (medians of the same number of runs): what each layer adds to the built import. The last two rows are no longer part of `import("@lash/core")`: the SQLite store (its driver and the store\'s code) is loaded on the first SqliteStore open (store/sqlite-lazy.ts), and @effect/sql only when the store first needs its SQL client (opening, reading a session and its paths, listing, usage, turns and the journal run on plain statements without it); they show what each adds.',
    "Loaded on first use, not at import: the SQLite store (better-sqlite3 and store/sqlite.ts at the first SqliteStore open, @effect/sql when the store first needs its SQL client; `checkSqliteFile`/`recoverSqliteFile` require the driver when called), the Lashlang evaluator and chevrotain (core's RLM mode), every vendor SDK (`createProvider`), ink (the CLI's TUI only).",
  ],
});
