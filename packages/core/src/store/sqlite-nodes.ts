// The nodes a SqliteStore reads (StoredNode: envelope now, payload on first access), the
// cache that keeps them across reads, and the decoders of a path's lines: the runs a commit
// wrote (RUN_SQL / appendRun: one row per chain, sqlite-runs.ts) and, for what no run covers,
// one aggregate row per line segment (SEGMENT_SQL / appendSegment) — never a row per node, so
// opening a long session allocates about one string (the id) and one object per node (issue
// 16: open a 100,000-node session in <= 100 ms).
import { type GraphNode, type NodeKind, StoreError } from "../store.ts";
import { NODE_KINDS } from "./rows.ts";
import { corruptRow, decodePayload } from "./schema.ts";

/**
 * Where the payloads of a run of path nodes are read from when one of them is first read:
 * the `payload_json` texts of `line` between two depths, root first, and the `seq` of the rows
 * at the two ends. The ends name the rows for good (`seq` is AUTOINCREMENT, never reused): a
 * line is only numbered again after all of its session's rows were deleted, and the new rows'
 * seqs are higher than any before, so the same count and the same ends are the same rows.
 * Throws (a StoreError) when the store was closed.
 */
export type PayloadSource = (
  line: number,
  from: number,
  to: number,
) => readonly [payloadJsons: readonly (string | null)[], firstSeq: number | null, lastSeq: number | null];

/** A run of at most PAYLOAD_CHUNK nodes of one line whose payloads are read together. */
export interface PayloadChunk {
  readonly source: PayloadSource;
  readonly line: number;
  readonly from: number;
  /** The depth of the last node (the chunk grows while a path is read). */
  to: number;
  /** The chunk's nodes are `nodes[start]` on, one per depth (an array shared by a segment's chunks). */
  readonly nodes: StoredNode[];
  readonly start: number;
}

/**
 * Payloads a path read leaves in the database, read on first access in runs of this many
 * nodes (one indexed range each): opening a long session reads the node envelopes only, and
 * the TUI showing the tail reads the tail's payloads.
 */
export const PAYLOAD_CHUNK = 256;

/**
 * A node read from its row. The envelope is checked now; the payload is kept as text (or,
 * for a node of a path read, left in the database and read with its chunk of neighbours)
 * and decoded (JSON + the kind's schema, store/schema.ts) on first access, so opening a long
 * session costs reading its envelopes, not reading and parsing every message. A payload that
 * does not decode throws a StoreError naming the session and node. `payload` is a getter on
 * the prototype (an own accessor per node costs more than the read itself): read it, or
 * `toJSON()` for a plain copy — a spread (`{ ...node }`) does not copy it.
 */
/** A node row's columns, as `SELECT *` reads them. */
export interface NodeColumns {
  readonly seq: number;
  readonly id: string;
  readonly session_id: string;
  readonly parent_id: string | null;
  readonly frame_id: string;
  readonly kind: string;
  readonly turn_id: string | null;
  readonly payload_json: string | null;
  readonly created_at: number;
}

export class StoredNode implements GraphNode {
  readonly id: string;
  readonly sessionId: string;
  readonly parentId: string | null;
  readonly frameId: string;
  readonly kind: NodeKind;
  readonly turnId: string | null;
  readonly createdAt: number;
  readonly seq: number;
  /** By `#state` — 0: the PayloadChunk to read the text with, 1: the text, 2: the decoded payload. */
  #slot: unknown;
  #state: 0 | 1 | 2;

  constructor(
    seq: number,
    id: string,
    sessionId: string,
    parentId: string | null,
    frameId: string,
    kind: string,
    turnId: string | null,
    text: string | null,
    createdAt: number,
    chunk?: PayloadChunk,
  ) {
    if (!NODE_KINDS.has(kind))
      throw corruptRow(`session ${sessionId}, node ${id}`, `unknown node kind ${JSON.stringify(kind)}`);
    this.id = id;
    this.sessionId = sessionId;
    this.parentId = parentId;
    this.frameId = frameId;
    this.kind = kind as NodeKind;
    this.turnId = turnId;
    this.createdAt = createdAt;
    this.seq = seq;
    if (chunk === undefined) {
      this.#slot = text;
      this.#state = 1;
    } else {
      this.#slot = chunk;
      this.#state = 0;
    }
  }

