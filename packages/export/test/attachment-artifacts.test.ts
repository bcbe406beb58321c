// Attachments and images as artifacts (issue 20), end to end over a real SQLite file with the
// mock wire server as the model: the same image sent by the user in two turns and returned by a
// tool is stored once; the graph holds references, not base64; every later request carries the
// bytes again; the JSON export embeds the artifact and an import into another file keeps it (the
// HTML shows the image); deleting the only session and collecting removes it. A node written
// before (inline base64) still loads and is sent as it is.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  artifactRef,
  IdGenerator,
  LashRuntime,
  LlmProviders,
  ModelCatalog,
  SessionStore,
  SqliteStore,
  type ToolDefinition,
} from "@lash/core";
import { createProvider } from "@lash/providers";
import { type RecordedRequest, startMockServer } from "@lash/providers/testing";
import { sha256BytesHex } from "@lash/sansio";
import { Effect, Layer, ManagedRuntime } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { exportSession, importSession } from "../src/index.ts";

const MODEL = "openai-compatible/mock";
// a small "PNG": the signature, then bytes no text would hold
const BYTES = new Uint8Array([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256),
]);
const B64 = Buffer.from(BYTES).toString("base64");
const ID = sha256BytesHex(BYTES);
const image = { type: "attachment", mediaType: "image/png", data: B64, name: "shot.png" } as const;

const snap: ToolDefinition = {
  name: "snap",
  description: "Take a screenshot.",
  inputSchema: { type: "object" },
  readOnly: true,
  execute: () =>
    Effect.succeed({
      content: [
        { type: "text", text: "the screen:" },
        { ...image, name: "screen.png" },
      ],
    }),
};

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function runtimeOver(db: string, baseUrl: string) {
  const provider = createProvider(MODEL, { baseUrl, apiKey: "test", retry: false });
  const rt = ManagedRuntime.make(
    LashRuntime.layer({ plugins: [{ name: "tools", tools: [snap] }] }).pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          SqliteStore.layer({ filename: db }),
          LlmProviders.single(provider),
          IdGenerator.Live,
          ModelCatalog.Empty,
        ),
      ),
    ),
  );
  cleanup.push(() => rt.dispose());
  return rt;
}

const count = (db: string, table: string): number => {
  const d = new DatabaseSync(db, { readOnly: true });
  try {
    return (d.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    d.close();
  }
};
/** How many times the image's bytes are in a request's body. */
const copies = (r: RecordedRequest): number => JSON.stringify(r.body).split(B64).length - 1;

describe("attachments and images as artifacts", () => {
  it("stored once, referenced from the graph, sent again, exported, imported, collected", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-attach-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startMockServer({
      replies: [
        { text: "a screenshot" },
        { toolCalls: [{ id: "c1", name: "snap", arguments: {} }] },
        { text: "the same screen" },
        { text: "still here" },
      ],
    });
    cleanup.push(() => server.close());
    const db = join(dir, "lash.db");
    const rt = runtimeOver(db, server.baseUrl("openai-chat"));
    const store = await rt.runPromise(SessionStore);
    const lash = await rt.runPromise(LashRuntime);
    const run = <A, E>(e: Effect.Effect<A, E>) => rt.runPromise(e);
    const user = (id: string, text: string) => ({
      id,
      role: "user" as const,
      parts: [{ type: "text" as const, text }, image],
    });

    const s = await run(lash.createSession({ model: MODEL }));
    await run(lash.turn(s.id, { messages: [user("u1", "look")] }));
    await run(lash.turn(s.id, { messages: [user("u2", "again, and take one yourself")] }));
    await run(lash.turn(s.id, { text: "and now?" }));

    // stored once: one artifact row, for the user's image twice and the tool's once
    expect(count(db, "artifacts")).toBe(1);
    expect(count(db, "artifact_refs")).toBe(3);
    expect(await run(store.artifactInfo(ID))).toMatchObject({
      id: ID,
      size: BYTES.length,
      mediaType: "image/png",
    });
    // the graph holds references, no base64
    const nodes = await run(store.sessionNodes(s.id));
    const graph = JSON.stringify(nodes.map((n) => n.payload));
    expect(graph).not.toContain(B64.slice(0, 200));
    expect(graph.split(`"ref":"${artifactRef(ID)}"`).length - 1).toBe(3);
    // the model sees the image every time: the new input's, and those from the history
    const reqs = server.requests;
    expect(reqs).toHaveLength(4);
    expect(reqs.map(copies)).toEqual([1, 2, 3, 3]);

    // export → import into another SQLite file keeps it; the HTML shows the image
    const json = await exportSession(store, s.id, "json");
    expect(JSON.parse(json).artifacts).toEqual([
      { id: ID, mediaType: "image/png", size: BYTES.length, data: B64 },
    ]);
    expect(await exportSession(store, s.id, "html")).toContain(`src="data:image/png;base64,${B64}"`);
    const other = join(dir, "other.db");
    const target = ManagedRuntime.make(SqliteStore.layer({ filename: other }));
    cleanup.push(() => target.dispose());
    const targetStore = await target.runPromise(SessionStore);
    await importSession(targetStore, json);
    expect(count(other, "artifacts")).toBe(1);
    const back = await target.runPromise(targetStore.readArtifact(ID));
    expect(Buffer.from(back!).equals(Buffer.from(BYTES))).toBe(true);

    // kept while a node refers to it; the only session deleted, the collection removes it
    const later = Date.now() + 60_000;
    expect((await run(store.collectArtifacts({ storedBefore: later }))).removed).toEqual([]);
    expect(count(db, "artifacts")).toBe(1);
    await run(lash.deleteSession(s.id));
    expect((await run(store.collectArtifacts({ storedBefore: later }))).removed).toEqual([ID]);
    expect(count(db, "artifacts")).toBe(0);
    expect(count(db, "artifact_chunks")).toBe(0);
  });

  it("a node written with inline base64 (before artifacts) loads and is sent as it is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lash-attach-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startMockServer({ replies: [{ text: "seen" }] });
    cleanup.push(() => server.close());
    const db = join(dir, "lash.db");
    const rt = runtimeOver(db, server.baseUrl("openai-chat"));
    const store = await rt.runPromise(SessionStore);
    const lash = await rt.runPromise(LashRuntime);
    const run = <A, E>(e: Effect.Effect<A, E>) => rt.runPromise(e);
    const s = await run(lash.createSession({ model: MODEL }));
    // what an earlier lash committed: the image inline in the node
    await run(
      store.commit({
        sessionId: s.id,
        turnId: "old",
        hash: "old",
        expectedRevision: s.headRevision,
        leafId: "old.0",
        usage: [],
        updatedAt: Date.now(),
        nodes: [
          {
            id: "old.0",
            sessionId: s.id,
            parentId: null,
            frameId: s.frameId,
            kind: "message",
            turnId: "old",
            payload: { id: "old.0", role: "user", parts: [{ type: "text", text: "an old image" }, image] },
            createdAt: Date.now(),
          },
        ],
      }),
    );
    await run(lash.turn(s.id, { text: "what was it?" }));
    expect(copies(server.requests[0]!)).toBe(1);
    expect(count(db, "artifacts")).toBe(0);
  });
});
