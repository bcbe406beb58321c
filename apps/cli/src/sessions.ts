// Session lookup, the `lash sessions list|show|rm|abandon|gc|compare` commands, and the
// messages every surface shows for a cut-off turn or a session another process writes.
import {
  type ApprovalRecord,
  ARTIFACT_GC_MIN_AGE_MS,
  type CompactionPayload,
  collectArtifacts,
  describeHolder,
  type GraphNode,
  type HandoffPayload,
  isCompaction,
  LashRuntime,
  type PendingTurn,
  type SessionLease,
  type SessionRecord,
  SessionStore,
  TurnError,
} from "@lash/core";
import { type Message, messageText } from "@lash/sansio";
import { Cause, Effect, Runtime } from "effect";
import type { SessionsArgs } from "./args.ts";
import type { LocalContext } from "./create-context.ts";
import { CliError, ExitCode, errorMessage } from "./errors.ts";

export interface Out {
  write(s: string): unknown;
}

/** A session by id, unique id prefix, or title (the newest with that title). */
export async function findSession(ctx: LocalContext, ref: string): Promise<SessionRecord> {
  const exact = await ctx.rt
    .runPromise(Effect.flatMap(LashRuntime, (rt) => Effect.option(rt.getSession(ref))))
    .catch((e: unknown) => {
      throw new CliError(`lash: cannot read sessions: ${errorMessage(e)}`);
    });
  if (exact._tag === "Some") return exact.value;
  const all = await ctx.rt.runPromise(
    Effect.flatMap(LashRuntime, (rt) => rt.listSessions({ limit: 100_000, includeChildren: true })),
  );
  const byPrefix = all.filter((s) => s.id.startsWith(ref));
  if (byPrefix.length === 1) return byPrefix[0]!;
  if (byPrefix.length > 1)
    throw new CliError(
      `session "${ref}" is ambiguous: ${byPrefix
        .slice(0, 5)
        .map((s) => s.id)
        .join(", ")}${byPrefix.length > 5 ? ", …" : ""}`,
      ExitCode.usage,
    );
  const byTitle = all.filter((s) => s.title === ref);
  if (byTitle[0]) return byTitle[0];
  throw new CliError(`no session "${ref}" (\`lash sessions list --all\` shows them)`, ExitCode.usage);
}

/** The latest session whose cwd is `cwd`, if any. */
export async function latestSession(ctx: LocalContext, cwd: string): Promise<SessionRecord | undefined> {
  const list = await ctx.rt.runPromise(
    Effect.flatMap(LashRuntime, (rt) => rt.listSessions({ cwd, limit: 1 })),
  );
  return list[0] && (await newestInChain(ctx, list[0]));
}

/** A session that handed off (its leaf links to a successor): the newest session of its chain. */
export async function newestInChain(ctx: LocalContext, session: SessionRecord): Promise<SessionRecord> {
  let current = session;
  for (let seen = new Set<string>([current.id]); current.leafId !== null; ) {
    const leaf = current.leafId;
    const node = await ctx.rt.runPromise(
      Effect.flatMap(SessionStore, (store) => Effect.orElseSucceed(store.getNode(leaf), () => undefined)),
    );
    const to = node && isHandoff(node) ? (node.payload as HandoffPayload).to : undefined;
    if (to === undefined || seen.has(to)) break;
    seen = seen.add(to);
    const next = await ctx.rt.runPromise(
      Effect.flatMap(LashRuntime, (rt) => Effect.orElseSucceed(rt.getSession(to), () => undefined)),
    );
    if (!next) break;
    current = next;
  }
  return current;
}

/** True when the session has a turn that started and never committed (crash, kill). */
export async function hasPendingTurn(ctx: LocalContext, sessionId: string): Promise<boolean> {
  return (await pendingTurnOf(ctx, sessionId)) !== undefined;
}