  /** Read the payload texts of `chunk`'s nodes (those still in the database) in one range. */
  static #load(chunk: PayloadChunk): void {
    const [texts, firstSeq, lastSeq] = chunk.source(chunk.line, chunk.from, chunk.to);
    const { nodes, start } = chunk;
    const count = chunk.to - chunk.from + 1;
    const first = nodes[start]!;
    const last = nodes[start + count - 1]!;
    if (texts.length !== count)
      throw new StoreError({
        message: `session ${first.sessionId}: ${count - texts.length} of the nodes read with node ${first.id} are no longer stored (the session was deleted after its path was read); read the session again`,
      });
    // a deleted session's line may be numbered again for another session's nodes (its rows never)
    for (const [n, seq] of [
      [first, firstSeq],
      [last, lastSeq],
    ] as const)
      if (seq !== n.seq)
        throw new StoreError({
          message: `session ${n.sessionId}: node ${n.id} is no longer stored (the session was deleted after its path was read); read the session again`,
        });
    for (let i = 0; i < count; i++) {
      const n = nodes[start + i]!;
      if (n.#state === 0) {
        n.#slot = texts[i]!;
        n.#state = 1;
      }
    }
  }

  get payload(): unknown {
    if (this.#state !== 2) {
      if (this.#state === 0) StoredNode.#load(this.#slot as PayloadChunk);
      this.#slot = decodePayload(this.kind, this.#slot as string | null, this.sessionId, this.id);
      this.#state = 2;
    }
    return this.#slot;
  }

  toJSON(): GraphNode {
    return {
      id: this.id,
      sessionId: this.sessionId,
      parentId: this.parentId,
      frameId: this.frameId,
      kind: this.kind,
      turnId: this.turnId,
      payload: this.payload,
      createdAt: this.createdAt,
      seq: this.seq,
    };
  }
}

/**
 * The nodes this store has read, by row: a committed node never changes, so reading it again
 * (the next turn reads the same path) returns the same object. Its payload is then decoded once,
 * and whatever is memoized per message object downstream (the request's id stripping, token
 * estimates, the journal's message digests) is not redone for the whole history every turn.
 * At most `limit` nodes, in two generations of `limit / 2`: a node read again moves to the
 * current one; when the current one is full it becomes the old one and the old one is dropped
 * (least recently read out, O(1) per read — no walk over the map). A purged session's nodes
 * are dropped.
 */
export class NodeCache {
  #current = new Map<number, StoredNode>();
  #old = new Map<number, StoredNode>();
  readonly #half: number;
  constructor(limit: number) {
    this.#half = Math.floor(limit / 2);
  }

  /**
   * The depth from which a path read ending at `leafDepth` goes through the cache: the last
   * `limit / 2` nodes. The nodes above would only push each other out (a path is read root
   * first), so a path longer than the cache does not pay for caching its head.
   */
  cachedFrom(leafDepth: number): number {
    return leafDepth + 1 - this.#half;
  }

  /** The cached node of row `seq`, if any (moved to the current generation); the caller checks its id. */
  at(seq: number): StoredNode | undefined {
    const now = this.#current.get(seq);
    if (now !== undefined) return now;
    const before = this.#old.get(seq);
    if (before !== undefined) this.#put(seq, before);
    return before;
  }

  /** The cached node of row `seq` when it is still node `id` (a purged row's seq may be reused). */
  get(seq: number, id: string): StoredNode | undefined {
    const now = this.#current.get(seq);
    if (now !== undefined) return now.id === id ? now : undefined;
    const before = this.#old.get(seq);
    if (before === undefined || before.id !== id) return undefined;
    this.#put(seq, before);
    return before;
  }

