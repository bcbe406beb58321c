// Server-Sent Events, parsed as the HTML standard describes them: lines end in `\n`, `\r\n`
// or `\r`; `field: value` (one optional space after the colon); lines starting with `:` are
// comments (the daemon's keep-alives); a blank line dispatches the event gathered so far.
// Plain code on purpose: this is the hot path of every event a client reads.

/** One dispatched SSE event. `data` lines are joined with `\n`. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/** Incremental parser: `push` text chunks, get the events they complete. */
export class SseParser {
  private buffer = "";
  private id: string | undefined = undefined;
  private event = "";
  private data: string[] = [];
  private dataSeen = false;
  private skipLf = false;

  push(chunk: string): SseMessage[] {
    let text = chunk;
    // a `\n` right after a `\r` that ended the previous chunk is the rest of that line end
    if (this.skipLf && text.startsWith("\n")) text = text.slice(1);
    this.skipLf = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.buffer.slice(start, i);
      if (c === 13) {
        if (i === this.buffer.length - 1) this.skipLf = true;
        else if (this.buffer.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        this.dataSeen = true;
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
      default:
        // `retry` and unknown fields: ignored
        break;
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message = this.dataSeen
      ? { id: this.id, event: this.event === "" ? "message" : this.event, data: this.data.join("\n") }
      : undefined;
    this.event = "";
    this.data = [];
    this.dataSeen = false;
    return message;
  }
}

/** The SSE events of a response body, as they arrive. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const message of parser.push(decoder.decode(value, { stream: true }))) yield message;
    }
  } finally {
    // closing early (the consumer stopped, or an abort) must not leave the socket open
    await reader.cancel().catch(() => undefined);
  }
}
