import { describe, expect, it } from "vitest";
import {
  type CellResult,
  checkCell,
  type LashlangHost,
  LashlangSession,
  LashlangState,
  type OperationCall,
  type OperationResult,
  parse,
  runCell,
} from "../src/index.ts";
import { errorOf, run, value } from "./helpers.ts";

describe("operators and coercions", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["7 / 2", 3.5],
    ["-7 % 3", -1],
    ["true + 2", 3],
    ["null + 1", 1],
    ["'3' * 2", 6],
    ["' 4 ' - 1", 3],
    ["'a' + 1", "a1"],
    ["1 + 'a'", "1a"],
    ["'x' + null", "xnull"],
    ["'x' + [1]", "x[1]"],
    ["[1] + [2]", [1, 2]],
    ["((1,) + (2,))[1]", 2],
    ["1 == 1.0", true],
    ["1 == '1'", false],
    ["[1, 2] == [1, 2]", true],
    ["(1, 2) == [1, 2]", false],
    ["{a: 1, b: 2} == {b: 2, a: 1}", true],
    ["null == null", true],
    ["'abc' < 'abd'", true],
    ["'10' < 9", false],
    ["true > 0", true],
    ["0 or 'x'", true],
    ["1 and 0", false],
    ["not []", false],
    ["!{}", false],
    ["not ()", true],
    ["not ''", true],
    ["-'2'", -2],
    ["false ? 1 : true ? 2 : 3", 2],
  ])("%s", async (src, expected) => {
    expect(await value(`finish ${src}`, { check: false })).toEqual(expected);
  });

  it("division by zero yields inf / NaN without error", async () => {
    expect(await value("finish [to_string(1 / 0), to_string(0 % 0)]")).toEqual(["inf", "NaN"]);
  });

  it.each([
    ["(1,) + [2]", "can't concatenate list and tuple"],
    ["[1] - 1", "expected a number, got list"],
    ["'abc' - 1", "expected a number"],
    ["{} < 1", "expected a number, got record"],
  ])("%s is a type error", async (src, msg) => {
    expect(await errorOf(`finish ${src}`, { check: false })).toContain(msg);
  });

  it("and/or short-circuit", async () => {
    expect(await value("finish [false and missing, true or missing]")).toEqual([false, true]);
  });
});

describe("reads", () => {
  it("null-safe fields and out-of-range indexes", async () => {
    expect(
      await value(
        "r = {a: null}\nfinish [r.a.b.c, r['missing'], [1][5], [1, 2][-1], 'abc'[-1], 'a🙂'[1], null[0], r['a']]",
      ),
    ).toEqual([null, null, null, 2, "c", "🙂", null, null]);
  });
  it("read errors", async () => {
    expect(await errorOf("x = 1\nfinish x.f")).toBe("can't read `.f` from number");
    expect(await errorOf("finish [1][0.5]")).toBe("index must be an integer");
    expect(await errorOf("x = 1\nfinish x[0]")).toBe("can't index number");
    expect(await errorOf("finish nope")).toBe("unknown name `nope`");
  });
});

