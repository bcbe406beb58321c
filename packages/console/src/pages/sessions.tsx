// Sessions as a tree: forks hang under the session they were forked from (`origin`), a
// subagent's sessions under the session that spawned them (`parent`). The selected session
// shows its transcript (fork from any message), its runs (each linked to its live view and
// its trace), its export and trace pages, and a compare with another session: the two
// branches after the last node they share, side by side.
import type { LashClientPromise, Session, SessionNode } from "@lash/client";
import { useMemo, useState } from "preact/hooks";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { navigate } from "../use-path.ts";
import { download, ErrorNote, errorText, fmtTime, href, MessageView, openView, useLoad } from "./kit.tsx";

interface TreeNode {
  readonly session: Session;
  readonly children: TreeNode[];
  readonly relation?: "fork" | "subagent";
}

/** The sessions as a forest: each under its origin (fork) or parent (subagent) when visible. */
export function sessionTree(sessions: readonly Session[]): TreeNode[] {
  const nodes = new Map<string, TreeNode>();
  for (const s of sessions) {
    const relation = s.origin ? "fork" : s.parent ? "subagent" : undefined;
    nodes.set(s.id, { session: s, children: [], ...(relation ? { relation } : {}) });
  }
  const roots: TreeNode[] = [];
  for (const s of [...sessions].sort((a, b) => a.createdAt - b.createdAt)) {
    const up = s.origin?.sessionId ?? s.parent?.sessionId;
    const parent = up !== undefined ? nodes.get(up) : undefined;
    (parent ? parent.children : roots).push(nodes.get(s.id)!);
  }
  return roots;
}

const titleOf = (s: Session) => s.title ?? s.id;

/** `#/sessions` and `#/sessions/:id` (that session selected). */
export function SessionsPage(props: PageProps) {
  const client = useClient();
  const sessionId = props.params.id;
  const list = useLoad(() => client.sessions.list({ children: true }), [client], 5000);
  const sessions = list.data ?? [];
  const tree = useMemo(() => sessionTree(sessions), [sessions]);
  const selected = sessions.find((s) => s.id === sessionId);

  return (
    <section class="page sessions" aria-label="Sessions">
      <ErrorNote error={list.error} />
      <div class="split">
        <nav aria-label="Session tree" class="tree">
          {!list.loading && sessions.length === 0 && <p class="empty">No sessions yet.</p>}
          <Tree nodes={tree} selected={sessionId} level={1} />
        </nav>
        {selected ? (
          <SessionDetail
            key={selected.id}
            client={client}
            session={selected}
            sessions={sessions}
            navigate={navigate}
            onForked={async (fork) => {
              // the new session's page says where it was forked from
              await list.reload();
              navigate(`/sessions/${fork.id}`);
            }}
          />
        ) : (
          sessionId !== undefined &&
          !list.loading && <p class="error">No session {sessionId} among the sessions you can see.</p>
        )}
      </div>
    </section>
  );
}

function Tree(props: {
  readonly nodes: readonly TreeNode[];
  readonly selected?: string;
  readonly level: number;
}) {
  if (props.nodes.length === 0) return null;
  return (
    <ul aria-label={props.level === 1 ? "Session tree" : undefined}>
      {props.nodes.map((n) => (
        <li key={n.session.id} data-session={n.session.id}>
          <a
            href={href(`/sessions/${n.session.id}`)}
            aria-current={n.session.id === props.selected ? "page" : undefined}
            data-session={n.session.id}
          >
            {n.relation === "fork" && <span class="rel">fork · </span>}
            {n.relation === "subagent" && <span class="rel">subagent · </span>}
            {titleOf(n.session)}
          </a>
          <span class="meta">
            {" "}
            {n.session.turnCount} turn{n.session.turnCount === 1 ? "" : "s"}
            {n.session.agent ? ` · ${n.session.agent}` : ""}
            {n.session.activeRunId ? " · running" : ""}
          </span>
          <Tree nodes={n.children} selected={props.selected} level={props.level + 1} />
        </li>
      ))}
    </ul>
  );
}

