// Compaction strategy "handoff" through real `lash -p` processes: a small window makes the
// session hand off to a successor whose first message is the summary; `--continue` then
// continues the successor (the newest of the chain); `sessions show` and the JSON export show
// the link both ways.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMPACTION_SYSTEM, HANDOFF_PREFIX } from "@lash/core";
import type { RecordedRequest } from "@lash/providers/testing";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, start, textOf } from "./cli-support.ts";

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const isSummariser = (r: RecordedRequest) =>
  chatMessages(r.body).some((m) => m.role === "system" && textOf(m.content) === COMPACTION_SYSTEM);
const prompt = (i: number) => `step ${i}: ${"remember this detail about the build ".repeat(40)}`;
const FLAGS = ["--system", "Be brief.", "--no-project-instructions", "--tools", "read_file"];

/** The user's config with the handoff strategy (next to what the sandbox already wrote). */
function handoffConfig(home: string) {
  const configFile = join(home, "config.json");
  const config = existsSync(configFile) ? (JSON.parse(readFileSync(configFile, "utf8")) as object) : {};
  mkdirSync(home, { recursive: true });
  writeFileSync(configFile, JSON.stringify({ ...config, compaction: { strategy: "handoff" } }));
}

interface Result {
  readonly sessionId: string;
  readonly text: string;
  readonly handoff?: { readonly from: string; readonly to: string };
}