describe("scoping and copy-on-write", () => {
  it("assignments in blocks are global; loop bindings are restored", async () => {
    expect(
      await value(
        "item = 'outer'\nfor item in [1, 2] { last = item }\nif true { inner = 1 }\nxs = [n for n in [1, 2]]\nfinish [item, last, inner, n]",
        { check: false },
      ).catch((e: Error) => e.message),
    ).toContain("unknown name `n`");
    expect(await value("item = 'outer'\nfor item in [1, 2] { last = item }\nfinish [item, last]")).toEqual([
      "outer",
      2,
    ]);
  });

  it("path assignment never aliases", async () => {
    expect(
      await value(
        "a = {l: [1, 2], r: {x: 1}}\nb = a\nb.l[0] = 9\nb.r.x = 2\nc = [a]\nc[0].l[1] = 7\nfinish [a, b, c[0]]",
      ),
    ).toEqual([
      { l: [1, 2], r: { x: 1 } },
      { l: [9, 2], r: { x: 2 } },
      { l: [1, 7], r: { x: 1 } },
    ]);
  });

  it("in-place push keeps other references intact", async () => {
    expect(await value("a = [1]\nb = a\na = push(a, 2)\nb = push(b, 3)\nfinish [a, b]")).toEqual([
      [1, 2],
      [1, 3],
    ]);
    expect(await value("xs = [1, 2]\nfor x in xs { xs = push(xs, x) }\nfinish xs")).toEqual([1, 2, 1, 2]);
    expect(await value("g = {}\ng['k'] = []\nv = g['k']\ng['k'] = push(g['k'], 1)\nfinish [g, v]")).toEqual([
      { k: [1] },
      [],
    ]);
  });

  it("assignment errors", async () => {
    expect(await errorOf("t = (1, 2)\nt[0] = 1")).toBe("can't assign tuple indexes; tuples are immutable");
    expect(await errorOf("l = [1]\nl[3] = 1")).toBe("list assignment index out of bounds");
    expect(await errorOf("l = [1]\nl['0'] = 1")).toBe("list assignment index must be an integer");
    expect(await errorOf("r = {}\nr['a'].b = 1")).toBe("can't assign through missing key `a`");
    expect(await errorOf("r = {a: 1}\nr.a.b = 1")).toContain("number");
    expect(await errorOf("s = 'abc'\ns[0] = 'x'")).toContain("string");
  });

  it("record index keys are string-coerced", async () => {
    expect(await value("r = {}\nr[1] = 'x'\nfinish [r['1'], r[1], keys(r)]")).toEqual(["x", "x", ["1"]]);
  });
});

class RecordingHost implements LashlangHost {
  calls: OperationCall[] = [];
  prints: string[] = [];
  readonly answer: (c: OperationCall) => OperationResult | Promise<OperationResult>;
  constructor(answer: (c: OperationCall) => OperationResult | Promise<OperationResult>) {
    this.answer = answer;
  }
  async call(c: OperationCall): Promise<OperationResult> {
    this.calls.push(c);
    return this.answer(c);
  }
  print(_v: unknown, text: string): void {
    this.prints.push(text);
  }
}

describe("module operations, wrappers and ?", () => {
  const host = () =>
    new RecordingHost((c) =>
      c.operation === "fail" ? { ok: false, error: "boom" } : { ok: true, value: { got: c.args } },
    );

  it("wrappers without ?, raw values with ?", async () => {
    const h = host();
    expect(
      await value(
        "a = await m.ok({x: 1})\nb = await m.fail({})\nc = await m.ok(1, 2)?\nfinish [a, b, c]",
        {},
        h,
      ),
    ).toEqual([
      { ok: true, value: { got: { x: 1 } } },
      { ok: false, error: "boom" },
      { got: { args: [1, 2] } },
    ]);
    expect(h.calls.map((c) => c.id)).toEqual([
      "lashlang:cell:resource:m.ok:10:0",
      "lashlang:cell:resource:m.fail:33:0",
      "lashlang:cell:resource:m.ok:54:0",
    ]);
  });

  it("call ids count occurrences per site", async () => {
    const h = host();
    await run("for i in range(3) { await m.ok({i: i}) }", {}, h);
    expect(h.calls.map((c) => c.id.split(":").pop())).toEqual(["0", "1", "2"]);
  });

  it("? on a failed operation aborts with the reference message (and, as there, no hint)", async () => {
    const r = await run("x = 1\ny = await m.fail({})?\nx = 2", {}, host());
    expect(r.error?.message).toBe("`?` unwrapped failed module operation: boom");
    expect(r.error?.hint).toBeUndefined();
  });

  it("generic ? on values", async () => {
    expect(await value("finish {ok: true, value: 3}?")).toBe(3);
    expect(await errorOf("finish {ok: false, error: 'e'}?")).toBe("`?` unwrapped failed tool result: e");
    expect(await errorOf("finish 3?", { check: false })).toBe(
      "`?` expected a tool result wrapper, got number",
    );
    expect(await errorOf("finish {ok: 1}?")).toBe("`?` expected a tool result wrapper with boolean `ok`");
  });

  it("a rejected host promise becomes an error wrapper", async () => {
    const h = new RecordingHost(() => Promise.reject(new Error("network down")));
    expect(await value("finish await m.x({})", {}, h)).toEqual({ ok: false, error: "network down" });
  });

  it("print goes to the host and the result", async () => {
    const h = host();
    const r = await run("print 'a'\nprint {b: 1, a: 2}\nprint (1, 'x')", {}, h);
    expect(h.prints).toEqual(["a", '{"b":1,"a":2}', '[1,"x"]']);
    expect(r.prints).toEqual(["a", { b: 1, a: 2 }, [1, "x"]]);
  });
});

