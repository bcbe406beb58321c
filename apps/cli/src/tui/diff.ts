// Unified diffs for review: a line-number column, red/green line backgrounds and
// word-level highlights of what changed inside a replaced line. Pure.
import type { Line, Seg } from "./markdown.ts";
import { palette } from "./theme.ts";

interface Row {
  readonly kind: "add" | "del" | "ctx" | "hunk" | "file";
  readonly text: string;
  readonly no?: number;
}

function parse(diff: string): Row[] {
  const rows: Row[] = [];
  let oldNo = 0;
  let newNo = 0;
  for (const l of diff.replace(/\n+$/, "").split("\n")) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(l);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      rows.push({ kind: "hunk", text: l });
    } else if (l.startsWith("+++") || l.startsWith("---") || l.startsWith("diff ") || l.startsWith("index "))
      rows.push({ kind: "file", text: l });
    else if (l.startsWith("+")) rows.push({ kind: "add", text: l.slice(1), no: newNo++ });
    else if (l.startsWith("-")) rows.push({ kind: "del", text: l.slice(1), no: oldNo++ });
    else if (l.startsWith("\\")) rows.push({ kind: "file", text: l });
    else {
      rows.push({ kind: "ctx", text: l.startsWith(" ") ? l.slice(1) : l, no: newNo });
      oldNo++;
      newNo++;
    }
  }
  return rows;
}

const WORD = /\w+|\s+|[^\w\s]/g;

/** The changed middle of two lines, by word tokens: [prefix length, suffix length] in characters. */
export function changedSpan(
  a: string,
  b: string,
): { readonly a: [number, number]; readonly b: [number, number] } {
  const ta = a.match(WORD) ?? [];
  const tb = b.match(WORD) ?? [];
  let p = 0;
  while (p < ta.length && p < tb.length && ta[p] === tb[p]) p++;
  let s = 0;
  while (s < ta.length - p && s < tb.length - p && ta[ta.length - 1 - s] === tb[tb.length - 1 - s]) s++;
  const len = (ts: string[], from: number, to: number) => ts.slice(from, to).join("").length;
  const pa = len(ta, 0, p);
  const pb = len(tb, 0, p);
  return {
    a: [pa, pa + len(ta, p, ta.length - s)],
    b: [pb, pb + len(tb, p, tb.length - s)],
  };
}

/**
 * A diff as styled lines: `  12 + text` with a line background per kind, and a
 * stronger background on the words that changed when a removed line is
 * replaced by an added one (runs of equal length are paired line by line).
 */
export function renderDiff(diff: string): Line[] {
  const rows = parse(diff);
  const width = Math.max(2, ...rows.map((r) => (r.no !== undefined ? String(r.no).length : 0)));
  const spans = new Map<number, [number, number]>();
  for (let i = 0; i < rows.length; ) {
    if (rows[i]!.kind !== "del") {
      i++;
      continue;
    }
    let d = i;
    while (d < rows.length && rows[d]!.kind === "del") d++;
    let a = d;
    while (a < rows.length && rows[a]!.kind === "add") a++;
    const dels = d - i;
    const adds = a - d;
    if (dels === adds)
      for (let k = 0; k < dels; k++) {
        const span = changedSpan(rows[i + k]!.text, rows[d + k]!.text);
        // a line replaced as a whole gets no word highlight (the line colour says it)
        if (
          span.a[1] - span.a[0] < rows[i + k]!.text.length ||
          span.b[1] - span.b[0] < rows[d + k]!.text.length
        ) {
          spans.set(i + k, span.a);
          spans.set(d + k, span.b);
        }
      }
    i = Math.max(a, i + 1);
  }
  const p = palette();
  return rows.map((r, i): Line => {
    if (r.kind === "hunk") return [{ text: r.text, color: p.hunk }];
    if (r.kind === "file") return [{ text: r.text, bold: true, dim: true }];
    const num = `${String(r.no ?? "").padStart(width)} `;
    if (r.kind === "ctx")
      return [
        { text: num, dim: true },
        { text: `  ${r.text}`, dim: true },
      ];
    const add = r.kind === "add";
    const fg = add ? p.added : p.removed;
    const bg = add ? p.addedBg : p.removedBg;
    const wordBg = add ? p.addedWordBg : p.removedWordBg;
    const base: Omit<Seg, "text"> = { color: fg, ...(bg ? { bg } : {}) };
    const segs: Seg[] = [
      { text: num, dim: true },
      { text: add ? "+ " : "- ", ...base },
    ];
    const span = spans.get(i);
    if (span && span[1] > span[0]) {
      if (span[0] > 0) segs.push({ text: r.text.slice(0, span[0]), ...base });
      segs.push({
        text: r.text.slice(span[0], span[1]),
        ...base,
        ...(wordBg ? { bg: wordBg } : { underline: true }),
        bold: true,
      });
      if (span[1] < r.text.length) segs.push({ text: r.text.slice(span[1]), ...base });
    } else segs.push({ text: r.text || " ", ...base });
    return segs;
  });
}
