import { hashValue } from "@lash/sansio";
import * as Context from "effect/Context";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Either from "effect/Either";
import * as Layer from "effect/Layer";
import * as ParseResult from "effect/ParseResult";
import * as Schema from "effect/Schema";
import { type JournalEntry, SessionStore, type SessionStoreShape, StoreError } from "./store.ts";

/** How a recorded value is written to and read back from the journal. */
interface Codec<A> {
  readonly encode: (a: A) => Effect.Effect<unknown, StoreError>;
  readonly decode: (u: unknown) => Effect.Effect<A, StoreError>;
}

const unfit = (key: string, what: string, error: ParseResult.ParseError) =>
  new StoreError({
    message:
      `journal entry ${key}: the ${what} does not fit its schema (${ParseResult.TreeFormatter.formatErrorSync(error)}). ` +
      "The journal was written by another version of the code; abandon the interrupted turn to continue.",
  });

const codecOf = <A, I>(schema: Schema.Schema<A, I>, key: string): Codec<A> => {
  const encode = Schema.encodeEither(schema);
  const decode = Schema.decodeUnknownEither(schema);
  return {
    encode: (a) =>
      Either.match(encode(a), {
        onLeft: (e) => Effect.fail(unfit(key, "value to record", e)),
        onRight: Effect.succeed,
      }),
    decode: (u) =>
      Either.match(decode(u), {
        onLeft: (e) => Effect.fail(unfit(key, "recorded outcome", e)),
        onRight: Effect.succeed,
      }),
  };
};

const decoders = new WeakMap<object, (u: unknown) => Either.Either<unknown, ParseResult.ParseError>>();
/** One compiled decoder per schema (schemas are module constants: compiled once per process). */
function replayDecoder(
  schema: Schema.Schema<unknown, unknown>,
): (u: unknown) => Either.Either<unknown, ParseResult.ParseError> {
  let d = decoders.get(schema);
  if (d === undefined) {
    d = Schema.decodeUnknownEither(schema);
    decoders.set(schema, d);
  }
  return d;
}

/** A recorded effect was asked again with different content: replay cannot continue. */
export class JournalMismatch extends Data.TaggedError("JournalMismatch")<{
  readonly key: string;
  readonly message: string;
}> {}

export interface Recorded<A> {
  readonly value: A;
  /** True when the value came from the journal and nothing ran. */
  readonly replayed: boolean;
}

/** The ids of the turn a journal step belongs to. */
export interface JournalIds {
  readonly sessionId: string;
  readonly turnId: string;
}

export interface StepOptions {
  /**
   * The step runs journaled steps of its own (a tool batch: its attempts; an RLM cell: its tool
   * attempts, sub-queries and remembered values). A backend that cannot
   * nest steps runs it outside a step of its own (its inner steps replay) and records only its outcome.
   */
  readonly composite?: boolean;
  /**
   * The step's outcome is a model's answer (a paid call that may answer differently when asked
   * again): its waiting record is written before the next model call (`beforeModelCall`).
   */
  readonly answer?: boolean;
}

/**
 * Another home for the journal than the `SessionStore` (for instance a durable-execution
 * engine's own journal: `@lash/restate` runs each step as a `ctx.run`). Steps are named by
 * lash's replay key and carry the envelope hash; a backend returns a recorded outcome instead
 * of running `run` again, and fails with `JournalMismatch` when the recorded hash differs.
 * `run` yields the outcome as it is to be recorded (JSON), or fails with the step's error.
 */
export interface JournalBackend {
  /** One turn effect, run at most once to completion per key. */
  readonly step: <E>(
    ids: JournalIds,
    key: string,
    hash: string,
    run: Effect.Effect<unknown, E>,
    options?: StepOptions,
  ) => Effect.Effect<
    { readonly outcome: unknown; readonly replayed: boolean },
    E | JournalMismatch | StoreError
  >;
  /**
   * One tool attempt: a "started" step is recorded before `run`; when a replay finds the attempt
   * started but not completed, `cutOff` is recorded as its outcome instead of running `run` again
   * (a non-idempotent tool) — or `run` runs again (`cutOff` undefined: an idempotent tool).
   */
  readonly attempt: <E>(
    ids: JournalIds,
    key: string,
    hash: string,
    run: Effect.Effect<unknown, E>,
    cutOff: unknown | undefined,
  ) => Effect.Effect<
    { readonly outcome: unknown; readonly replayed: boolean },
    E | JournalMismatch | StoreError
  >;
}