/** The session's turn that started and never committed, if any. */
export async function pendingTurnOf(ctx: LocalContext, sessionId: string): Promise<PendingTurn | undefined> {
  return ctx.rt.runPromise(
    Effect.flatMap(SessionStore, (store) =>
      Effect.orElseSucceed(store.pendingTurn(sessionId), () => undefined),
    ),
  );
}

/** The user text of a pending turn (what it was asked to do). */
export function pendingText(p: PendingTurn): string {
  const messages = (p.input as { messages?: Message[] } | undefined)?.messages ?? [];
  return messages
    .filter((m) => m.role === "user")
    .map(messageText)
    .join("\n")
    .trim();
}

const quoted = (s: string, max = 120) => `"${oneLine(s, max)}"`;

/** What a cut-off turn is, and the two ways forward (`how` names the resume command of the surface). */
export function pendingMessage(sessionId: string, p: PendingTurn, resumeHow: string): string {
  const text = pendingText(p);
  const when = new Date(p.startedAt).toISOString().replace("T", " ").slice(0, 19);
  const attempts = p.resumeAttempts
    ? `; resumed ${p.resumeAttempts} time${p.resumeAttempts === 1 ? "" : "s"} already`
    : "";
  return (
    `session ${sessionId} has a turn that was cut off before it finished (started ${when} UTC${attempts})` +
    `${text ? `: ${quoted(text)}` : ""}.\n` +
    `  finish it (completed steps come from the journal):  ${resumeHow}\n` +
    `  drop it (it stays in the transcript as abandoned):  lash sessions abandon ${sessionId}`
  );
}

/** Another process holds the session's lease. */
export function busyMessage(sessionId: string, holder: SessionLease | undefined, waitHow: string): string {
  const who = holder ? describeHolder(holder, Date.now()) : "another process";
  return (
    `session ${sessionId} is in use by another lash process (${who}).\n` +
    `  wait for it to finish: ${waitHow}\n` +
    `  look at it meanwhile:  lash sessions show ${sessionId}\n` +
    "  (if that process is gone, lash takes the session over: at once on this machine, after 30 s otherwise)"
  );
}

/** The one message a surface shows for a turn error (no stack trace); `undefined` when it is not a TurnError. */
export function turnErrorMessage(
  e: unknown,
  waitHow = "run the same command with --wait",
): string | undefined {
  const cause = Runtime.isFiberFailure(e) ? e[Runtime.FiberFailureCauseId] : e;
  const err = Cause.isCause(cause) ? Cause.squash(cause) : cause;
  if (!(err instanceof TurnError)) return undefined;
  const id = err.sessionId;
  switch (err.reason) {
    case "busy":
      return busyMessage(id, err.holder, waitHow);
    case "poisoned":
      return (
        `session ${id}: its cut-off turn crashed lash on each of its last ${err.resumeAttempts ?? 3} resumes, so it is not resumed again automatically.\n` +
        `  drop it:                lash sessions abandon ${id}\n` +
        `  or continue in a copy:  lash --fork ${id}`
      );
    case "journalMismatch":
      return `${err.message}\n  drop the cut-off turn to use the session again: lash sessions abandon ${id}`;
    case "pendingTurn":
      return `${err.message}\n  drop it: lash sessions abandon ${id}`;
    case "approval":
      return (
        `${err.message}\n` +
        `  answer it:  lash -p --resume ${id} --resume-pending --approval-mode approve-all   (or reject-all)\n` +
        `  or drop it: lash sessions abandon ${id}`
      );
    default:
      return err.message;
  }
}

