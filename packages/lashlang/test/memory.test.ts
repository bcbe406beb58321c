/**
 * The memory budget (issue 14, item 3): every growth path is charged as values are built, a cell over
 * its budget ends with a language error (never a V8 out-of-memory abort), and its assignments are
 * discarded. The last test runs the runaway cell through the real CLI in a child process
 * whose heap is too small to survive it without the budget.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type CellResult, type LashlangHost, LashlangState, runCell } from "../src/index.ts";

const MIB = 1024 * 1024;

async function run(source: string, memoryBudget = MIB, host?: LashlangHost, state = new LashlangState()) {
  return runCell(state, source, host, {
    memoryBudget,
    surface: { modules: { files: { operations: { read: {} } } } },
  });
}

function expectOverBudget(r: CellResult, budget = "1 MiB"): void {
  expect(r.outcome, r.error?.rendered ?? JSON.stringify(r.value)).toBe("error");
  expect(r.error!.kind).toBe("Memory");
  expect(r.error!.message).toBe(
    `memory budget exceeded: the cell allocated more than ${budget} of values (budget ${budget})`,
  );
  expect(r.error!.rendered).toContain("hint: build smaller values");
  expect(r.allocated).toBeLessThanOrEqual(r.memoryBudget);
}

describe("memory budget: each growth path is charged", () => {
  // Each program grows (or churns) without bound; the step budget (10,000,000) is far away, so only
  // the memory budget can end it. The marker line is where the error must point.
  const cases: { name: string; program: string; at: string }[] = [
    { name: "range", program: "xs = range(1000000)", at: "range(1000000)" },
    {
      name: "in-place push",
      program: "xs = []\nwhile true {\n  xs = push(xs, 1)\n}",
      at: "xs = push(xs, 1)",
    },
    {
      name: "push that copies (the list is shared)",
      program: "xs = range(1000)\nwhile true {\n  ys = push(xs, 1)\n}",
      at: "push(xs, 1)",
    },
    {
      name: "in-place list concatenation",
      program: "xs = []\nwhile true {\n  xs = xs + [1, 2, 3]\n}",
      at: "[1, 2, 3]",
    },
    { name: "list concatenation", program: "xs = [1]\nwhile true {\n  xs = xs + xs\n}", at: "xs + xs" },
    { name: "string doubling", program: 's = "x"\nwhile true {\n  s = s + s\n}', at: "s + s" },
    {
      name: "string concatenation of a number (rope: charged the shorter side)",
      program: 'big = join(range(1000), ",")\ni = 0\nwhile true {\n  s = big + i\n  i = i + 1\n}',
      at: "big + i",
    },
    {
      name: "join",
      program:
        'xs = []\nfor i in range(1000) {\n  xs = push(xs, "abcdefghij")\n}\nwhile true {\n  s = join(xs, ",")\n}',
      at: 'join(xs, ",")',
    },
    {
      name: "split",
      program: 's = join(range(1000), ",")\nwhile true {\n  parts = split(s, ",")\n}',
      at: 'split(s, ",")',
    },
    {
      name: "format",
      program: 's = join(range(1000), ",")\nwhile true {\n  t = format("{}{}", s, s)\n}',
      at: 'format("{}{}", s, s)',
    },
    {
      name: "to_string",
      program: "xs = range(1000)\nwhile true {\n  s = to_string(xs)\n}",
      at: "to_string(xs)",
    },
    {
      name: "record literal",
      program: "while true {\n  r = { a: 1, b: 2, c: 3 }\n}",
      at: "{ a: 1, b: 2, c: 3 }",
    },
    { name: "list literal", program: "while true {\n  r = [1, 2, 3, 4]\n}", at: "[1, 2, 3, 4]" },
    { name: "tuple literal", program: "while true {\n  t = (1, 2, 3)\n}", at: "1, 2, 3)" },
    {
      name: "record keys",
      program: "r = {}\ni = 0\nwhile true {\n  r[to_string(i)] = i\n  i = i + 1\n}",
      at: "to_string(i)] = i",
    },
    {
      name: "comprehension",
      program: "xs = range(1000)\nwhile true {\n  ys = [x * 2 for x in xs]\n}",
      at: "[x * 2 for x in xs]",
    },
    {
      name: "copy on write of a shared record",
      program: "r = {}\nfor i in range(100) {\n  r[to_string(i)] = i\n}\nwhile true {\n  s = r\n  r.x = 1\n}",
      at: "r.x = 1",
    },
    {
      name: "slice of a list",
      program: "xs = range(1000)\nwhile true {\n  ys = slice(xs, 0, 900)\n}",
      at: "slice(xs, 0, 900)",
    },
    {
      name: "keys",
      program: "r = {}\nfor i in range(1000) {\n  r[to_string(i)] = i\n}\nwhile true {\n  ks = keys(r)\n}",
      at: "keys(r)",
    },
    {
      name: "json_parse",
      program: "s = to_string(range(1000))\nwhile true {\n  v = json_parse(s)\n}",
      at: "json_parse(s)",
    },
    {
      name: "grep_text",
      program: 's = join(range(1000), "\\n")\nwhile true {\n  hits = grep_text(s, "1")\n}',
      at: 'grep_text(s, "1")',
    },
    { name: "print", program: 's = join(range(1000), ",")\nwhile true {\n  print s\n}', at: "print s" },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const r = await run(c.program);
      expectOverBudget(r);
      const line = c.program.split("\n")[r.error!.line - 1]!;
      expect(line.slice(r.error!.column - 1)).toContain(c.at);
    });
  }

  it("host results (a module operation's value)", async () => {
    const big = "x".repeat(10_000);
    const host: LashlangHost = { call: async () => ({ ok: true, value: { content: big } }) };
    const r = await run('while true {\n  r = await files.read({ path: "a" })\n}', MIB, host);
    expectOverBudget(r);
    expect(r.error!.line).toBe(2);
    const r2 = await run('while true {\n  r = (await files.read({ path: "a" }))?\n}', MIB, host);
    expectOverBudget(r2);
  });
});

describe("memory budget: semantics", () => {
  it("the result reports the bytes allocated and the budget; the default is 256 MiB", async () => {
    const r = await runCell(new LashlangState(), "xs = range(1000)\nfinish len(xs)");
    expect(r.outcome).toBe("finished");
    expect(r.memoryBudget).toBe(256 * MIB);
    expect(r.allocated).toBe(64 + 8 * 1000);
  });

  it("an accumulating string is charged its pieces, not a square: 20,000 lines fit in 1 MiB", async () => {
    const r = await run('out = ""\nfor i in range(20000) {\n  out = out + "line\\n"\n}\nfinish len(out)');
    expect(r.outcome, r.error?.rendered).toBe("finished");
    expect(r.value).toBe(100_000);
    expect(r.allocated).toBeLessThan(MIB);
  });

  it("a cell over its budget leaves the state as it was before the cell (in-place appends included)", async () => {
    const state = new LashlangState();
    expect((await run("x = 1\nxs = [1, 2, 3]\nr = { a: [1] }", MIB, undefined, state)).outcome).toBe(
      "continued",
    );
    const r = await run(
      "x = 2\nxs = push(xs, 4)\nr.a = push(r.a, 2)\nfresh = 1\nbig = range(1000000)",
      MIB,
      undefined,
      state,
    );
    expectOverBudget(r);
    expect(state.get("x")).toBe(1);
    expect(state.get("xs")).toEqual([1, 2, 3]);
    expect(state.get("r")).toEqual({ a: [1] });
    expect(state.get("fresh")).toBeUndefined();
    expect(state.get("big")).toBeUndefined();
    // the next cell runs normally on the old state
    const next = await run("xs = push(xs, 4)\nfinish xs", MIB, undefined, state);
    expect(next.value).toEqual([1, 2, 3, 4]);
  });

  it("other runtime errors still keep the assignments made before them", async () => {
    const state = new LashlangState();
    const r = await run("x = 1\ny = nope", MIB, undefined, state);
    expect(r.error!.message).toBe("unknown name `nope`");
    expect(state.get("x")).toBe(1);
  });

  it("each cell has its own meter", async () => {
    const state = new LashlangState();
    for (let i = 0; i < 3; i++) {
      const r = await run("xs = range(100000)", MIB, undefined, state);
      expect(r.outcome, r.error?.rendered).toBe("continued");
      expect(r.allocated).toBe(64 + 800_000);
    }
  });

  it("a string past the engine's own size limit is a language error, not a crash", async () => {
    const r = await run('s = "x"\nwhile true {\n  s = s + s\n}', Number.MAX_SAFE_INTEGER);
    expect(r.outcome).toBe("error");
    expect(r.error!.kind).toBe("Memory");
    expect(r.error!.message).toContain("a string grew past the JavaScript engine's size limit");
  });

  it("ordinary programs are far from the default budget (the evaluator benchmark's workloads)", async () => {
    const records = await runCell(
      new LashlangState(),
      `items = []
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
finish len(groups)`,
    );
    expect(records.value).toBe(10);
    const lines = await runCell(
      new LashlangState(),
      `lines = []
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
    );
    expect(lines.value).toEqual({ lines: 100000, hits: 33334, words: 400000 });
    // 100,000 records ≈ 27 MiB and 100,000 lines of string work ≈ 67 MiB of 256
    expect(records.allocated).toBeLessThan(32 * MIB);
    expect(lines.allocated).toBeLessThan(80 * MIB);
  });
});

describe("memory budget: the issue's runaway cell through the real CLI", () => {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
  const lash = join(repo, "scripts", "lash.ts");
  const dir = mkdtempSync(join(tmpdir(), "lashlang-memory-"));
  const file = join(dir, "runaway.lash");
  writeFileSync(file, "xs = []\nwhile true {\n  xs = push(xs, range(1000000))\n}\n");
  // A heap far smaller than the 4 GB the runaway reached in the issue, but larger than the budget.
  const node = (...args: string[]) =>
    spawnSync(process.execPath, ["--max-old-space-size=512", lash, "lashlang", "run", file, ...args], {
      encoding: "utf8",
      timeout: 120_000,
    });

  it("ends with the memory budget error and exit code 1 under a 512 MB heap", () => {
    const r = node();
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      "memory budget exceeded: the cell allocated more than 256 MiB of values (budget 256 MiB)\n--> line 3, column 3",
    );
    expect(r.stderr).not.toMatch(/heap out of memory|FATAL ERROR/);
  });

  it("without the budget the same heap is exhausted (the limit above is a real one)", () => {
    const r = node("--memory-budget", "100000");
    expect(r.status).not.toBe(0);
    expect(r.status).not.toBe(1);
    expect(r.stderr).toMatch(/heap out of memory/);
  });

  it("--memory-budget sets the budget in MiB and rejects nonsense", () => {
    const r = node("--memory-budget", "64");
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain("(budget 64 MiB)");
    const bad = node("--memory-budget", "-1");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--memory-budget expects a positive number of MiB per cell");
  });
});
