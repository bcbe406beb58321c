// RLM triggers fired by the daemon (issue 21): `triggers.register({ source: cron.Schedule(…),
// target, inputs })` in an RLM session stores a registration in the session's state
// (`state.rlm.triggers`); `lash serve` reads the registrations of the sessions it serves and
// fires each as a run of that session whose turn runs the target process (the RLM mode turns the
// firing input into a cell without a model call: core's rlm/triggers.ts `firingCell`).
//
// - Time comes from Effect's `Clock`. The firer looks at the sessions once a second (a new
//   registration is seen within a second) and claims every firing due since its last look.
// - Each firing has a dedup key `<session>/<trigger id>@<scheduled ISO time>`, claimed in the state
//   db's `trigger_firings` table with one `INSERT … ON CONFLICT DO NOTHING` (as loops do): whichever
//   daemon inserts the row starts the run; every other one skips it.
// - Firings scheduled while no daemon ran are not made up (a restarted firer starts from its start
//   time); a firing's run is an ordinary run (`GET /v1/sessions/<id>/runs`, its events).

import { dueFirings, firingText, LashRuntime, type TriggerRecord } from "@lash/core";
import type Database from "better-sqlite3";
import { Clock, Deferred, Duration, Effect, type Scope } from "effect";
import { OWNER_KEY } from "./access.ts";
import { Principal } from "./api.ts";
import { Host, RunManager, type RunManagerShape, StateDb } from "./services.ts";

/** How often the sessions' registrations are read again (ms). */
export const TRIGGER_POLL_MS = 1000;

interface TriggerRow {
  readonly id: string;
  readonly name: string;
  readonly source: { readonly cron: string; readonly timezone?: string };
  readonly enabled: boolean;
}

export function createTriggerTables(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS trigger_firings (
      key TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      trigger_id TEXT NOT NULL,
      scheduled_at INTEGER NOT NULL,
      claimed_at INTEGER NOT NULL,
      run_id TEXT,
      error TEXT
    );
  `);
}

export interface TriggerSource {
  /** The RLM sessions' registrations: `[sessionId, owner, triggers]`. */
  readonly sessions: () => Effect.Effect<
    readonly { readonly id: string; readonly owner: string; readonly triggers: readonly TriggerRow[] }[]
  >;
  /** Firings of `triggers` in (from, to]. */
  readonly due: (triggers: readonly TriggerRow[], from: number, to: number) => { id: string; at: number }[];
}

/** The firer: a fiber in the caller's scope that waits for `start()`. */
export const makeTriggerFirer = (
  db: Database.Database,
  source: TriggerSource,
  runs: Pick<RunManagerShape, "start">,
): Effect.Effect<{ readonly start: () => void }, never, Scope.Scope> =>
  Effect.gen(function* () {
    createTriggerTables(db);
    const claim = db.prepare(
      `INSERT INTO trigger_firings (key, session_id, trigger_id, scheduled_at, claimed_at)
       VALUES (@key, @session_id, @trigger_id, @scheduled_at, @claimed_at) ON CONFLICT(key) DO NOTHING`,
    );
    const save = db.prepare(`UPDATE trigger_firings SET run_id = ?, error = ? WHERE key = ?`);
    const gate = yield* Deferred.make<void>();
    const loop = Effect.gen(function* () {
      yield* Deferred.await(gate);
      let cursor = yield* Clock.currentTimeMillis;
      for (;;) {
        yield* Effect.sleep(Duration.millis(TRIGGER_POLL_MS));
        const now = yield* Clock.currentTimeMillis;
        for (const s of yield* source.sessions()) {
          for (const f of source.due(s.triggers, cursor, now)) {
            const key = `${s.id}/${f.id}@${new Date(f.at).toISOString()}`;
            const won =
              claim.run({ key, session_id: s.id, trigger_id: f.id, scheduled_at: f.at, claimed_at: now })
                .changes === 1;
            if (!won) continue;
            const started = yield* Effect.either(
              runs.start({
                sessionId: s.id,
                text: firingText(f.id, f.at),
                principal: new Principal({ name: s.owner, admin: false }),
              }),
            );
            if (started._tag === "Right") save.run(started.right.id, null, key);
            else
              save.run(null, JSON.stringify({ code: started.left.code, message: started.left.message }), key);
          }
        }
        cursor = now;
      }
    }).pipe(Effect.catchAllCause((cause) => Effect.logError("the trigger firer stopped", cause)));
    yield* Effect.forkScoped(loop);
    return { start: () => Effect.runSync(Deferred.succeed(gate, undefined)) };
  });

/** The daemon's firer over the sessions in its store (`dueFirings` of core decides the times). */
export const triggerFirer = Effect.gen(function* () {
  const host = yield* Host;
  const db = yield* StateDb;
  const runs = yield* RunManager;
  const source: TriggerSource = {
    sessions: () =>
      Effect.gen(function* () {
        const runtime = yield* host.runtime.runtimeEffect.pipe(Effect.orDie);
        const all = yield* Effect.provide(
          Effect.flatMap(LashRuntime, (rt) => rt.listSessions()),
          runtime,
        ).pipe(Effect.orDie);
        const out = [];
        for (const s of all) {
          const rlm = s.state.rlm as { triggers?: TriggerRow[] } | undefined;
          if (s.mode !== "rlm" || !rlm?.triggers || rlm.triggers.length === 0) continue;
          const owner = s.state[OWNER_KEY];
          out.push({ id: s.id, owner: typeof owner === "string" ? owner : "local", triggers: rlm.triggers });
        }
        return out;
      }),
    due: (triggers, from, to) =>
      dueFirings(triggers as readonly TriggerRecord[], from, to).map((d) => ({ id: d.record.id, at: d.at })),
  };
  return yield* makeTriggerFirer(db, source, runs);
});
