/** Property tests (fast-check): no JS exceptions, printer round trip, snapshot round trip. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LangError, LashlangState, type Program, parse, printProgram, runCell } from "../src/index.ts";

const names = fc.constantFrom("a", "b", "xs", "r", "n", "s");
const scalar = fc.oneof(
  fc.constant("null"),
  fc.constant("true"),
  fc.constant("false"),
  fc.integer({ min: -50, max: 50 }).map((n) => (n < 0 ? `(${n})` : String(n))),
  fc.constantFrom('"x"', '"héllo 🙂"', '""', "'a\\nb'", "1.5"),
);
const builtins = [
  "len",
  "to_string",
  "trim",
  "keys",
  "values",
  "empty",
  "to_int",
  "json_parse",
  "push",
  "contains",
  "slice",
  "format",
  "split",
  "join",
  "range",
  "find",
];

const expr: fc.Memo<string> = fc.memo((d) => {
  if (d <= 1) return fc.oneof(scalar, names);
  return fc.oneof(
    scalar,
    names,
    fc
      .tuple(
        expr(d - 1),
        fc.constantFrom("+", "-", "*", "/", "%", "==", "!=", "<", ">=", "and", "or"),
        expr(d - 1),
      )
      .map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.array(expr(d - 1), { maxLength: 3 }).map((xs) => `[${xs.join(", ")}]`),
    fc
      .array(fc.tuple(names, expr(d - 1)), { maxLength: 3 })
      .map((es) => `{ ${es.map(([k, v]) => `${k}: ${v}`).join(", ")} }`),
    fc.tuple(expr(d - 1), expr(d - 1)).map(([a, b]) => `(${a}, ${b})`),
    fc
      .tuple(fc.constantFrom(...builtins), fc.array(expr(d - 1), { maxLength: 3 }))
      .map(([f, xs]) => `${f}(${xs.join(", ")})`),
    fc.tuple(expr(d - 1), names).map(([a, n]) => `${a}.${n}`),
    fc.tuple(expr(d - 1), expr(d - 1)).map(([a, b]) => `${a}[${b}]`),
    fc.tuple(expr(d - 1), expr(d - 1), expr(d - 1)).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
    expr(d - 1).map((a) => `not ${a}`),
    expr(d - 1).map((a) => `-${a}`),
    expr(d - 1).map((a) => `${a}?`),
    fc.tuple(expr(d - 1), names, expr(d - 1)).map(([e, n, src]) => `[${e} for ${n} in ${src} if ${n}]`),
  );
});

const stmt: fc.Memo<string> = fc.memo((d) => {
  const simple = fc.oneof(
    fc.tuple(names, expr(3)).map(([n, e]) => `${n} = ${e}`),
    fc.tuple(names, names, expr(2)).map(([n, f, e]) => `${n}.${f} = ${e}`),
    fc.tuple(names, expr(2), expr(2)).map(([n, i, e]) => `${n}[${i}] = ${e}`),
    expr(3).map((e) => `print ${e}`),
    // Lashlang has no statement separator: a bare expression statement that starts with `(`, `[` or `-`
    // would continue the previous line, so the generator (like the printer's users) avoids them.
    // An unwrap at statement level is printed parenthesised, so it is excluded for the same reason.
    expr(3).filter((e) => !/^[([-]/.test(e) && !e.endsWith("?")),
  );
  if (d <= 1) return simple;
  const block = fc.array(stmt(d - 1), { maxLength: 3 }).map((xs) => `{\n${xs.join("\n")}\n}`);
  return fc.oneof(
    simple,
    fc.tuple(expr(2), block, fc.option(block)).map(([c, a, b]) => `if ${c} ${a}${b ? ` else ${b}` : ""}`),
    fc.tuple(names, expr(2), block).map(([n, e, b]) => `for ${n} in ${e} ${b}`),
    fc.tuple(expr(2), block).map(([c, b]) => `while ${c} ${b}`),
    expr(2).map((e) => `finish ${e}`),
  );
});

const program = fc.array(stmt(3), { minLength: 1, maxLength: 6 }).map((xs) => xs.join("\n"));

/** `LASHLANG_PROPERTY_RUNS=20000 pnpm exec vitest run packages/lashlang/test/properties.test.ts` for a broad local run. */
const RUNS = Number(process.env.LASHLANG_PROPERTY_RUNS ?? 0) || 0;
const runs = (n: number): number => RUNS || n;
/** Vitest timeout: the configured default, or room for a broad run. */
const TIMEOUT = RUNS ? RUNS * 20 : undefined;

