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
import type * as Reactivity from "@effect/experimental/Reactivity";
import * as Client from "@effect/sql/SqlClient";
import type { Connection } from "@effect/sql/SqlConnection";
import { SqlError } from "@effect/sql/SqlError";
import * as Statement from "@effect/sql/Statement";
import Sqlite from "better-sqlite3";
import * as Cache from "effect/Cache";
import * as Context from "effect/Context";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Scope from "effect/Scope";

export interface SqliteClientConfig {
  readonly filename: string;
  readonly readonly?: boolean | undefined;
  readonly prepareCacheSize?: number | undefined;
  readonly prepareCacheTTL?: Duration.DurationInput | undefined;
  readonly disableWAL?: boolean | undefined;
}

const databases = new WeakMap<Client.SqlClient, Sqlite.Database>();

/**
 * The better-sqlite3 handle behind a client made by `make`, for the store's few hot
 * statements (prepared once, run without the statement compiler). Safe beside the
 * client's own use: the store's write transactions never yield between BEGIN and
 * COMMIT, so a statement run from another fiber cannot land inside one.
 */
export function databaseOf(client: Client.SqlClient): Sqlite.Database | undefined {
  return databases.get(client);
}

/** Open `config.filename` as an `SqlClient`; the database closes with the scope. */
export const make = (
  options: SqliteClientConfig,
): Effect.Effect<Client.SqlClient, never, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const compiler = Statement.makeCompilerSqlite();
    const scope = yield* Effect.scope;
    const db = new Sqlite(options.filename, { readonly: options.readonly ?? false });
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => db.close()),
    );
    if (options.disableWAL !== true) db.pragma("journal_mode = WAL");

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

    const client = yield* Client.make({
      acquirer,
      compiler,
      transactionAcquirer,
      spanAttributes: [["db.system.name", "sqlite"]],
    });
    databases.set(client, db);
    return client;
  });
