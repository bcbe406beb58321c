// Lashlang evaluator benchmark (issue 7, acceptance 4): the same programs in Lashlang,
// in JavaScript inside QuickJS (quickjs-emscripten, sync build) and in plain V8 (`new Function`).
// Run: pnpm exec node bench/perf/lashlang/run.ts [--runs 5] [--json out.json]
import * as lashlang from "@lash/lashlang";
import { getQuickJS } from "quickjs-emscripten";
import { argValue, markdownTable, median, report } from "../util.ts";

const RUNS = Number(argValue("--runs") ?? 5);
// `--lashlang <path to src/index.ts>` measures another copy of the package (before/after comparisons).
const alt = argValue("--lashlang");
const { check, LashlangState, parse, runCell } = (
  alt ? await import(new URL(alt, `file://${process.cwd()}/`).href) : lashlang
) as typeof lashlang;

interface Workload {
  id: string;
  title: string;
  lashlang: string;
  js: string;
}

const workloads: Workload[] = [
  {
    id: "a",
    title: "(a) arithmetic loop, 1,000,000 iterations",
    lashlang: `
i = 0
total = 0
while i < 1000000 {
  total = total + (i * 3) % 7
  i = i + 1
}
finish total`,
    js: `let i = 0; let total = 0;
while (i < 1000000) { total = total + (i * 3) % 7; i = i + 1; }
return total;`,
  },
  {
    id: "b",
    title: "(b) build 100,000 records and group them",
    lashlang: `
items = []
for i in range(100000) {
  items = push(items, { id: i, group: format("g{}", i % 10), value: i * 2 })
}
groups = {}
for item in items {
  g = item.group
  if groups[g] == null {
    groups[g] = []
  }
  groups[g] = push(groups[g], item)
}
sizes = {}
for k in keys(groups) {
  sizes[k] = len(groups[k])
}
finish sizes`,
    js: `const items = [];
for (let i = 0; i < 100000; i++) items.push({ id: i, group: "g" + (i % 10), value: i * 2 });
const groups = {};
for (const item of items) { const g = item.group; if (groups[g] == null) groups[g] = []; groups[g].push(item); }
const sizes = {};
for (const k of Object.keys(groups)) sizes[k] = groups[k].length;
return sizes;`,
  },
  {
    id: "c",
    title: "(c) string work over 100,000 lines (format, join, split, grep_text)",
    lashlang: `
lines = []
for i in range(100000) {
  lines = push(lines, format("line {} value={} tag={}", i, i * 7, i % 3 == 0 ? "fizz" : "buzz"))
}
text = join(lines, "\\n")
parts = split(text, "\\n")
hits = grep_text(text, "fizz")
words = 0
for p in parts {
  words = words + len(split(p, " "))
}
finish { lines: len(parts), hits: len(hits), words: words }`,
    js: `const lines = [];
for (let i = 0; i < 100000; i++) lines.push("line " + i + " value=" + (i * 7) + " tag=" + (i % 3 === 0 ? "fizz" : "buzz"));
const text = lines.join("\\n");
const parts = text.split("\\n");
const hits = [];
let lineNo = 0;
for (const line of text.split("\\n")) { lineNo++; const at = line.indexOf("fizz"); if (at >= 0) hits.push({ line: lineNo, text: line, match: "fizz", start: at, end: at + 4 }); }
let words = 0;
for (const p of parts) words = words + p.split(" ").length;
return { lines: parts.length, hits: hits.length, words };`,
  },
];

// (d) a 300-line cell: parse + check (Lashlang) vs compiling equivalent JS source.
function cell300(): { lashlang: string; js: string } {
  const l: string[] = [];
  const j: string[] = [];
  for (let i = 0; l.length < 300; i++) {
    l.push(`rows_${i} = [{ id: ${i}, name: "row ${i}", tags: ["a", "b"] }, { id: ${i + 1}, name: "next" }]`);
    l.push(`for r in rows_${i} {`);
    l.push(`  if r.id % 2 == 0 and len(r.name) > 3 {`);
    l.push(`    acc_${i} = format("{}:{}", r.name, to_string(r.id * 2 + 1))`);
    l.push("  } else {");
    l.push(`    acc_${i} = slice(r.name, 0, 2) + trim("  x  ")`);
    l.push("  }");
    l.push("}");
    l.push(`res_${i} = await files.read({ path: "src/" + to_string(${i}) + ".rs" })`);
    l.push(`summary_${i} = res_${i}.ok ? "ok" : res_${i}.error`);
    j.push(
      `let rows_${i} = [{ id: ${i}, name: "row ${i}", tags: ["a", "b"] }, { id: ${i + 1}, name: "next" }];`,
    );
    j.push(`let acc_${i};`);
    j.push(`for (const r of rows_${i}) {`);
    j.push(`  if (r.id % 2 === 0 && r.name.length > 3) {`);
    j.push(`    acc_${i} = r.name + ":" + String(r.id * 2 + 1);`);
    j.push("  } else {");
    j.push(`    acc_${i} = r.name.slice(0, 2) + "  x  ".trim();`);
    j.push("  }");
    j.push("}");
    j.push(`const res_${i} = await files.read({ path: "src/" + String(${i}) + ".rs" });`);
    j.push(`const summary_${i} = res_${i}.ok ? "ok" : res_${i}.error;`);
  }
  return { lashlang: l.slice(0, 300).join("\n"), js: `(async function(files) {\n${j.join("\n")}\n})` };
}

