import type { Message, TurnMachine, TurnOutcome } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Deferred from "effect/Deferred";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Fiber from "effect/Fiber";
import { type ApprovalRecord, recordsOfJournal } from "../approval.ts";
import { externalizeNodes } from "../attachments.ts";
import type { CompactionPayload } from "../compaction/compact.ts";
import { storeFailure } from "../lease.ts";
import { TurnError, type TurnResult } from "../runtime-api.ts";
import type { SessionNotFound } from "../store.ts";
import { buildCommit } from "./commit.ts";
import { handOff } from "./handoff.ts";
import { type Done, runLoop } from "./loop.ts";
import { type OpenArgs, openTurn } from "./open.ts";
import type { RuntimeContext, TurnScope } from "./scope.ts";

export type RunArgs = Omit<OpenArgs, "signal">;

const MAX_FRAME_SWITCHES = 16;

/** Tests only (compaction-handoff-cli.test.ts): LASH_TEST_KILL_AFTER_HANDOFF=1 is a SIGKILL right
 * after a handing-off turn's commit, before its turn starts in the successor. */
const KILL_AFTER_HANDOFF = process.env.LASH_TEST_KILL_AFTER_HANDOFF === "1";
/** Tests only: LASH_TEST_KILL_BEFORE_HANDOFF_COMMIT=1: the same, after the successor was made and before the commit. */
const KILL_BEFORE_HANDOFF_COMMIT = process.env.LASH_TEST_KILL_BEFORE_HANDOFF_COMMIT === "1";

/** What a turn's loop hands to the commit. */
type DoneLike = Pick<Done, "outcome" | "messages" | "usage">;

/** The outcome of a compaction-only turn (`runtime.compact`): nothing for the model to say. */
const COMPACTED: TurnOutcome = { type: "finished", finish: { kind: "assistantMessage", text: "" } };

/** One turn: open it, run the loop, commit what it produced in one transaction, publish `turnFinished`. */
export const runOneTurn = (
  rt: RuntimeContext,
  args: RunArgs,
): Effect.Effect<TurnResult, TurnError | SessionNotFound> =>
  Effect.gen(function* () {
    const { sessionId } = args;
    // the cancel signal, once per turn: aborting it stops the in-flight model call at once
    const controller = new AbortController();
    const watcher = yield* Effect.fork(
      Effect.zipRight(
        Deferred.await(args.cancel),
        Effect.sync(() => controller.abort()),
      ),
    );
    const [opened, done] = yield* Effect.flatMap(openTurn(rt, { ...args, signal: controller.signal }), (o) =>
      Effect.map(
        o.compactOnly || o.handoff
          ? Effect.succeed<DoneLike>({ outcome: COMPACTED, messages: [], usage: {} })
          : // a turn begun here has nothing in the journal yet: its steps skip the lookups
            args.pending
            ? loop(rt, o.scope, o.machine)
            : rt.journal.freshTurn(o.scope.turnId, loop(rt, o.scope, o.machine)),
        (d) => [o, d] as const,
      ),
    ).pipe(Effect.ensuring(Fiber.interrupt(watcher)));
    const { scope, abort, turnInput } = opened;

    let outcome: TurnOutcome = done.outcome;
    // a plugin that aborts the turn stops it before the model is called; the input is still kept
    const messages: readonly Message[] =
      abort !== undefined && done.messages.length === 0 ? turnInput : done.messages;
    if (abort !== undefined) outcome = { type: "stopped", reason: "pluginAbort", message: abort };

    const snapshots: { [plugin: string]: unknown } = {};
    for (const p of scope.plugins) {
      if (!p.snapshot) continue;
      const snap = yield* Effect.either(p.snapshot(scope.hook));
      if (Either.isRight(snap) && snap.right !== undefined) snapshots[p.name] = snap.right;
    }
    const approvals = yield* turnApprovals(rt, scope, args.pending !== undefined);
    // a handoff: the successor is made (once) before this commit and gets the turn's input
    const handoff =
      opened.handoff && opened.compaction
        ? yield* handOff(
            scope,
            opened.compaction,
            { ...scope.session.state, ...snapshots },
            opened.compactOnly ? undefined : opened.input,
            args.options.maxTurns ?? (args.pending?.input as { maxTurns?: number } | undefined)?.maxTurns,
          )
        : undefined;
    const built = buildCommit({
      session: scope.session,
      turnId: scope.turnId,
      input: opened.input,
      messages,
      outcome,
      usage: done.usage,
      extraUsage: scope.extraUsage,
      info: scope.info,
      snapshots,
      ...(opened.compaction ? { compaction: opened.compaction } : {}),
      ...(scope.midTurn ? { midCompactions: scope.midTurn.nodes } : {}),
      expectedRevision: args.pending?.expectedRevision ?? scope.session.headRevision,
      now: yield* Clock.currentTimeMillis,
      ...(approvals.length > 0 ? { approvals } : {}),
    });
    const costUsd = built.costUsd;
    const commit = handoff
      ? {
          ...built.commit,
          nodes: [...built.commit.nodes, { ...handoff.link, parentId: built.commit.leafId }],
          leafId: handoff.link.id,
        }
      : built.commit;
    // attachments and images (a user's, a tool's) are stored once as artifacts; the nodes keep references
    const now = yield* Clock.currentTimeMillis;
    const nodes = yield* externalizeNodes(commit.nodes, (bytes, mediaType) =>
      Effect.map(rt.store.putArtifact({ bytes, mediaType, createdAt: now }), (a) => a.id),
    ).pipe(Effect.catchAll(storeFailure(sessionId)));
    if (handoff && KILL_BEFORE_HANDOFF_COMMIT) process.kill(process.pid, "SIGKILL");
    const committed = yield* rt.store.commit({ ...commit, nodes }).pipe(
      Effect.catchAll((e) =>
        e._tag === "StoreConflict"
          ? Effect.fail(
              new TurnError({
                sessionId,
                reason: "conflict",
                message: `${e.message} — another writer committed to this session first; this turn's messages were not committed (they are returned on this error and its journal is kept)`,
                messages,
              }),
            )
          : storeFailure(sessionId)(e),
      ),
    );
    for (const { hooks } of scope.hooks) {
      if (hooks.afterCommit)
        yield* Effect.ignore(hooks.afterCommit(scope.hook, { headRevision: committed.headRevision }));
    }
    if (handoff)
      scope.emit({
        type: "plugin",
        plugin: "compaction",
        name: "handoff",
        data: { from: sessionId, to: handoff.successorId, nodeId: handoff.link.id },
      });
    scope.emit({
      type: "turnFinished",
      outcome,
      usage: done.usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
      headRevision: committed.headRevision,
    });
    if (handoff?.pending) {
      if (KILL_AFTER_HANDOFF) process.kill(process.pid, "SIGKILL");
      // the turn goes on in the successor, pending there since before this commit (handOff)
      const to = handoff.successorId;
      const local = yield* rt.local(to);
      const next = yield* local.lock.withPermits(1)(
        rt.leases.hold(
          to,
          args.options,
          runOneTurn(rt, {
            sessionId: to,
            input: (handoff.pending.input as { messages: Message[] }).messages,
            pending: handoff.pending,
            options: args.options,
            cancel: args.cancel,
            afterHandoff: true,
          }),
        ),
      );
      return { ...next, handoff: { from: sessionId, to: handoff.successorId } } satisfies TurnResult;
    }
    const endedAt = yield* Clock.currentTimeMillis;
    const text =
      outcome.type === "finished" && outcome.finish.kind === "assistantMessage"
        ? outcome.finish.text
        : outcome.type === "stopped"
          ? (outcome.text ?? "")
          : "";
    return {
      sessionId,
      turnId: scope.turnId,
      outcome,
      text,
      ...(outcome.type === "finished" && outcome.finish.kind !== "assistantMessage"
        ? { finalValue: outcome.finish.value }
        : {}),
      usage: done.usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
      messages,
      headRevision: committed.headRevision,
      toolCalls: scope.toolCalls,
      durationMs: endedAt - opened.startedAt,
      resumed: args.pending !== undefined && args.afterHandoff !== true,
      ...(opened.compaction
        ? {
            compaction: {
              nodeId: opened.compaction.id,
              payload: opened.compaction.payload as CompactionPayload,
            },
          }
        : {}),
      ...(handoff ? { handoff: { from: sessionId, to: handoff.successorId } } : {}),
    } satisfies TurnResult;
  });

