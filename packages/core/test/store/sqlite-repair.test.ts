// A damaged or locked SQLite file (issue 14 item 10), on real files and a real second process:
// quick_check finds a corrupt page, recovery salvages the readable rows into a new file and keeps
// the damaged one, and a write lock held elsewhere is reported with the holder's pid.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import { Effect } from "effect";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkSqliteFile,
  recoverSqliteFile,
  SessionStore,
  SqliteStore,
  sqliteFileUsers,
  sqliteLockHolders,
} from "../../src/index.ts";
import { backfillRuns } from "../../src/store/sqlite-runs.ts";
import { scriptedProvider, withRuntime } from "../support.ts";

const root = mkdtempSync(join(tmpdir(), "lash-repair-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * `sessions` sessions (made by the runtime) with a chain of `nodes` message nodes each (written
 * directly, with long texts, so the nodes table spans many pages); the leaf is the last node.
 */
async function populate(filename: string, sessions: number, nodes: number): Promise<string[]> {
  const ids = await Effect.runPromise(
    withRuntime(
      scriptedProvider([]),
      (rt) =>
        Effect.forEach(Array.from({ length: sessions }), () =>
          Effect.map(rt.createSession({ model: "test/model" }), (s) => s.id),
        ),
      { store: SqliteStore.layer({ filename }) },
    ),
  );
  const db = new Sqlite(filename);
  const insert = db.prepare(
    "INSERT INTO nodes (id, session_id, parent_id, frame_id, kind, turn_id, payload_json, created_at, line, depth) VALUES (?, ?, ?, 'main', 'message', 't1', ?, 0, ?, ?)",
  );
  const line = db.prepare("INSERT INTO node_lines (line, session_id) VALUES (?, ?)");
  db.transaction(() => {
    for (const [i, id] of ids.entries()) {
      let parent: string | null = null;
      line.run(i + 1, id);
      for (let n = 0; n < nodes; n++) {
        const node = `${id}.n${n}`;
        const message = {
          id: node,
          role: n % 2 ? "assistant" : "user",
          parts: [{ type: "text", text: `${n} ${"z".repeat(1500)}` }],
        };
        insert.run(node, id, parent, JSON.stringify(message), i + 1, n);
        parent = node;
      }
      db.prepare("UPDATE sessions SET leaf_id = ? WHERE id = ?").run(parent, id);
    }
    backfillRuns(db); // each session's chain as one run, as a commit writes it
  })();
  db.close();
  return ids;
}

/** Overwrite the middle leaf page of the nodes table with garbage; returns its page number. */
function corruptNodesPage(filename: string): number {
  const db = new Sqlite(filename);
  db.pragma("wal_checkpoint(TRUNCATE)");
  const leaves = db
    .prepare("SELECT pageno FROM dbstat WHERE name = 'nodes' AND pagetype = 'leaf' ORDER BY pageno")
    .all() as { pageno: number }[];
  const size = db.pragma("page_size", { simple: true }) as number;
  db.close();
  expect(leaves.length).toBeGreaterThan(4);
  const page = leaves[Math.floor(leaves.length / 2)]!.pageno;
  const fd = openSync(filename, "r+");
  writeSync(fd, Buffer.alloc(size, 0xa5), 0, size, (page - 1) * size);
  closeSync(fd);
  return page;
}

const listSessions = (filename: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* SessionStore;
        return yield* store.listSessions({ limit: 1000 });
      }).pipe(Effect.provide(SqliteStore.layer({ filename }))),
    ),
  );

