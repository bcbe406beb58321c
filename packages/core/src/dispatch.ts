import type { CompletedToolCall, PendingToolCall } from "@lash/sansio";
import { abortWait, afterOn, isLiveClock } from "@lash/sansio";
import type * as Clock from "effect/Clock";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import * as FiberId from "effect/FiberId";
import * as Runtime from "effect/Runtime";
import type { TurnActivityBody } from "./activity.ts";
import { type DispatchGovernance, type Governed, govern, type Runnable } from "./approval.ts";
import type { ApprovalError } from "./governance.ts";
import { Journal, type JournalMismatch } from "./journal.ts";
import { validateJson } from "./jsonschema.ts";
import type { HookContext, PluginHooks, ProjectedResult, ToolCallInfo } from "./plugin.ts";
import type { Redactor } from "./secrets.ts";
import type { StoreError } from "./store.ts";
import {
  asToolFailure,
  isIdempotent,
  promiseRunOf,
  type ToolDefinition,
  ToolFailure,
  type ToolHost,
  type ToolOutput,
  type ToolUsage,
} from "./tool.ts";

export interface DispatchOptions {
  /** Calls of one batch running at once (default 8). */
  readonly concurrency?: number;
  /** Per-call timeout when the tool sets none (default 120 s). */
  readonly defaultTimeoutMs?: number;
  /** After a cancel, running calls get this long to finish before they are interrupted (default 100 ms). */
  readonly cancelGraceMs?: number;
  /**
   * Replaces known secret values in every tool result, failure message and progress
   * update before it is journaled, projected, emitted or committed (see `secrets.ts`).
   */
  readonly redactor?: Redactor;
}

export interface NamedHooks {
  readonly plugin: string;
  readonly hooks: PluginHooks;
}

export interface DispatchContext {
  readonly hook: HookContext;
  readonly catalog: ReadonlyMap<string, ToolDefinition>;
  readonly hooks: readonly NamedHooks[];
  readonly project: (call: ToolCallInfo, output: ToolOutput) => Effect.Effect<ProjectedResult, unknown>;
  readonly journal: Journal;
  /** Replay key of the batch effect; attempts are keyed under it. */
  readonly batchKey: string;
  readonly emit: (body: TurnActivityBody) => Effect.Effect<void>;
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal;
  readonly options?: DispatchOptions;
  /** Lent to tools that drive the runtime (subagents). */
  readonly host?: ToolHost;
  /** The approval step (absent: every call runs, nothing is asked — no work at all). */
  readonly governance?: DispatchGovernance;
  /** `emit` without an effect (the turn's synchronous publisher): lets a lone call skip the effect plumbing. */
  readonly emitNow?: (body: TurnActivityBody) => void;
  /** `project` returns the output's content as it is (no projector): nothing to run after a call. */
  readonly projectsAsIs?: boolean;
}

export interface BatchResult {
  readonly results: readonly CompletedToolCall[];
  readonly cancelled: boolean;
  /** Model usage the calls reported (subagents, sub-queries), for the ledger. */
  readonly usage: readonly ToolUsage[];
}

/** A prepared call: either ready to run, or already settled (unknown tool, bad arguments, hook result). */
type Prepared =
  | {
      readonly kind: "run";
      readonly index: number;
      readonly call: PendingToolCall;
      readonly tool: ToolDefinition;
      readonly args: unknown;
    }
  | {
      readonly kind: "settled";
      readonly index: number;
      readonly call: PendingToolCall;
      readonly output: ToolOutput;
      readonly tool?: ToolDefinition;
      /** A `beforeToolCall` hook gave the result (dry-run's stub), for these arguments: the policy may still deny it. */
      readonly hookArgs?: { readonly args: unknown };
    }
  /** The turn was cancelled while the call waited for an approval: it never starts. */
  | {
      readonly kind: "held";
      readonly index: number;
      readonly call: PendingToolCall;
      readonly tool: ToolDefinition;
    };

type AttemptRecord =
  | { readonly ok: true; readonly output: ToolOutput }
  | {
      readonly ok: false;
      readonly failure: {
        readonly class: ToolFailure["class"];
        readonly message: string;
        readonly retry?: "never" | "safe";
      };
    };

const errorOutput = (text: string): ToolOutput => ({ content: [{ type: "text", text }], isError: true });

