// Compaction through the real `lash` process: a SIGKILL in the middle of a staged compaction,
// then `lash -p --continue --resume-pending` finishes it from the journal (acceptance 2);
// `lash sessions show` / `compare` show the compaction node.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMPACTION_SYSTEM } from "@lash/core";
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
const stageOf = (r: RecordedRequest): string => {
  const text = chatMessages(r.body)
    .filter((m) => m.role === "user")
    .map((m) => textOf(m.content))
    .join("\n");
  return /The transcript, part (\d+ of \d+)/.exec(text)?.[1] ?? "1 of 1";
};

const prompt = (i: number) => `step ${i}: ${"remember this detail about the build ".repeat(40)}`;
const FLAGS = ["--system", "Be brief.", "--no-project-instructions", "--tools", "read_file"];

describe("compaction in the lash CLI", () => {
  it("SIGKILL during a staged compaction: --continue finishes it once, each finished stage is not asked again", async () => {
    box = await sandbox();
    const { server, env, cwd } = box;
    let hung = false;
    server.respondWith((r) => {
      if (!isSummariser(r)) return { text: "noted" };
      // the second stage hangs the first time it is asked: the test kills lash there
      if (stageOf(r).startsWith("2 ") && !hung) {
        hung = true;
        return { hang: true };
      }
      return { text: `SUMMARY of part ${stageOf(r)}: goals, decisions, files, TODOs.` };
    });
    const opts = { env, cwd };
    // a history built with a large window: nothing compacts
    const first = await lash(
      ["-p", ...FLAGS, "--context-window", "200000", "--output-format", "json", prompt(1)],
      opts,
    );
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as { sessionId: string }).sessionId;
    for (let i = 2; i <= 6; i++) {
      const r = await lash(["-p", "--continue", ...FLAGS, "--context-window", "200000", prompt(i)], opts);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(server.requests.filter(isSummariser)).toHaveLength(0);

    // a small window: the next turn compacts first, in stages; killed while stage 2 hangs
    const before = server.requests.length;
    const victim = start(["-p", "--continue", ...FLAGS, "--context-window", "2500", "the crash turn"], opts);
    const early = await Promise.race([server.waitForRequests(before + 2).then(() => undefined), victim.done]);
    expect(
      early,
      `lash ended before the second summariser stage: ${JSON.stringify(early)} ${server.requests.slice(before).map(stageOf)}`,
    ).toBeUndefined();
    expect(server.requests.slice(before).map(stageOf)[1]).toMatch(/^2 of \d+$/);
    victim.child.kill("SIGKILL");
    const killed = await victim.done;
    expect(killed.signal).toBe("SIGKILL");

    const resumed = await lash(
      ["-p", "--continue", "--resume-pending", ...FLAGS, "--context-window", "2500", "after the crash"],
      opts,
    );
    expect(resumed.code, resumed.stderr).toBe(0);

    const summariser = server.requests.slice(before).filter(isSummariser);
    const stages = summariser.map(stageOf);
    const total = Number(stages[0]!.split(" of ")[1]);
    expect(total).toBeGreaterThanOrEqual(3);
    // stage 1 finished before the kill: asked once; stage 2 was cut off: asked again once; the rest once
    const count = (s: string) => stages.filter((x) => x === s).length;
    expect(count(`1 of ${total}`)).toBe(1);
    expect(count(`2 of ${total}`)).toBe(2);
    for (let k = 3; k <= total; k++) expect(count(`${k} of ${total}`)).toBe(1);
    // stage 2's second request merges stage 1's summary
    const again = summariser.filter((r) => stageOf(r) === `2 of ${total}`)[1]!;
    expect(JSON.stringify(again.body)).toContain(`SUMMARY of part 1 of ${total}`);

    // one compaction in the graph; the model then saw the summary, not the old prompts
    const show = await lash(["sessions", "show", sessionId, "--json"], opts);
    expect(show.code, show.stderr).toBe(0);
    const shown = JSON.parse(show.stdout) as {
      compactions: { nodeId: string; stages: number; lastNodeId: string }[];
    };
    expect(shown.compactions).toHaveLength(1);
    expect(shown.compactions[0]!.stages).toBe(total);
    const last = server.requests.at(-1)!;
    expect(isSummariser(last)).toBe(false);
    const lastText = JSON.stringify(last.body);
    expect(lastText).toContain(`SUMMARY of part ${total} of ${total}`);
    expect(lastText).not.toContain(prompt(1).trim());
    expect(lastText).toContain("the crash turn");

    const text = await lash(["sessions", "show", sessionId], opts);
    expect(text.stdout).toMatch(/\(compaction: 12 messages summarised in \d+ stages/);
    expect(text.stdout).toContain("step 1: remember"); // the replaced messages stay in the transcript

    // exports keep the replaced messages, marked, and the compaction with its summary
    const md = await lash(["export", sessionId, "--format", "md", "-o", "-"], opts);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain("**Compaction** 12 messages summarised");
    expect(md.stdout.split("*(summarised)*").length - 1).toBe(12);
    expect(md.stdout).toContain(prompt(1).trim());
    const html = await lash(["export", sessionId, "--format", "html", "-o", "-"], opts);
    expect(html.code, html.stderr).toBe(0);
    expect(html.stdout).toContain('class="compaction-line"');
    expect(html.stdout.split("msg user compacted").length - 1).toBe(6);

    // acceptance 3 through the CLI: a fork from the last replaced message (just before the
    // compaction point) sends the full original history; compare shows the compaction node
    const at = shown.compactions[0]!.lastNodeId;
    const mark = server.requests.length;
    const forked = await lash(
      [
        "-p",
        "--fork",
        sessionId,
        "--at",
        at,
        ...FLAGS,
        "--context-window",
        "200000",
        "--output-format",
        "json",
        "from the fork",
      ],
      opts,
    );
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = (JSON.parse(forked.stdout) as { sessionId: string }).sessionId;
    const forkRequest = JSON.stringify(server.requests[mark]!.body);
    for (let i = 1; i <= 6; i++) expect(forkRequest).toContain(prompt(i).trim());
    expect(forkRequest).not.toContain("SUMMARY of part");
    const cmp = await lash(["sessions", "compare", sessionId, forkId], opts);
    expect(cmp.code, cmp.stderr).toBe(0);
    expect(cmp.stdout).toContain(`common node: ${at}`);
    const [onlyA, onlyB] = cmp.stdout.split(/^only in B/m);
    expect(onlyA).toContain("(compaction: 12 messages summarised");
    expect(onlyB).not.toContain("(compaction:");
    expect(onlyB).toContain("from the fork");
    const cmpJson = JSON.parse(
      (await lash(["sessions", "compare", sessionId, forkId, "--json"], opts)).stdout,
    ) as {
      onlyA: { id: string }[];
    };
    expect(cmpJson.onlyA.map((n) => n.id)).toContain(shown.compactions[0]!.nodeId);
  }, 120_000);
  it("SIGKILL during a compaction between the model rounds of one turn: --continue finishes it once, no model call twice", async () => {
    box = await sandbox();
    const { server, env, cwd } = box;
    writeFileSync(
      join(cwd, "notes.txt"),
      Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the notes, with its detail`).join("\n"),
    );
    const ROUNDS = 12;
    let calls = 0;
    let hung = false;
    server.respondWith((r) => {
      if (isSummariser(r)) {
        // the second stage hangs the first time it is asked: the test kills lash there
        if (stageOf(r).startsWith("2 ") && !hung) {
          hung = true;
          return { hang: true };
        }
        return { text: `SUMMARY of part ${stageOf(r)}: read the notes, TODO the rest.` };
      }
      calls++;
      // the provider's count of the request (what calibrates lash's estimate): its JSON over 4
      const usage = { input: Math.ceil(r.rawBody.length / 4), output: 10 };
      return calls <= ROUNDS
        ? { toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }], usage }
        : { text: "read them all", usage };
    });
    const opts = { env, cwd };
    const victim = start(
      ["-p", ...FLAGS, "--context-window", "2500", "read the notes again and again"],
      opts,
    );
    const early = await Promise.race([
      (async () => {
        while (!hung) await server.waitForRequests(server.requests.length + 1);
      })(),
      victim.done,
    ]);
    expect(early, `lash ended before the second summariser stage: ${JSON.stringify(early)}`).toBeUndefined();
    victim.child.kill("SIGKILL");
    expect((await victim.done).signal).toBe("SIGKILL");
    const modelCallsBefore = calls;
    expect(modelCallsBefore).toBeGreaterThan(1); // the compaction came after some rounds of the turn
    expect(modelCallsBefore).toBeLessThanOrEqual(ROUNDS);

    const resumed = await lash(
      [
        "-p",
        "--continue",
        "--resume-pending",
        ...FLAGS,
        "--context-window",
        "2500",
        "--output-format",
        "json",
      ],
      opts,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout) as { text: string; sessionId: string };
    expect(result.text).toBe("read them all");
    // no model call of the turn was asked twice: the journal answered the ones made before the kill
    expect(calls).toBe(ROUNDS + 1);
    // each summariser stage once, except the cut-off stage 2 of the first compaction (twice)
    const stages = server.requests.filter(isSummariser).map(stageOf);
    const first = stages.indexOf("2 " + stages[0]!.slice(2));
    expect(first).toBeGreaterThan(0);
    expect(stages[first + 1]).toBe(stages[first]); // asked again right after the resume
    // every request the model got stayed inside the window
    for (const r of server.requests) expect(r.rawBody.length / 4).toBeLessThanOrEqual(2500);
    // committed once: one turn; its compaction nodes are in the graph
    const show = await lash(["sessions", "show", result.sessionId, "--json"], opts);
    expect(show.code, show.stderr).toBe(0);
    const shown = JSON.parse(show.stdout) as {
      session: { turns: number };
      compactions: { stages: number }[];
    };
    expect(shown.session.turns).toBe(1);
    expect(shown.compactions.length).toBeGreaterThanOrEqual(1);
    expect(stages.length).toBe(shown.compactions.reduce((n, c) => n + c.stages, 0) + 1);
  });
});
