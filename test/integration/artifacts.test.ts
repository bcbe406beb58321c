// Issue 20, acceptance 4: a 5 MB tool output through the real `lash -p` against the mock
// wire server. Two `shell` calls print the same 5 MB; the output budget keeps it once as an
// artifact (rows and sizes checked in the SQLite file), the model pages through it with
// read_artifact (the pages are in the mock's request log), `lash export` → `lash import`
// into another LASH_HOME carries it, and `lash sessions gc` removes it only once the session
// that refers to it is deleted.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chatMessages,
  jsonLines,
  lash,
  SANDBOX_POLICY,
  type Sandbox,
  sandbox,
  textOf,
} from "./cli-support.ts";

const N = 731_000;
const COMMAND = `seq 1 ${N}`;
// what shell returns for it: the output without its last newline, then the exit code
const OUTPUT = `${Array.from({ length: N }, (_, i) => String(i + 1)).join("\n")}\n[exit code: 0]`;
const ID = createHash("sha256").update(OUTPUT, "utf8").digest("hex");
const SIZE = Buffer.byteLength(OUTPUT);

let box: Sandbox;
let sessionId: string;

/** Counts in a lash database, read-only. */
function counts(dbFile: string) {
  const db = new Database(dbFile, { readonly: true });
  try {
    const one = <T>(q: string) => db.prepare(q).get() as T;
    return {
      artifacts: one<{ n: number; size: number | null }>(
        "SELECT count(*) AS n, sum(size) AS size FROM artifacts",
      ),
      chunks: one<{ n: number; bytes: number | null }>(
        "SELECT count(*) AS n, sum(length(data)) AS bytes FROM artifact_chunks",
      ),
      nodeBytes: one<{ bytes: number }>("SELECT sum(length(payload_json)) AS bytes FROM nodes").bytes,
      // the journal: rows an older lash wrote, and the files of turns in flight (none once committed)
      journalBytes:
        (one<{ bytes: number | null }>("SELECT sum(length(outcome_json)) AS bytes FROM journal").bytes ?? 0) +
        (existsSync(`${dbFile}.turns`)
          ? readdirSync(`${dbFile}.turns`).reduce((n, f) => n + statSync(join(`${dbFile}.turns`, f)).size, 0)
          : 0),
    };
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  expect(SIZE).toBeGreaterThan(5_000_000);
  box = await sandbox([
    {
      toolCalls: [
        { id: "c1", name: "shell", arguments: { command: COMMAND } },
        { id: "c2", name: "shell", arguments: { command: COMMAND } },
      ],
    },
    { toolCalls: [{ id: "r1", name: "read_artifact", arguments: { id: ID, limit: 50 } }] },
    { toolCalls: [{ id: "r2", name: "read_artifact", arguments: { id: ID, offset: 700_000, limit: 5 } }] },
    { toolCalls: [{ id: "r3", name: "read_artifact", arguments: { id: ID, offset: N + 2 } }] },
    { text: "Read it." },
  ]);
  mkdirSync(box.home, { recursive: true });
  // the shell keeps the whole 5 MB (its own cap is 30 kB by default)
  writeFileSync(
    join(box.home, "config.json"),
    JSON.stringify({ policy: SANDBOX_POLICY, shell: { maxOutputBytes: 6_000_000 } }),
  );
  const r = await lash(["-p", "print the numbers", "--output-format", "json"], {
    env: box.env,
    cwd: box.cwd,
  });
  expect(r.code, r.stderr).toBe(0);
  const result = jsonLines(r.stdout)[0]!;
  expect(result).toMatchObject({ outcome: "finished", toolCalls: 5 });
  sessionId = result.sessionId as string;
}, 120_000);

afterAll(async () => {
  await box?.cleanup();
});

const toolMessages = (i: number) =>
  chatMessages(box.server.requests[i]!.body)
    .filter((m) => m.role === "tool")
    .map((m) => ({ id: m.tool_call_id, text: textOf(m.content) }));

