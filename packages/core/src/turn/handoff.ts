import { hashValue, type Message } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import type { CompactionPayload } from "../compaction/compact.ts";
import type { TurnError } from "../runtime-api.ts";
import type {
  GraphNode,
  NewNode,
  PendingTurn,
  SessionRecord,
  SessionStoreShape,
  StoreError,
  StoreFailure,
} from "../store.ts";
import type { TurnScope } from "./scope.ts";

/**
 * Handoff (`compaction.strategy: "handoff"`, standard sessions): instead of a summary node on
 * the session's own path, the compaction's summary opens a successor session with a fresh
 * window. The two are linked in both graphs by `handoff` protocol nodes — the predecessor's
 * `{type: "handoff", to}` after its compaction node, the successor's `{type: "handoff", from}`
 * as its first node, followed by the summary as its first message — and the turn that
 * triggered the compaction runs in the successor. The successor's id (and the id of the turn it
 * owes) is journaled under the predecessor's turn, so a resumed turn hands off to the same
 * session, never to a second one.
 *
 * No turn is lost to a crash: the successor's turn is written down as pending — with the
 * triggering turn's input — before the predecessor's commit links to it. A crash before that
 * commit leaves the predecessor's turn pending (its resume finds the same successor and the same
 * pending turn); a crash after it leaves the successor's turn pending, and `--continue`
 * (which follows the link) resumes it there: the turn is done once.
 */

/** The payload of a `handoff` protocol node (in the predecessor: `to`; in the successor: `from`). */
export const HandoffPayload = Schema.Struct({
  type: Schema.Literal("handoff"),
  to: Schema.optional(Schema.String),
  from: Schema.optional(Schema.String),
  /** The predecessor's compaction node whose summary opened the successor. */
  compactionNodeId: Schema.String,
});
export type HandoffPayload = typeof HandoffPayload.Type;

export const HANDOFF_PREFIX = (from: string) =>
  `[Handoff: this session continues session ${from}, whose history no longer fit the context window; a summary of it follows, the full history stays in that session's graph]`;

/** The successor's first message: the predecessor's summary. */
export const handoffMessage = (successorId: string, from: string, summary: string): Message => ({
  id: `${successorId}.summary`,
  role: "user",
  parts: [{ type: "text", text: `${HANDOFF_PREFIX(from)}\n\n${summary}` }],
});

const handoffKey = (ids: { readonly sessionId: string; readonly turnId: string }) =>
  `${ids.sessionId}:${ids.turnId}:0:handoff:0`;

/**
 * Creates (once: journaled) the successor of the turn's session and commits its first nodes;
 * returns the node that links the predecessor to it (committed by the caller with the
 * predecessor's turn).
 */
export const handOff = (
  scope: TurnScope,
  compaction: NewNode,
  state: SessionRecord["state"],
  /** The turn the successor owes (absent: a compaction-only turn, nothing to carry on). */
  input: readonly Message[] | undefined,
  maxTurns: number | undefined,
): Effect.Effect<
  { readonly successorId: string; readonly pending: PendingTurn | undefined; readonly link: NewNode },
  TurnError
