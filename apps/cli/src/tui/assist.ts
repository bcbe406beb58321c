// Prompt assistance as data: the `/` command menu, `@path` completion (the
// tools package's ignore-aware walker + a fuzzy ranking), Ctrl+R history
// search, and turning `@path` mentions into what the model receives. Pure
// except the file index (reads the workspace) and `resolveMentions` (reads files).
import { existsSync, statSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import type { AttachmentPart, Part } from "@lash/sansio";
import { imageMediaType, isBinary, Workspace, walkFiles } from "@lash/tools";
import { COMMANDS, type CommandSpec } from "./commands.ts";

export interface MenuEntry {
  /** What Tab/Enter puts in the prompt in place of the token. */
  readonly insert: string;
  readonly label: string;
  readonly detail?: string;
}

export interface Menu {
  readonly kind: "command" | "file";
  /** Where the completed token starts and ends in the editor's text. */
  readonly start: number;
  readonly end: number;
  readonly entries: readonly MenuEntry[];
}

export const MENU_ROWS = 8;

/** The `/` menu while the prompt is a bare `/word` (no space yet). */
export function commandMenu(text: string): Menu | undefined {
  const m = /^\/([\w?-]*)$/.exec(text);
  if (!m) return undefined;
  const p = m[1]!.toLowerCase();
  const score = (c: CommandSpec): number => {
    if (c.name.startsWith(p)) return 0;
    if (c.aliases?.some((a) => a.startsWith(p))) return 1;
    return fuzzyScore(p, c.name) === undefined ? -1 : 2;
  };
  const entries = COMMANDS.map((c) => ({ c, s: score(c) }))
    .filter((x) => x.s >= 0)
    .sort((a, b) => a.s - b.s)
    .map(
      ({ c }): MenuEntry => ({
        insert: `/${c.name}${c.args ? " " : ""}`,
        label: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
        detail: c.summary,
      }),
    );
  if (entries.length === 0) return undefined;
  return { kind: "command", start: 0, end: text.length, entries };
}

/** The `@token` the cursor is in (or right after), if any. */
export function mentionAt(
  text: string,
  cursor: number,
): { start: number; end: number; query: string } | undefined {
  let start = cursor;
  while (start > 0 && !/\s/.test(text[start - 1]!)) start--;
  if (text[start] !== "@") return undefined;
  if (start > 0 && !/\s/.test(text[start - 1]!)) return undefined;
  let end = cursor;
  while (end < text.length && !/\s/.test(text[end]!)) end++;
  return { start, end, query: text.slice(start + 1, cursor) };
}

/**
 * Fuzzy match of `query` against `target` (case-insensitive subsequence). Lower is
 * better; undefined when it does not match. Contiguous runs, matches at word/path
 * starts and matches in the file name score best; shorter targets break ties.
 */
export function fuzzyScore(query: string, target: string): number | undefined {
  return scoreLower(query.toLowerCase(), target.toLowerCase());
}

/** `fuzzyScore` of an already lower-cased query and target. */
function scoreLower(q: string, t: string): number | undefined {
  if (q === "") return t.length;
  const base = t.lastIndexOf("/") + 1;
  let score = 0;
  let ti = 0;
  let prev = -2;
  for (const ch of q) {
    const at = t.indexOf(ch, ti);
    if (at < 0) return undefined;
    const boundary = at === 0 || "/._-".includes(t[at - 1]!);
    score += at === prev + 1 ? 0 : boundary ? 2 : 5 + Math.min(10, at - ti);
    if (at < base) score += 1; // prefer hits in the file name
    prev = at;
    ti = at + 1;
  }
  // a query that appears verbatim in the name is the best of all
  const inName = t.indexOf(q, base);
  if (inName >= 0) score -= 20 + (inName === base ? 10 : 0);
  return score * 1000 + t.length;
}

/** The workspace's files (ignore-aware, the tools' walker), listed once and cached. */
export class FileIndex {
  private files: string[] | undefined;
  private lower: string[] = [];
  private loading: Promise<string[]> | undefined;
  private loadedAt = 0;
  /** The last query and the files it matched: a longer query only searches those. */
  private last: { readonly q: string; readonly hits: readonly number[] } | undefined;
  readonly root: string;
  readonly max: number;

  constructor(root: string, max = 20_000) {
    this.root = root;
    this.max = max;
  }

  /** The cached list (undefined until the first `load` finishes). */
  get list(): readonly string[] | undefined {
    return this.files;
  }

  /** List the files (again when the cached list is older than `maxAgeMs`). */
  load(maxAgeMs = 30_000): Promise<string[]> {
    if (this.files && Date.now() - this.loadedAt < maxAgeMs) return Promise.resolve(this.files);
    if (this.loading) return this.loading;
    this.loading = (async () => {
      const out: string[] = [];
      try {
        const ws = new Workspace(this.root);
        const ctl = new AbortController();
        await walkFiles(ws, { real: ws.realRoot, relative: "." }, ctl.signal, (e) => {
          out.push(e.relative);
          return out.length < this.max;
        });
      } catch {
        // an unreadable workspace completes nothing
      }
      this.files = out;
      this.lower = out.map((f) => f.toLowerCase());
      this.last = undefined;
      this.loadedAt = Date.now();
      this.loading = undefined;
      return out;
    })();
    return this.loading;
  }

  /** Version of the list (changes when it is listed again). */
  get version(): number {
    return this.loadedAt;
  }

  /**
   * The best `limit` fuzzy matches of `query`, best first. Typing narrows: a query that
   * extends the previous one only looks at what that one matched (a subsequence of a
   * longer query matches a subset).
   */
  rank(query: string, limit = 50): string[] {
    const files = this.files;
    if (!files) return [];
    const q = query.toLowerCase();
    const pool = this.last && q.startsWith(this.last.q) ? this.last.hits : undefined;
    const hits: number[] = [];
    // the best `limit`, kept sorted (no sort of every hit)
    const top: { i: number; s: number }[] = [];
    const better = (a: { i: number; s: number }, b: { i: number; s: number }) =>
      a.s < b.s || (a.s === b.s && files[a.i]! < files[b.i]!);
    const visit = (i: number) => {
      const s = scoreLower(q, this.lower[i]!);
      if (s === undefined) return;
      hits.push(i);
      const x = { i, s };
      if (top.length === limit && !better(x, top[limit - 1]!)) return;
      let at = top.length;
      while (at > 0 && better(x, top[at - 1]!)) at--;
      top.splice(at, 0, x);
      if (top.length > limit) top.pop();
    };
    if (pool) for (const i of pool) visit(i);
    else for (let i = 0; i < files.length; i++) visit(i);
    this.last = { q, hits };
    return top.map((x) => files[x.i]!);
  }
}

/** The `@` menu: the best fuzzy matches of the token among the files. */
export function fileMenu(text: string, cursor: number, index: FileIndex, limit = 50): Menu | undefined {
  const at = mentionAt(text, cursor);
  if (!at || index.list === undefined) return undefined;
  const entries = index.rank(at.query, limit).map((f): MenuEntry => ({ insert: `@${f} `, label: f }));
  if (entries.length === 0) return undefined;
  return { kind: "file", start: at.start, end: at.end, entries };
}

/** Replace the menu's token with an entry. */
export function applyEntry(text: string, menu: Menu, entry: MenuEntry): { text: string; cursor: number } {
  const after = text.slice(menu.end).replace(/^ /, "");
  const next = text.slice(0, menu.start) + entry.insert + after;
  return { text: next, cursor: menu.start + entry.insert.length };
}

/** Ctrl+R: the newest history entry (at or before `from`, counting from the newest) containing `query`. */
export function searchHistory(
  entries: readonly string[],
  query: string,
  from = 0,
): { text: string; index: number } | undefined {
  if (!query) return undefined;
  const q = query.toLowerCase();
  let skipped = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (!e.toLowerCase().includes(q)) continue;
    if (skipped++ < from) continue;
    return { text: e, index: from };
  }
  return undefined;
}

