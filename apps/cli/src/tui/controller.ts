// The TUI's state machine: sessions, turns, the queue, cancellation and slash
// commands, driving the real runtime. React subscribes to it (view/app.ts).
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join, resolve as resolvePath } from "node:path";
import {
  type ApprovalAnswer,
  type ApprovalRequest,
  type CompactionPayload,
  type GraphNode,
  LashRuntime,
  projectHistory,
  type SessionRecord,
  SessionStore,
  scrubEnv,
  type TurnActivity,
} from "@lash/core";
import type { Message, Part, Usage } from "@lash/sansio";
import { cancelChild } from "@lash/subagents";
import { Cause, Effect, Exit, Fiber, Option, Stream } from "effect";
import type { CliContext } from "../context.ts";
import { pendingText, turnErrorMessage } from "../sessions.ts";
import { type ApprovalHost, ApprovalPrompt, tuiApprover } from "./approval.ts";
import { resolveMentions } from "./assist.ts";
import { helpLines, type ParsedCommand } from "./commands.ts";
import { fmtAgo, fmtCost, fmtTokens } from "./format.ts";
import { decisionsOfNodes, type Item, Transcript } from "./model.ts";
import { isTheme, setTheme, THEMES, themeName } from "./theme.ts";

export interface PickerOption {
  readonly label: string;
  readonly detail?: string;
  readonly value: string;
  /** Indentation (tree pickers). */
  readonly depth?: number;
  /** Tree glyphs drawn before the label (`├─ `, `│  └─ `). */
  readonly tree?: string;
  readonly current?: boolean;
}

export interface Picker {
  readonly kind: "resume" | "tree" | "model";
  readonly title: string;
  readonly hint: string;
  readonly options: readonly PickerOption[];
  readonly initial: number;
}

export interface TuiState {
  readonly committed: readonly Item[];
  readonly live: readonly Item[];
  /** Bumped when the static area is redrawn from scratch (a new <Static> mounts). */
  readonly staticKey: number;
  readonly running: boolean;
  readonly cancelling: boolean;
  readonly turnStartedAt: number | undefined;
  readonly queue: readonly string[];
  readonly sessionId: string | undefined;
  readonly model: string;
  readonly mode: string;
  readonly cwd: string;
  readonly gitBranch: string | undefined;
  readonly contextTokens: number | undefined;
  /** `contextTokens` is an estimate from the transcript (no model call reported it yet). */
  readonly contextEstimated?: boolean;
  readonly contextWindow: number | undefined;
  readonly costUsd: number | undefined;
  readonly expanded: boolean;
  readonly picker: Picker | undefined;
  /** A transient line above the prompt ("press Ctrl+C again to quit"). */
  readonly hint: string | undefined;
  /** `!command` outputs that go with the next prompt (one line each). */
  readonly attached: readonly string[];
  /** The approval request on screen (it takes the keys until answered or the turn is cancelled). */
  readonly approval: ApprovalPrompt | undefined;
  /** Requests waiting behind the one on screen. */
  readonly approvalsWaiting: number;
}

/** The output of a `!command`, kept for the next prompt. */
export interface ShellContext {
  readonly command: string;
  readonly output: string;
  readonly exit: string;
}

/** Characters of a `!command`'s output that go into the next prompt. */
export const SHELL_CONTEXT_CHARS = 30_000;

export interface ControllerOptions {
  readonly sessionId?: string;
  /** Clears the terminal (screen and scrollback) before the static area is redrawn: `/clear` only. */
  readonly clearScreen?: () => void;
  /** Scrolls the screen into the scrollback and draws the live frame again at the top (Ctrl+L). */
  readonly repaint?: () => void;
  /** Lines a streaming message may take in the live area before its finished paragraphs move up. */
  readonly maxLiveLines?: number;
  /** Coalesce UI updates over this many ms (0: notify synchronously). */
  readonly throttleMs?: number;
  /** Open the session picker at start (`lash --resume` without an id). */
  readonly pick?: boolean;
  /** Finish the session's cut-off turn at start (`/finish`), instead of offering it. */
  readonly finish?: boolean;
}

type Listener = () => void;

/** At most this many history items are replayed into the terminal at once (resume, redraw). */
export const HISTORY_REPLAY_CAP = 300;

const fmtInt = (n: number) => n.toLocaleString("en-US");

function usageLine(u: Usage): string {
  const parts = [`in ${fmtInt(u.input ?? 0)}`, `out ${fmtInt(u.output ?? 0)}`];
  if (u.reasoning) parts.push(`reasoning ${fmtInt(u.reasoning)}`);
  if (u.cacheRead) parts.push(`cache read ${fmtInt(u.cacheRead)}`);
  if (u.cacheWrite) parts.push(`cache write ${fmtInt(u.cacheWrite)}`);
  return parts.join(" · ");
}

function firstLine(text: string, max = 72): string {
  const l = text.trim().split("\n")[0] ?? "";
  return l.length > max ? `${l.slice(0, max - 1)}…` : l;
}

function userText(node: GraphNode): string | undefined {
  if (node.kind !== "message") return undefined;
  const m = node.payload as Message;
  if (m.role !== "user") return undefined;
  return m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}

interface PendingApproval {
  readonly prompt: ApprovalPrompt;
  readonly resolve: (answer: ApprovalAnswer) => void;
  readonly reject: (err: Error) => void;
}

export class TuiController implements ApprovalHost {
  readonly ctx: CliContext;
  readonly transcript: Transcript;
  private listeners = new Set<Listener>();
  private snapshot: TuiState;
  private scheduled: ReturnType<typeof setTimeout> | undefined;
  private readonly throttleMs: number;
  private readonly clearScreen: () => void;
  private readonly pickAtStart: boolean;
  private readonly finishAtStart: boolean;
  private readonly repaintScreen: () => void;

