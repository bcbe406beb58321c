import type {
  LlmRequest,
  LlmResponse,
  Message,
  ToolControl,
  ToolResultContent,
  ToolSpec,
  TurnOutcome,
  Usage,
} from "@lash/sansio";
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import type { ArtifactsShape } from "./artifacts.ts";
import type { GraphNode, SessionMode, SessionRecord, UsageSummary } from "./store.ts";

/** A JSON Schema object (draft 2020-12 subset) describing a tool's input. */
export type JsonSchema = { readonly [key: string]: unknown };

export type ToolFailureClass =
  | "invalidRequest"
  | "unavailable"
  | "permissionDenied"
  | "timeout"
  | "execution"
  | "external"
  | "resourceLimit"
  | "cancelled"
  | "interrupted"
  | "internal";

/**
 * A tool failure. It never escapes the dispatcher as an exception: it becomes
 * an error result the model reads (`message` is what the model sees).
 * `retry: "safe"` marks a failure the dispatcher may retry (with backoff).
 */
export class ToolFailure extends Data.TaggedError("ToolFailure")<{
  readonly class: ToolFailureClass;
  readonly message: string;
  readonly retry?: "never" | "safe";
  readonly retryAfterMs?: number;
}> {}

/** The result of one tool call as the tool produced it (the graph keeps it whole). */
export interface ToolOutput {
  /** What the model sees, before the output-budget projection. */
  readonly content: readonly ToolResultContent[];
  /** An error result the model reads (the call itself completed). */
  readonly isError?: boolean;
  /** Structured value for Lashlang bindings (`files.read` returns this). Defaults to the text content. */
  readonly value?: unknown;
  /** Data for UIs and exporters (diff, plan items, exit code). Kept in the graph; never sent to the model. */
  readonly details?: unknown;
  /** Usage this call spent on models (a subagent, an `llm.query`): added to the session's ledger. */
  readonly usage?: readonly ToolUsage[];
  /** Ask the turn to end (`finish`) or switch agent frames. */
  readonly control?: ToolControl;
}

export interface ToolUsage {
  /** Ledger source, e.g. `agent:<childSessionId>`. */
  readonly source: string;
  readonly model: string;
  readonly usage: Usage;
  readonly costUsd?: number;
}

export interface ToolContext {
  readonly sessionId: string;
  /** The provider's id for the call (providers may reuse it across turns). */
  readonly callId: string;
  /** lash's id for the call, unique in the session (absent for calls made inside RLM cells). */
  readonly lashCallId?: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Aborted when the call is cancelled or times out; pass it to child processes and fetches. */
  readonly signal: AbortSignal;
  /** Live progress for UIs (e.g. shell output as it arrives). Not journaled. */
  readonly progress: (update: unknown) => void;
  /** The turn this call belongs to. */
  readonly turnId?: string;
  /** Host access for tools that drive the runtime (subagents). Set by `LashRuntime`. */
  readonly host?: ToolHost;
}

/**
 * What the runtime lends a tool: named, typed capabilities (no cast back to the runtime).
 * `spawn_agent` uses `sessions` and `children`; `llm_query` uses `llm`; `read_output` reads
 * `sessions.chronological`; `read_artifact` uses `artifacts`.
 */
export interface ToolHost {
  /** The calling session's record. */
  readonly session: SessionRecord;
  /** Publish an activity event on the calling turn (e.g. child started/finished). */
  readonly emit: Emitter;
  /** The runtime's content-addressed artifacts (what `read_artifact` reads). */
  readonly artifacts: ArtifactsShape;
  /** Create, read and list sessions (a subagent's child session). */
  readonly sessions: Sessions;
  /** Run a child session's turn to its end. */
  readonly children: ChildRunner;
  /** One-shot model calls, journaled under the calling tool call. */
  readonly llm: Llm;
  /**
   * The host bound to one tool attempt (the dispatcher calls it; a tool never needs to):
   * the `llm` calls of that attempt are journaled under the attempt's key.
   */
  readonly forCall?: (attemptKey: string) => ToolHost;
}

/** Publishes a plugin activity event on the calling turn (TUI cards, traces, exports). */
export type Emitter = (event: {
  readonly type: "plugin";
  readonly plugin: string;
  readonly name: string;
  readonly data: unknown;
}) => void;

