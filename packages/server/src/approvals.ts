// The daemon's approver: every approval request core asks for becomes a row of table
// `approvals` (state db), answered over HTTP by a principal who can see the session.
//
// `approver.ask(request, signal)`:
//   1. find the run executing the turn (a subagent's child turn: the run of its root session);
//   2. upsert the row under core's request id — stable across a daemon restart, so a re-ask
//      after one flips the row back to `pending` (its `createdAt` kept);
//   3. mark the run `waitingApproval`, append `approvalWaiting {requestId, reasked}` to the run's
//      event stream (after a restart the only sign that the approval can be answered again),
//      and wait for `decide` (a cancelled turn interrupts the wait and leaves the row pending;
//      it expires once its run has ended);
//   4. return core's `ApprovalAnswer`, `by` = the deciding principal(s).
// `decide(principal, id, body)`: 404 unknown, 403 not visible, 409 not pending or nobody is
// waiting for it (the daemon restarted and the run has not asked again yet), 400 for call ids
// not in the request or `args` on a deny. The two-step rule (policy `secondApprover`): an
// approval of a call at or above that risk must come from a principal other than the run's
// starter (403 `second_principal_required`); the starter may still deny. `callIds` decides
// some calls now and the rest later; core gets its answer once every call has one.
import {
  type ApprovalAnswer,
  type ApprovalDecision,
  type ApprovalItem,
  type ApprovalRequest,
  SessionStore,
} from "@lash/core";
import { type NamedLayer, needsSecondApprover, type RiskLevel, secondApproverThreshold } from "@lash/policy";
import type Database from "better-sqlite3";
import { Clock, Effect, Layer } from "effect";
import { canSee, DEFAULT_OWNER } from "./access.ts";
import { Approval, BadRequest, Conflict, Forbidden, NotFound, type Principal, type Run } from "./api.ts";
import {
  Access,
  type AccessShape,
  Approvals,
  type ApprovalsShape,
  EventLog,
  type EventLogShape,
  Host,
  RunManager,
  type RunManagerShape,
  StateDb,
} from "./services.ts";

type ApprovalState = Approval["state"];

interface Row {
  readonly id: string;
  readonly session_id: string;
  readonly run_id: string;
  readonly turn_id: string;
  /** The session's owner (null until looked up, right after the row is written). */
  readonly owner: string | null;
  readonly state: ApprovalState;
  readonly items: string;
  readonly requested_by: string;
  /** JSON array of the call ids the two-step rule covers. */
  readonly second_calls: string;
  readonly second_level: RiskLevel | null;
  readonly created_at: number;
  readonly decided_by: string | null;
  readonly decided_at: number | null;
  /** JSON array of `{ by, decision: ApprovalDecision }` (partial while pending). */
  readonly decisions: string | null;
}

interface Decided {
  readonly by: string;
  readonly decision: ApprovalDecision;
}

const TERMINAL: ReadonlySet<Run["state"]> = new Set(["completed", "failed", "cancelled"]);

const SCHEMA = `CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  owner TEXT,
  state TEXT NOT NULL,
  items TEXT NOT NULL,
  requested_by TEXT NOT NULL,
  second_calls TEXT NOT NULL,
  second_level TEXT,
  created_at INTEGER NOT NULL,
  decided_by TEXT,
  decided_at INTEGER,
  decisions TEXT
);
CREATE INDEX IF NOT EXISTS approvals_state ON approvals (state, created_at);`;

/** What the registry needs of the daemon (the services, as plain values). */
export interface ApprovalsDeps {
  readonly db: Database.Database;
  readonly runs: RunManagerShape;
  readonly access: AccessShape;
  /** The session's effective policy layers (the two-step rule); absent: no rule. */
  readonly policyLayers?: (sessionId: string) => readonly NamedLayer[];
  /** The session event log: each ask appends `approvalWaiting {requestId, reasked}` to its run's stream. */
  readonly events?: Pick<EventLogShape, "append">;
  /** The parent session of a subagent's child session (to find the run of a child's turn). */
  readonly parentOf?: (sessionId: string) => Promise<string | undefined>;
}

const decodedOf = (row: Row): readonly Decided[] => (row.decisions ? JSON.parse(row.decisions) : []);

