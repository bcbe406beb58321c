// The approvals inbox: the pending approvals the caller may answer, each with what its calls
// would do (the preview: a command with its directory and sandbox, the files and a diff, the
// risk and why it is asked), and approve / deny with a reason / approve with edited arguments.
//
// Keyboard: the list is a listbox — Tab reaches it, ↑/↓ (Home/End) move through the
// approvals and show each one, Tab goes on to its controls. Edited arguments are JSON; text
// that is not valid JSON is refused with a message and stays in the editor.
import type { Approval, LashClientPromise } from "@lash/client";
import { useEffect, useRef, useState } from "preact/hooks";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { ErrorNote, errorText, fmtTime, href, Status, useLoad } from "./kit.tsx";

/** One call of an approval request (core's `ApprovalItem`). */
interface Item {
  readonly callId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly effects?: readonly string[];
  readonly reason?: string;
  readonly layer?: string;
  readonly risk?: { readonly level: string; readonly category: string; readonly reasons: readonly string[] };
  readonly preview?: {
    readonly summary: string;
    readonly diff?: string;
    readonly files?: readonly { path: string; action: string; added: number; removed: number }[];
    readonly command?: { readonly command: string; readonly cwd: string; readonly sandbox?: string };
  };
}

const itemsOf = (a: Approval): readonly Item[] => a.items as readonly Item[];

const POLL_MS = 2000;

export function ApprovalsPage(_props: PageProps) {
  const client = useClient();
  const list = useLoad(() => client.approvals.list({ state: "pending" }), [client], POLL_MS);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [done, setDone] = useState<{ readonly text: string; readonly runId: string } | undefined>(undefined);
  const approvals = list.data ?? [];
  const current = approvals.find((a) => a.id === selected) ?? approvals[0];
  // after a decision, keyboard users go on with the next approval (or the page, when none is left)
  const refocus = useRef(false);
  useEffect(() => {
    if (!refocus.current) return;
    refocus.current = false;
    const next = document.querySelector<HTMLElement>('.inbox [role="option"]');
    (next ?? document.getElementById("main"))?.focus();
  }, [list.data]);

  return (
    <section class="page approvals" aria-label="Approvals inbox">
      <ErrorNote error={list.error} />
      {done && (
        <Status>
          {done.text} <a href={href(`/runs/${done.runId}`)}>Open run {done.runId}</a>
        </Status>
      )}
      {!list.loading && approvals.length === 0 && <p class="empty">No approvals are waiting.</p>}
      {approvals.length > 0 && (
        <div class="split">
          <Inbox approvals={approvals} current={current?.id} onSelect={setSelected} />
          {current && (
            <ApprovalDetail
              key={current.id}
              client={client}
              approval={current}
              onDecided={(text) => {
                setDone({ text, runId: current.runId });
                setSelected(undefined);
                refocus.current = true;
                void list.reload();
              }}
            />
          )}
        </div>
      )}
    </section>
  );
}

/** The pending approvals as a listbox with a roving focus. */
function Inbox(props: {
  readonly approvals: readonly Approval[];
  readonly current: string | undefined;
  readonly onSelect: (id: string) => void;
}) {
  const { approvals, current, onSelect } = props;
  const refs = useRef<(HTMLDivElement | null)[]>([]);
  const index = Math.max(
    0,
    approvals.findIndex((a) => a.id === current),
  );
  const move = (to: number) => {
    const i = Math.max(0, Math.min(approvals.length - 1, to));
    onSelect(approvals[i]!.id);
    refs.current[i]?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      move(index);
      return;
    }
    const keys: Record<string, number> = {
      ArrowDown: index + 1,
      ArrowUp: index - 1,
      Home: 0,
      End: approvals.length - 1,
    };
    const to = keys[e.key];
    if (to === undefined) return;
    e.preventDefault();
    move(to);
  };
  return (
    <div class="inbox" role="listbox" aria-label="Pending approvals">
      {approvals.map((a, i) => {
        const items = itemsOf(a);
        const first = items[0];
        return (
          <div
            key={a.id}
            id={`approval-${a.id}`}
            ref={(el) => {
              refs.current[i] = el;
            }}
            role="option"
            aria-selected={i === index}
            tabIndex={i === index ? 0 : -1}
            onClick={() => move(i)}
            onKeyDown={onKeyDown}
            class={i === index ? "selected" : ""}
          >
            <strong>{items.map((it) => it.tool).join(", ")}</strong>
            <span class="summary">{first?.preview?.summary ?? first?.reason ?? ""}</span>
            <span class="meta">
              {a.requestedBy} · {fmtTime(a.createdAt)}
              {first?.risk ? ` · risk ${first.risk.level}` : ""}
            </span>
          </div>
        );
      })}
    </div>
  );
}

