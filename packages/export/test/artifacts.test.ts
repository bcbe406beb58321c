// Artifacts in exports: the JSON export embeds what the nodes refer to, import puts it back
// (and refuses an artifact whose bytes do not match its id), HTML and Markdown show the text.
import { artifactRef, makeMemoryStore, type SessionStoreShape } from "@lash/core";
import { sha256Hex } from "@lash/sansio";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { exportSession, ImportError, importSession, parseExport } from "../src/index.ts";

const TEXT = Array.from({ length: 3000 }, (_, i) => `entry ${i + 1}`).join("\n");
const ID = sha256Hex(TEXT);

async function seeded(): Promise<SessionStoreShape> {
  const store = await Effect.runPromise(makeMemoryStore());
  const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runPromise(e);
  await run(
    store.putArtifact({ bytes: new TextEncoder().encode(TEXT), mediaType: "text/plain", createdAt: 1 }),
  );
  await run(
    store.createSession({
      id: "s1",
      model: "m/m",
      mode: "standard",
      createdAt: 1,
      updatedAt: 1,
      leafId: null,
      headRevision: 0,
      turnCount: 0,
      frameId: "f0",
      state: {},
    }),
  );
  const node = (id: string, parentId: string | null, parts: unknown[], role: string) => ({
    id,
    sessionId: "s1",
    parentId,
    frameId: "f0",
    kind: "message" as const,
    turnId: "t1",
    payload: { id, role, parts },
    createdAt: 2,
  });
  await run(
    store.commit({
      sessionId: "s1",
      turnId: "t1",
      hash: "h",
      expectedRevision: 0,
      leafId: "n2",
      usage: [],
      updatedAt: 2,
      nodes: [
        node("n0", null, [{ type: "text", text: "list" }], "user"),
        node("n1", "n0", [{ type: "toolCall", id: "c1", name: "dump", argumentsText: "{}" }], "assistant"),
        node(
          "n2",
          "n1",
          [
            {
              type: "toolResult",
              callId: "c1",
              name: "dump",
              isError: false,
              content: [{ type: "text", text: "entry 3000 (cut)" }],
              full: [
                { type: "attachment", mediaType: "text/plain", ref: artifactRef(ID), name: "dump output" },
              ],
            },
          ],
          "tool",
        ),
      ],
    }),
  );
  return store;
}

describe("artifacts in exports", () => {
  it("JSON embeds them; import into another store puts them back; the re-export is identical", async () => {
    const json = await exportSession(await seeded(), "s1", "json");
    const parsed = parseExport(json);
    expect(parsed.artifacts).toEqual([
      { id: ID, mediaType: "text/plain", size: TEXT.length, data: Buffer.from(TEXT).toString("base64") },
    ]);
    const target = await Effect.runPromise(makeMemoryStore());
    await importSession(target, json);
    const back = await Effect.runPromise(target.readArtifact(ID));
    expect(new TextDecoder().decode(back)).toBe(TEXT);
    expect(await exportSession(target, "s1", "json")).toBe(json);
  });

  it("import refuses an artifact whose bytes do not match its id, naming the fix", async () => {
    const parsed = JSON.parse(await exportSession(await seeded(), "s1", "json"));
    parsed.artifacts[0].data = Buffer.from(`${TEXT}!`).toString("base64");
    const target = await Effect.runPromise(makeMemoryStore());
    const err = await importSession(target, parsed).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportError);
    expect((err as Error).message).toContain(`artifact ${ID} in the export does not match its content`);
    expect((err as Error).message).toContain("export the session again");
  });

  it("HTML and Markdown show the artifact's text in place of the reference", async () => {
    const store = await seeded();
    for (const format of ["html", "md"] as const) {
      const out = await exportSession(store, "s1", format);
      expect(out).toContain(`artifact ${ID} · ${TEXT.length} bytes`);
      expect(out).toContain("entry 1\n");
      // HTML shows results up to 50,000 characters: all of this one (Markdown cuts sooner)
      if (format === "html") expect(out).toContain("entry 2999");
    }
  });
});
