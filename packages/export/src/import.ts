import { randomBytes } from "node:crypto";
import type {
  ArtifactInfo,
  CommitResult,
  GraphNode,
  NewNode,
  PromiseStore,
  SessionRecord,
  SessionStoreShape,
  UsageRow,
} from "@lash/core";
import { sha256BytesHex } from "@lash/sansio";
import { Effect, Either, ParseResult, Schema } from "effect";
import { EXPORT_SCHEMA_VERSION, ExportedSession } from "./schema.ts";

export interface ImportOptions {
  /**
   * `auto` (default): keep the exported session and node ids when none of them
   * exists in the store, else mint new ones; `keep`: keep them or fail;
   * `new`: always mint new ones.
   */
  readonly ids?: "auto" | "keep" | "new";
  /** Session id generator for new ids (default `ses_<time><random>`). */
  readonly newSessionId?: () => string;
}

export interface ImportResult {
  /** The imported (top-level) session. */
  readonly sessionId: string;
  /** Every imported session, subagent children included. */
  readonly sessions: number;
  readonly nodes: number;
  /** Whether the exported ids were kept. */
  readonly keptIds: boolean;
  /** Old id → new id for sessions and nodes (identity when ids were kept). */
  readonly idMap: ReadonlyMap<string, string>;
}

export class ImportError extends Error {
  override readonly name = "ImportError";
}

type AnyStore = SessionStoreShape | PromiseStore;

const settle = <A>(value: unknown): Promise<A> =>
  Effect.isEffect(value)
    ? Effect.runPromise(value as Effect.Effect<A, unknown>)
    : Promise.resolve(value as Promise<A>);

const decode = Schema.decodeUnknownEither(ExportedSession);

