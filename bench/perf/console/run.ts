// The web console of `lash serve` (issue 24, acceptance 5): how much the browser downloads and
// how soon the page paints, against a real daemon. The daemon: `node apps/cli/src/main.ts serve
// --port 0 --no-auth` in a fresh project (`lash init` + `lash build`: the `hello` agent), the
// project's mock wire server as its model (no model call is made: listing agents needs none).
// The browser: the headless Chromium of packages/export/test/browser.ts over loopback.
//
// Reported:
// - bundle size: index.html, the script and the stylesheet as served — raw bytes and the gzip
//   bytes the daemon sends to a browser (Accept-Encoding: gzip);
// - page load, `--loads` times (default 15) each in a fresh browser context (a cold cache, no
//   session storage): first paint and first contentful paint (Chromium's paint timing), the
//   moment the agent list is on the page (checked, polled every animation frame), and the
//   renderer's main-thread CPU for the load (CDP `Performance.getMetrics`: TaskDuration, of it
//   ScriptDuration) — CPU first, wall times beside it; median and p95 over the loads;
// - the same with a warm cache (a reload in the same context: the hashed assets come from the
//   browser's cache, only index.html is revalidated).
//
// Checked before timing: a first load (which also makes the daemon build the console from source
// when dist/ is stale) must render the agent list with the `hello` agent and make no request to any
// other origin; every timed load must render it too. A failed check prints
// `CONSOLE BENCHMARK FAILED: …` and exits 1 (no report).
//
// Goals: the script and stylesheet as sent (gzip) ≤ 250 KB together; cold-cache first contentful
// paint ≤ 1000 ms and the agent list ≤ 1500 ms (median) — on loopback, so the figures are the
// page's own cost, not a network's.
//
// pnpm exec node bench/perf/console/run.ts [--json out.json] [--loads 15]
import { type ChildProcess, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { startMockServer } from "@lash/providers/testing";
import type { Browser, Page } from "playwright-core";
import { launch } from "../../../packages/export/test/browser.ts";
import { startServe } from "../serve/shape.ts";
import { argValue, markdownTable, median, percentile, report } from "../util.ts";

const LOADS = Number(argValue("--loads") ?? 15);
const GOAL_GZIP_KB = 250;
const GOAL_FCP_MS = 1000;
const GOAL_LISTED_MS = 1500;

const root = join(import.meta.dirname, "..", "..", "..");
const MAIN = join(root, "apps", "cli", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "lash-bench-console-"));
const children: ChildProcess[] = [];
let browser: Browser | undefined;
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function fail(message: string): never {
  process.stderr.write(`CONSOLE BENCHMARK FAILED: ${message}\n`);
  void browser?.close();
  process.exit(1);
}

const mock = await startMockServer({ replies: [] });
const work = join(dir, "work");
mkdirSync(work, { recursive: true });
const env = {
  PATH: process.env.PATH,
  HOME: dir,
  LASH_HOME: join(dir, "home"),
  LASH_MODEL: "openai-compatible/mock",
  OPENAI_COMPATIBLE_BASE_URL: mock.baseUrl("openai-chat"),
};
for (const args of [["init"], ["build"]]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: work, env, encoding: "utf8" });
  if (r.status !== 0) fail(`lash ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
}
const { daemon, base } = await startServe([MAIN, "serve", "--port", "0", "--no-auth"], { cwd: work, env });
children.push(daemon);

const html = await (await fetch(`${base}/`)).text();
const assetPaths = [...html.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1]!);
if (assetPaths.length !== 2)
  fail(`index.html names ${assetPaths.length} assets, not a script and a stylesheet`);
interface Size {
  readonly file: string;
  readonly raw: number;
  readonly gzip: number;
}
const sizes: Size[] = [
  { file: "index.html", raw: Buffer.byteLength(html), gzip: gzipSync(html, { level: 9 }).length },
];
for (const path of assetPaths) {
  const raw = Buffer.from(
    await (await fetch(`${base}${path}`, { headers: { "accept-encoding": "identity" } })).arrayBuffer(),
  );
  // what a browser gets: the daemon's own gzip
  const sent = await fetch(`${base}${path}`, { headers: { "accept-encoding": "gzip" } });
  if (sent.headers.get("content-encoding") !== "gzip")
    fail(`${path} is not sent gzipped to a client that accepts gzip`);
  sizes.push({
    file: path.replace("/console/", ""),
    raw: raw.length,
    gzip: Number(sent.headers.get("content-length")),
  });
  await sent.arrayBuffer();
}

// ---- page loads
interface Load {
  readonly fp: number;
  readonly fcp: number;
  readonly listed: number;
  readonly taskMs: number;
  readonly scriptMs: number;
}

async function measure(page: Page, reload: boolean): Promise<Load> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const before = await cdp.send("Performance.getMetrics");
  if (reload) await page.reload({ waitUntil: "load" });
  else await page.goto(`${base}/#/agents`, { waitUntil: "load" });
  // a function, not a string: the page's CSP forbids eval
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as {
          document: { querySelector(s: string): { textContent: string | null } | null };
        }
      ).document.querySelector(".agents .agent a")?.textContent === "hello",
    undefined,
    { polling: "raf", timeout: 30_000 },
  );
  const listed = (await page.evaluate("performance.now()")) as number;
  const paints = (await page.evaluate(
    `Object.fromEntries(performance.getEntriesByType("paint").map((e) => [e.name, e.startTime]))`,
  )) as Record<string, number>;
  const after = await cdp.send("Performance.getMetrics");
  const metric = (m: typeof after, name: string) => m.metrics.find((x) => x.name === name)?.value ?? 0;
  await cdp.detach();
  const fp = paints["first-paint"];
  const fcp = paints["first-contentful-paint"];
  if (fp === undefined || fcp === undefined)
    fail("Chromium reported no first paint / first contentful paint");
  return {
    fp,
    fcp,
    listed,
    // seconds in CDP; TaskDuration counts the renderer's main-thread work since the page started
    taskMs: (metric(after, "TaskDuration") - (reload ? metric(before, "TaskDuration") : 0)) * 1000,
    scriptMs: (metric(after, "ScriptDuration") - (reload ? metric(before, "ScriptDuration") : 0)) * 1000,
  };
}