// A wider grammar for the printer: every statement shape (bare expressions starting with `(`, `[`,
// `-` or ending in `?`, labels, `let`, contextual words as names, keyword keys, number spellings).
const pNames = fc.constantFrom(
  "a",
  "b",
  "xs",
  "Type",
  "start",
  "sleep",
  "finish",
  "while",
  "let",
  "parallel",
  "list",
  "until",
  "trigger",
);
const pScalar = fc.oneof(
  fc.constantFrom("null", "true", "false", "0", "7", "1.5", "12.50", "1.", "()", '"x"', "'a\\nb'", 'r"a\\b"'),
  fc.constantFrom("1000000000000000000000", "0.0000000000000000000000001", "123456789012345678901234567890"),
);
const pKey = fc.constantFrom("a", "if", "x_1", '"a b"', "Type", "null");
const pExpr: fc.Memo<string> = fc.memo((d) => {
  if (d <= 1) return fc.oneof(pScalar, pNames);
  const e = pExpr(d - 1);
  return fc.oneof(
    pScalar,
    pNames,
    fc
      .tuple(e, fc.constantFrom("+", "-", "*", "%", "==", "<=", ">", "and", "||"), e)
      .map(([a, op, b]) => `${a} ${op} ${b}`),
    fc.array(e, { maxLength: 3 }).map((xs) => `[${xs.join(", ")}]`),
    fc
      .array(fc.tuple(pKey, e), { maxLength: 2 })
      .map((es) => `{ ${es.map(([k, v]) => `${k}: ${v}`).join(", ")} }`),
    fc.tuple(e, e).map(([a, b]) => `(${a}, ${b})`),
    e.map((a) => `(${a},)`),
    e.map((a) => `(${a})`),
    fc
      .tuple(fc.constantFrom("len", "f", "start", "while"), fc.array(e, { maxLength: 2 }))
      .map(([f, xs]) => `${f}(${xs.join(", ")})`),
    fc.tuple(e, pKey).map(([a, n]) => `${a}.${n}`),
    fc.tuple(e, pKey, fc.array(e, { maxLength: 2 })).map(([a, n, xs]) => `${a}.${n}(${xs.join(", ")})`),
    fc.tuple(e, e).map(([a, b]) => `${a}[${b}]`),
    fc.tuple(e, e, e).map(([c, a, b]) => `${c} ? ${a} : ${b}`),
    e.map((a) => `not ${a}`),
    e.map((a) => `-${a}`),
    e.map((a) => `await ${a}`),
    e.map((a) => `${a}?`),
    fc.constantFrom("Type { a: str, b: int? }", 'Type { "x y": list[int | null], e: enum["a", "b"] }'),
    fc.tuple(e, pNames, e).map(([x, n, src]) => `[${x} for ${n} in ${src} if ${n}]`),
  );
});
const pStmt: fc.Memo<string> = fc.memo((d) => {
  const simple = fc.oneof(
    fc.tuple(pNames, pExpr(3)).map(([n, e]) => `${n} = ${e}`),
    fc.tuple(pNames, pExpr(3)).map(([n, e]) => `let ${n} = ${e}`),
    fc.tuple(pNames, pKey, pExpr(2)).map(([n, f, e]) => `${n}.${f} = ${e}`),
    fc.tuple(pNames, pExpr(2), pExpr(2)).map(([n, i, e]) => `${n}[${i}] = ${e}`),
    pExpr(3).map((e) => `print ${e}`),
    pExpr(3),
    pExpr(3),
    fc.constantFrom("break", "continue"),
    pExpr(2).map((e) => `@label(title: "t")\n${e}`),
  );
  if (d <= 1) return simple;
  const block = fc
    .tuple(fc.array(pStmt(d - 1), { maxLength: 4 }), fc.constantFrom("\n", "; ", " "))
    .map(([xs, sep]) => `{\n${xs.join(sep)}\n}`);
  return fc.oneof(
    simple,
    simple,
    fc.tuple(pExpr(2), block, fc.option(block)).map(([c, a, b]) => `if ${c} ${a}${b ? ` else ${b}` : ""}`),
    fc.tuple(pExpr(2), block, pExpr(2), block).map(([c, a, c2, b]) => `if ${c} ${a} else if ${c2} ${b}`),
    fc.tuple(pNames, pExpr(2), block).map(([n, e, b]) => `for ${n} in ${e} ${b}`),
    fc.tuple(pExpr(2), block).map(([c, b]) => `while ${c} ${b}`),
    pExpr(2).map((e) => `finish ${e}`),
  );
});
const pItem = fc.oneof(
  pStmt(3),
  pStmt(3),
  pStmt(3),
  fc.constantFrom("type T = list", "type T = Type", "type V = list[int] | null", "type W = Type { a: str }"),
);
const printable = fc.oneof(
  program,
  fc.array(pItem, { minLength: 1, maxLength: 7 }).map((xs) => xs.join("\n")),
);

/** The AST without source offsets. */
function shape(p: Program): unknown {
  return JSON.parse(
    JSON.stringify(p.items, (k, v: unknown) => (k === "start" || k === "end" ? undefined : v)),
  );
}