function SessionDetail(props: {
  readonly client: LashClientPromise;
  readonly session: Session;
  readonly sessions: readonly Session[];
  readonly navigate: (path: string) => void;
  readonly onForked: (fork: Session) => Promise<void>;
}) {
  const { client, session, sessions, navigate, onForked } = props;
  const nodes = useLoad(() => client.sessions.nodes(session.id), [client, session.id, session.headRevision]);
  const runs = useLoad(() => client.sessions.runs(session.id), [client, session.id, session.headRevision]);
  const [error, setError] = useState<string | undefined>(undefined);
  const others = sessions.filter((s) => s.id !== session.id);
  const [other, setOther] = useState<string>(session.origin?.sessionId ?? others[0]?.id ?? "");

  /** Run `what`; its failure is shown (a view link or a download that did not work). */
  const act = async (what: () => Promise<void>) => {
    setError(undefined);
    try {
      await what();
    } catch (e) {
      setError(errorText(e));
    }
  };
  const fork = async (atNode?: string) => {
    setError(undefined);
    try {
      const created = await client.sessions.fork(session.id, atNode !== undefined ? { atNode } : {});
      await onForked(created);
    } catch (e) {
      setError(errorText(e));
    }
  };
  const messages = (nodes.data ?? []).filter((n) => n.kind === "message");

  return (
    <article class="session" aria-labelledby="session-title">
      <h2 id="session-title">{titleOf(session)}</h2>
      <p class="meta">
        <code>{session.id}</code> · {session.model} · {session.mode}
        {session.agent ? ` · agent ${session.agent}` : ""} · created {fmtTime(session.createdAt)}
        {session.origin && (
          <>
            {" "}
            · forked from{" "}
            <a href={href(`/sessions/${session.origin.sessionId}`)}>{session.origin.sessionId}</a>
          </>
        )}
        {session.parent && (
          <>
            {" "}
            · spawned by{" "}
            <a href={href(`/sessions/${session.parent.sessionId}`)}>{session.parent.sessionId}</a>
          </>
        )}
      </p>
      <div class="actions">
        <button type="button" onClick={() => void fork()}>
          Fork this session
        </button>
        <button
          type="button"
          onClick={() => void act(() => openView(client, { kind: "sessionTrace", id: session.id }))}
        >
          Open trace
        </button>
        <button
          type="button"
          onClick={() => void act(() => openView(client, { kind: "export", id: session.id, format: "html" }))}
        >
          Open export
        </button>
        <button
          type="button"
          onClick={() =>
            void act(async () =>
              download(
                await client.sessions.export(session.id, "json"),
                `${session.id}.json`,
                "application/json",
              ),
            )
          }
        >
          Download JSON
        </button>
        <button
          type="button"
          onClick={() =>
            void act(async () =>
              download(await client.sessions.export(session.id, "md"), `${session.id}.md`, "text/markdown"),
            )
          }
        >
          Download Markdown
        </button>
      </div>
      {others.length > 0 && (
        <form
          class="compare-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (other) navigate(`/sessions/${session.id}/compare/${other}`);
          }}
        >
          <label>
            Compare with
            <select value={other} onChange={(e) => setOther((e.currentTarget as HTMLSelectElement).value)}>
              {others.map((s) => (
                <option key={s.id} value={s.id}>
                  {titleOf(s)} ({s.id})
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Compare</button>
        </form>
      )}
      <ErrorNote error={error ?? nodes.error ?? runs.error} />
      <h3>Runs</h3>
      {(runs.data ?? []).length === 0 ? (
        <p class="empty">No runs.</p>
      ) : (
        <ul class="runs">
          {(runs.data ?? []).map((r) => (
            <li key={r.id}>
              <a href={href(`/runs/${r.id}`)}>{r.id}</a>{" "}
              <span class={`state state-${r.state}`}>{r.state}</span>{" "}
              <span class="input">{r.input.length > 80 ? `${r.input.slice(0, 80)}…` : r.input}</span>{" "}
              <button
                type="button"
                class="small"
                aria-label={`Open the trace of run ${r.id}`}
                onClick={() => void act(() => openView(client, { kind: "runTrace", id: r.id }))}
              >
                trace
              </button>
            </li>
          ))}
        </ul>
      )}
      <h3>Transcript</h3>
      {messages.length === 0 && !nodes.loading && <p class="empty">No messages yet.</p>}
      <ol class="nodes">
        {messages.map((n, i) => (
          <li key={n.id}>
            <MessageView payload={n.payload} />
            <button
              type="button"
              class="small"
              aria-label={`Fork from message ${i + 1}`}
              onClick={() => void fork(n.id)}
            >
              Fork from here
            </button>
          </li>
        ))}
      </ol>
    </article>
  );
}

/** Two sessions' branches side by side, after the last node they share. */
/** `#/sessions/:id/compare/:other`. */
export function ComparePage(props: PageProps) {
  const client = useClient();
  const a = props.params.id!;
  const b = props.params.other!;
  const cmp = useLoad(() => client.sessions.compare(a, b), [client, a, b]);
  const column = (id: string, nodes: readonly SessionNode[], label: string) => (
    <section class="branch" aria-label={label}>
      <h2>
        <a href={href(`/sessions/${id}`)}>{id}</a>
      </h2>
      {nodes.filter((n) => n.kind === "message").length === 0 ? (
        <p class="empty">Nothing after the shared part.</p>
      ) : (
        <ol class="nodes">
          {nodes
            .filter((n) => n.kind === "message")
            .map((n) => (
              <li key={n.id}>
                <MessageView payload={n.payload} />
              </li>
            ))}
        </ol>
      )}
    </section>
  );
  return (
    <section class="page compare" aria-label="Compare branches">
      <ErrorNote error={cmp.error} />
      {cmp.data && (
        <>
          <p class="meta">
            {cmp.data.ancestor === null
              ? "The two sessions share no history."
              : `They share ${cmp.data.shared} node${cmp.data.shared === 1 ? "" : "s"}, up to ${cmp.data.ancestor}; after it:`}
          </p>
          <div class="side-by-side">
            {column(cmp.data.a, cmp.data.onlyA, "Branch A")}
            {column(cmp.data.b, cmp.data.onlyB, "Branch B")}
          </div>
        </>
      )}
    </section>
  );
}