/**
 * A paste that is one image file's path (what terminals paste when a file is dropped on them:
 * maybe quoted, spaces maybe backslash-escaped), unescaped; undefined otherwise. Paths with
 * spaces cannot be @mentions, so they are not taken.
 */
export function pastedImagePath(text: string): string | undefined {
  let p = text.trim();
  if (p.includes("\n")) return undefined;
  if ((p.startsWith("'") && p.endsWith("'")) || (p.startsWith('"') && p.endsWith('"'))) p = p.slice(1, -1);
  p = p.replace(/\\ /g, " ");
  if (p.startsWith("file://")) p = decodeURIComponent(p.slice(7));
  if (!/\.(png|jpe?g|gif|webp)$/i.test(p) || /\s/.test(p) || !isAbsolute(p)) return undefined;
  try {
    return existsSync(p) && statSync(p).isFile() ? p : undefined;
  } catch {
    return undefined;
  }
}

// ---- @path mentions → what the model gets ----

/** Text files bigger than this are attached cut, with a note. */
export const MAX_FILE_CHARS = 100_000;
/** Images bigger than this are not attached. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export interface Resolved {
  /** Parts of the user message: the typed text, then file contents and images. */
  readonly parts: readonly Part[];
  /** What was attached (`src/a.ts`, `shot.png (image)`) for the transcript. */
  readonly attached: readonly string[];
  /** Mentions that could not be attached, and why. */
  readonly problems: readonly string[];
}