/** Sessions as a tool sees them. Failures are `ToolFailure`s the tool can return as they are. */
export interface Sessions {
  create(options: CreateSessionOptions): Effect.Effect<SessionRecord, ToolFailure>;
  get(sessionId: string): Effect.Effect<SessionRecord, ToolFailure>;
  /** Subagent sessions whose `parentLink.sessionId` is this session. */
  children(sessionId: string): Effect.Effect<readonly SessionRecord[], ToolFailure>;
  /** Attach in-memory plugins to a session (a child opened again after a restart). */
  attachPlugins(sessionId: string, plugins: readonly Plugin[]): Effect.Effect<void>;
  /** The settled transcript of the active path. */
  readView(sessionId: string): Effect.Effect<readonly Message[], ToolFailure>;
  /** Active-path nodes in order (messages, protocol events, frames). */
  chronological(sessionId: string): Effect.Effect<readonly GraphNode[], ToolFailure>;
  usage(sessionId: string): Effect.Effect<UsageSummary, ToolFailure>;
  /** The tool definitions a session sees now. */
  toolDefinitions(sessionId: string): Effect.Effect<readonly ToolDefinition[], ToolFailure>;
}

/** Runs a child session's turns. Interrupting a call cancels the child's turn gracefully. */
export interface ChildRunner {
  turn(
    sessionId: string,
    input: TurnInput,
    options?: ChildTurnOptions,
  ): Effect.Effect<ChildTurnResult, ToolFailure>;
  /** Finish the child's cut-off turn from its journal; `undefined` when there is none. */
  resumePending(
    sessionId: string,
    options?: ChildTurnOptions,
  ): Effect.Effect<ChildTurnResult | undefined, ToolFailure>;
}

export interface ChildTurnOptions {
  readonly maxTurns?: number;
}

/** What a child's turn ended with. */
export interface ChildTurnResult {
  readonly sessionId: string;
  readonly turnId: string;
  readonly outcome: TurnOutcome;
  /** The final assistant text (empty when the turn ended otherwise). */
  readonly text: string;
  readonly usage: Usage;
}

/** A one-shot model request: `LlmRequest` with the model optional (default: the session's). */
export type LlmCall = Omit<LlmRequest, "model" | "tools"> & {
  readonly model?: string;
  readonly tools?: LlmRequest["tools"];
};

export interface LlmCallResult {
  /** The model that answered (`provider/model`). */
  readonly model: string;
  readonly response: LlmResponse;
  /**
   * The call's ledger row (source `source`, default the tool's name): return it in the
   * tool's `ToolOutput.usage` so the session's ledger counts it (and a replayed call too).
   */
  readonly usage?: ToolUsage;
}

/**
 * The session's model, one call at a time. Each call is journaled under the calling tool
 * attempt: a turn resumed after a crash gets the recorded reply instead of calling again.
 * A provider failure (including a structured reply that does not match `output.schema`,
 * `outputMismatch`) is a `ToolFailure` with class `external`.
 */
export interface Llm {
  complete(
    request: LlmCall,
    options?: { readonly source?: string },
  ): Effect.Effect<LlmCallResult, ToolFailure>;
}

export interface CreateSessionOptions {
  readonly model: string;
  readonly mode?: SessionMode;
  readonly systemPrompt?: string;
  readonly title?: string;
  readonly cwd?: string;
  /** Restrict the session to these tool names. */
  readonly tools?: readonly string[];
  readonly parentLink?: SessionRecord["parentLink"];
  /** Extra plugins for this session (kept in memory by this runtime). */
  readonly plugins?: readonly Plugin[];
  /** Initial durable state entries (JSON values), e.g. a subagent's spawn record. */
  readonly state?: { readonly [key: string]: unknown };
}

export interface TurnInput {
  readonly text?: string;
  readonly messages?: readonly Message[];
}