/**
 * An envelope whose hash is already known: the value `Journal.hash` gives the whole envelope,
 * computed from pieces the caller caches (the callLlm envelope: `turn/request-digest.ts`).
 */
export class Hashed {
  readonly hash: string;
  constructor(hash: string) {
    this.hash = hash;
  }
}

/**
 * The effect journal: each reply-producing turn effect and each tool attempt
 * is recorded by replay key and envelope hash. On replay a completed record
 * is returned without running anything; a different hash is a terminal error.
 */
export class Journal {
  private readonly store: SessionStoreShape | undefined;
  /** Set: steps are recorded there instead of in the store (see `JournalBackend`). */
  readonly backend: JournalBackend | undefined;
  constructor(store: SessionStoreShape | undefined, backend?: JournalBackend) {
    this.store = backend ? undefined : store;
    this.backend = backend;
  }

  /**
   * Turns this process began itself (not resumed): nothing can be recorded under their keys
   * yet except by this process, so looking a key up would only ever find nothing. Skipping
   * those reads halves the journal's statements per step; a resumed turn is never fresh.
   */
  private readonly fresh = new Set<string>();

  /** Marks `turnId` as begun here (see `fresh`) for the duration of `effect`. */
  freshTurn<A, E, R>(turnId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    if (!this.store) return effect;
    return Effect.acquireUseRelease(
      Effect.sync(() => this.fresh.add(turnId)),
      () => effect,
      () => Effect.sync(() => this.fresh.delete(turnId)),
    );
  }

  /** True while `turnId` runs as begun in this process on the store's journal (see `fresh`). */
  begunHere(turnId: string): boolean {
    return this.store !== undefined && this.fresh.has(turnId);
  }

  get enabled(): boolean {
    return this.store !== undefined || this.backend !== undefined;
  }

  /** The envelope's hash: `sha256Hex(canonicalJson(envelope))`, or the one a `Hashed` envelope carries. */
  static hash(envelope: unknown): string {
    return envelope instanceof Hashed ? envelope.hash : hashValue(envelope);
  }

  lookup(key: string, turnId?: string): Effect.Effect<JournalEntry | undefined, StoreError> {
    if (!this.store || (turnId !== undefined && this.fresh.has(turnId))) return Effect.succeed(undefined);
    return this.store.journalGet(key);
  }

  /** Fail with a mismatch if a record exists under `key` with another hash. */
  check(entry: JournalEntry | undefined, key: string, hash: string): Effect.Effect<void, JournalMismatch> {
    if (entry && entry.hash !== hash) {
      return Effect.fail(
        new JournalMismatch({
          key,
          message:
            `journal mismatch at ${key}: the resumed turn asked for something different from what was recorded ` +
            "(the session's history or configuration changed since the crash). Abandon the interrupted turn to continue.",
        }),
      );
    }
    return Effect.void;
  }

  /**
   * Records of effects with no consequence outside the process (a model's answer, the
   * environment, checkpoint messages, a tool batch's bookkeeping), per turn, waiting to be
   * written with the turn's next write. The rule (two transactions per tool round trip):
   *
   * - A tool attempt's own records are written at once: "started" before a non-idempotent
   *   attempt runs (a resume finds it cut off and records it interrupted instead of running it
   *   again), "completed" as soon as it ends — a completed tool is on disk before anything
   *   else happens. An idempotent attempt writes no "started" row (a cut-off one runs again
   *   anyway, exactly as when its row says "started"); the waiting records are written
   *   before it runs instead (`attemptStarted`).
   * - Every write takes the waiting records with it, in one transaction (`journalPutMany`).
   * - Writes also happen before plugin code runs, when the loop ends, when the turn fails
   *   (`flush`), and before a model call only when a model's answer is waiting
   *   (`beforeModelCall`), so a crash re-asks at most one model call.
   *
   * So a round trip (model answer, one tool call) is two transactions: [the previous round's
   * bookkeeping, the environment, the answer, the attempt's "started"] before the tool runs,
   * and [the attempt's completion] after it. A completed effect that reaches outside (a model
   * call, a tool) is on disk before the next one starts; a crash during a model call re-runs
   * only in-process bookkeeping (its tools replay from their completed records).
   */
  private readonly deferred = new Map<string, JournalEntry[]>();
  /** Turns whose waiting records include a model's answer (`StepOptions.answer`). */
  private readonly answers = new Set<string>();

