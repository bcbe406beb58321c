// The store conformance suite: every SessionStore implementation runs exactly
// these tests (memory.test.ts, sqlite.test.ts).
import { describe, expect, it } from "@effect/vitest";
import { sha256BytesHex } from "@lash/sansio";
import { Effect, Exit, type Scope } from "effect";
import { artifactRef } from "../../src/store/artifacts.ts";
import type { JournalEntry, SessionStoreShape, UsageRow } from "../../src/store.ts";
import { chain, ids, node, session, turn } from "./helpers.ts";

/** Build a fresh, empty store (each test gets its own). */
export type MakeStore = () => Effect.Effect<SessionStoreShape, unknown, Scope.Scope>;

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`);
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined;
  if (failure === undefined) throw new Error(`expected a typed failure, got cause ${exit.cause._tag}`);
  return failure;
};

export function storeConformance(name: string, makeStore: MakeStore): void {
  describe(`${name}: store conformance`, () => {
    describe("sessions", () => {
      it.scoped("create, get, and a missing session is SessionNotFound", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          const rec = session("s1", {
            title: "hello",
            cwd: "/w",
            systemPrompt: "be brief",
            mode: "rlm",
            state: { plugin: { n: 1 } },
          });
          expect(yield* store.createSession(rec)).toEqual(rec);
          expect(yield* store.getSession("s1")).toEqual(rec);
          const missing = failureOf(yield* Effect.exit(store.getSession("nope")));
          expect(missing._tag).toBe("SessionNotFound");
          expect(missing.message).toContain("nope");
          const dup = failureOf(yield* Effect.exit(store.createSession(rec)));
          expect(dup._tag).toBe("StoreError");
        }),
      );

      it.scoped("optional fields that were absent stay absent", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          const got = yield* store.getSession("s1");
          for (const k of ["title", "cwd", "systemPrompt", "origin", "parentLink"] as const) {
            expect(k in got && got[k] !== undefined).toBe(false);
          }
        }),
      );

      it.scoped("list: newest first, cwd filter, children excluded unless asked, limit", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("a", { cwd: "/x", updatedAt: 10 }));
          yield* store.createSession(session("b", { cwd: "/y", updatedAt: 30 }));
          yield* store.createSession(session("c", { cwd: "/x", updatedAt: 20 }));
          yield* store.createSession(
            session("kid", {
              cwd: "/x",
              updatedAt: 40,
              parentLink: { sessionId: "a", callId: "call1", depth: 1 },
            }),
          );
          expect(ids(yield* store.listSessions())).toEqual(["b", "c", "a"]);
          expect(ids(yield* store.listSessions({ cwd: "/x" }))).toEqual(["c", "a"]);
          expect(ids(yield* store.listSessions({ includeChildren: true }))).toEqual(["kid", "b", "c", "a"]);
          expect(ids(yield* store.listSessions({ limit: 2 }))).toEqual(["b", "c"]);
          expect(ids(yield* store.listSessions({ cwd: "/none" }))).toEqual([]);
          // A commit moves a session to the top.
          yield* store.commit(turn("a", "t1", 0, [node("a1", "a", null)], { updatedAt: 50 }));
          expect(ids(yield* store.listSessions())).toEqual(["a", "b", "c"]);
        }),
      );

      it.scoped("list ties on updatedAt: the later-created first", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          for (const id of ["p", "q", "r"]) yield* store.createSession(session(id, { updatedAt: 5 }));
          expect(ids(yield* store.listSessions())).toEqual(["r", "q", "p"]);
        }),
      );

      it.scoped("updateSession renames without bumping the revision", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1", { title: "old" }));
          yield* store.updateSession("s1", { title: "new", updatedAt: 99 });
          const got = yield* store.getSession("s1");
          expect(got.title).toBe("new");
          expect(got.updatedAt).toBe(99);
          expect(got.headRevision).toBe(0);
          yield* store.updateSession("s1", { updatedAt: 100 });
          expect((yield* store.getSession("s1")).title).toBe("new");
          const missing = failureOf(yield* Effect.exit(store.updateSession("nope", { updatedAt: 1 })));
          expect(missing._tag).toBe("SessionNotFound");
        }),
      );

      it.scoped("children lists sessions spawned by this one", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("parent"));
          yield* store.createSession(
            session("k2", { createdAt: 2, parentLink: { sessionId: "parent", callId: "c2", depth: 1 } }),
          );
          yield* store.createSession(
            session("k1", { createdAt: 1, parentLink: { sessionId: "parent", callId: "c1", depth: 1 } }),
          );
          yield* store.createSession(
            session("other", { parentLink: { sessionId: "x", callId: "c", depth: 1 } }),
          );
          const kids = yield* store.children("parent");
          expect(ids(kids)).toEqual(["k1", "k2"]);
          expect(kids[0]!.parentLink).toEqual({ sessionId: "parent", callId: "c1", depth: 1 });
          expect(yield* store.children("nobody")).toEqual([]);
        }),
      );
    });

    describe("commit", () => {
      it.scoped("appends nodes, moves the leaf, bumps revision and turn count, applies metadata", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          const r1 = yield* store.commit(turn("s1", "t1", 0, chain("n", "s1", null, 3, "t1")));
          expect(r1).toEqual({ headRevision: 1, leafId: "n2", duplicate: false });
          const r2 = yield* store.commit(
            turn("s1", "t2", 1, [node("m0", "s1", "n2", { kind: "protocol", payload: { p: true } })], {
              updatedAt: 4_000,
              title: "titled",
              frameId: "f1",
              model: "other/model",
              state: { budget: { used: 3 } },
            }),
          );
          expect(r2).toEqual({ headRevision: 2, leafId: "m0", duplicate: false });
          const s = yield* store.getSession("s1");
          expect(s).toMatchObject({
            leafId: "m0",
            headRevision: 2,
            turnCount: 2,
            updatedAt: 4_000,
            title: "titled",
            frameId: "f1",
            model: "other/model",
            state: { budget: { used: 3 } },
          });
          const path = yield* store.activePath("s1");
          expect(ids(path)).toEqual(["n0", "n1", "n2", "m0"]);
          expect(path[3]).toMatchObject({
            kind: "protocol",
            payload: { p: true },
            parentId: "n2",
            frameId: "f0",
          });
          expect(path[0]).toMatchObject({ turnId: "t1", sessionId: "s1", parentId: null, createdAt: 2_000 });
          // seq is assigned by the store and increases in insertion order.
          const seqs = path.map((n) => n.seq);
          expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
          expect(new Set(seqs).size).toBe(4);
          expect(yield* store.getNode("m0")).toMatchObject({ id: "m0", sessionId: "s1" });
          expect(yield* store.getNode("zzz")).toBeUndefined();
        }),
      );

      it.scoped("a commit without state leaves the state as it was", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1", { state: { keep: [1, 2] } }));
          yield* store.commit(turn("s1", "t1", 0, [node("a", "s1", null)]));
          expect((yield* store.getSession("s1")).state).toEqual({ keep: [1, 2] });
        }),
      );

      it.scoped("the same turn committed twice is a no-op that returns the first result", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          const c = turn("s1", "t1", 0, [node("a", "s1", null)], {
            usage: [{ turnId: "t1", source: "turn", model: "m", usage: { input: 1 } }],
          });
          const first = yield* store.commit(c);
          // The retry carries fresh ids (the hash ignores them), and a stale expected revision.
          const retry = yield* store.commit({
            ...c,
            nodes: [node("a-retry", "s1", null)],
            leafId: "a-retry",
          });
          expect(retry).toEqual({ ...first, duplicate: true });
          const s = yield* store.getSession("s1");
          expect(s.headRevision).toBe(1);
          expect(s.turnCount).toBe(1);
          expect(yield* store.getNode("a-retry")).toBeUndefined();
          expect(yield* store.usage("s1")).toHaveLength(1);
        }),
      );

      it.scoped("the same turn with a different hash is a turnHash conflict and writes nothing", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          yield* store.commit(turn("s1", "t1", 0, [node("a", "s1", null)]));
          const err = failureOf(
            yield* Effect.exit(store.commit(turn("s1", "t1", 1, [node("b", "s1", "a")], { hash: "other" }))),
          );
          expect(err._tag).toBe("StoreConflict");
          if (err._tag !== "StoreConflict") return;
          expect(err.reason).toBe("turnHash");
          expect(err.sessionId).toBe("s1");
          expect(yield* store.getNode("b")).toBeUndefined();
          expect((yield* store.getSession("s1")).headRevision).toBe(1);
        }),
      );

      it.scoped(
        "a stale expected revision is a revision conflict; nothing is written; retry on top works",
        () =>
          Effect.gen(function* () {
            const store = yield* makeStore();
            yield* store.createSession(session("s1"));
            yield* store.commit(turn("s1", "t1", 0, [node("a", "s1", null)]));
            yield* store.journalPut(journal("s1", "t2", "k1"));
            yield* store.beginTurn({
              sessionId: "s1",
              turnId: "t2",
              input: {},
              expectedRevision: 0,
              startedAt: 1,
            });
            const err = failureOf(
              yield* Effect.exit(
                store.commit(
                  turn("s1", "t2", 0, [node("b", "s1", "a")], {
                    usage: [{ turnId: "t2", source: "turn", model: "m", usage: { input: 5 } }],
                  }),
                ),
              ),
            );
            expect(err).toMatchObject({ _tag: "StoreConflict", reason: "revision", expected: 0, actual: 1 });
            expect(yield* store.getNode("b")).toBeUndefined();
            expect(yield* store.usage("s1")).toEqual([]);
            // The failed commit rolled back entirely: journal and pending turn are still there.
            expect(yield* store.journalGet("k1")).toBeDefined();
            expect((yield* store.pendingTurn("s1"))?.turnId).toBe("t2");
            const s = yield* store.getSession("s1");
            expect(s.headRevision).toBe(1);
            expect(s.leafId).toBe("a");
            // Re-read, commit on top: both turns' nodes present.
            yield* store.commit(turn("s1", "t2", s.headRevision, [node("b", "s1", "a")]));
            expect(ids(yield* store.activePath("s1"))).toEqual(["a", "b"]);
          }),
      );

      it.scoped("commit errors: missing session, duplicate node id, foreign node, unknown leaf", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          const missing = failureOf(
            yield* Effect.exit(store.commit(turn("nope", "t", 0, [node("x", "nope", null)]))),
          );
          expect(missing._tag).toBe("SessionNotFound");
          yield* store.createSession(session("s1"));
          yield* store.createSession(session("s2"));
          yield* store.commit(turn("s1", "t1", 0, [node("a", "s1", null)]));
          const dupe = failureOf(
            yield* Effect.exit(store.commit(turn("s2", "t1", 0, [node("a", "s2", null)]))),
          );
          expect(dupe._tag).toBe("StoreError");
          const foreign = failureOf(
            yield* Effect.exit(store.commit(turn("s2", "t1", 0, [node("z", "s1", null)]))),
          );
          expect(foreign._tag).toBe("StoreError");
          const leaf = failureOf(
            yield* Effect.exit(
              store.commit(turn("s2", "t1", 0, [node("y", "s2", null)], { leafId: "ghost" })),
            ),
          );
          expect(leaf._tag).toBe("StoreError");
          // None of the failed commits left anything behind.
          expect(yield* store.getNode("y")).toBeUndefined();
          expect(yield* store.getNode("z")).toBeUndefined();
          const s2 = yield* store.getSession("s2");
          expect(s2.headRevision).toBe(0);
          expect(yield* store.sessionNodes("s2")).toEqual([]);
          // The turn id is still free for s2.
          expect((yield* store.commit(turn("s2", "t1", 0, [node("y", "s2", null)]))).duplicate).toBe(false);
        }),
      );

      it.scoped("a commit with no nodes still bumps revision and turn count", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          const r = yield* store.commit(turn("s1", "t1", 0, []));
          expect(r).toEqual({ headRevision: 1, leafId: null, duplicate: false });
          expect((yield* store.getSession("s1")).turnCount).toBe(1);
          expect(yield* store.activePath("s1")).toEqual([]);
        }),
      );

      it.scoped("usage rows roundtrip in order; absent buckets and cost stay absent, zero stays zero", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          const rows: UsageRow[] = [
            {
              turnId: "t1",
              source: "turn",
              model: "a/m",
              usage: { input: 100, output: 20, reasoning: 5, cacheRead: 60, cacheWrite: 0 },
              costUsd: 0.0125,
            },
            { turnId: "t1", source: "llm.query", model: "b/m", usage: { output: 7 } },
            { turnId: "t1", source: "agent:kid", model: "b/m", usage: {}, costUsd: 0 },
          ];
          yield* store.commit(turn("s1", "t1", 0, [node("a", "s1", null)], { usage: rows }));
          yield* store.commit(
            turn("s1", "t2", 1, [node("b", "s1", "a")], {
              usage: [{ turnId: "t2", source: "turn", model: "a/m", usage: { input: 1 } }],
            }),
          );
          const got = yield* store.usage("s1");
          expect(got).toHaveLength(4);
          expect(got.slice(0, 3)).toEqual(rows);
          expect(got[1]!.usage).toStrictEqual({ output: 7 });
          expect("costUsd" in got[1]! && got[1]!.costUsd !== undefined).toBe(false);
          expect(got[2]!.usage).toStrictEqual({});
          expect(got[2]!.costUsd).toBe(0);
          expect(got[3]!.turnId).toBe("t2");
          const missing = failureOf(yield* Effect.exit(store.usage("nope")));
          expect(missing._tag).toBe("SessionNotFound");
        }),
      );
    });

    describe("graph", () => {
      it.scoped("branching with setLeaf: the path follows the leaf; old branch nodes stay", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          yield* store.commit(turn("s1", "t1", 0, chain("a", "s1", null, 3)));
          // Branch back to a0 and continue from there.
          const moved = yield* store.setLeaf("s1", "a0", 1, 5_000);
          expect(moved).toEqual({ headRevision: 2, leafId: "a0", duplicate: false });
          expect(ids(yield* store.activePath("s1"))).toEqual(["a0"]);
          yield* store.commit(turn("s1", "t2", 2, chain("b", "s1", "a0", 2)));
          expect(ids(yield* store.activePath("s1"))).toEqual(["a0", "b0", "b1"]);
          // The other branch is still readable, by explicit leaf.
          expect(ids(yield* store.activePath("s1", "a2"))).toEqual(["a0", "a1", "a2"]);
          expect(yield* store.activePath("s1", null)).toEqual([]);
          expect(ids(yield* store.sessionNodes("s1"))).toEqual(["a0", "a1", "a2", "b0", "b1"]);
          const s = yield* store.getSession("s1");
          expect(s.headRevision).toBe(3);
          expect(s.turnCount).toBe(2);
          // setLeaf is CAS too, and refuses unknown nodes.
          const stale = failureOf(yield* Effect.exit(store.setLeaf("s1", "a2", 2, 6_000)));
          expect(stale).toMatchObject({ _tag: "StoreConflict", reason: "revision", expected: 2, actual: 3 });
          const ghost = failureOf(yield* Effect.exit(store.setLeaf("s1", "ghost", 3, 6_000)));
          expect(ghost._tag).toBe("StoreError");
          expect((yield* store.getSession("s1")).leafId).toBe("b1");
          const none = yield* store.setLeaf("s1", null, 3, 7_000);
          expect(none.leafId).toBeNull();
          expect((yield* store.getSession("s1")).updatedAt).toBe(7_000);
        }),
      );

      it.scoped(
        "projectionPath: from the newest compaction of the frame on the active path to the leaf",
        () =>
          Effect.gen(function* () {
            const store = yield* makeStore();
            const compaction = (id: string, parent: string, frameId = "f0") =>
              node(id, "s1", parent, {
                kind: "protocol",
                frameId,
                payload: { type: "compaction", summary: `summary ${id}` },
              });
            yield* store.createSession(session("s1"));
            expect(yield* store.projectionPath("s1", "f0")).toEqual([]);
            // no compaction yet: the whole path
            yield* store.commit(turn("s1", "t1", 0, chain("a", "s1", null, 3)));
            expect(ids(yield* store.projectionPath("s1", "f0"))).toEqual(["a0", "a1", "a2"]);
            // a compaction, then more: from the compaction on
            yield* store.commit(turn("s1", "t2", 1, [compaction("c1", "a2"), ...chain("b", "s1", "c1", 2)]));
            expect(ids(yield* store.projectionPath("s1", "f0"))).toEqual(["c1", "b0", "b1"]);
            // a second compaction wins; one of another frame (a child frame's) does not count
            yield* store.commit(
              turn("s1", "t3", 2, [
                compaction("c2", "b1"),
                node("d0", "s1", "c2"),
                compaction("x", "d0", "f9"),
              ]),
            );
            const p = yield* store.projectionPath("s1", "f0");
            expect(ids(p)).toEqual(["c2", "d0", "x"]);
            expect(p[0]!.payload).toEqual({ type: "compaction", summary: "summary c2" });
            expect(ids(yield* store.projectionPath("s1", "f9"))).toEqual(["x"]);
            // the full path is still there for forks, exports and views
            expect(ids(yield* store.activePath("s1"))).toEqual([
              "a0",
              "a1",
              "a2",
              "c1",
              "b0",
              "b1",
              "c2",
              "d0",
              "x",
            ]);
            // a branch from before the compaction: no compaction on its path
            yield* store.setLeaf("s1", "a1", 3, 4_000);
            yield* store.commit(turn("s1", "t4", 4, [node("e0", "s1", "a1")]));
            expect(ids(yield* store.projectionPath("s1", "f0"))).toEqual(["a0", "a1", "e0"]);
            // a branch after the first compaction, and a fork of it: the compaction sits on an earlier line
            yield* store.setLeaf("s1", "b0", 5, 5_000);
            yield* store.commit(turn("s1", "t5", 6, [node("g0", "s1", "b0")]));
            expect(ids(yield* store.projectionPath("s1", "f0"))).toEqual(["c1", "b0", "g0"]);
            yield* store.fork(session("fk", { origin: { sessionId: "s1", nodeId: "g0" } }));
            yield* store.commit(turn("fk", "t1", 0, [node("h0", "fk", "g0")]));
            expect(ids(yield* store.projectionPath("fk", "f0"))).toEqual(["c1", "b0", "g0", "h0"]);
            expect(failureOf(yield* Effect.exit(store.projectionPath("nope", "f0")))._tag).toBe(
              "SessionNotFound",
            );
          }),
      );

      it.scoped("activePath of an unknown session is SessionNotFound; of an unknown leaf a StoreError", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          expect(failureOf(yield* Effect.exit(store.activePath("nope")))._tag).toBe("SessionNotFound");
          expect(failureOf(yield* Effect.exit(store.sessionNodes("nope")))._tag).toBe("SessionNotFound");
          yield* store.createSession(session("s1"));
          expect(failureOf(yield* Effect.exit(store.activePath("s1", "ghost")))._tag).toBe("StoreError");
        }),
      );

      it.scoped("fork: path crosses the boundary; commits on either side stay separate", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("orig"));
          yield* store.commit(turn("orig", "t1", 0, chain("o", "orig", null, 4)));
          const fork = yield* store.fork(
            session("fork", { origin: { sessionId: "orig", nodeId: "o1" }, createdAt: 9, updatedAt: 9 }),
          );
          expect(fork.leafId).toBe("o1");
          expect(fork.origin).toEqual({ sessionId: "orig", nodeId: "o1" });
          expect(yield* store.getSession("fork")).toEqual(fork);
          expect(ids(yield* store.activePath("fork"))).toEqual(["o0", "o1"]);
          expect(yield* store.sessionNodes("fork")).toEqual([]);
          yield* store.commit(turn("fork", "t1", fork.headRevision, chain("f", "fork", "o1", 2)));
          const fpath = yield* store.activePath("fork");
          expect(ids(fpath)).toEqual(["o0", "o1", "f0", "f1"]);
          expect(fpath.map((n) => n.sessionId)).toEqual(["orig", "orig", "fork", "fork"]);
          // The origin is untouched, and can move on independently.
          const o = yield* store.getSession("orig");
          expect(o.leafId).toBe("o3");
          expect(o.headRevision).toBe(1);
          expect(ids(yield* store.sessionNodes("orig"))).toEqual(["o0", "o1", "o2", "o3"]);
          yield* store.commit(turn("orig", "t2", 1, [node("o4", "orig", "o3")]));
          expect(ids(yield* store.activePath("fork"))).toEqual(["o0", "o1", "f0", "f1"]);
          // Same turn id on the fork and the origin are different stamps.
          expect((yield* store.commit(turn("fork", "t2", 1, [node("f2", "fork", "f1")]))).duplicate).toBe(
            false,
          );
          // A fork of a fork crosses two boundaries.
          yield* store.fork(session("fork2", { origin: { sessionId: "fork", nodeId: "f0" } }));
          yield* store.commit(turn("fork2", "t1", 0, [node("g0", "fork2", "f0")]));
          expect(ids(yield* store.activePath("fork2"))).toEqual(["o0", "o1", "f0", "g0"]);
        }),
      );

      it.scoped("fork errors: no origin, unknown origin session or node; an empty fork", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("orig"));
          expect(failureOf(yield* Effect.exit(store.fork(session("f"))))._tag).toBe("StoreError");
          const noSession = failureOf(
            yield* Effect.exit(store.fork(session("f", { origin: { sessionId: "ghost", nodeId: null } }))),
          );
          expect(noSession._tag).toBe("SessionNotFound");
          const noNode = failureOf(
            yield* Effect.exit(store.fork(session("f", { origin: { sessionId: "orig", nodeId: "ghost" } }))),
          );
          expect(noNode._tag).toBe("StoreError");
          expect(failureOf(yield* Effect.exit(store.getSession("f")))._tag).toBe("SessionNotFound");
          const empty = yield* store.fork(session("f", { origin: { sessionId: "orig", nodeId: null } }));
          expect(empty.leafId).toBeNull();
          expect(yield* store.activePath("f")).toEqual([]);
        }),
      );
    });

    describe("delete", () => {
      it.scoped("delete removes the session, its nodes, usage, journal, stamps and pending turn", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          yield* store.createSession(session("keep"));
          yield* store.commit(
            turn("s1", "t1", 0, chain("a", "s1", null, 2), {
              usage: [{ turnId: "t1", source: "turn", model: "m", usage: { input: 1 } }],
            }),
          );
          yield* store.journalPut(journal("s1", "t2", "j1"));
          yield* store.beginTurn({
            sessionId: "s1",
            turnId: "t2",
            input: "hi",
            expectedRevision: 1,
            startedAt: 1,
          });
          yield* store.deleteSession("s1");
          expect(failureOf(yield* Effect.exit(store.getSession("s1")))._tag).toBe("SessionNotFound");
          expect(ids(yield* store.listSessions())).toEqual(["keep"]);
          expect(yield* store.getNode("a0")).toBeUndefined();
          expect(yield* store.journalGet("j1")).toBeUndefined();
          expect(yield* store.pendingTurn("s1")).toBeUndefined();
          expect(failureOf(yield* Effect.exit(store.usage("s1")))._tag).toBe("SessionNotFound");
          expect(failureOf(yield* Effect.exit(store.deleteSession("s1")))._tag).toBe("SessionNotFound");
          // The id and node ids are free again.
          yield* store.createSession(session("s1"));
          const again = yield* store.commit(turn("s1", "t1", 0, chain("a", "s1", null, 2)));
          expect(again.duplicate).toBe(false);
          expect(yield* store.usage("s1")).toEqual([]);
        }),
      );

      it.scoped("deleting a fork's origin keeps the nodes the fork runs through", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("orig"));
          yield* store.commit(turn("orig", "t1", 0, chain("o", "orig", null, 3)));
          yield* store.fork(session("fork", { origin: { sessionId: "orig", nodeId: "o2" } }));
          yield* store.commit(turn("fork", "t1", 0, [node("f0", "fork", "o2")]));
          yield* store.deleteSession("orig");
          expect(failureOf(yield* Effect.exit(store.getSession("orig")))._tag).toBe("SessionNotFound");
          expect(ids(yield* store.listSessions())).toEqual(["fork"]);
          expect(ids(yield* store.activePath("fork"))).toEqual(["o0", "o1", "o2", "f0"]);
          // A deleted origin cannot be forked or committed to.
          const refork = yield* Effect.exit(
            store.fork(session("f2", { origin: { sessionId: "orig", nodeId: "o1" } })),
          );
          expect(failureOf(refork)._tag).toBe("SessionNotFound");
          expect(failureOf(yield* Effect.exit(store.commit(turn("orig", "t9", 1, []))))._tag).toBe(
            "SessionNotFound",
          );
          // Once the last fork goes, the kept nodes go too.
          yield* store.deleteSession("fork");
          expect(yield* store.getNode("f0")).toBeUndefined();
          expect(yield* store.getNode("o0")).toBeUndefined();
          expect(yield* store.listSessions({ includeChildren: true })).toEqual([]);
        }),
      );

      it.scoped("deleting a fork keeps its origin intact", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("orig"));
          yield* store.commit(turn("orig", "t1", 0, chain("o", "orig", null, 2)));
          yield* store.fork(session("fork", { origin: { sessionId: "orig", nodeId: "o1" } }));
          yield* store.commit(turn("fork", "t1", 0, [node("f0", "fork", "o1")]));
          yield* store.deleteSession("fork");
          expect(yield* store.getNode("f0")).toBeUndefined();
          expect(ids(yield* store.activePath("orig"))).toEqual(["o0", "o1"]);
          expect(ids(yield* store.sessionNodes("orig"))).toEqual(["o0", "o1"]);
        }),
      );

      it.scoped("deleting a parent with a child keeps the child and its link", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("parent"));
          yield* store.commit(turn("parent", "t1", 0, [node("p0", "parent", null)]));
          yield* store.createSession(
            session("kid", { parentLink: { sessionId: "parent", callId: "c", depth: 1 } }),
          );
          yield* store.commit(turn("kid", "t1", 0, [node("k0", "kid", null)]));
          yield* store.deleteSession("parent");
          expect(failureOf(yield* Effect.exit(store.getSession("parent")))._tag).toBe("SessionNotFound");
          expect(ids(yield* store.children("parent"))).toEqual(["kid"]);
          expect(ids(yield* store.activePath("kid"))).toEqual(["k0"]);
          expect(yield* store.getNode("p0")).toBeDefined();
          yield* store.deleteSession("kid");
          expect(yield* store.getNode("k0")).toBeUndefined();
          expect(yield* store.getNode("p0")).toBeUndefined();
        }),
      );
    });

    describe("journal and pending turns", () => {
      it.scoped("journal put/get/forTurn, upsert in place, cleared by the turn's commit only", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          const started = journal("s1", "t1", "s1:t1:0:tool:e1", "started");
          yield* store.journalPut(started);
          yield* store.journalPut(
            journal("s1", "t1", "s1:t1:0:llm:e0", "completed", { text: "hi", n: [1, 2] }),
          );
          yield* store.journalPut(journal("s1", "t2", "s1:t2:0:llm:e0", "completed", null));
          expect(yield* store.journalGet(started.key)).toEqual(started);
          expect(yield* store.journalGet("missing")).toBeUndefined();
          const done = { ...started, status: "completed" as const, outcome: { ok: true }, updatedAt: 9 };
          yield* store.journalPut(done);
          expect(yield* store.journalGet(started.key)).toEqual(done);
          const t1 = yield* store.journalForTurn("s1", "t1");
          expect(t1.map((j) => j.key)).toEqual(["s1:t1:0:tool:e1", "s1:t1:0:llm:e0"]);
          expect(t1[1]!.outcome).toEqual({ text: "hi", n: [1, 2] });
          const t2 = yield* store.journalForTurn("s1", "t2");
          expect(t2).toHaveLength(1);
          expect(t2[0]!.outcome).toBeNull();
          expect(yield* store.journalForTurn("s1", "nope")).toEqual([]);
          yield* store.commit(turn("s1", "t1", 0, [node("a", "s1", null)]));
          expect(yield* store.journalForTurn("s1", "t1")).toEqual([]);
          expect(yield* store.journalGet(started.key)).toBeUndefined();
          expect(yield* store.journalForTurn("s1", "t2")).toHaveLength(1);
        }),
      );

      it.scoped("a started entry without outcome has no outcome key", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          yield* store.journalPut(journal("s1", "t1", "k", "started"));
          const got = yield* store.journalGet("k");
          expect(got?.status).toBe("started");
          expect(got?.outcome).toBeUndefined();
        }),
      );

      it.scoped("pending turn: begin, get, replace, abandon only the matching turn, cleared by commit", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          expect(yield* store.pendingTurn("s1")).toBeUndefined();
          const p = {
            sessionId: "s1",
            turnId: "t1",
            input: { messages: ["hi"], opts: { n: 1 } },
            expectedRevision: 0,
            startedAt: 5,
          };
          yield* store.beginTurn(p);
          expect(yield* store.pendingTurn("s1")).toEqual({ ...p, resumeAttempts: 0 });
          yield* store.abandonTurn("s1", "other");
          expect(yield* store.pendingTurn("s1")).toEqual({ ...p, resumeAttempts: 0 });
          yield* store.abandonTurn("s1", "t1");
          expect(yield* store.pendingTurn("s1")).toBeUndefined();
          yield* store.beginTurn(p);
          const p2 = { ...p, turnId: "t2", startedAt: 6 };
          yield* store.beginTurn(p2);
          expect(yield* store.pendingTurn("s1")).toEqual({ ...p2, resumeAttempts: 0 });
          // A commit of another turn leaves it; the commit of its turn clears it.
          yield* store.commit(turn("s1", "t1", 0, [node("a", "s1", null)]));
          expect(yield* store.pendingTurn("s1")).toEqual({ ...p2, resumeAttempts: 0 });
          yield* store.commit(turn("s1", "t2", 1, [node("b", "s1", "a")]));
          expect(yield* store.pendingTurn("s1")).toBeUndefined();
          // beginTurn for an unknown session fails.
          const bad = yield* Effect.exit(store.beginTurn({ ...p, sessionId: "ghost" }));
          expect(failureOf(bad)._tag).toBe("StoreError");
        }),
      );

      it.scoped("abandonTurn drops the turn's journal rows with its pending row, nothing else", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          yield* store.beginTurn({
            sessionId: "s1",
            turnId: "t1",
            input: {},
            expectedRevision: 0,
            startedAt: 1,
          });
          yield* store.journalPut(journal("s1", "t1", "s1:t1:0:llm:1"));
          yield* store.journalPut(journal("s1", "t0", "s1:t0:0:llm:1"));
          yield* store.abandonTurn("s1", "t1");
          expect(yield* store.pendingTurn("s1")).toBeUndefined();
          expect(yield* store.journalForTurn("s1", "t1")).toEqual([]);
          expect(yield* store.journalForTurn("s1", "t0")).toHaveLength(1);
        }),
      );

      it.scoped("resume attempts are counted on the pending turn, durably, and reset by a new turn", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          expect(yield* store.countResumeAttempt("s1", "t1")).toBe(0);
          const p = { sessionId: "s1", turnId: "t1", input: {}, expectedRevision: 0, startedAt: 1 };
          yield* store.beginTurn(p);
          expect((yield* store.pendingTurn("s1"))?.resumeAttempts).toBe(0);
          expect(yield* store.countResumeAttempt("s1", "t1")).toBe(1);
          expect(yield* store.countResumeAttempt("s1", "other")).toBe(0);
          expect(yield* store.countResumeAttempt("s1", "t1")).toBe(2);
          expect((yield* store.pendingTurn("s1"))?.resumeAttempts).toBe(2);
          yield* store.beginTurn({ ...p, turnId: "t2" });
          expect((yield* store.pendingTurn("s1"))?.resumeAttempts).toBe(0);
        }),
      );
    });

    describe("session lease", () => {
      const req = (holder: string, now: number, extra: { replacing?: string } = {}) => ({
        sessionId: "s1",
        holder,
        pid: holder === "A" ? 100 : 200,
        host: "h",
        now,
        ttlMs: 1000,
        ...extra,
      });

      it.scoped("one holder at a time: a second writer is told who holds it; release frees it", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          expect(yield* store.getLease("s1")).toBeUndefined();
          const a = yield* store.acquireLease(req("A", 10));
          expect(a).toEqual({
            acquired: true,
            lease: {
              sessionId: "s1",
              holder: "A",
              pid: 100,
              host: "h",
              acquiredAt: 10,
              heartbeatAt: 10,
              expiresAt: 1010,
            },
          });
          const b = yield* store.acquireLease(req("B", 20));
          expect(b.acquired).toBe(false);
          expect(b.lease).toMatchObject({ holder: "A", pid: 100, host: "h", acquiredAt: 10 });
          // re-acquiring our own lease renews it and keeps acquiredAt
          const again = yield* store.acquireLease(req("A", 30));
          expect(again).toMatchObject({
            acquired: true,
            lease: { acquiredAt: 10, heartbeatAt: 30, expiresAt: 1030 },
          });
          // another holder's release is a no-op
          yield* store.releaseLease("s1", "B");
          expect((yield* store.getLease("s1"))?.holder).toBe("A");
          yield* store.releaseLease("s1", "A");
          expect(yield* store.getLease("s1")).toBeUndefined();
          expect((yield* store.acquireLease(req("B", 40))).acquired).toBe(true);
        }),
      );

      it.scoped("heartbeat extends it; an expired lease is taken over; the old holder's renew fails", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          yield* store.acquireLease(req("A", 0));
          expect(yield* store.renewLease("s1", "A", 900, 1000)).toMatchObject({
            heartbeatAt: 900,
            expiresAt: 1900,
          });
          expect(yield* store.renewLease("s1", "B", 900, 1000)).toBeUndefined();
          expect((yield* store.acquireLease(req("B", 1899))).acquired).toBe(false);
          const taken = yield* store.acquireLease(req("B", 1900));
          expect(taken).toMatchObject({ acquired: true, lease: { holder: "B", acquiredAt: 1900 } });
          expect(yield* store.renewLease("s1", "A", 2000, 1000)).toBeUndefined();
          expect((yield* store.getLease("s1"))?.holder).toBe("B");
        }),
      );

      it.scoped("a holder known to be dead is replaced at once (compare-and-set on the holder)", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          yield* store.createSession(session("s1"));
          yield* store.acquireLease(req("A", 0));
          // naming a holder that is not the current one takes nothing
          expect((yield* store.acquireLease(req("B", 5, { replacing: "C" }))).acquired).toBe(false);
          expect((yield* store.acquireLease(req("B", 5, { replacing: "A" }))).acquired).toBe(true);
          expect((yield* store.getLease("s1"))?.holder).toBe("B");
        }),
      );

      it.scoped("a lease needs a live session and goes with it", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          const missing = yield* Effect.exit(store.acquireLease(req("A", 0)));
          expect(failureOf(missing)._tag).toBe("SessionNotFound");
          yield* store.createSession(session("s1"));
          yield* store.acquireLease(req("A", 0));
          yield* store.deleteSession("s1");
          expect(yield* store.getLease("s1")).toBeUndefined();
        }),
      );
    });

    describe("tool outputs (read_output)", () => {
      const out = (sessionId: string, callId: string, text: string, providerCallId?: string) => ({
        sessionId,
        callId,
        ...(providerCallId !== undefined ? { providerCallId } : {}),
        text,
        createdAt: 5,
      });

      it.scoped("kept by lash call id, found by provider id (the latest), replaced under the same id", () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          expect(failureOf(yield* Effect.exit(store.putToolOutput(out("nope", "c", "x"))))._tag).toBe(
            "SessionNotFound",
          );
          yield* store.createSession(session("s1"));
          yield* store.createSession(session("s2"));
          expect(yield* store.getToolOutput("s1", "m1.c0")).toBeUndefined();
          yield* store.putToolOutput(out("s1", "m1.c0", "first\nfull", "call_1"));
          yield* store.putToolOutput(out("s1", "m2.c0", "second", "call_1"));
          yield* store.putToolOutput(out("s1", "plain", "no provider id"));
          expect(yield* store.getToolOutput("s1", "m1.c0")).toEqual(
            out("s1", "m1.c0", "first\nfull", "call_1"),
          );
          expect((yield* store.getToolOutput("s1", "call_1"))?.text).toBe("second");
          expect(yield* store.getToolOutput("s1", "plain")).toEqual(out("s1", "plain", "no provider id"));
          yield* store.putToolOutput(out("s1", "m1.c0", "replaced", "call_1"));
          expect((yield* store.getToolOutput("s1", "m1.c0"))?.text).toBe("replaced");
          expect((yield* store.getToolOutput("s1", "call_1"))?.text).toBe("replaced");
          // other sessions do not see them
          expect(yield* store.getToolOutput("s2", "m1.c0")).toBeUndefined();
          expect(yield* store.getToolOutput("gone", "m1.c0")).toBeUndefined();
        }),
      );

      it.scoped(
        "a fork reads its origins' outputs; deleting the session removes them unless a fork needs them",
        () =>
          Effect.gen(function* () {
            const store = yield* makeStore();
            yield* store.createSession(session("orig"));
            yield* store.commit(turn("orig", "t1", 0, chain("o", "orig", null, 2)));
            yield* store.putToolOutput(out("orig", "o1.c0", "origin output"));
            yield* store.fork(session("f1", { origin: { sessionId: "orig", nodeId: "o1" } }));
            yield* store.fork(session("f2", { origin: { sessionId: "f1", nodeId: "o1" } }));
            expect((yield* store.getToolOutput("f2", "o1.c0"))?.text).toBe("origin output");
            // the nearest session wins
            yield* store.putToolOutput(out("f1", "o1.c0", "fork output"));
            expect((yield* store.getToolOutput("f2", "o1.c0"))?.text).toBe("fork output");
            expect((yield* store.getToolOutput("orig", "o1.c0"))?.text).toBe("origin output");
            // the origin is deleted but kept for its forks: they still read its outputs
            yield* store.deleteSession("orig");
            expect(yield* store.getToolOutput("orig", "o1.c0")).toBeUndefined();
            yield* store.putToolOutput(out("f2", "x", "mine"));
            yield* store.deleteSession("f1");
            expect((yield* store.getToolOutput("f2", "o1.c0"))?.text).toBe("fork output");
            // the last fork goes: everything goes
            yield* store.deleteSession("f2");
            yield* store.createSession(session("f2"));
            expect(yield* store.getToolOutput("f2", "x")).toBeUndefined();
            yield* store.createSession(session("orig"));
            expect(yield* store.getToolOutput("orig", "o1.c0")).toBeUndefined();
          }),
      );
    });
  });

  describe("artifacts", () => {
    const bytesOf = (text: string) => new TextEncoder().encode(text);
    const refNode = (id: string, sessionId: string, parentId: string | null, artifactId: string) =>
      node(id, sessionId, parentId, {
        payload: {
          id,
          role: "tool",
          parts: [
            {
              type: "toolResult",
              callId: "c",
              name: "shell",
              isError: false,
              content: [{ type: "text", text: "cut" }],
              full: [{ type: "attachment", mediaType: "text/plain", ref: artifactRef(artifactId) }],
            },
          ],
        },
      });

    it.scoped("stored once under the sha256 of the bytes, read back whole; unknown ids are undefined", () =>
      Effect.gen(function* () {
        const store = yield* makeStore();
        // 600 KiB: more than two chunks
        const big = bytesOf("0123456789abcdef\n".repeat(600 * 64));
        const a = yield* store.putArtifact({ bytes: big, mediaType: "text/plain", createdAt: 10 });
        expect(a).toEqual({
          id: sha256BytesHex(big),
          size: big.length,
          mediaType: "text/plain",
          createdAt: 10,
        });
        const again = yield* store.putArtifact({
          bytes: big,
          mediaType: "application/x-other",
          createdAt: 20,
        });
        expect(again).toEqual(a);
        expect(yield* store.artifactInfo(a.id)).toEqual(a);
        expect(Buffer.from((yield* store.readArtifact(a.id))!).equals(Buffer.from(big))).toBe(true);
        const empty = yield* store.putArtifact({
          bytes: new Uint8Array(0),
          mediaType: "text/plain",
          createdAt: 1,
        });
        expect(empty.size).toBe(0);
        expect((yield* store.readArtifact(empty.id))?.length).toBe(0);
        expect(yield* store.artifactInfo("0".repeat(64))).toBeUndefined();
        expect(yield* store.readArtifact("nope")).toBeUndefined();
      }),
    );

    it.scoped("gc removes only unreferenced artifacts stored before the cut-off", () =>
      Effect.gen(function* () {
        const store = yield* makeStore();
        const kept = yield* store.putArtifact({
          bytes: bytesOf("kept"),
          mediaType: "text/plain",
          createdAt: 10,
        });
        const loose = yield* store.putArtifact({
          bytes: bytesOf("loose"),
          mediaType: "text/plain",
          createdAt: 10,
        });
        const young = yield* store.putArtifact({
          bytes: bytesOf("young"),
          mediaType: "text/plain",
          createdAt: 50,
        });
        yield* store.createSession(session("s1"));
        yield* store.commit(
          turn("s1", "t1", 0, [node("n0", "s1", null), refNode("n1", "s1", "n0", kept.id)]),
        );
        // a branch away from the referencing node: the node is still in the graph
        yield* store.setLeaf("s1", "n0", 1, 3_100);
        const gc = yield* store.collectArtifacts({ storedBefore: 20 });
        expect(gc).toEqual({ removed: [loose.id], bytes: 5 });
        expect(yield* store.artifactInfo(loose.id)).toBeUndefined();
        expect(yield* store.readArtifact(loose.id)).toBeUndefined();
        expect(yield* store.artifactInfo(kept.id)).toEqual(kept);
        expect(yield* store.artifactInfo(young.id)).toEqual(young);
        expect((yield* store.collectArtifacts({ storedBefore: 100 })).removed).toEqual([young.id]);
        expect((yield* store.collectArtifacts({ storedBefore: 100 })).removed).toEqual([]);
      }),
    );

    it.scoped(
      "a fork's reference keeps an artifact after its origin is deleted; deleting both frees it",
      () =>
        Effect.gen(function* () {
          const store = yield* makeStore();
          const a = yield* store.putArtifact({
            bytes: bytesOf("held by both"),
            mediaType: "text/plain",
            createdAt: 1,
          });
          const b = yield* store.putArtifact({
            bytes: bytesOf("fork only"),
            mediaType: "text/plain",
            createdAt: 1,
          });
          yield* store.createSession(session("orig"));
          yield* store.commit(
            turn("orig", "t1", 0, [node("o0", "orig", null), refNode("o1", "orig", "o0", a.id)]),
          );
          yield* store.fork(session("fork", { origin: { sessionId: "orig", nodeId: "o1" } }));
          yield* store.commit(turn("fork", "t1", 0, [refNode("f0", "fork", "o1", b.id)]));
          yield* store.deleteSession("orig");
          expect((yield* store.collectArtifacts({ storedBefore: 10 })).removed).toEqual([]);
          yield* store.deleteSession("fork");
          const gc = yield* store.collectArtifacts({ storedBefore: 10 });
          expect([...gc.removed].sort()).toEqual([a.id, b.id].sort());
          expect(yield* store.readArtifact(a.id)).toBeUndefined();
        }),
    );

    it.scoped("a pending turn's journal keeps the artifacts its outcome refers to", () =>
      Effect.gen(function* () {
        const store = yield* makeStore();
        const a = yield* store.putArtifact({
          bytes: bytesOf("pending"),
          mediaType: "text/plain",
          createdAt: 1,
        });
        yield* store.createSession(session("s1"));
        yield* store.journalPut({
          key: "s1:t1:0:runTools:1",
          sessionId: "s1",
          turnId: "t1",
          hash: "h",
          status: "completed",
          outcome: [{ full: [{ type: "attachment", mediaType: "text/plain", ref: artifactRef(a.id) }] }],
          updatedAt: 1,
        });
        expect((yield* store.collectArtifacts({ storedBefore: 10 })).removed).toEqual([]);
        yield* store.abandonTurn("s1", "t1");
        expect((yield* store.collectArtifacts({ storedBefore: 10 })).removed).toEqual([a.id]);
      }),
    );

    it.scoped("a node committed before its artifact is put still keeps it (import order)", () =>
      Effect.gen(function* () {
        const store = yield* makeStore();
        const bytes = bytesOf("late");
        yield* store.createSession(session("s1"));
        yield* store.commit(turn("s1", "t1", 0, [refNode("n0", "s1", null, sha256BytesHex(bytes))]));
        yield* store.putArtifact({ bytes, mediaType: "text/plain", createdAt: 1 });
        expect((yield* store.collectArtifacts({ storedBefore: 10 })).removed).toEqual([]);
      }),
    );
  });
}

function journal(
  sessionId: string,
  turnId: string,
  key: string,
  status: JournalEntry["status"] = "completed",
  outcome?: unknown,
): JournalEntry {
  return {
    key,
    sessionId,
    turnId,
    hash: `h-${key}`,
    status,
    ...(status === "completed" ? { outcome: outcome === undefined ? { done: key } : outcome } : {}),
    updatedAt: 7,
  };
}
