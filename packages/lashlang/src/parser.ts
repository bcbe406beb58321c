/**
 * Lashlang parser: a chevrotain EmbeddedActionsParser building the AST of `ast.ts` directly.
 * Context-sensitive decisions (assignment vs expression, `?` unwrap vs ternary, contextual words)
 * are GATEs that scan the token vector, as in §1.3 of the reference.
 */
import {
  EmbeddedActionsParser,
  EOF,
  type IParserErrorMessageProvider,
  type IToken,
  type TokenType,
  tokenMatcher,
} from "chevrotain";
import type {
  AssignTarget,
  BinaryOp,
  CompClause,
  Expr,
  Item,
  Label,
  ProcessDecl,
  Program,
  RecordEntry,
  Stmt,
  TypeDecl,
  TypeExpr,
  TypeField,
} from "./ast.ts";
import * as T from "./lexer.ts";

export const NESTING_LIMIT = 40;

export class ParseError extends Error {
  readonly offset: number;
  readonly length: number;
  readonly hint: string | undefined;
  constructor(message: string, offset: number, length: number, hint?: string) {
    super(message);
    this.offset = offset;
    this.length = Math.max(1, length);
    this.hint = hint;
  }
}

export function describeToken(tok: IToken): string {
  if (tok.tokenType === EOF) return "end of input";
  if (tokenMatcher(tok, T.StringLit)) return "string";
  if (tok.tokenType === T.NumberLit) return `number \`${tok.image}\``;
  return `\`${tok.image}\``;
}

function tokenLabel(t: TokenType): string {
  if (t === EOF) return "end of input";
  return t.LABEL ?? t.name;
}

const messages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected, actual }) =>
    `expected ${tokenLabel(expected)}, found ${describeToken(actual)}`,
  buildNotAllInputParsedMessage: ({ firstRedundant }) => `unexpected ${describeToken(firstRedundant)}`,
  buildNoViableAltMessage: ({ actual }) =>
    `unexpected ${actual[0] ? describeToken(actual[0]) : "end of input"}`,
  buildEarlyExitMessage: ({ actual }) =>
    `unexpected ${actual[0] ? describeToken(actual[0]) : "end of input"}`,
};

const STRING_TYPES = new Set<TokenType>([
  T.RawTripleDouble,
  T.RawTripleSingle,
  T.RawDouble,
  T.RawSingle,
  T.TripleDouble,
  T.TripleSingle,
  T.DoubleStr,
  T.SingleStr,
]);
const EXPR_START = new Set<TokenType>([
  T.Null,
  T.True,
  T.False,
  T.NumberLit,
  T.Identifier,
  T.LParen,
  T.LBracket,
  T.LCurly,
  T.Await,
  T.Minus,
  T.Bang,
  T.Not,
  ...STRING_TYPES,
]);
const SCAN_STOP_KEYWORDS = new Set<TokenType>([T.Print, T.Cancel, T.Submit, T.Call, T.If, T.Else, T.For]);

const IF_HINT = "use `cond ? yes : no` for inline conditionals";
const FOR_HINT = "`for` is a statement. Put it on its own line, not inside an expression or record literal.";

class LashParser extends EmbeddedActionsParser {
  depth = 0;
  loopDepth = 0;
  inProcess = false;

  constructor() {
    super(T.allTokens, {
      recoveryEnabled: false,
      maxLookahead: 3,
      errorMessageProvider: messages,
    });
    this.performSelfAnalysis();
  }

  // ---------- helpers used from GATEs / ACTIONs ----------
  isWord(i: number, w: string): boolean {
    const t = this.LA(i);
    return t.tokenType === T.Identifier && t.image === w;
  }
  tt(i: number): TokenType {
    return this.LA(i).tokenType;
  }
  isKeyTok(i: number): boolean {
    const t = this.LA(i);
    return tokenMatcher(t, T.Word) || tokenMatcher(t, T.StringLit);
  }
  /** IDENT ( '.' KEY | '[' balanced ']' )* '=' starting at LA(i). */
  isAssignStart(i: number): boolean {
    if (this.tt(i) !== T.Identifier) return false;
    let j = i + 1;
    for (;;) {
      const t = this.tt(j);
      if (t === T.Dot) {
        if (!this.isKeyTok(j + 1)) return false;
        j += 2;
      } else if (t === T.LBracket) {
        let d = 0;
        for (;;) {
          const u = this.tt(j);
          if (u === EOF) return false;
          if (u === T.LBracket) d++;
          else if (u === T.RBracket) {
            d--;
            if (d === 0) break;
          }
          j++;
        }
        j++;
      } else return t === T.Assign;
    }
  }
  isUnwrap(): boolean {
    if (!EXPR_START.has(this.tt(2))) return true;
    let d = 0;
    for (let i = 2; ; i++) {
      const t = this.tt(i);
      if (t === EOF) return true;
      if (t === T.LParen || t === T.LBracket || t === T.LCurly) d++;
      else if (t === T.RParen || t === T.RBracket || t === T.RCurly) {
        if (d === 0) return true;
        d--;
      } else if (d === 0) {
        if (t === T.Colon) return false;
        if (t === T.Assign || t === T.Comma || SCAN_STOP_KEYWORDS.has(t)) return true;
      }
    }
  }
  startOf(): number {
    return this.LA(1).startOffset;
  }
  endOf(): number {
    const t = this.LA(0);
    return t.startOffset + t.image.length;
  }
  fail(message: string, tok: IToken, hint?: string): never {
    const len = tok.tokenType === EOF ? 1 : tok.image.length;
    throw new ParseError(message, tok.tokenType === EOF ? tok.startOffset : tok.startOffset, len, hint);
  }
  enter(): void {
    this.depth++;
    if (this.depth > NESTING_LIMIT)
      this.fail(`expression nesting too deep (limit ${NESTING_LIMIT}); flatten the program`, this.LA(1));
  }
  leave(): void {
    this.depth--;
  }

