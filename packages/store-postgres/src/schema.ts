// The Postgres schema: an ordered list of forward migrations and the version the
// code writes (kept in `lash_meta`). Migrations run in one transaction under an
// advisory lock, so several workers starting at once migrate exactly once.

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = 1;

/** `pg_advisory_xact_lock` key that serialises migrations across workers. */
export const MIGRATION_LOCK = 0x6c617368; // "lash"

/**
 * Migration `i` takes the database from version `i` to `i + 1`. Append only:
 * never edit a migration that has shipped.
 */
export const postgresMigrations: readonly (readonly string[])[] = [
  // 1: everything the SessionStore contract keeps, plus the turn-event log.
  [
    `CREATE TABLE sessions (
      seq BIGSERIAL UNIQUE,
      id TEXT PRIMARY KEY,
      title TEXT,
      cwd TEXT,
      model TEXT NOT NULL,
      mode TEXT NOT NULL,
      system_prompt TEXT,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL,
      leaf_id TEXT,
      head_revision BIGINT NOT NULL,
      turn_count BIGINT NOT NULL,
      frame_id TEXT NOT NULL,
      origin_session TEXT,
      origin_node TEXT,
      parent_session TEXT,
      parent_call TEXT,
      depth INTEGER,
      state_json TEXT NOT NULL,
      deleted BOOLEAN NOT NULL DEFAULT FALSE
    )`,
    "CREATE INDEX sessions_updated ON sessions(updated_at)",
    "CREATE INDEX sessions_parent ON sessions(parent_session) WHERE parent_session IS NOT NULL",
    "CREATE INDEX sessions_origin ON sessions(origin_session) WHERE origin_session IS NOT NULL",
    `CREATE TABLE nodes (
      seq BIGSERIAL PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      session_id TEXT NOT NULL REFERENCES sessions(id),
      parent_id TEXT,
      frame_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      turn_id TEXT,
      payload_json TEXT,
      created_at BIGINT NOT NULL
    )`,
    "CREATE INDEX nodes_session ON nodes(session_id, seq)",
    `CREATE TABLE turn_commits (
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      hash TEXT NOT NULL,
      head_revision BIGINT NOT NULL,
      leaf_id TEXT,
      PRIMARY KEY (session_id, turn_id)
    )`,
    `CREATE TABLE usage (
      seq BIGSERIAL PRIMARY KEY,
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      source TEXT NOT NULL,
      model TEXT NOT NULL,
      input BIGINT,
      output BIGINT,
      reasoning BIGINT,
      cache_read BIGINT,
      cache_write BIGINT,
      cost_usd DOUBLE PRECISION
    )`,
    "CREATE INDEX usage_session ON usage(session_id, seq)",
    `CREATE TABLE journal (
      seq BIGSERIAL UNIQUE,
      key TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      hash TEXT NOT NULL,
      status TEXT NOT NULL,
      outcome_json TEXT,
      updated_at BIGINT NOT NULL
    )`,
    "CREATE INDEX journal_turn ON journal(session_id, turn_id)",
    `CREATE TABLE pending_turns (
      session_id TEXT PRIMARY KEY REFERENCES sessions(id),
      turn_id TEXT NOT NULL,
      input_json TEXT,
      expected_revision BIGINT NOT NULL,
      started_at BIGINT NOT NULL,
      resume_attempts INTEGER NOT NULL DEFAULT 0
    )`,
    `CREATE TABLE session_leases (
      session_id TEXT PRIMARY KEY,
      holder TEXT NOT NULL,
      pid INTEGER NOT NULL,
      host TEXT NOT NULL,
      acquired_at BIGINT NOT NULL,
      heartbeat_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL
    )`,
    `CREATE TABLE tool_outputs (
      seq BIGSERIAL UNIQUE,
      session_id TEXT NOT NULL,
      call_id TEXT NOT NULL,
      provider_call_id TEXT,
      text TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      PRIMARY KEY (session_id, call_id)
    )`,
    "CREATE INDEX tool_outputs_provider ON tool_outputs(session_id, provider_call_id)",
    `CREATE TABLE artifacts (
      id TEXT PRIMARY KEY,
      size BIGINT NOT NULL,
      media_type TEXT NOT NULL,
      chunks INTEGER NOT NULL,
      created_at BIGINT NOT NULL
    )`,
    `CREATE TABLE artifact_chunks (
      artifact_id TEXT NOT NULL,
      idx INTEGER NOT NULL,
      data BYTEA NOT NULL,
      PRIMARY KEY (artifact_id, idx)
    )`,
    `CREATE TABLE artifact_refs (
      artifact_id TEXT NOT NULL,
      node_id TEXT NOT NULL,
      PRIMARY KEY (artifact_id, node_id)
    )`,
    "CREATE INDEX artifact_refs_node ON artifact_refs(node_id)",
    // the live log of a turn's events, readable from every worker (see events.ts)
    `CREATE TABLE turn_events (
      seq BIGSERIAL PRIMARY KEY,
      session_id TEXT NOT NULL,
      turn_id TEXT NOT NULL,
      type TEXT NOT NULL,
      at BIGINT NOT NULL,
      data_json TEXT NOT NULL
    )`,
    "CREATE INDEX turn_events_session ON turn_events(session_id, seq)",
  ],
];