/** The output with every known secret value replaced (usage and control are left alone). */
function redactOutput(redactor: Redactor | undefined, output: ToolOutput): ToolOutput {
  if (!redactor || redactor.size === 0) return output;
  return {
    ...output,
    content: redactor.deep(output.content),
    ...(output.value !== undefined ? { value: redactor.deep(output.value) } : {}),
    ...(output.details !== undefined ? { details: redactor.deep(output.details) } : {}),
  };
}

const redactText = (redactor: Redactor | undefined, text: string): string =>
  redactor ? redactor.text(text) : text;

function describeError(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "object" && e !== null && "message" in e)
    return String((e as { message: unknown }).message);
  return String(e);
}

/** The call's tool, or the settled result for bad arguments / an unknown tool. */
function lookup(ctx: DispatchContext, call: PendingToolCall, index: number): Prepared | ToolDefinition {
  if (call.argsError !== undefined) {
    return {
      kind: "settled",
      index,
      call,
      output: errorOutput(`Invalid arguments for ${call.name}: ${call.argsError}.`),
    };
  }
  const tool = ctx.catalog.get(call.name);
  if (tool) return tool;
  const names = [...ctx.catalog.keys()].sort();
  return {
    kind: "settled",
    index,
    call,
    output: errorOutput(
      `Unknown tool \`${call.name}\`. ${names.length ? `Available tools: ${names.join(", ")}.` : "No tools are available in this session."}`,
    ),
  };
}

/** Arguments checked against the tool's input schema: ready to run, or settled with what is wrong. */
function validated(call: PendingToolCall, index: number, tool: ToolDefinition, args: unknown): Prepared {
  const problems = validateJson(tool.inputSchema, args);
  if (problems.length === 0) return { kind: "run", index, call, tool, args };
  return {
    kind: "settled",
    index,
    call,
    tool,
    output: errorOutput(
      `Invalid arguments for ${call.name}:\n${problems.map((p) => `- ${p}`).join("\n")}\nFix the arguments to match the tool's input schema and call it again.`,
    ),
  };
}

/** Prepare every call in the model's order: lookup, validation, `beforeToolCall` hooks. Never fails. */
function prepare(ctx: DispatchContext, calls: readonly PendingToolCall[]): Effect.Effect<Prepared[]> {
  // without `beforeToolCall` hooks, preparing is plain synchronous work
  if (!ctx.hooks.some((h) => h.hooks.beforeToolCall))
    return Effect.sync(() =>
      calls.map((call, index) => {
        const tool = lookup(ctx, call, index);
        return "kind" in tool ? tool : validated(call, index, tool, call.args);
      }),
    );
  return Effect.forEach(calls, (call, index) =>
    Effect.gen(function* () {
      const found = lookup(ctx, call, index);
      if ("kind" in found) return found;
      const tool = found;
      let args = call.args;
      for (const { plugin, hooks } of ctx.hooks) {
        if (!hooks.beforeToolCall) continue;
        const result = yield* Effect.either(
          hooks.beforeToolCall(ctx.hook, {
            callId: call.callId,
            ...(call.lashCallId !== undefined ? { lashCallId: call.lashCallId } : {}),
            name: call.name,
            args,
            tool,
          }),
        );
        if (result._tag === "Left") {
          return {
            kind: "settled",
            index,
            call,
            tool,
            output: errorOutput(
              `The ${plugin} plugin failed before ${call.name} could run: ${describeError(result.left)}`,
            ),
          } as const;
        }
        const r = result.right;
        if (!r) continue;
        if ("abort" in r)
          return { kind: "settled", index, call, tool, output: errorOutput(r.abort) } as const;
        if ("output" in r)
          return { kind: "settled", index, call, tool, output: r.output, hookArgs: { args } } as const;
        if ("args" in r) args = r.args;
      }
      return validated(call, index, tool, args);
    }),
  );
}

/** A call stopped by the turn's cancel (after the grace period): reported as cancelled, not settled. */
const CANCELLED: unique symbol = Symbol("cancelled");
type Cancelled = typeof CANCELLED;

/**
 * Runs one tool attempt in its own fiber, stopped (interrupted, and waited for) at its
 * timeout — a typed failure — or `graceMs` after the turn's signal aborts — `CANCELLED`.
 * One fiber per call: no race, no timer fiber on the live clock.
 */
