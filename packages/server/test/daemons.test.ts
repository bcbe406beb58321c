// The daemons sharing a state db: who is alive, over a real SQLite file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { registerDaemon, STALE_MS } from "../src/daemons.ts";
import { openStateDb } from "../src/db.ts";

const dirs: string[] = [];
const dbs: Database.Database[] = [];
afterEach(() => {
  for (const d of dbs.splice(0)) if (d.open) d.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fresh(): Database.Database {
  const dir = mkdtempSync(join(tmpdir(), "lash-serve-daemons-"));
  dirs.push(dir);
  const db = openStateDb(join(dir, "serve.db"));
  dbs.push(db);
  return db;
}

describe("daemons on one state db", () => {
  it("a live process on this host is alive; a dead pid, our own pid (reused) or a closed daemon is not", () => {
    const db = fresh();
    const me = registerDaemon(db, { host: "h1" });
    // the test runner's parent process: alive, on this host
    const other = registerDaemon(db, { host: "h1", pid: process.ppid });
    const dead = registerDaemon(db, { host: "h1", pid: 2 ** 22 + 7 });
    const reused = registerDaemon(db, { host: "h1", pid: process.pid });
    expect(me.alive(me.id)).toBe(true);
    expect(me.alive(other.id)).toBe(true);
    expect(me.alive(dead.id)).toBe(false);
    expect(me.alive(reused.id)).toBe(false);
    expect(me.alive(null)).toBe(false);
    expect(me.alive("no-such-daemon")).toBe(false);
    other.close();
    expect(me.alive(other.id)).toBe(false);
    for (const r of [me, dead, reused]) r.close();
  });

  it("on another host the heartbeat tells: alive until it is older than STALE_MS", () => {
    const db = fresh();
    let now = 1_000_000;
    const me = registerDaemon(db, { host: "h1", now: () => now });
    const remote = registerDaemon(db, { host: "h2", pid: 2 ** 22 + 7, now: () => now });
    expect(me.alive(remote.id)).toBe(true);
    now += STALE_MS + 1;
    expect(me.alive(remote.id)).toBe(false);
    me.close();
    remote.close();
  });
});
