import {
  type ContextProjector,
  type DriverAction,
  type DriverContext,
  defaultProjector,
  defaultTurnLimitNotice,
  type OnEmpty,
  type TurnConfig,
} from "./driver.ts";
import type { LlmRequest, LlmResponse, ToolSpec } from "./llm.ts";
import { memoOf } from "./memo.ts";
import type { Message, Part } from "./message.ts";
import type {
  CheckpointKind,
  CompletedToolCall,
  LlmResult,
  PendingToolCall,
  ReplyEffect,
  TurnEffect,
  TurnEvent,
  TurnOutcome,
  TurnResponse,
} from "./turn.ts";
import { addUsage, type Usage } from "./usage.ts";

type State =
  | { readonly kind: "preparing" }
  | { readonly kind: "waitingSync"; readonly effectId: number }
  | { readonly kind: "prepareIteration" }
  | {
      readonly kind: "waitingLlm";
      readonly effectId: number;
      readonly request: LlmRequest;
      readonly driverState?: unknown;
    }
  | { readonly kind: "waitingTools"; readonly effectId: number; readonly calls: readonly PendingToolCall[] }
  | {
      readonly kind: "waitingExec";
      readonly effectId: number;
      readonly language: string;
      readonly code: string;
      readonly driverState?: unknown;
    }
  | {
      readonly kind: "waitingCheckpoint";
      readonly effectId: number;
      readonly checkpoint: CheckpointKind;
      readonly onEmpty: OnEmpty;
    }
  | { readonly kind: "finished" };

/** Serialized machine state (JSON-safe). The config is not part of it. */
export interface TurnCheckpoint {
  readonly version: 1;
  readonly state: State;
  readonly queue: readonly TurnEffect[];
  readonly nextEffectId: number;
  readonly turnMessages: readonly Message[];
  readonly iteration: number;
  readonly usage: Usage;
  readonly system: string | undefined;
  readonly tools: readonly ToolSpec[];
  readonly syncedIteration: number | undefined;
  readonly finalNotice: boolean;
  readonly messageCounter: number;
  readonly progressCursor: number;
}

const responseFor = {
  waitingSync: "environmentSynced",
  waitingLlm: "llmComplete",
  waitingTools: "toolResults",
  waitingExec: "execResult",
  waitingCheckpoint: "checkpointDelivered",
} as const;

/**
 * The sans-IO turn state machine. `poll()` yields the next effect (or
 * `undefined` when the host must respond first); `respond()` feeds the result
 * of the outstanding reply-producing effect back. Pure and synchronous:
 * no I/O, no clock, no randomness.
 */
export class TurnMachine {
  private state: State = { kind: "preparing" };
  private queue: TurnEffect[] = [];
  private queueHead = 0;
  private redeliver = false;
  private nextEffectId = 1;
  /** History followed by this turn's messages; append-only. */
  private readonly messages: Message[];
  /** `messages` without lash's call ids, kept in step with it (they only grow). */
  private readonly stripped: Message[] = [];
  private readonly historyLength: number;
  private iteration = 0;
  private usage: Usage = {};
  private system: string | undefined;
  private tools: readonly ToolSpec[];
  private syncedIteration: number | undefined;
  private finalNotice = false;
  private messageCounter = 0;
  private progressCursor: number;
  private readonly projector: ContextProjector;
  private readonly ctx: DriverContext;

  readonly config: TurnConfig;

  constructor(config: TurnConfig) {
    this.config = config;
    this.messages = config.history.slice();
    this.historyLength = this.messages.length;
    this.progressCursor = this.historyLength;
    this.system = config.system;
    this.tools = config.tools ?? [];
    this.projector = config.projector ?? defaultProjector;
    const self = this;
    this.ctx = {
      config,
      get messages() {
        return self.messages;
      },
      get turnMessageCount() {
        return self.messages.length - self.historyLength;
      },
      get iteration() {
        return self.iteration;
      },
      get usage() {
        return self.usage;
      },
      get finalNotice() {
        return self.finalNotice;
      },
      get tools() {
        return self.tools;
      },
      project: (useTools) => self.project(useTools),
      messageId: () => self.freshMessageId(),
    };
  }

