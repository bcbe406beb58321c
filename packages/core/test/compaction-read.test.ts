// A compacted session's turn reads its request from the newest compaction on (`projectionPath`,
// issue 20), not the whole active path: proved on a real SQLite file by making the rows the
// summary replaces unreadable (their payload no longer JSON) — the next turn still runs and sends
// the summary, while reading the whole path (what a fork, an export or the transcript does) fails.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "@lash/providers/testing";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { COMPACTION_SYSTEM } from "../src/index.ts";
import { compactionRuntime, MODEL, type Server } from "./compaction-support.ts";
import { withRaw } from "./store/sqlite-helpers.ts";

const servers: Server[] = [];
const runtimes: { dispose(): Promise<void> }[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.dispose();
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("reading a compacted session", () => {
  it("a turn after a compaction does not read the replaced rows; the full path still does", async () => {
    const server = await startMockServer({
      responder: (r) => {
        const body = r.body as { messages: { role: string; content: unknown }[] };
        return body.messages.some((m) => m.role === "system" && m.content === COMPACTION_SYSTEM)
          ? { text: "SUMMARY: the user counted to three." }
          : { text: `answer ${r.index}` };
      },
    });
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), "lash-compact-read-"));
    dirs.push(dir);
    const db = join(dir, "lash.db");
    const run = compactionRuntime(server, db, { auto: false }, runtimes);
    const s = await run((rt) => rt.createSession({ model: MODEL }));
    for (const n of ["one", "two", "three"]) await run((rt) => rt.turn(s.id, { text: n }));
    const c = await run((rt) => rt.compact(s.id));
    expect(c?.payload.replaced).toBe(6);

    // the replaced messages' rows can no longer be decoded
    const broken = await Effect.runPromise(
      withRaw(db, (sql) =>
        Effect.gen(function* () {
          yield* sql`UPDATE nodes SET payload_json = 'not json' WHERE session_id = ${s.id} AND kind = 'message'`;
          return (yield* sql<{
            n: number;
          }>`SELECT count(*) AS n FROM nodes WHERE payload_json = 'not json'`)[0]!.n;
        }),
      ),
    );
    expect(broken).toBe(6);

    // a new runtime (a new process would do the same): the store's cache of nodes it has read
    // starts empty, so every row this turn needs comes from the file
    await runtimes.pop()!.dispose();
    const again = compactionRuntime(server, db, { auto: false }, runtimes);
    const before = server.requests.length;
    const r = await again((rt) => rt.turn(s.id, { text: "and four?" }));
    expect(r.messages.at(-1)?.parts).toEqual([{ type: "text", text: `answer ${before}` }]);
    const sent = JSON.stringify(server.requests[before]!.body);
    expect(sent).toContain("SUMMARY: the user counted to three.");
    expect(sent).toContain("and four?");
    // what needs the whole path reads the broken rows
    await expect(again((rt) => rt.readView(s.id))).rejects.toThrow(/the stored row is not valid/);
    // as the store's typed failure (a payload is decoded on first access, inside readView), not a defect
    const failure = await again((rt) => rt.readView(s.id)).catch((e: unknown) => e);
    const cause = (failure as Record<symbol, { _tag: string; error?: { _tag?: string } }>)[
      Symbol.for("effect/Runtime/FiberFailure/Cause")
    ];
    expect(cause?._tag).toBe("Fail");
    expect(cause?.error?._tag).toBe("StoreError");
  });
});