  private sessionId: string | undefined;
  private session: SessionRecord | undefined;
  private running = false;
  private cancelling = false;
  private turnStartedAt: number | undefined;
  private cancelTurn: (() => void) | undefined;
  private turnDone: Promise<void> = Promise.resolve();
  private queue: string[] = [];
  private contextTokens: number | undefined;
  private contextEstimate: number | undefined;
  private baseCost: number | undefined;
  private turnCost: number | undefined;
  private expanded = false;
  private picker: Picker | undefined;
  private hint: string | undefined;
  private hintTimer: ReturnType<typeof setTimeout> | undefined;
  private staticKey = 0;
  /** What <Static> shows: the transcript's committed items, minus the oldest of a long history replayed at once. */
  private shown: readonly Item[] = [];
  private synced = 0;
  private gitBranch: string | undefined;
  /** Leaves left by /tree in this process (to come back to when the store cannot list branches). */
  private visitedLeaves = new Map<string, Set<string>>();
  private idleWaiters: (() => void)[] = [];
  private shellContext: ShellContext[] = [];
  /** Approval requests, oldest first: the first is on screen. */
  private approvals: PendingApproval[] = [];
  /** Restores queued prompts into the editor after a cancel (set by the input view). */
  onRestoreDraft: ((text: string) => void) | undefined;
  /** Called when the user asked to leave (after the running turn committed). */
  onExit: (() => void) | undefined;

  constructor(ctx: CliContext, options: ControllerOptions = {}) {
    this.ctx = ctx;
    this.sessionId = options.sessionId;
    this.throttleMs = options.throttleMs ?? 16;
    this.clearScreen = options.clearScreen ?? (() => {});
    this.pickAtStart = options.pick === true;
    this.finishAtStart = options.finish === true;
    this.repaintScreen = options.repaint ?? (() => {});
    this.transcript = new Transcript(options.maxLiveLines ? { maxLiveLines: options.maxLiveLines } : {});
    this.gitBranch = safe(() => ctx.gitBranch());
    this.snapshot = this.build();
    // the runtime's approvals are asked here (when --approval-mode is interactive, the default)
    ctx.setApprover?.(tuiApprover(this));
  }

  // ---- store protocol (useSyncExternalStore) ----

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  getState = (): TuiState => this.snapshot;

  private build(): TuiState {
    const model = this.session?.model ?? this.ctx.settings.model;
    const cost =
      this.baseCost === undefined && this.turnCost === undefined
        ? undefined
        : (this.baseCost ?? 0) + (this.turnCost ?? 0);
    return {
      committed: this.syncShown(false),
      live: [...this.transcript.live],
      staticKey: this.staticKey,
      running: this.running,
      cancelling: this.cancelling,
      turnStartedAt: this.turnStartedAt,
      queue: [...this.queue],
      sessionId: this.sessionId,
      model,
      mode: this.session?.mode ?? this.ctx.settings.mode,
      cwd: this.ctx.settings.cwd,
      gitBranch: this.gitBranch,
      contextTokens: this.contextTokens ?? this.contextEstimate,
      contextEstimated: this.contextTokens === undefined && this.contextEstimate !== undefined,
      contextWindow: safe(() => this.ctx.modelInfo(model)?.contextWindow),
      costUsd: cost,
      expanded: this.expanded,
      picker: this.picker,
      hint: this.hint,
      attached: this.shellContext.map(
        (c) => `!${c.command.split("\n")[0]} (${c.exit}, ${countLines(c.output)})`,
      ),
      approval: this.approvals[0]?.prompt,
      approvalsWaiting: Math.max(0, this.approvals.length - 1),
    };
  }

  /**
   * Bring `shown` up to date with the transcript. With `cap`, a batch of more than
   * HISTORY_REPLAY_CAP new items (a resumed long session, a redraw) is cut to its
   * newest ones behind a one-line notice: ink lays out every <Static> line once
   * (about 1 ms per item), so replaying 3 500 items would take seconds.
   */
  private syncShown(cap: boolean): readonly Item[] {
    const c = this.transcript.committed;
    if (c.length < this.synced) {
      this.shown = [];
      this.synced = 0;
    }
    let from = this.synced;
    if (cap && c.length - from > HISTORY_REPLAY_CAP) {
      const skipped = c.length - HISTORY_REPLAY_CAP - from;
      const note: Item = {
        kind: "notice",
        id: `elided-${this.staticKey}-${from}`,
        level: "info",
        text: `${skipped} earlier items of this session are not shown here — /export html has all of it`,
      };
      this.shown = [...this.shown, note];
      from = c.length - HISTORY_REPLAY_CAP;
    }
    if (from < c.length) this.shown = this.shown.concat(c.slice(from));
    this.synced = c.length;
    return this.shown;
  }

  /** Publish the current state now. */
  flushNow(): void {
    if (this.scheduled) {
      clearTimeout(this.scheduled);
      this.scheduled = undefined;
    }
    this.snapshot = this.build();
    for (const l of this.listeners) l();
  }