describe("aggregate await", () => {
  it("runs the calls of a literal record concurrently and keeps the shape", async () => {
    let inFlight = 0;
    let peak = 0;
    let release!: () => void;
    const bothStarted = new Promise<void>((r) => {
      release = r;
    });
    const h = new RecordingHost(async (c) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      if (inFlight === 2) release();
      await bothStarted;
      inFlight--;
      return { ok: true, value: (c.args as { v: string }).v };
    });
    const v = await value("r = await { a: m.x({v: 'A'})?, b: m.x({v: 'B'}), tag: 'kept' }\nfinish r", {}, h);
    expect(v).toEqual({ a: "A", b: { ok: true, value: "B" }, tag: "kept" });
    expect(peak).toBe(2);
  });

  it("all siblings complete before the first failed ? aborts", async () => {
    const h = new RecordingHost((c) =>
      c.operation === "bad" ? { ok: false, error: "no" } : { ok: true, value: 1 },
    );
    const r = await run("r = await [m.bad({})?, m.good({})?, m.bad({})?]", {}, h);
    expect(h.calls.length).toBe(3);
    expect(r.error?.message).toBe("`?` unwrapped failed module operation: no");
    expect(r.error?.column).toBe(12);
  });

  it("a host without callBatch receives calls before any completes", async () => {
    const started: string[] = [];
    const resolvers: (() => void)[] = [];
    const h: LashlangHost = {
      call: (c) =>
        new Promise<OperationResult>((res) => {
          started.push(c.operation);
          resolvers.push(() => res({ ok: true, value: c.operation }));
          if (resolvers.length === 2) for (const r of resolvers) r();
        }),
    };
    expect(await value("finish await (m.a({}), m.b({}))", {}, h)).toEqual([
      { ok: true, value: "a" },
      { ok: true, value: "b" },
    ]);
    expect(started).toEqual(["a", "b"]);
  });
});

describe("Type and validate", () => {
  it("Type literals become JSON Schema", async () => {
    expect(
      await value(
        "finish Type { a: str, b: int?, c: float | null, d: list[enum['x', 'y']], e: any, f: dict, g: bool }",
      ),
    ).toEqual({
      $lash_type: {
        type: "object",
        properties: {
          a: { type: "string" },
          b: { type: "integer" },
          c: { anyOf: [{ type: "number" }, { type: "null" }] },
          d: { type: "array", items: { type: "string", enum: ["x", "y"] } },
          e: {},
          f: { type: "object" },
          g: { type: "boolean" },
        },
        required: ["a", "c", "d", "e", "f", "g"],
        additionalProperties: false,
      },
    });
  });

  it("validate returns the value or reports a JSONPath", async () => {
    expect(await value("T = Type { a: int }\nfinish validate({a: 2, extra: 1}, T)")).toEqual({
      a: 2,
      extra: 1,
    });
    expect(await errorOf("finish validate({a: [{b: 1.5}]}, Type { a: list[Type { b: int }] })")).toBe(
      "validation failed: $.a[0].b: expected integer, got number",
    );
    expect(await errorOf("finish validate({}, Type { x: str })")).toBe(
      "validation failed: $: missing required field `x`",
    );
    expect(await errorOf("finish validate({e: 'z'}, Type { e: enum['a', 'b'] })")).toBe(
      "validation failed: $.e: expected one of [a, b], got z",
    );
    expect(await value("type Pair = { a: int }\nfinish validate({a: 1}, Pair)")).toEqual({ a: 1 });
    expect(await value("Inner = Type { x: int }\nfinish validate({i: {x: 1}}, Type { i: Inner })")).toEqual({
      i: { x: 1 },
    });
  });
});