  record(
    ids: { readonly sessionId: string; readonly turnId: string },
    key: string,
    hash: string,
    status: "started" | "completed",
    outcome?: unknown,
    defer = false,
    answer = false,
  ): Effect.Effect<void, StoreError> {
    const store = this.store;
    if (!store) return Effect.void;
    return Effect.clockWith((clock) => {
      const now = clock.unsafeCurrentTimeMillis();
      const { sessionId, turnId } = ids;
      const entry: JournalEntry =
        outcome !== undefined
          ? { key, sessionId, turnId, hash, status, outcome, updatedAt: now }
          : { key, sessionId, turnId, hash, status, updatedAt: now };
      if (defer) {
        this.queue(entry, answer);
        return Effect.void;
      }
      const waiting = this.deferred.get(ids.turnId);
      if (!waiting) return store.journalPut(entry);
      const answered = this.take(ids.turnId);
      return this.write(store, [...waiting, entry]).pipe(
        // not written: the waiting records wait again (a later flush retries them)
        Effect.tapError(() => Effect.sync(() => this.requeue(ids.turnId, waiting, answered))),
      );
    });
  }

  /** Queue a record to wait for the turn's next write (see `deferred`). */
  private queue(entry: JournalEntry, answer: boolean): void {
    const waiting = this.deferred.get(entry.turnId);
    if (waiting) waiting.push(entry);
    else this.deferred.set(entry.turnId, [entry]);
    if (answer) this.answers.add(entry.turnId);
  }

  /** Write the turn's deferred records now (one transaction where the store has one). */
  flush(turnId: string): Effect.Effect<void, StoreError> {
    const store = this.store;
    const waiting = this.deferred.get(turnId);
    if (!store || !waiting) return Effect.void;
    const answered = this.take(turnId);
    return this.write(store, waiting).pipe(
      Effect.tapError(() => Effect.sync(() => this.requeue(turnId, waiting, answered))),
    );
  }

  /**
   * Before a model call: write the turn's deferred records if a model's answer is among them
   * (so a crash costs at most the call about to be made); otherwise they wait for the next
   * write — the environment and bookkeeping a crash re-runs in process (see `deferred`).
   */
  beforeModelCall(turnId: string): Effect.Effect<void, StoreError> {
    return this.answers.has(turnId) ? this.flush(turnId) : Effect.void;
  }

  /** A model's answer is among the turn's waiting records (`beforeModelCall` would write them). */
  answerWaiting(turnId: string): boolean {
    return this.answers.has(turnId);
  }

  /**
   * Before a tool attempt runs: a non-idempotent one records "started" (with the waiting
   * records, in one transaction); an idempotent one writes only the waiting records (no row
   * of its own: a cut-off attempt runs again whether or not its row says "started").
   */
  attemptStarted(
    ids: JournalIds,
    key: string,
    hash: string,
    idempotent: boolean,
  ): Effect.Effect<void, StoreError> {
    return idempotent ? this.flush(ids.turnId) : this.record(ids, key, hash, "started");
  }

  /** Take the turn's waiting records off the queue (they are being written); whether an answer was among them. */
  private take(turnId: string): boolean {
    this.deferred.delete(turnId);
    return this.answers.delete(turnId);
  }

  private requeue(turnId: string, entries: readonly JournalEntry[], answered: boolean): void {
    const later = this.deferred.get(turnId) ?? [];
    this.deferred.set(turnId, [...entries, ...later]);
    if (answered) this.answers.add(turnId);
  }

  /** Drop the turn's deferred records: it committed, and the commit deletes its journal. */
  discard(turnId: string): void {
    this.take(turnId);
  }

  private write(store: SessionStoreShape, entries: readonly JournalEntry[]): Effect.Effect<void, StoreError> {
    if (store.journalPutMany) return store.journalPutMany(entries);
    if (entries.length === 1) return store.journalPut(entries[0]!);
    return Effect.forEach(entries, (e) => store.journalPut(e), { discard: true });
  }

