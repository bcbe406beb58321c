// The daemon's HTTP API as one `HttpApi` value: the single source for the server's
// handlers (`HttpApiBuilder.group`), the OpenAPI document (`/v1/openapi.json`) and the
// typed client (`@lash/client`, `HttpApiClient.make(LashApi)`). This module imports
// nothing of the server's implementation, so the client can depend on it alone
// (`@lash/server/api`).
//
// Conventions:
// - Every error is a JSON body `{ _tag, code, message }`; `message` names the problem and
//   the fix. The `_tag` decides the status (400, 401, 403, 404, 409, 413, 429, 503).
// - Event streams (`…/events`, `…/chat/stream`) are `text/event-stream`: each event is
//   `id: <seq>\nevent: <type>\ndata: <json of a ServerEvent>\n\n`. `seq` is the session's
//   durable event sequence (monotonic per session, never reused, the same after a
//   daemon restart). A reader reconnects with `Last-Event-ID: <seq>` (or `?after=<seq>`)
//   and gets exactly the events after it.
// - Auth: `Authorization: Bearer <token>` (tokens from `lash serve token create`).
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
} from "@effect/platform";
import { Context, Schema } from "effect";

// ---------------------------------------------------------------------------------------
// errors

const errorFields = {
  /** A stable machine-readable code, e.g. `session_not_found`, `run_busy`, `invalid_token`. */
  code: Schema.String,
  /** What went wrong and how to fix it. */
  message: Schema.String,
};

/**
 * One error class of the API: `{ _tag, code, message }` answered with `status`. Called as
 * `class X extends apiError<X>()("X", 404) {}` (the class names itself, as `Schema.TaggedError` wants).
 */
const apiError =
  <Self>() =>
  <Tag extends string>(tag: Tag, status: number) =>
    Schema.TaggedError<Self>()(tag, errorFields, HttpApiSchema.annotations({ status }));

export class BadRequest extends apiError<BadRequest>()("BadRequest", 400) {}
export class Unauthorized extends apiError<Unauthorized>()("Unauthorized", 401) {}
export class Forbidden extends apiError<Forbidden>()("Forbidden", 403) {}
export class NotFound extends apiError<NotFound>()("NotFound", 404) {}
export class Conflict extends apiError<Conflict>()("Conflict", 409) {}
export class PayloadTooLarge extends apiError<PayloadTooLarge>()("PayloadTooLarge", 413) {}
export class TooManyRequests extends apiError<TooManyRequests>()("TooManyRequests", 429) {}
export class Unavailable extends apiError<Unavailable>()("Unavailable", 503) {}

// ---------------------------------------------------------------------------------------
// principals and auth

/** Who is calling: the principal a bearer token maps to. */
export class Principal extends Schema.Class<Principal>("Principal")({
  name: Schema.String,
  /** Admins see and manage every session, approval and token. */
  admin: Schema.Boolean,
}) {}

/** The principal of the current request (provided by the `Authorization` middleware). */
export class CurrentPrincipal extends Context.Tag("@lash/server/CurrentPrincipal")<
  CurrentPrincipal,
  Principal
>() {}

/** Bearer-token authentication: 401 without a valid token. */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("@lash/server/Authorization", {
  failure: Unauthorized,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer },
}) {}

// ---------------------------------------------------------------------------------------
// shapes

/**
 * Any JSON value. Named (one `$ref` in the OpenAPI document) because Effect writes an
 * unnamed `Schema.Unknown` as `{"$id": "/schemas/unknown"}` at every use, and a document
 * with one `$id` defined more than once is not valid OpenAPI.
 */
export const JsonValue = Schema.Unknown.annotations({
  identifier: "JsonValue",
  description: "Any JSON value.",
});

export const SessionMode = Schema.Literal("standard", "rlm");

