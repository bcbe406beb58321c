// Session lookup and the `lash sessions list|show|rm` commands.
import { LashRuntime, type SessionRecord, SessionStore } from "@lash/core";
import type { Message } from "@lash/sansio";
import { Effect } from "effect";
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
  return list[0];
}

/** True when the session has a turn that started and never committed (crash, kill). */
export async function hasPendingTurn(ctx: LocalContext, sessionId: string): Promise<boolean> {
  const pending = await ctx.rt.runPromise(
    Effect.flatMap(SessionStore, (store) =>
      Effect.orElseSucceed(store.pendingTurn(sessionId), () => undefined),
    ),
  );
  return pending !== undefined;
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
  const [messages, usage] = await ctx.rt.runPromise(
    Effect.flatMap(LashRuntime, (rt) => Effect.all([rt.readView(session.id), rt.usage(session.id)])),
  );
  const pending = await hasPendingTurn(ctx, session.id);
  if (args.json) {
    out.write(
      `${JSON.stringify({ session: summary(session), pendingTurn: pending, usage: { total: usage.total, costUsd: usage.costUsd ?? null }, messages })}\n`,
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
      `${renderTranscript(messages)}\n` +
      (pending
        ? `\n(the last turn was cut off before it committed; \`lash --resume ${session.id}\` finishes it)\n`
        : ""),
  );
  return ExitCode.ok;
}

export async function sessionsRm(ctx: LocalContext, args: SessionsArgs, out: Out): Promise<number> {
  const session = await findSession(ctx, args.id!);
  await ctx.rt.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.deleteSession(session.id)));
  out.write(`deleted ${session.id}${session.title ? ` (${session.title})` : ""}\n`);
  return ExitCode.ok;
}
