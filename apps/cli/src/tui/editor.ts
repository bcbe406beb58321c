// The prompt editor as data: a multi-line buffer with a cursor, collapsed
// pastes and prompt history. Pure; the ink component in `view/input.ts` maps
// keys onto it.

/** Pastes with at least this many lines (or characters) are shown collapsed. */
export const PASTE_COLLAPSE_LINES = 4;
export const PASTE_COLLAPSE_CHARS = 800;

const PLACEHOLDER = /\[pasted (?:\d+ lines|\d+ chars) #(\d+)\]/g;

export interface Draft {
  readonly text: string;
  readonly pastes: ReadonlyMap<number, string>;
}

export class Editor {
  text = "";
  cursor = 0;
  pastes = new Map<number, string>();
  private pasteSeq = 0;

  get isEmpty(): boolean {
    return this.text.length === 0;
  }

  /** The text to send: collapsed pastes expanded. */
  value(): string {
    return expand(this.text, this.pastes);
  }

  draft(): Draft {
    return { text: this.text, pastes: new Map(this.pastes) };
  }

  load(d: Draft): void {
    this.text = d.text;
    this.cursor = d.text.length;
    this.pastes = new Map(d.pastes);
    for (const k of d.pastes.keys()) this.pasteSeq = Math.max(this.pasteSeq, k);
  }

  clear(): void {
    this.text = "";
    this.cursor = 0;
    this.pastes = new Map();
  }

  insert(s: string): void {
    const clean = s.replace(/\r\n?/g, "\n").replace(/\t/g, "  ");
    this.text = this.text.slice(0, this.cursor) + clean + this.text.slice(this.cursor);
    this.cursor += clean.length;
  }

  newline(): void {
    this.insert("\n");
  }

  /** Insert pasted text, collapsed to a placeholder when it is large. */
  paste(raw: string): void {
    const text = raw.replace(/\r\n?/g, "\n");
    // a trailing newline ends the last line, it does not start another
    const lines = text.replace(/\n$/, "").split("\n").length;
    if (lines >= PASTE_COLLAPSE_LINES || text.length >= PASTE_COLLAPSE_CHARS) {
      const id = ++this.pasteSeq;
      this.pastes.set(id, text);
      const label = lines > 1 ? `${lines} lines` : `${text.length} chars`;
      this.insert(`[pasted ${label} #${id}]`);
    } else this.insert(text);
  }

  /** The placeholder ending exactly at `pos`, if any. */
  private placeholderEndingAt(pos: number): { start: number; id: number } | undefined {
    PLACEHOLDER.lastIndex = 0;
    for (let m = PLACEHOLDER.exec(this.text); m !== null; m = PLACEHOLDER.exec(this.text)) {
      if (m.index + m[0].length === pos) return { start: m.index, id: Number(m[1]) };
      if (m.index >= pos) break;
    }
    return undefined;
  }

  backspace(): void {
    if (this.cursor === 0) return;
    const ph = this.placeholderEndingAt(this.cursor);
    if (ph) {
      this.pastes.delete(ph.id);
      this.text = this.text.slice(0, ph.start) + this.text.slice(this.cursor);
      this.cursor = ph.start;
      return;
    }
    const step = charBefore(this.text, this.cursor);
    this.text = this.text.slice(0, this.cursor - step) + this.text.slice(this.cursor);
    this.cursor -= step;
  }

  deleteForward(): void {
    if (this.cursor >= this.text.length) return;
    const step = charAfter(this.text, this.cursor);
    this.text = this.text.slice(0, this.cursor) + this.text.slice(this.cursor + step);
  }

  left(): void {
    if (this.cursor > 0) this.cursor -= charBefore(this.text, this.cursor);
  }

  right(): void {
    if (this.cursor < this.text.length) this.cursor += charAfter(this.text, this.cursor);
  }

  private lineStart(pos = this.cursor): number {
    return this.text.lastIndexOf("\n", pos - 1) + 1;
  }

  private lineEnd(pos = this.cursor): number {
    const i = this.text.indexOf("\n", pos);
    return i < 0 ? this.text.length : i;
  }

  home(): void {
    this.cursor = this.lineStart();
  }

  end(): void {
    this.cursor = this.lineEnd();
  }

  get onFirstLine(): boolean {
    return this.lineStart() === 0;
  }

  get onLastLine(): boolean {
    return this.lineEnd() === this.text.length;
  }

  /** Move up a line; false when already on the first one. */
  up(): boolean {
    const start = this.lineStart();
    if (start === 0) return false;
    const col = this.cursor - start;
    const prevStart = this.lineStart(start - 1);
    this.cursor = Math.min(prevStart + col, start - 1);
    return true;
  }

  /** Move down a line; false when already on the last one. */
  down(): boolean {
    const end = this.lineEnd();
    if (end === this.text.length) return false;
    const col = this.cursor - this.lineStart();
    const nextEnd = this.lineEnd(end + 1);
    this.cursor = Math.min(end + 1 + col, nextEnd);
    return true;
  }

  wordLeft(): void {
    let i = this.cursor;
    while (i > 0 && /\s/.test(this.text[i - 1]!)) i--;
    while (i > 0 && !/\s/.test(this.text[i - 1]!)) i--;
    this.cursor = i;
  }

  wordRight(): void {
    let i = this.cursor;
    while (i < this.text.length && /\s/.test(this.text[i]!)) i++;
    while (i < this.text.length && !/\s/.test(this.text[i]!)) i++;
    this.cursor = i;
  }

  /** Ctrl+W */
  deleteWordBack(): void {
    const end = this.cursor;
    this.wordLeft();
    this.text = this.text.slice(0, this.cursor) + this.text.slice(end);
  }

  /** Ctrl+U */
  deleteToLineStart(): void {
    const start = this.lineStart();
    const from = start === this.cursor && start > 0 ? start - 1 : start;
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
  }

  /** Ctrl+K */
  deleteToLineEnd(): void {
    const end = this.lineEnd();
    const to = end === this.cursor && end < this.text.length ? end + 1 : end;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(to);
  }

  /** Cursor as (line, column) for rendering. */
  position(): { line: number; col: number } {
    const before = this.text.slice(0, this.cursor);
    const line = before.split("\n").length - 1;
    return { line, col: this.cursor - this.lineStart() };
  }
}

function charBefore(s: string, i: number): number {
  const c = s.charCodeAt(i - 1);
  return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? 2 : 1;
}

function charAfter(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
}

export function expand(text: string, pastes: ReadonlyMap<number, string>): string {
  return text.replace(PLACEHOLDER, (m, id: string) => pastes.get(Number(id)) ?? m);
}

/** Submitted prompts, browsed with ↑/↓; the draft being typed is kept aside while browsing. */
export class History {
  private entries: Draft[] = [];
  private index = 0;
  private saved: Draft | undefined;
  readonly max: number;

  constructor(initial: readonly string[] = [], max = 500) {
    this.max = max;
    this.entries = initial.map((text) => ({ text, pastes: new Map() }));
    this.index = this.entries.length;
  }

  get size(): number {
    return this.entries.length;
  }

  push(d: Draft): void {
    if (d.text.trim() === "") return;
    const last = this.entries[this.entries.length - 1];
    if (!last || last.text !== d.text) this.entries.push(d);
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
    this.index = this.entries.length;
    this.saved = undefined;
  }

  /** The previous entry, or undefined at the oldest. `current` is the draft to keep. */
  prev(current: Draft): Draft | undefined {
    if (this.index === 0) return undefined;
    if (this.index === this.entries.length) this.saved = current;
    this.index--;
    return this.entries[this.index];
  }

  next(): Draft | undefined {
    if (this.index >= this.entries.length) return undefined;
    this.index++;
    if (this.index === this.entries.length) {
      const s = this.saved ?? { text: "", pastes: new Map() };
      this.saved = undefined;
      return s;
    }
    return this.entries[this.index];
  }

  texts(): string[] {
    return this.entries.map((e) => e.text);
  }
}