  /** Rebuild a machine from a checkpoint. The outstanding effect is emitted once more, same id and payload. */
  static restore(config: TurnConfig, checkpoint: TurnCheckpoint): TurnMachine {
    if (checkpoint.version !== 1)
      throw new Error(`unsupported turn checkpoint version ${checkpoint.version}`);
    const m = new TurnMachine(config);
    m.state = checkpoint.state;
    m.queue = checkpoint.queue.slice();
    m.nextEffectId = checkpoint.nextEffectId;
    for (const message of checkpoint.turnMessages) m.messages.push(message);
    m.iteration = checkpoint.iteration;
    m.usage = checkpoint.usage;
    m.system = checkpoint.system;
    m.tools = checkpoint.tools;
    m.syncedIteration = checkpoint.syncedIteration;
    m.finalNotice = checkpoint.finalNotice;
    m.messageCounter = checkpoint.messageCounter;
    m.progressCursor = m.historyLength + checkpoint.progressCursor;
    const outstanding = m.outstanding();
    m.redeliver =
      outstanding !== undefined &&
      !m.queue.some((e) => "effectId" in e && e.effectId === outstanding.effectId);
    return m;
  }

  checkpoint(): TurnCheckpoint {
    const snapshot: TurnCheckpoint = {
      version: 1,
      state: this.state,
      queue: this.queue.slice(this.queueHead),
      nextEffectId: this.nextEffectId,
      turnMessages: this.messages.slice(this.historyLength),
      iteration: this.iteration,
      usage: this.usage,
      system: this.system,
      tools: this.tools,
      syncedIteration: this.syncedIteration,
      finalNotice: this.finalNotice,
      messageCounter: this.messageCounter,
      progressCursor: this.progressCursor - this.historyLength,
    };
    // Detach from live structures: a checkpoint is a value.
    return JSON.parse(JSON.stringify(snapshot)) as TurnCheckpoint;
  }

  get finished(): boolean {
    return this.state.kind === "finished" && this.queueHead >= this.queue.length;
  }

  /** The reply-producing effect the machine waits on, if any. */
  outstanding(): ReplyEffect | undefined {
    const s = this.state;
    switch (s.kind) {
      case "waitingSync":
        return { kind: "syncEnvironment", effectId: s.effectId, iteration: this.iteration };
      case "waitingLlm":
        return { kind: "callLlm", effectId: s.effectId, iteration: this.iteration, request: s.request };
      case "waitingTools":
        return { kind: "runTools", effectId: s.effectId, iteration: this.iteration, calls: s.calls };
      case "waitingExec":
        return {
          kind: "execCode",
          effectId: s.effectId,
          iteration: this.iteration,
          language: s.language,
          code: s.code,
        };
      case "waitingCheckpoint":
        return {
          kind: "checkpoint",
          effectId: s.effectId,
          iteration: this.iteration,
          checkpoint: s.checkpoint,
        };
      default:
        return undefined;
    }
  }

  poll(): TurnEffect | undefined {
    const queued = this.dequeue();
    if (queued) return queued;
    if (this.redeliver) {
      this.redeliver = false;
      const effect = this.outstanding();
      if (effect) return effect;
    }
    if (this.state.kind === "preparing") this.start();
    if (this.state.kind === "prepareIteration") this.prepareIteration();
    return this.dequeue();
  }

  /** Feed the result of the outstanding effect. Returns false (and changes nothing) for a stale or mismatched response. */
  respond(response: TurnResponse): boolean {
    const s = this.state;
    if (s.kind === "preparing" || s.kind === "prepareIteration" || s.kind === "finished") return false;
    if (responseFor[s.kind] !== response.kind || s.effectId !== response.effectId) return false;
    this.redeliver = false;
    switch (response.kind) {
      case "environmentSynced": {
        if (response.error !== undefined) {
          this.finish({ type: "stopped", reason: "runtimeError", message: response.error });
          return true;
        }
        if (response.system !== undefined) this.system = response.system;
        if (response.tools !== undefined) this.tools = response.tools;
        this.syncedIteration = this.iteration;
        this.state = { kind: "prepareIteration" };
        return true;
      }
      case "llmComplete":
        this.onLlm(response.result, (s as Extract<State, { kind: "waitingLlm" }>).driverState);
        return true;
      case "toolResults":
        this.onTools((s as Extract<State, { kind: "waitingTools" }>).calls, response.results);
        return true;
      case "execResult":
        this.state = { kind: "prepareIteration" };
        this.apply(
          this.config.driver.onExecResult(
            this.ctx,
            response.result,
            (s as Extract<State, { kind: "waitingExec" }>).driverState,
          ),
        );
        return true;
      case "checkpointDelivered": {
        const { checkpoint, onEmpty } = s as Extract<State, { kind: "waitingCheckpoint" }>;
        if (response.messages.length === 0) {
          if (onEmpty.type === "finish") {
            if (onEmpty.messages) this.append(onEmpty.messages);
            this.finish(onEmpty.outcome);
          } else {
            this.state = { kind: "prepareIteration" };
            this.flushProgress();
          }
          return true;
        }
        // New input arrived (queued user message, plugin message): keep any draft answer, then go on.
        if (onEmpty.type === "finish" && onEmpty.messages) this.append(onEmpty.messages);
        this.append(response.messages);
        this.state = { kind: "prepareIteration" };
        if (checkpoint === "beforeCompletion") this.advance();
        this.flushProgress();
        return true;
      }
    }
  }

