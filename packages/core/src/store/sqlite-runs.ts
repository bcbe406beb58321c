// Runs (schema 7): each chain of one line's nodes a commit appends, kept a second time as one
// `node_runs` row, so a path read takes a line's envelopes from a few rows (sqlite-nodes.ts
// `appendRun`, RUN_SQL) instead of every node row's columns. Building them is plain code with
// no driver: the commit (sqlite-write.ts), migration 7 and a recovered file (sqlite-repair.ts,
// loaded with @lash/core) build them the same way.
import type Sqlite from "better-sqlite3";
import type { RunRow } from "./sqlite-nodes.ts";

/** The SEGMENT_SQL letter of a kind. */
const KIND_LETTERS: ReadonlyMap<string, string> = new Map([
  ["message", "m"],
  ["protocol", "p"],
  ["plugin", "g"],
  ["frame", "f"],
]);

/** A node as a commit writes it, with its row's place and seq. */
export interface RunNode {
  readonly id: string;
  readonly parentId: string | null;
  readonly frameId: string;
  readonly kind: string;
  readonly turnId: string | null;
  readonly createdAt: number;
  readonly line: number;
  readonly depth: number;
  readonly seq: number;
}

/** Inserts one `node_runs` row: the values of a NewRun, in order. */
export const INSERT_RUN_SQL = `INSERT INTO node_runs
  (line, first_depth, last_depth, first_seq, first_parent, ids, frames, kinds, turns, created)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** A `node_runs` row to insert: [line, ...RunRow]. */
export type NewRun = readonly [line: number, ...RunRow];

/** The largest time a run holds: the difference of two is then a safe integer. */
const MAX_TIME = 2 ** 51;

const SEPARATORS = /[\u001e\u001f]/;

/**
 * The runs of `nodes` (in insertion order: parents first): each a maximal chain of one line in
 * which every node is the child of the one before it, one depth deeper and one seq later. A
 * node whose values a run cannot hold (a separator in a text, an unknown kind, a createdAt
 * that is not an integer of at most 2^51) is in no run: a path read takes it from its row.
 */
export function nodeRuns(nodes: readonly RunNode[]): NewRun[] {
  const runs: NewRun[] = [];
  const open = new Map<
    number,
    {
      first: RunNode;
      last: RunNode;
      ids: string[];
      frames: string[];
      kinds: string;
      turns: string[];
      created: number[];
    }
  >();
  const close = (line: number) => {
    const r = open.get(line);
    if (r === undefined) return;
    open.delete(line);
    // a frame or turn every node shares, once; the times as differences (RunRow)
    const once = (values: readonly string[]) =>
      values.every((v) => v === values[0]) ? values[0]! : values.join("\u001f");
    runs.push([
      line,
      r.first.depth,
      r.last.depth,
      r.first.seq,
      r.first.parentId,
      r.ids.join("\u001f"),
      once(r.frames),
      r.kinds,
      once(r.turns),
      r.created.map((t, i) => (i === 0 ? t : t - r.created[i - 1]!)).join(","),
    ]);
  };
  for (const node of nodes) {
    const letter = KIND_LETTERS.get(node.kind);
    const fits =
      letter !== undefined &&
      Number.isSafeInteger(node.createdAt) &&
      Math.abs(node.createdAt) <= MAX_TIME &&
      !SEPARATORS.test(node.id) &&
      !SEPARATORS.test(node.frameId) &&
      (node.turnId === null || !SEPARATORS.test(node.turnId));
    const r = open.get(node.line);
    if (
      r !== undefined &&
      (!fits || node.parentId !== r.last.id || node.depth !== r.last.depth + 1 || node.seq !== r.last.seq + 1)
    )
      close(node.line);
    if (!fits) continue;
    const run = open.get(node.line);
    const turn = node.turnId ?? "\u001e";
    if (run === undefined)
      open.set(node.line, {
        first: node,
        last: node,
        ids: [node.id],
        frames: [node.frameId],
        kinds: letter,
        turns: [turn],
        created: [node.createdAt],
      });
    else {
      run.last = node;
      run.ids.push(node.id);
      run.frames.push(node.frameId);
      run.kinds += letter;
      run.turns.push(turn);
      run.created.push(node.createdAt);
    }
  }
  for (const line of [...open.keys()]) close(line);
  return runs;
}

/**
 * The runs of every line, built from the node rows as a commit builds them (`nodeRuns`: only
 * links that check out make a run): migration 7's data step (in its transaction), and what a
 * recovered file gets instead of the damaged file's runs (sqlite-repair.ts).
 */
export function backfillRuns(db: Sqlite.Database): void {
  const insert = db.prepare(INSERT_RUN_SQL);
  const rows = db.prepare(
    `SELECT id, parent_id AS parentId, frame_id AS frameId, kind, turn_id AS turnId, created_at AS createdAt,
       line, depth, seq
     FROM nodes WHERE line IS NOT NULL AND depth IS NOT NULL ORDER BY line, depth`,
  );
  let line: RunNode[] = [];
  const flush = () => {
    for (const run of nodeRuns(line)) insert.run(...run);
    line = [];
  };
  // all read first: better-sqlite3 writes nothing while a statement iterates
  for (const row of rows.all() as RunNode[]) {
    if (line.length > 0 && line[0]!.line !== row.line) flush();
    line.push(row);
  }
  flush();
}
