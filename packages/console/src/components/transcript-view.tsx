// A transcript on the page: user and assistant messages (Markdown), tool cards, approvals and
// notices, as a list a screen reader announces as it grows (`aria-live="polite"` on the log).

import { renderMarkdown } from "../markdown.ts";
import { href } from "../router.ts";
import type { Item, ToolItem, Transcript } from "./transcript.ts";

const preview = (value: unknown): string => {
  if (value === undefined) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return text.length > 4000 ? `${text.slice(0, 4000)}\n… (${text.length - 4000} more characters)` : text;
};

function ToolCard({ item }: { readonly item: ToolItem }) {
  const state = item.state === "running" ? "running" : item.state === "error" ? "failed" : "done";
  return (
    <article
      class={`tool tool-${item.state}`}
      aria-label={`Tool ${item.name}: ${state}`}
      data-call-id={item.callId}
    >
      <header>
        <span class="tool-name">{item.name}</span>
        <span class="tool-state">
          {state}
          {item.durationMs !== undefined && item.state !== "running" ? ` · ${item.durationMs} ms` : ""}
        </span>
      </header>
      <details>
        <summary>Arguments</summary>
        <pre>{preview(item.args)}</pre>
      </details>
      {item.result !== undefined && (
        <details open={item.state === "error"}>
          <summary>Result</summary>
          <pre>{preview(item.result)}</pre>
        </details>
      )}
    </article>
  );
}

function ItemView({ item }: { readonly item: Item }) {
  switch (item.kind) {
    case "user":
      return (
        <div class="msg msg-user">
          <span class="who">You</span>
          <div class="body">{item.text}</div>
        </div>
      );
    case "assistant":
      return (
        <div class="msg msg-assistant" aria-busy={item.streaming}>
          <span class="who">Agent</span>
          {/* renderMarkdown escapes raw HTML and keeps only safe links */}
          <div class="body markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(item.text) }} />
        </div>
      );
    case "reasoning":
      return (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <pre>{item.text}</pre>
        </details>
      );
    case "tool":
      return <ToolCard item={item} />;
    case "approval":
      return (
        <div class="notice approval">
          {item.resolved === undefined ? (
            <>
              Waiting for approval of {item.tools.join(", ")}: answer it in the{" "}
              <a href={href("/approvals")}>approvals inbox</a>.
            </>
          ) : (
            <>
              Approval of {item.tools.join(", ")}: {item.resolved}.
            </>
          )}
        </div>
      );
    case "notice":
      return <div class={item.error ? "notice error" : "notice"}>{item.text}</div>;
  }
}

export function TranscriptView({
  transcript,
  label,
}: {
  readonly transcript: Transcript;
  readonly label: string;
}) {
  return (
    <div class="transcript" role="log" aria-live="polite" aria-label={label}>
      {transcript.items.map((item, i) => (
        // items are only appended or updated in place, so the index is a stable key
        <ItemView key={i} item={item} />
      ))}
    </div>
  );
}
