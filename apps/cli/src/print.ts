// `lash -p`: one turn, no TUI. text | json | stream-json output, exit codes, graceful SIGINT/SIGTERM/SIGHUP.
import { LashRuntime, type TurnActivity, type TurnResult } from "@lash/core";
import { RATE_LIMIT_WAIT } from "@lash/providers";
import type { TurnOutcome, Usage } from "@lash/sansio";
import { Effect, Exit, Fiber } from "effect";
import type { OutputFormat, RunFlags } from "./args.ts";
import type { LocalContext } from "./create-context.ts";
import { CliError, ExitCode, errorMessage, usageError } from "./errors.ts";
import {
  findSession,
  isCancelledResult,
  latestSession,
  pendingMessage,
  pendingText,
  pendingTurnOf,
  turnErrorMessage,
} from "./sessions.ts";

export const STREAM_VERSION = 1;
const MCP_SETTLE_MS = 10_000;

export interface PrintIO {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface SessionChoice {
  readonly id: string;
  readonly how: "new" | "resumed" | "continued" | "forked";
  readonly forkedFrom?: string;
}

/** The session a run uses: `--session`/`--resume`, `--continue`, `--fork`, or a new one. */
export async function chooseSession(
  ctx: LocalContext,
  flags: RunFlags,
  notice: (s: string) => void,
  /** Called instead of creating a session (`-p` without a prompt must not leave an empty session behind). */
  beforeCreate?: () => void,
) {
  const ref = flags.session ?? (flags.resume !== "" ? flags.resume : undefined);
  if (ref !== undefined) {
    const found = await findSession(ctx, ref);
    keepsModel(found, flags);
    ctx.adoptSession(found);
    return { id: found.id, how: "resumed" } as SessionChoice;
  }
  if (flags.continue) {
    const latest = await latestSession(ctx, ctx.settings.cwd);
    if (latest) {
      keepsModel(latest, flags);
      ctx.adoptSession(latest);
      return { id: latest.id, how: "continued" } as SessionChoice;
    }
    beforeCreate?.();
    notice(`no earlier session in ${ctx.settings.cwd}; starting a new one`);
  }
  if (flags.fork !== undefined) {
    const source = await findSession(ctx, flags.fork);
    keepsModel(source, flags);
    ctx.adoptSession(source); // its provider must work before a fork is made
    beforeCreate?.();
    const forked = await ctx.rt
      .runPromise(
        Effect.flatMap(LashRuntime, (rt) =>
          rt.fork(source.id, { ...(flags.at !== undefined ? { atNode: flags.at } : {}) }),
        ),
      )
      .catch((e: unknown) => {
        throw usageError(`cannot fork ${source.id}: ${errorMessage(e)}`);
      });
    ctx.adoptSession(source, forked.id);
    return { id: forked.id, how: "forked", forkedFrom: source.id } as SessionChoice;
  }
  beforeCreate?.();
  return { id: (await ctx.newSession()).id, how: "new" } as SessionChoice;
}

/** `--model` names the model of new sessions: asking an existing session for another one is an error, not ignored. */
function keepsModel(session: { readonly id: string; readonly model: string }, flags: RunFlags): void {
  if (flags.model === undefined || flags.model === session.model) return;
  throw usageError(
    `session ${session.id} runs on ${session.model}; --model ${flags.model} cannot change it (a session keeps the model it was created with). ` +
      `Drop --model to continue it on ${session.model}, or leave out --continue/--resume/--fork to start a new session on ${flags.model}.`,
  );
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  let out = "";
  for await (const chunk of stdin)
    out += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
  return out;
}

export function fullUsage(u: Usage) {
  return {
    input: u.input ?? 0,
    output: u.output ?? 0,
    reasoning: u.reasoning ?? 0,
    cacheRead: u.cacheRead ?? 0,
    cacheWrite: u.cacheWrite ?? 0,
  };
}

type Outcome = "finished" | "stopped" | "interrupted" | "failed";

function classify(outcome: TurnOutcome, interrupted: boolean): Outcome {
  if (outcome.type === "finished") return "finished";
  if (outcome.type === "stopped" && outcome.reason === "cancelled" && interrupted) return "interrupted";
  return "stopped";
}

const exitOf = (o: Outcome): number =>
  o === "finished" ? ExitCode.ok : o === "interrupted" ? ExitCode.interrupted : ExitCode.failed;

/** An RLM `finish(value)`: strings as they are, anything else as JSON. */
const valueText = (v: unknown): string =>
  v === undefined ? "" : typeof v === "string" ? v : (JSON.stringify(v, null, 2) ?? String(v));

function resultObject(r: TurnResult, outcome: Outcome, model: string, resumed?: TurnResult) {
  const stop = r.outcome.type === "stopped" ? r.outcome : undefined;
  return {
    type: "result",
    outcome,
    ...(stop ? { reason: stop.reason, ...(stop.message ? { message: stop.message } : {}) } : {}),
    text: r.text || stop?.text || valueText(r.finalValue),
    ...(r.finalValue !== undefined ? { finalValue: r.finalValue } : {}),
    sessionId: r.sessionId,
    turnId: r.turnId,
    model,
    usage: fullUsage(r.usage),
    costUsd: r.costUsd ?? null,
    durationMs: r.durationMs,
    toolCalls: r.toolCalls,
    ...(resumed
      ? {
          resumedTurn: {
            turnId: resumed.turnId,
            outcome: resumed.outcome.type,
            toolCalls: resumed.toolCalls,
          },
        }
      : {}),
  };
}

/** One MCP server as the print outputs show it. */
export interface McpLine {
  readonly name: string;
  readonly state: string;
  readonly reason?: string;
  readonly toolCount: number;
}

/** The configured MCP servers' status (empty without servers). */
function mcpStatus(ctx: LocalContext): McpLine[] {
  const servers = (ctx.pluginStatus().mcp as { servers?: readonly McpLine[] } | undefined)?.servers ?? [];
  return servers.map((s) => ({
    name: s.name,
    state: s.state,
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    toolCount: s.toolCount,
  }));
}

function mcpNotice(s: McpLine): string {
  const why = s.reason ? `: ${s.reason}` : "";
  if (s.state === "starting")
    return `MCP server "${s.name}" is still starting after ${MCP_SETTLE_MS / 1000} s (no answer to initialize yet); its tools are not available to this turn`;
  const what = s.state === "failed" ? "failed" : `is ${s.state}`;
  return `MCP server "${s.name}" ${what}${why}; its tools are not available to this turn`;
}

/** Progress lines on stderr for `--output-format text`. */
function progress(stderr: NodeJS.WritableStream, printedErrors: Set<string>) {
  return (e: TurnActivity) => {
    switch (e.type) {
      case "turnStarted":
        if (e.resumed) stderr.write(`[resume] finishing the turn that was cut off (${e.turnId})\n`);
        break;
      case "toolCompleted": {
        const text = e.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        const state = isCancelledResult(text) ? "cancelled" : e.isError ? "error" : "ok";
        const replay = e.replayed ? " · from journal" : "";
        stderr.write(`[tool] ${e.name} · ${state} · ${Math.round(e.durationMs)}ms${replay}\n`);
        break;
      }
      case "retry": {
        if (e.reason === RATE_LIMIT_WAIT) {
          stderr.write(
            `[wait] waiting for rate limit (${(e.delayMs / 1000).toFixed(1)} s) · ${e.error.message}\n`,
          );
          break;
        }
        // One line per wait: attempt k of n, why, how long.
        const of = e.maxAttempts !== undefined ? ` of ${e.maxAttempts}` : "";
        const why = e.reason ?? e.error.kind;
        stderr.write(
          `[retry] attempt ${e.attempt}${of} in ${(e.delayMs / 1000).toFixed(1)}s · ${why} · ${e.error.message}\n`,
        );
        break;
      }
      case "approvalResolved":
        for (const d of e.decisions)
          stderr.write(
            `[approval] ${d.tool ?? d.callId} · ${d.decision === "approve" ? "approved" : "denied"} by ${e.by}${d.reason ? ` · ${d.reason}` : ""}${e.replayed ? " · from journal" : ""}\n`,
          );
        break;
      case "error":
        // the final "[lash] stopped" line does not repeat a message printed here
        printedErrors.add(e.message);
        stderr.write(`error: ${e.message}\n`);
        break;
    }
  };
}

export async function runPrint(ctx: LocalContext, flags: RunFlags, io: PrintIO): Promise<number> {
  const format: OutputFormat = flags.outputFormat;
  const jsonl = (o: object) => io.stdout.write(`${JSON.stringify({ v: STREAM_VERSION, ...o })}\n`);
  const notice = (s: string) => {
    if (format === "text") io.stderr.write(`[lash] ${s}\n`);
    else if (format === "stream-json") jsonl({ type: "notice", message: s });
  };

  const printedErrors = new Set<string>();
  let prompt = flags.prompt;
  if (prompt === undefined && !io.stdin.isTTY) prompt = await readStdin(io.stdin);
  if (prompt !== undefined) prompt = prompt.trim() === "" ? undefined : prompt.replace(/\s+$/, "");

  // Signals: the first cancels the turn (what finished is committed, running commands are
  // killed), a second one exits at once. SIGHUP (the terminal closed) is handled the same way.
  let interrupted = false;
  let cancel: (() => void) | undefined;
  /** Run `effect` as a fiber that a signal cancels (at once when one already came); its exit. */
  const runCancellable = async <A, E>(effect: Effect.Effect<A, E, LashRuntime>) => {
    const fiber = ctx.rt.runFork(effect);
    cancel = () => ctx.rt.runFork(Fiber.interrupt(fiber));
    if (interrupted) cancel();
    const exit = await ctx.rt.runPromise(Fiber.await(fiber));
    cancel = undefined;
    return exit;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(ExitCode.interrupted);
    interrupted = true;
    if (signal === "SIGHUP") {
      // the terminal may be gone: a failed write must not stop the cancel and the commit
      for (const stream of [io.stdout, io.stderr]) stream.on("error", () => undefined);
    } else if (format === "text")
      io.stderr.write(`\n[lash] ${signal}: cancelling the turn (again to quit now)\n`);
    cancel?.();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);

  /** The session whose lease this run holds (taken before its cut-off turn is looked at). */
  let leased: string | undefined;
  try {
    const noPrompt = () => {
      if (prompt === undefined)
        throw usageError('no prompt: pass it as an argument (lash -p "…") or on stdin');
    };
    const choice = await chooseSession(ctx, flags, notice, noPrompt);
    const session = await ctx.rt.runPromise(Effect.flatMap(LashRuntime, (rt) => rt.getSession(choice.id)));
    // one writer per session: hold its lease for the whole run (fail, or --wait, while another process writes)
    if (ctx.persisted) {
      const exit = await runCancellable(
        Effect.flatMap(LashRuntime, (rt) =>
          rt.acquireLease(choice.id, {
            wait: flags.wait === true,
            onLeaseWait: (h) =>
              notice(
                `session ${choice.id} is in use by another lash process (pid ${h.pid} on ${h.host}); waiting for it (--wait)`,
              ),
          }),
        ),
      );
      if (Exit.isFailure(exit)) {
        if (interrupted) return ExitCode.interrupted;
        throw new CliError(
          `lash: ${turnErrorMessage(exit.cause, `lash -p --resume ${choice.id} --wait …`) ?? errorMessage(exit.cause)}`,
        );
      }
      leased = choice.id;
    }
    // a cut-off turn runs again only when asked (--resume-pending): it may be an old instruction
    const pendingTurn = choice.how === "new" ? undefined : await pendingTurnOf(ctx, choice.id);
    if (pendingTurn && !flags.resumePending)
      throw new CliError(
        `lash: ${pendingMessage(
          choice.id,
          pendingTurn,
          `lash -p --resume ${choice.id} --resume-pending${prompt !== undefined ? ' "…"' : ""}`,
        )}\nNothing was run.`,
      );
    const pending = pendingTurn !== undefined;
    if (prompt === undefined && !pending)
      throw usageError(
        choice.how === "new"
          ? 'no prompt: pass it as an argument (lash -p "…") or on stdin'
          : `no prompt, and session ${choice.id} has no unfinished turn to resume`,
      );
    if (format === "stream-json")
      jsonl({
        type: "session",
        sessionId: choice.id,
        how: choice.how,
        ...(choice.forkedFrom ? { forkedFrom: choice.forkedFrom } : {}),
        model: session.model,
        mode: session.mode,
        cwd: ctx.settings.cwd,
        persisted: ctx.persisted,
        pendingTurn: pending,
      });
    else if (format === "text" && choice.how !== "new")
      notice(`${choice.how} session ${choice.id}${choice.forkedFrom ? ` (from ${choice.forkedFrom})` : ""}`);

    const show =
      format === "stream-json"
        ? (e: TurnActivity) => jsonl(e)
        : format === "text"
          ? progress(io.stderr, printedErrors)
          : () => undefined;
    const onEvent = (e: TurnActivity) => {
      ctx.traceEvent(e);
      show(e);
    };
    const turnOptions = {
      onEvent,
      resumePending: false,
      ...(ctx.settings.maxTurns !== undefined ? { maxTurns: ctx.settings.maxTurns } : {}),
    };

    // MCP servers start in the background; a one-shot run gives them a bounded moment to join
    await ctx.settleMcp(MCP_SETTLE_MS);
    // ... and says which did not (their tools are missing from this turn): a line, an event, a field
    const mcp = mcpStatus(ctx);
    if (mcp.length) {
      if (format === "stream-json") jsonl({ type: "mcpStatus", servers: mcp });
      for (const s of mcp) if (s.state !== "ready" && s.state !== "disabled") notice(mcpNotice(s));
    }

    // 1. finish a turn that was cut off, from its journal
    let resumed: TurnResult | undefined;
    if (pending) {
      const text = pendingText(pendingTurn!);
      notice(
        `finishing the turn of ${choice.id} that was cut off${text ? ` ("${text.replace(/\s+/g, " ").slice(0, 100)}")` : ""} (--resume-pending; completed steps come from the journal)`,
      );
      const exit = await runCancellable(
        Effect.flatMap(LashRuntime, (rt) => rt.resumePending(choice.id, turnOptions)),
      );
      if (Exit.isFailure(exit)) {
        if (interrupted) return ExitCode.interrupted;
        throw new CliError(
          `lash: resuming the cut-off turn failed: ${turnErrorMessage(exit.cause) ?? errorMessage(exit.cause)}`,
        );
      }
      resumed = exit.value;
      if (prompt === undefined || interrupted) {
        if (!resumed) throw new CliError("lash: the cut-off turn vanished before it could be resumed");
        return report(resumed, undefined);
      }
    }
    if (interrupted) return ExitCode.interrupted;

    // 2. the new turn
    const result = await ctx.rt.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const rt = yield* LashRuntime;
          const handle = yield* rt.startTurn(choice.id, { text: prompt }, turnOptions);
          cancel = () => ctx.rt.runFork(handle.cancel);
          if (interrupted) cancel();
          return yield* Effect.either(handle.result);
        }),
      ),
    );
    cancel = undefined;
    if (result._tag === "Left") {
      const message = turnErrorMessage(result.left) ?? result.left.message;
      if (format === "text")
        io.stderr.write(
          printedErrors.has(message) ? "lash: the turn failed\n" : `lash: the turn failed: ${message}\n`,
        );
      else
        jsonl({
          type: "result",
          outcome: "failed",
          error: message,
          sessionId: choice.id,
          model: session.model,
          ...(mcpStatus(ctx).length ? { mcp: mcpStatus(ctx) } : {}),
        });
      return ExitCode.failed;
    }
    return report(result.right, resumed);

    function report(r: TurnResult, before: TurnResult | undefined): number {
      const outcome = classify(r.outcome, interrupted);
      const servers = mcpStatus(ctx);
      const obj = {
        ...resultObject(r, outcome, session.model, before),
        ...(r.handoff ? { handoff: r.handoff } : {}),
        ...(servers.length ? { mcp: servers } : {}),
      };
      if (r.handoff && format === "text")
        io.stderr.write(
          `[lash] the context was handed off: the session continues as ${r.handoff.to} (lash --continue picks it up)\n`,
        );
      if (format === "json") io.stdout.write(`${JSON.stringify(obj)}\n`);
      else if (format === "stream-json") jsonl(obj);
      else {
        if (obj.text !== "") io.stdout.write(obj.text.endsWith("\n") ? obj.text : `${obj.text}\n`);
        if (outcome === "interrupted")
          io.stderr.write(`[lash] interrupted; what finished is saved: lash --resume ${r.sessionId}\n`);
        else if (outcome === "stopped")
          io.stderr.write(
            `[lash] stopped (${obj.reason ?? "unknown"})${obj.message && !printedErrors.has(obj.message) ? `: ${obj.message}` : ""}\n`,
          );
        if (ctx.persisted && choice.how === "new" && outcome !== "finished")
          io.stderr.write(`[lash] session ${r.sessionId}\n`);
      }
      return exitOf(outcome);
    }
  } finally {
    if (leased !== undefined) {
      const id = leased;
      await ctx.rt
        .runPromise(Effect.flatMap(LashRuntime, (rt) => rt.releaseLease(id)))
        .catch(() => undefined);
    }
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("SIGHUP", onSignal);
  }
}