  /** Cancel the turn now: what was appended stays; the outcome is `Stopped{cancelled}`. */
  cancel(message?: string): void {
    if (this.state.kind === "finished") return;
    this.redeliver = false;
    this.finish({ type: "stopped", reason: "cancelled", ...(message !== undefined ? { message } : {}) });
  }

  // ---- internals ----

  private dequeue(): TurnEffect | undefined {
    if (this.queueHead < this.queue.length) {
      const effect = this.queue[this.queueHead++];
      if (this.queueHead === this.queue.length) {
        this.queue = [];
        this.queueHead = 0;
      }
      return effect;
    }
    return undefined;
  }

  private emit(event: TurnEvent): void {
    this.queue.push({ kind: "emit", event });
  }

  private freshMessageId(): string {
    return `${this.config.turnId}.m${this.messageCounter++}`;
  }

  private project(useTools: boolean): LlmRequest {
    const request = this.projector({
      config: this.config,
      system: this.system,
      tools: this.tools,
      messages: this.messages,
      useTools,
    });
    if (request.messages !== this.messages)
      return { ...request, messages: request.messages.map(withoutLashIds) };
    // the machine's own messages only grow: strip the new ones, and hand the request a copy
    // (one array copy per request instead of a lookup per message)
    for (let i = this.stripped.length; i < this.messages.length; i++)
      this.stripped.push(withoutLashIds(this.messages[i]!));
    return { ...request, messages: this.stripped.slice() };
  }

  private start(): void {
    if (this.config.input.length === 0) {
      this.finish({ type: "stopped", reason: "invalidInput", message: "the turn input is empty" });
      return;
    }
    this.append(this.config.input);
    this.flushProgress();
    if (this.config.syncEnvironment !== false) this.issueSync();
    else this.state = { kind: "prepareIteration" };
  }

  private issueSync(): void {
    const effectId = this.nextEffectId++;
    this.state = { kind: "waitingSync", effectId };
    this.queue.push({ kind: "syncEnvironment", effectId, iteration: this.iteration });
  }

  private prepareIteration(): void {
    if (this.config.syncEnvironment !== false && this.syncedIteration !== this.iteration) {
      this.issueSync();
      return;
    }
    this.apply(this.config.driver.prepareIteration(this.ctx));
  }

  private append(messages: readonly Message[]): void {
    for (const m of messages) this.messages.push(m);
  }

  private advance(): void {
    this.iteration++;
    const max = this.config.maxTurns;
    if (max !== undefined && !this.finalNotice && this.iteration >= max) {
      this.finalNotice = true;
      const text = (this.config.turnLimitNotice ?? defaultTurnLimitNotice)(max);
      this.append([{ id: this.freshMessageId(), role: "user", parts: [{ type: "text", text }] }]);
    }
  }

  private flushProgress(): void {
    if (this.progressCursor < this.messages.length) {
      const messages = this.messages.slice(this.progressCursor);
      this.progressCursor = this.messages.length;
      this.queue.push({ kind: "progress", messages, iteration: this.iteration });
    }
  }

