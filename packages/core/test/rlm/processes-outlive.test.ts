// Process runs outlive the cell that started them (issue 21): `h = start ...` in one cell, the
// cell ends while the run waits, a later cell signals and awaits it; the next turn (a rebuilt RLM
// state, restored from the session record) awaits both handles from their run records. The session
// state names each run's module by its content hash and keeps the module's text under that hash.
import { sha256Hex, type TurnActivity } from "@lash/sansio";
import { Effect } from "effect";
import { describe, expect, it } from "vitest";
import { withRlm } from "../../src/index.ts";
import { say, scriptedProvider, withRuntime } from "../support.ts";

const cell = (code: string) => say(`<lashlang>\n${code}\n</lashlang>`);

const CELL_A = `process slow(label: str) signals { go: int } {
  n = wait_signal("go")
  m = wait_signal("go")
  finish label + ":" + to_string(n) + "," + to_string(m)
}
h = start slow(label: "h")
k = start slow(label: "k")
print "started"`;

describe("rlm process runs outlive their cell", () => {
  it("a handle from an earlier cell is signalled and awaited later; the next turn awaits both from their records", async () => {
    const provider = scriptedProvider([
      cell(CELL_A),
      // the runs are still waiting: the first cell has ended without them
      cell(`signal_run(h, "go", 1)
signal_run(k, "go", 10)
signal_run(h, "go", 2)
signal_run(k, "go", 20)
finish (await h)?`),
      cell(`finish { h: await h, k: await k }`),
    ]);
    const events: TurnActivity[] = [];
    const out = await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            const t1 = yield* rt.turn(s.id, { text: "start" }, { onEvent: (e) => events.push(e) });
            const after1 = yield* rt.getSession(s.id);
            const t2 = yield* rt.turn(s.id, { text: "await again" });
            return { t1, t2, state: after1.state.rlm as { processes: unknown[]; modules: object } };
          }),
        withRlm({}),
      ),
    );
    expect(out.t1.finalValue).toBe("h:1,2");
    // the second request was made while both runs were still open (cell A had ended)
    const ended = events.findIndex((e) => e.type === "toolCompleted" && e.name === "process:slow");
    const requests = events.flatMap((e, i) => (e.type === "llmRequest" ? [i] : []));
    expect(requests).toHaveLength(2);
    const secondRound = requests[1]!;
    expect(secondRound).toBeGreaterThan(0);
    expect(ended).toBeGreaterThan(secondRound);
    const ref = `sha256:${sha256Hex(CELL_A)}`;
    expect(out.state.modules).toEqual({ [ref]: CELL_A });
    expect(out.state.processes).toEqual([
      expect.objectContaining({
        process: "slow",
        module: ref,
        args: { label: "h" },
        state: "completed",
        result: "h:1,2",
      }),
      expect.objectContaining({
        process: "slow",
        module: ref,
        args: { label: "k" },
        state: "completed",
        result: "k:10,20",
      }),
    ]);
    // turn 2: a fresh RLM state restored from the session record; both handles still answer
    expect(out.t2.finalValue).toEqual({ h: { ok: true, value: "h:1,2" }, k: { ok: true, value: "k:10,20" } });
  });

  it("a run nothing can signal any more is cancelled when its turn ends, and its handle says so later", async () => {
    const provider = scriptedProvider([
      cell(`process waiter() signals { go: int } {
  finish wait_signal("go")
}
w = start waiter()
print "started"`),
      say("done for now"),
      cell(`r = await w
finish r`),
    ]);
    const out = await Effect.runPromise(
      withRuntime(
        provider,
        (rt) =>
          Effect.gen(function* () {
            const s = yield* rt.createSession({ model: "test/model", mode: "rlm" });
            yield* rt.turn(s.id, { text: "start" });
            return yield* rt.turn(s.id, { text: "await" });
          }),
        withRlm({}),
      ),
    );
    expect(out.finalValue).toEqual({
      ok: false,
      error: expect.stringContaining("waited for signal `go` and nothing else can send one"),
    });
  });
});
