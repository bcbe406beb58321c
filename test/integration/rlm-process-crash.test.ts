// Acceptance 2 of issue 21: SIGKILL a lash process while a cell's two processes run — one in the
// middle of `sleep`, one in the middle of a tool call (after a first call completed) — then resume
// the turn in a new process on the same SQLite file. Each completed effect ran once (the counter
// file, the mock server's request log), and the sleeper wakes once, not before the wake-up time it
// recorded before the kill.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "@lash/providers/testing";
import { describe, expect, it } from "vitest";
import { journalRows, processCrashRig } from "./rlm-process-crash-support.ts";
import { cell } from "./rlm-support.ts";

const { servers, start } = processCrashRig("start two processes");

const CELL = `process sleeper() {
  sleep for "8s"
  finish await side.bump({ label: "woke" })?
}
process worker() {
  a = await side.bump({ label: "first" })?
  b = await side.hang({ label: "second" })?
  finish [a, b]
}
s = start sleeper()
w = start worker()
rs = await [s, w]
finish { s: rs[0]?, w: rs[1]? }`;

describe("rlm processes: crash-resume (SIGKILL in a child process, same SQLite file)", () => {
  it("killed with one process mid-sleep and one mid-tool: completed effects run once, the sleeper wakes once at its time", async () => {
    const server = await startMockServer({ replies: [cell(CELL)] });
    servers.push(server);
    const dir = mkdtempSync(join(tmpdir(), "lash-rlm-proc-crash-"));
    const db = join(dir, "lash.db");
    const counter = join(dir, "counter.txt");
    writeFileSync(counter, "");
    const baseUrl = server.baseUrl("openai-chat");
    const lines = () => readFileSync(counter, "utf8").split("\n").filter(Boolean);

    const first = start([db, baseUrl, counter, "turn"], { HANG: "1" });
    const sessionId = (await first.waitFor("SESSION ")).slice(8);
    await first.waitFor("HANG_RUNNING");
    first.child.kill("SIGKILL");
    await first.exited;
    // the worker process: its first call completed, its second was cut; the sleeper had not woken
    expect(lines().map((l) => l.split("@")[0])).toEqual(["first", "second"]);
    expect(server.requests).toHaveLength(1);

    // the sleeper's wake-up time was recorded once, before the kill
    const sleeps = journalRows(db).filter((r) => r.key.includes(":sleep:"));
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]!.key).toContain("process:sleeper");
    const deadline = JSON.parse(sleeps[0]!.outcome_json) as number;
    expect(typeof deadline).toBe("number");

    const resumed = start([db, baseUrl, counter, "resume", sessionId]);
    const line = await resumed.waitFor("COMMITTED ");
    expect((await resumed.exited).code).toBe(0);
    const result = JSON.parse(line.slice(10)) as { outcome: unknown; resumed: boolean; turnCount: number };
    expect(result.outcome).toEqual({
      type: "finished",
      finish: {
        kind: "finalValue",
        value: { s: "bumped woke", w: ["bumped first", "waited second"] },
      },
    });
    expect(result.resumed).toBe(true);
    expect(result.turnCount).toBe(1);

    const after = lines();
    // `first` (completed before the kill) ran once; `hang` (idempotent, cut off) ran again; the sleeper woke once
    expect(after.map((l) => l.split("@")[0])).toEqual(["first", "second", "second", "woke"]);
    const wokeAt = Number(after[3]!.split("@")[1]);
    expect(wokeAt).toBeGreaterThanOrEqual(deadline);
    // the model was not asked again: the cell came from the journal
    expect(server.requests).toHaveLength(1);
  });
});