export class Session extends Schema.Class<Session>("Session")({
  id: Schema.String,
  title: Schema.optional(Schema.String),
  model: Schema.String,
  mode: SessionMode,
  /** The principal that created it (only it and admins see it). */
  owner: Schema.String,
  /** Set when the session runs an agent defined as a file. */
  agent: Schema.optional(Schema.String),
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  headRevision: Schema.Number,
  turnCount: Schema.Number,
  origin: Schema.optional(Schema.Struct({ sessionId: Schema.String, nodeId: Schema.NullOr(Schema.String) })),
  /** A subagent's child session: the session and tool call that spawned it. */
  parent: Schema.optional(Schema.Struct({ sessionId: Schema.String, callId: Schema.String })),
  /** The session's current run (running or queued first), if any. */
  activeRunId: Schema.optional(Schema.String),
  /**
   * Handoff links (`compaction.strategy: "handoff"`): `from`, the session this one continues
   * (its summary is this one's first message); `to`, the session this one continues in. A run
   * posted to a session with `to` runs in the newest session of the chain.
   */
  handoff: Schema.optional(
    Schema.Struct({ from: Schema.optional(Schema.String), to: Schema.optional(Schema.String) }),
  ),
}) {}

export const CreateSession = Schema.Struct({
  /** `provider/model` (default: the daemon's model). */
  model: Schema.optional(Schema.String),
  mode: Schema.optional(SessionMode),
  title: Schema.optional(Schema.String),
  systemPrompt: Schema.optional(Schema.String),
  /** Run this built agent in the session (its model, instructions, tools and policy). */
  agent: Schema.optional(Schema.String),
});

export const RunState = Schema.Literal(
  /** Waiting for the session's earlier runs or a free slot. */
  "queued",
  "running",
  /** Running, stopped at an approval nobody has answered yet. */
  "waitingApproval",
  "completed",
  "failed",
  "cancelled",
);
export type RunState = typeof RunState.Type;

export class Run extends Schema.Class<Run>("Run")({
  id: Schema.String,
  sessionId: Schema.String,
  /** The turn the run commits (known once it started). */
  turnId: Schema.optional(Schema.String),
  /** The principal that started it. */
  principal: Schema.String,
  state: RunState,
  input: Schema.String,
  createdAt: Schema.Number,
  startedAt: Schema.optional(Schema.Number),
  finishedAt: Schema.optional(Schema.Number),
  /** The turn's outcome (`TurnOutcome` of @lash/sansio) once finished. */
  outcome: Schema.optional(JsonValue),
  /** The assistant's final text once completed. */
  text: Schema.optional(Schema.String),
  /** A typed agent's final value once completed. */
  value: Schema.optional(JsonValue),
  /** Why it failed, naming the fix. */
  error: Schema.optional(Schema.Struct({ code: Schema.String, message: Schema.String })),
  /** The last event sequence number of this run so far (for `Last-Event-ID`). */
  lastSeq: Schema.Number,
  /** How many times the daemon resumed it after a restart. */
  resumes: Schema.Number,
  /**
   * Set when the run moved along a handoff: it was posted to `from`, which had handed off (the
   * run runs in `to`, the newest session of the chain, and its events are in `to`'s stream), or
   * its own turn handed off from `from` to `to` (its events stay in `from`'s stream; the next
   * runs go to `to`). `sessionId` is where its events are.
   */
  handoff: Schema.optional(Schema.Struct({ from: Schema.String, to: Schema.String })),
}) {}

export const StartTurn = Schema.Struct({
  text: Schema.String,
});

/**
 * One event of a session's durable stream: a turn's activity (`@lash/sansio`'s
 * `TurnActivity` body, `type` as there) or a run's lifecycle (`runQueued`, `runStarted`,
 * `runResumed`, `runFinished`), numbered by `seq`.
 */