  // ---------- program and items ----------
  program = this.RULE("program", (): Item[] => {
    const items: Item[] = [];
    this.MANY({
      GATE: () => this.tt(1) !== EOF,
      DEF: () => {
        items.push(this.SUBRULE(this.item));
      },
    });
    return items;
  });

  item = this.RULE("item", (): Item => {
    return this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          GATE: () => this.tt(1) === T.At,
          ALT: () => {
            const label = this.SUBRULE(this.labelRule);
            return this.OR2({
              IGNORE_AMBIGUITIES: true,
              DEF: [
                {
                  GATE: () => this.isWord(1, "process") && this.tt(2) === T.Identifier,
                  ALT: () => {
                    const p = this.SUBRULE(this.processDecl);
                    this.ACTION(() => {
                      p.label = label;
                    });
                    return p;
                  },
                },
                {
                  GATE: () => this.isWord(1, "type") || this.isWord(1, "trigger") || this.tt(1) === T.At,
                  ALT: () => {
                    const t = this.CONSUME(T.Word);
                    return this.ACTION(() =>
                      this.fail(
                        `\`@label\` cannot precede ${t.image === "@" ? "another label" : `\`${t.image}\``}`,
                        t,
                      ),
                    ) as Item;
                  },
                },
                {
                  ALT: () => {
                    const s = this.SUBRULE(this.statement);
                    this.ACTION(() => {
                      s.label = label;
                    });
                    return s;
                  },
                },
              ],
            });
          },
        },
        {
          GATE: () => this.isWord(1, "process") && this.tt(2) === T.Identifier && this.tt(3) === T.LParen,
          ALT: () => this.SUBRULE2(this.processDecl),
        },
        {
          GATE: () => this.isWord(1, "type") && this.tt(2) === T.Identifier && this.tt(3) === T.Assign,
          ALT: () => this.SUBRULE(this.typeDecl),
        },
        {
          GATE: () =>
            this.isWord(1, "trigger") &&
            (this.tt(2) === T.Identifier || this.tt(2) === T.LCurly || this.tt(2) === T.LParen),
          ALT: () => {
            const t = this.CONSUME(T.Identifier);
            return this.ACTION(() =>
              // the reference's wording and hint (SamGalanakis/lash parser.rs, lib.rs)
              this.fail(
                "declarative trigger syntax has been removed; construct a source value and call the trigger registry register operation",
                t,
                "construct a trigger source value (`cron.Schedule({ ... })`) and call `await triggers.register({ source, target })`",
              ),
            ) as Item;
          },
        },
        { ALT: () => this.SUBRULE2(this.statement) },
      ],
    });
  });

  labelRule = this.RULE("labelRule", (): Label => {
    this.CONSUME(T.At);
    const w = this.CONSUME(T.Identifier);
    this.ACTION(() => {
      if (w.image !== "label") this.fail(`unknown annotation \`@${w.image}\`; expected \`@label\``, w);
    });
    this.CONSUME(T.LParen);
    const tk = this.CONSUME2(T.Identifier);
    this.ACTION(() => {
      if (tk.image !== "title") this.fail("expected `title`", tk);
    });
    this.CONSUME(T.Colon);
    const title = this.CONSUME(T.StringLit);
    let description: string | undefined;
    this.OPTION(() => {
      this.CONSUME(T.Comma);
      this.OPTION2(() => {
        const dk = this.CONSUME3(T.Identifier);
        this.ACTION(() => {
          if (dk.image !== "description") this.fail("expected `description`", dk);
        });
        this.CONSUME2(T.Colon);
        const d = this.CONSUME2(T.StringLit);
        description = this.ACTION(() => T.decodeString(d));
        this.OPTION3(() => this.CONSUME2(T.Comma));
      });
    });
    this.CONSUME(T.RParen);
    return this.ACTION(() => {
      const l: Label = { title: T.decodeString(title) };
      if (description !== undefined) l.description = description;
      return l;
    }) as Label;
  });

  processDecl = this.RULE("processDecl", (): ProcessDecl => {
    const start = this.ACTION(() => this.startOf());
    this.CONSUME(T.Identifier); // process
    const name = this.CONSUME2(T.Identifier);
    this.CONSUME(T.LParen);
    const params: { name: string; type: TypeExpr }[] = [];
    this.OPTION(() => {
      params.push(this.SUBRULE(this.typedName));
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.OPTION2({
          GATE: () => this.tt(1) !== T.RParen,
          DEF: () => {
            params.push(this.SUBRULE2(this.typedName));
          },
        });
      });
    });
    this.CONSUME(T.RParen);
    const signals: { name: string; type: TypeExpr }[] = [];
    this.OPTION3({
      GATE: () => this.isWord(1, "signals"),
      DEF: () => {
        this.CONSUME3(T.Identifier);
        this.CONSUME(T.LCurly);
        this.OPTION4(() => {
          signals.push(this.SUBRULE3(this.typedName));
          this.MANY2(() => {
            this.CONSUME2(T.Comma);
            this.OPTION5({
              GATE: () => this.tt(1) !== T.RCurly,
              DEF: () => {
                signals.push(this.SUBRULE4(this.typedName));
              },
            });
          });
        });
        this.CONSUME(T.RCurly);
      },
    });
    let returns: TypeExpr | null = null;
    this.OPTION6(() => {
      this.CONSUME(T.Arrow);
      returns = this.SUBRULE(this.typeExpr);
    });
    const saved = this.ACTION(() => {
      const s = { inProcess: this.inProcess, loopDepth: this.loopDepth };
      this.inProcess = true;
      this.loopDepth = 0;
      return s;
    });
    const body = this.SUBRULE(this.block);
    this.ACTION(() => {
      this.inProcess = saved!.inProcess;
      this.loopDepth = saved!.loopDepth;
    });
    return this.ACTION(() => ({
      k: "process" as const,
      name: name.image,
      params,
      signals,
      returns,
      body,
      start: start!,
      end: this.endOf(),
    })) as ProcessDecl;
  });

  typedName = this.RULE("typedName", (): { name: string; type: TypeExpr } => {
    const n = this.CONSUME(T.Identifier);
    this.CONSUME(T.Colon);
    const type = this.SUBRULE(this.typeExpr);
    return { name: n.image, type };
  });

  typeDecl = this.RULE("typeDecl", (): TypeDecl => {
    const start = this.ACTION(() => this.startOf());
    this.CONSUME(T.Identifier);
    const name = this.CONSUME2(T.Identifier);
    this.CONSUME(T.Assign);
    const type = this.SUBRULE(this.typeExpr);
    return this.ACTION(() => ({
      k: "typedecl" as const,
      name: name.image,
      type,
      start: start!,
      end: this.endOf(),
    })) as TypeDecl;
  });

  // ---------- statements ----------
  block = this.RULE("block", (): Stmt[] => {
    const stmts: Stmt[] = [];
    this.CONSUME(T.LCurly);
    this.ACTION(() => this.enter());
    this.MANY({
      GATE: () => this.tt(1) !== T.RCurly && this.tt(1) !== EOF,
      DEF: () => {
        let label: Label | undefined;
        this.OPTION(() => {
          label = this.SUBRULE(this.labelRule);
        });
        const s = this.SUBRULE(this.statement);
        this.ACTION(() => {
          if (label) s.label = label;
          stmts.push(s);
        });
      },
    });
    this.CONSUME(T.RCurly);
    this.ACTION(() => this.leave());
    return stmts;
  });

  statement = this.RULE("statement", (): Stmt => {
    const start = this.ACTION(() => this.startOf()) as number;
    const fin = <S extends object>(s: S): S & { start: number; end: number } =>
      this.ACTION(() => ({ ...s, start, end: this.endOf() })) as S & { start: number; end: number };
    return this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          GATE: () => this.isAssignStart(1) || (this.isWord(1, "let") && this.isAssignStart(2)),
          ALT: () => this.SUBRULE(this.assignment),
        },
        {
          GATE: () => this.isWord(1, "finish") && (this.tt(2) === T.RCurly || this.tt(2) === EOF),
          ALT: () => {
            const t = this.CONSUME6(T.Identifier);
            return this.ACTION(() =>
              this.fail("`finish` requires a value; use `finish null` to finish with null", t),
            ) as Stmt;
          },
        },
        { ALT: () => this.SUBRULE(this.ifStmt) },
        {
          ALT: () => {
            this.CONSUME(T.For);
            const name = this.CONSUME(T.Identifier);
            this.CONSUME(T.In);
            const iter = this.SUBRULE(this.expr);
            const body = this.SUBRULE(this.loopBody);
            return fin({ k: "for" as const, name: name.image, iter, body });
          },
        },
        {
          GATE: () => this.isWord(1, "while"),
          ALT: () => {
            this.CONSUME2(T.Identifier);
            const cond = this.SUBRULE2(this.expr);
            const body = this.SUBRULE2(this.loopBody);
            return fin({ k: "while" as const, cond, body });
          },
        },
        {
          GATE: () => this.isWord(1, "break") || this.isWord(1, "continue"),
          ALT: () => {
            const t = this.CONSUME3(T.Identifier);
            this.ACTION(() => {
              if (this.loopDepth === 0) this.fail(`\`${t.image}\` can only be used inside a loop`, t);
            });
            return fin({ k: t.image as "break" | "continue" });
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.Print);
            const tok = this.LA(0);
            this.ACTION(() => {
              if (this.inProcess)
                this.fail(
                  "`print` can't be used inside a `process` body",
                  tok,
                  "use `yield` to report progress",
                );
            });
            const expr = this.SUBRULE3(this.expr);
            return fin({ k: "print" as const, expr });
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.Cancel);
            const expr = this.SUBRULE4(this.expr);
            return fin({ k: "cancel" as const, expr });
          },
        },
        {
          GATE: () =>
            this.isWord(1, "finish") ||
            this.isWord(1, "fail") ||
            this.isWord(1, "yield") ||
            this.isWord(1, "wake"),
          ALT: () => {
            const t = this.CONSUME4(T.Identifier);
            this.ACTION(() => {
              const w = t.image;
              if (w !== "finish" && !this.inProcess)
                this.fail(`\`${w}\` can only be used inside a \`process\` body`, t);
              const n = this.tt(1);
              if (n === T.RCurly || n === EOF) {
                if (w === "finish")
                  this.fail("`finish` requires a value; use `finish null` to finish with null", t);
                this.fail(`\`${w}\` requires a value`, t);
              }
            });
            const expr = this.SUBRULE5(this.expr);
            return fin({ k: t.image as "finish", expr });
          },
        },
        {
          ALT: () => {
            const t = this.CONSUME(T.Submit);
            return this.ACTION(() => this.fail("`submit` was removed; use `finish <value>`", t)) as Stmt;
          },
        },
        {
          ALT: () => {
            const t = this.CONSUME(T.Call);
            return this.ACTION(() =>
              this.fail("unexpected `call`; call module operations as `await module.operation({ ... })`", t),
            ) as Stmt;
          },
        },
        {
          GATE: () => this.isWord(1, "parallel") && this.tt(2) === T.LCurly,
          ALT: () => {
            const t = this.CONSUME5(T.Identifier);
            return this.ACTION(() => this.fail("unexpected `parallel`", t)) as Stmt;
          },
        },
        {
          ALT: () => {
            const expr = this.SUBRULE6(this.expr);
            return fin({ k: "expr" as const, expr });
          },
        },
      ],
    });
  });

  loopBody = this.RULE("loopBody", (): Stmt[] => {
    this.ACTION(() => this.loopDepth++);
    const b = this.SUBRULE(this.block);
    this.ACTION(() => this.loopDepth--);
    return b;
  });

  ifStmt = this.RULE("ifStmt", (): Stmt => {
    const start = this.ACTION(() => this.startOf());
    this.CONSUME(T.If);
    const cond = this.SUBRULE(this.expr);
    const then = this.SUBRULE(this.block);
    let els: Stmt[] | null = null;
    this.OPTION(() => {
      this.CONSUME(T.Else);
      this.OR([
        {
          ALT: () => {
            const nested = this.SUBRULE(this.ifStmt);
            els = [nested];
          },
        },
        {
          ALT: () => {
            els = this.SUBRULE2(this.block);
          },
        },
      ]);
    });
    return this.ACTION(() => ({
      k: "if" as const,
      cond,
      then,
      else: els,
      start: start!,
      end: this.endOf(),
    })) as Stmt;
  });

  assignment = this.RULE("assignment", (): Stmt => {
    const start = this.ACTION(() => this.startOf());
    let isLet = false;
    this.OPTION({
      GATE: () => this.isWord(1, "let") && this.tt(2) === T.Identifier,
      DEF: () => {
        this.CONSUME(T.Identifier);
        isLet = true;
      },
    });
    const name = this.CONSUME2(T.Identifier);
    const path: AssignTarget["path"] = [];
    this.MANY(() => {
      this.OR([
        {
          ALT: () => {
            this.CONSUME(T.Dot);
            const key = this.SUBRULE(this.key);
            path.push({ k: "field", name: key });
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.LBracket);
            const expr = this.SUBRULE(this.expr);
            this.CONSUME(T.RBracket);
            path.push({ k: "index", expr });
          },
        },
      ]);
    });
    this.CONSUME(T.Assign);
    const value = this.SUBRULE2(this.expr);
    return this.ACTION(() => {
      const s: Stmt = {
        k: "assign",
        target: { name: name.image, path },
        value,
        start: start!,
        end: this.endOf(),
      };
      if (isLet) s.let = true;
      return s;
    }) as Stmt;
  });

  key = this.RULE("key", (): string => {
    return this.OR([
      { ALT: () => this.CONSUME(T.Word).image },
      {
        ALT: () => {
          const t = this.CONSUME(T.StringLit);
          return this.ACTION(() => T.decodeString(t)) as string;
        },
      },
    ]);
  });

  // ---------- expressions ----------
  expr = this.RULE("expr", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    const first = this.SUBRULE(this.ternary);
    const items: Expr[] = [first];
    let tuple = false;
    let open = true;
    this.MANY({
      GATE: () => open && this.tt(1) === T.Comma,
      DEF: () => {
        this.CONSUME(T.Comma);
        tuple = true;
        let took = false;
        this.OPTION({
          GATE: () => EXPR_START.has(this.tt(1)),
          DEF: () => {
            items.push(this.SUBRULE2(this.ternary));
            took = true;
          },
        });
        if (!took) open = false;
      },
    });
    return this.ACTION(() =>
      tuple ? { k: "tuple" as const, items, start: start!, end: this.endOf() } : first,
    ) as Expr;
  });

  ternary = this.RULE("ternary", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    const cond = this.SUBRULE(this.orExpr);
    let result = cond;
    this.OPTION(() => {
      this.CONSUME(T.Question);
      const a = this.SUBRULE(this.ternary);
      this.CONSUME(T.Colon);
      const b = this.SUBRULE2(this.ternary);
      result = this.ACTION(() => ({
        k: "tern" as const,
        cond,
        // biome-ignore lint/suspicious/noThenProperty: AST field name, not a thenable
        then: a,
        else: b,
        start: start!,
        end: this.endOf(),
      })) as Expr;
    });
    return result;
  });

  orExpr = this.RULE("orExpr", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    let l = this.SUBRULE(this.andExpr);
    this.MANY(() => {
      this.OR([{ ALT: () => this.CONSUME(T.Or) }, { ALT: () => this.CONSUME(T.OrOr) }]);
      const r = this.SUBRULE2(this.andExpr);
      l = this.ACTION(() => ({ k: "or" as const, l, r, start: start!, end: this.endOf() })) as Expr;
    });
    return l;
  });

  andExpr = this.RULE("andExpr", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    let l = this.SUBRULE(this.cmpExpr);
    this.MANY(() => {
      this.OR([{ ALT: () => this.CONSUME(T.And) }, { ALT: () => this.CONSUME(T.AndAnd) }]);
      const r = this.SUBRULE2(this.cmpExpr);
      l = this.ACTION(() => ({ k: "and" as const, l, r, start: start!, end: this.endOf() })) as Expr;
    });
    return l;
  });

  cmpExpr = this.RULE("cmpExpr", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    let l = this.SUBRULE(this.addExpr);
    this.MANY(() => {
      const op = this.OR([
        { ALT: () => this.CONSUME(T.EqEq) },
        { ALT: () => this.CONSUME(T.NotEq) },
        { ALT: () => this.CONSUME(T.LtEq) },
        { ALT: () => this.CONSUME(T.GtEq) },
        { ALT: () => this.CONSUME(T.Lt) },
        { ALT: () => this.CONSUME(T.Gt) },
      ]);
      const r = this.SUBRULE2(this.addExpr);
      l = this.ACTION(() => ({
        k: "bin" as const,
        op: op.image as BinaryOp,
        l,
        r,
        start: start!,
        end: this.endOf(),
      })) as Expr;
    });
    return l;
  });

  addExpr = this.RULE("addExpr", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    let l = this.SUBRULE(this.mulExpr);
    this.MANY(() => {
      const op = this.OR([{ ALT: () => this.CONSUME(T.Plus) }, { ALT: () => this.CONSUME(T.Minus) }]);
      const r = this.SUBRULE2(this.mulExpr);
      l = this.ACTION(() => ({
        k: "bin" as const,
        op: op.image as BinaryOp,
        l,
        r,
        start: start!,
        end: this.endOf(),
      })) as Expr;
    });
    return l;
  });

  mulExpr = this.RULE("mulExpr", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    let l = this.SUBRULE(this.unary);
    this.MANY(() => {
      const op = this.OR([
        { ALT: () => this.CONSUME(T.Star) },
        { ALT: () => this.CONSUME(T.Slash) },
        { ALT: () => this.CONSUME(T.Percent) },
      ]);
      const r = this.SUBRULE2(this.unary);
      l = this.ACTION(() => ({
        k: "bin" as const,
        op: op.image as BinaryOp,
        l,
        r,
        start: start!,
        end: this.endOf(),
      })) as Expr;
    });
    return l;
  });

  unary = this.RULE("unary", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    return this.OR([
      {
        ALT: () => {
          const op = this.OR2([
            { ALT: () => this.CONSUME(T.Minus) },
            { ALT: () => this.CONSUME(T.Bang) },
            { ALT: () => this.CONSUME(T.Not) },
            { ALT: () => this.CONSUME(T.Await) },
          ]);
          this.ACTION(() => this.enter());
          const expr = this.SUBRULE(this.unary);
          this.ACTION(() => this.leave());
          return this.ACTION(() => {
            const k = op.tokenType === T.Minus ? "neg" : op.tokenType === T.Await ? "await" : "not";
            return { k, expr, start: start!, end: this.endOf() };
          }) as Expr;
        },
      },
      { ALT: () => this.SUBRULE(this.postfix) },
    ]);
  });

  postfix = this.RULE("postfix", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    let e = this.SUBRULE(this.primary);
    this.MANY({
      GATE: () => this.tt(1) !== T.Question || this.isUnwrap(),
      DEF: () => {
        this.OR([
          {
            ALT: () => {
              this.CONSUME(T.Dot);
              const name = this.SUBRULE(this.key);
              let args: Expr[] | null = null;
              this.OPTION(() => {
                this.CONSUME(T.LParen);
                args = this.SUBRULE(this.args);
              });
              const recv = e;
              e = this.ACTION(() =>
                args
                  ? { k: "mcall" as const, recv, op: name, args, start: start!, end: this.endOf() }
                  : { k: "field" as const, obj: recv, name, start: start!, end: this.endOf() },
              ) as Expr;
            },
          },
          {
            ALT: () => {
              this.CONSUME(T.LBracket);
              this.ACTION(() => this.enter());
              const index = this.SUBRULE(this.expr);
              this.ACTION(() => this.leave());
              this.CONSUME(T.RBracket);
              const obj = e;
              e = this.ACTION(() => ({
                k: "index" as const,
                obj,
                index,
                start: start!,
                end: this.endOf(),
              })) as Expr;
            },
          },
          {
            GATE: () => this.isUnwrap(),
            ALT: () => {
              this.CONSUME(T.Question);
              const inner = e;
              e = this.ACTION(() => ({
                k: "unwrap" as const,
                expr: inner,
                start: start!,
                end: this.endOf(),
              })) as Expr;
            },
          },
        ]);
      },
    });
    return e;
  });

  /** Arguments after `(` up to and including `)`. */
  args = this.RULE("args", (): Expr[] => {
    const items: Expr[] = [];
    this.ACTION(() => this.enter());
    this.OPTION(() => {
      items.push(this.SUBRULE(this.ternary));
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.OPTION2({
          GATE: () => this.tt(1) !== T.RParen,
          DEF: () => {
            items.push(this.SUBRULE2(this.ternary));
          },
        });
      });
    });
    this.CONSUME(T.RParen);
    this.ACTION(() => this.leave());
    return items;
  });

  namedArgs = this.RULE("namedArgs", (): RecordEntry[] => {
    const items: RecordEntry[] = [];
    this.CONSUME(T.LParen);
    this.OPTION(() => {
      items.push(this.SUBRULE(this.recordEntry));
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.OPTION2({
          GATE: () => this.tt(1) !== T.RParen,
          DEF: () => {
            items.push(this.SUBRULE2(this.recordEntry));
          },
        });
      });
    });
    this.CONSUME(T.RParen);
    return items;
  });

  recordEntry = this.RULE("recordEntry", (): RecordEntry => {
    const key = this.SUBRULE(this.key);
    this.CONSUME(T.Colon);
    const value = this.SUBRULE(this.ternary);
    return { key, value };
  });

  primary = this.RULE("primary", (): Expr => {
    const start = this.ACTION(() => this.startOf()) as number;
    const lit = (value: null | boolean | number | string): Expr =>
      this.ACTION(() => ({ k: "lit" as const, value, start, end: this.endOf() })) as Expr;
    return this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          ALT: () => {
            this.CONSUME(T.Null);
            return lit(null);
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.True);
            return lit(true);
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.False);
            return lit(false);
          },
        },
        {
          ALT: () => {
            const t = this.CONSUME(T.NumberLit);
            return lit(Number(t.image));
          },
        },
        {
          ALT: () => {
            const t = this.CONSUME(T.StringLit);
            return lit(this.ACTION(() => T.decodeString(t)) as string);
          },
        },
        {
          GATE: () => this.isWord(1, "Type") && this.tt(2) === T.LCurly,
          ALT: () => {
            this.CONSUME(T.Identifier);
            const type = this.SUBRULE(this.typeObject);
            return this.ACTION(() => ({ k: "type" as const, type, start, end: this.endOf() })) as Expr;
          },
        },
        {
          GATE: () => this.isWord(1, "start") && this.tt(2) === T.Identifier,
          ALT: () => {
            this.CONSUME2(T.Identifier);
            const name = this.CONSUME3(T.Identifier);
            this.ACTION(() => {
              if (this.tt(1) !== T.LParen)
                this.fail(
                  `expected \`(\` after \`start ${name.image}\`, found ${describeToken(this.LA(1))}`,
                  this.LA(1),
                );
            });
            const args = this.SUBRULE(this.namedArgs);
            return this.ACTION(() => ({
              k: "start" as const,
              name: name.image,
              args,
              start,
              end: this.endOf(),
            })) as Expr;
          },
        },
        {
          GATE: () => this.isWord(1, "sleep") && (this.tt(2) === T.For || this.isWord(2, "until")),
          ALT: () => {
            this.CONSUME4(T.Identifier);
            const mode = this.OR2([
              { ALT: () => this.CONSUME(T.For).image },
              { ALT: () => this.CONSUME5(T.Identifier).image },
            ]);
            const expr = this.SUBRULE(this.unary);
            return this.ACTION(() => ({
              k: "sleep" as const,
              mode: mode as "for",
              expr,
              start,
              end: this.endOf(),
            })) as Expr;
          },
        },
        {
          GATE: () => this.tt(2) === T.LParen,
          ALT: () => {
            const name = this.CONSUME6(T.Identifier);
            this.CONSUME(T.LParen);
            const args = this.SUBRULE(this.args);
            return this.ACTION(() => ({
              k: "call" as const,
              name: name.image,
              args,
              start,
              end: this.endOf(),
            })) as Expr;
          },
        },
        {
          ALT: () => {
            const name = this.CONSUME7(T.Identifier);
            return this.ACTION(() => ({
              k: "var" as const,
              name: name.image,
              start,
              end: this.endOf(),
            })) as Expr;
          },
        },
        {
          ALT: () => {
            this.CONSUME2(T.LParen);
            this.ACTION(() => this.enter());
            let inner: Expr | null = null;
            this.OPTION(() => {
              inner = this.SUBRULE(this.expr);
            });
            this.CONSUME(T.RParen);
            this.ACTION(() => this.leave());
            return this.ACTION(
              () => inner ?? { k: "tuple" as const, items: [], start, end: this.endOf() },
            ) as Expr;
          },
        },
        { ALT: () => this.SUBRULE(this.listLit) },
        { ALT: () => this.SUBRULE(this.recordLit) },
        {
          ALT: () => {
            const t = this.CONSUME(T.If);
            return this.ACTION(() => this.fail("unexpected `if`", t, IF_HINT)) as Expr;
          },
        },
        {
          ALT: () => {
            const t = this.CONSUME2(T.For);
            return this.ACTION(() => this.fail("unexpected `for`", t, FOR_HINT)) as Expr;
          },
        },
      ],
    });
  });

  listLit = this.RULE("listLit", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    this.CONSUME(T.LBracket);
    this.ACTION(() => this.enter());
    const items: Expr[] = [];
    let clauses: CompClause[] | null = null;
    this.OPTION(() => {
      items.push(this.SUBRULE(this.ternary));
      this.OR([
        {
          GATE: () => this.tt(1) === T.For,
          ALT: () => {
            clauses = this.SUBRULE(this.compClauses);
          },
        },
        {
          ALT: () => {
            this.MANY(() => {
              this.CONSUME(T.Comma);
              this.OPTION2({
                GATE: () => this.tt(1) !== T.RBracket,
                DEF: () => {
                  items.push(this.SUBRULE2(this.ternary));
                },
              });
            });
          },
        },
      ]);
    });
    this.CONSUME(T.RBracket);
    this.ACTION(() => this.leave());
    return this.ACTION(() =>
      clauses
        ? { k: "comp" as const, elem: items[0]!, clauses, start: start!, end: this.endOf() }
        : { k: "list" as const, items, start: start!, end: this.endOf() },
    ) as Expr;
  });

  compClauses = this.RULE("compClauses", (): CompClause[] => {
    const clauses: CompClause[] = [];
    this.AT_LEAST_ONE(() => {
      this.OR([
        {
          ALT: () => {
            this.CONSUME(T.For);
            const name = this.CONSUME(T.Identifier);
            this.CONSUME(T.In);
            const expr = this.SUBRULE(this.ternary);
            clauses.push({ kind: "for", name: name.image, expr });
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.If);
            const expr = this.SUBRULE2(this.ternary);
            clauses.push({ kind: "if", name: "", expr });
          },
        },
      ]);
    });
    return clauses;
  });

  recordLit = this.RULE("recordLit", (): Expr => {
    const start = this.ACTION(() => this.startOf());
    this.CONSUME(T.LCurly);
    this.ACTION(() => this.enter());
    const entries: RecordEntry[] = [];
    this.OPTION(() => {
      entries.push(this.SUBRULE(this.recordEntry));
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.OPTION2({
          GATE: () => this.tt(1) !== T.RCurly,
          DEF: () => {
            entries.push(this.SUBRULE2(this.recordEntry));
          },
        });
      });
    });
    this.CONSUME(T.RCurly);
    this.ACTION(() => this.leave());
    return this.ACTION(() => ({ k: "record" as const, entries, start: start!, end: this.endOf() })) as Expr;
  });

  // ---------- types ----------
  typeExpr = this.RULE("typeExpr", (): TypeExpr => {
    const members: TypeExpr[] = [this.SUBRULE(this.typeTerm)];
    this.MANY(() => {
      this.CONSUME(T.Pipe);
      members.push(this.SUBRULE2(this.typeTerm));
    });
    return this.ACTION(() =>
      members.length === 1 ? members[0]! : { k: "union" as const, members },
    ) as TypeExpr;
  });

  typeTerm = this.RULE("typeTerm", (): TypeExpr => {
    return this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          ALT: () => {
            this.CONSUME(T.Null);
            return { k: "null" as const };
          },
        },
        {
          ALT: () => {
            const t = this.CONSUME(T.StringLit);
            return this.ACTION(() => ({ k: "lit" as const, value: T.decodeString(t) })) as TypeExpr;
          },
        },
        { ALT: () => this.SUBRULE(this.typeObject) },
        {
          GATE: () => this.isWord(1, "Type") && this.tt(2) === T.LCurly,
          ALT: () => {
            this.CONSUME(T.Identifier);
            return this.SUBRULE2(this.typeObject);
          },
        },
        {
          GATE: () => this.isWord(1, "enum") && this.tt(2) === T.LBracket,
          ALT: () => {
            this.CONSUME2(T.Identifier);
            this.CONSUME(T.LBracket);
            const values: string[] = [];
            const first = this.CONSUME2(T.StringLit);
            this.ACTION(() => values.push(T.decodeString(first)));
            this.MANY(() => {
              this.CONSUME(T.Comma);
              this.OPTION({
                GATE: () => this.tt(1) !== T.RBracket,
                DEF: () => {
                  const v = this.CONSUME3(T.StringLit);
                  this.ACTION(() => values.push(T.decodeString(v)));
                },
              });
            });
            this.CONSUME(T.RBracket);
            return { k: "enum" as const, values };
          },
        },
        {
          GATE: () => this.isWord(1, "list") && this.tt(2) === T.LBracket,
          ALT: () => {
            this.CONSUME3(T.Identifier);
            this.CONSUME2(T.LBracket);
            const item = this.SUBRULE(this.typeExpr);
            this.CONSUME2(T.RBracket);
            return { k: "list" as const, item };
          },
        },
        {
          GATE: () => this.isWord(1, "Process") && this.tt(2) === T.Lt,
          ALT: () => {
            this.CONSUME4(T.Identifier);
            this.CONSUME(T.Lt);
            const input = this.SUBRULE2(this.typeExpr);
            this.CONSUME2(T.Comma);
            const output = this.SUBRULE3(this.typeExpr);
            this.CONSUME(T.Gt);
            return { k: "process" as const, input, output };
          },
        },
        {
          GATE: () => this.isWord(1, "TriggerHandle") && this.tt(2) === T.Lt,
          ALT: () => {
            this.CONSUME5(T.Identifier);
            this.CONSUME2(T.Lt);
            const event = this.SUBRULE4(this.typeExpr);
            this.CONSUME2(T.Gt);
            return { k: "trigger" as const, event };
          },
        },
        {
          ALT: () => {
            const start = this.ACTION(() => this.startOf());
            const first = this.CONSUME6(T.Identifier);
            const path = [first.image];
            this.MANY2(() => {
              this.CONSUME(T.Dot);
              path.push(this.CONSUME7(T.Identifier).image);
            });
            return this.ACTION(() => typeName(path, start!, this.endOf())) as TypeExpr;
          },
        },
      ],
    });
  });

  typeObject = this.RULE("typeObject", (): TypeExpr => {
    this.CONSUME(T.LCurly);
    this.ACTION(() => this.enter());
    const fields: TypeField[] = [];
    const field = (f: TypeField, tok: IToken) =>
      this.ACTION(() => {
        if (fields.some((x) => x.name === f.name))
          this.fail(`expected unique field name, found duplicate field \`${f.name}\``, tok);
        fields.push(f);
      });
    this.OPTION(() => {
      const tok = this.LA(1);
      field(this.SUBRULE(this.typeField), tok);
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.OPTION2({
          GATE: () => this.tt(1) !== T.RCurly,
          DEF: () => {
            const tok2 = this.LA(1);
            field(this.SUBRULE2(this.typeField), tok2);
          },
        });
      });
    });
    this.CONSUME(T.RCurly);
    this.ACTION(() => this.leave());
    return { k: "object" as const, fields };
  });

  typeField = this.RULE("typeField", (): TypeField => {
    const name = this.SUBRULE(this.key);
    this.CONSUME(T.Colon);
    const type = this.SUBRULE(this.typeExpr);
    let optional = false;
    this.OPTION(() => {
      this.CONSUME(T.Question);
      optional = true;
    });
    return { name, type, optional };
  });
}

