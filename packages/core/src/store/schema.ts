// The stored shapes of the SessionStore as Effect Schemas: graph nodes (a union
// by kind), journal entries, usage rows, pending turns and turn commits. The
// TypeScript interfaces in `store.ts` stay what the rest of the code uses; a
// type-level test (test/store/schema.test.ts) holds each schema's `Type` to its
// interface. Stores decode what they read through these schemas, compiled once
// here, so a row that does not fit is a clear error naming the row, never a
// value of the wrong shape let loose in the runtime.
import { Message, Usage } from "@lash/sansio";
import * as Either from "effect/Either";
import * as ParseResult from "effect/ParseResult";
import * as Schema from "effect/Schema";
import * as SchemaAST from "effect/SchemaAST";
import { StoreError } from "../store.ts";

export const NodeKindSchema = Schema.Literal("message", "protocol", "plugin", "frame");

const envelope = {
  id: Schema.String,
  sessionId: Schema.String,
  parentId: Schema.NullOr(Schema.String),
  frameId: Schema.String,
  turnId: Schema.NullOr(Schema.String),
  createdAt: Schema.Number,
};
const seq = { seq: Schema.Number };

/** What a `frame` node records (RLM `continue_as`): the new frame, plus whatever else the writer kept. */
export const FramePayloadSchema = Schema.Struct(
  { frameId: Schema.String },
  Schema.Record({ key: Schema.String, value: Schema.Unknown }),
);

const kinds = {
  message: { kind: Schema.Literal("message"), payload: Message },
  frame: { kind: Schema.Literal("frame"), payload: FramePayloadSchema },
  /** Protocol and plugin payloads belong to their writer (driver, plugin): any JSON value. */
  protocol: { kind: Schema.Literal("protocol"), payload: Schema.Unknown },
  plugin: { kind: Schema.Literal("plugin"), payload: Schema.Unknown },
};

export const MessageNodeSchema = Schema.Struct({ ...envelope, ...seq, ...kinds.message });
export const FrameNodeSchema = Schema.Struct({ ...envelope, ...seq, ...kinds.frame });
export const ProtocolNodeSchema = Schema.Struct({ ...envelope, ...seq, ...kinds.protocol });
export const PluginNodeSchema = Schema.Struct({ ...envelope, ...seq, ...kinds.plugin });

/** A graph node, by kind. Its `Type` is assignable to the `GraphNode` interface. */
export const GraphNodeSchema = Schema.Union(
  MessageNodeSchema,
  FrameNodeSchema,
  ProtocolNodeSchema,
  PluginNodeSchema,
);

/** A node as a commit hands it to the store (`seq` is assigned by the store). */
export const NewNodeSchema = Schema.Union(
  Schema.Struct({ ...envelope, ...kinds.message }),
  Schema.Struct({ ...envelope, ...kinds.frame }),
  Schema.Struct({ ...envelope, ...kinds.protocol }),
  Schema.Struct({ ...envelope, ...kinds.plugin }),
);

export const UsageRowSchema = Schema.Struct({
  turnId: Schema.String,
  source: Schema.String,
  model: Schema.String,
  usage: Usage,
  costUsd: Schema.optional(Schema.Number),
});

export const JournalEntrySchema = Schema.Struct({
  key: Schema.String,
  sessionId: Schema.String,
  turnId: Schema.String,
  hash: Schema.String,
  status: Schema.Literal("started", "completed"),
  outcome: Schema.optional(Schema.Unknown),
  updatedAt: Schema.Number,
});

export const PendingTurnSchema = Schema.Struct({
  sessionId: Schema.String,
  turnId: Schema.String,
  input: Schema.Unknown,
  expectedRevision: Schema.Number,
  startedAt: Schema.Number,
  resumeAttempts: Schema.optional(Schema.Number),
});

const StateSchema = Schema.Record({ key: Schema.String, value: Schema.Unknown });

export const TurnCommitSchema = Schema.Struct({
  sessionId: Schema.String,
  turnId: Schema.String,
  hash: Schema.String,
  expectedRevision: Schema.Number,
  nodes: Schema.Array(NewNodeSchema),
  leafId: Schema.NullOr(Schema.String),
  usage: Schema.Array(UsageRowSchema),
  updatedAt: Schema.Number,
  title: Schema.optional(Schema.String),
  frameId: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  state: Schema.optional(StateSchema),
});

export const ToolOutputRecordSchema = Schema.Struct({
  sessionId: Schema.String,
  callId: Schema.String,
  providerCallId: Schema.optional(Schema.String),
  text: Schema.String,
  createdAt: Schema.Number,
});

/** What the store keeps of a committed turn (the stamp's result), returned again to a retry. */
export const CommitStampSchema = Schema.Struct({
  headRevision: Schema.Number,
  leafId: Schema.NullOr(Schema.String),
});

export const SessionStateSchema = StateSchema;
export const SessionModeSchema = Schema.Literal("standard", "rlm");

// ---- decoding at the store boundary ----

const REPAIR_HINT =
  "Check the database with `lash doctor` (`lash doctor --repair` salvages a damaged file into a new one); " +
  "a row that reads back but does not fit was written by other software or an older bug: fork the session from an earlier node, or delete it";