export interface ToolDefinition<A = unknown> {
  readonly name: string;
  /** Written for models: what it does, when to use it, what it returns. */
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** Read-only tools change nothing and are idempotent. */
  readonly readOnly?: boolean;
  /** Safe to run again after a crash mid-run. Read-only tools are. */
  readonly idempotent?: boolean;
  /** Per-call timeout; the dispatcher's default applies when absent. */
  readonly timeoutMs?: number;
  /** Retries for failures marked `retry: "safe"`. */
  readonly retry?: {
    readonly maxAttempts: number;
    readonly baseDelayMs?: number;
    readonly maxDelayMs?: number;
  };
  /**
   * A helper of its plugin's other tools (`read_output` reads what the output budget cut):
   * offered whenever the plugin is, not narrowed by a session's tool allow-list.
   */
  readonly helper?: boolean;
  /** Which end the output budget keeps when cutting (shell output keeps the tail). */
  readonly truncate?: "head" | "tail";
  /** Lashlang binding for the RLM mode: `module.operation(args)`. */
  readonly binding?: { readonly module: string; readonly operation: string; readonly returns?: string };
  /** UI family for activity cards (`shell`, `edit`, `read`, `search`, `plan`, `mcp`, `agent`, …). */
  readonly family?: string;
  /**
   * What the call does to the world (see `ToolEffectKind`). Absent: `["read"]` for a
   * read-only tool, `["write"]` otherwise — an undeclared tool is treated as a mutation.
   */
  readonly effects?: readonly ToolEffectKind[];
  /**
   * What the call would do, without doing it: the approval prompt shows it, and in
   * dry-run (`writes: "stub"`) a write tool returns it instead of running. Must not
   * change anything. Tools without one get a generic preview (name and arguments).
   */
  preview?(args: A, context: ToolPreviewContext): Effect.Effect<ToolPreview, ToolFailure>;
  execute(args: A, context: ToolContext): Effect.Effect<ToolOutput, ToolFailure>;
}

/**
 * One kind of effect a tool has: `read` changes nothing; `write` changes files or
 * state; `exec` runs a program; `network` reaches beyond the machine; `secret`
 * reads or handles credentials. Policy, risk, approvals and dry-run go by these.
 */
export type ToolEffectKind = "read" | "write" | "exec" | "network" | "secret";

/** The effects a tool declares, or its default (`read` when read-only, else `write`). */
export function toolEffects(tool: ToolDefinition): readonly ToolEffectKind[] {
  return tool.effects ?? (tool.readOnly ? ["read"] : ["write"]);
}

export interface ToolPreviewContext {
  readonly sessionId: string;
  readonly callId: string;
  readonly signal: AbortSignal;
}

/** What a call would do: shown in approval prompts and returned by write tools in dry-run. */
export interface ToolPreview {
  /** One line for people and the model, e.g. `edit src/a.ts (+3 −1)`, `run \`make\` in /repo`. */
  readonly summary: string;
  /** Unified diff of every file the call would change. */
  readonly diff?: string;
  readonly files?: readonly {
    readonly path: string;
    readonly action: "create" | "modify" | "delete";
    readonly added: number;
    readonly removed: number;
  }[];
  /** A command the call would run: what, where, and what the sandbox lets it do. */
  readonly command?: { readonly command: string; readonly cwd: string; readonly sandbox?: string };
}

export function toolSpec(tool: ToolDefinition): ToolSpec {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
}

export function isIdempotent(tool: ToolDefinition): boolean {
  return tool.idempotent ?? tool.readOnly ?? false;
}

/** A text-only tool output. */
export function textOutput(text: string, extra?: Omit<ToolOutput, "content">): ToolOutput {
  return { content: [{ type: "text", text }], ...extra };
}

/**
 * Define a tool whose body is a promise-returning function. Rejections become
 * `ToolFailure{class: "execution"}` unless the function throws a ToolFailure.
 */
export function defineTool<A>(
  definition: Omit<ToolDefinition<A>, "execute"> & {
    readonly run: (args: A, context: ToolContext) => Promise<ToolOutput>;
  },
): ToolDefinition<A> {
  const { run, ...rest } = definition;
  const execute: ToolDefinition<A>["execute"] = (args, context) =>
    Effect.tryPromise({ try: () => run(args, context), catch: asToolFailure });
  promiseRuns.set(execute as ToolDefinition["execute"], run as PromiseRun);
  return { ...rest, execute };
}

/** What a promise tool's rejection becomes: its own `ToolFailure`, else an `execution` failure. */
export const asToolFailure = (error: unknown): ToolFailure =>
  error instanceof ToolFailure
    ? error
    : new ToolFailure({
        class: "execution",
        message: error instanceof Error ? error.message : String(error),
      });

type PromiseRun = (args: unknown, context: ToolContext) => Promise<ToolOutput>;

/**
 * The promise function behind each `execute` that `defineTool` made, keyed by that very
 * function: a tool whose `execute` was replaced (a wrapper) is not found, and runs as an Effect.
 */
const promiseRuns = new WeakMap<ToolDefinition["execute"], PromiseRun>();

/**
 * The promise function of a `defineTool` tool, so that dispatch can supervise the promise
 * itself (timeout, cancel) without forking a fiber to run `execute`: `execute(args, ctx)` is
 * exactly `Effect.tryPromise({ try: () => run(args, ctx), catch: asToolFailure })`.
 */
export const promiseRunOf = (execute: ToolDefinition["execute"]): PromiseRun | undefined =>
  promiseRuns.get(execute);

