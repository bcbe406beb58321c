// Issue 17, acceptance 3 (the TUI half): the real `lash` in tmux against the mock wire
// server, with a user config whose policy asks before every call that risks anything
// (`approval: "risk"` at threshold `low`; under `approval: "always"` no session grant holds).
// Approve once (the file exists), approve for the session (the next call of the tool is
// not asked about), deny with a reason (the model's next request, in the mock server's
// request log, carries the denial text), edit the arguments (the edited arguments ran).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type LashTerm, startLash } from "./tmux-term.ts";

let term: LashTerm | undefined;
/** Terminals of a test that runs lash twice (closed newest first: the first one owns the directory). */
let earlier: LashTerm[] = [];
afterEach(async () => {
  await term?.close();
  term = undefined;
  for (const t of earlier.reverse()) await t.close();
  earlier = [];
});

/** The approval prompt's rows: from its title to the keys line. */
function promptOf(pane: string): string {
  const from = pane.lastIndexOf("⚠ Allow");
  return pane.slice(from, pane.indexOf("y approve once", from)).trim();
}

const body = (t: LashTerm, i: number): string => JSON.stringify(t.server.requests[i]?.body ?? null);

describe("approvals in the TUI (tmux)", () => {
  it("approve once, approve for the session, deny with a reason, edit the arguments", async () => {
    const t = await startLash({
      cols: 100,
      rows: 30,
      config: { policy: { approval: "risk", risk: { threshold: "low" } } },
      replies: [
        // 1. approve once
        {
          toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "once.txt", content: "one\n" } }],
        },
        { text: "Wrote once.txt." },
        // 2. approve for the session: the second write is not asked about
        { toolCalls: [{ id: "w2", name: "write_file", arguments: { path: "s1.txt", content: "s1\n" } }] },
        { toolCalls: [{ id: "w3", name: "write_file", arguments: { path: "s2.txt", content: "s2\n" } }] },
        { text: "Wrote both." },
        // 3. deny with a reason
        { toolCalls: [{ id: "x1", name: "shell", arguments: { command: "touch denied.txt" } }] },
        { text: "Understood, no shell." },
        // 4. edit the arguments
        { toolCalls: [{ id: "x2", name: "shell", arguments: { command: "touch asked.txt" } }] },
        { text: "Ran the edited command." },
      ],
    });
    term = t;
    await t.waitFor((s) => s.includes("ask anything"), "the prompt");

    // 1. approve once
    t.type("write once.txt");
    t.keys("Enter");
    let s = await t.waitFor((p) => p.includes("Allow this tool call?"), "the approval prompt");
    expect(s).toMatch(/Edit once\.txt\s+(\+1 −0\s+)?write_file/);
    expect(s).toContain("write_file needs approval");
    expect(s).toContain("y approve once · a approve write_file for this session · n deny with a reason");
    expect(existsSync(join(t.cwd, "once.txt"))).toBe(false);
    t.type("y");
    s = await t.waitFor((p) => p.includes("Wrote once.txt."), "the first answer");
    expect(readFileSync(join(t.cwd, "once.txt"), "utf8")).toBe("one\n");
    expect(s).toContain("✓ Approved write_file once · by you");

    // 2. approve for the session
    t.type("write two files");
    t.keys("Enter");
    await t.waitFor((p) => p.includes("Allow this tool call?") && p.includes("s1.txt"), "the second prompt");
    t.type("a");
    // no key is pressed after this: the second write runs without a prompt
    s = await t.waitFor((p) => p.includes("Wrote both."), "the second answer");
    expect(readFileSync(join(t.cwd, "s1.txt"), "utf8")).toBe("s1\n");
    expect(readFileSync(join(t.cwd, "s2.txt"), "utf8")).toBe("s2\n");
    expect(s).toContain("✓ Approved write_file for this session · by you");
    expect(s.split("Approved write_file").length - 1).toBe(2); // once.txt, s1.txt: s2.txt was not asked

    // 3. deny with a reason
    t.type("clean up with the shell");
    t.keys("Enter");
    s = await t.waitFor(
      (p) => p.includes("Allow this tool call?") && p.includes("touch denied.txt"),
      "the shell prompt",
    );
    expect(s).toMatch(/Shell \$ touch denied\.txt/);
    t.type("n");
    await t.waitFor((p) => p.includes("Why deny shell?"), "the reason input");
    t.type("no shell commands today");
    t.keys("Enter");
    s = await t.waitFor((p) => p.includes("Understood, no shell."), "the answer after the denial");
    expect(existsSync(join(t.cwd, "denied.txt"))).toBe(false);
    expect(s).toContain("✗ Denied shell · by you: no shell commands today");
    // the model's next request (the 7th) carries the denial text as the call's result
    expect(body(t, 6)).toContain("the user denied it: no shell commands today");
    expect(body(t, 6)).toContain("Do not retry the same call unchanged");

    // 4. edit the arguments: invalid JSON is refused, then the edited call runs
    t.type("make a file");
    t.keys("Enter");
    await t.waitFor(
      (p) => p.includes("Allow this tool call?") && p.includes("touch asked.txt"),
      "the last prompt",
    );
    t.type("e");
    s = await t.waitFor((p) => p.includes("Arguments of shell (JSON):"), "the arguments editor");
    expect(s).toContain('› {"command":"touch asked.txt"}');
    t.keys("C-u");
    t.type('{"command": "touch edited.txt"');
    t.keys("Enter");
    s = await t.waitFor((p) => p.includes("invalid JSON:"), "the parse error");
    expect(s).toContain('› {"command": "touch edited.txt"');
    t.type("}");
    t.keys("Enter");
    s = await t.waitFor((p) => p.includes("Ran the edited command."), "the last answer");
    expect(existsSync(join(t.cwd, "edited.txt"))).toBe(true);
    expect(existsSync(join(t.cwd, "asked.txt"))).toBe(false);
    expect(s).toContain("✎ Approved shell with edited arguments · by you");
    expect(t.server.requests).toHaveLength(9);
  }, 180_000);

  it("a lash killed while the prompt waits shows the same request after --continue; approving runs the call once", async () => {
    const a = await startLash({
      cols: 100,
      rows: 30,
      config: { policy: { approval: "always" } },
      replies: [
        {
          toolCalls: [{ id: "c1", name: "write_file", arguments: { path: "crash.txt", content: "after\n" } }],
        },
      ],
    });
    earlier.push(a);
    await a.waitFor((s) => s.includes("ask anything"), "the prompt");
    a.type("write crash.txt");
    a.keys("Enter");
    const first = await a.waitFor(
      (s) => s.includes("Allow this tool call?") && s.includes("crash.txt") && s.includes("y approve once"),
      "the approval prompt",
    );
    const pid = a.lashPid();
    expect(pid).toBeDefined();
    process.kill(pid!, "SIGKILL");
    await a.waitFor((s) => s.includes("LASH-EXITED 137"), "lash killed");
    expect(existsSync(join(a.cwd, "crash.txt"))).toBe(false);
    const root = (a as LashTerm & { root: string }).root;

    const b = await startLash({
      cols: 100,
      rows: 30,
      config: { policy: { approval: "always" } },
      args: ["--continue"],
      reuse: { root },
      replies: [{ text: "Wrote it after the crash." }],
    });
    term = b;
    // the cut-off turn is offered first (on stderr): f finishes it in the TUI, which asks again
    const deadline = Date.now() + 20_000;
    while (!b.stderr().includes("Finish it now") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(b.stderr()).toContain("Finish it now");
    b.type("f");
    b.keys("Enter");
    let s = await b.waitFor(
      (p) => p.includes("Allow this tool call?") && p.includes("y approve once"),
      "the same request again",
    );
    // the same request: the same call, reason and preview
    expect(promptOf(s)).toBe(promptOf(first));
    expect(promptOf(s)).toMatch(/Edit crash\.txt\s+(\+1 −0\s+)?write_file/);
    b.type("y");
    s = await b.waitFor((p) => p.includes("Wrote it after the crash."), "the finished turn");
    expect(readFileSync(join(b.cwd, "crash.txt"), "utf8")).toBe("after\n");
    expect(s).toContain("✓ Approved write_file once · by you");
    // the model was not asked for the first response again: it is in the turn's journal
    expect(b.server.requests).toHaveLength(1);
  }, 120_000);
});