/** print → reparse gives the same AST, and printing that again gives the same text. */
function roundTrips(src: string): void {
  let p: Program;
  try {
    p = parse(src);
  } catch {
    return;
  }
  const once = printProgram(p);
  const again = parse(once);
  expect(shape(again)).toEqual(shape(p));
  expect(printProgram(again)).toBe(once);
}

describe("printer round trip: statement boundaries and spellings", () => {
  // Lashlang has no statement separator: each case parses to statements whose printed form must not
  // merge with (or split from) its neighbour.
  const cases: [string, string][] = [
    // the fast-check counterexample: `(a?)` at a statement start after `a` reparsed as a call `a((a?))`
    [
      'for a in (a + a) {\nwhile "x"? {\na\na?[{  }]\n}\n}',
      'for a in a + a {\n  while ("x"?) {\n    (a)\n    (a?)[{}]\n  }\n}',
    ],
    ["x = a\nb?.c", "x = (a)\n(b?).c"],
    ["x = a.b\nb?(1)", "x = (a.b)\n(b?)\n1"],
    ["print r.f\ny?.g(1)", "print (r.f)\n(y?).g(1)"],
    ["x = a + b\nc? + 1", "x = a + (b)\n(c?) + 1"],
    ["x = c ? d : e\nf?", "x = c ? d : (e)\n(f?)"],
    ["finish not a\nb?", "finish not (a)\n(b?)"],
    // a bare statement starting with `[` or `-` (reachable after a parenthesised statement)
    ["x = (a)\n([1])", "x = (a)\n([1])"],
    ["(a)\n([1])", "(a)\n([1])"],
    ["print 1\n(-a)", "print 1\n(-a)"],
    ["(a)\n(b?)\n([1])", "(a)\n(b?)\n([1])"],
    ["a\n(b?)", "a((b?))"], // the source itself is one call
    ["x = (a + b) * (c)\n(y + 1) * 2", "x = (a + b) * (c)\n(y + 1) * 2"],
    ["x = (a)\n(y + 1) * 2", "x = (a)\n(y + 1) * 2"],
    ["if a {}\n[1]", "if a {}\n[1]"],
    [
      '@label(title: "t")\nx = a\n@label(title: "u")\n[1]',
      '@label(title: "t")\nx = a\n@label(title: "u")\n[1]',
    ],
    ["type T = list\n([1])", "type T = list\n([1])"],
    // contextual words as names, `let`, number spellings, integer receivers
    ["x = (Type)\nif (Type) {}", "x = (Type)\nif (Type) {}"],
    ["(while)\n(finish).a", "(while)\n(finish.a)"],
    ["(let)\nx = 1", "(let)\nx = 1"],
    ["let x = 1", "let x = 1"],
    [
      "x = 1000000000000000000000 + 0.0000000000000000000000001",
      "x = 1000000000000000000000 + 0.0000000000000000000000001",
    ],
    ["x = (1).a + (2).f()", "x = (1).a + (2).f()"],
  ];
  for (const [src, printed] of cases) {
    it(JSON.stringify(src), () => {
      expect(printProgram(parse(src))).toBe(printed);
      roundTrips(src);
    });
  }
});

describe("properties", () => {
  it(
    "generated programs never throw a JavaScript exception",
    async () => {
      await fc.assert(
        fc.asyncProperty(program, async (src) => {
          const st = new LashlangState();
          const r = await runCell(st, `a = 1\nb = "x"\nxs = [1, 2]\nr = {n: 1}\n${src}`, undefined, {
            stepBudget: 20_000,
            check: false,
          });
          expect(["finished", "continued", "error"]).toContain(r.outcome);
          if (r.outcome === "error") expect(typeof r.error?.message).toBe("string");
          const checked = await runCell(new LashlangState(), src, undefined, { stepBudget: 20_000 });
          expect(["finished", "continued", "error"]).toContain(checked.outcome);
        }),
        { numRuns: runs(300) },
      );
    },
    TIMEOUT,
  );

  it(
    "printing and reparsing an AST is stable",
    () => {
      fc.assert(
        fc.property(printable, (src) => roundTrips(src)),
        { numRuns: runs(1000) },
      );
    },
    TIMEOUT,
  );

  it(
    "snapshot → restore → snapshot is identical",
    async () => {
      await fc.assert(
        fc.asyncProperty(program, async (src) => {
          const st = new LashlangState();
          await runCell(st, `a = (1, "t")\nb = {"1": [1.5, null], z: Type { q: str? }}\n${src}`, undefined, {
            stepBudget: 20_000,
            check: false,
          });
          const snap = st.snapshot();
          expect(LashlangState.restore(snap).snapshot()).toBe(snap);
        }),
        { numRuns: runs(200) },
      );
    },
    TIMEOUT,
  );

  it("LangError is the only error type the evaluator surfaces", () => {
    expect(new LangError("TypeError", "x")).toBeInstanceOf(Error);
  });
});
