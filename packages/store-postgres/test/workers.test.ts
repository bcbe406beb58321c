// Two PostgresStore instances on one database — two connection pools, as two worker
// processes would have — racing for one session: the revision compare-and-swap lets
// exactly one commit per revision through, a retried turn is committed once, the lease
// has one holder and a dead holder's lease is taken over, the turn-event log written by
// one worker is followed live by the other, and migrations refuse a newer schema.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest";
import type { CommitResult } from "@lash/core";
import { Chunk, Effect, Exit, Fiber, Stream } from "effect";
import { node, session, turn } from "../../core/test/store/helpers.ts";
import { makePostgresStore, POSTGRES_SCHEMA_VERSION, type PostgresStoreShape } from "../src/index.ts";
import { postgresUnavailable, startPostgres, type TestPostgres } from "../src/testing.ts";

if (postgresUnavailable) console.warn(postgresUnavailable);

let pg: TestPostgres | undefined;

beforeAll(async () => {
  if (!postgresUnavailable) pg = await startPostgres();
}, 120_000);

afterAll(() => pg?.stop());

/** Two workers on one fresh database. */
const twoWorkers = Effect.suspend(() => {
  const url = pg!.createDatabase();
  return Effect.all(
    [makePostgresStore({ url, maxConnections: 8 }), makePostgresStore({ url, maxConnections: 8 })],
    {
      concurrency: 2,
    },
  );
});

