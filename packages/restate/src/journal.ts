// lash's effect journal on Restate: each turn effect is a `ctx.run` named by its replay key.
import { type JournalBackend, type JournalIds, JournalMismatch, StoreError } from "@lash/core";
import { type ObjectContext, TerminalError } from "@restatedev/restate-sdk";
import { Cause, Effect, Exit } from "effect";

/** What one `ctx.run` records: the envelope hash of the step and its outcome (JSON). */
interface StepRecord {
  readonly hash: string;
  readonly outcome?: unknown;
}

const mismatch = (key: string) =>
  new JournalMismatch({
    key,
    message:
      `journal mismatch at ${key}: the retried turn asked for something different from what Restate recorded ` +
      "(the code or the session's configuration changed between attempts). The invocation ends with a terminal error; " +
      "start a new turn to continue.",
  });

/**
 * A `JournalBackend` over the `ctx` of the Restate invocation running each turn. The handler
 * registers its context for its session and turn (`bind`) before it runs the turn and removes it after.
 */
export class RestateJournal implements JournalBackend {
  private readonly contexts = new Map<string, ObjectContext>();

  /** Runs `body` with `ctx` as the journal of turn `turnId`. */
  async bind<A>(ids: JournalIds, ctx: ObjectContext, body: () => Promise<A>): Promise<A> {
    const key = `${ids.sessionId}\u0000${ids.turnId}`;
    this.contexts.set(key, ctx);
    try {
      return await body();
    } finally {
      this.contexts.delete(key);
    }
  }

  private ctxOf(ids: JournalIds): Effect.Effect<ObjectContext, StoreError> {
    const ctx = this.contexts.get(`${ids.sessionId}\u0000${ids.turnId}`);
    return ctx
      ? Effect.succeed(ctx)
      : Effect.fail(
          new StoreError({
            message:
              `turn ${ids.turnId} of session ${ids.sessionId} is not running as a Restate invocation: ` +
              "on the Restate engine every turn is submitted through the ingress (the worker's `turn` handler).",
          }),
        );
  }

  /**
   * `ctx.run(name, …)`: `run` inside the action, its failure recorded as a terminal failure of
   * the step (no endless retry) and given back as the step's error on this attempt.
   */
  private runStep<E>(
    ctx: ObjectContext,
    name: string,
    hash: string,
    run: Effect.Effect<unknown, E>,
    before?: () => unknown | undefined,
  ): Effect.Effect<
    { readonly outcome: unknown; readonly replayed: boolean },
    E | JournalMismatch | StoreError
  > {
    return Effect.flatMap(
      Effect.promise(async () => {
        let ran = false;
        let failed: Cause.Cause<E> | undefined;
        try {
          const record = await ctx.run<StepRecord>(name, async () => {
            ran = true;
            const early = before?.();
            if (early !== undefined) return { hash, outcome: early };
            const exit = await Effect.runPromiseExit(run);
            if (Exit.isSuccess(exit)) return { hash, outcome: exit.value };
            failed = exit.cause;
            throw new TerminalError(`step ${name} failed: ${Cause.pretty(exit.cause)}`);
          });
          return { ok: true as const, record, ran };
        } catch (error) {
          return { ok: false as const, error, failed, ran };
        }
      }),
      (
        r,
      ): Effect.Effect<
        { readonly outcome: unknown; readonly replayed: boolean },
        E | JournalMismatch | StoreError
      > => {
        if (r.ok) {
          if (r.record.hash !== hash) return Effect.fail(mismatch(name));
          return Effect.succeed({ outcome: r.record.outcome, replayed: !r.ran });
        }
        if (r.failed) return Effect.failCause(r.failed);
        return Effect.fail(
          new StoreError({
            message: `step ${name} failed in an earlier attempt of the turn: ${String(r.error)}`,
            cause: r.error,
          }),
        );
      },
    );
  }

  readonly step: JournalBackend["step"] = (ids, key, hash, run, options) =>
    Effect.flatMap(this.ctxOf(ids), (ctx) =>
      options?.composite ? this.runComposite(ctx, key, hash, run) : this.runStep(ctx, key, hash, run),
    );

  /**
   * A step that runs steps of its own (a tool batch): a `ctx.run` cannot contain another, so it
   * runs here, its inner steps replaying from Restate's journal, and its outcome is recorded after.
   */
  private runComposite<E>(
    ctx: ObjectContext,
    name: string,
    hash: string,
    run: Effect.Effect<unknown, E>,
  ): Effect.Effect<
    { readonly outcome: unknown; readonly replayed: boolean },
    E | JournalMismatch | StoreError
  > {
    return Effect.flatMap(run, (outcome) => this.runStep(ctx, name, hash, Effect.succeed(outcome)));
  }

  readonly attempt: JournalBackend["attempt"] = (ids, key, hash, run, cutOff) =>
    Effect.flatMap(this.ctxOf(ids), (ctx) =>
      Effect.gen(this, function* () {
        // the "started" step: recorded before the tool runs; replayed, it says an earlier attempt began it
        const started = yield* this.runStep(ctx, `${key}:started`, hash, Effect.succeed(null));
        // the attempt's own step: its action only runs when no attempt completed it. After a
        // replayed "started", that means the tool was cut off: a non-idempotent one is not run again.
        return yield* this.runStep(ctx, key, hash, run, () => (started.replayed ? cutOff : undefined));
      }),
    );
}
