import type { LlmProvider, Message, ModelInfo } from "@lash/sansio";
import * as Cause from "effect/Cause";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Layer from "effect/Layer";
import * as ManagedRuntime from "effect/ManagedRuntime";
import * as Option from "effect/Option";
import type { TurnActivity } from "./activity.ts";
import {
  type ApprovalAnswer,
  ApprovalError,
  type ApprovalRequest,
  type ApproverShape,
} from "./governance.ts";
import type { Plugin } from "./plugin.ts";
import {
  type CompactionResult,
  type CreateSessionOptions,
  LashRuntime,
  type RuntimeOptions,
  type TurnInput,
  type TurnOptions,
  type TurnResult,
  type UsageSummary,
} from "./runtime.ts";
import { IdGenerator, LlmProviders, ModelCatalog } from "./services.ts";
import type { ListOptions, SessionRecord, SessionStore } from "./store.ts";

export interface LashOptions extends Omit<RuntimeOptions, "plugins"> {
  /** Where sessions live: a `Layer<SessionStore>` (e.g. `MemoryStore.layer`, `SqliteStore.layer({ filename })`). */
  readonly store: Layer.Layer<SessionStore, unknown>;
  /** One provider for every model, or a resolver by `provider/model` name. */
  readonly provider: LlmProvider | ((model: string) => LlmProvider);
  readonly catalog?: readonly ModelInfo[];
  readonly plugins?: readonly Plugin[];
  /**
   * Answers the tool calls `governance` asks about: all calls of one model response come
   * in one request; resolve with `{ by, decisions: [{ callId, decision: "approve" | "deny", … }] }`.
   * A rejected promise stops the turn (`TurnError` `approval`) and leaves the request pending:
   * the session's next turn (or `resumePending`) asks it again. `signal` aborts on cancel.
   * Takes precedence over `approver`.
   */
  readonly onApproval?: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;
}

/** `onApproval` as an approver. */
const callbackApprover = (
  fn: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>,
): ApproverShape => ({
  ask: (request, signal) =>
    Effect.tryPromise({
      try: () => fn(request, signal),
      catch: (e) =>
        new ApprovalError({ message: `onApproval failed: ${e instanceof Error ? e.message : String(e)}` }),
    }).pipe(
      Effect.filterOrFail(
        (a) => a !== null && typeof a === "object" && Array.isArray(a.decisions),
        () =>
          new ApprovalError({
            message:
              "onApproval resolved with no answer: resolve with { by, decisions: [{ callId, decision }] }",
          }),
      ),
      Effect.map((a) => ({ ...a, by: a.by || "onApproval" })),
    ),
});

/** A running turn: iterate it for activity events; `result` settles when it has committed. */
export interface TurnRun extends AsyncIterable<TurnActivity> {
  readonly result: Promise<TurnResult>;
  /** Cancel gracefully: what finished is committed; the outcome is `Stopped{cancelled}`. */
  cancel(): void;
}

export interface LashSession {
  readonly id: string;
  turn(input: string | TurnInput, options?: Omit<TurnOptions, "onEvent">): TurnRun;
  readView(): Promise<readonly Message[]>;
  usage(): Promise<UsageSummary>;
  fork(options?: { atNode?: string; title?: string }): Promise<SessionRecord>;
  info(): Promise<SessionRecord>;
  /** Compact the history now into a summary node (`undefined`: nothing to compact). */
  compact(options?: { instructions?: string }): Promise<CompactionResult | undefined>;
}

export interface Lash {
  createSession(options: CreateSessionOptions): Promise<LashSession>;
  session(id: string): LashSession;
  listSessions(options?: ListOptions): Promise<readonly SessionRecord[]>;
  deleteSession(id: string): Promise<void>;
  close(): Promise<void>;
}

/** The promise facade for hosts that do not use Effect. */
export function createLash(options: LashOptions): Lash {
  const { store, provider, catalog, onApproval, ...rest } = options;
  const runtimeOptions = onApproval ? { ...rest, approver: callbackApprover(onApproval) } : rest;
  const providers =
    typeof provider === "function" ? LlmProviders.fromFunction(provider) : LlmProviders.single(provider);
  const layer = LashRuntime.layer(runtimeOptions).pipe(
    Layer.provide(
      Layer.mergeAll(
        store,
        providers,
        IdGenerator.Live,
        catalog ? ModelCatalog.fromEntries(catalog) : ModelCatalog.Empty,
      ),
    ),
  );
  const runtime = ManagedRuntime.make(layer);
  /** Runs an effect; a typed failure rejects with the error itself (`TurnError`, `SessionNotFound` …), to match with `instanceof`. */
  const promise = <A, E>(effect: Effect.Effect<A, E, LashRuntime>): Promise<A> =>
    runtime.runPromiseExit(effect).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value;
      const failure = Cause.failureOption(exit.cause);
      throw Option.isSome(failure) ? failure.value : Cause.squash(exit.cause);
    });
  const run = <A, E>(f: (rt: typeof LashRuntime.Service) => Effect.Effect<A, E>): Promise<A> =>
    promise(Effect.flatMap(LashRuntime, f));

  const session = (id: string): LashSession => ({
    id,
    turn(input, turnOptions = {}) {
      let buffer: TurnActivity[] = [];
      let wake: (() => void) | undefined;
      let finished = false;
      let cancel: (() => void) | undefined;
      let cancelRequested = false;
      const result = promise(
        Effect.scoped(
          Effect.gen(function* () {
            const rt = yield* LashRuntime;
            const handle = yield* rt.startTurn(id, typeof input === "string" ? { text: input } : input, {
              ...turnOptions,
              onEvent: (e) => {
                buffer.push(e);
                wake?.();
              },
            });
            cancel = () => runtime.runFork(handle.cancel);
            if (cancelRequested) cancel();
            return yield* handle.result;
          }),
        ),
      );
      const settle = () => {
        finished = true;
        wake?.();
      };
      result.then(settle, settle);
      return {
        result,
        cancel: () => {
          cancelRequested = true;
          cancel?.();
        },
        async *[Symbol.asyncIterator]() {
          for (;;) {
            // taken a batch at a time: shift() per event moved the whole backlog each time
            while (buffer.length) {
              const batch = buffer;
              buffer = [];
              yield* batch;
            }
            if (finished) return;
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            wake = undefined;
          }
        },
      };
    },
    readView: () => run((rt) => rt.readView(id)),
    usage: () => run((rt) => rt.usage(id)),
    fork: (o) => run((rt) => rt.fork(id, o)),
    info: () => run((rt) => rt.getSession(id)),
    compact: (o) => run((rt) => rt.compact(id, o)),
  });

  return {
    createSession: (o) => run((rt) => Effect.map(rt.createSession(o), (s) => session(s.id))),
    session,
    listSessions: (o) => run((rt) => rt.listSessions(o)),
    deleteSession: (id) => run((rt) => rt.deleteSession(id)),
    close: () => runtime.dispose(),
  };
}