function ApprovalDetail(props: {
  readonly client: LashClientPromise;
  readonly approval: Approval;
  readonly onDecided: (text: string) => void;
}) {
  const { client, approval, onDecided } = props;
  const items = itemsOf(approval);
  const original = (item: Item) => JSON.stringify(item.args ?? {}, null, 2);
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(items.map((it) => [it.callId, original(it)])),
  );
  const [reason, setReason] = useState("");
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  useEffect(() => setError(undefined), [approval.id]);

  const approve = async () => {
    const args: Record<string, unknown> = {};
    for (const item of items) {
      const text = texts[item.callId] ?? original(item);
      if (text === original(item)) continue;
      try {
        args[item.callId] = JSON.parse(text);
      } catch (e) {
        setError(
          `The arguments of ${item.tool} (call ${item.callId}) are not valid JSON: ${errorText(e)}. Fix them in the editor, or reset them to the model's arguments.`,
        );
        return;
      }
    }
    await decide(
      {
        decision: "approve",
        ...(Object.keys(args).length > 0 ? { args } : {}),
        ...(remember ? { scope: "session" as const } : {}),
      },
      "Approved",
    );
  };
  const deny = () =>
    decide({ decision: "deny", ...(reason.trim() !== "" ? { reason: reason.trim() } : {}) }, "Denied");
  const decide = async (body: Parameters<LashClientPromise["approvals"]["decide"]>[1], verb: string) => {
    setBusy(true);
    setError(undefined);
    try {
      const decided = await client.approvals.decide(approval.id, body);
      onDecided(`${verb}: ${items.map((i) => i.tool).join(", ")} (${decided.state}); the run goes on.`);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class="approval" aria-labelledby={`detail-${approval.id}`}>
      <h2 id={`detail-${approval.id}`}>
        {items.length === 1 ? items[0]!.tool : `${items.length} calls`}{" "}
        <small>
          session <a href={href(`/sessions/${approval.sessionId}`)}>{approval.sessionId}</a> · run{" "}
          <a href={href(`/runs/${approval.runId}`)}>{approval.runId}</a>
        </small>
      </h2>
      {approval.requiresOtherPrincipal && (
        <p class="note">A principal other than {approval.requestedBy} must approve this (two-step rule).</p>
      )}
      {items.map((item) => (
        <section class="call" key={item.callId} aria-label={`Call ${item.callId}: ${item.tool}`}>
          <h3>
            <code>{item.tool}</code> <small>{item.callId}</small>
            {item.risk && <span class={`risk risk-${item.risk.level}`}> risk: {item.risk.level}</span>}
          </h3>
          {item.reason && (
            <p class="reason">
              Asked because: {item.reason}
              {item.layer ? ` (${item.layer})` : ""}
            </p>
          )}
          <Preview item={item} />
          <label>
            Arguments of {item.tool} (JSON)
            <textarea
              class="args"
              rows={Math.min(16, Math.max(3, (texts[item.callId] ?? "").split("\n").length + 1))}
              value={texts[item.callId]}
              spellcheck={false}
              onInput={(e) => {
                const value = (e.currentTarget as HTMLTextAreaElement).value;
                setTexts((t) => ({ ...t, [item.callId]: value }));
              }}
            />
          </label>
          {texts[item.callId] !== original(item) && (
            <button type="button" onClick={() => setTexts((t) => ({ ...t, [item.callId]: original(item) }))}>
              Reset arguments of {item.tool}
            </button>
          )}
        </section>
      ))}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={() => void approve()}>
          Approve
        </button>
        <label class="inline">
          <input
            type="checkbox"
            checked={remember}
            onChange={(e) => setRemember((e.currentTarget as HTMLInputElement).checked)}
          />
          Do not ask again for {[...new Set(items.map((i) => i.tool))].join(", ")} in this session
        </label>
        <label>
          Reason for denying
          <input
            type="text"
            value={reason}
            placeholder="what the model should do instead"
            onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="button" class="danger" disabled={busy} onClick={() => void deny()}>
          Deny
        </button>
      </div>
    </article>
  );
}

/** What a call would do: its command, files, diff and risk reasons. */
function Preview(props: { readonly item: Item }) {
  const { preview, risk } = props.item;
  if (!preview && !risk) return null;
  return (
    <div class="preview">
      {preview && <p class="summary">{preview.summary}</p>}
      {preview?.command && (
        <dl class="command">
          <dt>Command</dt>
          <dd>
            <code>{preview.command.command}</code>
          </dd>
          <dt>Directory</dt>
          <dd>
            <code>{preview.command.cwd}</code>
          </dd>
          {preview.command.sandbox && (
            <>
              <dt>Sandbox</dt>
              <dd>{preview.command.sandbox}</dd>
            </>
          )}
        </dl>
      )}
      {preview?.files && preview.files.length > 0 && (
        <ul class="files" aria-label="Files it changes">
          {preview.files.map((f) => (
            <li key={f.path}>
              {f.action} <code>{f.path}</code> <span class="added">+{f.added}</span>{" "}
              <span class="removed">−{f.removed}</span>
            </li>
          ))}
        </ul>
      )}
      {preview?.diff && <Diff text={preview.diff} />}
      {risk && risk.reasons.length > 0 && (
        <ul class="risk-reasons" aria-label="Risk">
          {risk.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A unified diff, each line coloured by its sign. */
function Diff(props: { readonly text: string }) {
  return (
    <pre class="diff">
      {props.text.split("\n").map((line, i) => {
        const cls =
          line.startsWith("+++") || line.startsWith("---")
            ? "file"
            : line.startsWith("+")
              ? "add"
              : line.startsWith("-")
                ? "del"
                : line.startsWith("@@")
                  ? "hunk"
                  : "";
        return (
          <span key={i} class={cls}>
            {line}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
}
