// An Effect SqlClient over better-sqlite3, owned by @lash/core so that the
// SQLite binding is OUR direct dependency (better-sqlite3 13, which ships
// N-API prebuilds for Node 22 and 24 inside its npm tarball).
//
// Why not `@effect/sql-sqlite-node/SqliteClient`: that package depends on
// `better-sqlite3@^12`, which has no bundled prebuilds (its install script
// downloads one or compiles with node-gyp). A host installing @lash/core with
// plain npm would get v12 nested under @effect/sql-sqlite-node and the store
// would fail to open; only a root `overrides` entry could fix it, and a
// library cannot set that for its host.
//
// Adapted from @effect/sql-sqlite-node 0.53.0 `SqliteClient.make` (MIT,
// Copyright (c) 2023-present The Contributors, Effect-TS/effect), keeping what
// the store uses: one connection behind a one-permit semaphore, a prepared
// statement cache, typed SqlErrors.
import * as Reactivity from "@effect/experimental/Reactivity";
import * as Client from "@effect/sql/SqlClient";
import type { Connection } from "@effect/sql/SqlConnection";
import { SqlError } from "@effect/sql/SqlError";
import * as Statement from "@effect/sql/Statement";
import type Sqlite from "better-sqlite3";
import * as Cache from "effect/Cache";
import * as Context from "effect/Context";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Scope from "effect/Scope";

export interface SqliteClientConfig {
  readonly prepareCacheSize?: number | undefined;
  readonly prepareCacheTTL?: Duration.DurationInput | undefined;
}

/**
 * An `SqlClient` over `db`, an open better-sqlite3 handle that the caller owns (and closes).
 * The SqliteStore opens its database and reads paths with plain better-sqlite3 statements and
 * loads this module — @effect/sql and its Reactivity — only when a statement that is written
 * with the client first runs (a migration, a listing, a delete …; issue 16: a fresh process
 * opening a session does not pay for it).
 */
export const make = (
  db: Sqlite.Database,
  options: SqliteClientConfig = {},
): Effect.Effect<Client.SqlClient, never, Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const compiler = Statement.makeCompilerSqlite();

    const prepareCache = yield* Cache.make({
      capacity: options.prepareCacheSize ?? 200,
      timeToLive: options.prepareCacheTTL ?? Duration.minutes(10),
      lookup: (sql: string) =>
        Effect.try({
          try: () => db.prepare(sql),
          catch: (cause) => new SqlError({ cause, message: "Failed to prepare statement " }),
        }),
    });

    const runStatement = (statement: Sqlite.Statement, params: ReadonlyArray<unknown>, raw: boolean) =>
      Effect.withFiberRuntime<ReadonlyArray<object>, SqlError>((fiber) => {
        if (Context.get(fiber.currentContext, Client.SafeIntegers)) statement.safeIntegers(true);
        try {
          if (statement.reader) return Effect.succeed(statement.all(...params) as ReadonlyArray<object>);
          const result = statement.run(...params);
          return Effect.succeed(raw ? (result as unknown as ReadonlyArray<object>) : []);
        } catch (cause) {
          return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }));
        }
      });

    const run = (sql: string, params: ReadonlyArray<unknown>, raw = false) =>
      Effect.flatMap(prepareCache.get(sql), (s) => runStatement(s, params, raw));

    const runValues = (sql: string, params: ReadonlyArray<unknown>) =>
      Effect.acquireUseRelease(
        prepareCache.get(sql),
        (statement) =>
          Effect.try({
            try: () => {
              if (statement.reader) {
                statement.raw(true);
                return statement.all(...params) as ReadonlyArray<ReadonlyArray<unknown>>;
              }
              statement.run(...params);
              return [];
            },
            catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" }),
          }),
        (statement) => Effect.sync(() => statement.reader && statement.raw(false)),
      );

    const connection: Connection = {
      execute(sql, params, transformRows) {
        return transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params);
      },
      executeRaw(sql, params) {
        return run(sql, params, true);
      },
      executeValues(sql, params) {
        return runValues(sql, params);
      },
      executeUnprepared(sql, params, transformRows) {
        const effect = runStatement(db.prepare(sql), params ?? [], false);
        return transformRows ? Effect.map(effect, transformRows) : effect;
      },
      executeStream() {
        return Effect.dieMessage("executeStream not implemented");
      },
    };

    const semaphore = yield* Effect.makeSemaphore(1);
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection));
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(semaphore.take(1)),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1))),
        ),
        connection,
      ),
    );

    return yield* Client.make({
      acquirer,
      compiler,
      transactionAcquirer,
      spanAttributes: [["db.system.name", "sqlite"]],
    });
  });

/** The client and its `BEGIN IMMEDIATE` transaction combinator. */
export interface SqlParts {
  readonly sql: Client.SqlClient;
  readonly immediate: ReturnType<typeof immediateTransaction>;
}

/** `make` with its Reactivity provided, and `immediateTransaction` of the client. */
export const sqlParts = (db: Sqlite.Database): Effect.Effect<SqlParts> =>
  Effect.map(Effect.provide(make(db), Reactivity.layer), (sql) => ({
    sql,
    immediate: immediateTransaction(sql),
  }));

/**
 * `sql.withTransaction` issues a plain (deferred) `BEGIN`: a transaction that
 * reads, then writes, fails with SQLITE_BUSY when another connection wrote in
 * between. This is the same transaction combinator, from @effect/sql's public
 * `makeWithTransaction`, issuing `BEGIN IMMEDIATE` instead, so the write lock is
 * taken (waiting up to busy_timeout) before the first read. Statements inside
 * run on the reserved connection through the client's `TransactionConnection`.
 */
export function immediateTransaction(sql: Client.SqlClient) {
  const run = (conn: Connection, statement: string) => conn.executeUnprepared(statement, [], undefined);
  return Client.makeWithTransaction({
    transactionTag: Client.TransactionConnection,
    spanAttributes: [["db.system.name", "sqlite"]],
    acquireConnection: Effect.flatMap(Scope.make(), (scope) =>
      Effect.map(Scope.extend(sql.reserve, scope), (conn) => [scope, conn] as const),
    ),
    begin: (conn) => run(conn, "BEGIN IMMEDIATE"),
    savepoint: (conn, id) => run(conn, `SAVEPOINT effect_sql_${id}`),
    commit: (conn) => run(conn, "COMMIT"),
    // a BEGIN that failed (SQLITE_BUSY) left no transaction: its ROLLBACK error must not hide the BEGIN's
    rollback: (conn) => Effect.ignore(run(conn, "ROLLBACK")),
    rollbackSavepoint: (conn, id) => run(conn, `ROLLBACK TO SAVEPOINT effect_sql_${id}`),
  });
}
