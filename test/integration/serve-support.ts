// Running the real `lash serve` as a child process and talking to it over HTTP/SSE.
import { request } from "node:http";
import { type Sandbox, type Spawned, start } from "./cli-support.ts";

export interface Daemon {
  readonly url: string;
  readonly proc: Spawned;
}

/** `lash serve --port 0 --no-auth …` in the sandbox; resolves once it printed its URL. */
export async function startDaemon(sb: Sandbox, extra: readonly string[] = []): Promise<Daemon> {
  const proc = start(["serve", "--port", "0", "--no-auth", ...extra], { env: sb.env, cwd: sb.cwd });
  const line = await proc.waitForLine(
    (l) => l.startsWith("lash serve: listening on") || l.startsWith("__exited__"),
  );
  const m = /listening on (http:\/\/\S+)/.exec(line);
  if (!m) {
    const run = await proc.done;
    throw new Error(`lash serve did not start: ${line}\n${run.stderr}`);
  }
  return { url: m[1]!, proc };
}

export interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export async function api(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body !== undefined ? { "content-type": "application/json" } : {},
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

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
  options: { readonly lastEventId?: number; readonly onEvent?: (e: SseEvent) => boolean | undefined } = {},
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
