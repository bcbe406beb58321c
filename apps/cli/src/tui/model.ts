// The transcript as data: items built from TurnActivity events and settled
// messages. Finished items move (in order) from `live` to `committed`; the view
// renders `committed` once through ink's <Static> and only `live` per frame.
import type { TurnActivity } from "@lash/core";
import { RATE_LIMIT_WAIT } from "@lash/providers";
import type { Message, ToolCallPart, TurnOutcome } from "@lash/sansio";
import { safeSplitPoint } from "./markdown.ts";

export type Family = "shell" | "edit" | "read" | "search" | "plan" | "mcp" | "code" | "agent" | "generic";

export type ToolStatus = "pending" | "running" | "ok" | "error" | "cancelled";

export interface UserItem {
  readonly kind: "user";
  readonly id: string;
  readonly text: string;
}
export interface AssistantItem {
  readonly kind: "assistant";
  readonly id: string;
  text: string;
  done: boolean;
  /** A continuation of the previous chunk of the same message (no marker, no gap). */
  readonly cont: boolean;
  readonly iteration: number;
}
export interface ReasoningItem {
  readonly kind: "reasoning";
  readonly id: string;
  text: string;
  done: boolean;
  readonly startedAt: number;
  endedAt?: number;
  readonly iteration: number;
  readonly unfold?: boolean;
}
export interface ToolItem {
  readonly kind: "tool";
  readonly id: string;
  /** The provider's id for the call (providers may reuse it across turns). */
  readonly callId: string;
  /** lash's id for the call, unique in the session (absent for older sessions and RLM cell operations). */
  lashCallId?: string;
  name: string;
  family: Family;
  args: unknown;
  argsText: string;
  status: ToolStatus;
  /** Streamed output (tail). */
  output: string;
  startedAt: number;
  endedAt?: number;
  resultText?: string;
  details?: unknown;
  /** A subagent this call started (spawn_agent). */
  child?: ChildInfo;
  /** Run by the user with `!command` (not by the model). */
  readonly local?: boolean;
  /** A copy printed unfolded by `/expand`. */
  readonly unfold?: boolean;
  /** An approval request about this call waits for an answer. */
  awaiting?: boolean;
  readonly iteration: number;
}
/** A tool call of a running subagent, as its card shows it. */
export interface ChildCall {
  readonly id: string;
  readonly name: string;
  readonly family: Family;
  readonly args: unknown;
  status: ToolStatus;
  /** First line of the result (errors). */
  note?: string;
}

/** The subagent a `spawn_agent` call started, followed live through its session's activity. */
export interface ChildInfo {
  sessionId: string;
  capability?: string;
  model?: string;
  outcome?: string;
  costUsd?: number;
  /** Its tool calls so far (all of them; the card shows the newest). */
  calls?: ChildCall[];
  /** Tokens (input + output) and cost per child turn, from its `usage` events. */
  turns?: Record<string, { tokens: number; costUsd?: number }>;
}

/** Tokens and cost a child spent so far (all its turns). */
export function childSpent(c: ChildInfo): { tokens: number; costUsd?: number } {
  let tokens = 0;
  let cost: number | undefined;
  for (const t of Object.values(c.turns ?? {})) {
    tokens += t.tokens;
    if (t.costUsd !== undefined) cost = (cost ?? 0) + t.costUsd;
  }
  return { tokens, ...(cost !== undefined ? { costUsd: cost } : {}) };
}

export interface CodeItem {
  readonly kind: "code";
  readonly id: string;
  readonly language: string;
  readonly source: string;
  output: string;
  error?: string;
  done: boolean;
  readonly unfold?: boolean;
}
export interface AgentItem {
  readonly kind: "agent";
  readonly id: string;
  readonly childSessionId: string;
  readonly task: string;
  status: "running" | "ok" | "error" | "cancelled";
  summary?: string;
  readonly startedAt: number;
  endedAt?: number;
}
export interface NoticeItem {
  readonly kind: "notice";
  readonly id: string;
  readonly level: "info" | "warn" | "error" | "success";
  readonly text: string;
  /** Extra lines (command output). */
  readonly body?: readonly string[];
  /** A separator across the width (a session switch, a reprint). */
  readonly rule?: boolean;
}
export interface TurnEndItem {
  readonly kind: "turnEnd";
  readonly id: string;
  readonly outcome: TurnOutcome["type"];
  readonly reason?: string;
  readonly message?: string;
  readonly durationMs: number;
  readonly toolCalls: number;
  readonly costUsd?: number;
}

