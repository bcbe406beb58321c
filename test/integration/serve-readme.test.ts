// The README's `lash serve` quick start, run as written (issue 19, acceptance 7): the fenced
// blocks marked `<!-- serve-quickstart:NAME -->` are taken from README.md; the token and curl
// blocks run in bash (with `lash` the CLI of this checkout), the daemon is the serve block's
// command on a free port (the blocks' 7777 replaced by it), the model is the mock wire server,
// and the TypeScript client example runs with Node.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAIN, type Sandbox, type Spawned, sandbox, start } from "./cli-support.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The block after `<!-- serve-quickstart:name -->`. */
function block(name: string): { lang: string; code: string } {
  const marker = `<!-- serve-quickstart:${name} -->`;
  const at = README.indexOf(marker);
  if (at < 0) throw new Error(`README.md has no ${marker}`);
  const m = /^\s*```(\w+)\n([\s\S]*?)\n```/.exec(README.slice(at + marker.length));
  if (!m) throw new Error(`no fenced block after ${marker}`);
  return { lang: m[1]!, code: m[2]! };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Runs `script` in bash with `lash` as this checkout's CLI; its stdout, stderr and exit code. */
function bash(script: string, box: Sandbox, env: NodeJS.ProcessEnv = {}) {
  const prelude = `set -euo pipefail\nlash() { ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)} "$@"; }\n`;
  return run("bash", ["-c", prelude + script], { ...box.env, ...env }, box.cwd);
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The serve block's `lash serve …` line as argv, on a free port. */
function serveArgs(): string[] {
  const line = block("serve")
    .code.split("\n")
    .map((l) => l.replace(/#.*$/, "").trim())
    .find((l) => l.startsWith("lash serve"));
  if (line === undefined) throw new Error("the serve block has no `lash serve` line");
  const args = line.split(/\s+/).slice(1);
  return [...args, "--port", "0"];
}

describe("README: lash serve quick start", { timeout: 120_000 }, () => {
  it("the token, serve and curl blocks work as written, and so does the client example", async () => {
    const box = await sandbox([
      { text: "Hello from lash serve!", textChunks: 5 },
      { toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "hello, approved\n" } }] },
      { text: "Wrote hello.txt." },
      { text: "Hello from the client!", textChunks: 3 },
    ]);
    cleanups.push(() => box.cleanup());
    // the approvals block's config: ask before every write_file (beside what the sandbox wrote)
    const configFile = join(box.home, "config.json");
    const config = existsSync(configFile)
      ? (JSON.parse(readFileSync(configFile, "utf8")) as Record<string, object>)
      : {};
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      configFile,
      JSON.stringify({
        ...config,
        policy: { ...config.policy, tools: { write_file: { approval: "always" } } },
      }),
    );
    expect(README).toContain('{"policy":{"tools":{"write_file":{"approval":"always"}}}}');
    expect(block("token").lang).toBe("bash");
    expect(block("curl").lang).toBe("bash");
    expect(block("client").lang).toBe("ts");

    // 1. the token (stdout of the block is nothing: the token goes into the variable)
    const token = await bash(`${block("token").code}\nprintf %s "$LASH_SERVER_TOKEN"`, box);
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout).toMatch(/^\S{20,}$/);
    const env = { LASH_SERVER_TOKEN: token.stdout };

    // 2. the daemon, as the serve block starts it (the same LASH_HOME, so the same serve.db)
    const daemon: Spawned = start(serveArgs(), { env: box.env, cwd: box.cwd });
    cleanups.push(async () => {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill("SIGKILL");
      await daemon.done;
    });
    const listening = await daemon.waitForLine(
      (l) => l.startsWith("lash serve: listening on ") || l.startsWith("__exited__"),
    );
    const port = /http:\/\/127\.0\.0\.1:(\d+)/.exec(listening)?.[1];
    expect(port, listening).toBeDefined();
    const onPort = (code: string) => code.replaceAll("127.0.0.1:7777", `127.0.0.1:${port}`);

    // 3. the curl block, then the approvals block (it uses the curl block's S, AUTH and json)
    const both = await bash(
      `${onPort(block("curl").code)}\necho __approvals__\n${onPort(block("approvals").code)}`,
      box,
      env,
    );
    expect(both.code, both.stderr).toBe(0);
    const [curlOut = "", approvalsOut = ""] = both.stdout.split("__approvals__\n");
    const curl = { stdout: curlOut };
    expect(curl.stdout).toContain('{"ok":true}');
    // the full stream: frames id/event/data, text deltas, ending with runFinished
    const frames = [...curl.stdout.matchAll(/^id: (\d+)\nevent: (\w+)\ndata: (.*)$/gm)].map((m) => ({
      seq: Number(m[1]),
      type: m[2]!,
      data: JSON.parse(m[3]!) as { seq: number; type: string; data: { text?: string } },
    }));
    const stream = frames.slice(0, frames.findIndex((f) => f.type === "runFinished") + 1);
    expect(stream.length).toBeGreaterThan(3);
    expect(stream.at(-1)?.type).toBe("runFinished");
    expect(stream.every((f) => f.data.seq === f.seq && f.data.type === f.type)).toBe(true);
    const text = stream
      .filter((f) => f.type === "textDelta")
      .map((f) => f.data.data.text)
      .join("");
    expect(text).toBe("Hello from lash serve!");
    // the reconnect after event 3: exactly the ids after 3 of the same stream
    const after3 = stream.filter((f) => f.seq > 3).map((f) => `id: ${f.seq}`);
    const idLines = curl.stdout.split("\n").filter((l) => l.startsWith("id: "));
    expect(idLines.slice(stream.length)).toEqual(after3);
    expect(curl.stdout.trimEnd().endsWith("completed")).toBe(true);

    // approvals: the pending one listed (its tool and arguments), approved, the run finished, the file written
    const [pending = "", state, finished, written, agents] = approvalsOut.trimEnd().split("\n");
    const listed = JSON.parse(pending) as {
      approvals: { id: string; state: string; items: { tool: string }[] }[];
    };
    expect(listed.approvals).toHaveLength(1);
    expect(listed.approvals[0]).toMatchObject({ state: "pending", items: [{ tool: "write_file" }] });
    expect(state).toBe("approved");
    expect(finished).toBe("event: runFinished");
    expect(written).toBe("hello, approved");
    expect(readFileSync(join(box.cwd, "hello.txt"), "utf8")).toBe("hello, approved\n");
    expect(JSON.parse(agents ?? "")).toEqual({ agents: [] });

    // 4. the client example, with Node (TypeScript as written; @lash/client of this checkout)
    const dir = mkdtempSync(join(ROOT, "test", "integration", ".readme-client-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "example.ts");
    writeFileSync(file, onPort(block("client").code));
    const client = await run(process.execPath, [file], { ...box.env, ...env }, box.cwd);
    expect(client.code, client.stderr).toBe(0);
    expect(client.stdout).toMatch(/^Hello from the client!\ncompleted after \d+ events\nNotFound \w+\n$/);
    expect(box.server.requests).toHaveLength(4);
  });
});