/** Parse and validate an export (text or value). Throws `ImportError` with the schema's complaint. */
export function parseExport(input: string | unknown): ExportedSession {
  let value: unknown = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch (e) {
      throw new ImportError(`not a lash session export: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const v = value as { format?: unknown; version?: unknown } | null;
  if (v?.format !== "lash-session")
    throw new ImportError('not a lash session export (no "format": "lash-session")');
  if (typeof v.version === "number" && v.version > EXPORT_SCHEMA_VERSION)
    throw new ImportError(
      `this export has format version ${v.version}; this lash reads version ${EXPORT_SCHEMA_VERSION} and older — upgrade lash`,
    );
  const r = decode(value);
  if (Either.isLeft(r))
    throw new ImportError(`invalid session export: ${ParseResult.TreeFormatter.formatErrorSync(r.left)}`);
  return r.right;
}

function allSessions(s: ExportedSession): ExportedSession[] {
  return [s, ...s.children.flatMap(allSessions)];
}

async function idsFree(store: AnyStore, s: ExportedSession): Promise<boolean> {
  for (const x of allSessions(s)) {
    const exists = await settle<SessionRecord>(store.getSession(x.session.id)).then(
      () => true,
      () => false,
    );
    if (exists) return false;
    for (const n of x.nodes)
      if ((await settle<GraphNode | undefined>(store.getNode(n.id))) !== undefined) return false;
  }
  return true;
}

const defaultSessionId = () =>
  `ses_${Date.now().toString(36).padStart(9, "0")}${randomBytes(6).toString("hex")}`;

/**
 * Recreate an exported session (and its subagent children) in a store. Each
 * exported turn becomes one commit (nodes, usage rows); the leaf is then moved
 * to the exported leaf. A fork is imported as a standalone session that owns
 * its inherited prefix.
 */
export async function importSession(
  store: AnyStore,
  input: string | unknown,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const exported = parseExport(input);
  const mode = options.ids ?? "auto";
  const free = mode === "new" ? false : await idsFree(store, exported);
  if (mode === "keep" && !free)
    throw new ImportError("the exported session (or one of its nodes) already exists in this store");
  const keep = free;
  const nextSession = options.newSessionId ?? defaultSessionId;
  const idMap = new Map<string, string>();
  let nodeCount = 0;

  const importOne = async (s: ExportedSession, parentSessionId: string | undefined): Promise<string> => {
    const sid = keep ? s.session.id : nextSession();
    idMap.set(s.session.id, sid);
    s.nodes.forEach((n, i) => {
      idMap.set(n.id, keep ? n.id : `${sid}.n${i + 1}`);
    });
    const mapId = (id: string | null) => (id === null ? null : (idMap.get(id) ?? id));
    const info = s.session;
    const record: SessionRecord = {
      id: sid,
      ...(info.title !== undefined ? { title: info.title } : {}),
      ...(info.cwd !== undefined ? { cwd: info.cwd } : {}),
      model: info.model,
      mode: info.mode,
      ...(info.systemPrompt !== undefined ? { systemPrompt: info.systemPrompt } : {}),
      createdAt: info.createdAt,
      updatedAt: info.createdAt,
      leafId: null,
      headRevision: 0,
      turnCount: 0,
      frameId: info.frameId,
      ...(info.parentLink
        ? { parentLink: { ...info.parentLink, sessionId: parentSessionId ?? info.parentLink.sessionId } }
        : {}),
      state: info.state,
    };
    await settle(store.createSession(record));
    // the artifacts first: the nodes that refer to them are committed next
    for (const a of s.artifacts ?? []) {
      const bytes = new Uint8Array(Buffer.from(a.data, "base64"));
      if (sha256BytesHex(bytes) !== a.id)
        throw new ImportError(
          `artifact ${a.id} in the export does not match its content (sha256 ${sha256BytesHex(bytes)}): the export file is damaged; export the session again`,
        );
      await settle<ArtifactInfo>(store.putArtifact({ bytes, mediaType: a.mediaType, createdAt: Date.now() }));
    }

    // one commit per run of nodes of the same turn, in insertion order
    const groups: { turnId: string | null; nodes: NewNode[] }[] = [];
    for (const n of s.nodes) {
      const id = mapId(n.id)!;
      const parentId = n.parentId !== null && idMap.has(n.parentId) ? mapId(n.parentId) : null;
      let payload = n.payload;
      if (
        n.kind === "message" &&
        payload &&
        typeof payload === "object" &&
        (payload as { id?: unknown }).id === n.id
      )
        payload = { ...(payload as object), id };
      const node: NewNode = {
        id,
        sessionId: sid,
        parentId,
        frameId: n.frameId,
        kind: n.kind,
        turnId: n.turnId,
        payload,
        createdAt: n.createdAt,
      };
      const last = groups[groups.length - 1];
      if (last && last.turnId === n.turnId) last.nodes.push(node);
      else groups.push({ turnId: n.turnId, nodes: [node] });
    }
    const usageByTurn = new Map<string, UsageRow[]>();
    for (const r of s.usage) {
      const rows = usageByTurn.get(r.turnId) ?? [];
      rows.push(r);
      usageByTurn.set(r.turnId, rows);
    }
    let revision = 0;
    let k = 0;
    const used = new Map<string, number>();
    for (const g of groups) {
      const base = g.turnId ?? `import.${++k}`;
      const seen = used.get(base) ?? 0;
      used.set(base, seen + 1);
      const turnId = seen === 0 ? base : `${base}#${seen}`;
      const usage = g.turnId !== null ? (usageByTurn.get(g.turnId) ?? []) : [];
      if (g.turnId !== null) usageByTurn.delete(g.turnId);
      const result = await settle<CommitResult>(
        store.commit({
          sessionId: sid,
          turnId,
          hash: `import:${sid}:${turnId}:${g.nodes[0]!.id}`,
          expectedRevision: revision,
          nodes: g.nodes,
          leafId: g.nodes[g.nodes.length - 1]!.id,
          usage,
          updatedAt: info.updatedAt,
        }),
      );
      revision = result.headRevision;
    }
    // usage rows of turns without nodes (e.g. a turn that only spent tokens)
    const rest = [...usageByTurn.values()].flat();
    if (rest.length > 0) {
      const leaf = groups.length ? groups[groups.length - 1]!.nodes.at(-1)!.id : null;
      const result = await settle<CommitResult>(
        store.commit({
          sessionId: sid,
          turnId: "import.usage",
          hash: `import:${sid}:usage`,
          expectedRevision: revision,
          nodes: [],
          leafId: leaf,
          usage: rest,
          updatedAt: info.updatedAt,
        }),
      );
      revision = result.headRevision;
    }
    await settle(store.setLeaf(sid, mapId(info.leafId), revision, info.updatedAt));
    nodeCount += s.nodes.length;
    for (const c of s.children) await importOne(c, sid);
    return sid;
  };

  const sessionId = await importOne(exported, undefined);
  return { sessionId, sessions: allSessions(exported).length, nodes: nodeCount, keptIds: keep, idMap };
}