/** One approval decision about one call (from `approvalResolved`, or the session graph on resume). */
export interface Decision {
  readonly tool: string;
  readonly decision: "approve" | "deny";
  readonly scope?: "once" | "session";
  /** The call ran with arguments the approver edited. */
  readonly edited?: boolean;
  readonly reason?: string;
  readonly layer?: string;
}
/** The answer to one approval request: who decided, each call's decision. */
export interface DecisionItem {
  readonly kind: "approval";
  readonly id: string;
  readonly by: string;
  readonly decisions: readonly Decision[];
  /** The answer came from the turn's journal (a resumed turn), not asked again. */
  readonly replayed?: boolean;
}

export type Item =
  | UserItem
  | DecisionItem
  | AssistantItem
  | ReasoningItem
  | ToolItem
  | CodeItem
  | AgentItem
  | NoticeItem
  | TurnEndItem;

const OUTPUT_KEEP = 16_000;

/** The display family of a tool (from its declared family, else its name). */
export function familyOf(name: string, family?: string): Family {
  if (name.startsWith("mcp__")) return "mcp";
  switch (family) {
    case "shell":
      return "shell";
    case "edit":
    case "write":
    case "patch":
      return "edit";
    case "read":
      return "read";
    case "search":
      return "search";
    case "plan":
      return "plan";
    case "code":
      return "code";
    case "agent":
    case "agents":
    case "subagent":
      return "agent";
    default:
      break;
  }
  const n = name.toLowerCase();
  if (/(^|[._])(shell|bash|exec_command|exec|start_command)$/.test(n)) return "shell";
  if (/(^|[._])(edit|apply_patch|write_file|write|patch)$/.test(n)) return "edit";
  if (/(^|[._])(read_file|read)$/.test(n)) return "read";
  if (/(^|[._])(grep|glob|search|find)$/.test(n)) return "search";
  if (/(^|[._])(update_plan|plan)$/.test(n)) return "plan";
  if (/(^|[._])(spawn|spawn_agent|agent|task)$/.test(n) || n.startsWith("agents.")) return "agent";
  if (/(lashlang|exec_code|code)$/.test(n)) return "code";
  return "generic";
}

export function isDone(item: Item): boolean {
  switch (item.kind) {
    case "assistant":
    case "reasoning":
    case "code":
      return item.done;
    case "tool":
      return item.status !== "pending" && item.status !== "running";
    case "agent":
      return item.status !== "running";
    default:
      return true;
  }
}

function textOf(content: readonly { readonly type: string; readonly text?: string }[]): string {
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}

type PairedResult = { text: string; isError: boolean; details: unknown };

/**
 * Each call's result, paired by lash's call id, or — for calls recorded before lash gave them one —
 * by the provider's id among the calls still waiting since the last user message, first come first
 * served: providers reuse ids across turns (and some within a batch), so an id is never looked up
 * across the session.
 */