function typeName(path: string[], start: number, end: number): TypeExpr {
  if (path.length === 1) {
    switch (path[0]) {
      case "str":
      case "string":
        return { k: "prim", name: "str" };
      case "int":
      case "integer":
        return { k: "prim", name: "int" };
      case "float":
      case "number":
        return { k: "prim", name: "float" };
      case "bool":
      case "boolean":
        return { k: "prim", name: "bool" };
      case "dict":
      case "object":
        return { k: "prim", name: "dict" };
      case "any":
        return { k: "prim", name: "any" };
    }
  }
  return { k: "ref", path, start, end };
}

let parserInstance: LashParser | undefined;
function getParser(): LashParser {
  parserInstance ??= new LashParser();
  return parserInstance;
}

/** Parses one cell. Throws `ParseError` (lex errors included) on invalid input. */
export function parse(source: string): Program {
  let tokens: IToken[];
  try {
    tokens = T.tokenize(source);
  } catch (e) {
    if (e instanceof T.LexError) throw new ParseError(e.message, e.offset, e.length);
    throw e;
  }
  const p = getParser();
  p.depth = 0;
  p.loopDepth = 0;
  p.inProcess = false;
  p.input = tokens;
  const items = p.program();
  const err = p.errors[0];
  if (err) {
    const tok = err.token;
    const offset = tok.tokenType === EOF || Number.isNaN(tok.startOffset) ? source.length : tok.startOffset;
    const len = tok.tokenType === EOF ? 1 : tok.image.length;
    throw new ParseError(err.message, offset, len);
  }
  const program: Program = { items, processes: [], types: [], main: [] };
  for (const it of items) {
    if (it.k === "process") program.processes.push(it);
    else if (it.k === "typedecl") program.types.push(it);
    else program.main.push(it);
  }
  return program;
}
