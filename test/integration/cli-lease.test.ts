// One writer per session, end to end with real `lash` processes, real SQLite and
// the mock wire server: the two-writer stress test (issue 14, acceptance 2),
// `lash sessions abandon` after a journal mismatch, and the poison-turn guard
// after real crashes (SIGKILL) of three resumes.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqliteStore } from "@lash/core";
import type { RecordedRequest } from "@lash/providers/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  chatMessages,
  jsonLines,
  lash,
  type Run,
  type Sandbox,
  sandbox,
  start,
  textOf,
} from "./cli-support.ts";

vi.setConfig({ testTimeout: 600_000 });

let box: Sandbox;
afterEach(async () => {
  await box?.cleanup();
});

const isType = (type: string) => (line: string) => line.includes(`"type":"${type}"`);
const noStackTrace = (text: string) => expect(text).not.toMatch(/^\s+at .+[:(]/m);

/**
 * The model of the stress test: asked a prompt `P`, it runs `echo P >> counter.txt`
 * (a side effect that is not idempotent), then answers `done P`.
 */
function appendingModel(request: RecordedRequest) {
  const messages = chatMessages(request.body);
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const label = textOf(lastUser?.content).trim();
  if (messages.at(-1)?.role === "tool") return { text: `done ${label}` };
  return { toolCalls: [{ name: "shell", arguments: { command: `echo ${label} >> counter.txt` } }] };
}

describe("two writers on one session (lease)", () => {
  it("25 trials of two `lash -p --continue` at offsets over 0-2 s: no duplicate model call or tool run, no lost turn, always usable", async () => {
    box = await sandbox([{ text: "ready" }]);
    const opts = { env: box.env, cwd: box.cwd };
    const setup = await lash(["-p", "setup", "--output-format", "json"], opts);
    expect(setup.code).toBe(0);
    const sessionId = jsonLines(setup.stdout)[0]!.sessionId as string;
    writeFileSync(join(box.cwd, "counter.txt"), "");
    box.server.respondWith(appendingModel);

    const TRIALS = 25;
    const ran: string[] = [];
    const refused: string[] = [];
    for (let i = 0; i < TRIALS; i++) {
      const offsetMs = Math.round((i * 2000) / (TRIALS - 1));
      const labelA = `trial${i}a`;
      const labelB = `trial${i}b`;
      // B waits for the lease in odd trials and fails fast in even ones
      const argsB = ["-p", "--continue", labelB, ...(i % 2 === 1 ? ["--wait"] : [])];
      const a = start(["-p", "--continue", labelA], opts);
      const b = await new Promise<ReturnType<typeof start>>((resolve) =>
        setTimeout(() => resolve(start(argsB, opts)), offsetMs),
      );
      const [ra, rb] = await Promise.all([a.done, b.done]);
      const results: [string, Run, number | undefined][] = [
        [labelA, ra, b.child.pid],
        [labelB, rb, a.child.pid],
      ];
      for (const [label, r, otherPid] of results) {
        if (r.code === 0) {
          expect(r.stdout, `${label}: ${r.stderr}`).toBe(`done ${label}\n`);
          ran.push(label);
        } else {
          // the loser is told who holds the session, and runs nothing
          expect(r.code, `${label}: ${r.stderr}`).toBe(1);
          expect(r.stderr).toContain(
            `session ${sessionId} is in use by another lash process (pid ${otherPid} on `,
          );
          expect(r.stderr).toContain("--wait");
          noStackTrace(r.stderr);
          refused.push(label);
        }
      }
      // a waiter never loses its turn
      if (i % 2 === 1) expect(rb.code, rb.stderr).toBe(0);
    }
    // every trial ran at least one turn
    expect(ran.length).toBeGreaterThanOrEqual(TRIALS);
    expect(ran.length + refused.length).toBe(2 * TRIALS);

    // 0 duplicate tool runs: each turn that ran appended its label exactly once; refused ones never
    const counter = readFileSync(join(box.cwd, "counter.txt"), "utf8").split("\n").filter(Boolean);
    expect([...counter].sort()).toEqual([...ran].sort());

    // 0 duplicate model calls: no request was made twice (each turn: one call for the tool, one for the answer)
    const bodies = box.server.requests.map((r) => JSON.stringify(chatMessages(r.body)));
    expect(new Set(bodies).size).toBe(bodies.length);
    expect(box.server.requests).toHaveLength(1 + 2 * ran.length);

    // 0 lost turns: every turn that reported success is in the transcript once, in order, with its answer
    const show = await lash(["sessions", "show", sessionId, "--json"], opts);
    const shown = JSON.parse(show.stdout) as {
      session: { turns: number };
      pendingTurn: boolean;
      messages: { role: string; parts: { type: string; text?: string }[] }[];
    };
    expect(shown.pendingTurn).toBe(false);
    expect(shown.session.turns).toBe(1 + ran.length);
    const userTexts = shown.messages
      .filter((m) => m.role === "user")
      .map((m) => m.parts.map((p) => p.text ?? "").join(""));
    // (within a trial either process may have won the race; trials follow each other)
    expect(userTexts[0]).toBe("setup");
    expect([...userTexts.slice(1)].sort()).toEqual([...ran].sort());
    const trialOf = (label: string) => Number(/^trial(\d+)/.exec(label)![1]);
    const trials = userTexts.slice(1).map(trialOf);
    expect(trials).toEqual([...trials].sort((x, y) => x - y));
    for (const label of refused) expect(userTexts).not.toContain(label);

    // 0 sessions left unusable
    const final = await lash(["-p", "--continue", "final"], opts);
    expect(final.code, final.stderr).toBe(0);
    expect(final.stdout).toBe("done final\n");
  });
});

describe("cut-off turns in -p", () => {
  it("a journal mismatch names the session and `lash sessions abandon`; abandon makes the session usable", async () => {
    box = await sandbox([
      { toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] },
      { hang: true }, // killed while waiting for the second call
    ]);
    const opts = { env: box.env, cwd: box.cwd };
    const run = start(["-p", "please delete the build dir", "--output-format", "stream-json"], opts);
    const session = JSON.parse(await run.waitForLine(isType("session"))) as { sessionId: string };
    const id = session.sessionId;
    await box.server.waitForRequests(2);
    run.child.kill("SIGKILL");
    await run.done;

    // the recorded steps no longer match (as after a change of configuration): tamper with their hashes
    const opened = await openSqliteStore({ filename: join(box.home, "lash.db") });
    const pending = await opened.store.pendingTurn(id);
    expect(pending).toBeDefined();
    for (const e of await opened.store.journalForTurn(id, pending!.turnId))
      await opened.store.journalPut({ ...e, hash: `tampered-${e.hash}` });
    await opened.close();

    const resumed = await lash(["-p", "--resume", id, "--resume-pending", "go on"], opts);
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain(`session ${id}`);
    expect(resumed.stderr).toContain(`lash sessions abandon ${id}`);
    noStackTrace(resumed.stderr);
    expect(box.server.requests).toHaveLength(2);

    const abandoned = await lash(["sessions", "abandon", id], opts);
    expect(abandoned.code, abandoned.stderr).toBe(0);
    expect(abandoned.stdout).toContain(`abandoned the cut-off turn ${pending!.turnId} of ${id}`);
    expect(abandoned.stdout).toContain("please delete the build dir");
    const show = await lash(["sessions", "show", id], opts);
    expect(show.stdout).toContain('(turn abandoned: "please delete the build dir"');
    expect(show.stdout).not.toContain("cut off");
    const nothing = await lash(["sessions", "abandon", id], opts);
    expect(nothing.stdout).toContain("no cut-off turn");

    box.server.enqueue({ text: "it is noon" });
    const next = await lash(["-p", "--resume", id, "what time is it"], opts);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe("it is noon\n");
    // the abandoned instruction is not in what the model was sent
    expect(JSON.stringify(box.server.requests.at(-1)!.body)).not.toContain("please delete the build dir");
  });

  it("a turn whose resume was killed three times is not resumed a fourth time; the message offers abandon and fork", async () => {
    box = await sandbox([{ toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] }, { hang: true }]);
    const opts = { env: box.env, cwd: box.cwd };
    const run = start(["-p", "loop forever", "--output-format", "stream-json"], opts);
    const id = (JSON.parse(await run.waitForLine(isType("session"))) as { sessionId: string }).sessionId;
    await box.server.waitForRequests(2);
    run.child.kill("SIGKILL");
    await run.done;

    // three resumes, each killed while it runs (the cut call hangs again each time)
    for (let attempt = 1; attempt <= 3; attempt++) {
      box.server.enqueue({ hang: true });
      const r = start(["-p", "--resume", id, "--resume-pending", "--output-format", "stream-json"], opts);
      await box.server.waitForRequests(2 + attempt);
      r.child.kill("SIGKILL");
      expect((await r.done).signal).toBe("SIGKILL");
    }
    const fourth = await lash(["-p", "--resume", id, "--resume-pending"], opts);
    expect(fourth.code).toBe(1);
    expect(fourth.stderr).toContain(
      `session ${id}: its cut-off turn crashed lash on each of its last 3 resumes`,
    );
    expect(fourth.stderr).toContain(`lash sessions abandon ${id}`);
    expect(fourth.stderr).toContain(`lash --fork ${id}`);
    noStackTrace(fourth.stderr);
    expect(box.server.requests).toHaveLength(5);
  });
});
