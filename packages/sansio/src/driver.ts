import type { CacheOptions, LlmRequest, LlmResponse, ReasoningOptions, ToolSpec } from "./llm.ts";
import type { Message } from "./message.ts";
import type { StreamMask } from "./rlm/stream-mask.ts";
import type {
  CheckpointKind,
  CompletedToolCall,
  ExecResult,
  PendingToolCall,
  TurnEvent,
  TurnOutcome,
} from "./turn.ts";
import type { Usage } from "./usage.ts";

/** Static configuration of one turn. Not serialized: supplied again at restore. */
export interface TurnConfig {
  readonly sessionId: string;
  readonly turnId: string;
  /** `provider/model` */
  readonly model: string;
  readonly driver: ProtocolDriver;
  /** Messages → request. Defaults to `defaultProjector`. */
  readonly projector?: ContextProjector;
  /** The settled transcript before this turn (active path). */
  readonly history: readonly Message[];
  /** The new input of this turn (usually one user message); empty input is invalid. */
  readonly input: readonly Message[];
  /** Initial system prompt and tools; a `syncEnvironment` response may replace them. */
  readonly system?: string;
  readonly tools?: readonly ToolSpec[];
  /** Ask the host to refresh system prompt + tools before each iteration (default true). */
  readonly syncEnvironment?: boolean;
  /** Model calls allowed in this turn before the final-notice iteration. */
  readonly maxTurns?: number;
  readonly contextWindow?: number;
  readonly maxOutput?: number;
  readonly reasoning?: ReasoningOptions;
  readonly cache?: CacheOptions;
  /** Text of the notice appended when the turn limit is reached. */
  readonly turnLimitNotice?: (maxTurns: number) => string;
}

export type ContextProjector = (view: ProjectionView) => LlmRequest;

export interface ProjectionView {
  readonly config: TurnConfig;
  readonly system: string | undefined;
  readonly tools: readonly ToolSpec[];
  readonly messages: readonly Message[];
  readonly useTools: boolean;
}

/** Read-only view a driver decides from. */
export interface DriverContext {
  readonly config: TurnConfig;
  /** History + this turn's messages so far. */
  readonly messages: readonly Message[];
  /** How many of `messages` this turn appended. */
  readonly turnMessageCount: number;
  readonly iteration: number;
  readonly usage: Usage;
  /** True once the turn-limit notice was appended: the next model call is the last. */
  readonly finalNotice: boolean;
  readonly tools: readonly ToolSpec[];
  project(useTools: boolean): LlmRequest;
  /** A deterministic id for a message appended now. */
  messageId(): string;
}

export type OnEmpty =
  | { readonly type: "prepareIteration" }
  | { readonly type: "finish"; readonly outcome: TurnOutcome; readonly messages?: readonly Message[] };

export type DriverAction =
  | { readonly type: "startLlm"; readonly request: LlmRequest; readonly state?: unknown }
  | { readonly type: "startTools"; readonly calls: readonly PendingToolCall[] }
  | { readonly type: "startExec"; readonly language: string; readonly code: string; readonly state?: unknown }
  | { readonly type: "startCheckpoint"; readonly checkpoint: CheckpointKind; readonly onEmpty: OnEmpty }
  | { readonly type: "append"; readonly messages: readonly Message[] }
  | { readonly type: "emit"; readonly event: TurnEvent }
  | { readonly type: "advance" }
  | { readonly type: "scheduleFinalNotice" }
  | { readonly type: "finish"; readonly outcome: TurnOutcome };

/**
 * A protocol driver: pure functions of a read-only context returning actions.
 * `standard` (native tool calling) and `rlm` (Lashlang cells) fill this slot.
 */
export interface ProtocolDriver {
  readonly name: string;
  prepareIteration(ctx: DriverContext): readonly DriverAction[];
  onLlmResponse(ctx: DriverContext, response: LlmResponse, state: unknown): readonly DriverAction[];
  onToolResults(
    ctx: DriverContext,
    calls: readonly PendingToolCall[],
    results: readonly CompletedToolCall[],
  ): readonly DriverAction[];
  onExecResult(ctx: DriverContext, result: ExecResult, state: unknown): readonly DriverAction[];
  /**
   * A mask for this protocol's model replies (RLM: `StreamMask`): the host passes text deltas
   * through it, shows only its visible text, and aborts the provider stream once it is `done`.
   */
  readonly streamMask?: () => StreamMask;
}

/** The default projection: system prompt, every message, the tools iff `useTools`. */
export const defaultProjector: ContextProjector = (view) => {
  const { config } = view;
  const tools = view.useTools ? view.tools : [];
  return {
    model: config.model,
    ...(view.system !== undefined ? { system: view.system } : {}),
    messages: view.messages,
    tools,
    ...(tools.length > 0 ? { toolChoice: "auto" as const } : {}),
    ...(config.maxOutput !== undefined ? { maxOutput: config.maxOutput } : {}),
    ...(config.reasoning !== undefined ? { reasoning: config.reasoning } : {}),
    ...(config.cache !== undefined ? { cache: config.cache } : {}),
  };
};

export function defaultTurnLimitNotice(maxTurns: number): string {
  return (
    `[turn limit] This turn has used its ${maxTurns} model calls. Tools are no longer available. ` +
    "Reply now with your final answer: what you did, what is left, and anything the user must know."
  );
}
