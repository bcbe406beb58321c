// A small terminal markdown renderer: markdown text → lines of styled segments.
// Headings, emphasis, inline code, links, fenced code (with light highlighting),
// lists, block quotes, rules and tables. Pure: the ink view is in `view/text.ts`.

import { palette } from "./theme.ts";
import { lineWidth, wrapLine } from "./wrap.ts";

export interface Seg {
  readonly text: string;
  readonly bold?: boolean;
  readonly italic?: boolean;
  readonly underline?: boolean;
  readonly strikethrough?: boolean;
  readonly dim?: boolean;
  readonly color?: string;
  readonly bg?: string;
  /** Marks a line of a fenced code block (on its first segment): drawn at column 0, no gutter, so it copies clean. */
  readonly code?: boolean;
  /** A line's leading gutter or indent, kept on every wrapped row: drawn again, or as blank space (wrap.ts). */
  readonly hang?: "repeat" | "indent";
}

export type Line = readonly Seg[];

type Style = Omit<Seg, "text">;

/** Inline markdown → segments. */
export function parseInline(text: string, base: Style = {}): Seg[] {
  const out: Seg[] = [];
  let buf = "";
  const flush = () => {
    if (buf) out.push({ ...base, text: buf });
    buf = "";
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    // escaped character
    if (c === "\\" && i + 1 < text.length && /[\\`*_{}[\]()#+\-.!~|<>]/.test(text[i + 1]!)) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") {
      let n = 1;
      while (text[i + n] === "`") n++;
      const fence = "`".repeat(n);
      const end = text.indexOf(fence, i + n);
      if (end > i) {
        flush();
        const code = text.slice(i + n, end);
        out.push({ ...base, text: n > 1 ? code.trim() : code, color: palette().code });
        i = end + n;
        continue;
      }
    }
    if ((c === "*" || c === "_") && text[i + 1] === c) {
      const end = text.indexOf(c + c, i + 2);
      if (end > i + 2 && text[i + 2] !== " ") {
        flush();
        out.push(...parseInline(text.slice(i + 2, end), { ...base, bold: true }));
        i = end + 2;
        continue;
      }
    }
    if (c === "~" && text[i + 1] === "~") {
      const end = text.indexOf("~~", i + 2);
      if (end > i + 2) {
        flush();
        out.push(...parseInline(text.slice(i + 2, end), { ...base, strikethrough: true }));
        i = end + 2;
        continue;
      }
    }
    if (c === "*" || c === "_") {
      const prev = i > 0 ? text[i - 1]! : " ";
      const next = text[i + 1] ?? " ";
      const opens = next !== " " && next !== c && (c === "*" || !/\w/.test(prev));
      if (opens) {
        let end = i + 1;
        for (;;) {
          end = text.indexOf(c, end);
          if (end < 0) break;
          const after = text[end + 1] ?? " ";
          if (text[end - 1] !== " " && text[end + 1] !== c && (c === "*" || !/\w/.test(after))) break;
          end++;
        }
        if (end > i + 1) {
          flush();
          out.push(...parseInline(text.slice(i + 1, end), { ...base, italic: true }));
          i = end + 1;
          continue;
        }
      }
    }
    if (c === "[") {
      const m = /^\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/.exec(text.slice(i));
      if (m) {
        flush();
        const label = m[1]!;
        const url = m[2]!;
        out.push(...parseInline(label || url, { ...base, color: palette().link, underline: true }));
        if (label && label !== url) out.push({ ...base, text: ` (${url})`, dim: true });
        i += m[0].length;
        continue;
      }
    }
    if (c === "<") {
      const m = /^<(https?:\/\/[^>\s]+)>/.exec(text.slice(i));
      if (m) {
        flush();
        out.push({ ...base, text: m[1]!, color: palette().link, underline: true });
        i += m[0].length;
        continue;
      }
    }
    if (c === "h" && (i === 0 || /[\s(]/.test(text[i - 1]!))) {
      const m = /^https?:\/\/[^\s)>\]]+[^\s)>\].,;:!?'"]/.exec(text.slice(i));
      if (m) {
        flush();
        out.push({ ...base, text: m[0], color: palette().link, underline: true });
        i += m[0].length;
        continue;
      }
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

const KEYWORDS = new Set(
  (
    "abstract as async await break case catch class const continue def default defer del delete do elif else " +
    "enum export extends false finally fn for from func function go if impl implements import in interface is " +
    "let loop match mod mut new nil none null of package pass private protected pub public raise return self " +
    "static struct super switch then this throw true try type typeof undefined use var void where while with yield " +
    "None True False local end elsif unless echo fi done esac"
  ).split(" "),
);

const HASH_COMMENT = new Set([
  "sh",
  "bash",
  "zsh",
  "shell",
  "console",
  "py",
  "python",
  "rb",
  "ruby",
  "yaml",
  "yml",
  "toml",
  "dockerfile",
  "make",
  "makefile",
  "r",
  "perl",
  "lash",
  "lashlang",
]);

/** Light, language-agnostic highlighting of one code line. */
export function highlightCode(line: string, lang: string): Seg[] {
  const l = lang.toLowerCase();
  if (l === "diff" || l === "patch") return [diffSeg(line)];
  const out: Seg[] = [];
  const hash = HASH_COMMENT.has(l);
  const re =
    /(\/\/.*$|#.*$|--.*$|"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`(?:[^`\\]|\\.)*`?|\b\d[\d_.]*(?:e[+-]?\d+)?\b|[A-Za-z_$][\w$]*)/g;
  let last = 0;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    const tok = m[0];
    let style: Style | undefined;
    if (tok.startsWith("//")) {
      if (hash) {
        // not a comment in hash-comment languages: rescan after the slashes
        re.lastIndex = m.index + 2;
        continue;
      }
      style = { color: palette().comment, italic: true };
    } else if (tok.startsWith("#")) {
      if (!hash) {
        re.lastIndex = m.index + 1;
        continue;
      }
      style = { color: palette().comment, italic: true };
    } else if (tok.startsWith("--")) {
      if (l !== "sql" && l !== "lua" && l !== "haskell" && l !== "hs") {
        re.lastIndex = m.index + 2;
        continue;
      }
      style = { color: palette().comment, italic: true };
    } else if (tok[0] === '"' || tok[0] === "'" || tok[0] === "`") style = { color: palette().string };
    else if (/^\d/.test(tok)) style = { color: palette().number };
    else if (KEYWORDS.has(tok)) style = { color: palette().keyword };
    if (!style) continue;
    if (m.index > last) out.push({ text: line.slice(last, m.index) });
    out.push({ text: tok, ...style });
    last = m.index + tok.length;
  }
  if (last < line.length) out.push({ text: line.slice(last) });
  return out.length > 0 ? out : [{ text: "" }];
}

export function diffSeg(line: string): Seg {
  if (line.startsWith("+++") || line.startsWith("---")) return { text: line, bold: true, dim: true };
  if (line.startsWith("+")) return { text: line, color: palette().added };
  if (line.startsWith("-")) return { text: line, color: palette().removed };
  if (line.startsWith("@@")) return { text: line, color: palette().hunk };
  return { text: line, dim: true };
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w+#.-]*)/;

/** Where the text may be cut into two independently renderable markdown chunks: after the last blank line outside a code fence (0 when none). */
export function safeSplitPoint(text: string): number {
  let inFence: string | undefined;
  let pos = 0;
  let split = 0;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    if (nl < 0) break;
    const line = text.slice(pos, nl);
    const f = FENCE.exec(line);
    if (f) {
      const marker = f[2]!;
      if (inFence === undefined) inFence = marker[0]!;
      else if (marker[0] === inFence && line.trim().length === marker.length) inFence = undefined;
    } else if (inFence === undefined && line.trim() === "" && pos > 0) {
      split = nl + 1;
    }
    pos = nl + 1;
  }
  return split;
}

function tableRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|")) s = s.slice(0, -1);
  return s.split("|").map((c) => c.trim());
}

const segWidth = lineWidth;

/** Columns a table cell needs at least: its longest word, within 4..12. */
function minCellWidth(cell: readonly Seg[]): number {
  let longest = 0;
  for (const s of cell)
    for (const w of s.text.split(/\s+/)) longest = Math.max(longest, segWidth([{ text: w }]));
  return Math.max(4, Math.min(12, longest));
}

/**
 * A table at most `width` columns wide: columns keep their natural width when it fits; else the
 * widest give up columns and their cells wrap inside the cell. When even that cannot fit, every
 * row becomes a list of `header: value` lines.
 */
function renderTable(rows: Seg[][][], width: number): Line[] {
  const cols = Math.max(...rows.map((r) => r.length));
  const sep = 3; // " │ "
  const natural: number[] = [];
  const minimum: number[] = [];
  for (let c = 0; c < cols; c++) {
    natural.push(Math.max(3, ...rows.map((r) => segWidth(r[c] ?? []))));
    minimum.push(Math.min(natural[c]!, Math.max(3, ...rows.map((r) => minCellWidth(r[c] ?? [])))));
  }
  const avail = width - sep * (cols - 1);
  if (minimum.reduce((a, b) => a + b, 0) > avail) return tableAsList(rows, width);
  const widths = [...natural];
  let total = widths.reduce((a, b) => a + b, 0);
  while (total > avail) {
    // take a column from the widest column that can still give one
    let best = -1;
    for (let c = 0; c < cols; c++)
      if (widths[c]! > minimum[c]! && (best < 0 || widths[c]! > widths[best]!)) best = c;
    if (best < 0) break;
    widths[best]!--;
    total--;
  }
  const out: Line[] = [];
  rows.forEach((r, ri) => {
    const cells = widths.map((w, c) => wrapLine(r[c] ?? [], w));
    const height = Math.max(...cells.map((x) => x.length));
    for (let k = 0; k < height; k++) {
      const segs: Seg[] = [];
      for (let c = 0; c < cols; c++) {
        const part = cells[c]![k] ?? [];
        if (c > 0) segs.push({ text: " │ ", dim: true });
        segs.push(...part);
        const pad = widths[c]! - segWidth(part);
        if (pad > 0 && c < cols - 1) segs.push({ text: " ".repeat(pad) });
      }
      out.push(segs);
    }
    if (ri === 0) out.push([{ text: widths.map((w) => "─".repeat(w)).join("─┼─"), dim: true }]);
  });
  return out;
}

/** A table too wide for the terminal: each row as `• header: value` lines. */
function tableAsList(rows: Seg[][][], width: number): Line[] {
  const [head = [], ...body] = rows;
  const out: Line[] = [];
  body.forEach((r, ri) => {
    if (ri > 0) out.push([]);
    r.forEach((cell, c) => {
      const name = head[c] ?? [{ text: `column ${c + 1}`, bold: true }];
      const lead: Seg[] =
        c === 0
          ? [{ text: "• ", color: palette().bullet, hang: "indent" }]
          : [{ text: "  ", hang: "indent" }];
      out.push(
        ...wrapLine([...lead, ...name.map((s) => ({ ...s, bold: true })), { text: ": " }, ...cell], width),
      );
    });
  });
  return out;
}

/** Render markdown to styled lines. `width` bounds rules and tables. */
export function renderMarkdown(text: string, width = 80): Line[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: Line[] = [];
  let i = 0;
  let lastBlank = true;
  const push = (l: Line) => {
    out.push(l);
    lastBlank = false;
  };
  const blank = () => {
    if (!lastBlank && out.length > 0) out.push([]);
    lastBlank = true;
  };
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[2]!;
      const lang = fence[3] ?? "";
      const indent = fence[1]!.length;
      i++;
      blank();
      if (lang) push([{ text: `  ${lang}`, dim: true }]);
      while (i < lines.length) {
        const l = lines[i]!;
        if (l.trim().startsWith(marker[0]!.repeat(marker.length)) && l.trim().replace(/[`~]/g, "") === "") {
          i++;
          break;
        }
        const src = l.slice(Math.min(indent, l.length - l.trimStart().length));
        push([{ text: "", code: true }, ...highlightCode(src, lang)]);
        i++;
      }
      blank();
      continue;
    }
    if (line.trim() === "") {
      blank();
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      blank();
      const segs = parseInline(heading[2]!, { bold: true, color: palette().heading, underline: level === 1 });
      // no `###` markers at any level: level 1 is underlined, every heading bold
      push(segs);
      blank();
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blank();
      push([{ text: "─".repeat(Math.max(3, Math.min(width, 80) - 2)), dim: true }]);
      blank();
      i++;
      continue;
    }
    // table: header row followed by a separator row
    if (
      line.includes("|") &&
      i + 1 < lines.length &&
      /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(lines[i + 1]!)
    ) {
      const rows: Seg[][][] = [tableRow(line).map((c) => parseInline(c, { bold: true }))];
      i += 2;
      while (i < lines.length && lines[i]!.includes("|") && lines[i]!.trim() !== "") {
        rows.push(tableRow(lines[i]!).map((c) => parseInline(c)));
        i++;
      }
      blank();
      for (const l of renderTable(rows, width)) push(l);
      blank();
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote) {
      push([
        { text: "▌ ", color: palette().quote, hang: "repeat" },
        ...parseInline(quote[1]!, { italic: true, color: palette().quote }),
      ]);
      i++;
      continue;
    }
    const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(\[[ xX]\]\s+)?(.*)$/.exec(line);
    if (item) {
      const depth = Math.floor(item[1]!.replace(/\t/g, "  ").length / 2);
      const marker = item[2]!;
      const task = item[3];
      const bullet = /\d/.test(marker) ? `${marker} ` : depth % 2 === 0 ? "• " : "◦ ";
      const pad = "  ".repeat(depth);
      let body = item[4]!;
      i++;
      // lazy continuation lines of the item
      while (
        i < lines.length &&
        lines[i]!.trim() !== "" &&
        /^\s{2,}\S/.test(lines[i]!) &&
        !/^\s*([-*+]|\d{1,9}[.)])\s+/.test(lines[i]!) &&
        !FENCE.test(lines[i]!)
      ) {
        body += ` ${lines[i]!.trim()}`;
        i++;
      }
      const taskSeg: Seg[] = task
        ? [/x/i.test(task) ? { text: "☑ ", color: palette().added } : { text: "☐ ", dim: true }]
        : [];
      push([
        { text: pad, hang: "indent" },
        { text: bullet, color: palette().bullet, hang: "indent" },
        ...taskSeg.map((t): Seg => ({ ...t, hang: "indent" })),
        ...parseInline(body),
      ]);
      continue;
    }
    // paragraph: join soft-wrapped lines
    let para = line.trim();
    i++;
    while (i < lines.length) {
      const l = lines[i]!;
      if (
        l.trim() === "" ||
        FENCE.test(l) ||
        /^(#{1,6})\s/.test(l) ||
        /^\s*>/.test(l) ||
        /^\s*([-*+]|\d{1,9}[.)])\s+/.test(l) ||
        (l.includes("|") && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1]!))
      )
        break;
      // a hard break (two trailing spaces or a backslash) keeps the line break
      if (/( {2}|\\)$/.test(para)) {
        push(parseInline(para.replace(/( {2,}|\\)$/, "")));
        para = l.trim();
      } else para += ` ${l.trim()}`;
      i++;
    }
    push(parseInline(para));
  }
  while (out.length > 0 && out[out.length - 1]!.length === 0) out.pop();
  return out;
}

/** Plain text of a line (tests, width estimates). */
export function lineText(line: Line): string {
  return line.map((s) => s.text).join("");
}
