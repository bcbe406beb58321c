// The TUI's approval prompt as data, and the interactive `Approver` that shows it.
// `ask` hands the request to the controller, which shows an `ApprovalPrompt` in place of
// the prompt box; the user answers each call (or all at once) and the answer goes back
// to the runtime. A cancelled turn (Esc / Ctrl+C) aborts the wait: the prompt goes away
// and nothing runs. Pure state here; the keys are bound in view/app.ts, the drawing is
// view/approval.ts.
import {
  type ApprovalAnswer,
  type ApprovalDecision,
  ApprovalError,
  type ApprovalItem,
  type ApprovalRequest,
  type ApproverShape,
} from "@lash/core";
import { Effect } from "effect";
import { Editor } from "./editor.ts";

/** Who the TUI's answers are from (the `by` of the decisions, in the graph and the transcript). */
export const TUI_APPROVER = "user";

/** What the prompt is doing: choosing, typing a denial reason, or editing a call's arguments. */
export type PromptMode = "choose" | "reason" | "edit";

/** One answered call, before the whole request is answered. */
export type ItemAnswer =
  | { readonly decision: "approve"; readonly scope: "once" | "session"; readonly args?: unknown }
  | { readonly decision: "deny"; readonly reason: string };

/**
 * One request on screen: the selected call, the answers given so far, and the inline
 * editor of a denial reason or of the arguments. Answers resolve the request when every
 * call has one.
 */
export class ApprovalPrompt {
  readonly request: ApprovalRequest;
  selected = 0;
  mode: PromptMode = "choose";
  /** `reason`/`edit` of every call at once (`N`), not of the selected call only. */
  all = false;
  readonly answers = new Map<string, ItemAnswer>();
  /** The denial reason or the JSON being edited. */
  readonly editor = new Editor();
  /** The JSON parse error of the last Enter in the arguments editor. */
  error: string | undefined;
  /** Argument drafts per call (kept when the editor is left with Esc or refused invalid JSON). */
  private readonly drafts = new Map<string, string>();

  constructor(request: ApprovalRequest) {
    this.request = request;
  }

  get items(): readonly ApprovalItem[] {
    return this.request.items;
  }

  get current(): ApprovalItem {
    return this.items[Math.min(this.selected, this.items.length - 1)]!;
  }

  get done(): boolean {
    return this.items.every((i) => this.answers.has(i.callId));
  }

  /** The answer for the runtime (every call answered). */
  answer(): ApprovalAnswer {
    const decisions = this.items.map((item): ApprovalDecision => {
      const a = this.answers.get(item.callId);
      if (!a) return { callId: item.callId, decision: "deny", reason: "not answered" };
      if (a.decision === "deny")
        return { callId: item.callId, decision: "deny", ...(a.reason ? { reason: a.reason } : {}) };
      return {
        callId: item.callId,
        decision: "approve",
        scope: a.scope,
        ...(a.args !== undefined ? { args: a.args } : {}),
      };
    });
    return { by: TUI_APPROVER, decisions };
  }

  move(delta: number): void {
    const n = this.items.length;
    this.selected = (((this.selected + delta) % n) + n) % n;
  }

  /** After an answer: select the next call without one. */
  private next(): void {
    const n = this.items.length;
    for (let k = 1; k <= n; k++) {
      const i = (this.selected + k) % n;
      if (!this.answers.has(this.items[i]!.callId)) {
        this.selected = i;
        return;
      }
    }
  }

  /** `y`: run the selected call (or, with `all`, every unanswered one) once. */
  approveOnce(all = false): void {
    for (const item of all ? this.unanswered() : [this.current])
      this.answers.set(item.callId, { decision: "approve", scope: "once" });
    this.next();
  }

  /**
   * `a`: run the selected call and stop asking about its tool for the rest of the session —
   * the other calls of that tool in this request are approved with it. With `all`: every
   * unanswered call, each tool for the session.
   */
  approveSession(all = false): void {
    const tools = new Set((all ? this.unanswered() : [this.current]).map((i) => i.tool));
    for (const item of this.unanswered())
      if (tools.has(item.tool)) this.answers.set(item.callId, { decision: "approve", scope: "session" });
    this.next();
  }

  /** `n` (`N` with all): ask for the reason of a denial. */
  startDeny(all = false): void {
    this.mode = "reason";
    this.all = all;
    this.editor.clear();
    this.error = undefined;
  }

  /** `e`: edit the selected call's arguments as JSON (one line; a draft left before comes back). */
  startEdit(): void {
    this.mode = "edit";
    this.all = false;
    this.error = undefined;
    this.editor.clear();
    this.editor.insert(this.drafts.get(this.current.callId) ?? JSON.stringify(this.current.args ?? {}));
  }

  /** Esc in the reason or arguments editor: back to choosing (an arguments draft is kept). */
  back(): void {
    if (this.mode === "edit") this.drafts.set(this.current.callId, this.editor.text);
    this.mode = "choose";
    this.error = undefined;
    this.editor.clear();
  }

  /**
   * Enter in the reason or arguments editor. A reason denies; arguments that parse as JSON
   * approve the call with them (once); invalid JSON is refused with the parse error, and the
   * text stays in the editor.
   */
  submit(): void {
    if (this.mode === "reason") {
      const reason = this.editor.value().trim();
      for (const item of this.all ? this.unanswered() : [this.current])
        this.answers.set(item.callId, { decision: "deny", reason });
      this.mode = "choose";
      this.all = false;
      this.editor.clear();
      this.next();
      return;
    }
    if (this.mode === "edit") {
      const text = this.editor.value();
      let args: unknown;
      try {
        args = JSON.parse(text);
      } catch (err) {
        this.error = `invalid JSON: ${err instanceof Error ? err.message : String(err)} — fix it, or Esc to go back`;
        this.drafts.set(this.current.callId, text);
        return;
      }
      this.drafts.delete(this.current.callId);
      this.answers.set(this.current.callId, { decision: "approve", scope: "once", args });
      this.mode = "choose";
      this.error = undefined;
      this.editor.clear();
      this.next();
    }
  }

  private unanswered(): ApprovalItem[] {
    return this.items.filter((i) => !this.answers.has(i.callId));
  }
}

/** What the controller offers the approver: show a request, resolve with the user's answer. */
export interface ApprovalHost {
  /** Shows the request; resolves when every call is answered. `signal` aborts the wait (the prompt goes away). */
  requestApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/**
 * The interactive approver: asks the user in the TUI. The runtime races it against the
 * turn's cancel; an interrupted or aborted wait removes the prompt.
 */
export function tuiApprover(host: ApprovalHost): ApproverShape {
  return {
    ask: (request, signal) =>
      Effect.async<ApprovalAnswer, ApprovalError>((resume) => {
        const local = new AbortController();
        const onAbort = () => local.abort();
        signal.addEventListener("abort", onAbort, { once: true });
        if (signal.aborted) local.abort();
        host.requestApproval(request, local.signal).then(
          (answer) => resume(Effect.succeed(answer)),
          (err) =>
            resume(
              Effect.fail(
                new ApprovalError({
                  message: err instanceof Error ? err.message : String(err),
                  request,
                }),
              ),
            ),
        );
        // interrupted (the turn was cancelled): take the prompt away
        return Effect.sync(() => {
          signal.removeEventListener("abort", onAbort);
          local.abort();
        });
      }),
  };
}
