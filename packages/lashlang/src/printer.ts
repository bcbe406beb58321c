/** Prints an AST back to canonical Lashlang source (print → reparse → print is stable). */
import type { Expr, Item, Label, Program, Stmt, TypeExpr } from "./ast.ts";
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

function printNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const s = String(n);
  if (!s.includes("e")) return s;
  return n.toFixed(20).replace(/0+$/, "");
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
      return e.name;
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
      return `${paren(e.obj, 9)}.${printKey(e.name)}`;
    case "index":
      return `${paren(e.obj, 9)}[${printExpr(e.index)}]`;
    case "call":
      return `${e.name}(${e.args.map((x) => paren(x, 2)).join(", ")})`;
    case "mcall":
      return `${paren(e.recv, 9)}.${printKey(e.op)}(${e.args.map((x) => paren(x, 2)).join(", ")})`;
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

function printBlock(b: Stmt[], ind: string): string {
  if (b.length === 0) return "{}";
  return `{\n${b.map((s) => printStmt(s, `${ind}  `)).join("\n")}\n${ind}}`;
}

function needsKeywordSafe(name: string): string {
  return KEYWORD_WORDS.has(name) ? printString(name) : name;
}

export function printStmt(s: Stmt, ind = ""): string {
  const lab = printLabel(s.label, ind);
  let body: string;
  switch (s.k) {
    case "if": {
      body = `if ${printExpr(s.cond)} ${printBlock(s.then, ind)}`;
      if (s.else) {
        const only = s.else.length === 1 ? s.else[0]! : null;
        if (only && only.k === "if" && !only.label) body += ` else ${printStmt(only, ind).trimStart()}`;
        else body += ` else ${printBlock(s.else, ind)}`;
      }
      break;
    }
    case "for":
      body = `for ${s.name} in ${printExpr(s.iter)} ${printBlock(s.body, ind)}`;
      break;
    case "while":
      body = `while ${printExpr(s.cond)} ${printBlock(s.body, ind)}`;
      break;
    case "break":
    case "continue":
      body = s.k;
      break;
    case "assign": {
      const path = s.target.path
        .map((p) => (p.k === "field" ? `.${needsKeywordSafe(printKey(p.name))}` : `[${printExpr(p.expr)}]`))
        .join("");
      body = `${s.target.name}${path} = ${printExpr(s.value)}`;
      break;
    }
    case "expr":
      body = printExpr(s.expr);
      break;
    default:
      body = `${s.k} ${printExpr(s.expr)}`;
  }
  return `${lab}${ind}${body}`;
}

function printItem(it: Item): string {
  if (it.k === "typedecl") return `type ${it.name} = ${printType(it.type)}`;
  if (it.k === "process") {
    const params = it.params.map((p) => `${p.name}: ${printType(p.type)}`).join(", ");
    const sig = it.signals.length
      ? ` signals { ${it.signals.map((p) => `${p.name}: ${printType(p.type)}`).join(", ")} }`
      : "";
    const ret = it.returns ? ` -> ${printType(it.returns)}` : "";
    return `${printLabel(it.label, "")}process ${it.name}(${params})${sig}${ret} ${printBlock(it.body, "")}`;
  }
  return printStmt(it, "");
}

/** One item per line; statements separated by newlines (`;` is never needed). */
export function printProgram(p: Program): string {
  return p.items.map(printItem).join("\n");
}