function ago(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

const oneLine = (s: string, max: number) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export async function sessionsList(ctx: LocalContext, args: SessionsArgs, out: Out): Promise<number> {
  const cwd = ctx.settings.cwd;
  const list = await ctx.rt.runPromise(
    Effect.flatMap(LashRuntime, (rt) =>
      rt.listSessions({ ...(args.all ? {} : { cwd }), limit: args.limit ?? 50 }),
    ),
  );
  if (args.json) {
    out.write(`${JSON.stringify(list.map(summary))}\n`);
    return ExitCode.ok;
  }
  if (list.length === 0) {
    out.write(args.all ? "No sessions yet.\n" : `No sessions in ${cwd} (--all lists every directory).\n`);
    return ExitCode.ok;
  }
  const now = Date.now();
  const rows = list.map((s) => [
    s.id,
    ago(s.updatedAt, now),
    String(s.turnCount),
    s.model,
    oneLine(s.title ?? "", 50) + (s.origin ? ` (fork of ${s.origin.sessionId})` : ""),
    ...(args.all ? [s.cwd ?? ""] : []),
  ]);
  const header = ["ID", "UPDATED", "TURNS", "MODEL", "TITLE", ...(args.all ? ["CWD"] : [])];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  out.write(`${[line(header), ...rows.map(line)].join("\n")}\n`);
  return ExitCode.ok;
}

function summary(s: SessionRecord) {
  return {
    id: s.id,
    title: s.title ?? null,
    cwd: s.cwd ?? null,
    model: s.model,
    mode: s.mode,
    turns: s.turnCount,
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(s.updatedAt).toISOString(),
    ...(s.origin ? { forkedFrom: s.origin } : {}),
    ...(s.parentLink ? { parent: s.parentLink.sessionId } : {}),
  };
}

/** Tool results the runtime wrote for calls the turn's cancellation cut off. */
export const isCancelledResult = (text: string): boolean => text.startsWith("Cancelled: ");

export function renderTranscript(messages: readonly Message[]): string {
  const out: string[] = [];
  for (const m of messages) {
    for (const p of m.parts) {
      switch (p.type) {
        case "text":
          if (p.text.trim() !== "") out.push(`${m.role === "user" ? "user" : m.role}: ${p.text}`);
          break;
        case "reasoning":
          out.push(`(reasoning: ${oneLine(p.text, 100)})`);
          break;
        case "toolCall":
          out.push(`→ ${p.name} ${oneLine(p.argumentsText, 200)}  [${p.id}]`);
          break;
        case "toolResult": {
          const text = p.content.map((c) => (c.type === "text" ? c.text : `[${c.mediaType}]`)).join("\n");
          const mark = isCancelledResult(text) ? " [cancelled]" : p.isError ? " [error]" : "";
          const lines = text.split("\n");
          const shown = lines.slice(0, 12).join("\n    ");
          out.push(
            `← ${p.name}${mark}  [${p.callId}]\n    ${shown}${lines.length > 12 ? `\n    … ${lines.length - 12} more lines` : ""}`,
          );
          break;
        }
        case "code":
          out.push(`${m.role} (${p.language} code):\n${p.source}`);
          break;
        case "output":
          out.push(`output: ${p.text}`);
          break;
        case "error":
          out.push(`error: ${p.message}`);
          break;
        case "attachment":
          out.push(`[attachment ${p.name ?? p.mediaType}]`);
          break;
      }
    }
  }
  return out.join("\n");
}

export async function sessionsShow(ctx: LocalContext, args: SessionsArgs, out: Out): Promise<number> {
  const session = await findSession(ctx, args.id!);
  const [nodes, usage] = await ctx.rt.runPromise(
    Effect.flatMap(LashRuntime, (rt) => Effect.all([rt.chronological(session.id), rt.usage(session.id)])),
  );
  const messages = nodes.filter((n) => n.kind === "message").map((n) => n.payload as Message);
  const compactions = nodes.filter(isCompaction).map((n) => ({ nodeId: n.id, ...(n.payload as object) }));
  const handoffs = nodes.filter(isHandoff).map((n) => ({ nodeId: n.id, ...(n.payload as object) }));
  const pending = await hasPendingTurn(ctx, session.id);
  if (args.json) {
    out.write(
      `${JSON.stringify({ session: summary(session), pendingTurn: pending, usage: { total: usage.total, costUsd: usage.costUsd ?? null }, messages, compactions, handoffs })}\n`,
    );
    return ExitCode.ok;
  }
  const cost = usage.costUsd !== undefined ? ` · $${usage.costUsd.toFixed(4)}` : "";
  out.write(
    `session ${session.id}${session.title ? ` — ${session.title}` : ""}\n` +
      `model ${session.model} · mode ${session.mode} · ${session.turnCount} turns · ${usage.total.input ?? 0} in / ${usage.total.output ?? 0} out tokens${cost}\n` +
      (session.cwd ? `cwd ${session.cwd}\n` : "") +
      (session.origin
        ? `forked from ${session.origin.sessionId} at ${session.origin.nodeId ?? "(start)"}\n`
        : "") +
      "\n" +
      `${renderNodes(nodes)}\n` +
      (pending
        ? `\n(the last turn was cut off before it committed; \`lash --resume ${session.id}\` offers to finish it, ` +
          `\`lash -p --resume ${session.id} --resume-pending\` finishes it, \`lash sessions abandon ${session.id}\` drops it)\n`
        : ""),
  );
  return ExitCode.ok;
}

const isHandoff = (n: GraphNode): boolean =>
  n.kind === "protocol" && (n.payload as { type?: unknown } | null)?.type === "handoff";

/** A compaction node in a transcript: what it replaced (those messages stay above it) and its summary. */
function compactionLine(n: GraphNode): string {
  const p = n.payload as CompactionPayload;
  const summary = p.summary.split("\n").slice(0, 8).join("\n    ");
  return (
    `(compaction: ${p.replaced} messages summarised in ${p.stages} stage${p.stages === 1 ? "" : "s"} by ${p.model}, ` +
    `${p.trigger === "manual" ? "asked for" : "at the context threshold"} · ~${p.tokensBefore} → ~${p.tokensAfter} tokens · ` +
    `the model sees the summary instead of the messages above · node ${n.id})\n    ${summary}`
  );
}

/** `lash sessions compare <a> <b>`: the common node of two active paths and what each has on its own. */
export async function sessionsCompare(ctx: LocalContext, args: SessionsArgs, out: Out): Promise<number> {
  const a = await findSession(ctx, args.id!);
  const b = await findSession(ctx, args.other!);
  if (!a.leafId || !b.leafId)
    throw new CliError(
      `lash sessions compare: ${!a.leafId ? a.id : b.id} has no nodes yet; compare sessions that have run a turn`,
      ExitCode.usage,
    );
  const cmp = await ctx.rt.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.compare(a.leafId!, b.leafId!)));
  if (args.json) {
    out.write(
      `${JSON.stringify({ a: a.id, b: b.id, ancestor: cmp.ancestor, onlyA: cmp.onlyA, onlyB: cmp.onlyB })}\n`,
    );
    return ExitCode.ok;
  }
  const side = (label: string, id: string, nodes: readonly GraphNode[]) =>
    `only in ${label} (${id}): ${nodes.length} node${nodes.length === 1 ? "" : "s"}\n${nodes.length ? `${renderNodes(nodes)}\n` : ""}`;
  out.write(
    `common node: ${cmp.ancestor ?? "(none: the histories share nothing)"}\n\n` +
      `${side("A", a.id, cmp.onlyA)}\n${side("B", b.id, cmp.onlyB)}`,
  );
  return ExitCode.ok;
}

