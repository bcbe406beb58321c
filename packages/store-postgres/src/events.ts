// The turn-event log: what a worker running a turn publishes (the same events the
// daemon's SSE streams carry: turnStarted, llmRequest, toolStarted, messages …) in
// the `turn_events` table, numbered by a database-wide `seq`, so that a reader on
// ANY worker can follow a live turn from a cursor. An append is one INSERT plus a
// `NOTIFY lash_turn_events, '<sessionId>'` in the same transaction; a follower LISTENs,
// waits until its own handshake notification comes back (LISTEN is in effect), reads
// from its cursor, and re-reads whenever woken, with a slow poll as a backstop.

import { randomUUID } from "node:crypto";
import type { SqlError } from "@effect/sql/SqlError";
import type * as PgClient from "@effect/sql-pg/PgClient";
import type { StoreError } from "@lash/core/internal";
import { Chunk, Deferred, Duration, Effect, Option, Queue, Stream } from "effect";

/** The channel every append notifies, with the session id as payload. */
export const TURN_EVENTS_CHANNEL = "lash_turn_events";

export interface TurnEvent {
  /** Database-wide, increasing: the cursor a follower resumes from (`Last-Event-ID`). */
  readonly seq: number;
  readonly sessionId: string;
  readonly turnId: string;
  readonly type: string;
  /** epoch ms */
  readonly at: number;
  readonly data: unknown;
}

export type NewTurnEvent = Omit<TurnEvent, "seq">;

export interface FollowOptions {
  /** Only events with a larger seq (default 0: from the start). */
  readonly after?: number;
  /** The backstop poll when no notification arrives (default 1000 ms). */
  readonly pollMs?: number;
}

export interface TurnEvents {
  /** Append events in order (one transaction, one notification); returns their seqs. */
  append(events: readonly NewTurnEvent[]): Effect.Effect<readonly number[], StoreError>;
  /** The session's events after `after`, oldest first (at most `limit`, default 1000). */
  read(sessionId: string, after: number, limit?: number): Effect.Effect<readonly TurnEvent[], StoreError>;
  /**
   * The session's events after the cursor, then every later one as it is appended
   * (by any worker), in seq order, each once. Never ends by itself: interrupt it.
   */
  follow(sessionId: string, options?: FollowOptions): Stream.Stream<TurnEvent, StoreError>;
  /** Drop a session's events up to and including `upTo` (retention; the caller decides when). */
  trim(sessionId: string, upTo: number): Effect.Effect<number, StoreError>;
}

interface EventRow {
  readonly seq: number;
  readonly session_id: string;
  readonly turn_id: string;
  readonly type: string;
  readonly at: number;
  readonly data_json: string;
}

const toEvent = (r: EventRow): TurnEvent => ({
  seq: r.seq,
  sessionId: r.session_id,
  turnId: r.turn_id,
  type: r.type,
  at: r.at,
  data: JSON.parse(r.data_json),
});

export function makeTurnEvents(
  sql: PgClient.PgClient,
  toStoreError: (e: SqlError) => StoreError,
): TurnEvents {
  const guard = <A>(effect: Effect.Effect<A, SqlError>) => Effect.mapError(effect, toStoreError);

  const read = (sessionId: string, after: number, limit = 1000) =>
    guard(
      Effect.map(
        sql<EventRow>`SELECT * FROM turn_events WHERE session_id = ${sessionId} AND seq > ${after}
          ORDER BY seq LIMIT ${limit}`,
        (rows) => rows.map(toEvent),
      ),
    );

  return {
    append: (events) =>
      events.length === 0
        ? Effect.succeed([])
        : guard(
            sql.withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql<{ seq: number }>`INSERT INTO turn_events ${sql.insert(
                  events.map((e) => ({
                    session_id: e.sessionId,
                    turn_id: e.turnId,
                    type: e.type,
                    at: e.at,
                    data_json: JSON.stringify(e.data ?? null),
                  })),
                )} RETURNING seq`;
                for (const s of new Set(events.map((e) => e.sessionId)))
                  yield* sql`SELECT pg_notify(${TURN_EVENTS_CHANNEL}, ${s})`;
                return rows.map((r) => r.seq).sort((a, b) => a - b);
              }),
            ),
          ),

    read,

    follow: (sessionId, options = {}) =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const wake = yield* Queue.sliding<void>(1);
          const ready = yield* Deferred.make<void>();
          const token = `ready:${randomUUID()}`;
          yield* sql.listen(TURN_EVENTS_CHANNEL).pipe(
            Stream.runForEach((payload) =>
              payload === token
                ? Deferred.succeed(ready, undefined)
                : payload === sessionId
                  ? Queue.offer(wake, undefined)
                  : Effect.void,
            ),
            Effect.ignore,
            Effect.forkScoped,
          );
          // LISTEN is in effect once our own notification comes back: from then on no append
          // is missed; the first read below runs after it (the poll is the backstop if the
          // handshake does not complete within 5 s)
          // (sent again every 50 ms: the listener fiber may not have issued its LISTEN yet)
          for (let i = 0; i < 100; i++) {
            yield* guard(sql`SELECT pg_notify(${TURN_EVENTS_CHANNEL}, ${token})`);
            const heard = yield* Effect.timeout(Deferred.await(ready), Duration.millis(50)).pipe(
              Effect.option,
            );
            if (Option.isSome(heard)) break;
          }
          const pollMs = Duration.millis(options.pollMs ?? 1000);
          let cursor = options.after ?? 0;
          return Stream.repeatEffectChunk(
            Effect.gen(function* () {
              const rows = yield* read(sessionId, cursor);
              if (rows.length === 0) {
                yield* Effect.ignore(Effect.timeout(Queue.take(wake), pollMs));
                return Chunk.empty<TurnEvent>();
              }
              cursor = rows[rows.length - 1]!.seq;
              return Chunk.fromIterable(rows);
            }),
          );
        }),
      ),

    trim: (sessionId, upTo) =>
      guard(
        Effect.map(
          sql<{
            seq: number;
          }>`DELETE FROM turn_events WHERE session_id = ${sessionId} AND seq <= ${upTo} RETURNING seq`,
          (rows) => rows.length,
        ),
      ),
  };
}
