// The approval step of a tool batch: between preparing the calls (lookup, validation,
// `beforeToolCall` hooks) and running any of them, the runtime's `Governance` decides
// each call. A denial settles the call as an error result the model reads; the calls
// it asks about go to the `Approver` together, in one request. The request is journaled
// under `{batchKey}:approval` — `started` (with the request) before it is asked, written
// through at once, and `completed` (with the answer) after — so a process killed while
// it waits shows the same request again on resume, and an answer given is never asked
// for twice. Every decision becomes an `ApprovalRecord`, committed with the turn as a
// graph node (see `approvalNodes`).
import { abortWait, canonicalJson, type Message, sha256Hex } from "@lash/sansio";
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import type { TurnActivityBody } from "./activity.ts";
import {
  type ApprovalAnswer,
  ApprovalError,
  type ApprovalItem,
  type ApprovalRequest,
  type ApproverShape,
  type GovernanceShape,
  type GovernedCall,
  type RiskSummary,
  type Verdict,
} from "./governance.ts";
import { Journal, type JournalMismatch } from "./journal.ts";
import { validateJson } from "./jsonschema.ts";
import type { Redactor } from "./secrets.ts";
import type { StoreError } from "./store.ts";
import { type ToolDefinition, type ToolOutput, type ToolPreview, toolEffects } from "./tool.ts";

/** One decision about one call, as the session graph keeps it (a `protocol` node's payload). */
export interface ApprovalRecord {
  readonly type: "approval";
  readonly requestId: string;
  readonly callId: string;
  readonly lashCallId?: string;
  readonly tool: string;
  /** `sha256Hex(canonicalJson(args))` of the arguments the model sent. */
  readonly argsHash: string;
  /** Hash of the preview the approver saw (absent for a policy's denial: nothing was shown). */
  readonly previewHash?: string;
  readonly decision: "approve" | "deny";
  readonly scope?: "once" | "session";
  /**
   * A session grant's reach: later calls of the tool are not asked about up to this risk
   * level (the risk of the call it was given for; `high` when that call had none).
   */
  readonly level?: RiskLevel;
  /** The approver changed the arguments (the call ran with `args`). */
  readonly edited?: boolean;
  readonly args?: unknown;
  /** Who decided: `policy`, or the approver's `by`. */
  readonly by: string;
  readonly reason?: string;
  /** The policy layer that denied or asked. */
  readonly layer?: string;
  /** When it was decided (epoch ms, from the Clock). */
  readonly at: number;
}

export type RiskLevel = RiskSummary["level"];
const LEVELS: readonly RiskLevel[] = ["low", "medium", "high"];

/**
 * Tools approved for the rest of a session (`scope: "session"`), each up to a risk level:
 * a later call is not asked about when its risk (`high` when it has none) is at most the
 * level, unless the policy always asks about it (`approval: "always"`).
 */
export type Grants = Map<string, RiskLevel>;

/** Adds a grant (the wider of two grants for one tool holds). */
export function addGrant(grants: Grants, tool: string, level: RiskLevel): void {
  const had = grants.get(tool);
  if (had === undefined || LEVELS.indexOf(level) > LEVELS.indexOf(had)) grants.set(tool, level);
}

/** Whether a session grant answers this ask. */
export function grantCovers(
  grants: Grants,
  tool: string,
  verdict: Extract<Verdict, { action: "ask" }>,
): boolean {
  if (verdict.always) return false;
  const level = grants.get(tool);
  if (level === undefined) return false;
  return LEVELS.indexOf(verdict.risk?.level ?? "high") <= LEVELS.indexOf(level);
}

/** What the dispatcher needs to govern a batch (absent: everything runs, nothing is asked). */
export interface DispatchGovernance {
  readonly governance: GovernanceShape;
  readonly approver: ApproverShape | undefined;
  /** Tools the approver allowed for the rest of the session (`scope: "session"`), each up to a risk level. */
  readonly grants: Grants;
  /** A fresh request id. */
  readonly newId: () => Effect.Effect<string>;
  /** Keeps the batch's decisions for the turn's commit, by journal key. */
  readonly record: (key: string, records: readonly ApprovalRecord[]) => void;
}

