import type { LlmRequest, LlmResponse, Message, ToolResultContent } from "@lash/sansio";
import type * as Effect from "effect/Effect";
import type { SessionRecord } from "./store.ts";
import type { ToolDefinition, ToolOutput } from "./tool.ts";

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