function supervised<A, E, E2>(
  effect: Effect.Effect<A, E>,
  o: {
    readonly timeoutMs: number;
    readonly graceMs: number;
    readonly signal: AbortSignal;
    readonly onTimeout: () => E2;
  },
): Effect.Effect<A | Cancelled, E | E2> {
  return Effect.flatMap(Effect.runtime<never>(), (rt) =>
    Effect.clockWith((clock) =>
      Effect.async<A | Cancelled, E | E2>((resume) => {
        let reason: "timeout" | "cancelled" | undefined;
        const fiber: Fiber.RuntimeFiber<A, E> = Runtime.runFork(rt)(effect);
        const stop = (why: "timeout" | "cancelled") => {
          if (reason || fiber.unsafePoll()) return;
          reason = why;
          fiber.unsafeInterruptAsFork(FiberId.none);
        };
        const clearTimeout = afterOn(clock, rt, o.timeoutMs, () => stop("timeout"));
        let clearGrace: (() => void) | undefined;
        const onAbort = () => {
          clearGrace = afterOn(clock, rt, o.graceMs, () => stop("cancelled"));
        };
        if (o.signal.aborted) onAbort();
        else o.signal.addEventListener("abort", onAbort, { once: true });
        fiber.addObserver((exit) => {
          clearTimeout();
          clearGrace?.();
          o.signal.removeEventListener("abort", onAbort);
          // a call that finished before the stop took effect keeps its result
          if (Exit.isSuccess(exit) || reason === undefined) resume(exit);
          else if (reason === "timeout") resume(Effect.fail(o.onTimeout()));
          else resume(Effect.succeed(CANCELLED));
        });
        // the batch itself interrupted (the turn stopped): stop the call and wait for it
        return Effect.asVoid(Fiber.interrupt(fiber));
      }),
    ),
  );
}

/**
 * The clock, and the runtime only when the clock is not the live one (then timers run as fibers
 * on it: `afterOn`); with the live clock they are plain timers and no runtime is built per call.
 */
const withTimers = <A, E>(
  f: (clock: Clock.Clock, rt: Runtime.Runtime<never> | undefined) => Effect.Effect<A, E>,
): Effect.Effect<A, E> =>
  Effect.clockWith((clock) =>
    isLiveClock(clock) ? f(clock, undefined) : Effect.flatMap(Effect.runtime<never>(), (rt) => f(clock, rt)),
  );

/**
 * `supervised` for a promise tool (`defineTool`), without a fiber: the promise is started at
 * once and raced, in one `Effect.async`, against the same timeout and cancel grace. Stopping it
 * is what interrupting `Effect.tryPromise` does — abort the attempt's `controller` (the tool's
 * `signal`) and stop waiting for the promise — so the outcomes are `supervised`'s: the output,
 * the tool's failure (`asToolFailure`), `onTimeout()`, or `CANCELLED`.
 */
function supervisedPromise<E2>(
  start: () => Promise<ToolOutput>,
  controller: AbortController,
  o: {
    readonly timeoutMs: number;
    readonly graceMs: number;
    readonly signal: AbortSignal;
    readonly onTimeout: () => E2;
  },
): Effect.Effect<ToolOutput | Cancelled, ToolFailure | E2> {
  return withTimers((clock, rt) =>
    Effect.async<ToolOutput | Cancelled, ToolFailure | E2>((resume) => {
      let settled = false;
      let clearTimer = () => {};
      let clearGrace: (() => void) | undefined;
      const onAbort = () => {
        clearGrace = afterOn(clock, rt, o.graceMs, () => stop("cancelled"));
      };
      const settle = (result: Effect.Effect<ToolOutput | Cancelled, ToolFailure | E2>) => {
        if (settled) return;
        settled = true;
        clearTimer();
        clearGrace?.();
        o.signal.removeEventListener("abort", onAbort);
        resume(result);
      };
      // a promise that settled before the stop keeps its result
      const stop = (why: "timeout" | "cancelled") => {
        if (settled) return;
        controller.abort();
        settle(why === "timeout" ? Effect.fail(o.onTimeout()) : Effect.succeed(CANCELLED));
      };
      let promise: Promise<ToolOutput>;
      try {
        promise = start();
      } catch (error) {
        promise = Promise.reject(error);
      }
      clearTimer = afterOn(clock, rt, o.timeoutMs, () => stop("timeout"));
      if (o.signal.aborted) onAbort();
      else o.signal.addEventListener("abort", onAbort, { once: true });
      try {
        promise.then(
          (output) => settle(Effect.succeed(output)),
          (error) => settle(Effect.fail(asToolFailure(error))),
        );
      } catch (error) {
        // not a promise after all: what `Effect.tryPromise` reports for it
        settle(Effect.fail(asToolFailure(error)));
      }
      // the batch itself interrupted (the turn stopped): stop the call
      return Effect.sync(() => {
        if (settled) return;
        settled = true;
        clearTimer();
        clearGrace?.();
        o.signal.removeEventListener("abort", onAbort);
        controller.abort();
      });
    }),
  );
}