  /**
   * Run `effect` once per key: a completed record with the same hash is returned instead.
   * Give the `schema` of what it records: the value is encoded with it before it is
   * written and a recorded outcome is decoded with it on replay (one that does not fit
   * is a `StoreError` naming the key). The older shape — `encode`/`decode` functions,
   * or none for JSON values — still works.
   */
  once<A, I, E, R>(
    ids: { readonly sessionId: string; readonly turnId: string },
    key: string,
    envelope: unknown,
    effect: Effect.Effect<A, E, R>,
    schema: Schema.Schema<A, I>,
  ): Effect.Effect<Recorded<A>, E | JournalMismatch | StoreError, R>;
  once<A, E, R>(
    ids: { readonly sessionId: string; readonly turnId: string },
    key: string,
    envelope: unknown,
    effect: Effect.Effect<A, E, R>,
    encode?: (a: A) => unknown,
    decode?: (u: unknown) => A,
  ): Effect.Effect<Recorded<A>, E | JournalMismatch | StoreError, R>;
  once<A, E, R>(
    ids: { readonly sessionId: string; readonly turnId: string },
    key: string,
    envelope: unknown,
    effect: Effect.Effect<A, E, R>,
    // biome-ignore lint/suspicious/noExplicitAny: the overloads fix the encoded type
    encodeOrSchema?: ((a: A) => unknown) | Schema.Schema<A, any>,
    decode: (u: unknown) => A = (u) => u as A,
  ): Effect.Effect<Recorded<A>, E | JournalMismatch | StoreError, R> {
    return this.run(ids, key, envelope, effect, false, encodeOrSchema, decode);
  }

  /**
   * `once` for an effect with no consequence outside the process: its record waits for the
   * turn's next write (see `deferred`). JSON values only, written as they are; `schema` checks
   * a recorded outcome on replay (one that does not fit is a `StoreError` naming the key) —
   * decoding only on replay keeps the schema off the per-step path.
   */
  onceDeferred<A, E, R>(
    ids: { readonly sessionId: string; readonly turnId: string },
    key: string,
    envelope: unknown,
    effect: Effect.Effect<A, E, R>,
    // biome-ignore lint/suspicious/noExplicitAny: any encoded form: only decoding is used
    schema?: Schema.Schema<A, any>,
    options?: StepOptions,
  ): Effect.Effect<Recorded<A>, E | JournalMismatch | StoreError, R> {
    if (!schema) return this.run(ids, key, envelope, effect, true, undefined, undefined, options);
    // the decoder is compiled on the first replay of this schema, not per step
    const replayed = (u: unknown): A =>
      Either.getOrThrowWith(
        replayDecoder(schema as Schema.Schema<unknown, unknown>)(u) as Either.Either<
          A,
          ParseResult.ParseError
        >,
        (e) => unfit(key, "recorded outcome", e),
      );
    return this.run(ids, key, envelope, effect, true, undefined, replayed, options);
  }

  private run<A, E, R>(
    ids: { readonly sessionId: string; readonly turnId: string },
    key: string,
    envelope: unknown,
    effect: Effect.Effect<A, E, R>,
    defer: boolean,
    // biome-ignore lint/suspicious/noExplicitAny: the overloads of `once` fix the encoded type
    encodeOrSchema?: ((a: A) => unknown) | Schema.Schema<A, any>,
    decode: (u: unknown) => A = (u) => u as A,
    options?: StepOptions,
  ): Effect.Effect<Recorded<A>, E | JournalMismatch | StoreError, R> {
    if (this.backend)
      return this.runOnBackend(this.backend, ids, key, envelope, effect, encodeOrSchema, decode, options);
    if (!this.store) return Effect.map(effect, (value) => ({ value, replayed: false }));
    if (defer && !Schema.isSchema(encodeOrSchema) && this.fresh.has(ids.turnId)) {
      // the per-step path: a turn begun here has nothing recorded to find — run, queue the record
      const hash = Journal.hash(envelope);
      const encode = encodeOrSchema as ((a: A) => unknown) | undefined;
      const answer = options?.answer === true;
      return Effect.clockWith((clock) =>
        Effect.map(effect, (value) => {
          const outcome = encode ? encode(value) : value;
          const { sessionId, turnId } = ids;
          const updatedAt = clock.unsafeCurrentTimeMillis();
          this.queue(
            outcome !== undefined
              ? { key, sessionId, turnId, hash, status: "completed", outcome, updatedAt }
              : { key, sessionId, turnId, hash, status: "completed", updatedAt },
            answer,
          );
          return { value, replayed: false };
        }),
      );
    }
    let codec: Codec<A>;
    if (Schema.isSchema(encodeOrSchema)) codec = codecOf(encodeOrSchema as Schema.Schema<A, unknown>, key);
    else {
      const encode = (encodeOrSchema as ((a: A) => unknown) | undefined) ?? ((a: A) => a);
      codec = {
        encode: (a) => Effect.sync(() => encode(a)),
        // a decoder may throw a StoreError (a recorded outcome that does not fit): a typed failure
        decode: (u) =>
          Effect.try({
            try: () => decode(u),
            catch: (e) =>
              e instanceof StoreError
                ? e
                : new StoreError({
                    message: `journal entry ${key}: ${e instanceof Error ? e.message : String(e)}`,
                  }),
          }),
      };
    }
    const hash = Journal.hash(envelope);
    return Effect.gen(this, function* () {
      const entry = yield* this.lookup(key, ids.turnId);
      yield* this.check(entry, key, hash);
      if (entry?.status === "completed") return { value: yield* codec.decode(entry.outcome), replayed: true };
      const value = yield* effect;
      yield* this.record(
        ids,
        key,
        hash,
        "completed",
        yield* codec.encode(value),
        defer,
        options?.answer === true,
      );
      return { value, replayed: false };
    });
  }

