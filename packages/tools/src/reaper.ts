// Commands die with lash: one small supervisor per process kills the process groups of
// running (or left-behind background) commands when the lash process ends — even by SIGKILL.
//
// The supervisor is a `/bin/sh` loop in its own session, started once (lazily) with a pipe
// from this process on its stdin. Every shell command runs as the leader of its own process
// group; its id is written to the pipe (`+ <pgid>`) when it starts and removed (`- <pgid>`)
// once the group has no live member. When this process exits for any reason, the kernel
// closes the pipe, the supervisor reads end-of-file and sends SIGKILL to every group still
// listed. (`prctl(PR_SET_PDEATHSIG)` / `setpriv --pdeathsig` alone would not do: it reaches
// only the direct child — the setting is cleared on fork — so a command's own children and
// background jobs would survive.) A process that leaves its group on purpose (`setsid`)
// is not followed.
import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";

const SCRIPT = [
  "trap '' INT HUP",
  'ids=""',
  'while read -r op id; do case "$op" in',
  '+) ids="$ids $id" ;;',
  '-) n=""; for x in $ids; do [ "$x" = "$id" ] || n="$n $x"; done; ids=$n ;;',
  "esac; done",
  'for x in $ids; do kill -KILL -"$x" 2>/dev/null; done',
].join("\n");

interface Supervisor {
  readonly child: ChildProcess;
  readonly write: (line: string) => void;
}

let supervisor: Supervisor | undefined;
let unavailable = false;
/** Groups whose leader finished while other members still ran (background jobs): checked again later. */
const lingering = new Set<number>();

function start(): Supervisor | undefined {
  if (process.platform === "win32" || unavailable) return undefined;
  if (supervisor && supervisor.child.exitCode === null && supervisor.child.signalCode === null)
    return supervisor;
  let child: ChildProcess;
  try {
    child = spawn("/bin/sh", ["-c", SCRIPT], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
  } catch {
    unavailable = true;
    return undefined;
  }
  child.on("error", () => {
    unavailable = true;
  });
  child.on("exit", () => {
    if (supervisor?.child === child) supervisor = undefined;
  });
  const stdin = child.stdin;
  stdin?.on("error", () => undefined);
  // neither the supervisor nor its pipe may keep this process alive
  child.unref();
  (stdin as unknown as { unref?: () => void } | null)?.unref?.();
  const s: Supervisor = {
    child,
    write: (line) => {
      if (stdin && !stdin.destroyed) stdin.write(`${line}\n`);
    },
  };
  supervisor = s;
  return s;
}

/**
 * Whether any live (non-zombie) process is in the process group, read from /proc
 * on Linux. Elsewhere falls back to signal 0, which also counts zombies.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (close < 0) continue;
    // after "comm)": state ppid pgrp ...
    const [state, , pgrp] = stat.slice(close + 2).split(" ");
    if (pgrp === String(pgid) && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** Does any process (zombies included) still belong to the group? One cheap signal-0 probe. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function sweep(s: Supervisor): void {
  for (const pgid of lingering) {
    if (groupExists(pgid)) continue;
    lingering.delete(pgid);
    s.write(`- ${pgid}`);
  }
  if (lingering.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/**
 * While background jobs linger, look every few seconds whether their groups are gone: an id is
 * reused only after its group is gone, so forgetting it soon keeps a stranger from being killed.
 */
let sweeper: NodeJS.Timeout | undefined;
const SWEEP_MS = 5_000;

function linger(s: Supervisor, pgid: number): void {
  lingering.add(pgid);
  if (sweeper) return;
  sweeper = setInterval(() => sweep(s), SWEEP_MS);
  sweeper.unref();
}

/**
 * Start the supervisor now (if it is not running). Call it before spawning a command: then
 * only a synchronous pipe write separates the command's start from its registration — were
 * the supervisor spawned after the command (a fork of this whole process, milliseconds under
 * load), a SIGKILL in that window would leave the command running unwatched.
 */
export function prepareSupervisor(): void {
  start();
}

/**
 * Put a process group under the supervisor: it is SIGKILLed if this process ends
 * while the group lives. Returns the release function, to call when the command has
 * finished: the group is forgotten at once when nothing in it runs any more, else
 * (background jobs) it stays watched until a later check finds it empty.
 */
export function watchGroup(pgid: number): () => void {
  const s = start();
  if (!s) return () => undefined;
  sweep(s);
  s.write(`+ ${pgid}`);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (groupExists(pgid)) linger(s, pgid);
    else s.write(`- ${pgid}`);
  };
}

/** The supervisor's pid (tests), or undefined when none runs. */
export function supervisorPid(): number | undefined {
  return supervisor?.child.pid;
}
