// End-to-end: cancellation by SIGINT / SIGTERM mid-tool, and a SIGKILLed run finished by --resume.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { chatMessages, jsonLines, lash, type Sandbox, sandbox, start, textOf } from "./cli-support.ts";

// each test spawns several CLI processes; the shared CI box can be slow
vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox;
afterEach(async () => {
  await box?.cleanup();
});

const isType = (type: string) => (line: string) => line.includes(`"type":"${type}"`);

describe("signals", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} mid-tool cancels the turn, commits what finished, exits 130; resume sees it`, async () => {
      box = await sandbox([
        {
          text: "Step one, then a long command.",
          toolCalls: [
            { name: "write_file", arguments: { path: "done.txt", content: "finished work\n" } },
            { name: "shell", arguments: { command: "sleep 30 && echo never > late.txt" } },
          ],
        },
      ]);
      const opts = { env: box.env, cwd: box.cwd };
      const run = start(["-p", "do two things", "--output-format", "stream-json"], opts);
      const session = JSON.parse(await run.waitForLine(isType("session"))) as { sessionId: string };
      // the write finished and the shell command started: interrupt now
      await run.waitForLine((l) => isType("toolStarted")(l) && l.includes('"name":"shell"'));
      await run.waitForLine((l) => isType("toolCompleted")(l) && l.includes('"name":"write_file"'));
      run.child.kill(signal);
      const r = await run.done;
      expect(r.code).toBe(130);
      const lines = jsonLines(r.stdout);
      const result = lines.at(-1)!;
      expect(result).toMatchObject({ type: "result", outcome: "interrupted", reason: "cancelled" });
      const shellDone = lines.find((l) => l.type === "toolCompleted" && l.name === "shell")!;
      expect(shellDone.isError).toBe(true);
      expect(readFileSync(join(box.cwd, "done.txt"), "utf8")).toBe("finished work\n");

      // the partial turn is committed: the transcript shows the write and the cancelled shell call
      const show = await lash(["sessions", "show", session.sessionId], opts);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain("user: do two things");
      expect(show.stdout).toMatch(/← write_file {2}\[/);
      expect(show.stdout).toMatch(/← shell \[cancelled\]/);
      expect(show.stdout).not.toContain("cut off"); // nothing pending: it committed

      // resuming continues after the cancelled work
      box.server.enqueue({ text: "continuing" });
      const again = await lash(["-p", "go on", "--resume", session.sessionId], opts);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe("continuing\n");
      const seen = chatMessages(box.server.requests[1]!.body);
      const toolTexts = seen.filter((m) => m.role === "tool").map((m) => textOf(m.content));
      expect(toolTexts.some((t) => t.startsWith("Cancelled:"))).toBe(true);
      expect(textOf(seen.at(-1)!.content)).toBe("go on");
    });
  }

  it("a SIGKILLed run is finished by --resume from its journal without re-requesting completed calls", async () => {
    box = await sandbox([
      {
        text: "Appending a line.",
        toolCalls: [{ name: "shell", arguments: { command: "echo ran >> log.txt" } }],
        usage: { input: 100, output: 10 },
      },
      { hang: true }, // the second model call never answers: the process is killed while it waits
    ]);
    const opts = { env: box.env, cwd: box.cwd };
    const run = start(["-p", "append a line", "--output-format", "stream-json"], opts);
    const session = JSON.parse(await run.waitForLine(isType("session"))) as { sessionId: string };
    await box.server.waitForRequests(2);
    run.child.kill("SIGKILL");
    const killed = await run.done;
    expect(killed.signal).toBe("SIGKILL");
    expect(readFileSync(join(box.cwd, "log.txt"), "utf8")).toBe("ran\n");

    const show = await lash(["sessions", "show", session.sessionId], opts);
    expect(show.stdout).toContain("the last turn was cut off");

    box.server.enqueue({ text: "Recovered after the crash.", usage: { input: 120, output: 6 } });
    const resumed = await lash(
      ["-p", "--resume", session.sessionId, "--resume-pending", "--output-format", "json"],
      opts,
    );
    expect(resumed.code).toBe(0);
    const result = jsonLines(resumed.stdout)[0]!;
    expect(result).toMatchObject({
      outcome: "finished",
      text: "Recovered after the crash.",
      sessionId: session.sessionId,
      toolCalls: 1,
    });
    // one new request only: the first call came from the journal, the shell command did not run again
    expect(box.server.requests).toHaveLength(3);
    expect(readFileSync(join(box.cwd, "log.txt"), "utf8")).toBe("ran\n");
    const third = chatMessages(box.server.requests[2]!.body);
    expect(
      third
        .filter((m) => m.role === "tool")
        .map((m) => textOf(m.content))
        .join(""),
    ).toContain("[exit code: 0]");
    expect(JSON.stringify(box.server.requests[2]!.body)).toEqual(expect.stringContaining("append a line"));

    const after = await lash(["sessions", "show", session.sessionId], opts);
    expect(after.stdout).not.toContain("cut off");
    expect(after.stdout).toContain("assistant: Recovered after the crash.");
  });

  it("a cut-off turn is not run again without --resume-pending; with it, text mode reports the resume, then runs the new prompt", async () => {
    box = await sandbox([{ toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] }, { hang: true }]);
    const opts = { env: box.env, cwd: box.cwd };
    const run = start(["-p", "look around", "--output-format", "stream-json"], opts);
    const session = JSON.parse(await run.waitForLine(isType("session"))) as { sessionId: string };
    await box.server.waitForRequests(2);
    run.child.kill("SIGKILL");
    await run.done;
    // without --resume-pending: refused, saying what is pending and the two ways forward; nothing runs
    const refused = await lash(["-p", "and then?", "--continue"], opts);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`session ${session.sessionId} has a turn that was cut off`);
    expect(refused.stderr).toContain('"look around"');
    expect(refused.stderr).toContain(`lash -p --resume ${session.sessionId} --resume-pending`);
    expect(refused.stderr).toContain(`lash sessions abandon ${session.sessionId}`);
    expect(box.server.requests).toHaveLength(2);
    box.server.enqueue({ text: "looked" }, { text: "next answer" });
    const r = await lash(["-p", "and then?", "--continue", "--resume-pending"], opts);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`finishing the turn of ${session.sessionId} that was cut off`);
    expect(r.stderr).toMatch(/\[tool\] glob · ok · \d+ms · from journal/);
    expect(r.stdout).toBe("next answer\n");
    expect(box.server.requests).toHaveLength(4);
  });
});