describe("compaction strategy handoff in the lash CLI", () => {
  it("a handoff opens a linked successor, and --continue continues it", async () => {
    box = await sandbox();
    const { server, env, cwd, home } = box;
    handoffConfig(home);
    let answers = 0;
    server.respondWith((r) =>
      isSummariser(r)
        ? { text: "SUMMARY OF THE BUILD: goals, decisions, files build.ts, TODO ship." }
        : { text: `noted ${++answers}` },
    );
    const opts = { env, cwd };
    const json = async (args: readonly string[]) => {
      const r = await lash(["-p", ...FLAGS, "--output-format", "json", ...args], opts);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Result;
    };
    // a history built with a large window: nothing compacts
    const first = await json(["--context-window", "200000", prompt(1)]);
    for (let i = 2; i <= 5; i++) {
      const r = await json(["--continue", "--context-window", "200000", prompt(i)]);
      expect(r.sessionId).toBe(first.sessionId);
    }
    expect(server.requests.filter(isSummariser)).toHaveLength(0);

    // a small window: the turn compacts, hands off, and goes on in the successor
    const before = server.requests.length;
    const handed = await json(["--continue", "--context-window", "2500", "the handoff turn"]);
    expect(handed.handoff?.from).toBe(first.sessionId);
    const successor = handed.handoff!.to;
    expect(handed.sessionId).toBe(successor);
    expect(handed.text).toMatch(/^noted \d+$/);
    const turnRequests = server.requests.slice(before);
    expect(turnRequests.filter(isSummariser).length).toBeGreaterThanOrEqual(1);
    const successorFirst = JSON.stringify(turnRequests.find((r) => !isSummariser(r))!.body);
    expect(successorFirst).toContain(JSON.stringify(HANDOFF_PREFIX(first.sessionId)).slice(1, -1));
    expect(successorFirst).toContain("SUMMARY OF THE BUILD");
    expect(successorFirst).toContain("the handoff turn");
    expect(successorFirst).not.toContain(prompt(1).trim());

    // --continue picks the successor, whose history is the summary and what followed it
    const next = await json(["--continue", "--context-window", "200000", "after the handoff"]);
    expect(next.sessionId).toBe(successor);
    expect(next.handoff).toBeUndefined();
    const last = JSON.stringify(server.requests.at(-1)!.body);
    expect(last).toContain("SUMMARY OF THE BUILD");
    expect(last).toContain("the handoff turn");
    expect(last).toContain("after the handoff");
    expect(last).not.toContain(prompt(5).trim());

    // linked in both graphs: sessions show (text and JSON) and the JSON export
    const oldShow = await lash(["sessions", "show", first.sessionId], opts);
    expect(oldShow.code, oldShow.stderr).toBe(0);
    expect(oldShow.stdout).toContain(`(handoff: the session continues in ${successor}`);
    expect(oldShow.stdout).toContain("step 1: remember"); // the old history stays where it was
    expect(oldShow.stdout).not.toContain("after the handoff");
    const newShow = await lash(["sessions", "show", successor, "--json"], opts);
    expect(newShow.code, newShow.stderr).toBe(0);
    const shown = JSON.parse(newShow.stdout) as {
      handoffs: { from?: string; to?: string }[];
      messages: { role: string }[];
    };
    expect(shown.handoffs).toEqual([expect.objectContaining({ type: "handoff", from: first.sessionId })]);
    expect(JSON.stringify(shown.messages[0])).toContain("SUMMARY OF THE BUILD");
    const exported = await lash(["export", first.sessionId, "--format", "json", "-o", "-"], opts);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(exported.stdout))).toContain(
      `"payload":{"type":"handoff","to":"${successor}"`,
    );
    const md = await lash(["export", successor, "--format", "md", "-o", "-"], opts);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain(`> **Handoff** this session continues ${first.sessionId}`);
    const html = await lash(["export", first.sessionId, "--format", "html", "-o", "-"], opts);
    expect(html.code, html.stderr).toBe(0);
    expect(html.stdout).toContain(`the session continues in ${successor}`);
  });

  it("SIGKILL during the successor's first model call: --continue follows the link and finishes the turn there", async () => {
    box = await sandbox();
    const { server, env, cwd, home } = box;
    handoffConfig(home);
    let hung = false;
    let reachedHang: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      reachedHang = resolve;
    });
    server.respondWith((r) => {
      if (isSummariser(r)) return { text: "SUMMARY OF THE BUILD: goals, decisions, TODO ship." };
      if (!hung && JSON.stringify(r.body).includes("the handoff turn")) {
        hung = true;
        reachedHang();
        return { hang: true };
      }
      return { text: "noted" };
    });
    const opts = { env, cwd };
    const first = await lash(
      ["-p", ...FLAGS, "--output-format", "json", "--context-window", "200000", prompt(1)],
      opts,
    );
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as Result).sessionId;
    for (let i = 2; i <= 5; i++) {
      const r = await lash(["-p", "--continue", ...FLAGS, "--context-window", "200000", prompt(i)], opts);
      expect(r.code, r.stderr).toBe(0);
    }
    const victim = start(
      ["-p", "--continue", ...FLAGS, "--context-window", "2500", "the handoff turn"],
      opts,
    );
    const early = await Promise.race([hanging.then(() => undefined), victim.done]);
    expect(early, `lash ended before the successor's model call: ${JSON.stringify(early)}`).toBeUndefined();
    victim.child.kill("SIGKILL");
    expect((await victim.done).signal).toBe("SIGKILL");
    const summarised = server.requests.filter(isSummariser).length;
    expect(summarised).toBeGreaterThanOrEqual(1);

    // the old session was written last (its turn committed the link), yet --continue takes the successor
    const resumed = await lash(
      [
        "-p",
        "--continue",
        "--resume-pending",
        ...FLAGS,
        "--output-format",
        "json",
        "--context-window",
        "200000",
        "after the crash",
      ],
      opts,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout) as Result;
    expect(result.sessionId).not.toBe(sessionId);
    const old = await lash(["sessions", "show", sessionId, "--json"], opts);
    const shown = JSON.parse(old.stdout) as { handoffs: { to?: string }[] };
    expect(shown.handoffs.map((x) => x.to)).toEqual([result.sessionId]);
    // the summariser was not asked again; the cut-off turn was finished in the successor
    expect(server.requests.filter(isSummariser)).toHaveLength(summarised);
    const last = JSON.stringify(server.requests.at(-1)!.body);
    expect(last).toContain("SUMMARY OF THE BUILD");
    expect(last).toContain("the handoff turn");
    expect(last).toContain("after the crash");
    expect(last).not.toContain(prompt(1).trim());
  });

  it("SIGKILL after the handoff commit, before the successor's turn starts: --continue does the turn there once", async () => {
    box = await sandbox();
    const { server, env, cwd, home } = box;
    handoffConfig(home);
    server.respondWith((r) =>
      isSummariser(r) ? { text: "SUMMARY OF THE BUILD: goals, decisions, TODO ship." } : { text: "noted" },
    );
    const opts = { env, cwd };
    const first = await lash(
      ["-p", ...FLAGS, "--output-format", "json", "--context-window", "200000", prompt(1)],
      opts,
    );
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as Result).sessionId;
    for (let i = 2; i <= 5; i++) {
      const r = await lash(["-p", "--continue", ...FLAGS, "--context-window", "200000", prompt(i)], opts);
      expect(r.code, r.stderr).toBe(0);
    }
    const HANDOFF_TURN = "the handoff turn that must not be lost";
    const carriesIt = (r: RecordedRequest) =>
      !isSummariser(r) && JSON.stringify(r.body).includes(HANDOFF_TURN);
    // the kill hook: the process dies right after the old session's commit links to the successor
    const killed = await lash(["-p", "--continue", ...FLAGS, "--context-window", "2500", HANDOFF_TURN], {
      ...opts,
      env: { ...env, LASH_TEST_KILL_AFTER_HANDOFF: "1" },
    });
    expect(killed.signal).toBe("SIGKILL");
    const summarised = server.requests.filter(isSummariser).length;
    expect(summarised).toBeGreaterThanOrEqual(1);
    expect(server.requests.filter(carriesIt)).toHaveLength(0); // the successor's model was never called
    const old = await lash(["sessions", "show", sessionId, "--json"], opts);
    const successor = (JSON.parse(old.stdout) as { handoffs: { to?: string }[] }).handoffs[0]?.to;
    expect(successor).toBeDefined();
    // the turn is pending in the successor
    const shown = await lash(["sessions", "show", successor!, "--json"], opts);
    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { pendingTurn: unknown }).pendingTurn).toBe(true);

    // --continue follows the link and finishes the turn in the successor, once
    const resumed = await lash(
      [
        "-p",
        "--continue",
        "--resume-pending",
        ...FLAGS,
        "--output-format",
        "json",
        "--context-window",
        "200000",
      ],
      opts,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(resumed.stdout) as Result).sessionId).toBe(successor);
    expect(server.requests.filter(carriesIt)).toHaveLength(1);
    expect(server.requests.filter(isSummariser)).toHaveLength(summarised);
    const reached = JSON.stringify(server.requests.filter(carriesIt)[0]!.body);
    expect(reached).toContain("SUMMARY OF THE BUILD");
    expect(reached.split(HANDOFF_TURN)).toHaveLength(2); // the input once in the request

    // and it is committed once: the next turn's history holds it once
    const next = await lash(
      ["-p", "--continue", ...FLAGS, "--output-format", "json", "--context-window", "200000", "after it"],
      opts,
    );
    expect(next.code, next.stderr).toBe(0);
    expect((JSON.parse(next.stdout) as Result).sessionId).toBe(successor);
    expect(JSON.stringify(server.requests.at(-1)!.body).split(HANDOFF_TURN)).toHaveLength(2);
    expect(server.requests.filter(carriesIt)).toHaveLength(2);
  });

  it("SIGKILL after the successor was made, before the old session's commit: resuming the old session finishes the turn in the same successor, once", async () => {
    box = await sandbox();
    const { server, env, cwd, home } = box;
    handoffConfig(home);
    server.respondWith((r) =>
      isSummariser(r) ? { text: "SUMMARY OF THE BUILD: goals, decisions, TODO ship." } : { text: "noted" },
    );
    const opts = { env, cwd };
    const first = await lash(
      ["-p", ...FLAGS, "--output-format", "json", "--context-window", "200000", prompt(1)],
      opts,
    );
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as Result).sessionId;
    for (let i = 2; i <= 5; i++) {
      const r = await lash(["-p", "--continue", ...FLAGS, "--context-window", "200000", prompt(i)], opts);
      expect(r.code, r.stderr).toBe(0);
    }
    const HANDOFF_TURN = "the handoff turn cut before the link";
    const carriesIt = (r: RecordedRequest) =>
      !isSummariser(r) && JSON.stringify(r.body).includes(HANDOFF_TURN);
    const killed = await lash(["-p", "--continue", ...FLAGS, "--context-window", "2500", HANDOFF_TURN], {
      ...opts,
      env: { ...env, LASH_TEST_KILL_BEFORE_HANDOFF_COMMIT: "1" },
    });
    expect(killed.signal).toBe("SIGKILL");
    const summarised = server.requests.filter(isSummariser).length;
    expect(summarised).toBeGreaterThanOrEqual(1);
    expect(server.requests.filter(carriesIt)).toHaveLength(0);

    // the old session's turn is still pending (its link was not committed); resuming it hands
    // off to the same successor and finishes the turn there, once
    const resumed = await lash(
      [
        "-p",
        "--resume",
        sessionId,
        "--resume-pending",
        ...FLAGS,
        "--output-format",
        "json",
        "--context-window",
        "2500",
      ],
      opts,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout) as Result;
    expect(result.handoff?.from).toBe(sessionId);
    expect(result.sessionId).toBe(result.handoff?.to);
    expect(server.requests.filter(carriesIt)).toHaveLength(1);
    expect(server.requests.filter(isSummariser)).toHaveLength(summarised);
    const old = await lash(["sessions", "show", sessionId, "--json"], opts);
    const shown = JSON.parse(old.stdout) as { handoffs: { to?: string }[]; pendingTurn: boolean };
    expect(shown.handoffs.map((h) => h.to)).toEqual([result.sessionId]);
    expect(shown.pendingTurn).toBe(false);
    // nothing is left to resume anywhere: --continue takes the successor and runs only the new prompt
    const next = await lash(
      ["-p", "--continue", ...FLAGS, "--output-format", "json", "--context-window", "200000", "after it"],
      opts,
    );
    expect(next.code, next.stderr).toBe(0);
    expect((JSON.parse(next.stdout) as Result).sessionId).toBe(result.sessionId);
    expect(JSON.stringify(server.requests.at(-1)!.body).split(HANDOFF_TURN)).toHaveLength(2);
  });

  it("an unknown strategy in the config is an error naming the choices", async () => {
    box = await sandbox();
    const { env, cwd, home } = box;
    const configFile = join(home, "config.json");
    const config = existsSync(configFile) ? (JSON.parse(readFileSync(configFile, "utf8")) as object) : {};
    mkdirSync(home, { recursive: true });
    writeFileSync(configFile, JSON.stringify({ ...config, compaction: { strategy: "rewrite" } }));
    const r = await lash(["-p", ...FLAGS, "hello"], { env, cwd });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("compaction.strategy");
    expect(r.stderr).toContain('"summary" or "handoff"');
    expect(box.server.requests).toHaveLength(0);
  });
});