// Each measurement records wall time and this process's CPU time (user + system): on a shared,
// oversubscribed machine the CPU time is the steadier number (wall time includes waiting for a core).
const cpu: number[] = [];
function cpuMs(c0: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}
function time(f: () => unknown): number {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  f();
  const wall = performance.now() - t0;
  cpu.push(cpuMs(c0));
  return wall;
}
async function timeAsync(f: () => Promise<unknown>): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await f();
  const wall = performance.now() - t0;
  cpu.push(cpuMs(c0));
  return wall;
}
/** The CPU time of the measurement just taken. */
const lastCpu = (): number => cpu[cpu.length - 1]!;

const QuickJS = await getQuickJS();
function quickjsRun(src: string): unknown {
  const vm = QuickJS.newContext();
  try {
    const r = vm.evalCode(src);
    const h = vm.unwrapResult(r);
    const v = vm.dump(h);
    h.dispose();
    return v;
  } finally {
    vm.dispose();
  }
}

const surface = {
  modules: {
    files: {
      operations: {
        read: {
          input: {
            type: "object",
            properties: { path: { type: "string" } },
            required: ["path"],
            additionalProperties: false,
          },
        },
      },
    },
  },
};
const rows: (string | number)[][] = [];
const results: Record<string, unknown> = {};
const fmt = (ms: number) => ms.toFixed(2);
type Medians = { lashlang: number; quickjs: number; v8: number };
/** Issue 7's goal: Lashlang faster than QuickJS on (a)–(c), by CPU time. (d) has none. */
const hasGoal = (id: string) => id !== "d";
const verdicts: string[] = [];
/** Issue 21's second goal: (c) within 2× of V8, by CPU time. */
let stringsVsV8 = "";
function row(id: string, title: string, wall: Medians, cpu: Medians): string[] {
  const speedup = cpu.quickjs / cpu.lashlang;
  const met = speedup > 1;
  if (hasGoal(id)) verdicts.push(`(${id}) ${speedup.toFixed(2)}× (${met ? "met" : "missed"})`);
  if (id === "c") {
    const ofV8 = cpu.lashlang / cpu.v8;
    stringsVsV8 = `${ofV8.toFixed(2)}× V8's CPU time (${ofV8 <= 2 ? "met" : "missed"})`;
  }
  return [
    title,
    fmt(cpu.lashlang),
    fmt(cpu.quickjs),
    fmt(cpu.v8),
    `${speedup.toFixed(2)}×`,
    hasGoal(id) ? "> 1.00× (faster than QuickJS)" : "-",
    hasGoal(id) ? (met ? "met" : "**missed**") : "-",
    `${fmt(wall.lashlang)} / ${fmt(wall.quickjs)} / ${fmt(wall.v8)}`,
    `${(wall.quickjs / wall.lashlang).toFixed(2)}×`,
  ];
}

