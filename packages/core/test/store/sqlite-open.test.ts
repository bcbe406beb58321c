// SqliteStore: opening a long session reads the node envelopes; payloads stay in the database
// until first read, in runs of neighbours (store/sqlite.ts PayloadChunk). What is read must be
// exactly what was written, whatever the order of reading, across chunk ends, cache hits,
// lines and forks; a payload that can no longer be read fails with a StoreError that says why
// and what to do.
import { describe, expect, it } from "@effect/vitest";
import { Effect, Exit, Scope } from "effect";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import { type GraphNode, StoreError } from "../../src/store.ts";
import { chain, ids, session, turn } from "./helpers.ts";
import { tempDb } from "./sqlite-helpers.ts";

const textOf = (n: GraphNode): string =>
  ((n.payload as { parts: { text: string }[] }).parts[0] as { text: string }).text;

describe("SqliteStore: payloads read on first access", () => {
  it.scoped(
    "a 700-node path: every payload is its own, read tail first, across chunks and a later read",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s"));
        yield* store.commit(turn("s", "t1", 0, chain("n", "s", null, 700, "t1")));
        const first = yield* store.activePath("s");
        expect(first).toHaveLength(700);
        // tail first, then the head, then one in the middle of a chunk: each its own payload
        for (const i of [699, 450, 0, 255, 256, 511, 512, 300])
          expect(textOf(first[i]!)).toBe(`text of n${i}`);
        for (let i = 0; i < first.length; i++) expect(textOf(first[i]!)).toBe(`text of n${i}`);
        expect(first[699]!.turnId).toBe("t1");
        expect(first[1]!.parentId).toBe("n0");
        // the session goes on: the known nodes are the same objects, the new ones read their own payloads
        yield* store.commit(turn("s", "t2", 1, chain("m", "s", "n699", 300, "t2")));
        const again = yield* store.activePath("s");
        expect(again).toHaveLength(1000);
        for (let i = 0; i < 700; i++) expect(again[i]).toBe(first[i]);
        expect(again[700]!.parentId).toBe("n699");
        for (let i = 999; i >= 700; i--) expect(textOf(again[i]!)).toBe(`text of m${i - 700}`);
        expect(JSON.parse(JSON.stringify(again[999]))).toMatchObject({
          id: "m299",
          sessionId: "s",
          turnId: "t2",
          kind: "message",
        });
      }),
  );

  it.scoped("forks of forks: each node's payload and session come from its own line", () =>
    Effect.gen(function* () {
      const filename = yield* tempDb;
      const store = yield* makeSqliteStore({ filename });
      yield* store.createSession(session("a"));
      yield* store.commit(turn("a", "t1", 0, chain("a", "a", null, 300)));
      yield* store.fork(session("b", { origin: { sessionId: "a", nodeId: "a299" } }));
      yield* store.commit(turn("b", "t1", 0, chain("b", "b", "a299", 300)));
      yield* store.fork(session("c", { origin: { sessionId: "b", nodeId: "b10" } }));
      yield* store.commit(turn("c", "t1", 0, chain("c", "c", "b10", 5)));
      const path = yield* store.activePath("c");
      expect(ids(path)).toEqual([
        ...Array.from({ length: 300 }, (_, i) => `a${i}`),
        ...Array.from({ length: 11 }, (_, i) => `b${i}`),
        ...Array.from({ length: 5 }, (_, i) => `c${i}`),
      ]);
      for (const n of [...path].reverse()) expect(textOf(n)).toBe(`text of ${n.id}`);
      expect(path.map((n) => n.sessionId)).toEqual([
        ...Array<string>(300).fill("a"),
        ...Array<string>(11).fill("b"),
        ...Array<string>(5).fill("c"),
      ]);
    }),
  );

  it.scoped(
    "a path longer than the node cache: the tail is kept (same objects), the head is read again",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("long"));
        const nodes = chain("n", "long", null, 12_000);
        for (let t = 0; t < 12; t++)
          yield* store.commit(turn("long", `t${t}`, t, nodes.slice(t * 1000, (t + 1) * 1000)));
        const first = yield* store.activePath("long");
        const again = yield* store.activePath("long");
        expect(ids(again)).toEqual(ids(first));
        expect(again[11_999]).toBe(first[11_999]); // the last 10,000 nodes are cached
        expect(again[2_000]).toBe(first[2_000]);
        expect(again[0]).not.toBe(first[0]); // the head would only push the tail out
        for (const i of [0, 1_999, 2_000, 11_999]) {
          expect(textOf(first[i]!)).toBe(`text of n${i}`);
          expect(textOf(again[i]!)).toBe(`text of n${i}`);
        }
      }),
  );

  it.scoped(
    "a payload not read before the session is deleted: a StoreError saying to read the session again",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDb;
        const store = yield* makeSqliteStore({ filename });
        yield* store.createSession(session("s"));
        yield* store.commit(turn("s", "t1", 0, chain("n", "s", null, 3)));
        const path = yield* store.activePath("s");
        expect(textOf(path[0]!)).toBe("text of n0"); // read: kept after the deletion
        yield* store.deleteSession("s");
        expect(textOf(path[2]!)).toBe("text of n2"); // read with its chunk before the deletion
        yield* store.createSession(session("t"));
        yield* store.commit(turn("t", "t1", 0, chain("x", "t", null, 3)));
        const other = yield* store.activePath("t");
        yield* store.deleteSession("t");
        let caught: unknown;
        try {
          void other[1]!.payload;
        } catch (e) {
          caught = e;
        }
        expect(caught).toBeInstanceOf(StoreError);
        expect((caught as StoreError).message).toMatch(
          /session t: 3 of the nodes .* are no longer stored .*read the session again/,
        );
        // the deleted session's line and rows numbered again for another session's nodes: not served as its own
        yield* store.createSession(session("u"));
        yield* store.commit(turn("u", "t1", 0, chain("u", "u", null, 3)));
        const stale = yield* store.activePath("u");
        yield* store.deleteSession("u");
        yield* store.createSession(session("v"));
        yield* store.commit(turn("v", "t1", 0, chain("v", "v", null, 3)));
        expect(textOf((yield* store.activePath("v"))[1]!)).toBe("text of v1");
        expect(() => stale[1]!.payload).toThrow(
          /session u: node u\d is no longer stored .*read the session again/,
        );
      }),
  );

  it.effect("a payload not read before the store closes: a StoreError saying to read it before closing", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make();
      const filename = yield* Scope.extend(tempDb, scope);
      const storeScope = yield* Scope.make();
      const store = yield* Scope.extend(makeSqliteStore({ filename }), storeScope);
      yield* store.createSession(session("s"));
      yield* store.commit(turn("s", "t1", 0, chain("n", "s", null, 3)));
      const path = yield* store.activePath("s");
      expect(textOf(path[1]!)).toBe("text of n1");
      const unread = yield* Effect.scoped(
        Effect.gen(function* () {
          const again = yield* makeSqliteStore({ filename });
          return yield* again.activePath("s");
        }),
      );
      yield* Scope.close(storeScope, Exit.void);
      expect(textOf(path[2]!)).toBe("text of n2"); // its chunk was read with n1
      expect(() => unread[0]!.payload).toThrow(StoreError);
      expect(() => unread[0]!.payload).toThrow(
        /was closed before the payloads .* read them \(node\.payload\) before closing/,
      );
      yield* Scope.close(scope, Exit.void);
    }),
  );
});
