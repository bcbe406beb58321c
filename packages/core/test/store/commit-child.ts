// A second writer in its own process, for the cross-process commit tests.
// Usage: node commit-child.ts <db> <session> race <turnId> <expectedRevision> <parentId|->
//        node commit-child.ts <db> <session> stress <prefix> <count>
// Prints "ready" once the store is open, waits for a line on stdin, then
// writes one JSON line with what happened.
import { createInterface } from "node:readline";
import { Effect } from "effect";
import { makeSqliteStore } from "../../src/store/sqlite.ts";
import { node } from "./helpers.ts";

const [filename, sessionId, mode, a, b, c] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];

const go = new Promise<void>((resolve) => {
  createInterface({ input: process.stdin }).once("line", () => resolve());
});

const program = Effect.gen(function* () {
  const store = yield* makeSqliteStore({ filename });
  process.stdout.write("ready\n");
  yield* Effect.promise(() => go);
  if (mode === "race") {
    const parent = c === "-" ? null : c;
    const result = yield* Effect.either(
      store.commit({
        sessionId,
        turnId: a,
        hash: `hash-${a}`,
        expectedRevision: Number(b),
        nodes: [node(`${a}-0`, sessionId, parent), node(`${a}-1`, sessionId, `${a}-0`)],
        leafId: `${a}-1`,
        usage: [],
        updatedAt: 1,
      }),
    );
    return result._tag === "Right" ? { ok: true, ...result.right } : { ok: false, ...result.left };
  }
  let conflicts = 0;
  const errors: string[] = [];
  for (let i = 0; i < Number(b); ) {
    const s = yield* store.getSession(sessionId);
    const turnId = `${a}${i}`;
    const r = yield* Effect.either(
      store.commit({
        sessionId,
        turnId,
        hash: `hash-${turnId}`,
        expectedRevision: s.headRevision,
        nodes: [node(`${turnId}-0`, sessionId, s.leafId), node(`${turnId}-1`, sessionId, `${turnId}-0`)],
        leafId: `${turnId}-1`,
        usage: [{ turnId, source: "turn", model: "m", usage: { input: 1 } }],
        updatedAt: 1,
      }),
    );
    if (r._tag === "Right") i++;
    else if (r.left._tag === "StoreConflict" && r.left.reason === "revision") conflicts++;
    else {
      errors.push(r.left.message);
      break;
    }
  }
  return { ok: errors.length === 0, conflicts, errors };
});

Effect.runPromise(Effect.scoped(program)).then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stdout.write(`${JSON.stringify({ ok: false, crash: String(err) })}\n`);
    process.exit(1);
  },
);