/** Messages as `renderTranscript`, with a line for each abandoned turn where it was closed. */
function renderNodes(nodes: readonly GraphNode[]): string {
  const out: string[] = [];
  let run: Message[] = [];
  const flush = () => {
    if (run.length) out.push(renderTranscript(run));
    run = [];
  };
  for (const n of nodes) {
    if (n.kind === "message") run.push(n.payload as Message);
    else if (n.kind === "protocol" && (n.payload as { type?: unknown })?.type === "turnAbandoned") {
      flush();
      const p = n.payload as { input?: string; completedSteps?: number; reason?: string };
      out.push(
        `(turn abandoned${p.input ? `: ${quoted(p.input)}` : ""} — ${p.reason ?? "abandoned"}; ` +
          `${p.completedSteps ?? 0} completed step(s) dropped)`,
      );
    } else if (n.kind === "protocol" && (n.payload as { type?: unknown })?.type === "compaction") {
      flush();
      out.push(compactionLine(n));
    } else if (isHandoff(n)) {
      flush();
      const p = n.payload as HandoffPayload;
      out.push(
        p.to
          ? `(handoff: the session continues in ${p.to}, opened by the summary above — \`lash --resume ${p.to}\`)`
          : `(handoff: this session continues ${p.from}; its summary is the first message below · \`lash sessions show ${p.from}\`)`,
      );
    } else if (n.kind === "protocol" && (n.payload as { type?: unknown })?.type === "approval") {
      flush();
      const a = n.payload as ApprovalRecord;
      const scope = a.decision === "approve" && a.scope === "session" ? " for the session" : "";
      out.push(
        `(approval: ${a.tool} ${a.decision === "approve" ? "approved" : "denied"} by ${a.by}${scope}` +
          `${a.edited ? ", arguments edited" : ""}${a.layer ? ` · policy: ${a.layer}` : ""}${a.reason ? ` · ${oneLine(a.reason, 120)}` : ""})`,
      );
    }
  }
  flush();
  return out.filter((s) => s !== "").join("\n");
}