export class ServerEvent extends Schema.Class<ServerEvent>("ServerEvent")({
  seq: Schema.Number,
  sessionId: Schema.String,
  runId: Schema.String,
  type: Schema.String,
  /** epoch ms */
  at: Schema.Number,
  /** The event's fields (a `TurnActivity` without `seq`/`sessionId`/`at`, or the lifecycle's). */
  data: JsonValue,
}) {}

export const ApprovalState = Schema.Literal("pending", "approved", "denied", "mixed", "expired");

export class Approval extends Schema.Class<Approval>("Approval")({
  /** The core approval request id (stable across a daemon restart). */
  id: Schema.String,
  sessionId: Schema.String,
  runId: Schema.String,
  turnId: Schema.String,
  state: ApprovalState,
  /** Core's `ApprovalItem`s: tool, args, effects, reason, layer, risk, preview, previewHash. */
  items: Schema.Array(JsonValue),
  /** The principal that started the run. */
  requestedBy: Schema.String,
  /** When true, only a principal other than `requestedBy` may approve (two-step rule). */
  requiresOtherPrincipal: Schema.Boolean,
  createdAt: Schema.Number,
  decidedBy: Schema.optional(Schema.String),
  decidedAt: Schema.optional(Schema.Number),
  /** Core's `ApprovalDecision`s once answered. */
  decisions: Schema.optional(Schema.Array(JsonValue)),
}) {}

export const DecideApproval = Schema.Struct({
  decision: Schema.Literal("approve", "deny"),
  /** Denial text the model reads. */
  reason: Schema.optional(Schema.String),
  /** `session`: calls to these tools are not asked about again in this session. */
  scope: Schema.optional(Schema.Literal("once", "session")),
  /** Edited arguments per call id (approve only); validated against the tool's schema again. */
  args: Schema.optional(Schema.Record({ key: Schema.String, value: JsonValue })),
  /** Decide only these calls (default: every call of the request). */
  callIds: Schema.optional(Schema.Array(Schema.String)),
});

export class AgentInfo extends Schema.Class<AgentInfo>("AgentInfo")({
  name: Schema.String,
  description: Schema.String,
  model: Schema.optional(Schema.String),
  mode: SessionMode,
  /** JSON Schema of the input / output, when the agent declares one. */
  input: Schema.optional(JsonValue),
  output: Schema.optional(JsonValue),
  /** What the caller may do with it. */
  access: Schema.Literal("execute", "read"),
}) {}

export const AgentChat = Schema.Struct({
  /** The input: a string, or a JSON value matching the agent's input schema. */
  input: JsonValue,
  /** Continue this session of the agent (default: a new session). */
  sessionId: Schema.optional(Schema.String),
});

export class AgentReply extends Schema.Class<AgentReply>("AgentReply")({
  sessionId: Schema.String,
  runId: Schema.String,
  state: RunState,
  text: Schema.optional(Schema.String),
  value: Schema.optional(JsonValue),
  error: Schema.optional(Schema.Struct({ code: Schema.String, message: Schema.String })),
}) {}

/**
 * One node of a session's graph on its active path (root first): a message, a protocol
 * event or a plugin record. `sessionId` is the session that wrote it (a fork's path starts
 * with its origin's nodes); fork at a node with `POST /v1/sessions/:id/fork {atNode}`.
 */
export class SessionNode extends Schema.Class<SessionNode>("SessionNode")({
  id: Schema.String,
  sessionId: Schema.String,
  parentId: Schema.NullOr(Schema.String),
  kind: Schema.String,
  turnId: Schema.NullOr(Schema.String),
  createdAt: Schema.Number,
  /** A message (`@lash/sansio` `Message`) for `kind: "message"`, else the event's record. */
  payload: JsonValue,
}) {}

/**
 * Two sessions' branches side by side: the last node their active paths share (`null`:
 * none) and, after it, the nodes only `a`'s path has and those only `b`'s has.
 */
