import { Schema } from "effect";

/**
 * The JSON export format (`format: "lash-session"`). Additive changes only:
 * new fields are optional; a rename or removal bumps `EXPORT_SCHEMA_VERSION`
 * and `importSession` refuses versions newer than it knows.
 *
 * Store counters (`headRevision`, `turnCount`) and node insertion numbers
 * (`seq`) are not exported: they are properties of a store, not of the session.
 */
export const EXPORT_SCHEMA_VERSION = 1 as const;

const UsageSchema = Schema.Struct({
  input: Schema.optional(Schema.Number),
  output: Schema.optional(Schema.Number),
  reasoning: Schema.optional(Schema.Number),
  cacheRead: Schema.optional(Schema.Number),
  cacheWrite: Schema.optional(Schema.Number),
});

export const ExportedNode = Schema.Struct({
  id: Schema.String,
  parentId: Schema.NullOr(Schema.String),
  frameId: Schema.String,
  kind: Schema.Literal("message", "protocol", "plugin", "frame"),
  turnId: Schema.NullOr(Schema.String),
  /** A `Message` for `message` nodes; protocol/plugin/frame payloads as stored. */
  payload: Schema.Unknown,
  createdAt: Schema.Number,
  /** The node belongs to the session this one was forked from (the shared prefix of a fork). */
  inherited: Schema.optional(Schema.Boolean),
});
export type ExportedNode = typeof ExportedNode.Type;

export const ExportedUsageRow = Schema.Struct({
  turnId: Schema.String,
  source: Schema.String,
  model: Schema.String,
  usage: UsageSchema,
  costUsd: Schema.optional(Schema.Number),
});
export type ExportedUsageRow = typeof ExportedUsageRow.Type;

export const ExportedSessionInfo = Schema.Struct({
  id: Schema.String,
  title: Schema.optional(Schema.String),
  cwd: Schema.optional(Schema.String),
  model: Schema.String,
  mode: Schema.Literal("standard", "rlm"),
  systemPrompt: Schema.optional(Schema.String),
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  leafId: Schema.NullOr(Schema.String),
  frameId: Schema.String,
  origin: Schema.optional(Schema.Struct({ sessionId: Schema.String, nodeId: Schema.NullOr(Schema.String) })),
  parentLink: Schema.optional(
    Schema.Struct({ sessionId: Schema.String, callId: Schema.String, depth: Schema.Number }),
  ),
  state: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
});
export type ExportedSessionInfo = typeof ExportedSessionInfo.Type;

/**
 * An artifact a node of the session refers to (`ref: "artifact:<id>"`), embedded
 * whole: `data` is its bytes in base64, `id` their sha256 (checked on import).
 */
export const ExportedArtifact = Schema.Struct({
  id: Schema.String,
  mediaType: Schema.String,
  size: Schema.Number,
  data: Schema.String,
});
export type ExportedArtifact = typeof ExportedArtifact.Type;

export interface ExportedSession {
  readonly format: "lash-session";
  readonly version: typeof EXPORT_SCHEMA_VERSION;
  readonly session: ExportedSessionInfo;
  /** Every node of every branch, in insertion order (a fork's inherited prefix first). */
  readonly nodes: readonly ExportedNode[];
  readonly usage: readonly ExportedUsageRow[];
  /** Subagent sessions spawned by this one's tool calls (`session.parentLink.callId`), recursively. */
  readonly children: readonly ExportedSession[];
  /** The artifacts this session's nodes refer to (absent when there are none). */
  readonly artifacts?: readonly ExportedArtifact[];
}

interface ExportedSessionEncoded {
  readonly format: "lash-session";
  readonly version: typeof EXPORT_SCHEMA_VERSION;
  readonly session: typeof ExportedSessionInfo.Encoded;
  readonly nodes: readonly (typeof ExportedNode.Encoded)[];
  readonly usage: readonly (typeof ExportedUsageRow.Encoded)[];
  readonly children: readonly ExportedSessionEncoded[];
  readonly artifacts?: readonly (typeof ExportedArtifact.Encoded)[];
}

export const ExportedSession: Schema.Schema<ExportedSession, ExportedSessionEncoded> = Schema.Struct({
  format: Schema.Literal("lash-session"),
  version: Schema.Literal(EXPORT_SCHEMA_VERSION),
  session: ExportedSessionInfo,
  nodes: Schema.Array(ExportedNode),
  usage: Schema.Array(ExportedUsageRow),
  children: Schema.Array(
    Schema.suspend((): Schema.Schema<ExportedSession, ExportedSessionEncoded> => ExportedSession),
  ),
  artifacts: Schema.optional(Schema.Array(ExportedArtifact)),
});