/** `lash sessions abandon <id>`: close the cut-off turn as abandoned so the session can be used again. */
export async function sessionsAbandon(ctx: LocalContext, args: SessionsArgs, out: Out): Promise<number> {
  const session = await findSession(ctx, args.id!);
  const r = await ctx.rt.runPromise(
    Effect.either(
      Effect.flatMap(LashRuntime, (rt) =>
        rt.abandonPending(session.id, { reason: "abandoned with lash sessions abandon" }),
      ),
    ),
  );
  if (r._tag === "Left") {
    const message =
      turnErrorMessage(r.left, "wait until that process is done, then run this again") ??
      errorMessage(r.left);
    throw new CliError(`lash: cannot abandon the turn: ${message}`);
  }
  if (!r.right) {
    out.write(`session ${session.id} has no cut-off turn; nothing to abandon\n`);
    return ExitCode.ok;
  }
  const a = r.right;
  out.write(
    `abandoned the cut-off turn ${a.turnId} of ${session.id}${a.input ? `: ${quoted(a.input)}` : ""}\n` +
      `(${a.completedSteps} completed step(s) dropped; the transcript shows it as abandoned; the session can be used again)\n`,
  );
  return ExitCode.ok;
}

export async function sessionsRm(ctx: LocalContext, args: SessionsArgs, out: Out): Promise<number> {
  const session = await findSession(ctx, args.id!);
  await ctx.rt.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.deleteSession(session.id)));
  out.write(`deleted ${session.id}${session.title ? ` (${session.title})` : ""}\n`);
  return ExitCode.ok;
}

/** `lash sessions gc`: remove the artifacts no node of any session refers to. */
export async function sessionsGc(ctx: LocalContext, args: SessionsArgs, out: Out): Promise<number> {
  const minAgeMs = (args.minAgeSeconds ?? ARTIFACT_GC_MIN_AGE_MS / 1000) * 1000;
  const result = await ctx.rt.runPromise(collectArtifacts({ minAgeMs }));
  if (args.json) out.write(`${JSON.stringify(result)}\n`);
  else
    out.write(
      `removed ${result.removed.length} unreferenced artifact(s), ${result.bytes} bytes` +
        `${result.removed.length > 0 ? `:\n${result.removed.map((id) => `  ${id}`).join("\n")}` : ""}\n`,
    );
  return ExitCode.ok;
}