  #put(seq: number, node: StoredNode): void {
    if (this.#half <= 0) return;
    if (this.#current.size >= this.#half) {
      this.#old = this.#current;
      this.#current = new Map();
    }
    this.#current.set(seq, node);
  }

  node(r: NodeColumns): StoredNode {
    return (
      this.get(r.seq, r.id) ??
      this.add(
        new StoredNode(
          r.seq,
          r.id,
          r.session_id,
          r.parent_id,
          r.frame_id,
          r.kind,
          r.turn_id,
          r.payload_json,
          r.created_at,
        ),
      )
    );
  }

  add(node: StoredNode): StoredNode {
    this.#put(node.seq, node);
    return node;
  }

  dropSession(sessionId: string): void {
    for (const m of [this.#current, this.#old])
      for (const [seq, n] of m) if (n.sessionId === sessionId) m.delete(seq);
  }
}

/** Nodes kept by a store's NodeCache: a long session's path, many short ones. */
export const NODE_CACHE_LIMIT = 20_000;

// ---- line segments ----

/**
 * The nodes of one line between two depths (`line = ? AND depth >= ? AND depth <= ?`) as ONE
 * row: the count, then each column as one string, in depth order (the scan of `nodes_line`;
 * the decoder checks the order link by link). Texts are joined by U+001F, a NULL is U+001E
 * beside the column's count of non-NULL values, kinds are one letter each. `SegmentRow`.
 */
export const SEGMENT_SQL = `SELECT count(*), group_concat(seq), group_concat(id, char(31)),
    count(parent_id), group_concat(ifnull(parent_id, char(30)), char(31)),
    group_concat(frame_id, char(31)),
    group_concat(CASE kind WHEN 'message' THEN 'm' WHEN 'protocol' THEN 'p' WHEN 'plugin' THEN 'g'
      WHEN 'frame' THEN 'f' ELSE '?' END, ''),
    count(turn_id), group_concat(ifnull(turn_id, char(30)), char(31)),
    group_concat(created_at)
  FROM nodes WHERE line = ? AND depth >= ? AND depth <= ?`;

export type SegmentRow = readonly [
  count: number,
  seqs: string | null,
  ids: string | null,
  parentsNotNull: number,
  parents: string | null,
  frames: string | null,
  kinds: string | null,
  turnsNotNull: number,
  turns: string | null,
  createdAts: string | null,
];

const SEP = 31; // U+001F between texts
const NUL = 30; // U+001E: NULL

/** The kind a SEGMENT_SQL letter stands for. */
function kindOf(letter: number): NodeKind | undefined {
  switch (letter) {
    case 109: // m
      return "message";
    case 112: // p
      return "protocol";
    case 103: // g
      return "plugin";
    case 102: // f
      return "frame";
    default:
      return undefined;
  }
}

/** Whether `s` holds exactly `value` at `at` (the text there ends at a separator or the end). */
function holds(s: string, at: number, value: string): boolean {
  const end = at + value.length;
  if (end !== s.length && s.charCodeAt(end) !== SEP) return false;
  // compared in place (no substring); cheaper than startsWith on these short values
  for (let i = 0; i < value.length; i++) if (s.charCodeAt(at + i) !== value.charCodeAt(i)) return false;
  return true;
}

/** The end of the text at `at` (its separator, or the end of `s`). */
function endOf(s: string, at: number): number {
  const e = s.indexOf("\u001f", at);
  return e === -1 ? s.length : e;
}

/** Whether the text at `at` is the NULL mark. */
function isNull(s: string, at: number): boolean {
  return s.charCodeAt(at) === NUL && (at + 1 === s.length || s.charCodeAt(at + 1) === SEP);
}

/** The decimal number at `at` up to a comma or the end: [value, end], or undefined when it is not a number. */
function numberAt(s: string, at: number, out: { end: number }): number | undefined {
  let v = 0;
  let i = at;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 44) break;
    if (c < 48 || c > 57) {
      // not a plain integer (negative, REAL): the slow way
      let e = s.indexOf(",", at);
      if (e === -1) e = s.length;
      out.end = e;
      const text = s.slice(at, e);
      const n = Number(text);
      return text.trim() === "" || !Number.isFinite(n) ? undefined : n;
    }
    v = v * 10 + (c - 48);
  }
  if (i === at) return undefined;
  out.end = i;
  return v;
}

