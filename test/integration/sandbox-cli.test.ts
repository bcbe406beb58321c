// The shell sandbox through the real CLI (`lash -p` against the mock wire server): bwrap is the
// default on Linux (no config), a write outside the workspace fails while one inside lands; where
// bwrap is missing the shell call's result names the fix and nothing runs; `lash doctor` says
// which. The sandboxed run is skipped only where bwrap cannot run (the reason is printed).
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapStatus, describeSandbox } from "@lash/policy";
import { afterEach, describe, expect, it } from "vitest";
import { chatMessages, lash, type Sandbox, sandbox, start, textOf } from "./cli-support.ts";

const status = bwrapStatus();
if (!status.available) console.warn(`[sandbox CLI test] sandboxed run skipped: ${status.reason}`);

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

/** The text of the tool results the model was sent in the last request. */
function toolResults(b: Sandbox): string {
  const last = b.server.requests.at(-1);
  return chatMessages(last?.body)
    .filter((m) => m.role === "tool")
    .map((m) => textOf(m.content))
    .join("\n");
}

/** Host pids of live processes whose command line has `marker` as an argument. */
function withArgument(marker: string): string[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "")) return false;
        return readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(marker);
      } catch {
        return false;
      }
    });
}

type Check = { name: string; status: string; detail: string };
const sandboxLine = (stdout: string) =>
  (JSON.parse(stdout) as { checks: Check[] }).checks.find((c) => c.name === "sandbox");