describe("diagnostics", () => {
  it("renders line, column, caret and hint", async () => {
    const r = await run("x = 1\ny = x ? if", { check: false });
    expect(r.error?.rendered).toBe(
      "unexpected `if`\n--> line 2, column 9\ny = x ? if\n        ^~\nhint: use `cond ? yes : no` for inline conditionals",
    );
    // a runtime error points at its whole statement, as the reference's do
    const rt = await run("a = {foo: null}\nb = a.foo.bar + missing", { check: false });
    expect(rt.error?.rendered).toBe(
      "unknown name `missing`\n--> line 2, column 1\nb = a.foo.bar + missing\n^~~~~~~~~~~~~~~~~~~~~~~",
    );
  });

  it("parse errors name the expected token", async () => {
    expect((await run("if true {\n  x = 1\n")).error?.message).toBe("expected `}`, found end of input");
    expect((await run("finish")).error?.message).toBe(
      "`finish` requires a value; use `finish null` to finish with null",
    );
    expect((await run("submit 1")).error?.message).toBe("`submit` was removed; use `finish <value>`");
    expect((await run("break")).error?.message).toBe("`break` can only be used inside a loop");
    expect((await run("x = 'abc")).error?.message).toBe("unterminated string");
    expect((await run("a & b")).error?.message).toBe("unexpected character `&`");
    const deep = `x = ${"(".repeat(45)}1${")".repeat(45)}`;
    expect((await run(deep)).error?.message).toBe(
      "expression nesting too deep (limit 40); flatten the program",
    );
  });

  it("postfix ? vs ternary follows the newline-blind lookahead", () => {
    expect(() => parse("x = a?\ny = 1")).not.toThrow();
    expect(() => parse("x = (await h)?\nfinish ok ? 1 : 2")).toThrow();
    expect(() => parse("x = (await h)?\nprint ok ? 1 : 2")).not.toThrow();
  });
});