export class SessionComparison extends Schema.Class<SessionComparison>("SessionComparison")({
  a: Schema.String,
  b: Schema.String,
  ancestor: Schema.NullOr(Schema.String),
  /** How many nodes the two paths share (root first, up to and including `ancestor`). */
  shared: Schema.Number,
  onlyA: Schema.Array(SessionNode),
  onlyB: Schema.Array(SessionNode),
}) {}

/** Median and 95th percentile (nearest rank) over a recent window; null without samples. */
export const Quantiles = Schema.Struct({
  p50: Schema.NullOr(Schema.Number),
  p95: Schema.NullOr(Schema.Number),
});

/**
 * What the daemon's runs of one agent did since the daemon started (`agent: ""`: sessions
 * that run no agent). Latencies in milliseconds over the last 1024 samples.
 */
export class AgentMetrics extends Schema.Class<AgentMetrics>("AgentMetrics")({
  agent: Schema.String,
  runs: Schema.Struct({ completed: Schema.Number, failed: Schema.Number, cancelled: Schema.Number }),
  runLatencyMs: Quantiles,
  /** Model calls (replayed responses not counted), their `error` events and retries. */
  llm: Schema.Struct({
    calls: Schema.Number,
    errors: Schema.Number,
    retries: Schema.Number,
    latencyMs: Quantiles,
  }),
  tools: Schema.Struct({ calls: Schema.Number, errors: Schema.Number }),
  tokens: Schema.Struct({
    input: Schema.Number,
    output: Schema.Number,
    reasoning: Schema.Number,
    cacheRead: Schema.Number,
    cacheWrite: Schema.Number,
  }),
  /** Priced models only. */
  costUsd: Schema.Number,
  /** The last finished runs, oldest first (for a chart): when, how long, how they ended. */
  recentRuns: Schema.Array(Schema.Struct({ at: Schema.Number, ms: Schema.Number, state: Schema.String })),
}) {}

/** The body of an export or trace page (the handlers write it raw, with its content type). */
const PageBody = HttpApiSchema.withEncoding(Schema.String, { kind: "Text", contentType: "text/html" });

const ExportQuery = Schema.Struct({ format: Schema.optional(Schema.Literal("html", "json", "md")) });
const TraceQuery = Schema.Struct({
  format: Schema.optional(Schema.Literal("html", "jsonl")),
  /** `extended` keeps streamed text and tool contents (default `standard`). */
  level: Schema.optional(Schema.Literal("standard", "extended")),
});

export const FiringState = Schema.Literal(
  /** Claimed, waiting for a free slot of the loop (`concurrency`) or a retry's backoff. */
  "queued",
  "running",
  "completed",
  /** Failed on its last attempt (see `error`). */
  "failed",
  /** Ran longer than the loop's `timeout`: its run was cancelled. */
  "timeout",
  /** Missed while no daemon ran, with `missed: skip`. */
  "skipped",
);
export type FiringState = typeof FiringState.Type;

/** One firing of a loop: claimed once (its `key` is unique in the state db), run as an ordinary session + run. */
export class LoopFiring extends Schema.Class<LoopFiring>("LoopFiring")({
  /** The dedup key: `<loop>@<scheduled ISO time>` (manual: `<loop>@manual:<ISO time>:<random>`). */
  key: Schema.String,
  loop: Schema.String,
  /** The scheduled time (epoch ms); for a manual firing, when it was triggered. */
  scheduledAt: Schema.Number,
  /** `schedule`, `missed` (run at start after the daemon was down) or `manual` (POST …/trigger). */
  kind: Schema.Literal("schedule", "missed", "manual"),
  state: FiringState,
  /** Runs started for it so far (retries add one each). */
  attempts: Schema.Number,
  /** The session and run of its latest attempt. */
  sessionId: Schema.optional(Schema.String),
  runId: Schema.optional(Schema.String),
  /** What the firing sent the agent. */
  instruction: Schema.String,
  claimedAt: Schema.Number,
  startedAt: Schema.optional(Schema.Number),
  finishedAt: Schema.optional(Schema.Number),
  error: Schema.optional(Schema.Struct({ code: Schema.String, message: Schema.String })),
  /** A manual firing: the principal that triggered it (its session is theirs). */
  triggeredBy: Schema.optional(Schema.String),
}) {}

