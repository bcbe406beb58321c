/** Lashlang AST. Every node carries `start`/`end` source offsets (UTF-16, end exclusive). */

export type BinaryOp = "+" | "-" | "*" | "/" | "%" | "==" | "!=" | "<" | "<=" | ">" | ">=";

export type TypeExpr =
  | { k: "prim"; name: "str" | "int" | "float" | "bool" | "dict" | "any" }
  | { k: "null" }
  | { k: "lit"; value: string }
  | { k: "enum"; values: string[] }
  | { k: "list"; item: TypeExpr }
  | { k: "object"; fields: TypeField[] }
  | { k: "union"; members: TypeExpr[] }
  | { k: "ref"; path: string[]; start: number; end: number }
  | { k: "process"; input: TypeExpr; output: TypeExpr }
  | { k: "trigger"; event: TypeExpr };

export interface TypeField {
  name: string;
  type: TypeExpr;
  optional: boolean;
}

export interface CompClause {
  kind: "for" | "if";
  name: string;
  expr: Expr;
}

export interface RecordEntry {
  key: string;
  value: Expr;
}

export type Expr =
  | { k: "lit"; value: null | boolean | number | string; start: number; end: number }
  | { k: "var"; name: string; start: number; end: number }
  | { k: "list"; items: Expr[]; start: number; end: number }
  | { k: "tuple"; items: Expr[]; start: number; end: number }
  | { k: "record"; entries: RecordEntry[]; start: number; end: number }
  | { k: "comp"; elem: Expr; clauses: CompClause[]; start: number; end: number }
  | { k: "field"; obj: Expr; name: string; start: number; end: number }
  | { k: "index"; obj: Expr; index: Expr; start: number; end: number }
  | { k: "call"; name: string; args: Expr[]; start: number; end: number }
  | { k: "mcall"; recv: Expr; op: string; args: Expr[]; start: number; end: number }
  | { k: "unwrap"; expr: Expr; start: number; end: number }
  | { k: "neg"; expr: Expr; start: number; end: number }
  | { k: "not"; expr: Expr; start: number; end: number }
  | { k: "await"; expr: Expr; start: number; end: number }
  | { k: "bin"; op: BinaryOp; l: Expr; r: Expr; start: number; end: number }
  | { k: "and" | "or"; l: Expr; r: Expr; start: number; end: number }
  | { k: "tern"; cond: Expr; then: Expr; else: Expr; start: number; end: number }
  | { k: "type"; type: TypeExpr; start: number; end: number }
  | { k: "start"; name: string; args: RecordEntry[]; start: number; end: number }
  | { k: "sleep"; mode: "for" | "until"; expr: Expr; start: number; end: number };

export interface Label {
  title: string;
  description?: string;
}

export interface AssignTarget {
  name: string;
  path: ({ k: "field"; name: string } | { k: "index"; expr: Expr })[];
}

export type Stmt = (
  | { k: "if"; cond: Expr; then: Stmt[]; else: Stmt[] | null }
  | { k: "for"; name: string; iter: Expr; body: Stmt[] }
  | { k: "while"; cond: Expr; body: Stmt[] }
  | { k: "break" }
  | { k: "continue" }
  | { k: "cancel" | "print" | "finish" | "fail" | "yield" | "wake"; expr: Expr }
  | { k: "assign"; target: AssignTarget; value: Expr; let?: boolean }
  | { k: "expr"; expr: Expr }
) & { start: number; end: number; label?: Label };

export interface ProcessDecl {
  k: "process";
  name: string;
  params: { name: string; type: TypeExpr }[];
  signals: { name: string; type: TypeExpr }[];
  returns: TypeExpr | null;
  body: Stmt[];
  label?: Label;
  start: number;
  end: number;
}

export interface TypeDecl {
  k: "typedecl";
  name: string;
  type: TypeExpr;
  start: number;
  end: number;
}

export type Item = Stmt | ProcessDecl | TypeDecl;

export interface Program {
  items: Item[];
  /** Declarations (processes, types) split out of `items`, in source order. */
  processes: ProcessDecl[];
  types: TypeDecl[];
  /** Statements of the main body, in source order. */
  main: Stmt[];
}