/**
 * Append the nodes of one line segment — `row` read by SEGMENT_SQL for depths `from`..`upto`
 * of `line`, a line of session `sessionId` — to `out`, through `cache` (nodes at depth
 * `cachedFrom` and below the leaf); the payloads stay in the database (`source`, per
 * PayloadChunk). `firstParent`: what the first node's parent must be — the last node of
 * `out`, null for the root (depth 0), undefined when it is not checked (a path read from a
 * compaction node). The strings a node shares with the node before it (its parent id,
 * frame, turn) are that node's, not new copies.
 *
 * False when the row does not check out — a depth missing, a value holding a separator, an
 * unknown kind, a node whose parent is not the node before it (a damaged or repaired file):
 * `out` and the cache are then as they were, and the caller reads the path another way.
 */
export function appendSegment(
  row: SegmentRow,
  from: number,
  upto: number,
  into: LineTarget,
  firstParent: string | null | undefined,
): boolean {
  const n = upto - from + 1;
  const [count, seqs, ids, parentsNotNull, parents, frames, kinds, turnsNotNull, turns, createdAts] = row;
  if (count !== n || n <= 0) return false;
  if (seqs === null || ids === null || parents === null || frames === null || kinds === null) return false;
  if (turns === null || createdAts === null || kinds.length !== n) return false;
  // Each node's parent is the node before it: the parents column is the first node's parent,
  // then the ids but the last — compared as one string, not per node.
  const idsHead = n === 1 ? "" : ids.slice(0, ids.lastIndexOf("\u001f"));
  const cut = n === 1 ? parents.length : parents.length - idsHead.length - 1;
  if (cut < 0 || (n > 1 && (parents.charCodeAt(cut) !== SEP || parents.slice(cut + 1) !== idsHead)))
    return false;
  let firstParentId: string | null;
  if (isNull(parents, 0) && cut === 1 && parentsNotNull === n - 1) {
    if (firstParent !== null && firstParent !== undefined) return false;
    firstParentId = null;
  } else {
    if (parentsNotNull !== n || firstParent === null) return false;
    if (firstParent === undefined) firstParentId = parents.slice(0, cut);
    else if (cut !== firstParent.length || !holds(parents, 0, firstParent)) return false;
    else firstParentId = firstParent; // the node before's string, not a slice holding the column
  }
  return appendNodes(
    { from, n, seqs, firstSeq: 0, ids, frames, kinds, turns, createdAts, turnsNotNull, firstParentId },
    into,
  );
}

/**
 * A run of one line's nodes as a commit wrote them (`node_runs`, RUN_SQL; built by `nodeRuns`):
 * its first and last depth, the seq of its first row (the rows' seqs count up from it), its
 * first node's parent (each later node's parent is the node before it), and the columns as
 * SEGMENT_SQL gives them, but for three: a frame or turn every node shares is written once
 * (a column without a separator, of a run of more than one node), and each time after the
 * first is the difference from the one before (a commit's times are close together).
 */
export type RunRow = readonly [
  firstDepth: number,
  lastDepth: number,
  firstSeq: number,
  firstParent: string | null,
  ids: string,
  frames: string,
  kinds: string,
  turns: string,
  createdAts: string,
];

/**
 * The runs wholly inside depths `from`..`upto` of a line, in depth order: a path read takes
 * its nodes from these (a few rows for thousands of nodes) and reads the depths no run covers
 * (a run cut by a fork or a compaction, a file written before runs, a range a trigger
 * invalidated) with SEGMENT_SQL.
 */
