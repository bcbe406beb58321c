import { Deferred, Duration, Effect, Fiber, Queue } from "effect";
import type { TraceRecord } from "./schema.ts";

/**
 * A trace sink. `write` receives redacted records in order, in batches;
 * `flush` makes what was written durable (the recorder calls it at the end of
 * every turn); `close` releases resources. Each may throw or reject: the
 * recorder counts the failure and goes on.
 */
export interface TraceSink {
  readonly name: string;
  write(records: readonly TraceRecord[]): void | Promise<void>;
  flush?(): void | Promise<void>;
  close?(): void | Promise<void>;
}

export interface SinkStats {
  readonly name: string;
  /** Records handed to `write` successfully. */
  readonly written: number;
  /** Records dropped because the sink's queue was full (or the recorder was closed). */
  readonly dropped: number;
  /** Records lost in a `write` that failed or timed out. */
  readonly failed: number;
  /** Failed or timed-out `flush`/`close` calls. */
  readonly flushFailures: number;
  readonly lastError?: string;
}

export interface IsolationOptions {
  /** Records waiting per sink before new ones are dropped (default 10,000). */
  readonly queueLimit?: number;
  /** Longest a single `write` may take before it counts as failed (default 2,000 ms). */
  readonly writeTimeoutMs?: number;
  /** Longest `flush()` / `close()` wait for a sink (default 2,000 ms). */
  readonly flushTimeoutMs?: number;
}

type Item =
  | { readonly _tag: "records"; readonly records: readonly TraceRecord[] }
  | { readonly _tag: "flush"; readonly done: Deferred.Deferred<void> };

function message(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/**
 * A sink behind a bounded queue drained by its own fiber: `push` never blocks
 * and never throws, a slow or failing sink loses records (counted) instead of
 * holding the caller, and `flush`/`close` wait at most `flushTimeoutMs`.
 */
export class IsolatedSink {
  private readonly queue: Queue.Queue<Item>;
  private readonly fiber: Fiber.RuntimeFiber<never>;
  private pending = 0;
  private closed = false;
  private written = 0;
  private dropped = 0;
  private failed = 0;
  private flushFailures = 0;
  private lastError: string | undefined;
  private readonly limit: number;
  private readonly writeTimeout: Duration.Duration;
  private readonly flushTimeout: Duration.Duration;

  readonly sink: TraceSink;

  constructor(sink: TraceSink, options: IsolationOptions = {}) {
    this.sink = sink;
    this.limit = options.queueLimit ?? 10_000;
    this.writeTimeout = Duration.millis(options.writeTimeoutMs ?? 2_000);
    this.flushTimeout = Duration.millis(options.flushTimeoutMs ?? 2_000);
    this.queue = Effect.runSync(Queue.unbounded<Item>());
    const call = (f: () => void | Promise<void>, timeout: Duration.Duration) =>
      Effect.tryPromise({ try: async () => f(), catch: (e) => e }).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () => new Error(`${sink.name}: no answer within ${Duration.toMillis(timeout)} ms`),
        }),
      );
    const writeBatch = (batch: readonly TraceRecord[]) =>
      call(() => sink.write(batch), this.writeTimeout).pipe(
        Effect.match({
          onFailure: (e) => {
            this.failed += batch.length;
            this.lastError = message(e);
          },
          onSuccess: () => {
            this.written += batch.length;
          },
        }),
        Effect.ensuring(
          Effect.sync(() => {
            this.pending -= batch.length;
          }),
        ),
      );
    const flushSink = sink.flush
      ? call(() => sink.flush!(), this.flushTimeout).pipe(
          Effect.catchAll((e) =>
            Effect.sync(() => {
              this.flushFailures++;
              this.lastError = message(e);
            }),
          ),
        )
      : Effect.void;
    const loop = Effect.gen(this, function* () {
      const items = yield* Queue.takeBetween(this.queue, 1, 256);
      let batch: TraceRecord[] = [];
      for (const item of items) {
        if (item._tag === "records") {
          for (const r of item.records) batch.push(r);
          continue;
        }
        if (batch.length) yield* writeBatch(batch);
        batch = [];
        yield* flushSink;
        yield* Deferred.succeed(item.done, undefined);
      }
      if (batch.length) yield* writeBatch(batch);
    }).pipe(Effect.forever);
    this.fiber = Effect.runFork(loop);
  }

  /** Queue records for the sink. Never blocks, never throws. */
  push(records: readonly TraceRecord[]): void {
    if (records.length === 0) return;
    if (this.closed || this.pending + records.length > this.limit) {
      this.dropped += records.length;
      return;
    }
    this.pending += records.length;
    Queue.unsafeOffer(this.queue, { _tag: "records", records });
  }

  /** Write everything queued so far and flush the sink; resolves within `flushTimeoutMs`, never rejects. */
  flush(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return Effect.runPromise(
      Effect.gen(this, function* () {
        const done = yield* Deferred.make<void>();
        Queue.unsafeOffer(this.queue, { _tag: "flush", done });
        const r = yield* Deferred.await(done).pipe(Effect.timeoutOption(this.flushTimeout));
        if (r._tag === "None") {
          this.flushFailures++;
          this.lastError = `${this.sink.name}: flush did not finish within ${Duration.toMillis(this.flushTimeout)} ms`;
        }
      }),
    );
  }

  /** Flush, stop the drain fiber and close the sink (bounded). */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    const close = this.sink.close;
    await Effect.runPromise(
      Effect.gen(this, function* () {
        yield* Fiber.interrupt(this.fiber);
        if (!close) return;
        yield* Effect.tryPromise({ try: async () => close.call(this.sink), catch: (e) => e }).pipe(
          Effect.timeoutFail({ duration: this.flushTimeout, onTimeout: () => new Error("close timed out") }),
          Effect.catchAll((e) =>
            Effect.sync(() => {
              this.flushFailures++;
              this.lastError = message(e);
            }),
          ),
        );
      }),
    );
  }

  stats(): SinkStats {
    return {
      name: this.sink.name,
      written: this.written,
      dropped: this.dropped,
      failed: this.failed,
      flushFailures: this.flushFailures,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }
}

/**
 * One sink writing to several: every child gets every batch (concurrently);
 * one child's failure does not stop the others (the fan-out then reports one
 * aggregated error). For independent queues, give the recorder the sinks as
 * separate entries instead.
 */
export function fanout(...sinks: readonly TraceSink[]): TraceSink {
  const all = async (f: (s: TraceSink) => void | Promise<void>) => {
    const results = await Promise.allSettled(sinks.map(async (s) => f(s)));
    const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    if (errors.length) throw new AggregateError(errors, errors.map(message).join("; "));
  };
  return {
    name: `fanout(${sinks.map((s) => s.name).join(", ")})`,
    write: (records) => all((s) => s.write(records)),
    flush: () => all((s) => s.flush?.()),
    close: () => all((s) => s.close?.()),
  };
}

/** A sink keeping records in memory (tests, in-process viewers). */
export function memorySink(name = "memory"): TraceSink & { readonly records: TraceRecord[] } {
  const records: TraceRecord[] = [];
  return {
    name,
    records,
    write: (batch) => {
      records.push(...batch);
    },
  };
}
