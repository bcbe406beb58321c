// A promise view of a SessionStore, for scripts that do not run Effect
// themselves (benchmarks, maintenance tools). Each method returns a promise
// that rejects with the store's typed error (StoreConflict, SessionNotFound …).
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Scope from "effect/Scope";
import type { SessionStoreShape } from "../store.ts";
import { makeMemoryStore } from "./memory.ts";
import { makeSqliteStore, type SqliteStoreOptions } from "./sqlite-lazy.ts";

export type PromiseStore = {
  readonly [K in keyof SessionStoreShape]: SessionStoreShape[K] extends (
    ...args: infer A
  ) => Effect.Effect<infer R, infer _E, never>
    ? (...args: A) => Promise<R>
    : never;
};

export interface OpenedStore {
  readonly store: PromiseStore;
  /** The Effect shape, for callers that do run Effect. */
  readonly shape: SessionStoreShape;
  /** Close the database (a no-op for the memory store). */
  readonly close: () => Promise<void>;
}

function promised(shape: SessionStoreShape): PromiseStore {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(shape) as [
    string,
    (...a: unknown[]) => Effect.Effect<unknown, unknown>,
  ][]) {
    out[name] = (...args: unknown[]) =>
      Effect.runPromise(Effect.either(fn(...args))).then((r) => {
        if (r._tag === "Left") throw r.left;
        return r.right;
      });
  }
  return out as PromiseStore;
}

/** Open a SqliteStore; rejects with SchemaTooNew / StoreCorrupt / StoreError. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<OpenedStore> {
  const scope = Effect.runSync(Scope.make());
  const opened = await Effect.runPromise(Effect.either(Scope.extend(makeSqliteStore(options), scope)));
  if (opened._tag === "Left") {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    throw opened.left;
  }
  return {
    store: promised(opened.right),
    shape: opened.right,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  };
}

export async function openMemoryStore(): Promise<OpenedStore> {
  const shape = await Effect.runPromise(makeMemoryStore());
  return { store: promised(shape), shape, close: async () => {} };
}
