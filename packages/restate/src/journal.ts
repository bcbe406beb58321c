// lash's effect journal on Restate: each turn effect is a `ctx.run` named by its replay key.
import { type JournalBackend, type JournalIds, JournalMismatch, StoreError } from "@lash/core";
import { type ObjectContext, TerminalError } from "@restatedev/restate-sdk";
import { Cause, Effect, Exit } from "effect";

/** What one `ctx.run` records: the envelope hash of the step and its outcome (JSON). */
interface StepRecord {
  readonly hash: string;
  readonly outcome?: unknown;
  /** A cut-off attempt of an idempotent tool: it runs again, recorded under the next name. */
  readonly again?: true;
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
  /** Per invocation: the end of the queue of its `ctx.run`s (see `serial`). */
  private readonly queues = new WeakMap<ObjectContext, Promise<void>>();

  /** `observe`: told of each step as it completes, by name, and whether it came from Restate's journal. */
  private readonly observe: ((name: string, replayed: boolean) => void) | undefined;
  constructor(observe?: (name: string, replayed: boolean) => void) {
    this.observe = observe;
  }

  /**
   * Runs `f` (one `ctx.run`, created and awaited) after the invocation's earlier ones have settled.
   * The SDK lets one await of its promises wait for progress at a time ("awaitNext already
   * pending" otherwise, restatedev/sdk-typescript#743, #790), while an RLM cell's processes and
   * its own statements reach the journal concurrently. Steps keep the order in which they were
   * asked for; a tool attempt's tool runs outside its `ctx.run` (see `attempt`), so nothing that
   * waits on a sibling holds the queue.
   */
  private serial<A>(ctx: ObjectContext, f: () => Promise<A>): Promise<A> {
    const before = this.queues.get(ctx) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.queues.set(
      ctx,
      before.then(() => mine),
    );
    return before.then(async () => {
      try {
        return await f();
      } finally {
        release();
      }
    });
  }

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
    before?: () => StepRecord | undefined,
  ): Effect.Effect<
    { readonly outcome: unknown; readonly replayed: boolean; readonly again?: true },
    E | JournalMismatch | StoreError
  > {
    return Effect.flatMap(
      Effect.promise(async () => {
        let ran = false;
        let failed: Cause.Cause<E> | undefined;
        try {
          const record = await this.serial(ctx, () =>
            ctx.run<StepRecord>(name, async () => {
              ran = true;
              const early = before?.();
              if (early !== undefined) return early;
              const exit = await Effect.runPromiseExit(run);
              if (Exit.isSuccess(exit)) return { hash, outcome: exit.value };
              failed = exit.cause;
              throw new TerminalError(`step ${name} failed: ${Cause.pretty(exit.cause)}`);
            }),
          );
          return { ok: true as const, record, ran };
        } catch (error) {
          return { ok: false as const, error, failed, ran };
        }
      }),
      (
        r,
      ): Effect.Effect<
        { readonly outcome: unknown; readonly replayed: boolean; readonly again?: true },
        E | JournalMismatch | StoreError
      > => {
        if (r.ok) {
          if (r.record.hash !== hash) return Effect.fail(mismatch(name));
          this.observe?.(name, !r.ran);
          return Effect.succeed({
            outcome: r.record.outcome,
            replayed: !r.ran,
            ...(r.record.again ? { again: true as const } : {}),
          });
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
   * A step that runs steps of its own (a tool batch, an RLM cell): a `ctx.run` cannot contain
   * another, so it runs here, its inner steps replaying from Restate's journal, and its outcome is
   * recorded after. Its body always runs (on a retry too), so its outcome is never `replayed`: a
   * replayed cell would have the executor apply its result and restart its processes a second time.
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
    return Effect.flatMap(run, (outcome) =>
      Effect.map(this.runStep(ctx, name, hash, Effect.succeed(outcome)), (r) => ({ ...r, replayed: false })),
    );
  }

  readonly attempt: JournalBackend["attempt"] = (ids, key, hash, run, cutOff) =>
    Effect.flatMap(this.ctxOf(ids), (ctx) => this.attemptOn(ctx, key, hash, run, cutOff, 0));

  /**
   * One tool attempt under `name` (`key`, then `key:again<n>` for the reruns of a cut-off idempotent
   * tool). The "started" step is recorded before the tool runs. The tool runs outside any `ctx.run`
   * (it may take long, or wait on a sibling call: it must not hold the invocation's queue) and its
   * outcome is recorded after. On a retry, a replayed "started" means an earlier attempt began it:
   * its outcome step gives the recorded outcome, or — cut off — records `cutOff` (a non-idempotent
   * tool) or that the tool runs again under the next name (an idempotent one).
   */
  private attemptOn<E>(
    ctx: ObjectContext,
    key: string,
    hash: string,
    run: Effect.Effect<unknown, E>,
    cutOff: unknown | undefined,
    n: number,
  ): Effect.Effect<
    { readonly outcome: unknown; readonly replayed: boolean },
    E | JournalMismatch | StoreError
  > {
    const name = n === 0 ? key : `${key}:again${n}`;
    return Effect.gen(this, function* () {
      const started = yield* this.runStep(ctx, `${name}:started`, hash, Effect.succeed(null));
      if (!started.replayed) {
        const exit = yield* Effect.exit(run);
        const r = yield* this.runStep(ctx, name, hash, exit);
        return { outcome: r.outcome, replayed: false };
      }
      const r = yield* this.runStep(ctx, name, hash, Effect.succeed(null), () =>
        cutOff !== undefined ? { hash, outcome: cutOff } : { hash, again: true },
      );
      if (r.again) return yield* this.attemptOn(ctx, key, hash, run, cutOff, n + 1);
      return { outcome: r.outcome, replayed: r.replayed };
    });
  }
}