function attemptOnce(
  ctx: DispatchContext,
  p: Extract<Prepared, { kind: "run" }>,
  attempt: number,
  key: string,
): Effect.Effect<AttemptRecord | Cancelled> {
  const timeoutMs = p.tool.timeoutMs ?? ctx.options?.defaultTimeoutMs ?? 120_000;
  const redactor = ctx.options?.redactor;
  const clean = redactor && redactor.size > 0 ? redactor : undefined;
  return Effect.suspend(() => {
    const controller = new AbortController();
    const context = {
      sessionId: ctx.hook.session.id,
      callId: p.call.callId,
      ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
      turnId: ctx.hook.turnId,
      attempt,
      signal: controller.signal,
      // the host bound to this attempt: its `llm` calls are journaled under the attempt's key
      ...(ctx.host ? { host: ctx.host.forCall ? ctx.host.forCall(key) : ctx.host } : {}),
      progress: (update: unknown) => {
        const safe = clean ? clean.deep(update) : update;
        Effect.runFork(
          ctx.emit({
            type: "toolProgress",
            callId: p.call.callId,
            ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
            update: safe,
          }),
        );
      },
    };
    const supervision = {
      timeoutMs,
      graceMs: ctx.options?.cancelGraceMs ?? 100,
      signal: ctx.signal,
      onTimeout: () =>
        new ToolFailure({
          class: "timeout",
          message: `${p.tool.name} timed out after ${timeoutMs} ms and was stopped.`,
        }),
    };
    // a `defineTool` tool: its promise is supervised directly, no fiber forked to run it
    const direct = promiseRunOf(p.tool.execute);
    const supervisedRun = direct
      ? supervisedPromise(() => direct(p.args, context), controller, supervision)
      : supervised(
          p.tool
            .execute(p.args, context)
            .pipe(Effect.onInterrupt(() => Effect.sync(() => controller.abort()))),
          supervision,
        );
    return supervisedRun.pipe(
      Effect.map((output): AttemptRecord | Cancelled =>
        output === CANCELLED ? CANCELLED : { ok: true, output: redactOutput(clean, output) },
      ),
      Effect.catchAllDefect((defect) =>
        Effect.succeed<AttemptRecord>({
          ok: false,
          failure: {
            class: "internal",
            message: redactText(clean, `${p.tool.name} crashed: ${describeError(defect)}`),
          },
        }),
      ),
      Effect.catchAll((failure) =>
        Effect.succeed<AttemptRecord>({
          ok: false,
          failure:
            failure instanceof ToolFailure
              ? {
                  class: failure.class,
                  message: redactText(clean, failure.message),
                  ...(failure.retry ? { retry: failure.retry } : {}),
                }
              : { class: "execution", message: redactText(clean, describeError(failure)) },
        }),
      ),
    );
  });
}

