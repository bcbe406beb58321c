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
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from "node:net";
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

  it("hides host sockets and lash's home under tmpfs, keeps lash's and git's files read-only", () => {
    const w = join(base, "args-ws");
    const home = join(base, "args-home");
    const rt = join(base, "args-run");
    mkdirSync(join(w, ".git"), { recursive: true });
    mkdirSync(join(w, ".lash"), { recursive: true });
    writeFileSync(join(w, "lash.yaml"), "");
    mkdirSync(home, { recursive: true });
    mkdirSync(rt, { recursive: true });
    // home and runtime dir under /tmp are already hidden by the private /tmp: no second tmpfs
    const underTmp = bwrapArgs(["true"], { workspace: w, cwd: w, home, runtimeDir: rt }).join(" ");
    expect(underTmp).not.toContain(`--tmpfs ${home}`);
    const args = bwrapArgs(["true"], { workspace: w, cwd: w, home: "/usr/share", runtimeDir: "/usr/lib" });
    const joined = args.join(" ");
    for (const d of ["/run", "/var/tmp", "/usr/share", "/usr/lib"]) expect(joined).toContain(`--tmpfs ${d} `);
    // /var/run is a link to /run on most systems: covered once
    expect(args.filter((a) => a === "/run")).toHaveLength(existsSync("/run") ? 1 : 0);
    // the workspace after the tmpfs mounts, its protected entries (those that exist) after it
    const bind = args.indexOf("--bind");
    expect(bind).toBeGreaterThan(args.lastIndexOf("--tmpfs"));
    for (const p of [".git", ".lash", "lash.yaml"]) expect(args.indexOf(join(w, p))).toBeGreaterThan(bind);
    expect(joined).toContain(`--ro-bind ${join(w, ".lash")} ${join(w, ".lash")}`);
    expect(joined).not.toContain(join(w, "lash.json"));
    // a home inside the workspace cannot be hidden whole: its credentials and database are
    const inner = join(w, "home");
    mkdirSync(inner, { recursive: true });
    writeFileSync(join(inner, "auth.json"), "{}");
    const nested = bwrapArgs(["true"], { workspace: w, cwd: w, home: inner }).join(" ");
    expect(nested).not.toContain(`--tmpfs ${inner}`);
    expect(nested).toContain(`--ro-bind /dev/null ${join(inner, "auth.json")}`);
  });

  it("the shell tool's preview and description name what the sandbox allows", async () => {
    const tool = shellTool(ws, { sandbox: bwrapSandbox({ workspace: ws }) });
    const preview = await Effect.runPromise(
      tool.preview?.({ command: "ls" }, context()) ?? Effect.die("no preview"),
    );
    expect(preview.command?.sandbox).toBe(describeSandbox({}));
    expect(tool.description).toContain("Commands run in a sandbox (bwrap: workspace writable");
  });

  it("describes itself in one line", () => {
    expect(describeSandbox({})).toBe(
      "bwrap: workspace writable (not .lash, .git, lash.yaml), rest read-only, no host sockets, network off",
    );
    expect(bwrapSandbox({ workspace: base, network: true }).describe()).toContain("network on");
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
      `touch /var/tmp/lash-escaped-$$; touch /etc/lash-escaped-$$; echo "etc=$?"; touch ${outside}/escaped; touch "$HOME/lash-escaped-$$"; echo "home=$?"`,
    );
    expect(textOf(out)).toContain("Read-only file system");
    expect(textOf(out)).toContain("etc=1");
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

  describe("what a command must not reach", () => {
    // a directory outside /tmp (the sandbox's /tmp is private anyway): beside this test file
    let scratch: string;
    let proj: string;
    const servers: NetServer[] = [];
    beforeAll(() => {
      scratch = realpathSync(mkdtempSync(join(import.meta.dirname, ".sandbox-")));
      proj = join(base, "proj");
      mkdirSync(join(proj, ".git", "hooks"), { recursive: true });
      writeFileSync(join(proj, "lash.yaml"), "agents: []\n");
    });
    afterAll(() => {
      for (const s of servers) s.close();
      rmSync(scratch, { recursive: true, force: true });
    });
    const runIn = async (
      workspace: string,
      command: string,
      extra: { home?: string; runtimeDir?: string } = {},
    ) => {
      const sandbox = bwrapSandbox({ workspace, ...extra });
      return Effect.runPromise(shellTool(workspace, { sandbox }).execute({ command }, context()));
    };
    /** A Unix socket server in `dir` that records what it receives. */
    const socketServer = async (dir: string) => {
      const path = join(dir, "s.sock");
      const got: string[] = [];
      const server = createNetServer((c) => c.on("data", (d) => got.push(String(d))));
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(path, resolve));
      return { path, got };
    };
    const connect = (path: string) =>
      `${process.execPath} -e 'const s=require("net").connect(${JSON.stringify(path)},()=>{s.write("hello");s.end();console.log("CONNECTED")});s.on("error",e=>console.log("ERR",e.code))'`;

    it("cannot plant project config, a build, git hooks or a project file; the rest of the workspace is writable", async () => {
      // no .lash yet: it must not become creatable
      const out = await runIn(
        proj,
        [
          `mkdir -p .lash && echo '{"mcpServers":{}}' > .lash/config.json; echo "lash=$?"`,
          `mkdir -p .lash/build; echo "build=$?"`,
          `echo '#!/bin/sh' > .git/hooks/pre-commit; echo "hook=$?"`,
          `echo 'x' >> lash.yaml; echo "yaml=$?"`,
          `echo ok > other.txt; echo "other=$?"`,
        ].join("; "),
      );
      const text = textOf(out);
      for (const k of ["lash", "build", "hook", "yaml"]) expect(text).toContain(`${k}=1`);
      expect(text).toContain("other=0");
      expect(existsSync(join(proj, ".lash", "config.json"))).toBe(false);
      expect(existsSync(join(proj, ".lash", "build"))).toBe(false);
      expect(existsSync(join(proj, ".git", "hooks", "pre-commit"))).toBe(false);
      expect(readFileSync(join(proj, "lash.yaml"), "utf8")).toBe("agents: []\n");
      expect(readFileSync(join(proj, "other.txt"), "utf8")).toBe("ok\n");
    });

    it.skipIf(process.execPath.startsWith(tmpdir()))(
      "host Unix sockets in /var/tmp and $XDG_RUNTIME_DIR are unreachable",
      async () => {
        const varTmp = mkdtempSync("/var/tmp/lash-sock-");
        try {
          const inVarTmp = await socketServer(varTmp);
          const rt = mkdtempSync(join(scratch, "rt-"));
          const inRuntime = await socketServer(rt);
          // reachable without the sandbox (the command is right)
          const plain = await Effect.runPromise(
            shellTool(ws).execute({ command: connect(inRuntime.path) }, context()),
          );
          expect(shellValue(plain).stdout).toContain("CONNECTED");
          for (const path of [inVarTmp.path, inRuntime.path]) {
            const out = await runIn(ws, connect(path), { runtimeDir: rt });
            expect(shellValue(out).stdout).toContain("ERR ENOENT");
          }
          expect(inVarTmp.got).toEqual([]);
        } finally {
          rmSync(varTmp, { recursive: true, force: true });
        }
      },
    );

    it("lash's home is hidden: auth.json and lash.db are unreadable, outside the workspace or inside it", async () => {
      const home = mkdtempSync(join(scratch, "home-"));
      writeFileSync(join(home, "auth.json"), '{"token":"FAKE-codex-token"}');
      writeFileSync(join(home, "lash.db"), "FAKE-db");
      const out = await runIn(ws, `cat ${home}/auth.json ${home}/lash.db; ls ${home}`, { home });
      expect(textOf(out)).not.toContain("FAKE-");
      expect(textOf(out)).toContain("No such file");
      // the workspace contains the home: the files read empty
      const innerHome = join(proj, "lash-home");
      mkdirSync(innerHome, { recursive: true });
      writeFileSync(join(innerHome, "auth.json"), '{"token":"FAKE-codex-token"}');
      writeFileSync(join(innerHome, "lash.db"), "FAKE-db");
      const inner = await runIn(proj, "cat lash-home/auth.json lash-home/lash.db; echo end", {
        home: innerHome,
      });
      expect(textOf(inner)).not.toContain("FAKE-");
      expect(textOf(inner)).toContain("end");
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
