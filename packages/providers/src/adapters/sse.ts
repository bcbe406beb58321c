// Server-sent events of a streamed answer, parsed by lash as each network read arrives: one
// push parser (`SseParser`), read from a web `Response` (the SDK path) or from lash's own
// transport (http.ts). What an event means — an item, the end, the SDK's error — is the
// adapter's `SseEvent` function, so each adapter keeps its SDK's stream semantics.
import type { LlmError } from "@lash/sansio";
import { bodyItems, type HttpResponse } from "./http.ts";
import type { Emit, Translator } from "./shared.ts";

/** The state of one streamed response's body. */
export interface SseState {
  /** The stream's end was seen (`data: [DONE]`, or the vendor's terminal event): later events are ignored. */
  done: boolean;
}

/**
 * One event → the item it carries (`undefined` for none). It may set `state.done` and throws the
 * SDK's error for an error event. `data` is the event's data lines joined by "\n".
 */
export type SseEvent<T> = (event: string | undefined, data: string, state: SseState) => T | undefined;

/**
 * A push parser of one SSE body: `feed` the text of each read, `take` the items it completed.
 * Server-sent events per the spec (CRLF, CR or LF line ends, multi-line `data`, comments).
 */
export class SseParser<T> {
  private carry = "";
  private data: string | undefined;
  private event: string | undefined;
  private batch: T[] = [];
  readonly state: SseState;
  private readonly onEvent: SseEvent<T>;

  constructor(state: SseState, onEvent: SseEvent<T>) {
    this.state = state;
    this.onEvent = onEvent;
  }

  /** The items completed since the last call (an empty array when none). */
  take(): T[] {
    const out = this.batch;
    if (out.length > 0) this.batch = [];
    return out;
  }

  private dispatch(): void {
    const d = this.data;
    const ev = this.event;
    this.data = undefined;
    this.event = undefined;
    if (d === undefined || this.state.done) return;
    const item = this.onEvent(ev, d, this.state);
    if (item !== undefined) this.batch.push(item);
  }

  private line(l: string): void {
    if (l === "") {
      this.dispatch();
      return;
    }
    if (l.charCodeAt(0) === 58) return; // ":" comment (keep-alive pings)
    const colon = l.indexOf(":");
    const field = colon === -1 ? l : l.slice(0, colon);
    let value = colon === -1 ? "" : l.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    else if (field === "event") this.event = value;
  }

  /** The text of one read; `final` at the body's end (flushes a last line and event). */
  feed(text: string, final: boolean): void {
    let s = this.carry + text;
    let hold = "";
    if (s.includes("\r")) {
      // a CR at the end may be the first half of a CRLF split across reads
      if (!final && s.endsWith("\r")) {
        hold = "\r";
        s = s.slice(0, -1);
      }
      s = s.replace(/\r\n?/g, "\n");
    }
    let start = 0;
    for (let nl = s.indexOf("\n"); nl !== -1; nl = s.indexOf("\n", start)) {
      this.line(s.slice(start, nl));
      start = nl + 1;
    }
    this.carry = s.slice(start) + hold;
    if (final) {
      if (this.carry !== "") this.line(this.carry);
      this.carry = "";
      this.dispatch(); // a last event without its blank line
    }
  }
}

/**
 * The items of a web `Response`'s SSE body (the SDK path), read by a plain loop: each network read
 * yields the items it completed, as one array. The body is read to its end (no cancel, so no abort
 * of the connection) unless the reader stops early or fails.
 */
export async function* fetchItems<T>(res: Response, parser: SseParser<T>): AsyncGenerator<T[]> {
  const body = res.body;
  if (body === null) throw new Error("the server answered a streamed request with no body");
  const state = parser.state;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let ended = false;
  try {
    while (!state.done) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        parser.feed(decoder.decode(), true);
      } else parser.feed(decoder.decode(value, { stream: true }), false);
      const batch = parser.take();
      if (batch.length > 0) yield batch;
      if (ended) return;
    }
  } finally {
    if (!ended) {
      if (state.done)
        // after the end the body normally just ends: read that end instead of aborting the connection
        reader.read().then(
          (r) => (r.done ? undefined : reader.cancel().catch(() => undefined)),
          () => undefined,
        );
      else reader.cancel().catch(() => undefined);
    }
  }
}

/** The same items from lash's own transport: parsed as each read arrives, no web streams. */
export function httpItems<T>(res: HttpResponse, parser: SseParser<T>): AsyncIterable<T[]> {
  const state = parser.state;
  return bodyItems(
    res.body,
    (text) => {
      if (text === undefined) parser.feed("", true);
      else parser.feed(text, false);
      return parser.take();
    },
    () => state.done,
  );
}

/** Items in batches (one per network read) through a per-item translator. */
export class BatchTranslator<T> implements Translator<T[]> {
  private readonly inner: Translator<T>;
  constructor(inner: Translator<T>) {
    this.inner = inner;
  }
  push(batch: T[], emit: Emit): boolean {
    for (const item of batch) if (this.inner.push(item, emit)) return true;
    return false;
  }
  end(emit: Emit): LlmError | undefined {
    return this.inner.end(emit);
  }
  aborted(emit: Emit): void {
    this.inner.aborted?.(emit);
  }
}
