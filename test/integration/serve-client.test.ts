// @lash/client against a real `lash serve` (issue 19, acceptance 5): the client creates a
// session, starts a turn and iterates the run's events to `runFinished`; the daemon is
// `kill -9`ed mid-stream and restarted on the same port and state, and the SAME iterator
// goes on by itself — no seq twice, none missing (compared with a fresh read from seq 0).
import { join } from "node:path";
import { ClientError, createClient, LashClient, NotFound, type ServerEvent } from "@lash/client";
import { Chunk, Effect, Stream } from "effect";
import { describe, expect, it } from "vitest";
import { checkOpenApi } from "../../packages/server/test/openapi-check.ts";
import type { Sandbox, Spawned } from "./cli-support.ts";
import { serveTests } from "./serve-support.ts";

const t = serveTests();

/**
 * `lash serve --no-auth` on `port` (0: any) in the sandbox with its state in the sandbox's
 * LASH_HOME. (Tokens and principals are the auth tests' subject; the client's bearer token is
 * exercised by the README test.)
 */
async function serve(box: Sandbox, port = 0): Promise<{ daemon: Spawned; url: string; port: number }> {
  const d = await t.daemon(box, ["--state", join(box.home, "serve.db")], { port });
  return { daemon: d.proc, url: d.url, port: Number(new URL(d.url).port) };
}

const newBox = (replies: Parameters<typeof t.sandbox>[0]): Promise<Sandbox> => t.sandbox(replies);

const seqs = (events: readonly ServerEvent[]) => events.map((e) => e.seq);