/** JSON with sorted keys: the three engines' results compared as values, not by key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

// Checked before timing: every workload gives the same result in Lashlang, QuickJS and V8.
for (const w of workloads) {
  const res = await runCell(new LashlangState(), w.lashlang);
  if (res.outcome !== "finished") throw new Error(`${w.id}: ${res.error?.rendered}`);
  const expected = canonical(new Function(w.js)());
  const got = { lashlang: canonical(res.value), quickjs: canonical(quickjsRun(`(function(){${w.js}})()`)) };
  for (const [engine, value] of Object.entries(got))
    if (value !== expected)
      throw new Error(
        `(${w.id}) results differ before timing: ${engine} ${value.slice(0, 200)} vs V8 ${expected.slice(0, 200)}`,
      );
}

for (const w of workloads) {
  const lash: number[] = [];
  const qjs: number[] = [];
  const v8: number[] = [];
  const cpuOf = { lash: [] as number[], qjs: [] as number[], v8: [] as number[] };
  const values = { lash: "", qjs: "", v8: "" };
  for (let r = 0; r < RUNS; r++) {
    lash.push(
      await timeAsync(async () => {
        const res = await runCell(new LashlangState(), w.lashlang);
        if (res.outcome !== "finished") throw new Error(`${w.id}: ${res.error?.rendered}`);
        values.lash = canonical(res.value);
      }),
    );
    cpuOf.lash.push(lastCpu());
    qjs.push(
      time(() => {
        values.qjs = canonical(quickjsRun(`(function(){${w.js}})()`));
      }),
    );
    cpuOf.qjs.push(lastCpu());
    v8.push(
      time(() => {
        values.v8 = canonical(new Function(w.js)());
      }),
    );
    cpuOf.v8.push(lastCpu());
  }
  // And after: the timed runs produced the same results too.
  if (values.lash !== values.v8 || values.qjs !== values.v8)
    throw new Error(`${w.id}: results differ after timing`);
  const m = { lashlang: median(lash), quickjs: median(qjs), v8: median(v8) };
  const mc = { lashlang: median(cpuOf.lash), quickjs: median(cpuOf.qjs), v8: median(cpuOf.v8) };
  results[w.id] = {
    title: w.title,
    runs: RUNS,
    goal: "QuickJS / Lashlang CPU > 1",
    met: mc.quickjs / mc.lashlang > 1,
    medianMs: m,
    medianCpuMs: mc,
    all: { lash, qjs, v8 },
    cpu: cpuOf,
  };
  rows.push(row(w.id, w.title, m, mc));
}

{
  const { lashlang, js } = cell300();
  // Checked before timing: the cell parses and checks clean; the JavaScript compiles in QuickJS and V8.
  if (check(parse(lashlang), { surface }).length > 0) throw new Error("(d) the 300-line cell does not check");
  quickjsRun(js); // unwrapResult throws when QuickJS cannot compile it
  if (typeof new Function("files", js) !== "function")
    throw new Error("(d) V8 did not compile the JavaScript");
  const lash: number[] = [];
  const qjs: number[] = [];
  const v8: number[] = [];
  const cpuOf = { lash: [] as number[], qjs: [] as number[], v8: [] as number[] };
  for (let r = 0; r < RUNS; r++) {
    lash.push(
      time(() => {
        const errs = check(parse(lashlang), { surface });
        if (errs.length > 0) throw new Error(`(d) check failed: ${errs[0]!.message}`);
      }),
    );
    cpuOf.lash.push(lastCpu());
    qjs.push(time(() => quickjsRun(js)));
    cpuOf.qjs.push(lastCpu());
    v8.push(time(() => new Function("files", js)));
    cpuOf.v8.push(lastCpu());
  }
  const m = { lashlang: median(lash), quickjs: median(qjs), v8: median(v8) };
  const mc = { lashlang: median(cpuOf.lash), quickjs: median(cpuOf.qjs), v8: median(cpuOf.v8) };
  results.d = {
    title: "(d) parse + check a 300-line cell",
    runs: RUNS,
    medianMs: m,
    medianCpuMs: mc,
    all: { lash, qjs, v8 },
    cpu: cpuOf,
  };
  rows.push(row("d", "(d) parse + check a 300-line cell (JS: compile only)", m, mc));
}

report({
  name: "lashlang",
  title: `Lashlang evaluator vs QuickJS vs V8 (median of ${RUNS} runs; CPU ms first, wall beside)`,
  table: markdownTable(
    [
      "workload",
      "CPU ms Lashlang",
      "CPU ms QuickJS",
      "CPU ms V8",
      "QuickJS / Lashlang, CPU",
      "goal",
      "met?",
      "wall ms Lashlang / QuickJS / V8",
      "QuickJS / Lashlang, wall",
    ],
    rows,
  ),
  results,
  goals: `Goal (issue 7): Lashlang faster than QuickJS on (a)–(c), by CPU time (a ratio above 1.00× means Lashlang is faster): ${verdicts.join("; ")}. Goal (issue 21): the same, and (c) within 2× of V8 by CPU time: Lashlang takes ${stringsVsV8}. (d) compares Lashlang's parse + check with compiling JavaScript; no goal.`,
  notes: [
    "Checked before timing: each of (a)–(c) gives the same result (compared as sorted-key JSON) in Lashlang, QuickJS and V8; (d)'s cell parses and checks clean and its JavaScript compiles in both engines. The timed runs' results are compared again after.",
    "QuickJS: quickjs-emscripten sync build, fresh context per run (context creation included). V8: the same JavaScript through `new Function` in this Node process.",
    "CPU = this process's user + system time per run (the primary figure: on a shared machine wall time includes waiting for a core); medians of the runs.",
  ],
});