> =>
  Effect.gen(function* () {
    const { rt, session, sessionId, turnId } = scope;
    const payload = compaction.payload as CompactionPayload;
    const created = yield* rt.journal
      .once(
        scope.ids,
        handoffKey(scope.ids),
        { kind: "handoff", compaction: compaction.id },
        Effect.gen(function* () {
          const id = yield* rt.ids.next("ses");
          const frameId = yield* rt.ids.next("frame");
          const nextTurnId = yield* rt.ids.next("turn");
          const now = yield* Clock.currentTimeMillis;
          yield* rt.store.createSession({
            id,
            model: session.model,
            mode: session.mode,
            createdAt: now,
            updatedAt: now,
            leafId: null,
            headRevision: 0,
            turnCount: 0,
            frameId,
            state,
            ...(session.title !== undefined ? { title: session.title } : {}),
            ...(session.cwd !== undefined ? { cwd: session.cwd } : {}),
            ...(session.systemPrompt !== undefined ? { systemPrompt: session.systemPrompt } : {}),
          });
          return { id, frameId, nextTurnId };
        }),
        Schema.Struct({
          id: Schema.String,
          frameId: Schema.String,
          nextTurnId: Schema.optional(Schema.String),
        }),
      )
      .pipe(Effect.mapError(scope.failTurn));
    const { id: successorId, frameId } = created.value;
    // (a journal entry written before the turn id was recorded: a derived one)
    const nextTurnId = created.value.nextTurnId ?? `${turnId}-next`;
    const now = yield* Clock.currentTimeMillis;
    const linkId = `${turnId}.handoff`;
    const fromId = `${successorId}.from`;
    const message = handoffMessage(successorId, sessionId, payload.summary);
    const seed: NewNode[] = [
      {
        id: fromId,
        sessionId: successorId,
        parentId: null,
        frameId,
        kind: "protocol",
        turnId,
        payload: {
          type: "handoff",
          from: sessionId,
          compactionNodeId: compaction.id,
        } satisfies HandoffPayload,
        createdAt: now,
      },
      {
        id: message.id,
        sessionId: successorId,
        parentId: fromId,
        frameId,
        kind: "message",
        turnId,
        payload: message,
        createdAt: now,
      },
    ];
    // a replay of a committed seed is a no-op (the store's commit stamp)
    yield* rt.store
      .commit({
        sessionId: successorId,
        turnId,
        hash: hashValue({
          handoff: { from: sessionId, compaction: compaction.id, summary: payload.summary },
        }),
        expectedRevision: 0,
        nodes: seed,
        leafId: message.id,
        usage: [],
        updatedAt: now,
      })
      .pipe(Effect.mapError(scope.failTurn));
    // the turn the successor owes, with its input, pending before the predecessor links to it
    // (once: a resumed predecessor finds it written and leaves its resume count alone)
    const existing = yield* rt.store.pendingTurn(successorId).pipe(Effect.mapError(scope.failTurn));
    // ... and not at all when the successor already did it (a crash before this commit, then
    // the successor's pending turn resumed on its own: it is the newest session of the cwd)
    const done =
      existing?.turnId !== nextTurnId &&
      (yield* rt.store.getNode(`${nextTurnId}.in0`).pipe(Effect.mapError(scope.failTurn))) !== undefined;
    let pending: PendingTurn | undefined;
    if (input === undefined || done) pending = undefined;
    else if (existing?.turnId === nextTurnId) pending = existing;
    else {
      const seeded = yield* rt.store.getSession(successorId).pipe(Effect.mapError(scope.failTurn));
      pending = {
        sessionId: successorId,
        turnId: nextTurnId,
        input: {
          messages: input.map((m, i) => ({ ...m, id: `${nextTurnId}.in${i}` })),
          maxTurns,
        },
        expectedRevision: seeded.headRevision,
        startedAt: now,
      };
      yield* rt.store.beginTurn(pending).pipe(Effect.mapError(scope.failTurn));
    }
    // plugins attached to the predecessor in this process go with it
    const base = new Set(rt.pluginHost.plugins(""));
    const attached = rt.pluginHost.plugins(sessionId).filter((p) => !base.has(p));
    if (attached.length > 0) rt.pluginHost.attach(successorId, attached);
    return {
      successorId,
      pending,
      link: {
        id: linkId,
        sessionId,
        parentId: compaction.id,
        frameId: session.frameId,
        kind: "protocol",
        turnId,
        payload: {
          type: "handoff",
          to: successorId,
          compactionNodeId: compaction.id,
        } satisfies HandoffPayload,
        createdAt: now,
      },
    };
  });

/** A session's handoff links: the session it continues (`from`) and the one it continues in (`to`). */
export interface HandoffLinks {
  readonly from?: string;
  readonly to?: string;
}

const handoffOf = (node: GraphNode | undefined): HandoffPayload | undefined => {
  const p = node?.kind === "protocol" ? (node.payload as { type?: unknown } | null) : undefined;
  return p?.type === "handoff" ? (p as HandoffPayload) : undefined;
};

/**
 * The handoff links of a session, read from its graph: its leaf is `{type: "handoff", to}` when
 * it handed off, its first node `{type: "handoff", from}` when it is a successor.
 */
export const handoffLinks = (
  store: SessionStoreShape,
  session: Pick<SessionRecord, "id" | "leafId">,
): Effect.Effect<HandoffLinks, StoreError> =>
  Effect.gen(function* () {
    const leaf = session.leafId === null ? undefined : yield* store.getNode(session.leafId);
    const to = handoffOf(leaf)?.to;
    const from = handoffOf(yield* store.getNode(`${session.id}.from`))?.from;
    return { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) };
  });

/** The newest session of a handoff chain: the session itself when it did not hand off. */
export const newestSuccessor = (
  store: SessionStoreShape,
  sessionId: string,
): Effect.Effect<SessionRecord, StoreFailure> =>
  Effect.gen(function* () {
    let current = yield* store.getSession(sessionId);
    for (const seen = new Set([current.id]); ; ) {
      const { to } = yield* handoffLinks(store, current);
      if (to === undefined || seen.has(to)) return current;
      seen.add(to);
      current = yield* store.getSession(to);
    }
  });
