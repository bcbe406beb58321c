// Links from a run to its trace and to its session's export: each opens the daemon's page in
// a new tab through a short-lived view link (`POST /v1/views`), since a tab cannot send the
// console's bearer token.
import { useState } from "preact/hooks";
import { useClient } from "../context.ts";
import { ErrorNote, errorText, href, openView, type ViewRequest } from "./kit.tsx";

export function RunLinks(props: { readonly runId: string; readonly sessionId: string }) {
  const client = useClient();
  const [error, setError] = useState<string | undefined>(undefined);
  const open = (request: ViewRequest) => {
    setError(undefined);
    openView(client, request).catch((e: unknown) => setError(errorText(e)));
  };
  return (
    <nav class="run-links actions" aria-label="Trace and export">
      <button type="button" onClick={() => open({ kind: "runTrace", id: props.runId })}>
        Open trace of this run
      </button>
      <button type="button" onClick={() => open({ kind: "sessionTrace", id: props.sessionId })}>
        Open session trace
      </button>
      <button type="button" onClick={() => open({ kind: "export", id: props.sessionId, format: "html" })}>
        Open session export
      </button>
      <a href={href(`/sessions/${props.sessionId}`)}>Session {props.sessionId}</a>
      <ErrorNote error={error} />
    </nav>
  );
}
