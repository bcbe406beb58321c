import { describe, expect, it } from "@effect/vitest";
import { Effect } from "effect";
import { MemoryStore, makeMemoryStore } from "../../src/store/memory.ts";
import { SessionStore } from "../../src/store.ts";
import { storeConformance } from "./conformance.ts";
import { session } from "./helpers.ts";

storeConformance("MemoryStore", makeMemoryStore);

describe("MemoryStore layer", () => {
  it.effect("each layer build is a fresh, empty store", () =>
    Effect.gen(function* () {
      const first = Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* store.createSession(session("s1"));
        return (yield* store.listSessions()).length;
      });
      expect(yield* Effect.provide(first, MemoryStore)).toBe(1);
      expect(yield* Effect.provide(first, MemoryStore)).toBe(1);
    }),
  );
});