describe("checker", () => {
  const surface = {
    modules: {
      files: {
        operations: {
          read: {
            tool: "read_file",
            input: {
              type: "object",
              properties: { path: { type: "string" }, mode: { type: "string", enum: ["text", "bytes"] } },
              required: ["path"],
              additionalProperties: false,
            },
          },
        },
      },
      "workspace.default": { operations: { list: {} } },
    },
  };
  const err = (src: string, opts = {}) => {
    const r = checkCell(src, { surface, ...opts });
    return r.ok ? null : r.error.message;
  };
  it.each([
    ["await files.read({ pth: 'x' })", "operation `files.read` expects"],
    ["await files.read({ mode: 'text' })", "got a record without `path`"],
    [
      "await files.read({ path: 'a', mode: 'lines' })",
      'expects `mode` to be one of ["text", "bytes"], got "lines"',
    ],
    ["await files.write({ path: 'a' })", "module `files` does not expose operation `write`"],
    ["await web.fetch({})", "unknown module `web`"],
    [
      "await workspace.list({})",
      "module `workspace` does not expose operation `list`; available identity-qualified paths: workspace.default.list",
    ],
    ["read_file({ path: 'a' })", "tools must be called through module paths, e.g. `files.read(...)`"],
    ["r = {k: 1}\nx = r.other", "object type has no field `other`"],
    ["r = {k: 1}\nr.other = 2", "object type has no field `other`"],
    ["for c in 'abc' { }", "cannot iterate over str; expected a list"],
    ["x = {} == 1", "operator `==` does not accept {} and int"],
    ["x = 1 and 2", "operator `and` does not accept int and int"],
    ["x = [1] - 1", "operator `-` does not accept"],
    ["x = {a: 1} + 1", "operator `+` does not accept"],
    ["process p(a: str) { finish a }", "lashlang feature `processes` is disabled by this host"],
    ["x = sleep for 10", "lashlang feature `sleep` is disabled by this host"],
    ["x = wait_signal('s')", "lashlang feature `process_signals` is disabled by this host"],
  ])("%s", (src, msg) => {
    expect(err(src)).toContain(msg);
  });

  it("accepts the gradual cases", () => {
    expect(err("await files.read({ path: 'a' })")).toBeNull();
    expect(err("r = {k: 1}\nr['other'] = 2\nx = r['other']")).toBeNull();
    expect(err("x = prev.anything and other")).toBeNull();
    expect(
      err("seen = []\nfor a in [1] { for b in [2] { seen = seen + [a] } seen = seen + [b] }"),
    ).toBeNull();
    expect(err("p = await workspace.default.list({})")).toBeNull();
  });

  it("checks start against declared processes when enabled", () => {
    const on = { abilities: { processes: true } };
    expect(err("h = start p(a: 1)", on)).toBe("unknown process `p`");
    expect(err("process p(a: str) { finish a }\nh = start p(b: 1)", on)).toContain(
      "process `p` does not accept argument `b`",
    );
    expect(err("process p(a: str) { finish a }\nh = start p()", on)).toContain(
      "process `p` is missing argument `a`",
    );
    expect(err("process p(a: str) { finish zz }", on)).toBe("unknown name `zz`");
    expect(err("process p(a: str) { finish a }\nh = start p(a: 'x')", on)).toBeNull();
  });

  it("check errors change nothing in the state", async () => {
    const st = new LashlangState();
    await runCell(st, "x = 1");
    const r = await runCell(st, "x = 2\ny = nope_builtin()");
    expect(r.outcome).toBe("error");
    expect(r.error?.phase).toBe("check");
    expect(st.get("x")).toBe(1);
    expect(st.get("y")).toBeUndefined();
  });
});

describe("REPL state, snapshots, projected bindings", () => {
  it("runtime errors keep earlier assignments", async () => {
    const st = new LashlangState();
    const r = await runCell(st, "a = 1\nb = a + 1\nc = nope\nd = 4");
    expect(r.outcome).toBe("error");
    expect([st.get("a"), st.get("b"), st.get("d")]).toEqual([1, 2, undefined]);
  });

  it("snapshot round trip keeps tuples, records with numeric keys, images and types", async () => {
    const st = new LashlangState();
    st.set("img", { type: "image", id: "i1", mime: "image/png", label: "l", size: 3 });
    await runCell(st, "t = (1, 'x')\nr = {}\nr['2'] = 1\nr['a'] = 2\nr['1'] = 3\nT = Type { a: int }");
    const snap = st.snapshot();
    expect(JSON.parse(snap).globals.t).toEqual({ __lashlang_snapshot_tuple__: true, items: [1, "x"] });
    const back = LashlangState.restore(snap);
    expect(back.snapshot()).toBe(snap);
    const r = await runCell(back, "finish [t == (1, 'x'), keys(r), img.size, validate({a: 1}, T)]");
    expect(r.value).toEqual([true, ["2", "a", "1"], 3, { a: 1 }]);
  });

  it("projected bindings are lazy, read-only, shadow globals and snapshot as markers", async () => {
    let reads = 0;
    const st = new LashlangState();
    st.set("history", "old global");
    const projected = {
      history: {
        get: () => {
          reads++;
          return [{ role: "user", content: "hi" }];
        },
        typeName: "list<HistoryItem>",
        ref: { kind: "memory", key: "h" },
      },
    };
    await runCell(st, "x = 1", undefined, { projected });
    expect(reads).toBe(0);
    const r = await runCell(st, "h = history\nfirst = history[0].content\nfinish len(history)", undefined, {
      projected,
    });
    expect(r.value).toBe(1);
    expect(reads).toBe(1);
    const bad = await runCell(st, "history = 1", undefined, { projected });
    expect(bad.error?.message).toBe("`history` is a read-only projected binding");
    expect(bad.error?.hint).toBe("copy the projected value into a new variable before changing it");
    const snap = JSON.parse(st.snapshot());
    expect(snap.globals.h).toEqual({
      __lashlang_snapshot_projected__: true,
      name: "history",
      type_name: "list<HistoryItem>",
      projection_ref: { kind: "memory", key: "h" },
    });
    expect(snap.globals.first).toBe("hi");
    expect(snap.globals.history).toBeUndefined();
    const restored = LashlangState.restore(JSON.stringify(snap));
    const missing = await runCell(restored, "finish h");
    expect(missing.outcome).toBe("error");
    expect(missing.error?.message).toContain("could not be re-resolved");
    const ok = await runCell(restored, "finish h[0].role", undefined, {
      resolveProjection: () => [{ role: "user" }],
    });
    expect(ok.value).toBe("user");
  });

  it("path assignment on a copy of a projected value leaves the projection intact", async () => {
    const data = [{ a: 1 }];
    const projected = { p: { get: () => data } };
    const r = await runCell(new LashlangState(), "c = p\nc[0].a = 2\nfinish [c, p]", undefined, {
      projected,
    });
    expect(r.value).toEqual([[{ a: 2 }], [{ a: 1 }]]);
  });

  it("a session scopes call ids per cell", async () => {
    const ids: string[] = [];
    const s = new LashlangSession({
      host: {
        call: async (c) => {
          ids.push(c.id);
          return { ok: true, value: null };
        },
      },
    });
    await s.run("await m.x({})");
    await s.run("await m.x({})");
    expect(ids).toEqual(["lashlang:cell1:resource:m.x:6:0", "lashlang:cell2:resource:m.x:6:0"]);
    const again = LashlangSession.restore(s.snapshot());
    expect(again.snapshot()).toBe(s.snapshot());
  });
});

