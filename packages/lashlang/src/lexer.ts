/**
 * Lashlang lexer (chevrotain). Whitespace and `;` are skipped, `#` and `//` start line comments.
 * Hard keywords are separate token types; contextual words (`finish`, `start`, `let`, ...) are identifiers.
 */
import { createToken, type IToken, Lexer, type TokenType } from "chevrotain";

export const Word = createToken({ name: "Word", pattern: Lexer.NA });
export const StringLit = createToken({ name: "StringLit", pattern: Lexer.NA, label: "string" });

const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[\s;]+/, group: Lexer.SKIPPED });
const Comment = createToken({ name: "Comment", pattern: /(?:#|\/\/)[^\n\r]*/, group: Lexer.SKIPPED });

function stringToken(name: string, pattern: RegExp): TokenType {
  return createToken({ name, pattern, categories: [StringLit], line_breaks: true, label: "string" });
}
export const RawTripleDouble = stringToken("RawTripleDouble", /[rR]"""[\s\S]*?"""/);
export const RawTripleSingle = stringToken("RawTripleSingle", /[rR]'''[\s\S]*?'''/);
export const RawDouble = stringToken("RawDouble", /[rR]"[^"]*"/);
export const RawSingle = stringToken("RawSingle", /[rR]'[^']*'/);
export const TripleDouble = stringToken("TripleDouble", /"""(?:\\[\s\S]|[^\\])*?"""/);
export const TripleSingle = stringToken("TripleSingle", /'''(?:\\[\s\S]|[^\\])*?'''/);
export const DoubleStr = stringToken("DoubleStr", /"(?:\\[\s\S]|[^"\\])*"/);
export const SingleStr = stringToken("SingleStr", /'(?:\\[\s\S]|[^'\\])*'/);
/** Matches an opening quote that no string form could close: reported as "unterminated string". */
export const Unterminated = createToken({
  name: "Unterminated",
  pattern: /[rR]?(?:"""|'''|"|')[\s\S]*/,
  line_breaks: true,
  label: "string",
});

export const NumberLit = createToken({ name: "NumberLit", pattern: /\d+(?:\.\d*)?/, label: "number" });
export const Identifier = createToken({
  name: "Identifier",
  pattern: /[A-Za-z_][A-Za-z0-9_]*/,
  categories: [Word],
  label: "identifier",
});

function kw(word: string): TokenType {
  return createToken({
    name: `Kw_${word}`,
    pattern: new RegExp(word),
    longer_alt: Identifier,
    categories: [Word],
    label: `\`${word}\``,
  });
}
export const If = kw("if");
export const Else = kw("else");
export const For = kw("for");
export const In = kw("in");
export const Await = kw("await");
export const Cancel = kw("cancel");
export const Submit = kw("submit");
export const Print = kw("print");
export const Call = kw("call");
export const And = kw("and");
export const Or = kw("or");
export const Not = kw("not");
export const True = kw("true");
export const False = kw("false");
export const Null = kw("null");
export const KEYWORDS = [
  If,
  Else,
  For,
  In,
  Await,
  Cancel,
  Submit,
  Print,
  Call,
  And,
  Or,
  Not,
  True,
  False,
  Null,
];
export const KEYWORD_WORDS = new Set([
  "if",
  "else",
  "for",
  "in",
  "await",
  "cancel",
  "submit",
  "print",
  "call",
  "and",
  "or",
  "not",
  "true",
  "false",
  "null",
]);

function punct(name: string, text: string): TokenType {
  const escaped = text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  return createToken({ name, pattern: new RegExp(escaped), label: `\`${text}\`` });
}
export const EqEq = punct("EqEq", "==");
export const NotEq = punct("NotEq", "!=");
export const LtEq = punct("LtEq", "<=");
export const GtEq = punct("GtEq", ">=");
export const AndAnd = punct("AndAnd", "&&");
export const OrOr = punct("OrOr", "||");
export const Arrow = punct("Arrow", "->");
export const LCurly = punct("LCurly", "{");
export const RCurly = punct("RCurly", "}");
export const LParen = punct("LParen", "(");
export const RParen = punct("RParen", ")");
export const LBracket = punct("LBracket", "[");
export const RBracket = punct("RBracket", "]");
export const Comma = punct("Comma", ",");
export const Colon = punct("Colon", ":");
export const At = punct("At", "@");
export const Question = punct("Question", "?");
export const Dot = punct("Dot", ".");
export const Bang = punct("Bang", "!");
export const Assign = punct("Assign", "=");
export const Lt = punct("Lt", "<");
export const Gt = punct("Gt", ">");
export const Plus = punct("Plus", "+");
export const Minus = punct("Minus", "-");
export const Star = punct("Star", "*");
export const Slash = punct("Slash", "/");
export const Percent = punct("Percent", "%");
export const Pipe = punct("Pipe", "|");

export const allTokens: TokenType[] = [
  WhiteSpace,
  Comment,
  RawTripleDouble,
  RawTripleSingle,
  RawDouble,
  RawSingle,
  TripleDouble,
  TripleSingle,
  DoubleStr,
  SingleStr,
  Unterminated,
  NumberLit,
  ...KEYWORDS,
  Identifier,
  EqEq,
  NotEq,
  LtEq,
  GtEq,
  AndAnd,
  OrOr,
  Arrow,
  LCurly,
  RCurly,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Colon,
  At,
  Question,
  Dot,
  Bang,
  Assign,
  Lt,
  Gt,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Pipe,
  Word,
  StringLit,
];

export const lashLexer = new Lexer(allTokens, { positionTracking: "onlyOffset", ensureOptimizations: false });

export class LexError extends Error {
  readonly offset: number;
  readonly length: number;
  constructor(message: string, offset: number, length: number) {
    super(message);
    this.offset = offset;
    this.length = length;
  }
}

export function tokenize(source: string): IToken[] {
  const result = lashLexer.tokenize(source);
  const first = result.errors[0];
  if (first) {
    const ch = source.codePointAt(first.offset) ?? 0;
    const text = String.fromCodePoint(ch);
    throw new LexError(`unexpected character \`${text}\``, first.offset, 1);
  }
  for (const tok of result.tokens) {
    if (tok.tokenType === Unterminated) throw new LexError("unterminated string", tok.startOffset, 1);
  }
  return result.tokens;
}

/** Decodes a string token's image into its value (escapes per §1.2). */
export function decodeString(tok: IToken): string {
  const t = tok.tokenType;
  const img = tok.image;
  if (t === RawTripleDouble || t === RawTripleSingle) return img.slice(4, -3);
  if (t === RawDouble || t === RawSingle) return img.slice(2, -1);
  const body = t === TripleDouble || t === TripleSingle ? img.slice(3, -3) : img.slice(1, -1);
  if (body.indexOf("\\") < 0) return body;
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\" || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++i]!;
    if (n === "n") out += "\n";
    else if (n === "r") out += "\r";
    else if (n === "t") out += "\t";
    else out += n;
  }
  return out;
}