browser = await launch();
{
  // the check (and the daemon's build of the console from source, if dist/ is stale)
  const context = await browser.newContext();
  const page = await context.newPage();
  const foreign: string[] = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(base)) foreign.push(r.url());
  });
  await measure(page, false);
  if (foreign.length > 0) fail(`the page asked other origins: ${foreign.join(", ")}`);
  await context.close();
}
const cold: Load[] = [];
const warm: Load[] = [];
for (let i = 0; i < LOADS; i++) {
  const context = await browser.newContext();
  const page = await context.newPage();
  cold.push(await measure(page, false));
  warm.push(await measure(page, true));
  await context.close();
}
await browser.close();
daemon.kill("SIGTERM");
await mock.close();

const kb = (n: number) => (n / 1024).toFixed(1);
const assetsGzip = sizes.filter((s) => s.file !== "index.html").reduce((n, s) => n + s.gzip, 0);
const ms = (xs: readonly number[]) => `${median(xs).toFixed(0)} / ${percentile(xs, 95).toFixed(0)}`;
const row = (label: string, loads: readonly Load[]) => [
  label,
  ms(loads.map((l) => l.taskMs)),
  ms(loads.map((l) => l.scriptMs)),
  ms(loads.map((l) => l.fp)),
  ms(loads.map((l) => l.fcp)),
  ms(loads.map((l) => l.listed)),
];
const fcpMet = median(cold.map((l) => l.fcp)) <= GOAL_FCP_MS;
const listedMet = median(cold.map((l) => l.listed)) <= GOAL_LISTED_MS;
const sizeMet = assetsGzip <= GOAL_GZIP_KB * 1024;

const table = [
  markdownTable(
    ["file", "raw KB", "gzip KB (as sent)"],
    [
      ...sizes.map((s) => [s.file, kb(s.raw), kb(s.gzip)]),
      ["script + stylesheet", kb(sizes.slice(1).reduce((n, s) => n + s.raw, 0)), kb(assetsGzip)],
    ],
  ),
  "",
  markdownTable(
    [
      `page load (${LOADS}×)`,
      "renderer CPU ms (main thread)",
      "of it script ms",
      "first paint ms",
      "first contentful paint ms",
      "agent list shown ms",
    ],
    [row("cold cache", cold), row("warm cache (reload)", warm)],
  ),
  "",
  "Each cell: median / p95. Times from navigation start, on loopback.",
].join("\n");

const goals = [
  `Goals: script + stylesheet ≤ ${GOAL_GZIP_KB} KB gzip — ${kb(assetsGzip)} KB, ${sizeMet ? "met" : "NOT met"};`,
  `cold first contentful paint ≤ ${GOAL_FCP_MS} ms (median) — ${median(cold.map((l) => l.fcp)).toFixed(0)} ms, ${fcpMet ? "met" : "NOT met"};`,
  `cold agent list ≤ ${GOAL_LISTED_MS} ms (median) — ${median(cold.map((l) => l.listed)).toFixed(0)} ms, ${listedMet ? "met" : "NOT met"}.`,
  "No goal is set for the renderer CPU or the warm-cache loads (reported).",
].join(" ");

report({
  name: "console",
  title: "Web console: bundle size and first paint against lash serve (headless Chromium)",
  table,
  goals,
  results: { sizes, cold, warm, loads: LOADS },
  notes: [
    'The first contentful paint is index.html\'s own line ("Loading the lash console…"), drawn before the script runs; the agent list column is when the page is usable.',
    "Most of the script is `effect` and `@effect/platform` (about 550 of its 690 KB minified), which the typed client `@lash/client` (HttpApiClient over the API schema) brings; Preact is about 14 KB of it, `marked` about 50 KB.",
  ],
});
process.exit(0);