describe("step budget", () => {
  it("stops while true {} with the budget error and keeps earlier assignments", async () => {
    const st = new LashlangState();
    const r: CellResult = await runCell(
      st,
      "before = 'kept'\nn = 0\nwhile true {\n  n = n + 1\n}",
      undefined,
      { stepBudget: 5000 },
    );
    expect(r.outcome).toBe("error");
    expect(r.error?.message).toBe("step budget exhausted: the cell ran more than 5000 steps");
    expect(r.error?.hint).toContain("stepBudget");
    expect(r.steps).toBe(5001);
    expect(st.get("before")).toBe("kept");
    expect(st.get("n")).toBeGreaterThan(1000);
  });
  it("reports steps used and the default budget", async () => {
    const r = await run("x = 0\nfor i in range(10) { x = x + i }\nfinish x");
    expect(r.value).toBe(45);
    expect(r.stepBudget).toBe(10_000_000);
    expect(r.steps).toBe(23);
  });
  it("bounds effectful loops too", async () => {
    const r = await run(
      "while true { await m.x({}) }",
      { stepBudget: 50 },
      { call: async () => ({ ok: true, value: 1 }) },
    );
    expect(r.error?.message).toContain("step budget exhausted");
  });
});

describe("copy-on-write around in-place appends", () => {
  it("pushing a list into itself appends a snapshot, never a cycle", async () => {
    expect(await value("xs = [1]\nxs = push(xs, xs)\nfinish xs")).toEqual([1, [1]]);
    expect(await value("xs = [1]\nxs = xs + [xs]\nfinish xs")).toEqual([1, [1]]);
    expect(await value("r = {k: [1]}\nr.k = push(r.k, r.k)\nfinish r")).toEqual({ k: [1, [1]] });
    expect(await value("xs = [1]\nb = true\nxs = push(xs, b ? xs : 0)\nfinish xs")).toEqual([1, [1]]);
  });
  it("a pushed list is shared: mutating the original later does not change the copy", async () => {
    expect(await value("y = [1]\nx = push([], y)\ny[0] = 5\nfinish x")).toEqual([[1]]);
    expect(await value("y = [1]\nx = []\nz = x\nx = push(x, y)\ny[0] = 5\nfinish [x, z]")).toEqual([
      [[1]],
      [],
    ]);
  });
});
