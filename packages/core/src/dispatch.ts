import type { CompletedToolCall, PendingToolCall } from "@lash/sansio";
import { Clock, Deferred, Duration, Effect, Option, Ref } from "effect";
import type { TurnActivityBody } from "./activity.ts";
import { Journal, type JournalMismatch } from "./journal.ts";
import { validateJson } from "./jsonschema.ts";
import type { HookContext, PluginHooks, ProjectedResult, ToolCallInfo } from "./plugin.ts";
import type { Redactor } from "./secrets.ts";
import type { StoreError } from "./store.ts";
import {
  isIdempotent,
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
  /** Completed when the turn is cancelled. */
  readonly cancel: Deferred.Deferred<void>;
  readonly options?: DispatchOptions;
  /** Lent to tools that drive the runtime (subagents). */
  readonly host?: ToolHost;
}

export interface BatchResult {
  readonly results: CompletedToolCall[];
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

/** Prepare every call in the model's order: lookup, validation, `beforeToolCall` hooks. Never fails. */
function prepare(ctx: DispatchContext, calls: readonly PendingToolCall[]): Effect.Effect<Prepared[]> {
  return Effect.forEach(calls, (call, index) =>
    Effect.gen(function* () {
      if (call.argsError !== undefined) {
        return {
          kind: "settled",
          index,
          call,
          output: errorOutput(`Invalid arguments for ${call.name}: ${call.argsError}.`),
        } as const;
      }
      const tool = ctx.catalog.get(call.name);
      if (!tool) {
        const names = [...ctx.catalog.keys()].sort();
        return {
          kind: "settled",
          index,
          call,
          output: errorOutput(
            `Unknown tool \`${call.name}\`. ${names.length ? `Available tools: ${names.join(", ")}.` : "No tools are available in this session."}`,
          ),
        } as const;
      }
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
        if ("output" in r) return { kind: "settled", index, call, tool, output: r.output } as const;
        if ("args" in r) args = r.args;
      }
      const problems = validateJson(tool.inputSchema, args);
      if (problems.length > 0) {
        return {
          kind: "settled",
          index,
          call,
          tool,
          output: errorOutput(
            `Invalid arguments for ${call.name}:\n${problems.map((p) => `- ${p}`).join("\n")}\nFix the arguments to match the tool's input schema and call it again.`,
          ),
        } as const;
      }
      return { kind: "run", index, call, tool, args } as const;
    }),
  );
}

function attemptOnce(
  ctx: DispatchContext,
  p: Extract<Prepared, { kind: "run" }>,
  attempt: number,
): Effect.Effect<AttemptRecord> {
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
      ...(ctx.host ? { host: ctx.host } : {}),
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
    return p.tool.execute(p.args, context).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: () =>
          new ToolFailure({
            class: "timeout",
            message: `${p.tool.name} timed out after ${timeoutMs} ms and was stopped.`,
          }),
      }),
      Effect.onInterrupt(() => Effect.sync(() => controller.abort())),
      Effect.map((output): AttemptRecord => ({ ok: true, output: redactOutput(clean, output) })),
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
): Effect.Effect<{ output: ToolOutput; replayed: boolean }, JournalMismatch | StoreError> {
  return Effect.gen(function* () {
    const maxAttempts = Math.max(1, p.tool.retry?.maxAttempts ?? 1);
    const ids = { sessionId: ctx.hook.session.id, turnId: ctx.hook.turnId };
    const hash = ctx.journal.enabled ? yield* Effect.sync(() => hashOf(p)) : "";
    for (let attempt = 1; ; attempt++) {
      const key = `${ctx.batchKey}:child:${p.index}:${p.call.callId}:attempt:${attempt}`;
      let record: AttemptRecord | undefined;
      let replayed = false;
      if (ctx.journal.enabled) {
        const entry = yield* ctx.journal.lookup(key);
        yield* ctx.journal.check(entry, key, hash);
        if (entry?.status === "completed") {
          record = entry.outcome as AttemptRecord;
          replayed = true;
        } else if (entry?.status === "started" && !isIdempotent(p.tool)) {
          record = {
            ok: false,
            failure: {
              class: "interrupted",
              message:
                `The call to ${p.tool.name} was interrupted (the process stopped while it ran) and was not run again ` +
                "because the tool is not idempotent. Check what it did before calling it again.",
            },
          };
          yield* ctx.journal.record(ids, key, hash, "completed", record);
        }
      }
      if (!record) {
        yield* ctx.journal.record(ids, key, hash, "started");
        record = yield* attemptOnce(ctx, p, attempt);
        yield* ctx.journal.record(ids, key, hash, "completed", record);
      }
      if (record.ok) return { output: record.output, replayed };
      const f = record.failure;
      if (f.retry === "safe" && attempt < maxAttempts) {
        const base = p.tool.retry?.baseDelayMs ?? 200;
        const cap = p.tool.retry?.maxDelayMs ?? 10_000;
        yield* Effect.sleep(Duration.millis(Math.min(cap, base * 2 ** (attempt - 1))));
        continue;
      }
      const suffix = f.retry === "safe" && maxAttempts > 1 ? ` (gave up after ${attempt} attempts)` : "";
      return { output: errorOutput(`${f.message}${suffix}`), replayed };
    }
  });
}