const MENTION = /(^|\s)@([^\s]+)/g;

/** The first `max` bytes of a file (all of it when it is smaller). */
async function readHead(path: string, max: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(max);
    const { bytesRead } = await handle.read(buffer, 0, max, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Attach every `@path` of the prompt that names a file of the workspace: a text
 * file's content follows the prompt in a `<file>` block; an image (png, jpeg,
 * gif, webp) becomes an image part when the model accepts images. `@word`s
 * that are no file are left as typed.
 */
export async function resolveMentions(
  text: string,
  cwd: string,
  options: { readonly images: boolean; readonly model: string },
): Promise<Resolved> {
  const parts: Part[] = [{ type: "text", text }];
  const attached: string[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(MENTION)) {
    const raw = m[2]!.replace(/[,.;:!?)]+$/, "");
    const abs = isAbsolute(raw) ? raw : resolve(cwd, raw);
    const rel = relative(cwd, abs) || raw;
    if (seen.has(abs)) continue;
    seen.add(abs);
    const st = await stat(abs).catch(() => undefined);
    if (!st?.isFile()) continue;
    // read no more than an attachment can use: a multi-GB log or database is never loaded whole
    const bytes = await readHead(abs, Math.max(MAX_IMAGE_BYTES + 1, MAX_FILE_CHARS * 4 + 4)).catch(
      () => undefined,
    );
    if (!bytes) {
      problems.push(`@${raw}: cannot be read`);
      continue;
    }
    const media = imageMediaType(bytes);
    if (media) {
      if (!options.images) {
        problems.push(
          `@${raw} is an image, and ${options.model} does not accept images: it was not attached (/model picks another)`,
        );
        continue;
      }
      if (st.size > MAX_IMAGE_BYTES) {
        problems.push(
          `@${raw} is ${Math.round(st.size / 1024 / 1024)} MB: images over 5 MB are not attached`,
        );
        continue;
      }
      const img: AttachmentPart = {
        type: "attachment",
        mediaType: media,
        data: bytes.toString("base64"),
        name: rel,
      };
      parts.push(img);
      attached.push(`${rel} (image)`);
      continue;
    }
    if (isBinary(bytes)) {
      problems.push(`@${raw} is a binary file: it was not attached`);
      continue;
    }
    let content = bytes.toString("utf8");
    let note = "";
    if (content.length > MAX_FILE_CHARS || bytes.length < st.size) {
      note = ` truncated="first ${MAX_FILE_CHARS} characters of ${st.size} bytes"`;
      content = content.slice(0, MAX_FILE_CHARS);
    }
    parts.push({
      type: "text",
      text: `\n\n<file path="${rel}"${note}>\n${content.replace(/\n?$/, "\n")}</file>`,
    });
    attached.push(rel);
  }
  return { parts, attached, problems };
}