function approvalOf(row: Row): Approval {
  const decided = decodedOf(row);
  return new Approval({
    id: row.id,
    sessionId: row.session_id,
    runId: row.run_id,
    turnId: row.turn_id,
    state: row.state,
    items: JSON.parse(row.items) as unknown[],
    requestedBy: row.requested_by,
    requiresOtherPrincipal: (JSON.parse(row.second_calls) as string[]).length > 0,
    createdAt: row.created_at,
    ...(row.decided_by !== null ? { decidedBy: row.decided_by } : {}),
    ...(row.decided_at !== null ? { decidedAt: row.decided_at } : {}),
    ...(decided.length > 0 ? { decisions: decided.map((d) => d.decision) } : {}),
  });
}

const unique = (names: readonly string[]): string => [...new Set(names)].join(", ");

/** The registry: the approver core calls and the operations of `/v1/approvals`. */
export function makeApprovals(deps: ApprovalsDeps): ApprovalsShape {
  const { db, runs, access } = deps;
  db.exec(SCHEMA);
  const byId = db.prepare<[string], Row>("SELECT * FROM approvals WHERE id = ?");
  const all = db.prepare<[], Row>("SELECT * FROM approvals ORDER BY created_at, id");
  const pending = db.prepare<[], Row>(
    "SELECT * FROM approvals WHERE state = 'pending' ORDER BY created_at, id",
  );
  const upsert = db.prepare(`INSERT INTO approvals
      (id, session_id, run_id, turn_id, state, items, requested_by, second_calls, second_level, created_at)
      VALUES (@id, @session_id, @run_id, @turn_id, 'pending', @items, @requested_by, @second_calls, @second_level, @created_at)
    ON CONFLICT (id) DO UPDATE SET
      run_id = excluded.run_id, state = 'pending', items = excluded.items,
      requested_by = CASE WHEN excluded.requested_by = '' THEN approvals.requested_by ELSE excluded.requested_by END,
      second_calls = excluded.second_calls, second_level = excluded.second_level,
      decided_by = NULL, decided_at = NULL, decisions = NULL`);
  const update = db.prepare<[ApprovalState, string | null, number | null, string | null, string]>(
    "UPDATE approvals SET state = ?, decided_by = ?, decided_at = ?, decisions = ? WHERE id = ?",
  );
  const setOwner = db.prepare<[string, string, string]>(
    "UPDATE approvals SET owner = ?, requested_by = CASE WHEN requested_by = '' THEN ? ELSE requested_by END WHERE id = ?",
  );
  const expire = db.prepare<[string]>(
    "UPDATE approvals SET state = 'expired' WHERE id = ? AND state = 'pending'",
  );

  /** Who waits for an answer, by request id (only while a run of this process asks). */
  const waiters = new Map<string, (answer: ApprovalAnswer) => void>();

  /** The run executing a turn: the session's own, or (a child's turn) its root session's active run. */
  const runOf = (sessionId: string, turnId: string): Effect.Effect<Run | undefined> =>
    Effect.gen(function* () {
      const own = runs.runOfTurn(sessionId, turnId);
      if (own) return own;
      let id: string | undefined = sessionId;
      for (let depth = 0; depth < 16 && deps.parentOf; depth++) {
        const parent: string | undefined = yield* Effect.promise(
          () => deps.parentOf?.(id ?? "") ?? Promise.resolve(undefined),
        );
        if (!parent) return undefined;
        const active = (yield* runs.list(parent)).find(
          (r) => r.state === "running" || r.state === "waitingApproval",
        );
        if (active) return active;
        id = parent;
      }
      return undefined;
    });

  /** The owner of a row: stored, or (not filled in yet) looked up. */
  const ownerOf = (row: Row): Effect.Effect<string> =>
    row.owner !== null
      ? Effect.succeed(row.owner)
      : access.sessionInfo(row.session_id).pipe(
          Effect.map((i) => i.owner),
          Effect.orElseSucceed(() => DEFAULT_OWNER),
        );

  const ask = (request: ApprovalRequest, _signal: AbortSignal) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis;
      const run = yield* runOf(request.sessionId, request.turnId);
      const level = secondApproverThreshold(deps.policyLayers?.(request.sessionId) ?? []);
      const secondCalls = request.items
        .filter((item) => needsSecondApprover(level, item.risk?.level))
        .map((item) => item.callId);
      // the waiter and the row first, with nothing asynchronous before them: a client that
      // saw the `approvalRequested` event finds the approval and may answer it at once
      let resolve: (answer: ApprovalAnswer) => void = () => undefined;
      const answered = new Promise<ApprovalAnswer>((r) => {
        resolve = r;
      });
      waiters.set(request.id, resolve);
      const reasked = byId.get(request.id) !== undefined;
      upsert.run({
        id: request.id,
        session_id: request.sessionId,
        run_id: run?.id ?? "",
        turn_id: request.turnId,
        items: JSON.stringify(request.items),
        requested_by: run?.principal ?? "",
        second_calls: JSON.stringify(secondCalls),
        second_level: level ?? null,
        created_at: now,
      });
      if (run) {
        runs.setWaiting(run.id, true);
        // "answer now": after a restart core's own `approvalRequested` is not published again
        deps.events?.append(request.sessionId, run.id, "approvalWaiting", { requestId: request.id, reasked });
      }
      return yield* Effect.gen(function* () {
        // then who may see it (the session's owner), and who started it when no run did
        const row = byId.get(request.id);
        if (row && row.owner === null) {
          const owner = yield* ownerOf(row);
          setOwner.run(owner, owner, request.id);
        }
        // a cancelled turn interrupts the wait: the row stays pending (it expires with its run)
        const answer = yield* Effect.promise(() => answered);
        if (run) runs.setWaiting(run.id, false);
        return answer;
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (waiters.get(request.id) === resolve) waiters.delete(request.id);
          }),
        ),
      );
    });

  const load = (principal: Principal, id: string): Effect.Effect<Row, NotFound | Forbidden> =>
    Effect.gen(function* () {
      const row = byId.get(id);
      if (!row)
        return yield* Effect.fail(
          new NotFound({
            code: "approval_not_found",
            message: `no approval ${JSON.stringify(id)}: list the pending ones with GET /v1/approvals?state=pending`,
          }),
        );
      if (!canSee(principal, yield* ownerOf(row)))
        return yield* Effect.fail(
          new Forbidden({
            code: "forbidden",
            message: `approval ${JSON.stringify(id)} belongs to a session of another principal: only the session's owner and admins may see or answer it`,
          }),
        );
      return row;
    });

  /** A pending row nobody waits for whose run has ended will never be asked again: expire it. */
  const expireIfOrphaned = (row: Row): Effect.Effect<Row> =>
    Effect.gen(function* () {
      if (row.state !== "pending" || waiters.has(row.id) || row.run_id === "") return row;
      const run = yield* runs.get(row.run_id).pipe(Effect.orElseSucceed(() => undefined));
      if (run !== undefined && !TERMINAL.has(run.state)) return row;
      expire.run(row.id);
      return { ...row, state: "expired" as const };
    });

  const decide: ApprovalsShape["decide"] = (principal, id, body) =>
    Effect.gen(function* () {
      const row = yield* expireIfOrphaned(yield* load(principal, id));
      if (row.state === "expired")
        return yield* Effect.fail(
          new Conflict({
            code: "approval_expired",
            message: `approval ${id} can no longer be answered: its run ${row.run_id || "(none)"} ended before anyone did. Start a new turn to try again`,
          }),
        );
      if (row.state !== "pending")
        return yield* Effect.fail(
          new Conflict({
            code: "approval_decided",
            message: `approval ${id} was already answered (${row.state} by ${row.decided_by ?? "?"}); GET /v1/approvals/${id} shows the decisions`,
          }),
        );
      const waiter = waiters.get(id);
      if (!waiter)
        return yield* Effect.fail(
          new Conflict({
            code: "approval_not_waiting",
            message: `approval ${id} is pending but its run is not waiting for it yet (the daemon restarted and run ${row.run_id} has not asked again): retry in a moment`,
          }),
        );
      const items = JSON.parse(row.items) as ApprovalItem[];
      const before = decodedOf(row);
      const open = items
        .filter((i) => !before.some((d) => d.decision.callId === i.callId))
        .map((i) => i.callId);
      const callIds = body.callIds ?? open;
      const bad = (code: string, message: string) => Effect.fail(new BadRequest({ code, message }));
      const unknown = callIds.filter((c) => !items.some((i) => i.callId === c));
      if (unknown.length > 0)
        return yield* bad(
          "unknown_call",
          `callIds ${unknown.map((c) => JSON.stringify(c)).join(", ")} are not calls of approval ${id}; its calls: ${items.map((i) => `${i.callId} (${i.tool})`).join(", ")}`,
        );
      const again = callIds.filter((c) => !open.includes(c));
      if (again.length > 0)
        return yield* Effect.fail(
          new Conflict({
            code: "call_decided",
            message: `calls ${again.join(", ")} of approval ${id} were already answered; the open ones: ${open.join(", ") || "none"}`,
          }),
        );
      if (callIds.length === 0)
        return yield* bad("no_calls", "callIds is empty: name at least one call to decide");
      if (body.args !== undefined) {
        if (body.decision === "deny")
          return yield* bad(
            "args_on_deny",
            "`args` (edited arguments) go with an approval only: drop `args`, or approve with them",
          );
        const stray = Object.keys(body.args).filter((c) => !callIds.includes(c));
        if (stray.length > 0)
          return yield* bad(
            "unknown_call",
            `args has entries for ${stray.join(", ")}, which this decision does not cover (${callIds.join(", ")}): key args by the call ids you approve`,
          );
      }
      if (body.decision === "approve" && principal.name === row.requested_by) {
        const second = JSON.parse(row.second_calls) as string[];
        const covered = callIds.filter((c) => second.includes(c));
        if (covered.length > 0) {
          const tools = unique(covered.map((c) => items.find((i) => i.callId === c)?.tool ?? c));
          const owner = yield* ownerOf(row);
          const who =
            owner === row.requested_by
              ? `an admin other than ${row.requested_by}`
              : `the session's owner (${owner}) or an admin other than ${row.requested_by}`;
          return yield* Effect.fail(
            new Forbidden({
              code: "second_principal_required",
              message: `the two-step rule (policy secondApprover: ${row.second_level ?? "high"}) needs a principal other than ${row.requested_by}, who started this run, to approve ${tools}: ${who} may approve it; ${row.requested_by} may still deny`,
            }),
          );
        }
      }
      const now = yield* Clock.currentTimeMillis;
      const added: Decided[] = callIds.map((callId) => ({
        by: principal.name,
        decision:
          body.decision === "approve"
            ? {
                callId,
                decision: "approve",
                ...(body.scope !== undefined ? { scope: body.scope } : {}),
                ...(body.args !== undefined && callId in body.args ? { args: body.args[callId] } : {}),
              }
            : { callId, decision: "deny", ...(body.reason !== undefined ? { reason: body.reason } : {}) },
      }));
      const decided = [...before, ...added];
      const by = unique(decided.map((d) => d.by));
      if (decided.length < items.length) {
        update.run("pending", by, now, JSON.stringify(decided), id);
        return approvalOf(byId.get(id) as Row);
      }
      const ordered = items.map((i) => decided.find((d) => d.decision.callId === i.callId) as Decided);
      const approved = ordered.filter((d) => d.decision.decision === "approve").length;
      const state: ApprovalState =
        approved === items.length ? "approved" : approved === 0 ? "denied" : "mixed";
      update.run(state, by, now, JSON.stringify(ordered), id);
      waiters.delete(id);
      waiter({ by, decisions: ordered.map((d) => d.decision) });
      return approvalOf(byId.get(id) as Row);
    });

  return Approvals.of({
    approver: { ask },
    list: (principal, state) =>
      Effect.gen(function* () {
        const out: Approval[] = [];
        for (const row of (state === "pending" ? pending : all).all()) {
          if (!canSee(principal, yield* ownerOf(row))) continue;
          const current = yield* expireIfOrphaned(row);
          if (state === "pending" && current.state !== "pending") continue;
          out.push(approvalOf(current));
        }
        return out;
      }),
    get: (principal, id) =>
      Effect.gen(function* () {
        return approvalOf(yield* expireIfOrphaned(yield* load(principal, id)));
      }),
    decide,
  });
}

export const ApprovalsLive = Layer.effect(
  Approvals,
  Effect.gen(function* () {
    const host = yield* Host;
    const parentOf = async (sessionId: string): Promise<string | undefined> => {
      const exit = await host.runtime.runPromiseExit(
        Effect.flatMap(SessionStore, (store) => store.getSession(sessionId)),
      );
      return exit._tag === "Success" ? exit.value.parentLink?.sessionId : undefined;
    };
    return makeApprovals({
      db: yield* StateDb,
      runs: yield* RunManager,
      access: yield* Access,
      events: yield* EventLog,
      parentOf,
      ...(host.policyLayers ? { policyLayers: host.policyLayers } : {}),
    });
  }),
);