describe("artifacts: a 5 MB tool output", () => {
  it("is stored once, chunked, for both calls that printed it; the graph holds a reference, not the text", () => {
    const c = counts(join(box.home, "lash.db"));
    expect(c.artifacts).toEqual({ n: 1, size: SIZE });
    expect(c.chunks).toEqual({ n: Math.ceil(SIZE / (256 * 1024)), bytes: SIZE });
    // both results, their shell values and details, and every other node: far less than one copy
    expect(c.nodeBytes).toBeLessThan(200_000);
    expect(c.journalBytes ?? 0).toBe(0);
  });

  it("the model saw the cut tail and the artifact id, then read pages of it with read_artifact", () => {
    expect(box.server.requests).toHaveLength(5);
    const cut = toolMessages(1);
    expect(cut.map((m) => m.id)).toEqual(["c1", "c2"]);
    // every later request carries the cut views, never the whole output
    for (const req of box.server.requests) expect(req.rawBody.length).toBeLessThan(100_000);
    for (const m of cut) {
      expect(m.text).toContain(`stored as artifact ${ID}`);
      expect(m.text).toContain(`read_artifact {"id": "${ID}"`);
      expect(m.text).toContain(`${N}\n[exit code: 0]`);
      expect(m.text.length).toBeLessThan(20_000);
    }
    const first = toolMessages(2).find((m) => m.id === "r1")!.text;
    expect(first.split("\n")[0]).toBe("     1\t1");
    expect(first).toContain("    50\t50\n");
    expect(first).toContain(`(lines 1–50 of ${N + 1}; continue with offset 51)`);
    const later = toolMessages(3).find((m) => m.id === "r2")!.text;
    expect(later.split("\n").slice(0, 5)).toEqual(
      [700000, 700001, 700002, 700003, 700004].map((n) => `${n}\t${n}`),
    );
    const past = toolMessages(4).find((m) => m.id === "r3")!.text;
    expect(past).toContain(`offset ${N + 2} is past the end`);
    expect(past).toContain(`Use an offset from 1 to ${N + 1}`);
  });

  it("survives lash export → lash import into another LASH_HOME", async () => {
    const file = join(box.cwd, "session.json");
    const ex = await lash(["export", sessionId, "--format", "json", "-o", file], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(ex.code, ex.stderr).toBe(0);
    const exported = JSON.parse(readFileSync(file, "utf8")) as {
      artifacts?: { id: string; size: number; data: string }[];
    };
    expect(exported.artifacts?.map((a) => [a.id, a.size])).toEqual([[ID, SIZE]]);
    const otherHome = join(box.home, "..", "other-home");
    const env = { ...box.env, LASH_HOME: otherHome };
    const im = await lash(["import", file], { env, cwd: box.cwd });
    expect(im.code, im.stderr).toBe(0);
    const c = counts(join(otherHome, "lash.db"));
    expect(c.artifacts).toEqual({ n: 1, size: SIZE });
    expect(c.chunks.bytes).toBe(SIZE);
    const db = new Database(join(otherHome, "lash.db"), { readonly: true });
    try {
      const rows = db
        .prepare("SELECT data FROM artifact_chunks WHERE artifact_id = ? ORDER BY idx")
        .all(ID) as { data: Buffer }[];
      const bytes = Buffer.concat(rows.map((r) => r.data));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(ID);
    } finally {
      db.close();
    }
    // and the Markdown export shows the artifact's content in place of the reference
    const md = await lash(["export", sessionId, "--format", "md"], { env: box.env, cwd: box.cwd });
    expect(md.stdout).toContain(`[artifact ${ID} · ${SIZE} bytes`);
  }, 60_000);

  it("lash sessions gc keeps it while the session refers to it and removes it once the session is deleted", async () => {
    const opts = { env: box.env, cwd: box.cwd };
    const before = await lash(["sessions", "gc", "--min-age", "0", "--json"], opts);
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout)).toEqual({ removed: [], bytes: 0 });
    expect(counts(join(box.home, "lash.db")).artifacts.n).toBe(1);
    const rm = await lash(["sessions", "rm", sessionId], opts);
    expect(rm.code, rm.stderr).toBe(0);
    const after = await lash(["sessions", "gc", "--min-age", "0", "--json"], opts);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual({ removed: [ID], bytes: SIZE });
    const c = counts(join(box.home, "lash.db"));
    expect(c.artifacts).toEqual({ n: 0, size: null });
    expect(c.chunks).toEqual({ n: 0, bytes: null });
  }, 60_000);

  it("gc refuses a malformed --min-age with the fix", async () => {
    const r = await lash(["sessions", "gc", "--min-age", "1h"], { env: box.env, cwd: box.cwd });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("--min-age expects a whole number of seconds (e.g. --min-age 0)");
  });
});