/** A call as governance sees it: ready to run (after lookup, validation and hooks). */
export interface Runnable {
  readonly index: number;
  readonly call: {
    readonly callId: string;
    readonly lashCallId?: string;
    readonly name: string;
  };
  readonly tool: ToolDefinition;
  readonly args: unknown;
  /**
   * A `beforeToolCall` hook already settled the call (dry-run's stub): only a denial
   * changes that — the call is never asked about, since it will not run anyway.
   */
  readonly stubbed?: boolean;
}

/** What governance made of one runnable call. */
export type Governed =
  | { readonly kind: "run"; readonly args: unknown }
  | { readonly kind: "settled"; readonly output: ToolOutput }
  /** The turn was cancelled while the call waited for an answer: it does not run. */
  | { readonly kind: "held" };

/** Recorded under `{batchKey}:approval`. */
interface ApprovalJournal {
  readonly request: ApprovalRequest;
  readonly answer?: ApprovalAnswer;
  readonly records?: readonly ApprovalRecord[];
}

export const hashOf = (value: unknown): string => sha256Hex(canonicalJson(value ?? null));

const errorOutput = (text: string): ToolOutput => ({ content: [{ type: "text", text }], isError: true });

/** The text the model reads for a denied call: denied, by whom, why, and not to retry it unchanged. */
export function denialText(
  tool: string,
  who: { readonly by: string; readonly layer?: string | undefined },
  reason: string | undefined,
): string {
  const byWhom =
    who.by === "policy"
      ? `the policy${who.layer ? ` (${who.layer})` : ""}`
      : who.by === "user"
        ? "the user"
        : `the approver (${who.by})`;
  const why = reason?.trim() ? reason.trim().replace(/\.$/, "") : "no reason given";
  return (
    `Denied: ${tool} was not run; ${byWhom} denied it: ${why}. ` +
    "Do not retry the same call unchanged: change the arguments or the approach, or ask the user."
  );
}

/** The preview of a tool without one: its name and arguments. */
export function genericPreview(tool: string, args: unknown): ToolPreview {
  const text = canonicalJson(args ?? null);
  return { summary: `${tool} ${text.length > 400 ? `${text.slice(0, 399)}…` : text}` };
}

const previewOf = (
  r: Runnable,
  sessionId: string,
  signal: AbortSignal,
  redactor: Redactor | undefined,
): Effect.Effect<ToolPreview> => {
  const generic = genericPreview(r.call.name, r.args);
  const made = r.tool.preview
    ? Effect.orElseSucceed(
        Effect.catchAllDefect(r.tool.preview(r.args, { sessionId, callId: r.call.callId, signal }), () =>
          Effect.succeed(generic),
        ),
        () => generic,
      )
    : Effect.succeed(generic);
  return redactor && redactor.size > 0 ? Effect.map(made, (p) => redactor.deep(p)) : made;
};

const governedCall = (ctx: GovernContext, r: Runnable, args: unknown): GovernedCall => ({
  sessionId: ctx.sessionId,
  turnId: ctx.turnId,
  callId: r.call.callId,
  ...(r.call.lashCallId !== undefined ? { lashCallId: r.call.lashCallId } : {}),
  name: r.call.name,
  args,
  tool: r.tool,
  effects: toolEffects(r.tool),
});

/**
 * The edited arguments, checked against the tool's schema again and decided by the policy
 * again: a denial settles the call (the model reads why); an ask is answered by this
 * approval (the approver saw the edit).
 */
function checkEdit(
  ctx: GovernContext,
  g: DispatchGovernance,
  r: Runnable,
  args: unknown,
): Governed | { readonly kind: "denied"; readonly verdict: Extract<Verdict, { action: "deny" }> } {
  const problems = validateJson(r.tool.inputSchema, args);
  if (problems.length === 0) {
    const verdict = g.governance.decide(governedCall(ctx, r, args));
    return verdict.action === "deny" ? { kind: "denied", verdict } : { kind: "run", args };
  }
  return {
    kind: "settled",
    output: errorOutput(
      `The approver edited the arguments of ${r.call.name}, and the edited arguments are invalid:\n` +
        `${problems.map((p) => `- ${p}`).join("\n")}\nThe call was not run.`,
    ),
  };
}

export interface GovernContext {
  readonly sessionId: string;
  readonly turnId: string;
  readonly batchKey: string;
  readonly journal: Journal;
  readonly signal: AbortSignal;
  readonly emit: (body: TurnActivityBody) => Effect.Effect<void>;
  readonly redactor?: Redactor | undefined;
}