  private apply(actions: readonly DriverAction[]): void {
    for (const action of actions) {
      switch (action.type) {
        case "append":
          this.append(action.messages);
          break;
        case "emit":
          this.emit(action.event);
          break;
        case "advance":
          this.advance();
          break;
        case "scheduleFinalNotice":
          if (!this.finalNotice) {
            this.finalNotice = true;
            const text = (this.config.turnLimitNotice ?? defaultTurnLimitNotice)(
              this.config.maxTurns ?? this.iteration,
            );
            this.append([{ id: this.freshMessageId(), role: "user", parts: [{ type: "text", text }] }]);
          }
          break;
        case "finish":
          this.finish(action.outcome);
          return;
        case "startLlm": {
          this.flushProgress();
          const effectId = this.nextEffectId++;
          const { request } = action;
          this.state = {
            kind: "waitingLlm",
            effectId,
            request,
            ...(action.state !== undefined ? { driverState: action.state } : {}),
          };
          this.emit({
            type: "llmRequest",
            iteration: this.iteration,
            messageCount: request.messages.length,
            tools: request.tools.map((t) => t.name),
          });
          this.queue.push({ kind: "callLlm", effectId, iteration: this.iteration, request });
          return;
        }
        case "startTools": {
          this.flushProgress();
          const effectId = this.nextEffectId++;
          this.state = { kind: "waitingTools", effectId, calls: action.calls };
          this.queue.push({ kind: "runTools", effectId, iteration: this.iteration, calls: action.calls });
          return;
        }
        case "startExec": {
          this.flushProgress();
          const effectId = this.nextEffectId++;
          this.state = {
            kind: "waitingExec",
            effectId,
            language: action.language,
            code: action.code,
            ...(action.state !== undefined ? { driverState: action.state } : {}),
          };
          this.queue.push({
            kind: "execCode",
            effectId,
            iteration: this.iteration,
            language: action.language,
            code: action.code,
          });
          return;
        }
        case "startCheckpoint": {
          this.flushProgress();
          const effectId = this.nextEffectId++;
          this.state = {
            kind: "waitingCheckpoint",
            effectId,
            checkpoint: action.checkpoint,
            onEmpty: action.onEmpty,
          };
          this.queue.push({
            kind: "checkpoint",
            effectId,
            iteration: this.iteration,
            checkpoint: action.checkpoint,
          });
          return;
        }
      }
    }
    this.flushProgress();
  }

  private finish(outcome: TurnOutcome): void {
    this.flushProgress();
    this.state = { kind: "finished" };
    this.emit({ type: "outcome", outcome });
    this.queue.push({
      kind: "done",
      outcome,
      messages: this.messages.slice(this.historyLength),
      usage: this.usage,
      iteration: this.iteration,
    });
  }

  private onLlm(result: LlmResult, driverState: unknown): void {
    this.state = { kind: "prepareIteration" };
    if (!result.ok) {
      const { error } = result;
      if (error.kind === "cancelled") {
        this.finish({ type: "stopped", reason: "cancelled", message: error.message });
        return;
      }
      this.emit({ type: "error", message: error.message, kind: error.kind, retryable: error.retryable });
      this.finish({ type: "stopped", reason: "providerError", message: error.message });
      return;
    }
    const response = result.response;
    this.usage = addUsage(this.usage, response.usage);
    this.emit({ type: "usage", iteration: this.iteration, usage: response.usage, cumulative: this.usage });
    const text = joinText(response.parts);
    let toolCalls = 0;
    for (const p of response.parts) if (p.type === "toolCall") toolCalls++;
    this.emit({
      type: "llmResponse",
      iteration: this.iteration,
      stopReason: response.stopReason,
      text,
      toolCalls,
    });

    let stop = response.stopReason;
    const window = this.config.contextWindow;
    if (
      stop === "outputLimit" &&
      response.usage.output === 0 &&
      window !== undefined &&
      response.usage.input !== undefined &&
      response.usage.input >= 0.95 * window
    ) {
      stop = "contextOverflow";
    }
    switch (stop) {
      case "outputLimit": {
        this.appendVisible(response.parts);
        this.finish({
          type: "stopped",
          reason: "incomplete",
          message: "the model reached its output limit before finishing",
          ...(text ? { text } : {}),
        });
        return;
      }
      case "contextOverflow":
      case "contentFilter":
      case "error": {
        const message =
          response.errorMessage ??
          (stop === "contextOverflow"
            ? "the prompt exceeds the model's context window"
            : stop === "contentFilter"
              ? "the provider's content filter stopped the response"
              : "the provider reported an error");
        this.emit({ type: "error", message, kind: stop, retryable: false });
        this.finish({ type: "stopped", reason: "providerError", message });
        return;
      }
      case "cancelled":
        this.appendVisible(response.parts);
        this.finish({ type: "stopped", reason: "cancelled", ...(text ? { text } : {}) });
        return;
      default:
        break;
    }
    if (this.finalNotice) {
      this.appendVisible(response.parts);
      this.finish({
        type: "stopped",
        reason: "maxTurns",
        message: `the turn reached its limit of ${this.config.maxTurns ?? this.iteration} model calls`,
        ...(text ? { text } : {}),
      });
      return;
    }
    this.apply(this.config.driver.onLlmResponse(this.ctx, response, driverState));
  }