// Plugins (here, not in plugin.ts, because tools and plugins refer to each other:
// `Sessions.create` takes plugins, a plugin carries tools).

export interface HookContext {
  readonly session: SessionRecord;
  readonly turnId: string;
}

export interface ToolCallInfo {
  readonly callId: string;
  /** lash's id for the call, unique in the session (absent for calls made inside RLM cells). */
  readonly lashCallId?: string;
  readonly name: string;
  readonly args: unknown;
  /** Undefined when no tool of that name is in the catalog. */
  readonly tool?: ToolDefinition;
}

export type BeforeTurnResult =
  | undefined
  | { readonly abort: string }
  | { readonly messages: readonly Message[] };
export type BeforeToolCallResult =
  | undefined
  | { readonly args: unknown }
  | { readonly output: ToolOutput }
  | { readonly abort: string };

/** What the model sees of a tool result; `full` is kept in the graph when the view was cut. */
export interface ProjectedResult {
  readonly content: readonly ToolResultContent[];
  readonly full?: readonly ToolResultContent[];
  /**
   * Replace the tool's structured `value` / `details` in the graph (e.g. the output
   * budget swaps long strings stored as an artifact for a reference). Absent: kept as the tool returned them.
   */
  readonly value?: unknown;
  readonly details?: unknown;
}

/**
 * Hook sites, run in this order within a turn, plugins in registration order:
 * `beforeTurn` → (per model call) `transformContext` → `beforeLlmCall` → `afterLlmResponse`
 * → (per tool call) `beforeToolCall` → `afterToolCall` → `projectToolResult`
 * → `onCheckpoint` → … → `afterCommit`.
 * A failing `beforeTurn` aborts the turn (`Stopped{pluginAbort}`); a failing tool
 * hook becomes that call's error result; `afterCommit` failures are logged only.
 */
export interface PluginHooks {
  readonly beforeTurn?: (
    ctx: HookContext,
    input: readonly Message[],
  ) => Effect.Effect<BeforeTurnResult, unknown>;
  /** Ephemeral prompt view: rewrite the request sent to the model; history is never changed. */
  readonly transformContext?: (ctx: HookContext, request: LlmRequest) => Effect.Effect<LlmRequest, unknown>;
  readonly beforeLlmCall?: (ctx: HookContext, request: LlmRequest) => Effect.Effect<void, unknown>;
  readonly afterLlmResponse?: (ctx: HookContext, response: LlmResponse) => Effect.Effect<void, unknown>;
  readonly beforeToolCall?: (
    ctx: HookContext,
    call: ToolCallInfo,
  ) => Effect.Effect<BeforeToolCallResult, unknown>;
  readonly afterToolCall?: (
    ctx: HookContext,
    call: ToolCallInfo,
    output: ToolOutput,
  ) => Effect.Effect<ToolOutput | undefined, unknown>;
  /** Exclusive: at most one plugin may project tool results. */
  readonly projectToolResult?: (
    ctx: HookContext,
    call: ToolCallInfo,
    output: ToolOutput,
  ) => Effect.Effect<ProjectedResult, unknown>;
  /** Messages to add at a checkpoint (between iterations, before completion). */
  readonly onCheckpoint?: (
    ctx: HookContext,
    checkpoint: "afterWork" | "beforeCompletion",
  ) => Effect.Effect<readonly Message[] | undefined, unknown>;
  readonly afterCommit?: (
    ctx: HookContext,
    result: { readonly headRevision: number },
  ) => Effect.Effect<void, unknown>;
}

export interface Plugin {
  readonly name: string;
  /** Static tools. */
  readonly tools?: readonly ToolDefinition[];
  /** Tools that can change (MCP servers): read again before every model call. */
  readonly dynamicTools?: () => Effect.Effect<readonly ToolDefinition[]>;
  readonly hooks?: PluginHooks;
  /** Text added to the system prompt. */
  readonly prompt?: string;
  /** Status for hosts (`/info`, `lash doctor`): any JSON value. */
  readonly status?: () => unknown;
  /**
   * Durable per-session state: `snapshot` is taken at every commit and stored
   * under the plugin's name in the session record; `restore` receives it at the
   * start of every turn (also after a restart). JSON values only.
   */
  readonly snapshot?: (ctx: HookContext) => Effect.Effect<unknown>;
  readonly restore?: (ctx: HookContext, state: unknown) => Effect.Effect<void>;
  /** The session was deleted: drop whatever this plugin keeps for it in memory. */
  readonly forget?: (sessionId: string) => void;
}