/** Run one prepared call through its attempts (journaled, retried when safe). */
function execute(
  ctx: DispatchContext,
  p: Extract<Prepared, { kind: "run" }>,
): Effect.Effect<{ output: ToolOutput; replayed: boolean } | Cancelled, JournalMismatch | StoreError> {
  return Effect.gen(function* () {
    const maxAttempts = Math.max(1, p.tool.retry?.maxAttempts ?? 1);
    const ids = { sessionId: ctx.hook.session.id, turnId: ctx.hook.turnId };
    const hash = ctx.journal.enabled ? hashOf(p) : "";
    for (let attempt = 1; ; attempt++) {
      const key = `${ctx.batchKey}:child:${p.index}:${p.call.callId}:attempt:${attempt}`;
      let record: AttemptRecord | undefined;
      let replayed = false;
      const backend = ctx.journal.backend;
      if (backend) {
        let cancelled = false;
        const run = Effect.map(attemptOnce(ctx, p, attempt, key), (r) => {
          if (r !== CANCELLED) return r;
          cancelled = true;
          return { ok: false, failure: { class: "execution", message: "cancelled" } } satisfies AttemptRecord;
        });
        const r = yield* backend.attempt(
          ids,
          key,
          hash,
          run,
          isIdempotent(p.tool) ? undefined : interruptedRecord(p),
        );
        if (cancelled) return CANCELLED;
        record = r.outcome as AttemptRecord;
        replayed = r.replayed;
      } else if (ctx.journal.enabled) {
        const entry = yield* ctx.journal.lookup(key, ids.turnId);
        yield* ctx.journal.check(entry, key, hash);
        if (entry?.status === "completed") {
          record = entry.outcome as AttemptRecord;
          replayed = true;
        } else if (entry?.status === "started" && !isIdempotent(p.tool)) {
          record = interruptedRecord(p);
          yield* ctx.journal.record(ids, key, hash, "completed", record);
        }
      }
      if (!record) {
        yield* ctx.journal.attemptStarted(ids, key, hash, isIdempotent(p.tool));
        const r = yield* attemptOnce(ctx, p, attempt, key);
        // cut off by the cancel: the attempt stays "started", as a crash would leave it
        if (r === CANCELLED) return CANCELLED;
        record = r;
        yield* ctx.journal.record(ids, key, hash, "completed", record);
      }
      if (record.ok) return { output: record.output, replayed };
      const f = record.failure;
      if (f.retry === "safe" && attempt < maxAttempts) {
        const base = p.tool.retry?.baseDelayMs ?? 200;
        const cap = p.tool.retry?.maxDelayMs ?? 10_000;
        // the wait before a retry ends with the turn's cancel: the call is then reported cancelled
        const wait = Effect.sleep(Duration.millis(Math.min(cap, base * 2 ** (attempt - 1))));
        yield* Effect.raceFirst(wait, abortWait(ctx.signal));
        if (ctx.signal.aborted) return CANCELLED;
        continue;
      }
      const suffix = f.retry === "safe" && maxAttempts > 1 ? ` (gave up after ${attempt} attempts)` : "";
      return { output: errorOutput(`${f.message}${suffix}`), replayed };
    }
  });
}

/** What a non-idempotent tool attempt cut off by a crash records instead of running again. */
function interruptedRecord(p: Extract<Prepared, { kind: "run" }>): AttemptRecord {
  return {
    ok: false,
    failure: {
      class: "interrupted",
      message:
        `The call to ${p.tool.name} was interrupted (the process stopped while it ran) and was not run again ` +
        "because the tool is not idempotent. Check what it did before calling it again.",
    },
  };
}

function hashOf(p: Extract<Prepared, { kind: "run" }>): string {
  return Journal.hash({ tool: p.call.name, args: p.args });
}

/** The approval step: each runnable call allowed, denied (settled) or asked about (see `approval.ts`). */
function governed(
  ctx: DispatchContext,
  g: DispatchGovernance,
  prepared: Prepared[],
): Effect.Effect<Prepared[], ApprovalError | JournalMismatch | StoreError> {
  // a call a hook settled (dry-run) is governed too: a denial wins over the hook's result
  const runnable: Runnable[] = [];
  for (const p of prepared)
    if (p.kind === "run") runnable.push(p);
    else if (p.kind === "settled" && p.tool && p.hookArgs)
      runnable.push({ index: p.index, call: p.call, tool: p.tool, args: p.hookArgs.args, stubbed: true });
  if (runnable.length === 0) return Effect.succeed(prepared);
  return Effect.map(
    govern(
      {
        sessionId: ctx.hook.session.id,
        turnId: ctx.hook.turnId,
        batchKey: ctx.batchKey,
        journal: ctx.journal,
        signal: ctx.signal,
        emit: ctx.emit,
        redactor: ctx.options?.redactor,
      },
      g,
      runnable,
    ),
    (decided) =>
      prepared.map((p): Prepared => {
        const d: Governed | undefined = decided.get(p.index);
        if (d?.kind === "settled" && p.kind === "settled")
          return {
            kind: "settled",
            index: p.index,
            call: p.call,
            output: d.output,
            ...(p.tool ? { tool: p.tool } : {}),
          };
        if (!d || p.kind !== "run") return p;
        if (d.kind === "run") return d.args === p.args ? p : { ...p, args: d.args };
        if (d.kind === "held") return { kind: "held", index: p.index, call: p.call, tool: p.tool };
        return { kind: "settled", index: p.index, call: p.call, tool: p.tool, output: d.output };
      }),
  );
}

