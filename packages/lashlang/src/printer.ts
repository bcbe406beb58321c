/** Prints an AST back to canonical Lashlang source (print → reparse → print is stable). */
import type { Expr, Item, Label, ProcessDecl, Program, Stmt, TypeDecl, TypeExpr } from "./ast.ts";
import { KEYWORD_WORDS } from "./lexer.ts";

const PREC: { [k: string]: number } = {
  tuple: 1,
  tern: 2,
  or: 3,
  and: 4,
  "==": 5,
  "!=": 5,
  "<": 5,
  "<=": 5,
  ">": 5,
  ">=": 5,
  "+": 6,
  "-": 6,
  "*": 7,
  "/": 7,
  "%": 7,
  unary: 8,
  postfix: 9,
};

function prec(e: Expr): number {
  switch (e.k) {
    case "tuple":
      return e.items.length === 0 ? 10 : 1;
    case "tern":
      return 2;
    case "or":
    case "and":
      return PREC[e.k]!;
    case "bin":
      return PREC[e.op]!;
    case "neg":
    case "not":
    case "await":
      return 8;
    case "field":
    case "index":
    case "mcall":
      return 9;
    default:
      return 10;
  }
}

export function printString(s: string): string {
  let out = '"';
  for (const ch of s) {
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else out += ch;
  }
  return `${out}"`;
}

function printKey(k: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : printString(k);
}

/**
 * A number literal as plain decimal digits (the lexer has no exponent form): the shortest round-trip
 * digits of `String(n)`, with any exponent expanded, so `Number(printNumber(n)) === n` for every
 * finite double (`1e21` → `1000000000000000000000`, `1e-25` → `0.0000000000000000000000001`).
 */
