// The live event stream of one run (`GET /v1/runs/:id/events`): the transcript it makes and
// every event by `seq`. The events read so far and the cursor (the last `seq`) are kept in
// sessionStorage, so a reload shows them at once and reads on after the cursor
// (`Last-Event-ID`); a dropped connection is resumed the same way by the client's stream.
import type { Run, ServerEvent } from "@lash/client";
import { useEffect, useMemo, useState } from "preact/hooks";
import { emptyTranscript, fold } from "../components/transcript.ts";
import { TranscriptView } from "../components/transcript-view.tsx";
import { describeError } from "../connection.ts";
import { useClient } from "../context.ts";
import type { PageProps } from "../page.ts";
import { RunLinks } from "./views.tsx";

const cacheKey = (runId: string) => `lash.console.run.${runId}`;
/** Past this many characters the events are not kept (a reload then reads them again). */
const CACHE_LIMIT = 2_000_000;

function cached(runId: string): ServerEvent[] {
  try {
    const text = sessionStorage.getItem(cacheKey(runId));
    return text === null ? [] : (JSON.parse(text) as ServerEvent[]);
  } catch {
    return [];
  }
}

function keep(runId: string, events: readonly ServerEvent[]): void {
  try {
    const text = JSON.stringify(events);
    if (text.length > CACHE_LIMIT) sessionStorage.removeItem(cacheKey(runId));
    else sessionStorage.setItem(cacheKey(runId), text);
  } catch {
    // storage full or disabled: a reload reads the run from its start
  }
}

type Link = "connecting" | "live" | "reconnecting" | "ended" | "failed";

const summary = (e: ServerEvent): string => {
  const d = (e.data ?? {}) as Record<string, unknown>;
  switch (e.type) {
    case "textDelta":
    case "reasoningDelta":
      return JSON.stringify(d.text);
    case "toolStarted":
    case "toolCompleted":
      return String(d.name ?? "");
    case "runFinished":
      return String(d.state ?? "");
    case "error":
      return String(d.message ?? "");
    default:
      return "";
  }
};

export function RunPage({ params }: PageProps) {
  const id = params.id ?? "";
  const lash = useClient();
  const [run, setRun] = useState<Run | undefined>(undefined);
  const [events, setEvents] = useState<readonly ServerEvent[]>(() => cached(id));
  const [link, setLink] = useState<Link>("connecting");
  const [problem, setProblem] = useState<string | undefined>(undefined);

  useEffect(() => {
    let stopped = false;
    const refresh = () =>
      lash.runs.get(id).then(
        (r) => !stopped && setRun(r),
        (e: unknown) => !stopped && setProblem(describeError(e)),
      );
    void refresh();
    const seen = cached(id);
    const after = seen.at(-1)?.seq;
    const stream = lash.events(
      { runId: id },
      {
        after,
        onReconnect: () => setLink("reconnecting"),
      },
    );
    void (async () => {
      const all = [...seen];
      try {
        setLink("live");
        for await (const event of stream) {
          all.push(event);
          keep(id, all);
          setEvents([...all]);
          setLink("live");
        }
        if (!stopped) {
          setLink("ended");
          void refresh();
        }
      } catch (e) {
        if (!stopped) {
          setLink("failed");
          setProblem(describeError(e));
        }
      }
    })();
    return () => {
      stopped = true;
      stream.close();
    };
  }, [lash, id]);

  const transcript = useMemo(() => events.reduce(fold, emptyTranscript), [events]);
  const active = run !== undefined && ["queued", "running", "waitingApproval"].includes(run.state);

  return (
    <div class="run">
      <dl class="facts">
        <dt>State</dt>
        <dd data-testid="run-state">{transcript.finished ?? run?.state ?? "…"}</dd>
        <dt>Session</dt>
        <dd>{run?.sessionId ?? "…"}</dd>
        <dt>Stream</dt>
        <dd data-testid="stream-link" aria-live="polite">
          {link === "live" ? "live" : link === "reconnecting" ? "reconnecting…" : link}
        </dd>
        <dt>Events</dt>
        <dd>{events.length}</dd>
      </dl>
      {run !== undefined && <RunLinks runId={id} sessionId={run.sessionId} />}
      {active && transcript.finished === undefined && (
        <button
          type="button"
          class="quiet"
          onClick={() => lash.runs.cancel(id).then(setRun, (e: unknown) => setProblem(describeError(e)))}
        >
          Cancel run
        </button>
      )}
      {problem !== undefined && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      <section aria-labelledby="transcript-heading">
        <h2 id="transcript-heading">Transcript</h2>
        <TranscriptView transcript={transcript} label={`Transcript of run ${id}`} />
      </section>
      <section aria-labelledby="events-heading">
        <h2 id="events-heading">Events</h2>
        <ol class="events" aria-label={`Events of run ${id}`}>
          {events.map((e) => (
            <li key={e.seq} data-seq={e.seq}>
              <span class="seq">{e.seq}</span> <span class="type">{e.type}</span>{" "}
              <span class="detail">{summary(e)}</span>
            </li>
          ))}
        </ol>
      </section>
    </div>
  );
}
