// The stored shapes' schemas (store/schema.ts): their types match the interfaces the
// rest of the code uses (checked by the compiler), the compiled guards give the same
// verdicts as Schema.is, and nodes read back from SQLite decode with GraphNodeSchema.
import { describe, expect, it } from "@effect/vitest";
import { Message } from "@lash/sansio";
import { Effect, Schema } from "effect";
import {
  compileGuard,
  FramePayloadSchema,
  GraphNodeSchema,
  type JournalEntrySchema,
  type NewNodeSchema,
  type PendingTurnSchema,
  type ToolOutputRecordSchema,
  type TurnCommitSchema,
  type UsageRowSchema,
} from "../../src/store/schema.ts";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import type {
  GraphNode,
  JournalEntry,
  NewNode,
  PendingTurn,
  ToolOutputRecord,
  TurnCommit,
  UsageRow,
} from "../../src/store.ts";
import { chain, node, session, turn } from "./helpers.ts";
import { tempDb } from "./sqlite-helpers.ts";

// ---- type level: a mismatch is a compile error (pnpm typecheck) ----
type Equals<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
const same = <_ extends true>() => true;
const assignable = <A, _B extends A>() => true;
export const typeChecks = [
  same<Equals<typeof JournalEntrySchema.Type, JournalEntry>>(),
  same<Equals<typeof UsageRowSchema.Type, UsageRow>>(),
  same<Equals<typeof PendingTurnSchema.Type, PendingTurn>>(),
  same<Equals<typeof ToolOutputRecordSchema.Type, ToolOutputRecord>>(),
  // a node by kind is a GraphNode (payload narrowed by kind), and a commit is a TurnCommit
  assignable<GraphNode, typeof GraphNodeSchema.Type>(),
  assignable<NewNode, typeof NewNodeSchema.Type>(),
  assignable<TurnCommit, typeof TurnCommitSchema.Type>(),
];

const messages: unknown[] = [
  { id: "m", role: "user", parts: [] },
  { id: "m", role: "assistant", parts: [{ type: "text", text: "hi" }], extra: 1 },
  {
    id: "m",
    role: "assistant",
    parts: [
      { type: "reasoning", text: "r", replay: { provider: "anthropic", signature: "s" } },
      { type: "toolCall", id: "c", lashCallId: "m.c0", name: "t", argumentsText: "{}" },
      {
        type: "toolResult",
        callId: "c",
        name: "t",
        content: [{ type: "text", text: "x" }],
        isError: false,
        full: [{ type: "attachment", mediaType: "image/png", data: "AA==" }],
        value: { any: ["thing"] },
      },
      { type: "code", language: "lashlang", source: "1" },
      { type: "output", text: "o" },
      { type: "error", message: "e", code: "E" },
    ],
  },
  // not messages
  null,
  [],
  "text",
  { id: "m", role: "user" },
  { id: 1, role: "user", parts: [] },
  { id: "m", role: "robot", parts: [] },
  { id: "m", role: "user", parts: [{ type: "mystery" }] },
  { id: "m", role: "user", parts: [{ type: "text" }] },
  { id: "m", role: "user", parts: [{ type: "reasoning", text: "r", replay: { provider: 5 } }] },
  {
    id: "m",
    role: "user",
    parts: [{ type: "toolResult", callId: "c", name: "t", content: [{}], isError: false }],
  },
  {
    id: "m",
    role: "user",
    parts: [{ type: "toolCall", id: "c", name: "t", argumentsText: "{}", lashCallId: 3 }],
  },
  { id: "m", role: "user", parts: {} },
];

describe("stored shapes: schemas", () => {
  it("the compiled guards agree with Schema.is on messages and frame payloads", () => {
    const is = Schema.is(Message);
    const guard = compileGuard(Message);
    const verdicts = messages.map((m) => [guard(m), is(m)]);
    for (const [fast, reference] of verdicts) expect(fast).toBe(reference);
    expect(verdicts.filter(([v]) => v)).toHaveLength(3);
    const frames = [{ frameId: "f1", task: "t", seed: null }, { frameId: 1 }, {}, null, { frameId: "f" }];
    const isFrame = Schema.is(FramePayloadSchema);
    const frameGuard = compileGuard(FramePayloadSchema);
    for (const f of frames) expect(frameGuard(f)).toBe(isFrame(f));
  });

  it.scoped("nodes read back from SQLite decode with GraphNodeSchema, by kind", () =>
    Effect.gen(function* () {
      const store = yield* makeSqliteStore({ filename: yield* tempDb });
      yield* store.createSession(session("s1"));
      yield* store.commit(
        turn("s1", "t1", 0, [
          ...chain("n", "s1", null, 2),
          node("p", "s1", "n1", { kind: "protocol", payload: { type: "turnAbandoned", reason: "x" } }),
          node("f", "s1", "p", { kind: "frame", payload: { frameId: "f1", previous: "f0", task: "next" } }),
        ]),
      );
      const path = yield* store.activePath("s1");
      const decode = Schema.decodeUnknownSync(GraphNodeSchema);
      const decoded = path.map((n) => decode(JSON.parse(JSON.stringify(n))));
      expect(decoded.map((n) => n.kind)).toEqual(["message", "message", "protocol", "frame"]);
      expect(decoded[3]!.payload).toEqual({ frameId: "f1", previous: "f0", task: "next" });
      const n0 = path[0]!;
      expect(decoded[0]).toEqual({
        id: "n0",
        sessionId: "s1",
        parentId: null,
        frameId: "f0",
        kind: "message",
        turnId: null,
        payload: n0.payload,
        createdAt: 2_000,
        seq: n0.seq,
      });
    }),
  );
});