function printNumber(n: number): string {
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const sign = m[1]!;
  const digits = m[2]! + (m[3] ?? "");
  const point = 1 + Number(m[4]);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Contextual words that start a primary form when followed by `{`, an identifier or `for`/`until`. */
const PRIMARY_WORDS = new Set(["Type", "start", "sleep"]);

/** The receiver of `.name`: an integer literal would lex as `1.` (a number), so it is parenthesised. */
function receiver(e: Expr): string {
  const s = paren(e, 9);
  return e.k === "lit" && typeof e.value === "number" && /^\d+$/.test(s) ? `(${s})` : s;
}

function paren(e: Expr, min: number): string {
  const s = printExpr(e);
  return prec(e) < min ? `(${s})` : s;
}

export function printExpr(e: Expr): string {
  switch (e.k) {
    case "lit":
      if (e.value === null) return "null";
      if (typeof e.value === "boolean") return String(e.value);
      if (typeof e.value === "number") return printNumber(e.value);
      return printString(e.value);
    case "var":
      // `Type {`, `start x`, `sleep for` would reparse as a type literal, a start, a sleep.
      return PRIMARY_WORDS.has(e.name) ? `(${e.name})` : e.name;
    case "list":
      return `[${e.items.map((x) => paren(x, 2)).join(", ")}]`;
    case "tuple":
      if (e.items.length === 0) return "()";
      if (e.items.length === 1) return `(${paren(e.items[0]!, 2)},)`;
      return e.items.map((x) => paren(x, 2)).join(", ");
    case "record":
      return e.entries.length === 0
        ? "{}"
        : `{ ${e.entries.map((en) => `${printKey(en.key)}: ${paren(en.value, 2)}`).join(", ")} }`;
    case "comp":
      return `[${paren(e.elem, 2)} ${e.clauses
        .map((c) => (c.kind === "for" ? `for ${c.name} in ${paren(c.expr, 2)}` : `if ${paren(c.expr, 2)}`))
        .join(" ")}]`;
    case "field":
      return `${receiver(e.obj)}.${printKey(e.name)}`;
    case "index":
      return `${paren(e.obj, 9)}[${printExpr(e.index)}]`;
    case "call":
      return `${e.name}(${e.args.map((x) => paren(x, 2)).join(", ")})`;
    case "mcall":
      return `${receiver(e.recv)}.${printKey(e.op)}(${e.args.map((x) => paren(x, 2)).join(", ")})`;
    case "unwrap":
      // Parenthesised so the newline-blind `?`/ternary lookahead always sees `)` next.
      return `(${paren(e.expr, 9)}?)`;
    case "neg":
      return `-${paren(e.expr, 8)}`;
    case "not":
      return `not ${paren(e.expr, 8)}`;
    case "await":
      return `await ${paren(e.expr, 8)}`;
    case "and":
    case "or":
      return `${paren(e.l, PREC[e.k]!)} ${e.k} ${paren(e.r, PREC[e.k]! + 1)}`;
    case "bin": {
      const p = PREC[e.op]!;
      return `${paren(e.l, p)} ${e.op} ${paren(e.r, p + 1)}`;
    }
    case "tern":
      return `${paren(e.cond, 3)} ? ${paren(e.then, 2)} : ${paren(e.else, 2)}`;
    case "type":
      return `Type ${printTypeObject(e.type)}`;
    case "start":
      return `start ${e.name}(${e.args.map((a) => `${printKey(a.key)}: ${paren(a.value, 2)}`).join(", ")})`;
    case "sleep":
      return `sleep ${e.mode} ${paren(e.expr, 8)}`;
  }
}

function printTypeObject(t: TypeExpr): string {
  if (t.k !== "object") return printType(t);
  if (t.fields.length === 0) return "{}";
  return `{ ${t.fields.map((f) => `${printKey(f.name)}: ${printType(f.type)}${f.optional ? "?" : ""}`).join(", ")} }`;
}

export function printType(t: TypeExpr): string {
  switch (t.k) {
    case "prim":
      return t.name;
    case "null":
      return "null";
    case "lit":
      return printString(t.value);
    case "enum":
      return `enum[${t.values.map(printString).join(", ")}]`;
    case "list":
      return `list[${printType(t.item)}]`;
    case "object":
      return `Type ${printTypeObject(t)}`;
    case "union":
      return t.members.map(printType).join(" | ");
    case "ref":
      return t.path.join(".");
    case "process":
      return `Process<${printType(t.input)}, ${printType(t.output)}>`;
    case "trigger":
      return `TriggerHandle<${printType(t.event)}>`;
  }
}

function printLabel(l: Label | undefined, ind: string): string {
  if (!l) return "";
  const d = l.description !== undefined ? `, description: ${printString(l.description)}` : "";
  return `${ind}@label(title: ${printString(l.title)}${d})\n`;
}

/*
 * Statement boundaries. Lashlang has no statement separator (newlines and `;` are whitespace), so a
 * statement ends only where its last expression cannot continue. Printing must therefore keep each
 * boundary where the parser put it:
 * - an expression statement printed with a leading `[` or `-` would continue the previous statement's
 *   expression (index / subtraction): after such a statement it is parenthesised as a whole;
 * - a leading `(` (a parenthesised unwrap `(x?)`, a lower-precedence left operand, the wrap above)
 *   is a call after a name (`a(…)`, `r.f(…)`): the previous statement's trailing name is then
 *   parenthesised (`x = (a)`), which keeps its AST;
 * - an expression statement that prints starting with a statement word (`while`, `finish`, `let`…)
 *   would reparse as that statement: it is parenthesised as a whole.
 * Labelled statements start with `@`, which continues nothing.
 */

/** Words that make a statement (or item) of their own when they start one. */
const STATEMENT_WORDS =
  /^(?:finish|fail|yield|wake|while|break|continue|parallel|let|process|type|trigger)(?![A-Za-z0-9_])/;

/** The var/field the printed `e` ends with (it would turn a following `(` into a call), if any. */
function trailingName(e: Expr, min: number): Expr | null {
  if (prec(e) < min) return null; // printed in parentheses
  switch (e.k) {
    case "var":
      return PRIMARY_WORDS.has(e.name) ? null : e;
    case "field":
      return e;
    case "bin":
      return trailingName(e.r, PREC[e.op]! + 1);
    case "and":
    case "or":
      return trailingName(e.r, PREC[e.k]! + 1);
    case "tern":
      return trailingName(e.else, 2);
    case "neg":
    case "not":
    case "await":
    case "sleep":
      return trailingName(e.expr, 8);
    case "tuple":
      return e.items.length >= 2 ? trailingName(e.items[e.items.length - 1]!, 2) : null;
    default:
      return null;
  }
}

/** A statement's value; with `closeEnd`, a trailing name is parenthesised so a following `(` stays apart. */
function printValue(e: Expr, closeEnd: boolean): string {
  const s = printExpr(e);
  if (!closeEnd) return s;
  const leaf = trailingName(e, 0);
  if (!leaf) return s;
  const t = printExpr(leaf);
  return `${s.slice(0, s.length - t.length)}(${t})`;
}

/** How an item's printed text ends: a block or keyword (nothing continues it), a type, an expression. */
function endOf(it: Item): "closed" | "type" | "expr" {
  switch (it.k) {
    case "process":
    case "if":
    case "for":
    case "while":
    case "break":
    case "continue":
      return "closed";
    case "typedecl":
      return "type"; // `list`, `enum`, `Type` would take a following `[` / `{`
    default:
      return "expr";
  }
}

/** Prints a statement or item sequence, one per line, keeping every statement boundary (see above). */
function printItems(items: readonly Item[], ind: string): string[] {
  const out: string[] = [];
  let closeEnd = false;
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.k === "process" || it.k === "typedecl") {
      out.push(printDecl(it));
      closeEnd = false;
      continue;
    }
    let text = printStmtBody(it, ind, closeEnd);
    closeEnd = false;
    const prev = i > 0 ? items[i - 1] : undefined;
    if (it.k === "expr" && !it.label && prev) {
      const end = endOf(prev);
      if (end !== "closed") {
        if (text.startsWith("[") || text.startsWith("-") || (end === "type" && text.startsWith("{")))
          text = `(${text})`;
        closeEnd = end === "expr" && text.startsWith("(");
      }
    }
    out.push(`${printLabel(it.label, ind)}${ind}${text}`);
  }
  return out.reverse();
}

