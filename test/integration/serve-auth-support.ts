// `lash serve` with bearer tokens: tokens made by the real `lash serve token create`, a daemon
// started without `--no-auth`, HTTP calls and SSE reads as a given principal.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { lash, SANDBOX_POLICY, type Sandbox } from "./cli-support.ts";
import { api, type Daemon, type Reply } from "./serve-support.ts";

/** `$LASH_HOME/config.json` with this policy (the sandbox mode of the suite kept) and extra keys. */
export function writeConfig(sb: Sandbox, policy: object, extra: object = {}): void {
  mkdirSync(sb.home, { recursive: true });
  writeFileSync(
    join(sb.home, "config.json"),
    JSON.stringify({ policy: { ...SANDBOX_POLICY, ...policy }, ...extra }, null, 2),
  );
}

/** A token from `lash serve token create --principal <name> [--admin]` (stdout is the token alone). */
export async function createToken(sb: Sandbox, principal: string, admin = false): Promise<string> {
  const run = await lash(
    ["serve", "token", "create", "--principal", principal, ...(admin ? ["--admin"] : [])],
    {
      env: sb.env,
      cwd: sb.cwd,
    },
  );
  expect(run.stderr).toContain(`for principal ${principal}`);
  expect(run.code).toBe(0);
  const token = run.stdout.trim();
  expect(token).toMatch(/^lash_[A-Za-z0-9_-]{43}$/);
  return token;
}

/** One HTTP call as the holder of `token` (none: no Authorization header). */
export const as = (
  daemon: Daemon,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> => api(daemon.url, method, path, body, token);

export interface StreamEvent {
  readonly seq: number;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/**
 * Read an SSE stream as `token`'s holder until `until` matches an event (then disconnect)
 * or the server ends the stream; the events read, in order.
 */
export async function readUntil(
  daemon: Daemon,
  token: string | undefined,
  path: string,
  until: (e: StreamEvent) => boolean = () => false,
  after?: number,
): Promise<StreamEvent[]> {
  const controller = new AbortController();
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (after !== undefined) headers["last-event-id"] = String(after);
  const res = await fetch(`${daemon.url}${path}`, { headers, signal: controller.signal });
  expect(res.status).toBe(200);
  const events: StreamEvent[] = [];
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return events;
      buf += decoder.decode(value, { stream: true });
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = frame
          .split("\n")
          .find((l) => l.startsWith("data: "))
          ?.slice("data: ".length);
        if (data === undefined) continue;
        const e = JSON.parse(data) as { seq: number; type: string; data: Record<string, unknown> };
        const event = { seq: e.seq, type: e.type, data: e.data };
        events.push(event);
        if (until(event)) return events;
      }
    }
  } finally {
    controller.abort();
  }
}

/**
 * A session's events after `after` up to its next `runFinished` (the session stream: it
 * serves a run that is finishing right now like any other).
 */
export const untilFinished = (
  daemon: Daemon,
  token: string | undefined,
  sessionId: string,
  after?: number,
): Promise<StreamEvent[]> =>
  readUntil(daemon, token, `/v1/sessions/${sessionId}/events`, (e) => e.type === "runFinished", after);