/** A scheduled agent: an agent whose spec has `schedule` and `instruction`. */
export class Loop extends Schema.Class<Loop>("Loop")({
  /** The loop's name (the agent's). */
  name: Schema.String,
  agent: Schema.String,
  /** The spec's schedule: a cron string, `{ cron, tz }` or `{ every }`. */
  schedule: JsonValue,
  instruction: Schema.String,
  missed: Schema.Literal("run", "skip"),
  concurrency: Schema.Number,
  /** The spec's `timeout` (a duration such as "10m"). */
  timeout: Schema.optional(Schema.String),
  retry: Schema.optional(Schema.Struct({ attempts: Schema.Number, backoff: Schema.optional(Schema.String) })),
  /** Paused loops claim no scheduled firings (a manual trigger still runs); persisted. */
  paused: Schema.Boolean,
  /** The next scheduled firing (epoch ms); absent while paused or when the schedule has none. */
  nextFiring: Schema.optional(Schema.Number),
  lastFiring: Schema.optional(
    Schema.Struct({
      key: Schema.String,
      state: FiringState,
      runId: Schema.optional(Schema.String),
      sessionId: Schema.optional(Schema.String),
      /** Its scheduled time (epoch ms). */
      at: Schema.Number,
    }),
  ),
}) {}

export const TriggerLoop = Schema.Struct({
  /** Send this instead of the loop's instruction (this firing only). */
  instruction: Schema.optional(Schema.String),
});

const SessionId = Schema.Struct({ id: Schema.String });
const RunId = Schema.Struct({ id: Schema.String });
const TwoSessions = Schema.Struct({ id: Schema.String, other: Schema.String });
const AgentName = Schema.Struct({ name: Schema.String });

/** Query of an event stream: `after` is the same cursor as `Last-Event-ID` (the header wins). */
const EventsQuery = Schema.Struct({ after: Schema.optional(Schema.NumberFromString) });

/** The SSE body, for the OpenAPI document (the handlers write it raw). */
const EventStream = HttpApiSchema.withEncoding(Schema.String, {
  kind: "Text",
  contentType: "text/event-stream",
});

// ---------------------------------------------------------------------------------------
// groups

export class HealthApi extends HttpApiGroup.make("health", { topLevel: true })
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Schema.Struct({ ready: Schema.Boolean, resumed: Schema.Number }))
      .addError(Unavailable),
  )
  .add(
    HttpApiEndpoint.get("metrics", "/metrics").addSuccess(
      HttpApiSchema.withEncoding(Schema.String, { kind: "Text", contentType: "text/plain; version=0.0.4" }),
    ),
  ) {}