/** A stored row that does not decode: names the row and the fix. */
export function corruptRow(where: string, detail: string): StoreError {
  return new StoreError({ message: `${where}: the stored row is not valid (${detail}). ${REPAIR_HINT}.` });
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw corruptRow(where, `not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * A decoder compiled once: `decode(value, where)` returns the decoded value or
 * throws a `StoreError` naming `where` (stores run it inside their error guard,
 * so the caller sees a typed `StoreError`).
 */
export function decoderFor<A, I>(schema: Schema.Schema<A, I>): (value: unknown, where: string) => A {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" });
  return (value, where) => {
    const result = decode(value);
    if (Either.isLeft(result))
      throw corruptRow(where, ParseResult.TreeFormatter.formatErrorSync(result.left));
    return result.right;
  };
}

/** Decode JSON text (`null`: absent) with `schema`. */
export function jsonDecoderFor<A, I>(
  schema: Schema.Schema<A, I>,
): (text: string | null, where: string) => A | undefined {
  const decode = decoderFor(schema);
  return (text, where) => (text === null ? undefined : decode(parseJson(text, where), where));
}

type Guard = (u: unknown) => boolean;

/**
 * `Schema.is(schema)`, compiled from the schema's AST into plain predicates:
 * structs, arrays, unions (dispatched on a literal tag when the members have
 * one), literals and keywords; any other node (refinements, transformations,
 * suspensions …) defers to `Schema.is` for that subtree. Same verdicts as
 * `Schema.is` (checked in test/store/schema.test.ts) at a fraction of the cost:
 * it runs once per node read, so it sits on the session-open path.
 */
export function compileGuard<A, I>(schema: Schema.Schema<A, I>): (u: unknown) => u is A {
  return compileAst(SchemaAST.typeAST(schema.ast)) as (u: unknown) => u is A;
}

function compileAst(ast: SchemaAST.AST): Guard {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string";
    case "NumberKeyword":
      return (u) => typeof u === "number";
    case "BooleanKeyword":
      return (u) => typeof u === "boolean";
    case "UndefinedKeyword":
      return (u) => u === undefined;
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true;
    case "Literal": {
      const literal = ast.literal;
      return (u) => u === literal;
    }
    case "Union":
      return compileUnion(ast);
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) break;
      const item = compileAst(ast.rest[0]!.type);
      return (u) => {
        if (!Array.isArray(u)) return false;
        for (let i = 0; i < u.length; i++) if (!item(u[i])) return false;
        return true;
      };
    }
    case "TypeLiteral": {
      if (!ast.indexSignatures.every((s) => s.type._tag === "UnknownKeyword" || s.type._tag === "AnyKeyword"))
        break;
      const props = ast.propertySignatures.map((p) => ({
        name: p.name,
        optional: p.isOptional,
        guard: compileAst(p.type),
      }));
      return (u) => {
        if (typeof u !== "object" || u === null) return false;
        const o = u as Record<PropertyKey, unknown>;
        for (const p of props) {
          const v = o[p.name];
          if (v === undefined && !(p.name in o)) {
            if (p.optional) continue;
            return false;
          }
          if (!p.guard(v)) return false;
        }
        return true;
      };
    }
    default:
      break;
  }
  return Schema.is(Schema.make(ast));
}

/** A union of structs that all carry a literal tag (`type`, `kind` …) is a lookup on the tag. */
function compileUnion(ast: SchemaAST.Union): Guard {
  const members = ast.types.map(compileAst);
  const tagOf = (m: SchemaAST.AST, name: PropertyKey) =>
    m._tag === "TypeLiteral"
      ? m.propertySignatures.find((p) => p.name === name && !p.isOptional && p.type._tag === "Literal")
      : undefined;
  const first = ast.types[0];
  const candidates = first?._tag === "TypeLiteral" ? first.propertySignatures.map((p) => p.name) : [];
  for (const name of candidates) {
    const tags = ast.types.map((m) => tagOf(m, name));
    if (tags.some((t) => t === undefined)) continue;
    const literals = tags.map((t) => (t!.type as SchemaAST.Literal).literal);
    if (new Set(literals).size !== literals.length) continue;
    const byTag = new Map(literals.map((l, i) => [l, members[i]!]));
    return (u) => {
      if (typeof u !== "object" || u === null) return false;
      const guard = byTag.get((u as Record<PropertyKey, unknown>)[name] as SchemaAST.LiteralValue);
      return guard?.(u) === true;
    };
  }
  return (u) => {
    for (const m of members) if (m(u)) return true;
    return false;
  };
}

const isMessage = compileGuard(Message);
const isFramePayload = compileGuard(FramePayloadSchema);
const decodeMessage = decoderFor(Message);
const decodeFrame = decoderFor(FramePayloadSchema);

/**
 * Decode a node payload from its JSON text by the node's kind: `message` payloads
 * are `Message`s, `frame` payloads carry their `frameId`, protocol and plugin
 * payloads are any JSON. The fast path is a compiled `Schema.is` guard (no copy);
 * the full decoder runs only to explain a failure.
 */
export function decodePayload(kind: string, text: string | null, sessionId: string, nodeId: string): unknown {
  const where = `session ${sessionId}, node ${nodeId}`;
  if (text === null) {
    if (kind === "message" || kind === "frame") throw corruptRow(where, `a ${kind} node without a payload`);
    return undefined;
  }
  const value = parseJson(text, where);
  switch (kind) {
    case "message":
      return isMessage(value) ? value : decodeMessage(value, where);
    case "frame":
      return isFramePayload(value) ? value : decodeFrame(value, where);
    case "protocol":
    case "plugin":
      return value;
    default:
      throw corruptRow(where, `unknown node kind ${JSON.stringify(kind)}`);
  }
}