/**
 * Governs the runnable calls of one batch. Returns what became of each (by index):
 * run (maybe with edited arguments), settled (denied, or an invalid edit) or held (the
 * turn was cancelled while waiting). Fails with `ApprovalError` when an answer was
 * needed and none could be had; the request then stays `started` in the journal.
 */
export const govern = (
  ctx: GovernContext,
  g: DispatchGovernance,
  runnable: readonly Runnable[],
): Effect.Effect<Map<number, Governed>, ApprovalError | JournalMismatch | StoreError> =>
  Effect.gen(function* () {
    const out = new Map<number, Governed>();
    const ids = { sessionId: ctx.sessionId, turnId: ctx.turnId };
    const denied: { r: Runnable; verdict: Extract<Verdict, { action: "deny" }> }[] = [];
    const asks: { r: Runnable; verdict: Extract<Verdict, { action: "ask" }> }[] = [];
    for (const r of runnable) {
      const verdict = g.governance.decide(governedCall(ctx, r, r.args));
      if (verdict.action === "deny") denied.push({ r, verdict });
      // a call a hook already settled (dry-run) is not asked about: it does not run anyway
      else if (verdict.action === "ask" && !r.stubbed) asks.push({ r, verdict });
    }
    if (denied.length === 0 && asks.length === 0) return out;

    // the request this batch journaled before (a resumed turn): its calls are the ones asked
    // about, whatever grants were added since (a grant of this very request, rebuilt when the
    // turn reopened, must not shrink it)
    const key = `${ctx.batchKey}:approval`;
    const entry =
      asks.length > 0 && ctx.journal.enabled ? yield* ctx.journal.lookup(key, ctx.turnId) : undefined;
    const recorded = entry?.outcome as ApprovalJournal | undefined;
    const inRequest = new Set((recorded?.request?.items ?? []).map((i) => i.callId));
    // a tool approved for the session is not asked about again, up to the grant's risk level
    const asked = asks.filter(
      ({ r, verdict }) => inRequest.has(r.call.callId) || !grantCovers(g.grants, r.call.name, verdict),
    );

    // 1. the policy's denials: settled at once, kept for the audit trail
    if (denied.length > 0) {
      const requestId = yield* g.newId();
      const at = yield* Clock.currentTimeMillis;
      const records = denied.map(
        ({ r, verdict }): ApprovalRecord => ({
          type: "approval",
          requestId,
          callId: r.call.callId,
          ...(r.call.lashCallId !== undefined ? { lashCallId: r.call.lashCallId } : {}),
          tool: r.call.name,
          argsHash: hashOf(r.args),
          decision: "deny",
          by: "policy",
          reason: verdict.reason,
          layer: verdict.layer,
          at,
        }),
      );
      for (const { r, verdict } of denied)
        out.set(r.index, {
          kind: "settled",
          output: errorOutput(
            denialText(r.call.name, { by: "policy", layer: verdict.layer }, verdict.reason),
          ),
        });
      const key = `${ctx.batchKey}:policy`;
      // no consequence outside the process: the record waits for the turn's next write
      yield* ctx.journal.record(ids, key, "", "completed", { records }, true);
      g.record(key, records);
      yield* ctx.emit({
        type: "approvalResolved",
        requestId,
        by: "policy",
        decisions: records.map((rec) => ({
          callId: rec.callId,
          tool: rec.tool,
          decision: "deny" as const,
          ...(rec.reason !== undefined ? { reason: rec.reason } : {}),
          ...(rec.layer !== undefined ? { layer: rec.layer } : {}),
        })),
        replayed: false,
      });
    }
    if (asked.length === 0) return out;

    // 2. the calls asked about: one request, journaled before it is asked
    const hash = Journal.hash(
      asked.map(({ r }) => ({ callId: r.call.callId, tool: r.call.name, args: r.args })),
    );
    yield* ctx.journal.check(entry, key, hash);

    let request: ApprovalRequest;
    let answer: ApprovalAnswer;
    let records: readonly ApprovalRecord[];
    let replayed = false;
    if (entry?.status === "completed" && recorded?.answer && recorded.records) {
      // a decision is never asked for twice
      request = recorded.request;
      answer = recorded.answer;
      records = recorded.records;
      replayed = true;
    } else {
      if (entry?.status === "started" && recorded?.request) request = recorded.request;
      else {
        const items: ApprovalItem[] = [];
        for (const { r, verdict } of asked) {
          const preview = yield* previewOf(r, ctx.sessionId, ctx.signal, ctx.redactor);
          items.push({
            callId: r.call.callId,
            ...(r.call.lashCallId !== undefined ? { lashCallId: r.call.lashCallId } : {}),
            tool: r.call.name,
            args: r.args,
            effects: toolEffects(r.tool),
            reason: verdict.reason,
            layer: verdict.layer,
            ...(verdict.risk ? { risk: verdict.risk } : {}),
            preview,
            previewHash: hashOf(preview),
            ...(verdict.always ? { always: true } : {}),
          });
        }
        request = { id: yield* g.newId(), sessionId: ctx.sessionId, turnId: ctx.turnId, items };
        // written through at once: a crash while the approver thinks leaves it on disk
        yield* ctx.journal.record(ids, key, hash, "started", { request } satisfies ApprovalJournal);
      }
      yield* ctx.emit({ type: "approvalRequested", requestId: request.id, items: request.items });
      const tools = [...new Set(request.items.map((i) => i.tool))].join(", ");
      const approver = g.approver;
      if (!approver)
        return yield* Effect.fail(
          new ApprovalError({
            message: `${tools} needs an approval and this runtime has no approver. Give it one (RuntimeOptions.approver, or onApproval in createLash), or allow the tool in the policy.`,
            request,
          }),
        );
      const got = yield* Effect.raceFirst(
        Effect.map(approver.ask(request, ctx.signal), (a): ApprovalAnswer | undefined => a),
        Effect.as(abortWait(ctx.signal), undefined),
      ).pipe(
        Effect.mapError(
          (e) =>
            new ApprovalError({
              message: `${tools} needs an approval, and none could be had: ${e.message.trim().replace(/\.$/, "")}.`,
              request,
            }),
        ),
      );
      if (got === undefined) {
        // cancelled while waiting: nothing runs, the request stays started
        for (const { r } of asked) out.set(r.index, { kind: "held" });
        return out;
      }
      answer = got;
      const at = yield* Clock.currentTimeMillis;
      records = request.items.map((item): ApprovalRecord => {
        const d = answer.decisions.find((x) => x.callId === item.callId);
        const base = {
          type: "approval" as const,
          requestId: request.id,
          callId: item.callId,
          ...(item.lashCallId !== undefined ? { lashCallId: item.lashCallId } : {}),
          tool: item.tool,
          argsHash: hashOf(item.args),
          previewHash: item.previewHash,
          by: answer.by,
          layer: item.layer,
          at,
        };
        if (!d) return { ...base, decision: "deny", reason: "the approver gave no answer for this call" };
        if (d.decision === "deny")
          return { ...base, decision: "deny", ...(d.reason !== undefined ? { reason: d.reason } : {}) };
        // a tool the policy always asks about gets no session grant: the record says what happened
        const scope = item.always ? "once" : (d.scope ?? "once");
        return {
          ...base,
          decision: "approve",
          scope,
          ...(scope === "session" ? { level: item.risk?.level ?? "high" } : {}),
          ...(d.args !== undefined ? { edited: true, args: d.args } : {}),
        };
      });
      yield* ctx.journal.record(ids, key, hash, "completed", {
        request,
        answer,
        records,
      } satisfies ApprovalJournal);
    }
    g.record(key, records);
    yield* ctx.emit({
      type: "approvalResolved",
      requestId: request.id,
      by: answer.by,
      decisions: records.map((rec) => decisionEvent(rec)),
      replayed,
    });

    // 3. apply the answers
    const byCall = new Map(records.map((rec) => [rec.callId, rec]));
    const editDenials: ApprovalRecord[] = [];
    for (const { r } of asked) {
      const rec = byCall.get(r.call.callId);
      if (!rec || rec.decision === "deny") {
        out.set(r.index, {
          kind: "settled",
          output: errorOutput(
            denialText(r.call.name, { by: rec?.by ?? answer.by }, rec?.reason ?? "not answered"),
          ),
        });
        continue;
      }
      if (rec.scope === "session") addGrant(g.grants, r.call.name, rec.level ?? "low");
      if (!rec.edited) {
        out.set(r.index, { kind: "run", args: r.args });
        continue;
      }
      const checked = checkEdit(ctx, g, r, rec.args);
      if (checked.kind !== "denied") {
        out.set(r.index, checked);
        continue;
      }
      // the edit asks for what the policy denies: the denial wins, and is kept for the audit trail
      const { verdict } = checked;
      out.set(r.index, {
        kind: "settled",
        output: errorOutput(
          denialText(
            r.call.name,
            { by: "policy", layer: verdict.layer },
            `${verdict.reason} (the approver's edit)`,
          ),
        ),
      });
      editDenials.push({
        type: "approval",
        requestId: request.id,
        callId: r.call.callId,
        ...(r.call.lashCallId !== undefined ? { lashCallId: r.call.lashCallId } : {}),
        tool: r.call.name,
        argsHash: hashOf(rec.args),
        decision: "deny",
        edited: true,
        args: rec.args,
        by: "policy",
        reason: verdict.reason,
        layer: verdict.layer,
        at: rec.at,
      });
    }
    if (editDenials.length > 0) {
      const editKey = `${ctx.batchKey}:edit:policy`;
      yield* ctx.journal.record(ids, editKey, "", "completed", { records: editDenials }, true);
      g.record(editKey, editDenials);
      yield* ctx.emit({
        type: "approvalResolved",
        requestId: request.id,
        by: "policy",
        decisions: editDenials.map((rec) => decisionEvent(rec)),
        replayed,
      });
    }
    return out;
  });