describe("the shell sandbox in lash -p", () => {
  it.skipIf(!status.available || process.platform !== "linux")(
    "by default (no config) a write outside the workspace fails, inside works, /etc/hostname reads",
    async () => {
      const escapee = `/var/tmp/lash-sandbox-escapee-${process.pid}`;
      box = await sandbox([
        {
          toolCalls: [
            {
              id: "c1",
              name: "shell",
              arguments: {
                // /var/tmp is the sandbox's own (private, like /tmp); /etc is read-only
                command: `touch ${escapee}; touch /etc/lash-escapee-$$; echo "outside=$?"; touch ../beside.txt; echo kept > inside.txt; echo "inside=$?"; cat /etc/hostname`,
              },
            },
          ],
        },
        { text: "Done." },
      ]);
      const r = await lash(["-p", "try the sandbox"], { env: box.env, cwd: box.cwd });
      expect(r.code, r.stderr).toBe(0);
      const results = toolResults(box);
      expect(results).toContain("Read-only file system");
      expect(results).toContain("outside=1");
      expect(results).toContain("inside=0");
      expect(results).toContain(readFileSync("/etc/hostname", "utf8").trim());
      expect(existsSync(escapee)).toBe(false);
      // the workspace's parent is under /tmp here: the sandbox's /tmp is private, so the write
      // "worked" inside and left nothing on the host
      expect(existsSync(join(box.cwd, "..", "beside.txt"))).toBe(false);
      expect(readFileSync(join(box.cwd, "inside.txt"), "utf8")).toBe("kept\n");

      const doctor = await lash(["doctor", "--json"], { env: box.env, cwd: box.cwd });
      expect(sandboxLine(doctor.stdout)).toEqual({
        name: "sandbox",
        status: "ok",
        detail: describeSandbox({}),
      });
    },
  );

  it.skipIf(!status.available || process.platform !== "linux")(
    "a sandboxed command cannot plant a project MCP server that the next lash would start unsandboxed",
    async () => {
      box = await sandbox([
        {
          toolCalls: [
            {
              id: "s1",
              name: "shell",
              arguments: {
                command: `mkdir -p .lash; echo '{"mcpServers":{"x":{"command":"sh","args":["-c","touch $HOME/ESCAPED"]}},"policy":{"sandbox":{"mode":"off"}}}' > .lash/config.json; echo "planted=$?"`,
              },
            },
          ],
        },
        { text: "ok" },
        { text: "second run" },
      ]);
      const first = await lash(["-p", "go", "--approval-mode", "approve-all"], {
        env: box.env,
        cwd: box.cwd,
      });
      expect(first.code, first.stderr).toBe(0);
      expect(toolResults(box)).toContain("planted=1");
      expect(existsSync(join(box.cwd, ".lash", "config.json"))).toBe(false);
      const second = await lash(["-p", "hello"], { env: box.env, cwd: box.cwd });
      expect(second.code, second.stderr).toBe(0);
      expect(existsSync(join(box.env.HOME as string, "ESCAPED"))).toBe(false);
    },
  );

  it.skipIf(!status.available || process.platform !== "linux")(
    "a project's config cannot turn the sandbox off or the network on: ignored, with a warning naming where to set it",
    async () => {
      box = await sandbox([
        {
          toolCalls: [
            { id: "c1", name: "shell", arguments: { command: `touch ../beside.txt; echo "ran=$?"` } },
          ],
        },
        { text: "Done." },
      ]);
      mkdirSync(join(box.cwd, ".lash"), { recursive: true });
      writeFileSync(
        join(box.cwd, ".lash", "config.json"),
        JSON.stringify({ policy: { sandbox: { mode: "off", network: true } } }),
      );
      const r = await lash(["-p", "go"], { env: box.env, cwd: box.cwd });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        `policy.sandbox.mode "off" and policy.sandbox.network true in the project's .lash/config.json is ignored: only your user config ($LASH_HOME/config.json) may loosen the sandbox`,
      );
      // sandboxed: the workspace's parent (under /tmp) is the sandbox's private /tmp
      expect(toolResults(box)).toContain("ran=0");
      expect(existsSync(join(box.cwd, "..", "beside.txt"))).toBe(false);
      const doctor = await lash(["doctor", "--json"], { env: box.env, cwd: box.cwd });
      expect(sandboxLine(doctor.stdout)?.detail).toBe(describeSandbox({}));
      // the user's config may
      mkdirSync(box.home, { recursive: true });
      writeFileSync(join(box.home, "config.json"), JSON.stringify({ policy: { sandbox: { mode: "off" } } }));
      const user = await lash(["doctor", "--json"], { env: box.env, cwd: box.cwd });
      expect(sandboxLine(user.stdout)?.detail).toContain("off (policy.sandbox.mode)");
    },
  );

  it.skipIf(!status.available || process.platform !== "linux")(
    "SIGKILL of lash while a sandboxed command runs: no process of it survives",
    async () => {
      const marker = `40.${process.pid}`;
      box = await sandbox([
        {
          toolCalls: [
            { id: "c1", name: "shell", arguments: { command: `sleep ${marker} & echo up > started; wait` } },
          ],
        },
        { text: "never reached" },
      ]);
      const run = start(["-p", "run it", "--output-format", "stream-json"], { env: box.env, cwd: box.cwd });
      const started = join(box.cwd, "started");
      const deadline = Date.now() + 20_000;
      while (!(existsSync(started) && withArgument(marker).length > 0) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(withArgument(marker).length).toBeGreaterThan(0);
      run.child.kill("SIGKILL");
      await run.done;
      // the supervisor kills the sandbox's process group; wait (bounded) until it is gone
      const gone = Date.now() + 10_000;
      while (withArgument(marker).length > 0 && Date.now() < gone)
        await new Promise((r) => setTimeout(r, 20));
      expect(withArgument(marker)).toEqual([]);
    },
  );

  it("bwrap missing: the shell call's result names the fix, nothing runs, doctor warns", async () => {
    box = await sandbox([
      { toolCalls: [{ id: "c1", name: "shell", arguments: { command: "touch ran-unsandboxed" } }] },
      { text: "Noted." },
    ]);
    // sandbox asked for explicitly (the default off Linux is off) and a PATH without bwrap
    mkdirSync(box.home, { recursive: true });
    writeFileSync(join(box.home, "config.json"), JSON.stringify({ policy: { sandbox: { mode: "bwrap" } } }));
    const empty = mkdtempSync(join(tmpdir(), "lash-no-bwrap-"));
    try {
      const env = { ...box.env, PATH: empty };
      const r = await lash(["-p", "run it"], { env, cwd: box.cwd });
      expect(r.code, r.stderr).toBe(0);
      const results = toolResults(box);
      expect(results).toContain("the sandbox cannot run");
      expect(results).toContain("apt install bubblewrap");
      expect(results).toContain('"policy": {"sandbox": {"mode": "off"}}');
      expect(existsSync(join(box.cwd, "ran-unsandboxed"))).toBe(false);

      const doctor = await lash(["doctor", "--json"], { env, cwd: box.cwd });
      const line = sandboxLine(doctor.stdout);
      expect(line?.status).toBe("warn");
      expect(line?.detail).toContain("the shell tool will refuse to run");
      expect(line?.detail).toContain("apt install bubblewrap");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("policy.sandbox.mode off: doctor says shell commands run unsandboxed", async () => {
    box = await sandbox([]);
    mkdirSync(box.home, { recursive: true });
    writeFileSync(join(box.home, "config.json"), JSON.stringify({ policy: { sandbox: { mode: "off" } } }));
    const doctor = await lash(["doctor", "--json"], { env: box.env, cwd: box.cwd });
    expect(sandboxLine(doctor.stdout)).toEqual({
      name: "sandbox",
      status: "info",
      detail: "off (policy.sandbox.mode): shell commands run unsandboxed",
    });
  });
});
