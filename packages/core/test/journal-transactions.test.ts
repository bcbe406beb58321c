// How many journal writes a tool round trip makes (journal.ts `deferred`: the rule), on a real
// SqliteStore: each write is one appended line of the turn's journal file (store/journal-file.ts),
// counted by the tool itself as it runs; and the round trips add no SQLite transaction — counted in
// the database's write-ahead log, one commit frame per transaction.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LlmEvent, LlmRequest } from "@lash/sansio";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { defineTool, SqliteStore, type ToolDefinition, textOutput } from "../src/index.ts";
import { callTools, say, scriptedProvider, withRuntime } from "./support.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Committed transactions in the database's WAL: frames of the current WAL generation (salts as
 * in the header) whose "database size after commit" field is set — one per transaction.
 */
function walCommits(db: string): number {
  const wal = `${db}-wal`;
  if (!existsSync(wal)) return 0;
  const b = readFileSync(wal);
  if (b.length < 32) return 0;
  const pageSize = b.readUInt32BE(8);
  const [salt1, salt2] = [b.readUInt32BE(16), b.readUInt32BE(20)];
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= b.length; at += 24 + pageSize) {
    if (b.readUInt32BE(at + 8) !== salt1 || b.readUInt32BE(at + 12) !== salt2) break;
    if (b.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

/** Lines written so far to the journal files of the turns in flight (`<db>.turns/<session>.<turn>.jsonl`). */
function journalLines(db: string): number {
  const dir = `${db}.turns`;
  if (!existsSync(dir)) return 0;
  let lines = 0;
  for (const f of readdirSync(dir))
    lines += readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter((l) => l !== "").length;
  return lines;
}

/**
 * An Effect tool (dispatch's general path) or a promise tool (`defineTool`: its short path,
 * `loneCall`); each call notes how many journal lines its turn has written when it runs.
 */
const tool = (
  name: string,
  idempotent: boolean,
  promise: boolean,
  seen: number[],
  db: string,
): ToolDefinition => {
  const base = {
    name,
    description: `${name} (${idempotent ? "idempotent" : "not idempotent"})`,
    inputSchema: { type: "object", properties: { n: { type: "number" } } },
    idempotent,
  };
  if (promise)
    return defineTool<{ n: number }>({
      ...base,
      run: async ({ n }) => {
        seen.push(journalLines(db));
        return textOutput(`ok ${n}`);
      },
    }) as ToolDefinition;
  return {
    ...base,
    execute: (args) =>
      Effect.sync(() => {
        seen.push(journalLines(db));
        return textOutput(`ok ${(args as { n: number }).n}`);
      }),
  };
};

/** A model that calls `name` `rounds` times in a turn (counted from the turn's user message), then answers. */
const loop =
  (name: string, rounds: number) =>
  (req: LlmRequest): readonly LlmEvent[] => {
    let done = 0;
    for (let i = req.messages.length - 1; i >= 0; i--) {
      const m = req.messages[i]!;
      if (m.role === "user" && m.parts.some((p) => p.type === "text")) break;
      if (m.role === "tool") done++;
    }
    return done < rounds ? callTools({ id: `c${done}`, name, args: { n: done } }) : say("done");
  };

describe("journal writes per tool round trip (real SqliteStore: its turn files and its WAL)", () => {
  for (const [name, idempotent, promise] of [
    ["lookup", true, false],
    ["side_effect", false, false],
    ["lookup", true, true],
    ["side_effect", false, true],
  ] as const) {
    it(`a ${idempotent ? "read-only (idempotent)" : "non-idempotent"} ${promise ? "promise" : "Effect"} tool: two journal writes and no SQLite transaction per round trip`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "lash-journal-tx-"));
      dirs.push(dir);
      const db = join(dir, "lash.db");
      const script = [...Array(3).fill(loop(name, 2)), ...Array(6).fill(loop(name, 5))];
      const provider = scriptedProvider(script);
      const seen: number[] = [];
      const commits = await Effect.runPromise(
        withRuntime(
          provider,
          (rt) =>
            Effect.gen(function* () {
              const session = yield* rt.createSession({ model: "test/model" });
              const counts = [walCommits(db)];
              const short = yield* rt.turn(session.id, { text: "two rounds" });
              counts.push(walCommits(db));
              const long = yield* rt.turn(session.id, { text: "five rounds" });
              counts.push(walCommits(db));
              expect([short.toolCalls, long.toolCalls, short.text, long.text]).toEqual([
                2,
                5,
                "done",
                "done",
              ]);
              return counts;
            }),
          {
            store: SqliteStore.layer({ filename: db }),
            plugins: [{ name: "t", tools: [tool(name, idempotent, promise, seen, db)] }],
          },
        ),
      );
      const [before, afterShort, afterLong] = commits as [number, number, number];
      expect(before).toBeGreaterThan(0); // the session row is in the WAL: the count reads this database
      const short = afterShort - before;
      const long = afterLong - afterShort;
      // three more round trips (each a model answer and a tool call) add no SQLite transaction:
      // what a turn writes once (begin, commit …) cancels out
      expect(long - short).toBe(0);
      // between two tool calls of a turn: the call's completion, then the next model answer (with
      // the next call's "started" when the tool is not idempotent) — two writes; the first call of
      // a turn sees one (the environment and the model's answer, written together)
      expect(seen).toEqual([1, 3, 1, 3, 5, 7, 9]);
      // each turn's file is gone with its commit
      expect(journalLines(db)).toBe(0);
    });
  }
});