/**
 * Run one batch of tool calls. Every failure becomes an error result the model
 * reads; results come back in the model's order. On cancel, calls still running
 * after the grace period are interrupted and reported as cancelled.
 */
export function runToolBatch(
  ctx: DispatchContext,
  calls: readonly PendingToolCall[],
): Effect.Effect<BatchResult, ApprovalError | JournalMismatch | StoreError> {
  const lone = calls.length === 1 ? loneCall(ctx, calls[0]!) : undefined;
  if (lone) return lone;
  return Effect.gen(function* () {
    const clock = yield* Effect.clock;
    const prepared0 = yield* prepare(ctx, calls);
    const prepared = ctx.governance ? yield* governed(ctx, ctx.governance, prepared0) : prepared0;
    const done = new Map<number, CompletedToolCall>();
    const spent: ToolUsage[] = [];
    /** When each call started, so a call cut off by a cancel reports how long it really ran. */
    const started = new Map<number, number>();
    const settle = (p: Prepared, output: ToolOutput, startedAt: number, replayed: boolean) =>
      Effect.gen(function* () {
        let out = redactOutput(ctx.options?.redactor, output);
        const info: ToolCallInfo = {
          callId: p.call.callId,
          ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
          name: p.call.name,
          args: p.kind === "run" ? p.args : p.call.args,
          ...(p.tool ? { tool: p.tool } : {}),
        };
        for (const { plugin, hooks } of ctx.hooks) {
          if (!hooks.afterToolCall) continue;
          const r = yield* Effect.either(hooks.afterToolCall(ctx.hook, info, out));
          if (r._tag === "Left")
            out = errorOutput(
              `The ${plugin} plugin failed after ${p.call.name} ran: ${describeError(r.left)}`,
            );
          else if (r.right) out = r.right;
        }
        // every result (run, replayed from an old journal, or produced by a hook or plugin) is redacted
        out = redactOutput(ctx.options?.redactor, out);
        const projected: ProjectedResult = yield* Effect.orElseSucceed(ctx.project(info, out), () => ({
          content: out.content,
        }));
        if (out.usage) spent.push(...out.usage);
        const completed: CompletedToolCall = {
          callId: p.call.callId,
          ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
          name: p.call.name,
          content: projected.content,
          isError: out.isError ?? false,
          ...(projected.full ? { full: projected.full } : {}),
          ...((projected.value ?? out.value) !== undefined ? { value: projected.value ?? out.value } : {}),
          ...((projected.details ?? out.details) !== undefined
            ? { details: projected.details ?? out.details }
            : {}),
          ...(out.control !== undefined && !out.isError ? { control: out.control } : {}),
          durationMs: clock.unsafeCurrentTimeMillis() - startedAt,
        };
        done.set(p.index, completed);
        yield* ctx.emit({
          type: "toolCompleted",
          callId: completed.callId,
          ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
          name: completed.name,
          isError: completed.isError,
          content: completed.content,
          ...(completed.details !== undefined ? { details: completed.details } : {}),
          durationMs: completed.durationMs ?? 0,
          replayed,
        });
      });

    const runOne = (p: Prepared) =>
      Effect.suspend(() => {
        // a call that had not started when the turn was cancelled does not start
        if (ctx.signal.aborted || p.kind === "held") return Effect.void;
        const startedAt = clock.unsafeCurrentTimeMillis();
        started.set(p.index, startedAt);
        return Effect.zipRight(
          ctx.emit({
            type: "toolStarted",
            callId: p.call.callId,
            ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
            name: p.call.name,
            args: p.kind === "run" ? p.args : p.call.args,
            ...(p.tool?.family ? { family: p.tool.family } : {}),
          }),
          p.kind === "settled"
            ? settle(p, p.output, startedAt, false)
            : Effect.flatMap(execute(ctx, p), (r) =>
                r === CANCELLED ? Effect.void : settle(p, r.output, startedAt, r.replayed),
              ),
        );
      });

    // One call needs no concurrent forEach (which forks a fiber per item).
    yield* prepared.length === 1
      ? runOne(prepared[0]!)
      : Effect.forEach(prepared, runOne, { concurrency: ctx.options?.concurrency ?? 8, discard: true });
    const stoppedAt = clock.unsafeCurrentTimeMillis();
    const results = prepared.map((p): CompletedToolCall => {
      const settled = done.get(p.index);
      if (settled) return settled;
      const startedAt = started.get(p.index);
      return {
        callId: p.call.callId,
        ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
        name: p.call.name,
        content: [{ type: "text", text: `Cancelled: the turn was stopped before ${p.call.name} finished.` }],
        isError: true,
        ...(startedAt !== undefined ? { durationMs: stoppedAt - startedAt } : {}),
      };
    });
    for (const p of prepared) {
      if (done.has(p.index)) continue;
      yield* ctx.emit({
        type: "toolCompleted",
        callId: p.call.callId,
        ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
        name: p.call.name,
        isError: true,
        content: results[p.index]!.content,
        durationMs: results[p.index]!.durationMs ?? 0,
        replayed: false,
      });
    }
    return { results, cancelled: ctx.signal.aborted, usage: spent };
  });
}

