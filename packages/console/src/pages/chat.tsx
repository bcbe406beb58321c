// Chat with an agent: each message is `POST /v1/agents/:name/chat/stream` through the client's
// reconnecting stream, folded into a transcript as the events arrive (text streams in, tool
// cards fill in). The conversation continues in the same session until "New conversation".
import type { AgentInfo } from "@lash/client";
import { useEffect, useRef, useState } from "preact/hooks";
import { emptyTranscript, fold, type Transcript } from "../components/transcript.ts";
import { TranscriptView } from "../components/transcript-view.tsx";
import { describeError } from "../connection.ts";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { href } from "../router.ts";

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
  const [sessionId, setSessionId] = useState<string | undefined>(undefined);
  const [runs, setRuns] = useState<readonly string[]>([]);
  const stream = useRef<{ close(): void } | undefined>(undefined);

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
      for await (const event of events) {
        if (first) {
          first = false;
          setSessionId(event.sessionId);
          setRuns((r) => [...r, event.runId]);
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
            <a key={id} href={href("/runs/:id", { id })}>
              {i + 1}
            </a>
          ))}
        </nav>
      )}
    </div>
  );
}
