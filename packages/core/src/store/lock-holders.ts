// Which process holds the write lock of an SQLite file: read from the kernel's table of POSIX
// locks (/proc/locks, Linux). SQLite takes its write lock as an fcntl WRITE lock — on byte 120
// of the `-shm` file in WAL mode, on the RESERVED/PENDING bytes of the database file otherwise —
// so the holder is known exactly, not guessed from open file handles. Elsewhere: nothing found.
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";

export interface LockHolder {
  readonly pid: number;
  /** The holder's command line (shortened), when readable. */
  readonly command?: string;
}

const WAL_WRITE_LOCK = 120;
const PENDING_BYTE = 0x40000000;
const RESERVED_BYTE = PENDING_BYTE + 1;

const covers = (start: number, end: number | "EOF", byte: number) =>
  start <= byte && (end === "EOF" || end >= byte);

/** Processes (other than this one) holding the write lock of `filename`; [] when unknown. */
export function sqliteLockHolders(filename: string): LockHolder[] {
  let table: string;
  try {
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return [];
  }
  const inode = (path: string) => statSync(path, { throwIfNoEntry: false })?.ino;
  const db = inode(filename);
  const shm = inode(`${filename}-shm`);
  const pids = new Set<number>();
  for (const line of table.split("\n")) {
    // "1: POSIX  ADVISORY  WRITE 23154 fe:00:2155394 120 120"
    const m = /^\d+:\s+POSIX\s+\S+\s+WRITE\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s+(\d+)\s+(\d+|EOF)/.exec(
      line,
    );
    if (!m) continue;
    const pid = Number(m[1]);
    const ino = Number(m[2]);
    const start = Number(m[3]);
    const end = m[4] === "EOF" ? "EOF" : Number(m[4]);
    if (pid === process.pid) continue;
    const onShm = shm !== undefined && ino === shm && covers(start, end, WAL_WRITE_LOCK);
    const onDb =
      db !== undefined &&
      ino === db &&
      (covers(start, end, RESERVED_BYTE) || covers(start, end, PENDING_BYTE));
    if (onShm || onDb) pids.add(pid);
  }
  return [...pids].map((pid) => {
    const command = commandOf(pid);
    return command === undefined ? { pid } : { pid, command };
  });
}

/**
 * Processes (other than this one) with a connection open on `filename`: in WAL mode every
 * connection keeps a shared lock on the `-shm` file while it is open. [] when unknown.
 */
export function sqliteFileUsers(filename: string): LockHolder[] {
  let table: string;
  try {
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return [];
  }
  const inodes = new Set(
    [filename, `${filename}-shm`, `${filename}-wal`]
      .map((p) => statSync(p, { throwIfNoEntry: false })?.ino)
      .filter((i): i is number => i !== undefined),
  );
  const pids = new Set<number>();
  for (const line of table.split("\n")) {
    const m = /^\d+:\s+POSIX\s+\S+\s+(?:READ|WRITE)\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
    if (m && Number(m[1]) !== process.pid && inodes.has(Number(m[2]))) pids.add(Number(m[1]));
  }
  return [...pids].map((pid) => {
    const command = commandOf(pid);
    return command === undefined ? { pid } : { pid, command };
  });
}

function commandOf(pid: number): string | undefined {
  try {
    const [exe = "", ...args] = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    const text = [basename(exe), ...args].join(" ");
    if (text === "") return undefined;
    return text.length > 100 ? `${text.slice(0, 97)}...` : text;
  } catch {
    return undefined;
  }
}

/** "process 123 (node lash -p …)" for a message; undefined when no holder is known. */
export function describeLockHolders(filename: string): string | undefined {
  const holders = sqliteLockHolders(filename);
  if (holders.length === 0) return undefined;
  return holders.map((h) => `process ${h.pid}${h.command !== undefined ? ` (${h.command})` : ""}`).join(", ");
}