const decisionEvent = (rec: ApprovalRecord) => ({
  callId: rec.callId,
  tool: rec.tool,
  decision: rec.decision,
  ...(rec.scope !== undefined ? { scope: rec.scope } : {}),
  ...(rec.edited ? { args: rec.args } : {}),
  ...(rec.reason !== undefined ? { reason: rec.reason } : {}),
  ...(rec.layer !== undefined ? { layer: rec.layer } : {}),
});

/** The decisions a journal record holds (`{batchKey}:approval` or `:policy`), for a resumed turn's commit. */
export function recordsOfJournal(key: string, outcome: unknown): readonly ApprovalRecord[] | undefined {
  if (!key.endsWith(":approval") && !key.endsWith(":policy")) return undefined;
  const records = (outcome as { records?: unknown } | undefined)?.records;
  return Array.isArray(records) ? (records as ApprovalRecord[]) : undefined;
}

/**
 * Adds the session grant of one approval record, if it is one. A record without a level
 * (written before grants had levels) grants up to `low` only: it is asked about again.
 */
export function addGrantOf(grants: Grants, rec: Partial<ApprovalRecord> | undefined): void {
  if (rec?.type === "approval" && rec.decision === "approve" && rec.scope === "session" && rec.tool)
    addGrant(grants, rec.tool, rec.level ?? "low");
}

