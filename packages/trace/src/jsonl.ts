import { mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import type { TraceRecord } from "./schema.ts";
import type { TraceSink } from "./sink.ts";

export interface JsonlSinkOptions {
  /** Write buffered lines once this many bytes wait, even before a flush (default 256 KiB). */
  readonly bufferBytes?: number;
  /** fsync on flush (default true). */
  readonly sync?: boolean;
}

/**
 * Appends one JSON line per record to `path` (created with its directory when
 * missing; never truncated). Lines are buffered and written on `flush` — the
 * recorder flushes at the end of every turn — or when the buffer is full.
 */
export function jsonlSink(path: string, options: JsonlSinkOptions = {}): TraceSink {
  const limit = options.bufferBytes ?? 256 * 1024;
  const sync = options.sync ?? true;
  let buffer: string[] = [];
  let bytes = 0;
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  const file = async () => {
    if (!handle) {
      await mkdir(dirname(path), { recursive: true });
      handle = await open(path, "a");
    }
    return handle;
  };
  const drain = async () => {
    if (buffer.length === 0) return;
    const text = buffer.join("");
    buffer = [];
    bytes = 0;
    await (await file()).appendFile(text, "utf8");
  };
  return {
    name: `jsonl(${path})`,
    async write(records: readonly TraceRecord[]) {
      for (const r of records) {
        const line = `${JSON.stringify(r)}\n`;
        buffer.push(line);
        bytes += line.length;
      }
      if (bytes >= limit) await drain();
    },
    async flush() {
      await drain();
      if (sync && handle) await handle.sync();
    },
    async close() {
      await drain();
      const h = handle;
      handle = undefined;
      await h?.close();
    },
  };
}