  private runOnBackend<A, E, R>(
    backend: JournalBackend,
    ids: JournalIds,
    key: string,
    envelope: unknown,
    effect: Effect.Effect<A, E, R>,
    // biome-ignore lint/suspicious/noExplicitAny: the overloads of `once` fix the encoded type
    encodeOrSchema: ((a: A) => unknown) | Schema.Schema<A, any> | undefined,
    decode: (u: unknown) => A,
    options: StepOptions | undefined,
  ): Effect.Effect<Recorded<A>, E | JournalMismatch | StoreError, R> {
    const codec = backendCodec(key, encodeOrSchema, decode);
    const hash = Journal.hash(envelope);
    return Effect.gen(function* () {
      const context = yield* Effect.context<R>();
      let fresh: A | undefined;
      let ran = false;
      const run = Effect.provide(
        Effect.flatMap(effect, (value) => {
          fresh = value;
          ran = true;
          return codec.encode(value);
        }),
        context,
      );
      const r = yield* backend.step(ids, key, hash, run, options);
      if (ran && !r.replayed) return { value: fresh as A, replayed: false };
      return { value: yield* codec.decode(r.outcome), replayed: true };
    });
  }
}

/** `Journal.run` on a `JournalBackend`: encode before recording, decode a replayed outcome. */
function backendCodec<A>(
  key: string,
  // biome-ignore lint/suspicious/noExplicitAny: the overloads of `once` fix the encoded type
  encodeOrSchema: ((a: A) => unknown) | Schema.Schema<A, any> | undefined,
  decode: (u: unknown) => A,
): Codec<A> {
  if (Schema.isSchema(encodeOrSchema)) return codecOf(encodeOrSchema as Schema.Schema<A, unknown>, key);
  const encode = (encodeOrSchema as ((a: A) => unknown) | undefined) ?? ((a: A) => a);
  return {
    encode: (a) => Effect.sync(() => encode(a)),
    decode: (u) =>
      Effect.try({
        try: () => decode(u),
        catch: (e) =>
          e instanceof StoreError
            ? e
            : new StoreError({
                message: `journal entry ${key}: ${e instanceof Error ? e.message : String(e)}`,
              }),
      }),
  };
}

/**
 * The journal as a service. `LashRuntime` uses the one in its context when there
 * is one, otherwise it builds one over its `SessionStore` (off with `journal: false`).
 */
export class EffectJournal extends Context.Tag("@lash/core/EffectJournal")<EffectJournal, Journal>() {
  /** Records into the `SessionStore` (SQLite: the `journal` table). */
  static readonly layer: Layer.Layer<EffectJournal, never, SessionStore> = Layer.effect(
    EffectJournal,
    Effect.map(SessionStore, (store) => new Journal(store)),
  );
  /** Records nothing: no crash-resume (in-memory hosts, benchmarks). */
  static readonly disabled: Layer.Layer<EffectJournal> = Layer.succeed(EffectJournal, new Journal(undefined));
}