function printBlock(b: Stmt[], ind: string): string {
  if (b.length === 0) return "{}";
  return `{\n${printItems(b, `${ind}  `).join("\n")}\n${ind}}`;
}

function needsKeywordSafe(name: string): string {
  return KEYWORD_WORDS.has(name) ? printString(name) : name;
}

export function printStmt(s: Stmt, ind = ""): string {
  return `${printLabel(s.label, ind)}${ind}${printStmtBody(s, ind, false)}`;
}

function printStmtBody(s: Stmt, ind: string, closeEnd: boolean): string {
  switch (s.k) {
    case "if": {
      let body = `if ${printExpr(s.cond)} ${printBlock(s.then, ind)}`;
      if (s.else) {
        const only = s.else.length === 1 ? s.else[0]! : null;
        if (only && only.k === "if" && !only.label) body += ` else ${printStmtBody(only, ind, false)}`;
        else body += ` else ${printBlock(s.else, ind)}`;
      }
      return body;
    }
    case "for":
      return `for ${s.name} in ${printExpr(s.iter)} ${printBlock(s.body, ind)}`;
    case "while":
      return `while ${printExpr(s.cond)} ${printBlock(s.body, ind)}`;
    case "break":
    case "continue":
      return s.k;
    case "assign": {
      const path = s.target.path
        .map((p) => (p.k === "field" ? `.${needsKeywordSafe(printKey(p.name))}` : `[${printExpr(p.expr)}]`))
        .join("");
      return `${s.let ? "let " : ""}${s.target.name}${path} = ${printValue(s.value, closeEnd)}`;
    }
    case "expr": {
      const text = printValue(s.expr, closeEnd);
      return STATEMENT_WORDS.test(text) ? `(${printExpr(s.expr)})` : text;
    }
    default:
      return `${s.k} ${printValue(s.expr, closeEnd)}`;
  }
}

function printDecl(it: ProcessDecl | TypeDecl): string {
  if (it.k === "typedecl") return `type ${it.name} = ${printType(it.type)}`;
  const params = it.params.map((p) => `${p.name}: ${printType(p.type)}`).join(", ");
  const sig = it.signals.length
    ? ` signals { ${it.signals.map((p) => `${p.name}: ${printType(p.type)}`).join(", ")} }`
    : "";
  const ret = it.returns ? ` -> ${printType(it.returns)}` : "";
  return `${printLabel(it.label, "")}process ${it.name}(${params})${sig}${ret} ${printBlock(it.body, "")}`;
}

/** One item per line; statements separated by newlines (`;` is never needed). */
export function printProgram(p: Program): string {
  return printItems(p.items, "").join("\n");
}