describe("@lash/client against lash serve", { timeout: 90_000 }, () => {
  it("creates a session, starts a turn and follows the run's events to runFinished", async () => {
    const box = await newBox([{ text: "Hello from the mock model", textChunks: 4 }]);
    const { url } = await serve(box);
    const client = createClient({ baseUrl: url });

    const session = await client.sessions.create({ title: "client test" });
    expect((await client.sessions.list()).map((s) => s.id)).toContain(session.id);
    const run = await client.turns.start(session.id, "say hello");
    expect(run.sessionId).toBe(session.id);

    const events: ServerEvent[] = [];
    for await (const e of client.events({ runId: run.id })) events.push(e);
    expect(events.at(-1)?.type).toBe("runFinished");
    const text = events
      .filter((e) => e.type === "textDelta")
      .map((e) => (e.data as { text: string }).text)
      .join("");
    expect(text).toBe("Hello from the mock model");
    // strictly increasing, every event of this run
    expect(seqs(events)).toEqual([...seqs(events)].sort((a, b) => a - b));
    expect(new Set(seqs(events)).size).toBe(events.length);
    expect(events.every((e) => e.runId === run.id && e.sessionId === session.id)).toBe(true);

    const done = await client.runs.get(run.id);
    expect(done.state).toBe("completed");
    expect(done.text).toBe("Hello from the mock model");
    expect(done.lastSeq).toBe(events.at(-1)?.seq);
    // the same run read again from the start: the same events
    expect(seqs(await collect(client.events({ runId: run.id }, { after: 0 })))).toEqual(seqs(events));
    // … and through the Effect client, as a Stream
    const viaEffect = await Effect.runPromise(
      Effect.flatMap(LashClient, (lash) => Stream.runCollect(lash.events({ runId: run.id }))).pipe(
        Effect.provide(LashClient.layer({ baseUrl: url })),
      ),
    );
    expect(seqs(Chunk.toArray(viaEffect))).toEqual(seqs(events));
  });

  it("the rest of the promise client: wait, messages, runs, fork, delete", async () => {
    const box = await newBox([{ text: "first answer" }, { text: "answer in the fork" }]);
    const { url } = await serve(box);
    const client = createClient({ baseUrl: url });
    expect(await client.health()).toEqual({ ok: true });
    const session = await client.sessions.create({ title: "surface" });
    const run = await client.turns.start(session.id, "first question", { wait: true });
    expect(run).toMatchObject({ state: "completed", text: "first answer", sessionId: session.id });
    expect((await client.sessions.runs(session.id)).map((r) => r.id)).toEqual([run.id]);
    const messages = JSON.stringify(await client.sessions.messages(session.id));
    expect(messages).toContain("first question");
    expect(messages).toContain("first answer");

    const fork = await client.sessions.fork(session.id, { title: "the fork" });
    expect(fork.id).not.toBe(session.id);
    const inFork = await client.turns.start(fork.id, "in the fork", { wait: true });
    expect(inFork.text).toBe("answer in the fork");
    // the fork's model request carried the original's history
    expect(JSON.stringify(box.server.requests[1]?.body)).toContain("first answer");
    expect((await client.sessions.get(session.id)).turnCount).toBe(1);

    expect(await client.sessions.delete(fork.id)).toEqual({ deleted: fork.id });
    await expect(client.sessions.get(fork.id)).rejects.toBeInstanceOf(NotFound);
  });

  it("the daemon's errors arrive as the API's tagged errors; its /v1/openapi.json validates", async () => {
    const box = await newBox([]);
    const { url } = await serve(box);
    const openapi = await fetch(`${url}/v1/openapi.json`);
    expect(openapi.status).toBe(200);
    await checkOpenApi(await openapi.json());
    const client = createClient({ baseUrl: url });
    const missing = await client.sessions.get("no-such-session").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFound);
    expect(missing).toMatchObject({ _tag: "NotFound" });
    expect((missing as NotFound).message).not.toBe("");
    await expect(collect(client.events({ runId: "no-such-run" }))).rejects.toBeInstanceOf(NotFound);
    // the Effect client fails with the same tagged error, for catchTag
    const code = await Effect.runPromise(
      Effect.flatMap(LashClient, ({ api }) =>
        api.sessions
          .get({ path: { id: "no-such-session" } })
          .pipe(Effect.catchTag("NotFound", (e) => Effect.succeed(`caught ${e.code}`))),
      ).pipe(Effect.provide(LashClient.layer({ baseUrl: url }))),
    );
    expect(code).toMatch(/^caught \w+/);
  });

  it("kill -9 of the daemon mid-stream: the iterator reconnects by itself to the restarted daemon, no seq twice, none missing", async () => {
    // the first model call streams three deltas and hangs (the daemon dies inside it); the
    // resumed run calls the model again and gets the whole answer
    const box = await newBox([
      { text: "one two three four", textChunks: 4, hangAfterChunks: 3 },
      { text: "one two three four", textChunks: 4 },
    ]);
    const first = await serve(box);
    const client = createClient({ baseUrl: first.url });
    const session = await client.sessions.create({});
    const run = await client.turns.start(session.id, "count");

    const reconnects: string[] = [];
    let restarted: Promise<unknown> | undefined;
    const events: ServerEvent[] = [];
    for await (const e of client.events(
      { runId: run.id },
      { maxRetries: 120, maxDelayMs: 500, onReconnect: ({ cause }) => reconnects.push(cause) },
    )) {
      events.push(e);
      if (e.type === "textDelta" && restarted === undefined) {
        // mid-stream: the run is inside its model call
        first.daemon.child.kill("SIGKILL");
        await first.daemon.done;
        restarted = serve(box, first.port);
      }
    }
    await restarted;
    expect(reconnects.length).toBeGreaterThan(0);
    expect(events.at(-1)?.type).toBe("runFinished");
    expect(new Set(seqs(events)).size).toBe(events.length);
    const fresh = await collect(client.events({ runId: run.id }, { after: 0 }));
    expect(seqs(events)).toEqual(seqs(fresh));
    expect(events.map((e) => e.type)).toEqual(fresh.map((e) => e.type));
    const done = await client.runs.get(run.id);
    expect(done.state).toBe("completed");
    expect(done.resumes).toBeGreaterThanOrEqual(1);
    expect(box.server.requests.length).toBe(2);
  });

  it("an iterator whose daemon never comes back gives up with a clear error", async () => {
    const box = await newBox([{ text: "x", hangAfterChunks: 0 }]);
    const { daemon, url } = await serve(box);
    const client = createClient({ baseUrl: url });
    const session = await client.sessions.create({});
    const run = await client.turns.start(session.id, "hang");
    const stream = client.events({ sessionId: session.id }, { maxRetries: 2, initialDelayMs: 10 });
    expect((await stream.next()).done).toBe(false);
    daemon.child.kill("SIGKILL");
    await daemon.done;
    const error = await collect(stream).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ code: "stream_gave_up" });
    expect((error as ClientError).message).toContain("Last-Event-ID");
    expect(run.id).not.toBe("");
  });
});

async function collect(it: AsyncIterable<ServerEvent>): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}
