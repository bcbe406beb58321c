// Read views of sessions for the console and other readers: the active path as nodes, two
// sessions' branches compared, a session exported (HTML, JSON, Markdown: @lash/export) and
// a session's or run's trace (records rebuilt from the durable event log by @lash/trace's
// recorder, which redacts secrets before anything is written, and its viewer page).
//
// Nothing here keeps state: every view is a projection of the graph or of the event log.
import { type GraphNode, LashRuntime, SessionStore } from "@lash/core";
import { type ExportFormat, loadSession, renderExport } from "@lash/export";
import {
  createTraceRecorder,
  makeRedactor,
  memorySink,
  renderTraceViewer,
  type TraceInput,
} from "@lash/trace";
import { Effect } from "effect";
import { type ServerEvent, SessionComparison, SessionNode } from "./api.ts";
import { core } from "./groups/common.ts";

/** The run lifecycle events of the log (not part of a turn's activity). */
const LIFECYCLE = new Set(["runQueued", "runStarted", "runResumed", "runFinished", "approvalWaiting"]);

export const toNode = (n: GraphNode): SessionNode =>
  new SessionNode({
    id: n.id,
    sessionId: n.sessionId,
    parentId: n.parentId,
    kind: n.kind,
    turnId: n.turnId,
    createdAt: n.createdAt,
    payload: n.payload,
  });

/** A session's active path, root first (a fork's starts with its origin's nodes). */
export const activePath = (sessionId: string) =>
  core(
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const session = yield* store.getSession(sessionId);
      return session.leafId === null ? [] : yield* store.activePath(sessionId, session.leafId);
    }),
  );

/** The nodes of `a`'s and `b`'s active paths after the last node they share. */
export const compareSessions = (a: string, b: string) =>
  Effect.gen(function* () {
    const pathA = yield* activePath(a);
    const pathB = yield* activePath(b);
    let i = 0;
    while (i < pathA.length && i < pathB.length && pathA[i]!.id === pathB[i]!.id) i++;
    return new SessionComparison({
      a,
      b,
      ancestor: i > 0 ? pathA[i - 1]!.id : null,
      shared: i,
      onlyA: pathA.slice(i).map(toNode),
      onlyB: pathB.slice(i).map(toNode),
    });
  });

const CONTENT_TYPES: Record<ExportFormat, string> = {
  html: "text/html; charset=utf-8",
  json: "application/json; charset=utf-8",
  md: "text/markdown; charset=utf-8",
};

export interface Page {
  readonly body: string;
  readonly contentType: string;
  /** The file name a browser saves it as. */
  readonly filename: string;
}

/**
 * A session exported (every branch and its subagent sessions), secrets redacted once more
 * on the way out (the graph holds none; this keeps it so should one slip in).
 */
export const exportPage = (sessionId: string, format: ExportFormat) =>
  core(
    Effect.gen(function* () {
      const store = yield* SessionStore;
      // the runtime's session check first: a missing session is a 404, not a defect
      yield* Effect.flatMap(LashRuntime, (rt) => rt.getSession(sessionId));
      const exported = yield* Effect.promise(() => loadSession(store, sessionId));
      const redact = makeRedactor();
      return {
        body: renderExport(redact(exported), format),
        contentType: CONTENT_TYPES[format],
        filename: `${sessionId}.${format}`,
      } satisfies Page;
    }),
  );

/** The turn activity of a session's logged events, as the trace recorder reads it. */
export function traceInputs(events: readonly ServerEvent[]): TraceInput[] {
  const out: TraceInput[] = [];
  for (const e of events) {
    if (LIFECYCLE.has(e.type)) continue;
    const data = e.data as { readonly type?: unknown; readonly turnId?: unknown } | null;
    if (!data || typeof data.turnId !== "string" || data.type !== e.type) continue;
    out.push({ ...(data as object), sessionId: e.sessionId, seq: e.seq, at: e.at } as TraceInput);
  }
  return out;
}

/**
 * The trace of logged events (one session's, or one run's): the records the recorder makes
 * of them (secrets redacted), as the viewer page (`html`) or JSON Lines (`jsonl`, the
 * format of `lash --trace`, which `lash trace view` reads).
 */
export const tracePage = (
  events: readonly ServerEvent[],
  options: {
    readonly format: "html" | "jsonl";
    readonly level: "standard" | "extended";
    readonly title: string;
  },
) =>
  Effect.promise(async (): Promise<Page> => {
    const inputs = traceInputs(events);
    const sink = memorySink();
    const recorder = createTraceRecorder({
      sinks: [sink],
      level: options.level,
      queueLimit: inputs.length * 4 + 1000,
      flushOnTurnEnd: false,
    });
    for (const input of inputs) recorder.record(input);
    await recorder.close();
    const slug = options.title.replace(/[^A-Za-z0-9_.-]+/g, "_");
    if (options.format === "jsonl")
      return {
        body: sink.records.map((r) => `${JSON.stringify(r)}\n`).join(""),
        contentType: "application/x-ndjson; charset=utf-8",
        filename: `${slug}.jsonl`,
      };
    return {
      body: renderTraceViewer(sink.records, { title: options.title }),
      contentType: "text/html; charset=utf-8",
      filename: `${slug}.html`,
    };
  });