describe("a damaged database", () => {
  it("quick_check reports the corrupt page; recovery keeps every readable session and the damaged file", async () => {
    const dir = mkdtempSync(join(root, "dmg-"));
    const filename = join(dir, "lash.db");
    const ids = await populate(filename, 6, 4);
    expect(checkSqliteFile(filename)).toEqual({ ok: true, problems: [] });

    corruptNodesPage(filename);
    const check = checkSqliteFile(filename);
    expect(check.ok).toBe(false);
    expect(check.problems.join(" ")).toMatch(/malformed|corrupt|Tree|page/i);
    // the damage is invisible to opening the file and listing sessions: this is why doctor needs the check
    expect((await listSessions(filename)).length).toBe(6);

    const r = recoverSqliteFile(filename, new Date("2026-01-02T03:04:05.678Z"));
    expect(r.damagedCopy).toBe(`${filename}.damaged-2026-01-02T03-04-05Z`);
    expect(existsSync(r.damagedCopy)).toBe(true);
    expect(existsSync(`${filename}.recovered-2026-01-02T03-04-05Z`)).toBe(false);
    expect(r.sessions).toBe(6);
    const nodes = r.tables.find((t) => t.table === "nodes")!;
    expect(nodes.damaged).toBe(1);
    // rows on both sides of the bad page are kept: far more than the rows before it
    const total = new Sqlite(`${filename}.damaged-2026-01-02T03-04-05Z`, { readonly: true });
    const before = (total.prepare("SELECT count(*) AS n FROM sessions").get() as { n: number }).n;
    total.close();
    expect(before).toBe(6);
    expect(nodes.rows).toBeGreaterThan(0);
    expect(r.incomplete).toBeGreaterThanOrEqual(1);
    expect(r.incomplete).toBeLessThan(6);
    expect(r.tables.find((t) => t.table === "sessions")).toMatchObject({ rows: 6, damaged: 0 });

    // the runs are built from the nodes recovered: the damaged file's name nodes lost with the bad page
    const runIds = (file: string) => {
      const db = new Sqlite(file, { readonly: true });
      const ids = (db.prepare("SELECT ids FROM node_runs").pluck().all() as string[]).flatMap((t) =>
        t.split("\u001f"),
      );
      const nodeIds = new Set(db.prepare("SELECT id FROM nodes").pluck().all() as string[]);
      db.close();
      return { ids, nodeIds };
    };
    const damagedRuns = runIds(r.damagedCopy);
    const recoveredRuns = runIds(filename);
    expect(damagedRuns.ids.some((id) => !recoveredRuns.nodeIds.has(id))).toBe(true);
    expect(recoveredRuns.ids.length).toBeGreaterThan(0);
    expect(recoveredRuns.ids.every((id) => recoveredRuns.nodeIds.has(id))).toBe(true);
    expect(r.tables.some((t) => t.table === "node_runs")).toBe(false);

    // the recovered file is sound, opens with the store and lists every session
    expect(checkSqliteFile(filename)).toEqual({ ok: true, problems: [] });
    expect((await listSessions(filename)).map((s) => s.id).sort()).toEqual([...ids].sort());
  });

  it("recovery refuses while another process has the file open", async () => {
    const dir = mkdtempSync(join(root, "busy-"));
    const filename = join(dir, "lash.db");
    await populate(filename, 1, 1);
    const holder = await holdLock(filename, "BEGIN"); // a reader: a shared lock, no write lock
    try {
      expect(sqliteFileUsers(filename).map((u) => u.pid)).toContain(holder.pid);
      expect(() => recoverSqliteFile(filename, new Date(0))).toThrow(
        new RegExp(`in use by process ${holder.pid}`),
      );
    } finally {
      await holder.release();
    }
    expect(sqliteFileUsers(filename)).toEqual([]);
  });
});

describe("a locked database", () => {
  it("names the process holding the write lock, and the store's error says so", async () => {
    const dir = mkdtempSync(join(root, "lock-"));
    const filename = join(dir, "lash.db");
    await populate(filename, 1, 1);
    const holder = await holdLock(filename, "BEGIN IMMEDIATE");
    try {
      const holders = sqliteLockHolders(filename);
      expect(holders.map((h) => h.pid)).toEqual([holder.pid]);
      expect(holders[0]!.command).toContain("hold-lock");
      const failure = await Effect.runPromise(
        withRuntime(scriptedProvider([]), (rt) => Effect.flip(rt.createSession({ model: "test/model" })), {
          store: SqliteStore.layer({ filename, busyTimeoutMs: 50 }),
        }),
      );
      expect(failure._tag).toBe("StoreError");
      expect(failure.message).toContain(`is locked: process ${holder.pid}`);
      expect(failure.message).toContain("holds its write lock");
    } finally {
      await holder.release();
    }
    expect(sqliteLockHolders(filename)).toEqual([]);
  });
});

/** A real second process that opens `filename` and runs `begin`, until released. */
async function holdLock(filename: string, begin: string): Promise<{ pid: number; release(): Promise<void> }> {
  const file = join(root, "hold-lock.cjs");
  writeFileSync(
    file,
    `
    const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))});
    const db = new Database(process.argv[2]);
    db.exec(${JSON.stringify(begin)});
    if (${JSON.stringify(begin)} === "BEGIN") db.prepare("SELECT count(*) FROM sessions").get();
    process.stdout.write("held\\n");
    process.stdin.on("data", () => { db.exec("ROLLBACK"); db.close(); process.exit(0); });
  `,
  );
  const child = spawn(process.execPath, [file, filename], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`lock holder exited (${code})`)));
  });
  return {
    pid: child.pid!,
    release: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.stdin.write("x");
      }),
  };
}