export class SessionsApi extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.post("create", "/sessions")
      .setPayload(CreateSession)
      .addSuccess(Session, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound),
  )
  .add(
    HttpApiEndpoint.get("list", "/sessions")
      /** `children=true`: subagents' child sessions too (each with its `parent`). */
      .setUrlParams(Schema.Struct({ children: Schema.optional(Schema.BooleanFromString) }))
      .addSuccess(Schema.Struct({ sessions: Schema.Array(Session) })),
  )
  .add(
    HttpApiEndpoint.get("get", "/sessions/:id")
      .setPath(SessionId)
      .addSuccess(Session)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.get("messages", "/sessions/:id/messages")
      .setPath(SessionId)
      .addSuccess(Schema.Struct({ messages: Schema.Array(JsonValue) }))
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.post("fork", "/sessions/:id/fork")
      .setPath(SessionId)
      .setPayload(
        Schema.Struct({ atNode: Schema.optional(Schema.String), title: Schema.optional(Schema.String) }),
      )
      .addSuccess(Session, { status: 201 })
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.del("delete", "/sessions/:id")
      .setPath(SessionId)
      .addSuccess(Schema.Struct({ deleted: Schema.String }))
      .addError(NotFound)
      .addError(Forbidden)
      .addError(Conflict),
  )
  .add(
    HttpApiEndpoint.post("startTurn", "/sessions/:id/turns")
      .setPath(SessionId)
      .setUrlParams(Schema.Struct({ wait: Schema.optional(Schema.BooleanFromString) }))
      .setPayload(StartTurn)
      .addSuccess(Run, { status: 202 })
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Forbidden)
      .addError(TooManyRequests)
      .addError(Unavailable),
  )
  .add(
    HttpApiEndpoint.get("runs", "/sessions/:id/runs")
      .setPath(SessionId)
      .addSuccess(Schema.Struct({ runs: Schema.Array(Run) }))
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.get("events", "/sessions/:id/events")
      .setPath(SessionId)
      .setUrlParams(EventsQuery)
      .addSuccess(EventStream)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.get("nodes", "/sessions/:id/nodes")
      .setPath(SessionId)
      .addSuccess(Schema.Struct({ nodes: Schema.Array(SessionNode) }))
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.get("compare", "/sessions/:id/compare/:other")
      .setPath(TwoSessions)
      .addSuccess(SessionComparison)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.get("export", "/sessions/:id/export")
      .setPath(SessionId)
      .setUrlParams(ExportQuery)
      .addSuccess(PageBody)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.get("trace", "/sessions/:id/trace")
      .setPath(SessionId)
      .setUrlParams(TraceQuery)
      .addSuccess(PageBody)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .middleware(Authorization)
  .prefix("/v1") {}

export class RunsApi extends HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.get("get", "/runs/:id")
      .setPath(RunId)
      .addSuccess(Run)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.post("cancel", "/runs/:id/cancel")
      .setPath(RunId)
      .addSuccess(Run)
      .addError(NotFound)
      .addError(Forbidden)
      .addError(Conflict),
  )
  .add(
    HttpApiEndpoint.get("events", "/runs/:id/events")
      .setPath(RunId)
      .setUrlParams(EventsQuery)
      .addSuccess(EventStream)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.get("trace", "/runs/:id/trace")
      .setPath(RunId)
      .setUrlParams(TraceQuery)
      .addSuccess(PageBody)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .middleware(Authorization)
  .prefix("/v1") {}

export class ApprovalsApi extends HttpApiGroup.make("approvals")
  .add(
    HttpApiEndpoint.get("list", "/approvals")
      .setUrlParams(Schema.Struct({ state: Schema.optional(Schema.Literal("pending", "all")) }))
      .addSuccess(Schema.Struct({ approvals: Schema.Array(Approval) })),
  )
  .add(
    HttpApiEndpoint.get("get", "/approvals/:id")
      .setPath(RunId)
      .addSuccess(Approval)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.post("decide", "/approvals/:id")
      .setPath(RunId)
      .setPayload(DecideApproval)
      .addSuccess(Approval)
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Forbidden)
      .addError(Conflict),
  )
  .middleware(Authorization)
  .prefix("/v1") {}

export class AgentsApi extends HttpApiGroup.make("agents")
  .add(HttpApiEndpoint.get("list", "/agents").addSuccess(Schema.Struct({ agents: Schema.Array(AgentInfo) })))
  .add(
    HttpApiEndpoint.post("chat", "/agents/:name/chat")
      .setPath(AgentName)
      .setPayload(AgentChat)
      .addSuccess(AgentReply)
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Forbidden)
      .addError(TooManyRequests)
      .addError(Unavailable),
  )
  .add(
    HttpApiEndpoint.post("chatStream", "/agents/:name/chat/stream")
      .setPath(AgentName)
      .setPayload(AgentChat)
      .addSuccess(EventStream)
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Forbidden)
      .addError(TooManyRequests)
      .addError(Unavailable),
  )
  .middleware(Authorization)
  .prefix("/v1") {}

