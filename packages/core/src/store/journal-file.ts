// SqliteStore's effect journal: one append-only file per turn in flight, in a directory beside
// the database (`<db>.turns/<session>.<turn>.jsonl`), instead of rows of the `journal` table.
//
// Why: a journal write is the one store write every model round trip makes twice (the model's
// answer before its tools run, a tool's completion before the next model call — journal.ts
// `deferred`). As a SQLite commit each costs ~14 syscalls (WAL frames for three B-trees, shared-
// memory locks); as an append it costs one `write`. Durability is the same as the database's
// (`synchronous = NORMAL`): a returned write survives the process being killed; a power loss may
// lose the last writes, never corrupt what came before (a torn last line is skipped on read).
//
// The rules that keep it consistent with the database:
// - A turn's file is created by its first journal write, after `beginTurn` committed its pending
//   row, and deleted after the turn's commit (or `abandonTurn`) removed that row. A file whose
//   turn has no pending row is a leftover of a crash between the two: swept when a store opens
//   (files listed first, pending rows read second, so a turn begun in between is never swept).
// - One writer per session (the lease), so one appender per file; a resuming process appends to
//   the file the crashed one left, after terminating its torn last line if it has one.
// - Each line is one write: a JSON array of the entries written together (a batch is all or nothing).
//   A later entry with the same key replaces the earlier one (an attempt's "started", then
//   "completed"), keeping its place: the order `journalForTurn` returns is first-write order.
// - Entries a previous version wrote to the `journal` table are still read (and deleted with
//   their turn): a turn pending across the upgrade resumes.
// An in-memory database (`:memory:`) keeps its journal in memory.
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "@lash/sansio";
import type { JournalEntry } from "../store.ts";
import { StoreError } from "../store.ts";
import { decoderFor, JournalEntrySchema } from "./schema.ts";

const decodeEntry = decoderFor(JournalEntrySchema);

/** Where the turn journals of the database `filename` live (undefined: an in-memory database). */
export const turnJournalDir = (filename: string): string | undefined =>
  filename === ":memory:" || filename === "" ? undefined : `${filename}.turns`;

/** A file-name-safe form of an id: lash's own ids as they are, anything else by its hash. */
const safe = (id: string): string =>
  /^[A-Za-z0-9_-]{1,100}$/.test(id) ? id : `h-${sha256Hex(id).slice(0, 40)}`;

const turnOf = (sessionId: string, turnId: string) => `${sessionId}\u0000${turnId}`;

/** Journal files a store keeps open at once (one per turn in flight, up to this many). */
const OPEN_FILES = 64;

export interface TurnJournals {
  /** Append `entries` (one write per turn they belong to); returns once written. */
  readonly put: (entries: readonly JournalEntry[]) => void;
  /** The entry recorded under `key` (the newest write of it), from every turn file: a resumed turn's lookups. */
  readonly get: (key: string) => JournalEntry | undefined;
  /** A turn's entries in first-write order; `legacy` are its rows from the `journal` table. */
  readonly forTurn: (sessionId: string, turnId: string, legacy?: readonly JournalEntry[]) => JournalEntry[];
  /** The turn is committed or abandoned: its file goes. */
  readonly dropTurn: (sessionId: string, turnId: string) => void;
  /** The session is deleted: every turn file of it goes. */
  readonly dropSession: (sessionId: string) => void;
  /** The text of every turn file (artifact garbage collection keeps what a pending turn refers to). */
  readonly texts: () => string[];
  /** Delete the files of turns not among `pending` (crash leftovers); run when a store opens. */
  readonly sweep: (pending: () => readonly { sessionId: string; turnId: string }[]) => void;
  /** Close every open file. */
  readonly close: () => void;
}

interface Open {
  readonly fd: number;
}

