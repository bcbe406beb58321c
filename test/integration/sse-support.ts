// An SSE client for the daemon tests, without vitest (the cluster scenario of
// serve-restate.test.ts runs it in a plain node process); serve-support re-exports it.
import { request } from "node:http";

export interface SseEvent {
  readonly id: number;
  readonly event: string;
  readonly data: { seq: number; runId: string; type: string; data: Record<string, unknown> };
}

/**
 * An SSE reader over node:http (so the test controls when it stops reading). `onEvent`
 * returning false stops and disconnects; resolves with the events read and whether the
 * server ended the stream.
 */
export function readSse(
  url: string,
  options: {
    readonly lastEventId?: number;
    readonly onEvent?: (e: SseEvent) => boolean | undefined;
    /** Stop reading after the first event until this resolves (a reader that cannot keep up). */
    readonly stallUntil?: Promise<unknown>;
  } = {},
): Promise<{ events: SseEvent[]; ended: boolean; status: number }> {
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const req = request(
      url,
      { headers: options.lastEventId !== undefined ? { "last-event-id": String(options.lastEventId) } : {} },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          resolve({ events, ended: true, status: res.statusCode ?? 0 });
          return;
        }
        res.setEncoding("utf8");
        let buf = "";
        let stopped = false;
        res.on("data", (chunk: string) => {
          if (stopped) return;
          buf += chunk;
          let i = buf.indexOf("\n\n");
          while (i >= 0) {
            const frame = buf.slice(0, i);
            buf = buf.slice(i + 2);
            i = buf.indexOf("\n\n");
            const fields: Record<string, string> = {};
            for (const line of frame.split("\n")) {
              if (line.startsWith(":")) continue;
              const c = line.indexOf(": ");
              if (c > 0) fields[line.slice(0, c)] = line.slice(c + 2);
            }
            if (fields.id === undefined) continue;
            const e: SseEvent = {
              id: Number(fields.id),
              event: fields.event!,
              data: JSON.parse(fields.data!),
            };
            events.push(e);
            if (events.length === 1 && options.stallUntil) {
              res.pause();
              options.stallUntil.then(() => res.resume());
            }
            if (options.onEvent?.(e) === false) {
              stopped = true;
              req.destroy();
              resolve({ events, ended: false, status: 200 });
              return;
            }
          }
        });
        res.on("end", () => {
          if (!stopped) resolve({ events, ended: true, status: 200 });
        });
        res.on("error", () => {
          if (!stopped) resolve({ events, ended: false, status: 200 });
        });
      },
    );
    req.on("error", (e) => {
      if (events.length > 0) resolve({ events, ended: false, status: 200 });
      else reject(e);
    });
    req.end();
  });
}
