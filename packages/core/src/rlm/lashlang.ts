/**
 * `@lash/lashlang` (the evaluator and its parser, chevrotain) loaded on first RLM use rather than
 * when `@lash/core` is imported: a standard-mode host never pays for it. Every RLM entry point that
 * is an Effect (the `rlm` plugin's restore at turn start, the executor) yields `loadLashlang` first;
 * the synchronous code after it (frame states, previews) reads the loaded module with `lashlang()`.
 */
import type * as Lashlang from "@lash/lashlang";
import * as Effect from "effect/Effect";

let loaded: typeof Lashlang | undefined;

/** Load `@lash/lashlang` once per process (later calls return the loaded module at once). */
export const loadLashlang: Effect.Effect<typeof Lashlang> = Effect.suspend(() =>
  loaded
    ? Effect.succeed(loaded)
    : Effect.promise(() => import("@lash/lashlang")).pipe(
        Effect.tap((m) =>
          Effect.sync(() => {
            loaded = m;
          }),
        ),
      ),
);

/** The loaded module; throws when no RLM entry point has loaded it yet (a bug in the caller). */
export function lashlang(): typeof Lashlang {
  if (!loaded)
    throw new Error(
      "@lash/lashlang is not loaded yet: RLM state is used before the rlm plugin's restore or the executor ran `loadLashlang` (a bug in @lash/core's RLM mode)",
    );
  return loaded;
}