/** What a view link opens: a session's export or trace, or a run's trace. */
export const ViewRequest = Schema.Struct({
  kind: Schema.Literal("export", "sessionTrace", "runTrace"),
  /** The session's id (`export`, `sessionTrace`) or the run's (`runTrace`). */
  id: Schema.String,
  /** `html` (default), `json` or `md` for an export; `html` (default) or `jsonl` for a trace. */
  format: Schema.optional(Schema.Literal("html", "json", "md", "jsonl")),
  level: Schema.optional(Schema.Literal("standard", "extended")),
});

/**
 * A short-lived link to an export or trace page that a browser can open without a bearer
 * header (a new tab cannot send one): signed by this daemon for the caller, valid for
 * `expiresAt` (epoch ms) and until the daemon restarts.
 */
export class ViewLink extends Schema.Class<ViewLink>("ViewLink")({
  /** The path to open on this daemon: `/v1/views/<ticket>`. */
  url: Schema.String,
  expiresAt: Schema.Number,
}) {}

export class ViewsApi extends HttpApiGroup.make("views")
  .add(
    HttpApiEndpoint.post("link", "/views")
      .setPayload(ViewRequest)
      .addSuccess(ViewLink, { status: 201 })
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Forbidden)
      .middleware(Authorization),
  )
  .add(
    HttpApiEndpoint.get("open", "/views/:ticket")
      .setPath(Schema.Struct({ ticket: Schema.String }))
      .addSuccess(PageBody)
      .addError(Unauthorized)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .prefix("/v1") {}

export class MetricsApi extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("agents", "/metrics/agents").addSuccess(
      Schema.Struct({
        /** When the daemon started counting (epoch ms): the figures are since then. */
        since: Schema.Number,
        agents: Schema.Array(AgentMetrics),
      }),
    ),
  )
  .middleware(Authorization)
  .prefix("/v1") {}

export class LoopsApi extends HttpApiGroup.make("loops")
  .add(HttpApiEndpoint.get("list", "/loops").addSuccess(Schema.Struct({ loops: Schema.Array(Loop) })))
  .add(
    HttpApiEndpoint.get("firings", "/loops/:name/firings")
      .setPath(AgentName)
      .setUrlParams(Schema.Struct({ limit: Schema.optional(Schema.NumberFromString) }))
      .addSuccess(Schema.Struct({ firings: Schema.Array(LoopFiring) }))
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.post("trigger", "/loops/:name/trigger")
      .setPath(AgentName)
      .setPayload(TriggerLoop)
      .addSuccess(LoopFiring, { status: 202 })
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Forbidden)
      .addError(Unavailable),
  )
  .add(
    HttpApiEndpoint.post("pause", "/loops/:name/pause")
      .setPath(AgentName)
      .addSuccess(Loop)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .add(
    HttpApiEndpoint.post("resume", "/loops/:name/resume")
      .setPath(AgentName)
      .addSuccess(Loop)
      .addError(NotFound)
      .addError(Forbidden),
  )
  .middleware(Authorization)
  .prefix("/v1") {}

/**
 * The whole API. `/v1/openapi.json` is `OpenApi.fromApi(LashApi)`; `/v1/agents/:name/mcp`
 * (MCP Streamable HTTP) is served beside it by the official MCP SDK's transport and is not
 * part of this schema.
 */
export class LashApi extends HttpApi.make("lash")
  .add(HealthApi)
  .add(SessionsApi)
  .add(RunsApi)
  .add(ApprovalsApi)
  .add(AgentsApi)
  .add(MetricsApi)
  .add(ViewsApi)
  .add(LoopsApi)
  .addError(PayloadTooLarge)
  .annotate(HttpApi.AdditionalSchemas, [ServerEvent]) {}
