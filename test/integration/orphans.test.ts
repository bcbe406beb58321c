// Commands die with lash (issue 14, item 7): a SIGKILL of lash, or a SIGHUP (the terminal
// closed), while `shell` runs a command leaves no process of the command's group behind,
// and the command's later side effects never happen.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonLines, lash, type Sandbox, sandbox, start } from "./cli-support.ts";

vi.setConfig({ testTimeout: 120_000 });

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

/** Live (non-zombie) processes in a process group, from /proc. */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat = "";
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (pgrp === String(pgid) && state !== "Z" && state !== "X") out.push(Number(entry));
  }
  return out;
}

const poll = async (done: () => boolean, boundMs: number): Promise<void> => {
  const deadline = Date.now() + boundMs;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
};

/** `$$` of `bash -c` is the command's pid, and so its process group id. */
const COMMAND = "echo $$ > pgid; (sleep 2; echo late > bg-marker) & sleep 2; echo done > marker";

describe("commands die with lash", () => {
  for (const signal of ["SIGKILL", "SIGHUP"] as const) {
    it(`${signal} of lash while shell runs: no process of the command survives, no side effect after it`, async () => {
      // unsandboxed: `$$` is the host's pid only outside bwrap's PID namespace (the sandboxed
      // case is in sandbox-cli.test.ts)
      box = await sandbox(
        [
          { toolCalls: [{ id: "c1", name: "shell", arguments: { command: COMMAND } }] },
          { text: "never reached" },
        ],
        { shellSandbox: "off" },
      );
      const opts = { env: box.env, cwd: box.cwd };
      const run = start(["-p", "run it", "--output-format", "stream-json"], opts);
      const session = JSON.parse(await run.waitForLine((l) => l.includes('"type":"session"'))) as {
        sessionId: string;
      };
      await run.waitForLine((l) => l.includes('"type":"toolStarted"') && l.includes('"name":"shell"'));
      const pgidFile = join(box.cwd, "pgid");
      await poll(() => existsSync(pgidFile) && readFileSync(pgidFile, "utf8").endsWith("\n"), 10_000);
      const pgid = Number(readFileSync(pgidFile, "utf8").trim());
      expect(groupMembers(pgid).length).toBeGreaterThan(0);

      run.child.kill(signal);
      const r = await run.done;
      // bounded wait until the group is empty; a surviving command writes the markers at 2 s
      await poll(() => groupMembers(pgid).length === 0, 15_000);
      expect(groupMembers(pgid)).toEqual([]);
      expect(existsSync(join(box.cwd, "marker"))).toBe(false);
      expect(existsSync(join(box.cwd, "bg-marker"))).toBe(false);

      if (signal === "SIGHUP") {
        // handled like SIGTERM: the turn is cancelled and committed, exit 130
        expect(r.code).toBe(130);
        const result = jsonLines(r.stdout).at(-1)!;
        expect(result).toMatchObject({ type: "result", outcome: "interrupted", reason: "cancelled" });
        const shellDone = jsonLines(r.stdout).find((l) => l.type === "toolCompleted") as
          | { isError: boolean; durationMs: number }
          | undefined;
        expect(shellDone?.isError).toBe(true);
        // a cancelled call reports how long it ran (at least the cancel grace), not 0 ms
        expect(shellDone?.durationMs).toBeGreaterThan(0);
        const show = await lash(["sessions", "show", session.sessionId], opts);
        expect(show.stdout).toMatch(/← shell \[cancelled\]/);
        expect(show.stdout).not.toContain("cut off");
      } else {
        expect(r.signal).toBe("SIGKILL");
      }
    });
  }
});