const failure = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`);
  if (exit.cause._tag !== "Fail") throw new Error(`expected a typed failure, got ${exit.cause._tag}`);
  return exit.cause.error;
};

describe.skipIf(postgresUnavailable !== undefined)("PostgresStore: two workers on one database", () => {
  it.scoped(
    "each revision is won by exactly one of two racing commits; the loser gets StoreConflict{revision}",
    () =>
      Effect.gen(function* () {
        const [a, b] = yield* twoWorkers;
        yield* a.createSession(session("s"));
        let leaf: string | null = null;
        for (let rev = 0; rev < 20; rev++) {
          const race: Effect.Effect<[Exit.Exit<CommitResult, unknown>, Exit.Exit<CommitResult, unknown>]> =
            Effect.all(
              [
                Effect.exit(a.commit(turn("s", `a${rev}`, rev, [node(`a${rev}`, "s", leaf)]))),
                Effect.exit(b.commit(turn("s", `b${rev}`, rev, [node(`b${rev}`, "s", leaf)]))),
              ],
              { concurrency: 2 },
            );
          const [ea, eb] = yield* race;
          const won = [ea, eb].filter(Exit.isSuccess);
          expect(won).toHaveLength(1);
          const lost = failure(Exit.isSuccess(ea) ? eb : ea);
          expect(lost).toMatchObject({
            _tag: "StoreConflict",
            reason: "revision",
            expected: rev,
            actual: rev + 1,
          });
          leaf = won[0]!.value.leafId;
          expect(won[0]!.value.headRevision).toBe(rev + 1);
        }
        // what either worker reads: 20 nodes in one chain, no lost or doubled node
        for (const w of [a, b]) {
          const s = yield* w.getSession("s");
          expect(s).toMatchObject({ headRevision: 20, turnCount: 20, leafId: leaf });
          const path = yield* w.activePath("s");
          expect(path).toHaveLength(20);
          expect(yield* w.sessionNodes("s")).toHaveLength(20);
          expect(path.map((n) => n.parentId)).toEqual([null, ...path.slice(0, -1).map((n) => n.id)]);
        }
      }),
  );

  it.scoped("many writers on both workers retrying on conflict: every turn lands once, in one chain", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoWorkers;
      yield* a.createSession(session("s"));
      const writer = (store: PostgresStoreShape, name: string, turns: number) =>
        Effect.forEach(
          Array.from({ length: turns }, (_, i) => `${name}-${i}`),
          (id) =>
            Effect.gen(function* () {
              const s = yield* store.getSession("s");
              return yield* store.commit(turn("s", id, s.headRevision, [node(id, "s", s.leafId)]));
            }).pipe(
              // a conflict means another writer moved first: re-read and try again
              Effect.retry({ while: (e) => e._tag === "StoreConflict" }),
            ),
          { discard: true },
        );
      yield* Effect.all(
        [writer(a, "a1", 10), writer(a, "a2", 10), writer(b, "b1", 10), writer(b, "b2", 10)],
        { concurrency: "unbounded" },
      );
      const s = yield* b.getSession("s");
      expect(s).toMatchObject({ headRevision: 40, turnCount: 40 });
      const path = yield* a.activePath("s");
      expect(path).toHaveLength(40);
      expect(new Set(path.map((n) => n.id)).size).toBe(40);
      expect(yield* a.sessionNodes("s")).toHaveLength(40);
    }),
  );

  it.scoped(
    "the same turn committed by both workers at once lands once; one of them is told it is a duplicate",
    () =>
      Effect.gen(function* () {
        const [a, b] = yield* twoWorkers;
        yield* a.createSession(session("s"));
        const t = turn("s", "t1", 0, [node("n1", "s", null), node("n2", "s", "n1")], {
          usage: [{ turnId: "t1", source: "turn", model: "mock/model", usage: { input: 5, output: 7 } }],
        });
        const [ra, rb] = yield* Effect.all([a.commit(t), b.commit(t)], { concurrency: 2 });
        expect([ra.duplicate, rb.duplicate].sort()).toEqual([false, true]);
        expect(ra.headRevision).toBe(1);
        expect(rb.headRevision).toBe(1);
        expect(yield* b.sessionNodes("s")).toHaveLength(2);
        expect(yield* b.usage("s")).toHaveLength(1);
        // the same turn id with other content is a conflict, from either worker
        const other = failure(yield* Effect.exit(b.commit({ ...t, hash: "other" })));
        expect(other).toMatchObject({ _tag: "StoreConflict", reason: "turnHash" });
      }),
  );

  it.scoped(
    "one lease holder across workers; a dead holder's expired lease is taken over, and it can no longer renew",
    () =>
      Effect.gen(function* () {
        const [a, b] = yield* twoWorkers;
        yield* a.createSession(session("s"));
        const req = (holder: string, now: number) => ({
          sessionId: "s",
          holder,
          pid: 1,
          host: "h",
          now,
          ttlMs: 1_000,
        });
        const both = yield* Effect.all([a.acquireLease(req("A", 10_000)), b.acquireLease(req("B", 10_000))], {
          concurrency: 2,
        });
        expect(both.filter((x) => x.acquired)).toHaveLength(1);
        const winner = both.find((x) => x.acquired)!.lease.holder;
        const loser = winner === "A" ? "B" : "A";
        const loserStore = winner === "A" ? b : a;
        const winnerStore = winner === "A" ? a : b;
        expect(both.find((x) => !x.acquired)!.lease.holder).toBe(winner);
        // before expiry: still refused
        expect(yield* loserStore.acquireLease(req(loser, 10_999))).toMatchObject({ acquired: false });
        // the winner stops renewing (it died): at expiry the other worker takes it
        const taken = yield* loserStore.acquireLease(req(loser, 11_000));
        expect(taken).toMatchObject({ acquired: true, lease: { holder: loser, expiresAt: 12_000 } });
        expect(yield* winnerStore.renewLease("s", winner, 11_001, 1_000)).toBeUndefined();
        expect((yield* winnerStore.getLease("s"))?.holder).toBe(loser);
      }),
  );

  // live: the follower's LISTEN handshake runs on the real clock
  it.live(
    "turn events appended by one worker are followed live by the other, from a cursor, in order, once",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const [a, b] = yield* twoWorkers;
          yield* a.createSession(session("s"));
          const ev = (type: string, i: number) => ({
            sessionId: "s",
            turnId: "t1",
            type,
            at: 5_000 + i,
            data: { i },
          });
          const first = yield* a.events.append([ev("turnStarted", 0), ev("llmRequest", 1)]);
          expect(first).toHaveLength(2);
          // a follower on worker B: the two stored events, then three appended by A while it waits.
          // pollMs is far beyond the test timeout: only the NOTIFY can wake it.
          const follower = yield* b.events
            .follow("s", { pollMs: 600_000 })
            .pipe(Stream.take(5), Stream.runCollect, Effect.fork);
          // appended while the follower may or may not be listening yet: its handshake + cursor read cover both
          yield* a.events.append([ev("messages", 2)]);
          yield* a.events.append([ev("toolStarted", 3), ev("runFinished", 4)]);
          const got = Chunk.toReadonlyArray(yield* Fiber.join(follower));
          expect(got.map((e) => e.type)).toEqual([
            "turnStarted",
            "llmRequest",
            "messages",
            "toolStarted",
            "runFinished",
          ]);
          expect(got.map((e) => e.data)).toEqual([0, 1, 2, 3, 4].map((i) => ({ i })));
          const seqs = got.map((e) => e.seq);
          expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
          // reconnect after the second event (Last-Event-ID): the rest, nothing lost or repeated
          const resumed = yield* b.events
            .follow("s", { after: seqs[1]!, pollMs: 600_000 })
            .pipe(Stream.take(3), Stream.runCollect);
          expect(Chunk.toReadonlyArray(resumed).map((e) => e.seq)).toEqual(seqs.slice(2));
          // another session's events are not followed
          yield* a.createSession(session("other"));
          yield* a.events.append([{ ...ev("turnStarted", 9), sessionId: "other" }]);
          expect(yield* b.events.read("s", seqs[4]!)).toEqual([]);
          expect(yield* b.events.trim("s", seqs[2]!)).toBe(3);
          expect((yield* b.events.read("s", 0)).map((e) => e.seq)).toEqual(seqs.slice(3));
        }),
      ),
  );

  it.scoped(
    "a fork writes one row whatever the history's length; the same artifact put by both workers at once is stored once",
    () =>
      Effect.gen(function* () {
        const [a, b] = yield* twoWorkers;
        yield* a.createSession(session("long"));
        let leaf: string | null = null;
        const nodes = [];
        for (let i = 0; i < 300; i++) {
          nodes.push(node(`n${i}`, "long", leaf));
          leaf = `n${i}`;
        }
        yield* a.commit(turn("long", "t1", 0, nodes));
        const db = new URL(pg!.url).pathname;
        expect(db).toBe("/postgres");
        const count = (store: PostgresStoreShape) =>
          Effect.map(store.listSessions({ includeChildren: true }), (l) => l.length);
        const before = yield* count(b);
        const fork = yield* b.fork(session("fork", { origin: { sessionId: "long", nodeId: "n299" } }));
        expect(fork.leafId).toBe("n299");
        expect(yield* count(b)).toBe(before + 1);
        expect(yield* b.sessionNodes("fork")).toHaveLength(0);
        expect(yield* a.activePath("fork")).toHaveLength(300);
        const bytes = new TextEncoder().encode("the same bytes from two workers");
        const [pa, pb] = yield* Effect.all(
          [
            a.putArtifact({ bytes, mediaType: "text/plain", createdAt: 1 }),
            b.putArtifact({ bytes, mediaType: "text/plain", createdAt: 2 }),
          ],
          { concurrency: 2 },
        );
        expect(pa).toEqual(pb);
        expect(new TextDecoder().decode(yield* b.readArtifact(pa.id))).toBe(
          "the same bytes from two workers",
        );
      }),
  );

  it.scoped(
    "two workers migrating a fresh database at once both open it; a newer schema is refused naming the fix",
    () =>
      Effect.gen(function* () {
        const [a] = yield* twoWorkers;
        yield* a.createSession(session("kept"));
        const url = pg!.createDatabase();
        yield* Effect.all([makePostgresStore({ url }), makePostgresStore({ url })], { concurrency: 2 });
        const db = new URL(url).pathname.slice(1);
        expect(pg!.psql("SELECT value FROM lash_meta WHERE key = 'schema_version'", db).trim()).toBe(
          String(POSTGRES_SCHEMA_VERSION),
        );
        pg!.psql(
          `UPDATE lash_meta SET value = ${POSTGRES_SCHEMA_VERSION + 1} WHERE key = 'schema_version'`,
          db,
        );
        const refused = failure(yield* Effect.exit(makePostgresStore({ url })));
        expect(refused._tag).toBe("SchemaTooNew");
        expect(refused.message).toContain(`schema version ${POSTGRES_SCHEMA_VERSION + 1}`);
        expect(refused.message).toContain("Upgrade lash");
        expect(pg!.psql("SELECT value FROM lash_meta WHERE key = 'schema_version'", db).trim()).toBe(
          String(POSTGRES_SCHEMA_VERSION + 1),
        );
        // a server that is not there: a clear error naming what to check, no password shown
        const gone = failure(
          yield* Effect.exit(
            makePostgresStore({ url: "postgres://u:secret@127.0.0.1:1/db", connectTimeoutMs: 2_000 }),
          ),
        );
        expect(gone._tag).toBe("StoreError");
        expect(gone.message).toContain("cannot connect to the Postgres store");
        expect(gone.message).not.toContain("secret");
      }),
  );
});
