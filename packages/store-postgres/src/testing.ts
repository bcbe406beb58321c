// `@lash/store-postgres/testing`: a real, throwaway Postgres 15 for tests, benchmarks and
// `pnpm dev:cluster`: initdb into a temp dir, pg_ctl start on a free loopback port (unix
// socket in the temp dir, fsync off), stopped and removed with `stop()`. initdb/pg_ctl refuse to run as root, so as root they run as the
// `postgres` user (runuser), which owns the temp dir.
//
// When the binaries are missing (or, as root, there is no `postgres` user to
// switch to) `postgresUnavailable` says why; test files print it and skip.
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where the Postgres binaries are (override with LASH_PG_BIN). */
export const PG_BIN = process.env.LASH_PG_BIN ?? "/usr/lib/postgresql/15/bin";

function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: "pipe" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8", stdio: "pipe" }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

const asRoot = process.getuid?.() === 0;
const pgUser = asRoot ? postgresUser() : undefined;

/** Why these tests cannot run here (undefined when they can). */
export const postgresUnavailable: string | undefined = !existsSync(join(PG_BIN, "pg_ctl"))
  ? `Postgres tests skipped: no Postgres binaries at ${PG_BIN}. Install Postgres 15 (Debian: apt-get install postgresql-15) or set LASH_PG_BIN to its bin directory.`
  : asRoot && !pgUser
    ? "Postgres tests skipped: running as root but there is no `postgres` user to run initdb/pg_ctl as. Create one (the Debian postgresql package does) or run the tests as a non-root user."
    : undefined;

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** The data directory (its postmaster.pid names the server's process). */
  readonly dataDir: string;
  /** A fresh, empty database; its URL. */
  createDatabase(name?: string): string;
  /** Run SQL as the superuser (psql), returning its stdout. */
  psql(sql: string, database?: string): string;
  stop(): void;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

function run(bin: string, args: readonly string[]): string {
  const file = join(PG_BIN, bin);
  return asRoot
    ? execFileSync("runuser", ["-u", "postgres", "--", file, ...args], { encoding: "utf8", stdio: "pipe" })
    : execFileSync(file, [...args], { encoding: "utf8", stdio: "pipe" });
}

let databases = 0;

/** Start a server (in a test: in beforeAll, with `stop()` in afterAll). `dir`: where its temp dir goes (default the OS temp dir; the `postgres` user must be able to enter it). */
export async function startPostgres(options: { readonly dir?: string } = {}): Promise<TestPostgres> {
  if (postgresUnavailable) throw new Error(postgresUnavailable);
  const dir = mkdtempSync(join(options.dir ?? tmpdir(), "lash-pg-"));
  if (pgUser) chownSync(dir, pgUser.uid, pgUser.gid);
  const data = join(dir, "data");
  const port = await freePort();
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const opts = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  try {
    run("pg_ctl", ["-D", data, "-o", opts, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  let stopped = false;
  const psql = (sql: string, database = "postgres") =>
    run("psql", [
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-U",
      "postgres",
      "-d",
      database,
      "-qAtX",
      "-c",
      sql,
    ]);
  return {
    url: url("postgres"),
    port,
    dataDir: data,
    psql,
    createDatabase(name) {
      const db = name ?? `t${process.pid}_${++databases}`;
      psql(`CREATE DATABASE ${db}`);
      return url(db);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