/** The turn's approval decisions in order; a resumed turn also takes them from its journal (a batch
 * or cell replayed whole did not run its approval step here). */
const turnApprovals = (rt: RuntimeContext, scope: TurnScope, resumed: boolean) =>
  Effect.gen(function* () {
    const byKey = new Map(scope.approvals);
    if (resumed) {
      const entries = yield* rt.store
        .journalForTurn(scope.sessionId, scope.turnId)
        .pipe(Effect.mapError(scope.failTurn));
      for (const e of entries) {
        if (e.status !== "completed" || byKey.has(e.key)) continue;
        const records = recordsOfJournal(e.key, e.outcome);
        if (records) byKey.set(e.key, records);
      }
    }
    if (byKey.size === 0) return [] as ApprovalRecord[];
    return [...byKey.values()].flat().sort((a, b) => a.at - b.at);
  });

/**
 * The loop, with the journal's waiting records written when it ends (the turn's last answer is
 * on disk before the commit starts) or fails (what completed is kept for the resume).
 */
const loop = (rt: RuntimeContext, scope: TurnScope, machine: TurnMachine) =>
  Effect.zipLeft(
    runLoop(scope, machine),
    Effect.mapError(rt.journal.flush(scope.turnId), scope.failTurn),
  ).pipe(
    Effect.onError(() => Effect.ignore(rt.journal.flush(scope.turnId))),
    Effect.ensuring(Effect.sync(() => rt.journal.discard(scope.turnId))),
  );

/** A logical turn: the turn plus follow-up turns after frame switches (at most 16). */
export const runLogical = (rt: RuntimeContext, args: RunArgs) =>
  Effect.gen(function* () {
    let result = yield* runOneTurn(rt, args);
    for (let n = 0; result.outcome.type === "frameSwitch" && n < MAX_FRAME_SWITCHES; n++) {
      const task = result.outcome.task;
      result = yield* runOneTurn(rt, {
        sessionId: args.sessionId,
        options: args.options,
        cancel: args.cancel,
        input: [{ id: "", role: "user", parts: [{ type: "text", text: task }] }],
      });
    }
    return result;
  });