function hashOf(p: Extract<Prepared, { kind: "run" }>): string {
  return Journal.hash({ tool: p.call.name, args: p.args });
}

/**
 * Run one batch of tool calls. Every failure becomes an error result the model
 * reads; results come back in the model's order. On cancel, calls still running
 * after the grace period are interrupted and reported as cancelled.
 */
export function runToolBatch(
  ctx: DispatchContext,
  calls: readonly PendingToolCall[],
): Effect.Effect<BatchResult, JournalMismatch | StoreError> {
  return Effect.gen(function* () {
    const prepared = yield* prepare(ctx, calls);
    const done = yield* Ref.make(new Map<number, CompletedToolCall>());
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
        const now = yield* Clock.currentTimeMillis;
        if (out.usage) spent.push(...out.usage);
        const completed: CompletedToolCall = {
          callId: p.call.callId,
          ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
          name: p.call.name,
          content: projected.content,
          isError: out.isError ?? false,
          ...(projected.full ? { full: projected.full } : {}),
          ...(out.value !== undefined ? { value: out.value } : {}),
          ...(out.details !== undefined ? { details: out.details } : {}),
          ...(out.control !== undefined && !out.isError ? { control: out.control } : {}),
          durationMs: now - startedAt,
        };
        yield* Ref.update(done, (m) => new Map(m).set(p.index, completed));
        yield* ctx.emit({
          type: "toolCompleted",
          callId: completed.callId,
          ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
          name: completed.name,
          isError: completed.isError,
          content: completed.content,
          ...(out.details !== undefined ? { details: out.details } : {}),
          durationMs: completed.durationMs ?? 0,
          replayed,
        });
      });

    const runOne = (p: Prepared) =>
      Effect.gen(function* () {
        const startedAt = yield* Clock.currentTimeMillis;
        started.set(p.index, startedAt);
        yield* ctx.emit({
          type: "toolStarted",
          callId: p.call.callId,
          ...(p.call.lashCallId !== undefined ? { lashCallId: p.call.lashCallId } : {}),
          name: p.call.name,
          args: p.kind === "run" ? p.args : p.call.args,
          ...(p.tool?.family ? { family: p.tool.family } : {}),
        });
        if (p.kind === "settled") return yield* settle(p, p.output, startedAt, false);
        const { output, replayed } = yield* execute(ctx, p);
        yield* settle(p, output, startedAt, replayed);
      });

    // One call needs no concurrent forEach (which forks a fiber per item).
    const all =
      prepared.length === 1
        ? runOne(prepared[0]!)
        : Effect.forEach(prepared, runOne, { concurrency: ctx.options?.concurrency ?? 8, discard: true });
    const grace = ctx.options?.cancelGraceMs ?? 100;
    const cancelled = Deferred.await(ctx.cancel).pipe(Effect.zipRight(Effect.sleep(Duration.millis(grace))));
    const winner = yield* Effect.raceFirst(
      Effect.map(all, () => false),
      Effect.map(cancelled, () => true),
    );
    const map = yield* Ref.get(done);
    const stoppedAt = yield* Clock.currentTimeMillis;
    const results = prepared.map((p): CompletedToolCall => {
      const settled = map.get(p.index);
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
    if (winner) {
      for (const p of prepared) {
        if (!map.has(p.index)) {
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
      }
    }
    return { results, cancelled: winner || Option.isSome(yield* Deferred.poll(ctx.cancel)), usage: spent };
  });
}
