// The shell sandbox (issue 17, acceptance 5): bubblewrap through the real shell tool — writes
// outside the workspace fail, inside work, /etc/hostname reads, a loopback server started here
// is unreachable unless the policy allows the network, and a timeout still kills everything.
// The sandboxed tests run only where bwrap can run (the reason is printed otherwise).
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ToolContext, ToolFailure, type ToolOutput } from "@lash/core";
import { type ShellValue, shellTool } from "@lash/tools";
import { Cause, Effect, Exit, Option } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapArgs, bwrapSandbox, bwrapStatus, describeSandbox } from "../src/index.ts";

const status = bwrapStatus();
if (!status.available) console.warn(`[sandbox tests] skipped: bubblewrap cannot run here: ${status.reason}`);

function context(): ToolContext {
  return {
    sessionId: "s1",
    callId: "c1",
    attempt: 1,
    signal: new AbortController().signal,
    progress: () => undefined,
  };
}

const textOf = (out: ToolOutput) => out.content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
const shellValue = (out: ToolOutput) => out.value as ShellValue;

async function failureOf(effect: Effect.Effect<ToolOutput, ToolFailure>): Promise<ToolFailure> {
  const exit = await Effect.runPromiseExit(effect);
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got: ${textOf(exit.value)}`);
  const failure = Cause.failureOption(exit.cause);
  if (Option.isNone(failure) || !(failure.value instanceof ToolFailure))
    throw new Error(`expected a ToolFailure, got ${Cause.pretty(exit.cause)}`);
  return failure.value;
}

let base: string;
let ws: string;
let outside: string;
beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "lash-sandbox-")));
  ws = join(base, "ws");
  outside = join(base, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("bwrapArgs", () => {
  it("binds / read-only, the workspace writable over a private /tmp, no network, dies with its parent", () => {
    const args = bwrapArgs(["bash", "-c", "true"], { workspace: base, cwd: join(base, "sub") });
    const joined = args.join(" ");
    expect(args[0]).toBe("bwrap");
    expect(joined).toContain("--ro-bind / /");
    expect(joined).toContain(`--bind ${base} ${base}`);
    // the workspace is bound after the tmpfs, so a workspace under /tmp is not hidden by it
    expect(args.indexOf("--bind")).toBeGreaterThan(args.indexOf("--tmpfs"));
    expect(args).toContain("--unshare-net");
    expect(args).toContain("--unshare-pid");
    expect(args).toContain("--die-with-parent");
    expect(joined).toContain(`--chdir ${join(base, "sub")}`);
    expect(args.slice(-4)).toEqual(["--", "bash", "-c", "true"]);
    expect(bwrapArgs(["true"], { workspace: base, cwd: base, network: true })).not.toContain("--unshare-net");
  });

  it("the shell tool's preview and description name what the sandbox allows", async () => {
    const tool = shellTool(ws, { sandbox: bwrapSandbox({ workspace: ws }) });
    const preview = await Effect.runPromise(
      tool.preview?.({ command: "ls" }, context()) ?? Effect.die("no preview"),
    );
    expect(preview.command?.sandbox).toBe("bwrap: workspace writable, rest read-only, network off");
    expect(tool.description).toContain("Commands run in a sandbox (bwrap: workspace writable");
  });

  it("describes itself in one line", () => {
    expect(describeSandbox({})).toBe("bwrap: workspace writable, rest read-only, network off");
    expect(bwrapSandbox({ workspace: base, network: true }).describe()).toBe(
      "bwrap: workspace writable, rest read-only, network on",
    );
  });
});

describe("missing bubblewrap", () => {
  it("the shell tool fails with the reason and the fix, and runs nothing unsandboxed", async () => {
    const sandbox = bwrapSandbox({ workspace: ws, binary: join(base, "no-such-bwrap") });
    expect(sandbox.status()).toMatchObject({ available: false });
    const tool = shellTool(ws, { sandbox });
    const failure = await failureOf(tool.execute({ command: "touch ran-anyway" }, context()));
    expect(failure.message).toContain("the sandbox cannot run");
    expect(failure.message).toContain("is not installed or not on PATH");
    expect(failure.message).toContain("apt install bubblewrap");
    expect(failure.message).toContain('"policy": {"sandbox": {"mode": "off"}}');
    expect(existsSync(join(ws, "ran-anyway"))).toBe(false);
  });
});

describe.skipIf(process.platform !== "linux")("bubblewrap that cannot run", () => {
  it("the reason is bwrap's own message (e.g. user namespaces forbidden), cached", async () => {
    // a stand-in for a bwrap that a container stops from creating namespaces
    const fake = join(base, "fake-bwrap");
    writeFileSync(fake, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n", {
      mode: 0o755,
    });
    const sandbox = bwrapSandbox({ workspace: ws, binary: fake });
    const failure = await failureOf(shellTool(ws, { sandbox }).execute({ command: "true" }, context()));
    expect(failure.message).toContain("failed (exit 1: bwrap: No permissions to creating new namespace)");
    expect(failure.message).toContain("apt install bubblewrap");
    // cached: the probe is not run again (the stand-in now succeeds, the answer stays)
    writeFileSync(fake, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    expect(bwrapStatus(fake)).toMatchObject({ available: false });
  });
});

describe.skipIf(!status.available)("bwrap through the shell tool", () => {
  const run = async (command: string, options: { network?: boolean; timeoutMs?: number } = {}) => {
    const sandbox = bwrapSandbox({ workspace: ws, ...(options.network ? { network: true } : {}) });
    const tool = shellTool(ws, { sandbox, killGraceMs: 300 });
    return Effect.runPromise(
      tool.execute({ command, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) }, context()),
    );
  };

  it("writing outside the workspace fails; inside works", async () => {
    // outside a private /tmp (read-only), beside the workspace (under /tmp here: the sandbox's
    // /tmp is its own, so nothing lands on the host's), and $HOME
    const out = await run(
      `touch /var/tmp/lash-escaped-$$; echo "var=$?"; touch ${outside}/escaped; touch "$HOME/lash-escaped-$$"; echo "home=$?"`,
    );
    expect(textOf(out)).toContain("Read-only file system");
    expect(textOf(out)).toContain("var=1");
    expect(textOf(out)).toContain("home=1");
    expect(readdirSync(outside)).toEqual([]);
    expect(readdirSync("/var/tmp").filter((f) => f.startsWith("lash-escaped-"))).toEqual([]);

    const inside = await run("mkdir -p made && echo written > made/in.txt && cat made/in.txt");
    expect(shellValue(inside).exitCode).toBe(0);
    expect(readFileSync(join(ws, "made", "in.txt"), "utf8")).toBe("written\n");
  });

  it("/tmp is private: writable inside, gone afterwards", async () => {
    const name = `lash-sandbox-tmp-${process.pid}`;
    const out = await run(`echo x > /tmp/${name} && cat /tmp/${name}`);
    expect(shellValue(out).exitCode).toBe(0);
    expect(existsSync(join("/tmp", name))).toBe(false);
  });

  it("reading /etc/hostname works", async () => {
    const out = await run("cat /etc/hostname");
    expect(shellValue(out).exitCode).toBe(0);
    expect(shellValue(out).stdout).toBe(readFileSync("/etc/hostname", "utf8"));
  });

  describe("network", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((_req, res) => res.end("hello-from-loopback"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    // bash's /dev/tcp, not this test's node: a checkout under /tmp (CI's clean clone) is hidden
    // by the sandbox's private /tmp, and so would be the node binary in its node_modules
    const fetchCommand = () =>
      `exec 3<>/dev/tcp/127.0.0.1/${port} || { echo "ERR connect"; exit 7; }; ` +
      `printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3; echo "GOT $(tail -n 1 <&3)"`;

    it("is off by default: a loopback server of the host is unreachable", async () => {
      const out = await run(fetchCommand());
      expect(shellValue(out).exitCode).toBe(7);
      expect(shellValue(out).stdout).toContain("ERR ");
      expect(shellValue(out).stdout).not.toContain("hello-from-loopback");
    });

    it("is reachable with network: true", async () => {
      const out = await run(fetchCommand(), { network: true });
      expect(shellValue(out).stdout).toContain("GOT hello-from-loopback");
      expect(shellValue(out).exitCode).toBe(0);
    });
  });

  it("a timeout still kills the command and its background children", async () => {
    // a marker argument finds the background sleep among the host's processes
    const marker = `30.${process.pid}`;
    const out = await run(`sleep ${marker} & echo started; wait`, { timeoutMs: 1500 });
    expect(shellValue(out).timedOut).toBe(true);
    expect(textOf(out)).toContain("started");
    expect(textOf(out)).toContain("timed out after 1500 ms");
    const survivors = readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(marker);
        } catch {
          return false;
        }
      });
    expect(survivors).toEqual([]);
  });
});