/** The turn journals of one database (`dir` from `turnJournalDir`; undefined: in memory). */
export function turnJournals(dir: string | undefined): TurnJournals {
  const open = new Map<string, Open>();
  /** An in-memory database's journal, by turn (a database on disk keeps nothing here: its files are it). */
  const memory = new Map<string, Map<string, JournalEntry>>();
  let made = false;
  /** A turn's file: `<session>.<turn>.jsonl` (a safe id has no dot, so the name splits one way). */
  const fileOf = (sessionId: string, turnId: string) =>
    join(dir!, `${safe(sessionId)}.${safe(turnId)}.jsonl`);

  const fail = (what: string, cause: unknown): never => {
    throw new StoreError({
      message: `${what}: ${cause instanceof Error ? cause.message : String(cause)} — check that ${dir} (beside the database) is a writable directory`,
      cause,
    });
  };

  /** Open a turn's file for appending; a torn last line (a crash mid-write) is terminated first. */
  const openFor = (sessionId: string, turnId: string, turn: string): Open => {
    const known = open.get(turn);
    if (known) return known;
    // at most OPEN_FILES descriptors: the least recently opened turn's file is closed (and reopened
    // if that turn writes again), so a daemon with many turns in flight stays within its fd limit
    if (open.size >= OPEN_FILES) closeTurn(open.keys().next().value!);
    const file = fileOf(sessionId, turnId);
    let fd: number;
    try {
      if (!made) {
        mkdirSync(dir!, { recursive: true });
        made = true;
      }
      try {
        fd = openSync(file, "a+");
      } catch (cause) {
        // the directory went when another process closed its store with no turn in flight: again
        if ((cause as { code?: string }).code !== "ENOENT") throw cause;
        mkdirSync(dir!, { recursive: true });
        fd = openSync(file, "a+");
      }
      const size = fstatSync(fd).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) writeSync(fd, "\n");
      }
    } catch (cause) {
      return fail(`cannot open the journal of turn ${turnId} of session ${sessionId}`, cause);
    }
    const o = { fd };
    open.set(turn, o);
    return o;
  };

  /** A journal file's entries by key in first-write order (torn lines skipped; a missing file: none). */
  const readFile = (file: string): Map<string, JournalEntry> => {
    const entries = new Map<string, JournalEntry>();
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch (cause) {
      if ((cause as { code?: string }).code !== "ENOENT") fail(`cannot read the journal ${file}`, cause);
    }
    let line = 0;
    for (const raw of text.split("\n")) {
      line++;
      if (raw === "") continue;
      let batch: unknown;
      try {
        batch = JSON.parse(raw);
      } catch {
        continue; // a write cut off by a crash
      }
      if (!Array.isArray(batch))
        throw new StoreError({
          message: `journal ${file} line ${line} is not a batch of entries: the file is damaged — abandon the turn (or delete the file) to go on`,
        });
      for (const e of batch) {
        const entry = decodeEntry(e, `journal ${file} line ${line}`);
        entries.set(entry.key, entry);
      }
    }
    return entries;
  };

  /** Every turn file. */
  const files = (): string[] => (dir === undefined ? [] : list(dir).map((f) => join(dir, f)));

  const put = (entries: readonly JournalEntry[]): void => {
    if (entries.length === 0) return;
    const first = entries[0]!;
    const oneTurn = entries.every((e) => e.sessionId === first.sessionId && e.turnId === first.turnId);
    for (const group of oneTurn ? [entries] : groupByTurn(entries)) {
      const { sessionId, turnId } = group[0]!;
      const turn = turnOf(sessionId, turnId);
      if (dir !== undefined) {
        const o = openFor(sessionId, turnId, turn);
        const bytes = Buffer.from(`${JSON.stringify(group)}\n`);
        try {
          // one write (a short one, e.g. on a full disk, is finished or fails)
          for (let at = 0; at < bytes.length; ) at += writeSync(o.fd, bytes, at);
        } catch (cause) {
          // a cut-off line: the file is reopened (and the line ended) before anything else is appended
          closeTurn(turn);
          fail(`cannot write the journal of turn ${turnId} of session ${sessionId}`, cause);
        }
        continue;
      }
      let mine = memory.get(turn);
      if (!mine) {
        mine = new Map();
        memory.set(turn, mine);
      }
      for (const e of group) mine.set(e.key, e);
    }
  };

  const forget = (turn: string) => {
    memory.delete(turn);
    closeTurn(turn);
  };

  function closeTurn(turn: string): void {
    const o = open.get(turn);
    if (!o) return;
    open.delete(turn);
    try {
      closeSync(o.fd);
    } catch {
      // already closed: nothing to release
    }
  }

  return {
    put,
    get: (key) => {
      for (const entries of memory.values()) {
        const e = entries.get(key);
        if (e) return e;
      }
      // read as the files are now (a lookup is for a turn resumed here, not on the per-step path)
      const quoted = JSON.stringify(key);
      for (const file of files()) {
        let text: string;
        try {
          text = readFileSync(file, "utf8");
        } catch {
          continue;
        }
        if (!text.includes(quoted)) continue;
        const e = readFile(file).get(key);
        if (e) return e;
      }
      return undefined;
    },
    forTurn: (sessionId, turnId, legacy = []) => {
      const entries =
        dir === undefined
          ? (memory.get(turnOf(sessionId, turnId)) ?? new Map<string, JournalEntry>())
          : readFile(fileOf(sessionId, turnId));
      if (legacy.length === 0) return [...entries.values()];
      const merged = new Map<string, JournalEntry>();
      for (const e of legacy) merged.set(e.key, e);
      for (const e of entries.values()) merged.set(e.key, e);
      return [...merged.values()];
    },
    dropTurn: (sessionId, turnId) => {
      forget(turnOf(sessionId, turnId));
      if (dir === undefined) return;
      try {
        unlinkSync(fileOf(sessionId, turnId));
      } catch (cause) {
        if ((cause as { code?: string }).code !== "ENOENT")
          fail(`cannot delete the journal of turn ${turnId}`, cause);
      }
    },
    dropSession: (sessionId) => {
      const prefix = `${sessionId}\u0000`;
      for (const turn of [...open.keys(), ...memory.keys()]) if (turn.startsWith(prefix)) forget(turn);
      if (dir === undefined) return;
      const mine = `${safe(sessionId)}.`;
      for (const f of list(dir)) if (f.startsWith(mine)) rmSync(join(dir, f), { force: true });
    },
    texts: () => {
      if (dir === undefined) return [...memory.values()].map((m) => JSON.stringify([...m.values()]));
      const out: string[] = [];
      for (const file of files())
        try {
          out.push(readFileSync(file, "utf8"));
        } catch {
          // deleted since it was listed: its turn is done
        }
      return out;
    },
    sweep: (pending) => {
      if (dir === undefined) return;
      // the files first, the pending turns after (see the rules at the top)
      const found = files();
      if (found.length === 0) return;
      const keep = new Set(pending().map((p) => fileOf(p.sessionId, p.turnId)));
      for (const f of found) if (!keep.has(f)) rmSync(f, { force: true });
    },
    close: () => {
      for (const turn of [...open.keys()]) forget(turn);
      // no empty directory left behind (a turn in flight anywhere keeps it)
      if (dir !== undefined && made)
        try {
          rmdirSync(dir);
        } catch {
          // not empty, or already gone
        }
    },
  };
}

function groupByTurn(entries: readonly JournalEntry[]): JournalEntry[][] {
  const groups = new Map<string, JournalEntry[]>();
  for (const e of entries) {
    const turn = turnOf(e.sessionId, e.turnId);
    const g = groups.get(turn);
    if (g) g.push(e);
    else groups.set(turn, [e]);
  }
  return [...groups.values()];
}

function list(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
