// `lash` on a terminal: pick/resume/fork the session, finish a cut-off turn, then hand over to the TUI.
import { createInterface } from "node:readline/promises";
import { LashRuntime, type SessionRecord } from "@lash/core";
import { Effect, Exit, Fiber } from "effect";
import type { RunFlags } from "./args.ts";
import type { RunTui } from "./context.ts";
import type { LocalContext } from "./create-context.ts";
import { CliError, ExitCode, errorMessage } from "./errors.ts";
import type { MainIO } from "./io.ts";
import { chooseSession } from "./print.ts";
import { pendingText, pendingTurnOf, turnErrorMessage } from "./sessions.ts";

/** The TUI is built concurrently in `./tui/`; until it exists `lash` says so instead of crashing. */
export async function loadTui(): Promise<RunTui | undefined> {
  try {
    // A literal specifier, so that the bundle (scripts/bundle.ts) includes the TUI as a lazy chunk.
    const mod = (await import("./tui/index.ts")) as { runTui?: RunTui };
    return typeof mod.runTui === "function" ? mod.runTui : undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" && /tui[\\/]index\.ts/.test(errorMessage(e))) return undefined;
    throw e;
  }
}

/** `--resume` without an id: a numbered list of this directory's recent sessions. */
async function pickSession(ctx: LocalContext, io: MainIO): Promise<string | undefined> {
  const list: readonly SessionRecord[] = await ctx.rt.runPromise(
    Effect.flatMap(LashRuntime, (rt) => rt.listSessions({ cwd: ctx.settings.cwd, limit: 20 })),
  );
  if (list.length === 0) {
    io.stderr.write(`No sessions in ${ctx.settings.cwd} yet; starting a new one.\n`);
    return undefined;
  }
  io.stdout.write("Resume which session?\n");
  list.forEach((s, i) => {
    const when = new Date(s.updatedAt).toISOString().replace("T", " ").slice(0, 16);
    io.stdout.write(
      `  ${String(i + 1).padStart(2)}. ${when}  ${s.turnCount} turn${s.turnCount === 1 ? "" : "s"}  ${s.title ?? s.id}\n`,
    );
  });
  const rl = createInterface({ input: io.stdin, output: io.stdout });
  try {
    const answer = (await rl.question("Number (Enter for the newest, q to start fresh): ")).trim();
    if (answer === "q") return undefined;
    const n = answer === "" ? 1 : Number(answer);
    const chosen = list[n - 1];
    if (!chosen) throw new CliError(`no session number ${answer}`, ExitCode.usage);
    return chosen.id;
  } finally {
    rl.close();
  }
}

export async function runInteractive(ctx: LocalContext, flags: RunFlags, io: MainIO): Promise<number> {
  const runTui = await loadTui();
  if (!runTui) {
    io.stderr.write(
      "lash: the interactive TUI is not part of this build yet (apps/cli/src/tui).\n" +
        'Use one-shot mode meanwhile: lash -p "your prompt"  (add --continue to keep going in the same session)\n',
    );
    return ExitCode.usage;
  }
  let sessionId: string | undefined;
  // `--resume` without an id: the TUI's own session picker (a numbered prompt when not on a terminal)
  const pick = flags.resume === "" && io.stdout.isTTY === true;
  if (flags.resume === "" && !pick) sessionId = await pickSession(ctx, io);
  else if (flags.resume === "") sessionId = undefined;
  else if (
    flags.session !== undefined ||
    flags.resume !== undefined ||
    flags.continue ||
    flags.fork !== undefined
  ) {
    const choice = await chooseSession(ctx, flags, (s) => io.stderr.write(`[lash] ${s}\n`));
    sessionId = choice.id;
    if (choice.how === "forked") io.stderr.write(`[lash] forked ${choice.forkedFrom} → ${choice.id}\n`);
  }
  if (sessionId !== undefined) ctx.traceSession(sessionId);
  const pending = sessionId !== undefined ? await pendingTurnOf(ctx, sessionId) : undefined;
  let finishInTui = false;
  if (sessionId !== undefined && pending) {
    // a cut-off turn is never run again without asking: it may be an old instruction
    const text = pendingText(pending);
    const when = new Date(pending.startedAt).toISOString().replace("T", " ").slice(0, 19);
    io.stderr.write(
      `[lash] session ${sessionId} has a turn that was cut off before it finished (started ${when} UTC)` +
        `${text ? `:\n  "${text.replace(/\s+/g, " ").slice(0, 200)}"` : ""}\n`,
    );
    const rl = createInterface({ input: io.stdin, output: io.stderr });
    let answer: string;
    try {
      answer = (
        await rl.question("Finish it now (f, from its journal), abandon it (a), or decide later (Enter)? ")
      )
        .trim()
        .toLowerCase();
    } finally {
      rl.close();
    }
    if ((answer === "f" || answer === "finish") && ctx.approvalMode === "interactive") {
      // the TUI finishes it: an approval the turn still needs is asked in its prompt
      finishInTui = true;
    } else if (answer === "f" || answer === "finish") {
      io.stderr.write(`[lash] finishing the turn of ${sessionId} that was cut off (from its journal)…\n`);
      const fiber = ctx.rt.runFork(Effect.flatMap(LashRuntime, (rt) => rt.resumePending(sessionId)));
      const stop = () => ctx.rt.runFork(Fiber.interrupt(fiber));
      const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
      for (const s of signals) process.once(s, stop);
      const exit = await ctx.rt.runPromise(Fiber.await(fiber));
      for (const s of signals) process.off(s, stop);
      if (Exit.isFailure(exit))
        io.stderr.write(
          `[lash] could not finish it: ${turnErrorMessage(exit.cause, "try again when it is done") ?? errorMessage(exit.cause)}\n`,
        );
      else if (exit.value) io.stderr.write(`[lash] done (${exit.value.outcome.type}).\n`);
    } else if (answer === "a" || answer === "abandon") {
      const r = await ctx.rt.runPromise(
        Effect.either(
          Effect.flatMap(LashRuntime, (rt) =>
            rt.abandonPending(sessionId, { reason: "abandoned at resume" }),
          ),
        ),
      );
      io.stderr.write(
        r._tag === "Left"
          ? `[lash] could not abandon it: ${turnErrorMessage(r.left) ?? errorMessage(r.left)}\n`
          : "[lash] abandoned; the transcript shows it as abandoned.\n",
      );
    } else io.stderr.write("[lash] left as it is: /finish or /abandon in the session decide later.\n");
  }
  return runTui({
    ctx,
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(flags.prompt !== undefined ? { initialPrompt: flags.prompt } : {}),
    ...(pick ? { pick: true } : {}),
    ...(finishInTui ? { finishPending: true } : {}),
    stdin: io.stdin,
    stdout: io.stdout,
  });
}
