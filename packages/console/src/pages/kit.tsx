// Helpers of the approvals, sessions, loops and metrics pages: loading state, polling,
// formatting, links, a message's text, view links, and the download of a text file.
import "./pages.css";
import type { LashClientPromise } from "@lash/client";
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { describeError } from "../connection.ts";
import { href as routeHref } from "../router.ts";

/** What a failed call says: the daemon's message (it names the fix). */
export const errorText = describeError;

export interface Loaded<A> {
  readonly data: A | undefined;
  readonly error: string | undefined;
  readonly loading: boolean;
  readonly reload: () => Promise<void>;
}

/**
 * Load `fn` now (and again when `deps` change); `pollMs` reloads it on a timer while the page
 * is shown (a page of server state, not a test's synchronisation).
 */
export function useLoad<A>(fn: () => Promise<A>, deps: readonly unknown[], pollMs?: number): Loaded<A> {
  const [data, setData] = useState<A | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const live = useRef(true);
  const reload = useCallback(async () => {
    try {
      const value = await fn();
      if (!live.current) return;
      setData(value);
      setError(undefined);
    } catch (e) {
      if (live.current) setError(errorText(e));
    } finally {
      if (live.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    live.current = true;
    setLoading(true);
    void reload();
    const timer = pollMs !== undefined ? setInterval(() => void reload(), pollMs) : undefined;
    return () => {
      live.current = false;
      if (timer !== undefined) clearInterval(timer);
    };
  }, [reload, pollMs]);
  return { data, error, loading, reload };
}

export const fmtTime = (ms: number | undefined): string =>
  ms === undefined ? "—" : new Date(ms).toLocaleString(undefined, { hour12: false });

export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export const fmtUsd = (usd: number): string => (usd === 0 ? "$0" : `$${usd.toFixed(usd < 0.01 ? 5 : 3)}`);

/** A link to a console route (a literal path: `/runs/${id}`). */
export const href = (path: string): string => routeHref(path);

export function ErrorNote(props: { readonly error: string | undefined }) {
  if (props.error === undefined) return null;
  return (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}

/** A status line read out by screen readers when it changes. */
export function Status(props: { readonly children?: ComponentChildren }) {
  return (
    <p class="status" role="status" aria-live="polite">
      {props.children}
    </p>
  );
}

interface MessagePayload {
  readonly role?: string;
  readonly parts?: readonly {
    readonly type: string;
    readonly text?: string;
    readonly name?: string;
    readonly argumentsText?: string;
    readonly source?: string;
    readonly isError?: boolean;
    readonly content?: readonly { readonly type: string; readonly text?: string }[];
  }[];
}

/** One message of a session's graph: its role and its parts in short. */
export function MessageView(props: { readonly payload: unknown }) {
  const m = props.payload as MessagePayload;
  const parts = m.parts ?? [];
  return (
    <div class={`node-message role-${m.role ?? "unknown"}`}>
      <span class="role">{m.role ?? "?"}</span>
      {parts.map((p, i) => {
        if (p.type === "text") return <p key={i}>{p.text}</p>;
        if (p.type === "toolCall")
          return (
            <p key={i} class="tool-call">
              <code>{p.name}</code> <code>{p.argumentsText}</code>
            </p>
          );
        if (p.type === "toolResult") {
          const text = (p.content ?? []).map((c) => c.text ?? "").join("");
          return (
            <p key={i} class={p.isError ? "tool-result error" : "tool-result"}>
              {text.length > 400 ? `${text.slice(0, 400)}…` : text}
            </p>
          );
        }
        if (p.type === "code" || p.type === "output")
          return (
            <pre key={i} class={p.type}>
              {p.source ?? p.text}
            </pre>
          );
        return (
          <p key={i} class="muted">
            [{p.type}]
          </p>
        );
      })}
    </div>
  );
}

/** Offer `text` as a file download. */
export function download(text: string, filename: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export type ViewRequest = Parameters<LashClientPromise["views"]["link"]>[0];

/**
 * Open an export or trace page in a new tab: a short-lived view link from the daemon (a tab
 * cannot send the console's bearer token; the page gets its own, looser CSP there).
 */
export async function openView(client: LashClientPromise, request: ViewRequest): Promise<void> {
  const link = await client.views.link(request);
  window.open(link.url, "_blank", "noopener");
}