  /** Append the text and reasoning of a response (never its tool calls) as an assistant message. */
  private appendVisible(parts: readonly Part[]): void {
    const visible = parts.filter((p) => p.type === "text" || p.type === "reasoning");
    if (visible.length > 0) this.append([{ id: this.freshMessageId(), role: "assistant", parts: visible }]);
  }

  private onTools(calls: readonly PendingToolCall[], results: readonly CompletedToolCall[]): void {
    this.state = { kind: "prepareIteration" };
    // pair by lash's id (unique); a result without one pairs by the provider's id, first unused first
    const byId = new Map<string, CompletedToolCall[]>();
    for (const r of results) {
      const key = r.lashCallId ?? `provider:${r.callId}`;
      const list = byId.get(key);
      if (list) list.push(r);
      else byId.set(key, [r]);
    }
    const take = (key: string) => byId.get(key)?.shift();
    const ordered = calls.map((call): CompletedToolCall => {
      if (call.argsError !== undefined) return invalidArgumentsResult(call);
      const found =
        (call.lashCallId !== undefined ? take(call.lashCallId) : undefined) ??
        take(`provider:${call.callId}`);
      return (
        (found && call.lashCallId !== undefined && found.lashCallId === undefined
          ? { ...found, lashCallId: call.lashCallId }
          : found) ?? {
          callId: call.callId,
          ...(call.lashCallId !== undefined ? { lashCallId: call.lashCallId } : {}),
          name: call.name,
          content: [
            { type: "text", text: `The call to ${call.name} produced no result (it was interrupted).` },
          ],
          isError: true,
        }
      );
    });
    this.apply(this.config.driver.onToolResults(this.ctx, calls, ordered));
  }
}

/**
 * A request carries the provider's ids only: lash's own call ids stay in the graph, so a request
 * (and its journal hash) is the same whether or not the calls before it were given one.
 */
function withoutLashIds(m: Message): Message {
  // messages are immutable: each is stripped once, and a request reuses the same objects as
  // the one before it (which keeps request building and hashing independent of history)
  const memo = memoOf(m);
  if (memo.stripped !== undefined) return memo.stripped as Message;
  const out = stripLashIds(m);
  memo.stripped = out;
  return out;
}

function stripLashIds(m: Message): Message {
  if (!m.parts.some((p) => (p.type === "toolCall" || p.type === "toolResult") && p.lashCallId !== undefined))
    return m;
  return {
    ...m,
    parts: m.parts.map((p) => {
      if ((p.type !== "toolCall" && p.type !== "toolResult") || p.lashCallId === undefined) return p;
      const { lashCallId: _, ...rest } = p;
      return rest;
    }),
  };
}

function joinText(parts: readonly Part[]): string {
  let out = "";
  let n = 0;
  for (const p of parts) {
    if (p.type !== "text") continue;
    if (n++ > 0 && out && p.text && !out.endsWith("\n")) out += "\n\n";
    out += p.text;
  }
  return out;
}

export function responseText(response: LlmResponse): string {
  return joinText(response.parts);
}

/** The error result a call with malformed arguments gets; it is never run. */
export function invalidArgumentsResult(call: PendingToolCall): CompletedToolCall {
  return {
    callId: call.callId,
    ...(call.lashCallId !== undefined ? { lashCallId: call.lashCallId } : {}),
    name: call.name,
    content: [
      {
        type: "text",
        text: `Invalid arguments for ${call.name}: ${call.argsError}. Send the arguments as one JSON object that matches the tool's input schema.`,
      },
    ],
    isError: true,
  };
}