  private changed(): void {
    if (this.throttleMs <= 0) {
      this.flushNow();
      return;
    }
    if (this.scheduled) return;
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      this.flushNow();
    }, this.throttleMs);
  }

  private run<A, E>(f: (rt: typeof LashRuntime.Service) => Effect.Effect<A, E>): Promise<A> {
    return this.ctx.runtime.runPromise(Effect.flatMap(LashRuntime, f));
  }

  private info(text: string, body?: readonly string[]): void {
    this.transcript.notice("info", text, body);
    this.changed();
  }

  private error(text: string, body?: readonly string[]): void {
    this.transcript.notice("error", text, body);
    this.changed();
  }

  setHint(text: string | undefined, ms = 2500): void {
    if (this.hintTimer) clearTimeout(this.hintTimer);
    this.hint = text;
    if (text) {
      this.hintTimer = setTimeout(() => {
        this.hint = undefined;
        this.hintTimer = undefined;
        this.changed();
      }, ms);
      this.hintTimer.unref?.();
    }
    this.flushNow();
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Resolves when no turn runs and nothing is queued. */
  idle(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---- lifecycle ----

  /** Open the resumed session (render its transcript, finish a cut-off turn), then send the first prompt. */
  async start(initialPrompt?: string): Promise<void> {
    const s = this.ctx.settings;
    this.transcript.notice("info", `lash · ${s.model}${s.scripted ? " (scripted model)" : ""} · ${s.mode}`, [
      "Enter send · Shift+Enter / Alt+Enter / trailing \\ new line · Esc cancel · Ctrl+O expand · Ctrl+D quit · /help",
    ]);
    if (this.sessionId) await this.open(this.sessionId, false, this.finishAtStart);
    else this.flushNow();
    if (this.finishAtStart && this.sessionId) void this.runResume(this.sessionId);
    if (this.pickAtStart) await this.resume("");
    if (initialPrompt?.trim()) this.submit(initialPrompt);
  }

  /**
   * Show a session's transcript. A switch (/resume, /fork, /tree) never erases what the terminal
   * shows: a separator goes below the old transcript, then the session's recent history.
   */
  private async open(id: string, switching: boolean, finishing = false): Promise<void> {
    // one read of the path: its messages are the transcript (readView), the approval decisions
    // are protocol nodes between them (a 100,000-node session is not read twice)
    const [session, nodes] = await Promise.all([
      this.run((rt) => rt.getSession(id)),
      this.run((rt) => rt.chronological(id)),
    ]);
    const messages = nodes.filter((n) => n.kind === "message").map((n) => n.payload as Message);
    this.sessionId = id;
    this.session = session;
    this.contextTokens = undefined;
    this.turnCost = undefined;
    if (switching) this.transcript.rule(session.title ? `${session.title} · ${id}` : id);
    this.syncShown(false);
    this.transcript.loadMessages(messages, decisionsOfNodes(nodes));
    // the context is shown at once (resume, --continue): estimated from the transcript (~4 characters
    // a token) until the next model call reports it
    const projected = projectHistory(nodes, session.frameId).history;
    this.contextEstimate = Math.round(JSON.stringify(projected).length / 4);
    this.syncShown(true);
    await this.refreshUsage();
    this.transcript.notice(
      "info",
      `session ${session.title ? `"${firstLine(session.title, 40)}" ` : ""}${session.id} · ${session.turnCount} turn${session.turnCount === 1 ? "" : "s"} · ${session.model}`,
    );
    this.flushNow();
    if (!finishing) await this.offerPending(id);
  }

  /** A cut-off turn is announced, never resumed without asking: /finish or /abandon. */
  private async offerPending(id: string): Promise<void> {
    const store = await this.ctx.runtime.runPromise(Effect.serviceOption(SessionStore));
    if (Option.isNone(store)) return;
    const pending = await this.ctx.runtime.runPromise(store.value.pendingTurn(id)).catch(() => undefined);
    if (!pending) return;
    const text = pendingText(pending);
    this.transcript.notice(
      "warn",
      `this session has a turn that was cut off before it finished${pending.resumeAttempts ? ` (resumed ${pending.resumeAttempts}× already)` : ""}`,
      [
        ...(text ? [`"${text.replace(/\s+/g, " ").slice(0, 200)}"`] : []),
        "/finish finishes it from its journal · /abandon drops it (kept in the transcript as abandoned)",
      ],
    );
    this.flushNow();
  }

  private async abandonPending(): Promise<void> {
    const id = this.sessionId;
    if (!id) return this.info("no session yet: nothing to abandon");
    const r = await this.run((rt) => rt.abandonPending(id, { reason: "abandoned with /abandon" }));
    if (!r) return this.info("this session has no cut-off turn");
    this.transcript.notice(
      "success",
      `abandoned the cut-off turn${r.input ? `: "${r.input.replace(/\s+/g, " ").slice(0, 120)}"` : ""} (${r.completedSteps} completed step(s) dropped)`,
    );
    this.flushNow();
  }

  private async refreshUsage(): Promise<void> {
    const id = this.sessionId;
    if (!id) return;
    try {
      const u = await this.run((rt) => rt.usage(id));
      this.baseCost = u.costUsd;
      this.turnCost = undefined;
    } catch {
      // usage is informative only
    }
  }

  /** Clear the terminal, its scrollback included, and start the static area again (`/clear` only). */
  redraw(forget: boolean): void {
    if (forget) this.transcript.reset();
    this.clearScreen();
    this.staticKey++;
    this.shown = [];
    this.synced = 0;
    this.syncShown(true);
    this.flushNow();
  }

  /**
   * Ctrl+O: expand (or collapse) reasoning, tool output, diffs and code from now on. What the
   * terminal already shows is never redrawn: on expanding, the finished turn's collapsed items are
   * printed again, expanded, below it.
   */
  toggleExpanded(): void {
    this.expanded = !this.expanded;
    if (this.expanded && !this.running) this.transcript.reprintLastTurn();
    this.flushNow();
  }

  /** Ctrl+L: the screen goes to the scrollback (nothing is erased) and the live frame is drawn again. */
  repaint(): void {
    this.repaintScreen();
    this.setHint("screen cleared · the scrollback above is kept", 1500);
  }

  // ---- approvals ----

  /** The interactive approver's request: shown in place of the prompt box until answered or aborted. */
  requestApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    return new Promise<ApprovalAnswer>((resolve, reject) => {
      if (signal.aborted) return reject(new Error("the turn was cancelled"));
      const entry: PendingApproval = { prompt: new ApprovalPrompt(request), resolve, reject };
      this.approvals.push(entry);
      signal.addEventListener(
        "abort",
        () => {
          const i = this.approvals.indexOf(entry);
          if (i < 0) return;
          this.approvals.splice(i, 1);
          reject(new Error("the turn was cancelled"));
          this.flushNow();
        },
        { once: true },
      );
      this.flushNow();
    });
  }

  /** After a key changed the prompt on screen: send its answer when every call has one, then redraw. */
  approvalChanged(): void {
    const head = this.approvals[0];
    if (head?.prompt.done) {
      this.approvals.shift();
      head.resolve(head.prompt.answer());
    }
    this.flushNow();
  }

  // ---- turns ----

  /** A prompt from the input box: run it now, or queue it for the next turn. */
  submit(text: string): void {
    if (!text.trim()) return;
    if (this.running) {
      this.queue.push(text);
      this.flushNow();
      return;
    }
    void this.runTurn(text);
  }

  /**
   * `!command`: run it in a shell in the working directory (credentials removed from its
   * environment, like the shell tool), show its output as a card, no model turn. Its output
   * goes with the next prompt (`dropContext` forgets it). Esc/Ctrl+C kill it.
   */
  runShell(command: string): void {
    if (!command.trim()) return;
    if (this.running) {
      this.info("a !command waits for the running turn: press Esc to cancel it, or try again when it ends");
      return;
    }
    const finish = this.startRun();
    const card = this.transcript.localShell(command, Date.now());
    this.flushNow();
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: this.ctx.settings.cwd,
      env: { ...(this.ctx.shellEnv?.() ?? scrubEnv(process.env).env), PAGER: "cat", GIT_PAGER: "cat" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let killed: string | undefined;
    this.cancelTurn = () => {
      killed = "SIGTERM";
      try {
        if (child.pid) process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    };
    const onData = (b: Buffer) => {
      card.output += b.toString("utf8");
      if (card.output.length > SHELL_CONTEXT_CHARS * 4)
        card.output = card.output.slice(-SHELL_CONTEXT_CHARS * 2);
      this.changed();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    const done = (code: number | null, signal: string | null, err?: Error) => {
      card.endedAt = Date.now();
      const sig = signal ?? killed;
      if (err) card.output += `${card.output && !card.output.endsWith("\n") ? "\n" : ""}${err.message}`;
      card.details = {
        command,
        ...(code !== null ? { exitCode: code } : {}),
        ...(sig && code === null ? { signal: sig } : {}),
      };
      card.status = err ? "error" : sig && code === null ? "cancelled" : "ok";
      card.resultText = card.output;
      this.transcript.flush();
      if (!killed) {
        const exit = err ? "failed" : code !== null ? `exit ${code}` : `killed (${sig})`;
        const output = this.ctx.redact ? this.ctx.redact(card.output) : card.output;
        this.shellContext.push({ command, output, exit });
      }
      void this.endRun(finish, killed !== undefined);
    };
    child.once("error", (err) => done(null, null, err));
    child.once("close", (code, signal) => done(code, signal));
  }

  /** Forget the `!command` outputs waiting for the next prompt. */
  dropContext(): boolean {
    if (this.shellContext.length === 0) return false;
    this.shellContext = [];
    this.setHint("the !command output will not be sent");
    return true;
  }

  /** The user message of a prompt: `!command` outputs first, then the text, then `@path` files and images. */
  private async promptInput(text: string): Promise<{ text: string } | { messages: Message[] }> {
    const ctxText = this.shellContext
      .map(
        (c) =>
          `I ran \`${c.command}\` (${c.exit}); its output:\n\`\`\`\n${c.output.length > SHELL_CONTEXT_CHARS ? `… (cut to the last ${SHELL_CONTEXT_CHARS} characters)\n${c.output.slice(-SHELL_CONTEXT_CHARS)}` : c.output.replace(/\n$/, "")}\n\`\`\``,
      )
      .join("\n\n");
    this.shellContext = [];
    const full = ctxText ? `${ctxText}\n\n${text}` : text;
    if (!/(^|\s)@\S/.test(text)) return { text: full };
    const model = this.session?.model ?? this.ctx.settings.model;
    // only what the user typed is searched for mentions: an `@path` printed by a `!command`
    // is not a request to attach that file
    const r = await resolveMentions(text, this.ctx.settings.cwd, {
      images: safe(() => this.ctx.modelInfo(model)?.images) === true,
      model,
    });
    const withContext = r.parts.map((p, i) => (i === 0 && p.type === "text" ? { ...p, text: full } : p));
    const redact = this.ctx.redact;
    const parts = redact
      ? withContext.map((p) => (p.type === "text" ? { ...p, text: redact(p.text) } : p))
      : withContext;
    for (const p of r.problems) this.transcript.notice("warn", p);
    if (r.attached.length > 0)
      this.transcript.notice(
        "info",
        `attached ${r.attached.length === 1 ? "1 file" : `${r.attached.length} files`}: ${r.attached.join(", ")}`,
      );
    if (parts.length === 1) return { text: full };
    return { messages: [{ id: "", role: "user", parts: parts as Part[] }] };
  }

  /** Remove the last queued prompt (to edit it); returns it. */
  unqueue(): string | undefined {
    const t = this.queue.pop();
    this.flushNow();
    return t;
  }

  private startRun(): () => void {
    this.running = true;
    this.cancelling = false;
    this.turnStartedAt = Date.now();
    let finish!: () => void;
    this.turnDone = new Promise((resolve) => {
      finish = resolve;
    });
    return finish;
  }

  /** Apply one activity event of the current turn (the runtime's onEvent; benchmarks). */
  ingest(e: TurnActivity): void {
    this.onEvent(e);
  }

  private onEvent = (e: TurnActivity): void => {
    this.transcript.apply(e);
    if (e.type === "plugin" && e.plugin === "subagents") {
      const child = (e.data as { childSessionId?: unknown } | undefined)?.childSessionId;
      if (typeof child === "string" && e.name === "childStarted") this.watchChild(child);
      if (typeof child === "string" && e.name === "childFinished") this.unwatchChild(child);
    }
    if (e.type === "plugin" && e.plugin === "compaction" && e.name === "started")
      this.transcript.notice("info", "the context is nearly full: compacting the history…");
    if (e.type === "plugin" && e.plugin === "compaction" && e.name === "finished") {
      const d = e.data as { tokensAfter?: number; replaced?: number; stages?: number; tokensBefore?: number };
      this.contextTokens = undefined;
      this.contextEstimate = d.tokensAfter;
      this.transcript.notice(
        "success",
        `compacted: ${d.replaced ?? 0} messages summarised in ${d.stages ?? 1} stage${d.stages === 1 ? "" : "s"} · ~${fmtTokens(d.tokensBefore ?? 0)} → ~${fmtTokens(d.tokensAfter ?? 0)} tokens`,
      );
    }
    if (e.type === "llmResponse" && e.usage.input !== undefined) this.contextTokens = e.usage.input;
    if (e.type === "usage" && e.costUsd !== undefined) this.turnCost = e.costUsd;
    if (e.type === "turnStarted") this.turnStartedAt = e.at;
    this.changed();
  };

  /** Running subagents followed live (their session's activity → the spawn_agent card). */
  private children = new Map<string, () => void>();

  private watchChild(childId: string): void {
    if (this.children.has(childId)) return;
    const fiber = this.ctx.runtime.runFork(
      Effect.flatMap(LashRuntime, (rt) =>
        Stream.runForEach(rt.observe(childId), (ev) =>
          Effect.sync(() => {
            if (this.transcript.childActivity(childId, ev)) this.changed();
          }),
        ),
      ),
    );
    this.children.set(childId, () => void this.ctx.runtime.runPromise(Fiber.interrupt(fiber)));
  }

  private unwatchChild(childId: string): void {
    const stop = this.children.get(childId);
    if (!stop) return;
    this.children.delete(childId);
    // the observer may still be delivering the child's last events
    setTimeout(stop, 500).unref?.();
  }

  /** `/stop`: cancel just the newest running subagent (or the one whose session id starts with `arg`). */
  stopChild(arg: string): void {
    const ids = [...this.children.keys()];
    const id = arg ? ids.find((c) => c.startsWith(arg)) : ids[ids.length - 1];
    if (!id) {
      this.info(arg ? `no running subagent matches "${arg}"` : "no subagent is running");
      return;
    }
    if (cancelChild(id)) this.info(`stopping the subagent ${id} (the turn goes on)`);
    else this.info(`the subagent ${id} is not running in this process`);
  }

  private async ensureSession(): Promise<string> {
    if (this.sessionId) return this.sessionId;
    const s = await this.ctx.newSession();
    this.sessionId = s.id;
    this.session = s;
    this.baseCost = undefined;
    return s.id;
  }

  private async runTurn(text: string): Promise<void> {
    const finish = this.startRun();
    this.transcript.user(text);
    this.flushNow();
    let cancelled = false;
    try {
      const id = await this.ensureSession();
      const input = await this.promptInput(text);
      this.flushNow();
      const result = await this.ctx.runtime.runPromise(
        Effect.scoped(
          Effect.gen(this, function* () {
            const rt = yield* LashRuntime;
            // a cut-off turn is never resumed behind the user's back: /finish or /abandon decide
            const handle = yield* rt.startTurn(id, input, { onEvent: this.onEvent, resumePending: false });
            this.cancelTurn = () => {
              void this.ctx.runtime.runPromise(handle.cancel);
            };
            if (this.cancelling) this.cancelTurn();
            return yield* handle.result;
          }),
        ),
      );
      cancelled = result.outcome.type === "stopped" && result.outcome.reason === "cancelled";
      // a handoff: the turn went on in the successor session, and so does the TUI
      if (result.handoff) this.followHandoff(result.handoff.to);
      const s = await this.run((rt) => rt.getSession(result.sessionId)).catch(() => undefined);
      if (s) this.session = s;
    } catch (err) {
      this.transcript.notice("error", `the turn failed: ${tuiTurnError(err)}`);
      cancelled = this.cancelling;
    }
    await this.endRun(finish, cancelled);
  }

  private async runResume(id: string): Promise<void> {
    const finish = this.startRun();
    let cancelled = false;
    let resumed = false;
    try {
      const fiber = this.ctx.runtime.runFork(
        Effect.flatMap(LashRuntime, (rt) => rt.resumePending(id, { onEvent: this.onEvent })),
      );
      this.cancelTurn = () => {
        void this.ctx.runtime.runPromise(Fiber.interrupt(fiber));
      };
      if (this.cancelling) this.cancelTurn();
      const exit = await this.ctx.runtime.runPromise(Fiber.await(fiber));
      if (Exit.isSuccess(exit)) {
        resumed = exit.value !== undefined;
        cancelled = exit.value?.outcome.type === "stopped" && exit.value.outcome.reason === "cancelled";
      } else if (Exit.isInterrupted(exit)) cancelled = true;
      else throw Cause.squash(exit.cause);
    } catch (err) {
      this.transcript.notice("error", `could not finish the interrupted turn: ${tuiTurnError(err)}`);
    }
    if (resumed) await this.refreshUsage();
    await this.endRun(finish, cancelled);
  }

  private async endRun(finish: () => void, cancelled: boolean): Promise<void> {
    for (const id of [...this.children.keys()]) this.unwatchChild(id);
    this.running = false;
    this.cancelling = false;
    this.cancelTurn = undefined;
    this.turnStartedAt = undefined;
    this.gitBranch = safe(() => this.ctx.gitBranch());
    await this.refreshUsage();
    finish();
    if (cancelled && this.queue.length > 0) {
      // a cancel stops the queue too: give the queued prompts back for editing
      const text = this.queue.join("\n\n");
      this.queue = [];
      this.onRestoreDraft?.(text);
      this.transcript.notice("info", "queued messages were put back in the prompt");
    }
    this.flushNow();
    if (this.queue.length > 0 && !this.exiting) {
      const next = this.queue.join("\n\n");
      this.queue = [];
      void this.runTurn(next);
      return;
    }
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /** Cancel the running turn gracefully (Esc / Ctrl+C). Returns false when nothing runs. */
  cancel(): boolean {
    if (!this.running) return false;
    if (!this.cancelling) {
      this.cancelling = true;
      this.cancelTurn?.();
      this.flushNow();
    }
    return true;
  }

  private exiting = false;
  /** True when the user left without waiting for a cancel to finish. */
  forced = false;

  /** The line printed after the TUI is gone: how to come back to this session. */
  resumeHint(): string | undefined {
    const id = this.sessionId;
    if (!id || (this.session && this.session.turnCount === 0 && this.session.leafId === null))
      return undefined;
    return `Resume this session with: lash --resume ${id}`;
  }

  /** Leave now, without waiting for the running turn (exit code 130). */
  forceExit(): void {
    this.exiting = true;
    this.forced = true;
    this.queue = [];
    this.onExit?.();
  }

  /** Leave: cancel a running turn, wait until it has committed, then exit. */
  async quit(): Promise<void> {
    if (this.exiting) return;
    this.exiting = true;
    this.queue = [];
    if (this.running) {
      this.setHint("cancelling the running turn before leaving…", 60_000);
      this.cancel();
      await this.turnDone;
    }
    this.flushNow();
    this.onExit?.();
  }

  // ---- commands ----

  closePicker(): void {
    this.picker = undefined;
    this.flushNow();
  }

  async command(cmd: ParsedCommand): Promise<void> {
    const { spec, args } = cmd;
    if (this.running && !spec.whileRunning) {
      this.info(
        `/${spec.name} waits for the running turn: press Esc to cancel it, or try again when it ends`,
      );
      return;
    }
    try {
      switch (spec.name) {
        case "help":
          return this.info("lash — help", helpLines());
        case "new":
          return this.newSession();
        case "resume":
          return await this.resume(args);
        case "fork":
          return await this.fork();
        case "finish":
          return this.sessionId ? await this.runResume(this.sessionId) : this.info("no session yet");
        case "abandon":
          return await this.abandonPending();
        case "tree":
          return await this.tree();
        case "compact":
          return await this.compactNow(args);
        case "model":
          return this.model(args);
        case "export":
          return await this.exportSession(args);
        case "stop":
          return this.stopChild(args);
        case "expand": {
          const n = args ? Number(args) : 1;
          if (!Number.isInteger(n) || n < 1)
            return this.error(`/expand takes a card number (1 = the newest), not "${args}"`);
          if (!this.transcript.unfoldCopy(n)) return this.info("no finished card to expand");
          return this.changed();
        }
        case "theme": {
          const name = args.toLowerCase();
          if (!name) return this.info(`theme: ${themeName()} (${THEMES.join(", ")})`);
          if (!isTheme(name)) return this.error(`unknown theme "${args}": ${THEMES.join(", ")}`);
          setTheme(name);
          return this.info(
            `theme: ${name} (for what is drawn from now on; LASH_THEME=${name} makes it the default)`,
          );
        }
        case "info":
          return await this.showInfo();
        case "cost":
          return await this.showCost();
        case "clear":
          return this.redraw(true);
        case "quit":
          return await this.quit();
        default:
          return this.info(`/${spec.name} is not implemented`);
      }
    } catch (err) {
      this.error(`/${spec.name} failed: ${messageOf(err)}`);
    }
  }

  /** /compact [instructions]: the history since the last summary becomes a compaction node. */
  async compactNow(instructions: string): Promise<void> {
    const id = this.sessionId;
    if (!id) return this.info("no session yet: nothing to compact");
    this.transcript.notice("info", "compacting the history…");
    this.flushNow();
    const r = await this.run((rt) => rt.compact(id, instructions ? { instructions } : {}));
    if (!r) return this.info("nothing to compact: no messages since the last summary");
    if (r.successor) this.followHandoff(r.successor);
    this.session = await this.run((rt) => rt.getSession(r.successor ?? id));
    // the next request is the summary and what follows: estimated until a model call reports it
    this.contextTokens = undefined;
    this.contextEstimate = r.payload.tokensAfter;
    this.compactionCard(r.payload);
  }

  /** Compaction strategy "handoff": the session goes on as its successor (the summary is its first message). */
  private followHandoff(to: string): void {
    const from = this.sessionId;
    this.sessionId = to;
    this.transcript.notice(
      "info",
      `handed off: the session continues as ${to}, opened by the summary${from ? ` (the full history stays in ${from})` : ""}`,
    );
  }

  /** The card of a compaction: what it replaced, and the summary's first lines. */
  private compactionCard(p: CompactionPayload): void {
    const lines = p.summary.split("\n").filter((l) => l.trim() !== "");
    this.transcript.notice(
      "success",
      `compacted: ${p.replaced} messages summarised in ${p.stages} stage${p.stages === 1 ? "" : "s"} · ~${fmtTokens(p.tokensBefore)} → ~${fmtTokens(p.tokensAfter)} tokens (the messages stay in the session; /fork from before keeps them)`,
      [...lines.slice(0, 12), ...(lines.length > 12 ? [`… ${lines.length - 12} more lines`] : [])],
    );
    this.flushNow();
  }

  newSession(): void {
    this.sessionId = undefined;
    this.session = undefined;
    this.baseCost = undefined;
    this.turnCost = undefined;
    this.contextTokens = undefined;
    this.contextEstimate = undefined;
    this.transcript.rule("new session");
    this.info("new session — it is saved when you send the first prompt");
  }

  async resume(arg: string): Promise<void> {
    if (arg) {
      const all = await this.run((rt) => rt.listSessions({ limit: 500 }));
      const hit =
        all.find((s) => s.id === arg) ??
        all.find((s) => s.id.startsWith(arg)) ??
        all.find((s) => s.title?.toLowerCase() === arg.toLowerCase());
      if (!hit) return this.error(`no session matches "${arg}"`);
      return this.switchTo(hit.id, `resumed ${hit.title ?? hit.id}`);
    }
    const list = (await this.run((rt) => rt.listSessions({ cwd: this.ctx.settings.cwd, limit: 50 }))).filter(
      (s) => s.id !== this.sessionId,
    );
    if (list.length === 0) return this.info("no other sessions in this directory");
    const now = Date.now();
    this.picker = {
      kind: "resume",
      title: "Resume a session of this directory",
      hint: "↑/↓ choose · Enter open · Esc close",
      initial: 0,
      options: list.map((s) => ({
        value: s.id,
        label: s.title ?? firstLine(s.id),
        detail: `${fmtAgo(s.updatedAt, now)} · ${s.turnCount} turn${s.turnCount === 1 ? "" : "s"} · ${s.model}`,
      })),
    };
    this.flushNow();
  }

  async switchTo(id: string, note?: string): Promise<void> {
    this.picker = undefined;
    this.baseCost = undefined;
    await this.open(id, true);
    if (note) this.info(note);
  }

  async fork(): Promise<void> {
    const id = this.sessionId;
    if (!id || !this.session || this.session.leafId === null)
      return this.info("nothing to fork yet: send a prompt first");
    const f = await this.run((rt) => rt.fork(id));
    await this.switchTo(f.id, `forked ${this.titleOf(id)} → ${f.id} (the original is unchanged)`);
  }

  private titleOf(id: string): string {
    return this.session?.id === id && this.session.title ? `"${this.session.title}"` : id;
  }

  async tree(): Promise<void> {
    const id = this.sessionId;
    if (!id) return this.info("no session yet");
    const session = await this.run((rt) => rt.getSession(id));
    this.session = session;
    const active = await this.run((rt) => rt.chronological(id));
    const store = await this.ctx.runtime.runPromise(Effect.serviceOption(SessionStore));
    let nodes: readonly GraphNode[] = active;
    let complete = false;
    if (Option.isSome(store)) {
      const own = await this.ctx.runtime.runPromise(store.value.sessionNodes(id));
      const seen = new Set(own.map((n) => n.id));
      nodes = [...active.filter((n) => !seen.has(n.id)), ...own];
      complete = true;
    } else {
      const extra = this.visitedLeaves.get(id);
      if (extra?.size) {
        const paths = await Promise.all(
          [...extra].map((leaf) =>
            this.ctx.runtime
              .runPromise(
                Effect.flatMap(LashRuntime, (rt) =>
                  Effect.map(
                    rt.compare(leaf, session.leafId ?? leaf),
                    (c) => c.onlyA as readonly GraphNode[],
                  ),
                ),
              )
              .catch(() => [] as readonly GraphNode[]),
          ),
        );
        const byId = new Map(nodes.map((n) => [n.id, n]));
        for (const p of paths) for (const n of p) byId.set(n.id, n);
        nodes = [...byId.values()];
      }
    }
    const options = buildTree(nodes, new Set(active.map((n) => n.id)));
    if (options.length === 0) return this.info("this session has no prompts yet");
    const current = options.map((o) => o.current === true).lastIndexOf(true);
    this.picker = {
      kind: "tree",
      title: `Branches of ${session.title ? `"${session.title}"` : id}${complete ? "" : " (this path and the branches visited in this run)"}`,
      hint: "↑/↓ choose · Enter switch to the branch through this prompt · Tab edit this prompt (new branch) · Esc close",
      initial: current >= 0 ? current : options.length - 1,
      options,
    };
    this.flushNow();
  }

  /** /tree: make the branch through `nodeId` (a user message) the active one. */
  async switchBranch(nodeId: string, edit: boolean): Promise<void> {
    const id = this.sessionId;
    if (!id) return;
    this.picker = undefined;
    const session = await this.run((rt) => rt.getSession(id));
    const store = await this.ctx.runtime.runPromise(Effect.serviceOption(SessionStore));
    const nodes = Option.isSome(store)
      ? await this.ctx.runtime.runPromise(store.value.sessionNodes(id))
      : await this.run((rt) => rt.chronological(id));
    const node =
      nodes.find((n) => n.id === nodeId) ??
      (await this.run((rt) => rt.chronological(id))).find((n) => n.id === nodeId);
    if (!node) return this.error("that prompt is no longer in this session");
    if (session.leafId) {
      const set = this.visitedLeaves.get(id) ?? new Set();
      set.add(session.leafId);
      this.visitedLeaves.set(id, set);
    }
    let target: string | null;
    if (edit) target = node.parentId;
    else {
      // the newest leaf below the node
      const children = new Map<string, GraphNode[]>();
      for (const n of nodes)
        if (n.parentId) {
          const list = children.get(n.parentId) ?? [];
          list.push(n);
          children.set(n.parentId, list);
        }
      let tip = node;
      for (;;) {
        const next = (children.get(tip.id) ?? []).sort((a, b) => b.seq - a.seq)[0];
        if (!next) break;
        tip = next;
      }
      target = tip.id;
    }
    await this.run((rt) => rt.branch(id, target));
    await this.open(id, true);
    if (edit) {
      this.onRestoreDraft?.(userText(node) ?? "");
      this.info("editing an earlier prompt: sending it starts a new branch (/tree shows both)");
    } else this.info("switched branch");
  }

  model(arg: string): void {
    if (!arg) {
      const models = safe(() => this.ctx.knownModels()) ?? [];
      const current = this.ctx.settings.model;
      const list = models.includes(current) ? models : [current, ...models];
      this.picker = {
        kind: "model",
        title: "Model for new sessions (providers with a key)",
        hint: "↑/↓ choose · Enter switch · Esc close (or /model provider/model)",
        initial: Math.max(0, list.indexOf(current)),
        options: list.map((m) => {
          const info = safe(() => this.ctx.modelInfo(m));
          return {
            value: m,
            label: m,
            current: m === current,
            ...(info ? { detail: `${fmtTokens(info.contextWindow)} context` } : {}),
          };
        }),
      };
      this.flushNow();
      return;
    }
    this.picker = undefined;
    try {
      this.ctx.setModel(arg);
    } catch (err) {
      this.error(messageOf(err));
      return;
    }
    const sessionModel = this.session?.model;
    if (this.sessionId && sessionModel && sessionModel !== this.ctx.settings.model)
      this.info(
        `model set to ${this.ctx.settings.model} for new sessions; this session keeps ${sessionModel} (/new to start one on the new model)`,
      );
    else
      this.info(
        `model: ${this.ctx.settings.model} (for new sessions${this.sessionId ? "" : ", the next prompt starts one"})`,
      );
  }

  async exportSession(arg: string): Promise<void> {
    const id = this.sessionId;
    if (!id) return this.info("nothing to export yet: send a prompt first");
    const [first = "", ...rest] = arg.split(/\s+/).filter(Boolean);
    const format = (first || "html").toLowerCase();
    if (format !== "html" && format !== "json" && format !== "md")
      return this.error(`unknown export format "${first}" (html, json or md; then an optional file path)`);
    // next to the sessions (never into the repository) unless a path is given
    const out = rest.length
      ? resolvePath(this.ctx.settings.cwd, rest.join(" "))
      : join(dirname(this.ctx.paths.db), "exports", `${id}.${format}`);
    try {
      mkdirSync(dirname(out), { recursive: true });
      const path = await this.ctx.exportSession(id, format, out);
      this.transcript.notice("success", `exported to ${path}`);
      this.changed();
    } catch (err) {
      this.transcript.notice("warn", `export is not available: ${messageOf(err)}`);
      this.changed();
    }
  }

  async showInfo(): Promise<void> {
    const s = this.ctx.settings;
    const p = this.ctx.paths;
    const lines: string[] = [];
    const id = this.sessionId;
    if (id) {
      const session = await this.run((rt) => rt.getSession(id));
      this.session = session;
      lines.push(`session   ${session.id}${session.title ? ` — ${session.title}` : ""}`);
      lines.push(
        `          ${session.turnCount} turns · ${session.mode} · updated ${fmtAgo(session.updatedAt)}`,
      );
      if (session.origin) lines.push(`          forked from ${session.origin.sessionId}`);
    } else lines.push("session   (new — saved with the first prompt)");
    lines.push(`model     ${this.session?.model ?? s.model}${s.scripted ? " (scripted)" : ""}`);
    const info = safe(() => this.ctx.modelInfo(this.session?.model ?? s.model));
    if (info)
      lines.push(
        `          context ${fmtTokens(info.contextWindow)} · max output ${fmtTokens(info.maxOutput)}${info.pricing ? ` · $${info.pricing.input}/$${info.pricing.output} per Mtok` : ""}`,
      );
    lines.push(`mode      ${s.mode}`);
    lines.push(`cwd       ${s.cwd}${this.gitBranch ? ` (${this.gitBranch})` : ""}`);
    lines.push(`home      ${p.home}`);
    lines.push(`database  ${p.db}`);
    lines.push(`config    ${p.config}${p.projectConfig ? `, ${p.projectConfig}` : ""}`);
    if (id) {
      const tools = await this.run((rt) => rt.tools(id)).catch(() => undefined);
      if (tools) lines.push(`tools     ${tools.map((t) => t.name).join(", ") || "(none)"}`);
    } else if (s.tools) lines.push(`tools     ${s.tools.join(", ")}`);
    const plugins = safe(() => this.ctx.pluginStatus()) ?? {};
    const names = Object.keys(plugins);
    if (names.length === 0) lines.push("plugins   (none report a status)");
    for (const n of names) lines.push(`plugin    ${n}: ${summarize(plugins[n])}`);
    if (id) {
      const u = await this.run((rt) => rt.usage(id));
      lines.push(`usage     ${usageLine(u.total)} · ${fmtCost(u.costUsd)}`);
    }
    this.info("session info", lines);
  }

  async showCost(): Promise<void> {
    const id = this.sessionId;
    if (!id) return this.info("no usage yet");
    const u = await this.run((rt) => rt.usage(id));
    const lines = [`total     ${usageLine(u.total)}`, `cost      ${fmtCost(u.costUsd)}`];
    for (const g of u.bySource)
      lines.push(`  ${g.source} · ${g.model}: ${usageLine(g.usage)} · ${fmtCost(g.costUsd)}`);
    if (this.contextTokens !== undefined) {
      const win = safe(
        () => this.ctx.modelInfo(this.session?.model ?? this.ctx.settings.model)?.contextWindow,
      );
      lines.push(
        `context   ${fmtInt(this.contextTokens)} tokens${win ? ` of ${fmtInt(win)} (${Math.round((100 * this.contextTokens) / win)}%)` : ""}`,
      );
    }
    this.info("usage", lines);
  }

  async pick(picker: Picker, option: PickerOption, alt = false): Promise<void> {
    try {
      switch (picker.kind) {
        case "resume":
          return await this.switchTo(option.value, `resumed ${option.label}`);
        case "tree":
          return await this.switchBranch(option.value, alt);
        case "model":
          return this.model(option.value);
      }
    } catch (err) {
      this.picker = undefined;
      this.error(messageOf(err));
    }
  }
}

/** User messages of a session as a tree (depth = number of branch points above). */
export function buildTree(nodes: readonly GraphNode[], activeIds: ReadonlySet<string>): PickerOption[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  // the nearest user-message ancestor of every node
  const userParent = (n: GraphNode): string | null => {
    let p = n.parentId ? byId.get(n.parentId) : undefined;
    while (p) {
      if (userText(p) !== undefined) return p.id;
      p = p.parentId ? byId.get(p.parentId) : undefined;
    }
    return null;
  };
  const users = nodes.filter((n) => userText(n) !== undefined).sort((a, b) => a.seq - b.seq);
  const kids = new Map<string | null, GraphNode[]>();
  for (const u of users) {
    const p = userParent(u);
    const list = kids.get(p) ?? [];
    list.push(u);
    kids.set(p, list);
  }
  const out: PickerOption[] = [];
  // drawn as a tree: ├─/└─ where a prompt has several continuations, │ down the open branches
  const walk = (parent: string | null, depth: number, prefix: string) => {
    const list = kids.get(parent) ?? [];
    const branching = list.length > 1;
    list.forEach((u, i) => {
      const onPath = activeIds.has(u.id);
      const last = i === list.length - 1;
      out.push({
        value: u.id,
        label: firstLine(userText(u) ?? "", 64),
        depth,
        tree: branching ? `${prefix}${last ? "└─ " : "├─ "}` : prefix,
        current: onPath,
        detail: `${fmtAgo(u.createdAt)}${onPath ? " · on the current branch" : ""}`,
      });
      walk(
        u.id,
        (kids.get(u.id)?.length ?? 0) > 1 ? depth + 1 : depth,
        branching ? `${prefix}${last ? "   " : "│  "}` : prefix,
      );
    });
  };
  walk(null, 0, "");
  return out;
}

function countLines(s: string): string {
  const n = s.replace(/\n$/, "") === "" ? 0 : s.replace(/\n$/, "").split("\n").length;
  return `${n} line${n === 1 ? "" : "s"}`;
}

function safe<A>(f: () => A): A | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** A turn error as the TUI says it: the CLI's message, with the TUI's commands. */
function tuiTurnError(err: unknown): string {
  const text = turnErrorMessage(err, "send it again when that process is done") ?? messageOf(err);
  return text.replace(/lash sessions abandon \S+/g, "/abandon");
}

export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === "object" && "message" in err && typeof err.message === "string")
    return err.message;
  return String(err);
}

function summarize(v: unknown): string {
  if (v === undefined || v === null) return "ok";
  if (Array.isArray(v) && v.length === 0) return "none";
  if (typeof v !== "object") return String(v);
  if (Array.isArray(v)) return v.map(summarize).join("; ");
  const o = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const [k, val] of Object.entries(o)) {
    if (val && typeof val === "object" && !Array.isArray(val)) {
      const inner = val as Record<string, unknown>;
      const st = inner.status ?? inner.state;
      const tools = Array.isArray(inner.tools) ? `${inner.tools.length} tools` : inner.toolCount;
      const err = inner.error ?? inner.lastError;
      parts.push(
        `${k} ${[st, tools, err].filter((x) => x !== undefined).join(", ") || JSON.stringify(val).slice(0, 60)}`,
      );
    } else if (Array.isArray(val) && val.length === 0) parts.push(`no ${k}`);
    else parts.push(`${k}: ${Array.isArray(val) ? val.map(summarize).join(", ") : JSON.stringify(val)}`);
  }
  return parts.join(" · ");
}
