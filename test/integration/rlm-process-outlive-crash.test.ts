// Issue 21: process runs outlive their cell and survive a host restart; signals are journaled.
// The first cell starts two runs and ends; the second cell sends the worker two signals and awaits
// both runs. SIGKILL while the worker is in a tool call with the second signal delivered but not yet
// consumed, the sleeper mid-`sleep`. A new process resumes the turn on the same SQLite file: the
// first cell (completed, from the journal) starts its unfinished runs again from their module; each
// completed effect ran once (counter file, mock request log), the worker reads both signals from
// its journaled signal log (the re-run second cell's `signal_run`s are not delivered again), and
// the sleeper wakes once, not before the wake-up time it recorded before the kill.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "@lash/providers/testing";
import { describe, expect, it } from "vitest";
import { journalRows, processCrashRig } from "./rlm-process-crash-support.ts";
import { cell } from "./rlm-support.ts";

const { servers, start } = processCrashRig("start two processes, then signal and await them");

const CELL_A = `process sleeper() {
  sleep for "8s"
  finish await side.bump({ label: "woke" })?
}
process worker() signals { go: int } {
  a = await side.bump({ label: "first" })?
  x = wait_signal("go")
  b = await side.hang({ label: "second" })?
  y = wait_signal("go")
  finish [a, b, x, y]
}
s = start sleeper()
w = start worker()
print "started"`;

// \`side.hang\` here announces itself only after both signals are in the worker's log
const CELL_B = `signal_run(w, "go", 7)
signal_run(w, "go", 8)
sent = await side.hang({ label: "sent" })?
rs = await [s, w]
finish { s: rs[0]?, w: rs[1]?, sent: sent }`;

describe("rlm process runs across cells: crash-resume (SIGKILL in a child process, same SQLite file)", () => {
  it("runs started by an earlier cell resume from the journal; a delivered, unconsumed signal is read from the journal", async () => {
    const server = await startMockServer({ replies: [cell(CELL_A), cell(CELL_B)] });
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), "lash-rlm-proc-outlive-"));
    const db = join(dir, "lash.db");
    const counter = join(dir, "counter.txt");
    writeFileSync(counter, "");
    const baseUrl = server.baseUrl("openai-chat");
    const labels = () =>
      readFileSync(counter, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("@")[0]);

    const first = start([db, baseUrl, counter, "turn"], { HANG: "1" });
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    // the worker is in its tool call (after taking 7) and the second cell has sent both signals
    await first.waitFor("HANG_RUNNING second");
    await first.waitFor("HANG_RUNNING sent");
    first.child.kill("SIGKILL");
    await first.exited;
    // the worker's first call completed and its second was cut; both cells had been asked for
    expect(labels().filter((l) => l !== "woke")).toEqual(["first", "second", "sent"]);
    expect(server.requests).toHaveLength(2);

    const rows = journalRows(db).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    // both signals are entries of the worker's signal log, in order; the first was consumed
    const log = rows.filter((r) => r.key.includes(":signals:"));
    expect(log.map((r) => (JSON.parse(r.outcome_json) as { value: number }).value)).toEqual([7, 8]);
    const consumed = rows.filter((r) => r.key.includes(":signal:"));
    expect(consumed.map((r) => (JSON.parse(r.outcome_json) as { value: number }).value)).toEqual([7]);
    const sleeps = rows.filter((r) => r.key.includes(":sleep:"));
    expect(sleeps).toHaveLength(1);
    const deadline = JSON.parse(sleeps[0]!.outcome_json) as number;

    const resumed = start([db, baseUrl, counter, "resume", sessionId]);
    const line = await resumed.waitFor("COMMITTED ");
    expect((await resumed.exited).code).toBe(0);
    const result = JSON.parse(line.slice(10)) as {
      outcome: unknown;
      resumed: boolean;
      state: { processes: { process: string; state: string; module: string }[]; modules: object };
    };
    expect(result.outcome).toEqual({
      type: "finished",
      finish: {
        kind: "finalValue",
        value: { s: "bumped woke", w: ["bumped first", "waited second", 7, 8], sent: "waited sent" },
      },
    });
    expect(result.resumed).toBe(true);
    // the run records name the module by its content hash; the session keeps the module under it
    expect(result.state.processes.map((p) => [p.process, p.state])).toEqual([
      ["sleeper", "completed"],
      ["worker", "completed"],
    ]);
    expect(Object.keys(result.state.modules)).toEqual([result.state.processes[0]!.module]);

    const after = readFileSync(counter, "utf8").split("\n").filter(Boolean);
    // `first` ran once; the `hang`s (idempotent, cut off) ran again; the sleeper woke once, at its time
    expect(
      after
        .map((l) => l.split("@")[0])
        .filter((l) => l !== "woke")
        .sort(),
    ).toEqual(["first", "second", "second", "sent", "sent"]);
    const woke = after.filter((l) => l.startsWith("woke@"));
    expect(woke).toHaveLength(1);
    expect(Number(woke[0]!.split("@")[1])).toBeGreaterThanOrEqual(deadline);
    // the model was not asked again: both cells' requests came from the journal
    expect(server.requests).toHaveLength(2);
  });
});