export const RUN_SQL = `SELECT first_depth, last_depth, first_seq, first_parent, ids, frames, kinds, turns, created
  FROM node_runs WHERE line = ? AND first_depth >= ? AND first_depth <= ? AND last_depth <= ?
  ORDER BY first_depth`;

/**
 * Append the nodes of one run (`row`, of `line`, a line of session `sessionId`) as
 * appendSegment appends a segment's. The links inside a run were checked when it was written;
 * its first node's parent must be `firstParent` (undefined: not checked). False when the run
 * does not check out (`out` and the cache as they were): the caller reads its depths with
 * SEGMENT_SQL.
 */
export function appendRun(row: RunRow, into: LineTarget, firstParent: string | null | undefined): boolean {
  const [from, upto, firstSeq, parent, ids, frames, kinds, turns, createdAts] = row;
  const n = upto - from + 1;
  if (n <= 0 || kinds.length !== n || !Number.isSafeInteger(firstSeq)) return false;
  let firstParentId: string | null;
  if (firstParent === undefined) firstParentId = parent;
  else if (firstParent === null ? parent !== null : parent !== firstParent) return false;
  else firstParentId = firstParent; // the node before's string
  // one frame, one turn for every node: the strings of the node before when they are the same
  const prev = into.out.length > 0 ? into.out[into.out.length - 1] : undefined;
  let frame: string | undefined;
  if (frames.indexOf("\u001f") === -1)
    frame = prev !== undefined && prev.frameId === frames ? prev.frameId : frames;
  let turn: string | null | undefined;
  if (turns.indexOf("\u001f") === -1)
    turn = isNull(turns, 0) ? null : prev !== undefined && prev.turnId === turns ? prev.turnId : turns;
  return appendNodes(
    {
      from,
      n,
      seqs: null,
      firstSeq,
      ids,
      frames,
      frame,
      kinds,
      turns,
      turn,
      createdAts,
      createdDeltas: true,
      turnsNotNull: undefined,
      firstParentId,
    },
    into,
  );
}

/** The columns of `n` nodes of a line from depth `from` (a segment's or a run's). */
interface Columns {
  readonly from: number;
  readonly n: number;
  /** The seqs, or null when they count up from `firstSeq` (a run). */
  readonly seqs: string | null;
  readonly firstSeq: number;
  readonly ids: string;
  readonly frames: string;
  /** Every node's frame, when the run wrote it once (`frames` is then not read per node). */
  readonly frame?: string | undefined;
  readonly kinds: string;
  readonly turns: string;
  /** Every node's turn, when the run wrote it once. */
  readonly turn?: string | null | undefined;
  readonly createdAts: string;
  /** Whether each time after the first is the difference from the one before (a run). */
  readonly createdDeltas?: boolean;
  /** How many turns are not NULL, when the read counted them. */
  readonly turnsNotNull: number | undefined;
  /** The first node's parent (checked by the caller); each later node's is the node before. */
  readonly firstParentId: string | null;
}

/**
 * Where the pieces of one line a path read takes (its runs, the segments between them) go:
 * `out` (the path so far), through `cache` from depth `cachedFrom` on, their payloads left in
 * the database (`source`). `chunk` and `made`: the PayloadChunk being filled and its nodes'
 * array, carried from one piece to the next at consecutive depths, so a chunk spans pieces.
 */
export interface LineTarget {
  readonly line: number;
  readonly sessionId: string;
  readonly out: StoredNode[];
  readonly cachedFrom: number;
  readonly cache: NodeCache;
  readonly source: PayloadSource;
  chunk: PayloadChunk | undefined;
  made: StoredNode[];
}

