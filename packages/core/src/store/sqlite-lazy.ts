// The public face of the SQLite store, loaded on first use: importing @lash/core does not
// load the SQLite driver (better-sqlite3, a native binding), @effect/sql or the store's own
// ~1,300 lines until a SqliteStore is opened (issue 16: what a host that never opens one —
// MemoryStore, Postgres — does not use is not paid for at import). The implementation is
// ./sqlite.ts; this file only defers it, with the same signatures.
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type * as Scope from "effect/Scope";
import {
  type SchemaTooNew,
  SessionStore,
  type SessionStoreShape,
  type StoreCorrupt,
  StoreError,
} from "../store.ts";
import type { SqliteStoreOptions } from "./sqlite.ts";

export type { SqliteStoreOptions } from "./sqlite.ts";
export { SQLITE_SCHEMA_VERSION } from "./sqlite-schema.ts";

type OpenError = SchemaTooNew | StoreCorrupt | StoreError;

let loading: Promise<typeof import("./sqlite.ts")> | undefined;

/** The implementation module, imported once (the first open pays for it). */
const implementation = Effect.tryPromise({
  try: () => {
    loading ??= import("./sqlite.ts");
    return loading;
  },
  catch: (cause) => {
    loading = undefined;
    return new StoreError({
      message: `could not load the SQLite store (better-sqlite3, a native module): ${cause instanceof Error ? cause.message : String(cause)} — reinstall lash (npm rebuild better-sqlite3) or use another store`,
      cause,
    });
  },
});

/**
 * Open (or create) the database, migrating it forward. A file written by a
 * newer lash is refused with `SchemaTooNew` and left byte-for-byte unchanged;
 * a file that is not SQLite, or is truncated or damaged, is `StoreCorrupt`.
 */
export const makeSqliteStore = (
  options: SqliteStoreOptions,
): Effect.Effect<SessionStoreShape, OpenError, Scope.Scope> =>
  Effect.flatMap(implementation, (m) => m.makeSqliteStore(options));

/** `SqliteStore.layer({ filename })`: the store over one database file, closed with the layer's scope. */
export const SqliteStore = {
  layer: (options: SqliteStoreOptions): Layer.Layer<SessionStore, OpenError> =>
    Layer.scoped(SessionStore, makeSqliteStore(options)),
} as const;