/**
 * The common batch — one call of a promise tool (`defineTool`), no hooks, no approval step, no
 * projector, no retries, and no journal or the store's journal in a turn begun in this process
 * (nothing recorded to replay) — as one `Effect.async`: the same steps as `runToolBatch`
 * (events, supervision, redaction, the journal's attempt records, the result), without an
 * effect per step. `undefined` when the batch is not that one (the general path runs it).
 */
function loneCall(
  ctx: DispatchContext,
  call: PendingToolCall,
): Effect.Effect<BatchResult, StoreError> | undefined {
  const emitNow = ctx.emitNow;
  const journal = ctx.journal;
  if (!emitNow || !ctx.projectsAsIs || ctx.governance || ctx.signal.aborted) return undefined;
  if (journal.enabled && !journal.begunHere(ctx.hook.turnId)) return undefined;
  if (ctx.hooks.some((h) => h.hooks.beforeToolCall || h.hooks.afterToolCall)) return undefined;
  const found = lookup(ctx, call, 0);
  if ("kind" in found) return undefined;
  const run = promiseRunOf(found.execute);
  if (!run || (found.retry?.maxAttempts ?? 1) > 1) return undefined;
  const p = validated(call, 0, found, call.args);
  if (p.kind !== "run") return undefined;
  const tool = found;
  const redactor = ctx.options?.redactor;
  const clean = redactor && redactor.size > 0 ? redactor : undefined;
  const timeoutMs = tool.timeoutMs ?? ctx.options?.defaultTimeoutMs ?? 120_000;
  const graceMs = ctx.options?.cancelGraceMs ?? 100;
  const lash = call.lashCallId !== undefined ? { lashCallId: call.lashCallId } : undefined;
  const key = `${ctx.batchKey}:child:0:${call.callId}:attempt:1`;
  const ids = { sessionId: ctx.hook.session.id, turnId: ctx.hook.turnId };
  // journaled as `execute` does: "started" (or the waiting records) before it runs, "completed" after
  const hash = journal.enabled ? hashOf(p) : "";
  const before = journal.enabled ? journal.attemptStarted(ids, key, hash, isIdempotent(tool)) : Effect.void;
  const lone = withTimers((clock, rt) =>
    Effect.async<BatchResult, StoreError>((resume) => {
      if (ctx.signal.aborted) {
        // cancelled before it started: it does not start (as in the general path)
        const content = [
          { type: "text" as const, text: `Cancelled: the turn was stopped before ${call.name} finished.` },
        ];
        emitNow({
          type: "toolCompleted",
          callId: call.callId,
          ...lash,
          name: call.name,
          isError: true,
          content,
          durationMs: 0,
          replayed: false,
        });
        resume(
          Effect.succeed({
            results: [{ callId: call.callId, ...lash, name: call.name, content, isError: true }],
            cancelled: true,
            usage: [],
          }),
        );
        return;
      }
      const startedAt = clock.unsafeCurrentTimeMillis();
      emitNow({
        type: "toolStarted",
        callId: call.callId,
        ...lash,
        name: call.name,
        args: p.args,
        ...(tool.family ? { family: tool.family } : {}),
      });
      const controller = new AbortController();
      const context = {
        sessionId: ctx.hook.session.id,
        callId: call.callId,
        ...lash,
        turnId: ctx.hook.turnId,
        attempt: 1,
        signal: controller.signal,
        ...(ctx.host ? { host: ctx.host.forCall ? ctx.host.forCall(key) : ctx.host } : {}),
        progress: (update: unknown) => {
          emitNow({
            type: "toolProgress",
            callId: call.callId,
            ...lash,
            update: clean ? clean.deep(update) : update,
          });
        },
      };
      let settled = false;
      let clearTimer = () => {};
      let clearGrace: (() => void) | undefined;
      const detach = () => {
        settled = true;
        clearTimer();
        clearGrace?.();
        ctx.signal.removeEventListener("abort", onAbort);
      };
      const finish = (output: ToolOutput | undefined, failure?: AttemptRecord) => {
        if (settled) return;
        detach();
        const now = clock.unsafeCurrentTimeMillis();
        if (output === undefined) {
          // cancelled: what the general path reports for a call the cancel cut off
          const content = [
            {
              type: "text" as const,
              text: `Cancelled: the turn was stopped before ${call.name} finished.`,
            },
          ];
          const durationMs = now - startedAt;
          emitNow({
            type: "toolCompleted",
            callId: call.callId,
            ...lash,
            name: call.name,
            isError: true,
            content,
            durationMs,
            replayed: false,
          });
          resume(
            Effect.succeed({
              results: [
                { callId: call.callId, ...lash, name: call.name, content, isError: true, durationMs },
              ],
              cancelled: true,
              usage: [],
            }),
          );
          return;
        }
        const out = redactOutput(redactor, output);
        const completed: CompletedToolCall = {
          callId: call.callId,
          ...lash,
          name: call.name,
          content: out.content,
          isError: out.isError ?? false,
          ...(out.value !== undefined ? { value: out.value } : {}),
          ...(out.details !== undefined ? { details: out.details } : {}),
          ...(out.control !== undefined && !out.isError ? { control: out.control } : {}),
          durationMs: now - startedAt,
        };
        const done = (): BatchResult => {
          emitNow({
            type: "toolCompleted",
            callId: completed.callId,
            ...lash,
            name: completed.name,
            isError: completed.isError,
            content: completed.content,
            ...(completed.details !== undefined ? { details: completed.details } : {}),
            durationMs: completed.durationMs ?? 0,
            replayed: false,
          });
          return {
            results: [completed],
            cancelled: ctx.signal.aborted,
            usage: out.usage ? [...out.usage] : [],
          };
        };
        if (!journal.enabled) return resume(Effect.succeed(done()));
        // the completed attempt is on disk before anything else happens
        const record: AttemptRecord = failure ?? { ok: true, output: redactOutput(clean, output) };
        resume(Effect.map(journal.record(ids, key, hash, "completed", record), done));
      };
      const failed = (f: ToolFailure) => {
        const message = redactText(clean, f.message);
        finish(errorOutput(message), {
          ok: false,
          failure: { class: f.class, message, ...(f.retry ? { retry: f.retry } : {}) },
        });
      };
      const stop = (why: "timeout" | "cancelled") => {
        if (settled) return;
        controller.abort();
        if (why === "cancelled") finish(undefined);
        else
          failed(
            new ToolFailure({
              class: "timeout",
              message: `${tool.name} timed out after ${timeoutMs} ms and was stopped.`,
            }),
          );
      };
      const onAbort = () => {
        clearGrace = afterOn(clock, rt, graceMs, () => stop("cancelled"));
      };
      let promise: Promise<ToolOutput>;
      try {
        promise = run(p.args, context);
      } catch (error) {
        promise = Promise.reject(error);
      }
      if (!settled) {
        clearTimer = afterOn(clock, rt, timeoutMs, () => stop("timeout"));
        ctx.signal.addEventListener("abort", onAbort, { once: true });
      }
      try {
        promise.then(
          (output) => finish(output),
          (error) => failed(asToolFailure(error)),
        );
      } catch (error) {
        failed(asToolFailure(error));
      }
      // the batch itself interrupted (the turn stopped): stop the call
      return Effect.sync(() => {
        if (settled) return;
        detach();
        controller.abort();
      });
    }),
  );
  return journal.enabled ? Effect.zipRight(before, lone) : lone;
}