function pairResults(messages: readonly Message[]): Map<ToolCallPart, PairedResult> {
  const out = new Map<ToolCallPart, PairedResult>();
  const byLash = new Map<string, ToolCallPart>();
  let waiting = new Map<string, ToolCallPart[]>();
  for (const m of messages) {
    if (m.role === "user") waiting = new Map();
    for (const p of m.parts) {
      if (p.type === "toolCall") {
        if (p.lashCallId !== undefined) byLash.set(p.lashCallId, p);
        const list = waiting.get(p.id);
        if (list) list.push(p);
        else waiting.set(p.id, [p]);
      } else if (p.type === "toolResult") {
        let call = p.lashCallId !== undefined ? byLash.get(p.lashCallId) : undefined;
        const list = waiting.get(p.callId);
        if (call) {
          const i = list?.indexOf(call) ?? -1;
          if (i >= 0) list!.splice(i, 1);
        } else call = list?.shift();
        if (call) out.set(call, { text: textOf(p.content), isError: p.isError, details: p.details });
      }
    }
  }
  return out;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describeRetry(e: Extract<TurnActivity, { type: "retry" }>): string {
  // the client-side rate limiter queues the request: a wait, not a failed attempt
  if (e.reason === RATE_LIMIT_WAIT) return `waiting for rate limit (${(e.delayMs / 1000).toFixed(1)} s)`;
  if (e.reason === "output mismatch")
    return `retry: the reply did not match the required output schema; asking again (attempt ${e.attempt}${e.maxAttempts !== undefined ? ` of ${e.maxAttempts}` : ""})`;
  const kind =
    e.error.kind === "rateLimited"
      ? "rate limited"
      : e.error.kind === "overloaded"
        ? "overloaded"
        : e.error.kind === "server"
          ? "server error"
          : e.error.kind === "network"
            ? "network error"
            : e.error.kind === "timeout"
              ? "timed out"
              : e.error.kind;
  const why = e.reason ?? (e.error.status !== undefined ? `${e.error.status} ${kind}` : kind);
  // the same facts, in the same order, as `lash -p`'s `[retry]` line
  const of = e.maxAttempts !== undefined ? ` of ${e.maxAttempts}` : "";
  const message = e.error.message.split("\n")[0]?.trim();
  return `retry: attempt ${e.attempt}${of} in ${(e.delayMs / 1000).toFixed(1)}s · ${why}${message ? ` · ${message}` : ""}`;
}

export interface TranscriptOptions {
  /** Split a streaming message into Static chunks when its live part grows past this many lines. */
  readonly maxLiveLines?: number;
}

/**
 * Mutable transcript state. `committed` only ever grows (a new array per append,
 * so React sees the change); `reset()` starts a new one (after /clear, redraws).
 */
export class Transcript {
  committed: readonly Item[] = [];
  live: Item[] = [];
  maxLiveLines: number;
  private seq = 0;
  private iteration = 0;
  private turnStartedAt = 0;
  private toolCalls = 0;
  private lastError: string | undefined;
  private seenMessages = new Set<string>();
  /** True when part of the current attempt was already committed (cannot be retracted). */
  private attemptCommitted = false;

  constructor(options: TranscriptOptions = {}) {
    this.maxLiveLines = options.maxLiveLines ?? 24;
  }

  private nextId(prefix: string): string {
    this.seq++;
    return `${prefix}${this.seq}`;
  }

  add(item: Item): void {
    this.live.push(item);
    this.flush();
  }

  user(text: string): void {
    this.add({ kind: "user", id: this.nextId("u"), text });
  }

  notice(level: NoticeItem["level"], text: string, body?: readonly string[]): void {
    this.add({ kind: "notice", id: this.nextId("n"), level, text, ...(body ? { body } : {}) });
  }

  /** A `!command` the user ran directly (no model turn): a live shell card to update. */
  localShell(command: string, at: number): ToolItem {
    const t: ToolItem = {
      kind: "tool",
      id: this.nextId("t"),
      callId: `local-${this.seq}`,
      name: "shell",
      family: "shell",
      args: { command },
      argsText: "",
      status: "running",
      output: "",
      startedAt: at,
      iteration: 0,
      local: true,
    };
    this.add(t);
    return t;
  }

  /** One activity event of a running subagent's session: its card (the spawn_agent call) follows it. */
  childActivity(childSessionId: string, e: TurnActivity): boolean {
    let card: ToolItem | undefined;
    for (const it of this.live) if (it.kind === "tool" && it.child?.sessionId === childSessionId) card = it;
    if (!card?.child) return false;
    const c = card.child;
    switch (e.type) {
      case "toolStarted": {
        c.calls ??= [];
        const calls = c.calls;
        const id = e.lashCallId ?? e.callId;
        const known = calls.find((x) => x.id === id);
        if (known) known.status = "running";
        else
          calls.push({
            id,
            name: e.name,
            family: familyOf(e.name, e.family),
            args: e.args,
            status: "running",
          });
        return true;
      }
      case "toolCompleted": {
        const id = e.lashCallId ?? e.callId;
        const call = c.calls?.find((x) => x.id === id);
        if (!call) return false;
        const text = textOf(e.content);
        call.status = e.isError ? (isCancelText(text) ? "cancelled" : "error") : "ok";
        if (e.isError) call.note = text.trim().split("\n")[0]?.slice(0, 200);
        return true;
      }
      case "usage": {
        c.turns ??= {};
        c.turns[e.turnId] = {
          tokens: (e.cumulative.input ?? 0) + (e.cumulative.output ?? 0),
          ...(e.costUsd !== undefined ? { costUsd: e.costUsd } : {}),
        };
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * `/expand [n]`: print the n-th newest finished card that folds (tool card, thinking, code
   * cell) again, unfolded, at the bottom (what is in the scrollback is never redrawn).
   */
  unfoldCopy(n = 1): Item | undefined {
    let seen = 0;
    for (let i = this.committed.length - 1; i >= 0; i--) {
      const it = this.committed[i]!;
      if ((it.kind !== "tool" && it.kind !== "reasoning" && it.kind !== "code") || it.unfold) continue;
      if (++seen < n) continue;
      const copy = { ...it, id: this.nextId("x"), unfold: true } as Item;
      this.add(copy);
      return copy;
    }
    return undefined;
  }

  /** A separator line across the terminal: what follows belongs to another session or is a reprint. */
  rule(text: string): void {
    this.add({ kind: "notice", id: this.nextId("n"), level: "info", text, rule: true });
  }

  /**
   * Print the last finished turn's collapsible items again (Ctrl+O expands them): reasoning, tool
   * calls with output, code cells. Returns how many; 0 when nothing can be expanded or a turn runs.
   */
  reprintLastTurn(): number {
    if (this.live.length > 0) return 0;
    let start = this.committed.length - 1;
    while (start >= 0 && this.committed[start]!.kind !== "user") start--;
    const again = this.committed
      .slice(start + 1)
      .filter(
        (i) =>
          (i.kind === "reasoning" && i.text.trim() !== "") ||
          (i.kind === "tool" && !!(i.resultText || i.output)) ||
          i.kind === "code",
      );
    if (again.length === 0) return 0;
    this.rule("the last turn, expanded · ctrl+o collapses");
    this.committed = this.committed.concat(again.map((i) => ({ ...i, id: this.nextId("x") }) as Item));
    return again.length;
  }

  /** Forget everything shown (the session is untouched). */
  reset(): void {
    this.committed = [];
    this.live = this.live.filter((i) => !isDone(i));
  }

  /** Move the finished prefix of `live` to `committed`, in order. */
  flush(): void {
    const prefix = () => {
      let k = 0;
      while (k < this.live.length && isDone(this.live[k]!)) k++;
      return k;
    };
    let n = prefix();
    // a long streaming message: commit its finished paragraphs
    const head = this.live[n];
    if (head?.kind === "assistant" && !head.done && this.splitStreaming(head, n)) n = prefix();
    if (n === 0) return;
    this.committed = this.committed.concat(this.live.splice(0, n));
  }

  private splitStreaming(item: AssistantItem, index: number): boolean {
    let lines = 0;
    for (let i = item.text.indexOf("\n"); i >= 0; i = item.text.indexOf("\n", i + 1)) lines++;
    if (lines <= this.maxLiveLines) return false;
    const cut = safeSplitPoint(item.text);
    if (cut <= 0) return false;
    const head: AssistantItem = { ...item, text: item.text.slice(0, cut).replace(/\n+$/, ""), done: true };
    const rest: AssistantItem = {
      kind: "assistant",
      id: this.nextId("a"),
      text: item.text.slice(cut),
      done: false,
      cont: true,
      iteration: item.iteration,
    };
    this.live.splice(index, 1, head, rest);
    this.attemptCommitted = true;
    return true;
  }

  private current<K extends Item["kind"]>(kind: K): Extract<Item, { kind: K }> | undefined {
    const last = this.live[this.live.length - 1];
    return last && last.kind === kind && !isDone(last) ? (last as Extract<Item, { kind: K }>) : undefined;
  }

  private closeStreams(at: number): void {
    for (const it of this.live) {
      if (it.kind === "assistant" && !it.done) it.done = true;
      if (it.kind === "reasoning" && !it.done) {
        it.done = true;
        it.endedAt = at;
      }
    }
  }

  /**
   * The live card of a call: by lash's id when the event has one (a provider may use one id for
   * several calls), claiming a card streamed before lash named the call; else the latest card of the
   * provider's id.
   */
  private tool(callId: string, lashCallId?: string): ToolItem | undefined {
    if (lashCallId !== undefined) {
      for (let i = this.live.length - 1; i >= 0; i--) {
        const it = this.live[i]!;
        if (it.kind === "tool" && it.lashCallId === lashCallId) return it;
      }
      for (const it of this.live) {
        if (
          it.kind === "tool" &&
          it.callId === callId &&
          it.lashCallId === undefined &&
          it.status === "pending"
        ) {
          it.lashCallId = lashCallId;
          return it;
        }
      }
      return undefined;
    }
    for (let i = this.live.length - 1; i >= 0; i--) {
      const it = this.live[i]!;
      if (it.kind === "tool" && it.callId === callId) return it;
    }
    return undefined;
  }

  /**
   * Render the settled messages of a session (resume) as finished items; `decisions` (by the
   * id of the message they follow, see `decisionsOfNodes`) become approval cards after it.
   */
  loadMessages(
    messages: readonly Message[],
    decisions?: ReadonlyMap<string, readonly Omit<DecisionItem, "id" | "kind">[]>,
  ): void {
    const results = pairResults(messages);
    const items: Item[] = [];
    const afterMessage = (m: Message) => {
      for (const d of decisions?.get(m.id) ?? [])
        items.push({ kind: "approval", id: this.nextId("d"), ...d });
    };
    for (const m of messages) {
      this.seenMessages.add(m.id);
      if (m.role !== "system" && m.role !== "tool" && m.role !== "user") this.loadParts(m, results, items);
      else if (m.role === "user") this.loadUser(m, items);
      afterMessage(m);
    }
    this.live.push(...items);
    this.flush();
  }

  private loadUser(m: Message, items: Item[]): void {
    const text = m.parts
      .filter((p) => p.type === "text")
      .map((p) => (p.type === "text" ? p.text : ""))
      .join("");
    const atts = m.parts.filter((p) => p.type === "attachment").length;
    items.push({
      kind: "user",
      id: this.nextId("u"),
      text: atts > 0 ? `${text}${text ? " " : ""}[${atts} attachment${atts > 1 ? "s" : ""}]` : text,
    });
  }

  private loadParts(m: Message, results: Map<ToolCallPart, PairedResult>, items: Item[]): void {
    for (const p of m.parts) {
      switch (p.type) {
        case "text":
          if (p.text.trim())
            items.push({
              kind: "assistant",
              id: this.nextId("a"),
              text: p.text,
              done: true,
              cont: false,
              iteration: 0,
            });
          break;
        case "reasoning":
          if (p.text.trim())
            items.push({
              kind: "reasoning",
              id: this.nextId("r"),
              text: p.text,
              done: true,
              startedAt: 0,
              iteration: 0,
            });
          break;
        case "toolCall": {
          const r = results.get(p);
          const args = parseArgs(p.argumentsText);
          items.push({
            kind: "tool",
            id: this.nextId("t"),
            callId: p.id,
            ...(p.lashCallId !== undefined ? { lashCallId: p.lashCallId } : {}),
            name: p.name,
            family: familyOf(p.name, familyFromDetails(r?.details)),
            args,
            argsText: p.argumentsText,
            status:
              r === undefined
                ? "cancelled"
                : r.isError
                  ? isCancelText(r.text)
                    ? "cancelled"
                    : "error"
                  : "ok",
            output: "",
            startedAt: 0,
            ...(r ? { resultText: r.text, details: r.details } : {}),
            iteration: 0,
          });
          break;
        }
        case "code":
          items.push({
            kind: "code",
            id: this.nextId("c"),
            language: p.language,
            source: p.source,
            output: "",
            done: true,
          });
          break;
        case "output": {
          const last = items[items.length - 1];
          if (last?.kind === "code") last.output += p.text;
          break;
        }
        case "error":
          items.push({ kind: "notice", id: this.nextId("n"), level: "error", text: p.message });
          break;
        default:
          break;
      }
    }
  }

  /** Apply one activity event. */
  apply(e: TurnActivity): void {
    switch (e.type) {
      case "turnStarted": {
        this.turnStartedAt = e.at;
        this.toolCalls = 0;
        this.iteration = 0;
        this.lastError = undefined;
        if (e.resumed) {
          this.notice("info", "resuming the interrupted turn from its journal");
          for (const m of e.input)
            if (m.role === "user") {
              const text = m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
              if (text) this.user(text);
            }
        }
        break;
      }
      case "llmRequest":
        this.closeStreams(e.at);
        for (const it of this.live) if (it.kind === "code") it.done = true;
        this.iteration = e.iteration;
        this.attemptCommitted = false;
        break;
      case "textDelta": {
        const r = this.current("reasoning");
        if (r) {
          r.done = true;
          r.endedAt = e.at;
        }
        const a = this.current("assistant");
        if (a) a.text += e.text;
        else if (e.text.trim() || this.live.length > 0)
          this.live.push({
            kind: "assistant",
            id: this.nextId("a"),
            text: e.text.replace(/^\n+/, ""),
            done: false,
            cont: false,
            iteration: this.iteration,
          });
        break;
      }
      case "reasoningDelta": {
        const r = this.current("reasoning");
        if (r) r.text += e.text;
        else
          this.live.push({
            kind: "reasoning",
            id: this.nextId("r"),
            text: e.text,
            done: false,
            startedAt: e.at,
            iteration: this.iteration,
          });
        break;
      }
      case "toolCallDelta": {
        this.closeStreams(e.at);
        let t = this.tool(e.callId);
        if (!t) {
          const name = e.name ?? "tool";
          t = {
            kind: "tool",
            id: this.nextId("t"),
            callId: e.callId,
            name,
            family: familyOf(name),
            args: undefined,
            argsText: "",
            status: "pending",
            output: "",
            startedAt: e.at,
            iteration: this.iteration,
          };
          this.live.push(t);
        } else if (e.name && t.name === "tool") {
          t.name = e.name;
          t.family = familyOf(e.name);
        }
        if (e.argsDelta) t.argsText += e.argsDelta;
        break;
      }
      case "retry":
        this.notice("warn", describeRetry(e));
        break;
      case "attemptReset": {
        // retract what the failed attempt streamed (not yet committed)
        this.live = this.live.filter(
          (it) =>
            !(
              (it.kind === "assistant" ||
                it.kind === "reasoning" ||
                (it.kind === "tool" && it.status === "pending")) &&
              it.iteration === this.iteration
            ),
        );
        if (this.attemptCommitted) {
          this.notice("warn", "the partial response above was discarded; the model is answering again");
          this.attemptCommitted = false;
        }
        break;
      }
      case "llmResponse":
        this.closeStreams(e.at);
        break;
      case "toolStarted": {
        this.closeStreams(e.at);
        this.toolCalls++;
        let t = this.tool(e.callId, e.lashCallId);
        if (!t) {
          t = {
            kind: "tool",
            id: this.nextId("t"),
            callId: e.callId,
            ...(e.lashCallId !== undefined ? { lashCallId: e.lashCallId } : {}),
            name: e.name,
            family: familyOf(e.name, e.family),
            args: e.args,
            argsText: "",
            status: "running",
            output: "",
            startedAt: e.at,
            iteration: this.iteration,
          };
          this.live.push(t);
        } else {
          t.name = e.name;
          t.family = familyOf(e.name, e.family);
          t.args = e.args;
          t.status = "running";
          t.startedAt = e.at;
        }
        break;
      }
      case "toolProgress": {
        const t = this.tool(e.callId, e.lashCallId);
        if (!t) break;
        const u = e.update as { type?: string; text?: unknown } | string | undefined;
        const text =
          typeof u === "string"
            ? u
            : u && typeof u === "object" && typeof u.text === "string"
              ? u.text
              : undefined;
        if (text !== undefined) {
          t.output += text;
          if (t.output.length > OUTPUT_KEEP * 2) t.output = t.output.slice(-OUTPUT_KEEP);
        }
        break;
      }
      case "toolCompleted": {
        let t = this.tool(e.callId, e.lashCallId);
        if (!t) {
          t = {
            kind: "tool",
            id: this.nextId("t"),
            callId: e.callId,
            ...(e.lashCallId !== undefined ? { lashCallId: e.lashCallId } : {}),
            name: e.name,
            family: familyOf(e.name),
            args: undefined,
            argsText: "",
            status: "running",
            output: "",
            startedAt: e.at - e.durationMs,
            iteration: this.iteration,
          };
          this.live.push(t);
        }
        const text = textOf(e.content);
        const cancelled = e.isError && isCancelText(text);
        t.status = cancelled ? "cancelled" : e.isError ? "error" : "ok";
        t.resultText = text;
        t.details = e.details;
        t.endedAt = e.at;
        if (!t.startedAt || t.startedAt > e.at) t.startedAt = e.at - e.durationMs;
        const df = familyFromDetails(e.details);
        if (df && t.family === "generic") t.family = familyOf(t.name, df);
        break;
      }
      case "messages":
        for (const m of e.messages) {
          if (this.seenMessages.has(m.id)) continue;
          this.seenMessages.add(m.id);
          for (const p of m.parts) {
            if (p.type === "code") {
              this.closeStreams(e.at);
              this.live.push({
                kind: "code",
                id: this.nextId("c"),
                language: p.language,
                source: p.source,
                output: "",
                done: m.role !== "assistant",
              });
            } else if (p.type === "output" || p.type === "error") {
              let code: CodeItem | undefined;
              for (let i = this.live.length - 1; i >= 0 && !code; i--) {
                const it = this.live[i]!;
                if (it.kind === "code") code = it;
              }
              if (code) {
                if (p.type === "output") code.output += p.text;
                else code.error = p.message;
                code.done = true;
              }
            }
          }
        }
        break;
      case "usage":
        break;
      case "error":
        this.lastError = e.message;
        this.notice("error", e.kind && e.kind !== "turnFailed" ? `${e.message} (${e.kind})` : e.message);
        break;
      case "plugin":
        this.plugin(e);
        break;
      case "approvalRequested":
        for (const item of e.items) {
          const t = this.tool(item.callId, item.lashCallId);
          if (t) t.awaiting = true;
        }
        break;
      case "approvalResolved":
        for (const d of e.decisions) {
          const t = this.tool(d.callId);
          if (t) t.awaiting = false;
        }
        this.live.push({
          kind: "approval",
          id: this.nextId("d"),
          by: e.by,
          decisions: e.decisions.map((d) => decisionOf(d)),
          ...(e.replayed ? { replayed: true } : {}),
        });
        break;
      case "turnFinished": {
        if (e.outcome.type === "frameSwitch") {
          this.notice("info", `new frame: ${e.outcome.task}`);
          break;
        }
        this.closeStreams(e.at);
        const cancelled = e.outcome.type === "stopped" && e.outcome.reason === "cancelled";
        for (const it of this.live) {
          if (it.kind === "tool" && (it.status === "running" || it.status === "pending")) {
            it.status = cancelled ? "cancelled" : "error";
            it.endedAt = e.at;
          }
          if (it.kind === "code" && !it.done) it.done = true;
          if (it.kind === "agent" && it.status === "running") {
            it.status = cancelled ? "cancelled" : "error";
            it.endedAt = e.at;
          }
        }
        const o = e.outcome;
        const message = o.type === "stopped" && o.message !== this.lastError ? o.message : undefined;
        this.add({
          kind: "turnEnd",
          id: this.nextId("e"),
          outcome: o.type,
          ...(o.type === "stopped" ? { reason: o.reason } : {}),
          ...(message ? { message } : {}),
          durationMs: Math.max(0, e.at - this.turnStartedAt),
          toolCalls: this.toolCalls,
          ...(e.costUsd !== undefined ? { costUsd: e.costUsd } : {}),
        });
        break;
      }
      default:
        break;
    }
    this.flush();
  }

  private plugin(e: Extract<TurnActivity, { type: "plugin" }>): void {
    if (e.plugin !== "subagents" && !/child/i.test(e.name)) return;
    const d = (e.data ?? {}) as Record<string, unknown>;
    const childSessionId = typeof d.childSessionId === "string" ? d.childSessionId : "";
    const callId = typeof d.callId === "string" ? d.callId : undefined;
    const card = callId
      ? this.tool(callId, typeof d.lashCallId === "string" ? d.lashCallId : undefined)
      : undefined;
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    if (e.name === "childStarted") {
      if (card) {
        // the spawn_agent card carries the child
        card.child = {
          sessionId: childSessionId,
          ...(str(d.capability) ? { capability: str(d.capability)! } : {}),
          ...(str(d.model) ? { model: str(d.model)! } : {}),
        };
        return;
      }
      const task = [d.task, d.prompt, d.description, d.title].find((v) => typeof v === "string") as
        | string
        | undefined;
      this.live.push({
        kind: "agent",
        id: this.nextId("g"),
        childSessionId,
        task: task ?? "subagent",
        status: "running",
        startedAt: e.at,
      });
    } else if (e.name === "childFinished") {
      const outcome = d.outcome as { type?: string; reason?: string } | string | undefined;
      const type = typeof outcome === "string" ? outcome : outcome?.type;
      const reason = typeof outcome === "object" ? outcome?.reason : undefined;
      const status: AgentItem["status"] =
        d.isError === true || d.ok === false || type === "failed"
          ? "error"
          : type === "cancelled" || reason === "cancelled"
            ? "cancelled"
            : type === "stopped"
              ? "error"
              : "ok";
      if (card?.child) {
        card.child.outcome = type ?? status;
        if (typeof d.costUsd === "number") card.child.costUsd = d.costUsd;
        return;
      }
      const it = this.live.find(
        (i): i is AgentItem =>
          i.kind === "agent" && i.childSessionId === childSessionId && i.status === "running",
      );
      if (!it) return;
      it.status = status;
      const summary = [d.summary, d.text, d.result, d.error].find((v) => typeof v === "string") as
        | string
        | undefined;
      if (summary) it.summary = summary;
      it.endedAt = e.at;
    }
  }
}

/**
 * The approval decisions of a session's graph (its `approval` protocol nodes, in order), as
 * approval cards keyed by the message each follows; one card per request.
 */
export function decisionsOfNodes(
  nodes: readonly { readonly kind: string; readonly payload: unknown }[],
): Map<string, Omit<DecisionItem, "id" | "kind">[]> {
  const out = new Map<string, Omit<DecisionItem, "id" | "kind">[]>();
  let lastMessage: string | undefined;
  let open: { requestId: string; by: string; decisions: Decision[] } | undefined;
  for (const n of nodes) {
    if (n.kind === "message") {
      lastMessage = (n.payload as { id?: string } | undefined)?.id;
      open = undefined;
      continue;
    }
    const p = n.payload as
      | {
          type?: string;
          requestId?: string;
          by?: string;
          tool?: string;
          decision?: "approve" | "deny";
          scope?: "once" | "session";
          edited?: boolean;
          reason?: string;
          layer?: string;
        }
      | undefined;
    if (n.kind !== "protocol" || p?.type !== "approval" || !p.decision || lastMessage === undefined) continue;
    const d = decisionOf({ ...p, decision: p.decision, tool: p.tool ?? "tool" });
    if (open && open.requestId === p.requestId && open.by === p.by) {
      open.decisions.push(d);
      continue;
    }
    open = { requestId: p.requestId ?? "", by: p.by ?? "?", decisions: [d] };
    const list = out.get(lastMessage) ?? [];
    list.push(open);
    out.set(lastMessage, list);
  }
  return new Map([...out].map(([k, v]) => [k, v.map((c) => ({ by: c.by, decisions: c.decisions }))]));
}

function decisionOf(d: {
  readonly tool?: string | undefined;
  readonly callId?: string;
  readonly decision: "approve" | "deny";
  readonly scope?: "once" | "session" | undefined;
  readonly args?: unknown;
  readonly edited?: boolean | undefined;
  readonly reason?: string | undefined;
  readonly layer?: string | undefined;
}): Decision {
  return {
    tool: d.tool ?? d.callId ?? "tool",
    decision: d.decision,
    ...(d.scope !== undefined ? { scope: d.scope } : {}),
    ...(d.edited || d.args !== undefined ? { edited: true } : {}),
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
    ...(d.layer !== undefined ? { layer: d.layer } : {}),
  };
}

function isCancelText(text: string): boolean {
  return /^cancelled\b|was cancelled|cancelled by the user/i.test(text.trim());
}

/** Tool details carry a hint of the family (diffs → edit, command → shell). */
function familyFromDetails(details: unknown): string | undefined {
  if (!details || typeof details !== "object") return undefined;
  const d = details as Record<string, unknown>;
  if (typeof d.diff === "string" || Array.isArray(d.files)) return "edit";
  if (typeof d.command === "string") return "shell";
  if (Array.isArray(d.items)) return "plan";
  if (typeof d.totalLines === "number") return "read";
  return undefined;
}
