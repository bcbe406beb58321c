// Chat with an agent: each message is `POST /v1/agents/:name/chat/stream` through the client's
// reconnecting stream, folded into a transcript as the events arrive (text streams in, tool
// cards fill in). The conversation continues in the same session until "New conversation" —
// or in its successor, when the session hands off (compaction strategy "handoff").
// The session and its runs are kept in this tab's sessionStorage: a reload reads the runs'
// events again from the daemon (following a run that is still going) and shows the same
// conversation.
import type { AgentInfo } from "@lash/client";
import { useEffect, useRef, useState } from "preact/hooks";
import { emptyTranscript, fold, handoffTarget, type Transcript } from "../components/transcript.ts";
import { TranscriptView } from "../components/transcript-view.tsx";
import { describeError } from "../connection.ts";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { href } from "../router.ts";

interface Kept {
  readonly sessionId: string;
  readonly runs: readonly string[];
}
const keptKey = (agent: string) => `lash.console.chat.${agent}`;

function kept(agent: string): Kept | undefined {
  try {
    const text = sessionStorage.getItem(keptKey(agent));
    return text === null ? undefined : (JSON.parse(text) as Kept);
  } catch {
    return undefined;
  }
}

function keep(agent: string, value: Kept | undefined): void {
  try {
    if (value === undefined) sessionStorage.removeItem(keptKey(agent));
    else sessionStorage.setItem(keptKey(agent), JSON.stringify(value));
  } catch {
    // storage disabled: the conversation lasts as long as the page
  }
}

/** The agent's input: text, or JSON when its input schema asks for an object. */
function inputFor(agent: AgentInfo | undefined, text: string): unknown {
  const schema = agent?.input as { type?: unknown } | undefined;
  if (schema === undefined || schema.type === "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${agent?.name} takes JSON input matching its schema; this message is not JSON`);
  }
}

export function ChatPage({ params }: PageProps) {
  const name = params.name ?? "";
  const lash = useClient();
  const [agent, setAgent] = useState<AgentInfo | undefined>(undefined);
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [sessionId, setSessionId] = useState<string | undefined>(() => kept(name)?.sessionId);
  const [runs, setRuns] = useState<readonly string[]>(() => kept(name)?.runs ?? []);
  const stream = useRef<{ close(): void } | undefined>(undefined);

  // after a reload: the kept conversation's runs, read again in order (the last may still run)
  useEffect(() => {
    const before = kept(name);
    if (before === undefined || before.runs.length === 0) return;
    let stopped = false;
    setBusy(true);
    void (async () => {
      try {
        for (const runId of before.runs) {
          const events = lash.events({ runId });
          stream.current = events;
          for await (const event of events) {
            if (stopped) return;
            setTranscript((t) => fold(t, event));
          }
        }
      } catch (e) {
        if (!stopped) setProblem(describeError(e));
      } finally {
        if (!stopped) setBusy(false);
      }
    })();
    return () => {
      stopped = true;
      stream.current?.close();
    };
  }, [lash, name]);

  useEffect(() => {
    lash.agents.list().then(
      (all) => {
        const found = all.find((a) => a.name === name);
        if (found) setAgent(found);
        else setProblem(`There is no agent named ${name} on this daemon.`);
      },
      (e: unknown) => setProblem(describeError(e)),
    );
    return () => stream.current?.close();
  }, [lash, name]);

  const send = async (text: string) => {
    setProblem(undefined);
    let input: unknown;
    try {
      input = inputFor(agent, text);
    } catch (e) {
      setProblem((e as Error).message);
      return;
    }
    setBusy(true);
    setDraft("");
    const events = lash.agents.chatStream(name, input, sessionId === undefined ? {} : { sessionId });
    stream.current = events;
    try {
      let first = true;
      let next: Kept | undefined;
      for await (const event of events) {
        if (first) {
          // (a session that handed off earlier: the daemon ran this message in its successor)
          first = false;
          next = { sessionId: event.sessionId, runs: [...runs, event.runId] };
          keep(name, next);
          setSessionId(next.sessionId);
          setRuns(next.runs);
        }
        // the run's turn handed off: the conversation goes on in the successor
        const to = handoffTarget(event);
        if (to !== undefined && next !== undefined) {
          next = { ...next, sessionId: to };
          keep(name, next);
          setSessionId(to);
        }
        setTranscript((t) => fold(t, event));
      }
    } catch (e) {
      setProblem(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="chat">
      {agent && <p class="lede">{agent.description}</p>}
      <TranscriptView transcript={transcript} label={`Conversation with ${name}`} />
      {problem !== undefined && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          if (draft.trim() !== "" && !busy) void send(draft);
        }}
      >
        <label for="message">Message to {name}</label>
        <textarea
          id="message"
          rows={3}
          value={draft}
          disabled={busy}
          placeholder={agent?.input !== undefined ? "JSON input" : "Ask something"}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <div class="actions">
          <button type="submit" disabled={busy || draft.trim() === ""}>
            {busy ? "Answering…" : "Send"}
          </button>
          <button
            type="button"
            class="quiet"
            disabled={busy || sessionId === undefined}
            onClick={() => {
              keep(name, undefined);
              setSessionId(undefined);
              setTranscript(emptyTranscript);
              setRuns([]);
            }}
          >
            New conversation
          </button>
        </div>
      </form>
      {runs.length > 0 && (
        <nav aria-label="Runs of this conversation" class="runs">
          Runs:{" "}
          {runs.map((id, i) => (
            <a key={id} href={href("/runs/:id", { id })} aria-label={`Events of run ${i + 1}`}>
              {i + 1}
            </a>
          ))}
        </nav>
      )}
    </div>
  );
}
