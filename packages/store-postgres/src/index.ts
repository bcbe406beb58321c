/**
 * @lash/store-postgres — the lash SessionStore on Postgres: one database that
 * several worker processes share (one writer per session through the lease and
 * the revision compare-and-swap), plus a turn-event log any worker can follow.
 */
export {
  type FollowOptions,
  type NewTurnEvent,
  TURN_EVENTS_CHANNEL,
  type TurnEvent,
  type TurnEvents,
} from "./events.ts";
export { POSTGRES_SCHEMA_VERSION, postgresMigrations } from "./schema.ts";
export {
  makePostgresStore,
  PostgresStore,
  type PostgresStoreOptions,
  type PostgresStoreShape,
  redactUrl,
} from "./store.ts";
