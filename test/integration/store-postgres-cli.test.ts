// `lash --store postgres://…` against a real Postgres 15 (started for this file): two
// `lash -p` processes continue one session stored in Postgres, config `store` selects it
// too, nothing is written to the SQLite file, and a bad store value is a usage error.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { postgresUnavailable, startPostgres, type TestPostgres } from "@lash/store-postgres/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chatMessages, jsonLines, lash, type Sandbox, sandbox, textOf } from "./cli-support.ts";
import { api, type Daemon, startDaemon, stopDaemon } from "./serve-support.ts";

if (postgresUnavailable) console.warn(postgresUnavailable);

let pg: TestPostgres | undefined;
let box: Sandbox | undefined;
let daemon: Daemon | undefined;

beforeAll(async () => {
  if (!postgresUnavailable) pg = await startPostgres();
}, 120_000);
afterAll(() => pg?.stop());
afterEach(async () => {
  if (daemon) await stopDaemon(daemon);
  daemon = undefined;
  await box?.cleanup();
  box = undefined;
});

describe.skipIf(postgresUnavailable !== undefined)("lash --store postgres://…", () => {
  it("-p twice with --continue continues the same session, stored in Postgres; config store selects it too", async () => {
    box = await sandbox();
    box.server.respondWith((req) => ({ text: `reply ${req.index + 1}` }));
    const url = pg!.createDatabase();
    const db = new URL(url).pathname.slice(1);
    const opts = { env: box.env, cwd: box.cwd };
    const json = (r: { stdout: string }) => jsonLines(r.stdout).at(-1)!;

    const a = await lash(["-p", "first", "--store", url, "--output-format", "json"], opts);
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    const b = await lash(["-p", "second", "--continue", "--store", url, "--output-format", "json"], opts);
    expect(b.code).toBe(0);
    expect(json(b).sessionId).toBe(json(a).sessionId);
    expect(chatMessages(box.server.requests[1]!.body).map((m) => textOf(m.content))).toEqual(
      expect.arrayContaining(["first", "reply 1", "second"]),
    );
    // the session lives in Postgres, not in the SQLite file
    expect(existsSync(join(box.home, "lash.db"))).toBe(false);
    expect(pg!.psql("SELECT id, turn_count, head_revision FROM sessions", db).trim()).toBe(
      `${json(a).sessionId}|2|2`,
    );

    // config `store` (no flag) selects the same database
    // (sandbox() may have written a config already: keep what it holds)
    const configFile = join(box.home, "config.json");
    const config = existsSync(configFile) ? JSON.parse(readFileSync(configFile, "utf8")) : {};
    mkdirSync(box.home, { recursive: true });
    writeFileSync(configFile, JSON.stringify({ ...config, store: url }));
    const c = await lash(["-p", "third", "--continue", "--output-format", "json"], opts);
    expect(c.code).toBe(0);
    expect(json(c).sessionId).toBe(json(a).sessionId);
    expect(chatMessages(box.server.requests[2]!.body).map((m) => textOf(m.content))).toEqual(
      expect.arrayContaining(["first", "second", "third"]),
    );
    expect(pg!.psql("SELECT turn_count FROM sessions", db).trim()).toBe("3");
    // `--store sqlite` overrides the config: the default file, and Postgres is not touched
    const d = await lash(["-p", "fourth", "--store", "sqlite", "--output-format", "json"], opts);
    expect(d.code).toBe(0);
    expect(json(d).sessionId).not.toBe(json(a).sessionId);
    expect(existsSync(join(box.home, "lash.db"))).toBe(true);
    expect(pg!.psql("SELECT count(*), sum(turn_count) FROM sessions", db).trim()).toBe("1|3");
    // `lash sessions --store`: the Postgres session, not the SQLite one
    const listed = await lash(["sessions", "list", "--store", url, "--json"], opts);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id)).toEqual([
      json(a).sessionId as string,
    ]);
    const shown = await lash(["sessions", "show", json(a).sessionId as string, "--store", url], opts);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("third");
    // with config `store` set, no flag reads Postgres; `--store sqlite` reads the file
    const byConfig = await lash(["sessions", "list", "--json"], opts);
    expect((JSON.parse(byConfig.stdout) as { id: string }[]).map((s) => s.id)).toEqual([
      json(a).sessionId as string,
    ]);
    const sqliteList = await lash(["sessions", "list", "--store", "sqlite", "--json"], opts);
    expect((JSON.parse(sqliteList.stdout) as { id: string }[]).map((s) => s.id)).toEqual([
      json(d).sessionId as string,
    ]);
  });

  it("lash serve --store: the daemon's sessions are in Postgres; a lash -p process resumes one by id", async () => {
    box = await sandbox();
    box.server.respondWith((req) => ({ text: `reply ${req.index + 1}` }));
    const url = pg!.createDatabase();
    const db = new URL(url).pathname.slice(1);
    daemon = await startDaemon(box, ["--store", url]);
    const id = (await api(daemon.url, "POST", "/v1/sessions", {})).body.id as string;
    const run = await api(daemon.url, "POST", `/v1/sessions/${id}/turns?wait=true`, {
      text: "from the daemon",
    });
    expect(run.body).toMatchObject({ state: "completed", text: "reply 1" });
    expect(pg!.psql("SELECT id, turn_count FROM sessions", db).trim()).toBe(`${id}|1`);
    const r = await lash(["-p", "from the cli", "--resume", id, "--store", url, "--output-format", "json"], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout).at(-1)!.sessionId).toBe(id);
    expect(chatMessages(box.server.requests[1]!.body).map((m) => textOf(m.content))).toEqual(
      expect.arrayContaining(["from the daemon", "reply 1", "from the cli"]),
    );
    // the daemon reads the turn the other process committed
    const session = (await api(daemon.url, "GET", `/v1/sessions/${id}`)).body;
    expect(session.turnCount).toBe(2);
    expect(existsSync(join(box.home, "lash.db"))).toBe(false);
  });

  it("a store value that is not one is a usage error naming the forms; a server that is not there names the URL without its password", async () => {
    box = await sandbox([{ text: "never" }]);
    const opts = { env: box.env, cwd: box.cwd };
    const bad = await lash(["-p", "hi", "--store", "mysql://u:pw@h/db"], opts);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not a store");
    expect(bad.stderr).toContain("postgres://user:password@host:5432/database");
    expect(bad.stderr).not.toContain(":pw@");
    const gone = await lash(["-p", "hi", "--store", "postgres://u:hunter2@127.0.0.1:1/db"], opts);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("cannot connect to the Postgres store");
    expect(gone.stderr).not.toContain("hunter2");
    expect(box.server.requests).toHaveLength(0);
  });
});