/** Tools approved for the session (`scope: "session"`) in the graph's approval records. */
export function grantsOf(
  nodes: readonly { readonly kind: string; readonly payload: unknown }[],
  into: Grants,
): Grants {
  for (const n of nodes) if (n.kind === "protocol") addGrantOf(into, n.payload as Partial<ApprovalRecord>);
  return into;
}

/**
 * The approval records as graph nodes: each after the assistant message that made the
 * call (paired by `lashCallId`), the rest after the turn's last message. Pure.
 */
export function approvalNodes(
  records: readonly ApprovalRecord[],
  messages: readonly Message[],
): { readonly after: ReadonlyMap<string, ApprovalRecord[]>; readonly rest: ApprovalRecord[] } {
  const owner = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    for (const part of m.parts)
      if (part.type === "toolCall" && part.lashCallId !== undefined) owner.set(part.lashCallId, m.id);
  }
  const after = new Map<string, ApprovalRecord[]>();
  const rest: ApprovalRecord[] = [];
  for (const rec of records) {
    const id = rec.lashCallId !== undefined ? owner.get(rec.lashCallId) : undefined;
    if (id === undefined) rest.push(rec);
    else {
      const list = after.get(id);
      if (list) list.push(rec);
      else after.set(id, [rec]);
    }
  }
  return { after, rest };
}
