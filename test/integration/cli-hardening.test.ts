// The real `lash` process on the rough edges of issue 14 (items 6, 8, 10, 11): MCP server status in
// every output format and big MCP results, typo'd subcommands, a damaged or locked database, errors
// printed once, blank prompts, a workspace at /, LASH_HOME on a file.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { jsonLines, lash, type Sandbox, sandbox } from "./cli-support.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "packages", "plugin-mcp", "test", "fixtures");
const MB = 1024 * 1024;

let box: Sandbox | undefined;
afterEach(async () => {
  await box?.cleanup();
  box = undefined;
});

const sessionCount = async (b: Sandbox): Promise<number> => {
  const r = await lash(["sessions", "list", "--all", "--json"], { env: b.env, cwd: b.cwd });
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as unknown[]).length;
};

describe("lash on the rough edges", () => {
  it("a typo'd subcommand is an error and reaches no model; after -- it is the prompt", async () => {
    box = await sandbox([{ text: "answered" }]);
    const typo = await lash(["sesions", "list"], { env: box.env, cwd: box.cwd, input: "" });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean `lash sessions`?");
    expect(box.server.requests).toHaveLength(0);

    const sent = await lash(["-p", "--", "sesions", "list"], { env: box.env, cwd: box.cwd });
    expect(sent.code).toBe(0);
    expect(sent.stdout).toBe("answered\n");
    expect(JSON.stringify(box.server.requests[0]?.body)).toContain("sesions list");
  });

  it("a provider error is printed once in text mode", async () => {
    box = await sandbox([{ error: { code: "badRequest", message: "model mock does not exist here" } }]);
    const r = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(1);
    expect(r.stderr.split("model mock does not exist here").length - 1).toBe(1);
    expect(r.stderr).toContain("[lash] stopped (providerError)");
  });

  it("a blank prompt is a usage error that leaves no empty session behind", async () => {
    box = await sandbox([{ text: "never" }]);
    for (const [args, input] of [
      [["-p", "   "], undefined],
      [["-p"], "  \n\t\n"],
      [["-p", "--continue", " "], undefined],
    ] as const) {
      const r = await lash(args, { env: box.env, cwd: box.cwd, ...(input !== undefined ? { input } : {}) });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("no prompt");
    }
    expect(await sessionCount(box)).toBe(0);
    expect(box.server.requests).toHaveLength(0);
  });

  it("--cwd / runs with a warning that the tools can reach the whole file system", async () => {
    box = await sandbox([{ text: "ok" }]);
    const r = await lash(["-p", "--cwd", "/", "--no-session", "hi"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("warning: the workspace is /, the root of the file system");
    const plain = await lash(["-p", "--no-session", "hi"], { env: box.env, cwd: box.cwd });
    expect(plain.stderr).not.toContain("warning");
  });

  it("LASH_HOME pointing at a file is a usage error, not an internal EEXIST", async () => {
    box = await sandbox([{ text: "never" }]);
    const file = join(box.cwd, "home-file");
    writeFileSync(file, "");
    const r = await lash(["-p", "hi"], { env: { ...box.env, LASH_HOME: file }, cwd: box.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`LASH_HOME (${file}) cannot be used: it is a file, not a directory`);
    expect(r.stderr).not.toContain("internal error");
  });
});

describe("a continued session and its model", () => {
  it("--continue --model <another> is an error naming both models; the base URL is kept with the session", async () => {
    box = await sandbox([{ text: "one" }, { text: "two" }, { text: "never" }]);
    // no model and no base URL in the environment: only the flags of the first run name them
    const { LASH_MODEL: _m, OPENAI_COMPATIBLE_BASE_URL: url, ...bare } = box.env;
    const first = await lash(["-p", "--model", "openai-compatible/mock", "--base-url", url!, "first"], {
      env: bare,
      cwd: box.cwd,
    });
    expect(first.code).toBe(0);

    const again = await lash(["-p", "--continue", "second"], { env: bare, cwd: box.cwd });
    expect(again.stderr).toBe(again.stderr.replace(/no model provider/, "")); // no provider error
    expect(again.code).toBe(0);
    expect(again.stdout).toBe("two\n");

    const other = await lash(["-p", "--continue", "--model", "openai-compatible/other", "third"], {
      env: bare,
      cwd: box.cwd,
    });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      "runs on openai-compatible/mock; --model openai-compatible/other cannot change it",
    );
    expect(box.server.requests).toHaveLength(2);
  });
});

const writeConfig = (b: Sandbox, config: object) => {
  mkdirSync(b.home, { recursive: true });
  writeFileSync(join(b.home, "config.json"), JSON.stringify(config));
};

describe("MCP servers in -p", () => {
  it("a server that exits at once is reported in text, json and stream-json output", async () => {
    box = await sandbox([{ text: "one" }, { text: "two" }, { text: "three" }]);
    writeConfig(box, {
      mcpServers: {
        dead: { command: process.execPath, args: ["-e", "process.stderr.write('boom\\n'); process.exit(3)"] },
      },
    });
    const text = await lash(["-p", "hi"], { env: box.env, cwd: box.cwd });
    expect(text.code).toBe(0);
    expect(text.stderr).toMatch(
      /\[lash\] MCP server "dead" (failed|is restarting): .*boom.*; its tools are not available to this turn/,
    );

    const json = await lash(["-p", "hi", "--output-format", "json"], { env: box.env, cwd: box.cwd });
    const result = JSON.parse(json.stdout) as { mcp?: { name: string; state: string; reason?: string }[] };
    // failed, or already on its next attempt (backoff) by the time the turn ends
    expect(result.mcp).toEqual([
      expect.objectContaining({ name: "dead", state: expect.stringMatching(/^(failed|restarting)$/) }),
    ]);
    expect(result.mcp?.[0]?.reason).toContain("boom");

    const stream = await lash(["-p", "hi", "--output-format", "stream-json"], { env: box.env, cwd: box.cwd });
    const events = jsonLines(stream.stdout);
    expect(events.find((e) => e.type === "mcpStatus")).toMatchObject({
      servers: [{ name: "dead", state: expect.stringMatching(/^(failed|restarting)$/) }],
    });
    expect(
      events.some(
        (e) =>
          e.type === "notice" && /MCP server "dead" (failed|is restarting): .*boom/.test(String(e.message)),
      ),
    ).toBe(true);
  });

  it("a server that never answers initialize is reported as still starting", async () => {
    box = await sandbox([{ text: "ok" }]);
    writeConfig(box, {
      mcpServers: { silent: { command: process.execPath, args: [join(FIXTURES, "silent-server.ts")] } },
    });
    const r = await lash(["-p", "hi", "--no-session"], { env: box.env, cwd: box.cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'MCP server "silent" is still starting after 10 s (no answer to initialize yet)',
    );
  }, 60_000);

  it("a 5 MB MCP output is stored once in the database", async () => {
    box = await sandbox([
      { toolCalls: [{ name: "mcp__big__big", arguments: { bytes: 5 * MB } }] },
      { text: "done" },
    ]);
    writeConfig(box, {
      mcpServers: { big: { command: process.execPath, args: [join(FIXTURES, "big-server.ts")] } },
    });
    const r = await lash(["-p", "fetch it"], { env: box.env, cwd: box.cwd });
    expect(r.stderr).toContain("[tool] mcp__big__big · ok");
    expect(r.code).toBe(0);
    const db = new Sqlite(join(box.home, "lash.db"), { readonly: true });
    try {
      // the text once, as an artifact (the output budget keeps the full output there); the
      // nodes hold the cut text and the reference (it was held twice, content + value, before)
      const nodes = db.prepare("SELECT sum(length(payload_json)) AS n FROM nodes").get() as { n: number };
      expect(nodes.n).toBeLessThan(200_000);
      const artifacts = db.prepare("SELECT count(*) AS n, sum(size) AS size FROM artifacts").get() as {
        n: number;
        size: number;
      };
      expect(artifacts.n).toBe(1);
      expect(artifacts.size).toBe(5 * MB); // the server's output, byte for byte
      const chunks = db.prepare("SELECT sum(length(data)) AS n FROM artifact_chunks").get() as { n: number };
      expect(chunks.n).toBe(artifacts.size);
      const pages =
        (db.pragma("page_count", { simple: true }) as number) -
        (db.pragma("freelist_count", { simple: true }) as number);
      expect(pages * (db.pragma("page_size", { simple: true }) as number)).toBeLessThan(6 * MB);
    } finally {
      db.close();
    }
  }, 60_000);
});

/** Overwrite the middle leaf page of the nodes table with garbage. */
function corruptNodesPage(filename: string): void {
  const db = new Sqlite(filename);
  db.pragma("wal_checkpoint(TRUNCATE)");
  const leaves = db
    .prepare("SELECT pageno FROM dbstat WHERE name = 'nodes' AND pagetype = 'leaf' ORDER BY pageno")
    .all() as { pageno: number }[];
  const size = db.pragma("page_size", { simple: true }) as number;
  db.close();
  expect(leaves.length).toBeGreaterThan(2);
  const page = leaves[Math.floor(leaves.length / 2)]!.pageno;
  const fd = openSync(filename, "r+");
  writeSync(fd, Buffer.alloc(size, 0xa5), 0, size, (page - 1) * size);
  closeSync(fd);
}

describe("a damaged or locked database", () => {
  it("doctor reports a corrupt page; doctor --repair recovers the sessions and keeps the damaged file", async () => {
    box = await sandbox(Array.from({ length: 4 }, (_, i) => ({ text: `answer ${i} ${"z".repeat(3000)}` })));
    for (let i = 0; i < 4; i++) {
      const r = await lash(["-p", `question ${i} ${"q".repeat(3000)}`], { env: box.env, cwd: box.cwd });
      expect(r.code).toBe(0);
    }
    const db = join(box.home, "lash.db");
    corruptNodesPage(db);

    const doctor = await lash(["doctor", "--json"], { env: box.env, cwd: box.cwd });
    expect(doctor.code).toBe(1);
    const report = JSON.parse(doctor.stdout) as {
      checks: { name: string; status: string; detail: string }[];
    };
    const dbCheck = report.checks.find((c) => c.name === "database")!;
    expect(dbCheck.status).toBe("fail");
    expect(dbCheck.detail).toMatch(/is damaged: .*(malformed|corrupt|Tree|page)/i);
    expect(dbCheck.detail).toContain("lash doctor --repair");

    // reading a session on the damaged page says what to do, without losing every session
    const ids = (
      JSON.parse((await lash(["sessions", "list", "--json"], { env: box.env, cwd: box.cwd })).stdout) as {
        id: string;
      }[]
    ).map((x) => x.id);
    const shown = await Promise.all(
      ids.map((id) => lash(["sessions", "show", id], { env: box!.env, cwd: box!.cwd })),
    );
    const broken = shown.filter((r) => r.code !== 0);
    expect(broken.length).toBeGreaterThan(0);
    for (const r of broken) {
      expect(r.stderr).toContain("is damaged");
      expect(r.stderr).toContain("`lash doctor --repair` recovers what is readable");
      expect(r.stderr).not.toContain("internal error");
    }

    const repair = await lash(["doctor", "--repair"], { env: box.env, cwd: box.cwd });
    expect(repair.stdout).toMatch(/✓ repair +recovered 4 sessions/);
    expect(repair.stdout).toMatch(/✓ database +.* opens \(schema v\d+\); 4 sessions/);
    const kept = readdirSync(box.home).filter((f) => /^lash\.db\.damaged-[\dT-]+Z$/.test(f));
    expect(kept).toHaveLength(1);
    const list = await lash(["sessions", "list", "--json"], { env: box.env, cwd: box.cwd });
    expect(JSON.parse(list.stdout)).toHaveLength(4);
    expect((await lash(["doctor"], { env: box.env, cwd: box.cwd })).stdout).not.toContain("✗ database");
  }, 90_000);

  it("a write lock held by another process: a clear message naming it, not SqlError", async () => {
    box = await sandbox([{ text: "first" }, { text: "never" }]);
    expect((await lash(["-p", "hi"], { env: box.env, cwd: box.cwd })).code).toBe(0);
    const db = join(box.home, "lash.db");
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const D = require(${JSON.stringify(createRequire(join(import.meta.dirname, "..", "..", "packages", "core", "package.json")).resolve("better-sqlite3"))});
         const db = new D(process.argv[1]); db.exec("BEGIN IMMEDIATE"); process.stdout.write("held\\n");
         process.stdin.on("data", () => { db.exec("ROLLBACK"); process.exit(0); });`,
        db,
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve) => holder.stdout!.once("data", () => resolve()));
      const r = await lash(["-p", "--continue", "again"], { env: box.env, cwd: box.cwd });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`is locked: process ${holder.pid} (node -e`);
      expect(r.stderr).toContain("holds its write lock");
      expect(r.stderr).not.toContain("SqlError");
      expect(r.stderr).not.toContain("internal error");
    } finally {
      await release(holder);
    }
  }, 60_000);
});

function release(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.stdin!.write("x");
  });
}

void existsSync;
