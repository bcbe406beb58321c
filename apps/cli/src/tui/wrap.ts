// Styled lines wrapped to the terminal before ink sees them, with the width function ink and the
// terminal use (string-width: East Asian wide characters and emoji take two columns). A line's
// leading segments marked `hang` are its gutter or indent: they start every wrapped row again
// (`repeat`: a quote bar `▌ `) or become blank space of their width (`indent`: a list bullet, a
// card's `⎿ `), so wrapped quotes, lists and card bodies keep their hanging indent. Fenced code
// has no gutter: it wraps at column 0, so its rows copy as the code. Rows are never wider than
// the width, so ink never wraps them again and never ends a row one column past the edge.
import stringWidth from "string-width";

/** What wrapping needs of a styled segment (markdown.ts's `Seg`; not imported from there: markdown.ts uses this module). */
interface Seg {
  readonly text: string;
  readonly hang?: "repeat" | "indent";
}
type Line<S extends Seg = Seg> = readonly S[];

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

export function textWidth(text: string): number {
  return stringWidth(text);
}

export function lineWidth(line: Line): number {
  let n = 0;
  for (const s of line) n += stringWidth(s.text);
  return n;
}

/** Below this many columns for the text, a hanging prefix is not kept (the text would not fit). */
const MIN_TEXT = 8;

/** One styled line as rows of at most `width` columns. */
export function wrapLine<S extends Seg>(line: Line<S>, width: number): Line<S>[] {
  const w = Math.max(1, Math.floor(width));
  if (!line.some((s) => s.text.includes("\t")) && lineWidth(line) <= w) return [line];
  let k = 0;
  while (k < line.length && line[k]!.hang) k++;
  let prefix: readonly S[] = line.slice(0, k);
  let body: readonly S[] = line.slice(k);
  let prefixWidth = lineWidth(prefix);
  if (w - prefixWidth < MIN_TEXT) {
    prefix = [];
    body = line;
    prefixWidth = 0;
  }
  const cont: S[] = prefix.map((s) =>
    s.hang === "repeat" ? s : { ...s, text: " ".repeat(stringWidth(s.text)) },
  );
  const avail = w - prefixWidth;
  const rows: S[][] = [];
  let cur: S[] = [];
  let curW = 0;
  let curSeg: S | undefined;
  let pending: { seg: S; text: string; width: number } | undefined;
  const append = (seg: S, text: string, tw: number) => {
    const last = cur[cur.length - 1];
    if (last && curSeg === seg) cur[cur.length - 1] = { ...last, text: last.text + text };
    else cur.push({ ...seg, text });
    curSeg = seg;
    curW += tw;
  };
  const newRow = () => {
    rows.push(cur);
    cur = [];
    curW = 0;
    curSeg = undefined;
    pending = undefined;
  };
  for (const seg of body) {
    const text = seg.text.includes("\t") ? seg.text.replace(/\t/g, "    ") : seg.text;
    for (const token of text.split(/( +)/)) {
      if (!token) continue;
      if (token[0] === " ") {
        // spaces: kept between words on a row, dropped at a break
        if (curW === 0 && rows.length > 0) continue;
        pending = { seg, text: token, width: token.length };
        continue;
      }
      const tw = stringWidth(token);
      const gap = pending ? pending.width : 0;
      if (curW + gap + tw <= avail) {
        if (pending) append(pending.seg, pending.text, pending.width);
        pending = undefined;
        append(seg, token, tw);
        continue;
      }
      if (tw <= avail && curW > 0) {
        newRow();
        append(seg, token, tw);
        continue;
      }
      // a word longer than a row: cut it by grapheme, filling the current row first
      if (pending && curW + pending.width < avail) append(pending.seg, pending.text, pending.width);
      pending = undefined;
      for (const { segment } of graphemes.segment(token)) {
        const gw = stringWidth(segment);
        if (curW + gw > avail && curW > 0) newRow();
        append(seg, segment, gw);
      }
    }
  }
  if (cur.length > 0 || rows.length === 0) rows.push(cur);
  return rows.map((r, i) => (i === 0 ? [...prefix, ...r] : [...cont, ...r]));
}

/** Every line wrapped to `width`. */
export function wrapLines<S extends Seg>(lines: readonly Line<S>[], width: number): Line<S>[] {
  const out: Line<S>[] = [];
  for (const l of lines) out.push(...wrapLine(l, width));
  return out;
}