/** appendSegment and appendRun: the nodes of `c`, each column read to its end exactly. */
function appendNodes(c: Columns, into: LineTarget): boolean {
  const { line, sessionId, out, cachedFrom, cache, source } = into;
  const { from, n, seqs, firstSeq, ids, frames, frame, kinds, turns, turn, createdAts, firstParentId } = c;
  const deltas = c.createdDeltas === true;
  let lastCreated = 0;
  const start = out.length;
  const fresh: StoredNode[] = [];
  const num = { end: 0 };
  let si = 0;
  let ii = 0;
  let fi = 0;
  let ti = 0;
  let ci = 0;
  let nullTurns = 0;
  let prev: StoredNode | undefined = start > 0 ? out[start - 1] : undefined;
  // a chunk goes on from the piece before only at the next depth of the same line
  const carried = into.chunk;
  const carriedTo = carried?.to;
  let chunk = carried !== undefined && carried.line === line && carried.to === from - 1 ? carried : undefined;
  const made = into.made; // the line's new nodes, its chunks' array
  const fail = () => {
    out.length = start;
    // the chunk carried in ends where it ended; the next piece starts its own
    if (carried !== undefined) carried.to = carriedTo!;
    into.chunk = undefined;
    into.made = [];
    return false;
  };
  for (let k = 0; k < n; k++) {
    const depth = from + k;
    let seq: number | undefined;
    if (seqs === null) seq = firstSeq + k;
    else {
      seq = numberAt(seqs, si, num);
      if (seq === undefined) return fail();
      si = num.end + 1;
    }
    let createdAt = numberAt(createdAts, ci, num);
    if (createdAt === undefined) return fail();
    ci = num.end + 1;
    if (deltas && k > 0) createdAt += lastCreated;
    lastCreated = createdAt;
    const kind = kindOf(kinds.charCodeAt(k));
    if (kind === undefined) return fail();
    // the parent (checked by the caller): the node before, its string kept
    const parentId = k === 0 ? firstParentId : prev!.id;
    let frameId: string;
    if (frame !== undefined) frameId = frame;
    else if (prev !== undefined && holds(frames, fi, prev.frameId)) {
      frameId = prev.frameId;
      fi += frameId.length + 1;
    } else {
      const e = endOf(frames, fi);
      frameId = frames.slice(fi, e);
      fi = e + 1;
    }
    let turnId: string | null;
    if (turn !== undefined) turnId = turn;
    else if (isNull(turns, ti)) {
      nullTurns++;
      turnId = null;
      ti += 2;
    } else if (prev !== undefined && prev.turnId !== null && holds(turns, ti, prev.turnId)) {
      turnId = prev.turnId;
      ti += turnId.length + 1;
    } else {
      const e = endOf(turns, ti);
      turnId = turns.slice(ti, e);
      ti = e + 1;
    }
    // the id: the cached node of this row when it is one, else a new node
    const known = depth >= cachedFrom ? cache.at(seq) : undefined;
    if (known !== undefined && holds(ids, ii, known.id)) {
      ii += known.id.length + 1;
      out.push(known);
      prev = known;
      chunk = undefined; // a chunk is a run of consecutive depths
      continue;
    }
    const e = endOf(ids, ii);
    const id = ids.slice(ii, e);
    ii = e + 1;
    if (chunk === undefined || chunk.to - chunk.from + 1 === PAYLOAD_CHUNK)
      chunk = { source, line, from: depth, to: depth, nodes: made, start: made.length };
    const node = new StoredNode(seq, id, sessionId, parentId, frameId, kind, turnId, null, createdAt, chunk);
    made.push(node);
    chunk.to = depth;
    out.push(node);
    if (depth >= cachedFrom) fresh.push(node);
    prev = node;
  }
  // every column read to its end, exactly (a separator inside a value leaves text over), and
  // the NULLs seen are the column's NULLs
  if ((seqs !== null && si !== seqs.length + 1) || ci !== createdAts.length + 1 || ii !== ids.length + 1)
    return fail();
  if ((frame === undefined && fi !== frames.length + 1) || (turn === undefined && ti !== turns.length + 1))
    return fail();
  if (c.turnsNotNull !== undefined && c.turnsNotNull !== n - nullTurns) return fail();
  for (const node of fresh) cache.add(node);
  into.chunk = chunk;
  return true;
}
